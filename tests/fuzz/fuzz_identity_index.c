/* fuzz_identity_index.c - libFuzzer target: the bytes of an identity index file, opened and probed. */
#include "tests/fuzz/fuzz.h"
#include "common/fs.h"
#include "verifier/identity_index.h"

#include <unistd.h>

/* Where the input is written: a file, since an index is only ever read from one. */
static char path[64];

/* The upstream's name the file says it is of: the open checks it, so take it from there. */
static void stored_name(char *out, size_t max, const uint8_t *data, size_t size)
{
	size_t len;

	snprintf(out, max, "fuzz");
	if (size < 104)
		return;
	len = (size_t)data[52] | (size_t)data[53] << 8 | (size_t)data[54] << 16 |
	      (size_t)data[55] << 24;
	if (len && len < max && len <= size - 104) {
		memcpy(out, data + 104, len);
		out[len] = '\0';
	}
}

static void probe_some(const pg_identity_index *x, const uint8_t *data, size_t size)
{
	pg_identity_hit hits[4];
	uint64_t keys[6] = { 0, UINT64_MAX, 1, 0x8000000000000000ULL, 0, 0 };
	size_t i, n;

	if (size >= 16)
		memcpy(&keys[4], data + size - 16, 8);
	if (size >= 8)
		memcpy(&keys[5], data + size - 8, 8);
	for (i = 0; i < PG_ARRAY_SIZE(keys); i++) {
		n = pg_identity_index_probe(hits, PG_ARRAY_SIZE(hits), x, keys[i]);
		FUZZ_ASSERT(n <= pg_identity_index_count(x));
	}
	(void)pg_identity_index_tip(x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pg_identity_index *x = NULL;
	char name[4097];
	int kind;

	if (!path[0])
		snprintf(path, sizeof(path), "%s/pg-fuzz-index-%ld",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (long)getpid());
	if (pg_write_file_atomic(path, data, size) < 0) {
		pg_error_clear();
		return 0;
	}
	stored_name(name, sizeof(name), data, size);
	for (kind = 0; kind < 2; kind++) {
		bool sampled, full;

		sampled = pg_identity_index_load(&x, path, name, kind, false) == 0;
		if (sampled)
			probe_some(x, data, size);
		pg_identity_index_free(x);
		x = NULL;
		pg_error_clear();

		full = pg_identity_index_load(&x, path, name, kind, true) == 0;
		/* every entry checked: no probe may find a segment damaged */
		FUZZ_ASSERT(!full || sampled);
		if (full) {
			probe_some(x, data, size);
			FUZZ_ASSERT(!pg_identity_index_damaged(x));
		}
		pg_identity_index_free(x);
		x = NULL;
		pg_error_clear();
	}
	return 0;
}
