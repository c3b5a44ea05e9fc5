/* fuzz_pack.c - libFuzzer target: a pack index, its pack and a loose commit, read as the trusted reader of repo/pack.c reads them. */
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/files.h"
#include "repo/internal.h"

/*
 * An input is files joined by FUZZ_FILE_SEP lines (tests/fuzz/files.h):
 *
 *   objects/pack/pack-X.idx, objects/pack/pack-X.pack (when there), and
 *   the file of the loose object LOOSE_HEX (when there)
 *
 * The object directory is a trusted one of a repository (its packs and
 * loose commits read by pg_repo_pack_commit, as repo/commits.c and read.c
 * do; no libgit2, which would read what this reader leaves to it).  The
 * ids asked for are those the index lists (at most MAX_IDS), LOOSE_HEX and
 * one no index lists.  What internal.h promises is checked: a commit read
 * is NUL-terminated and at most 1 MiB, and the same on a second read; a
 * damaged file is an error with its message (the same on a second read),
 * never a read outside it; the index check says good or names the damage.
 */
#define MAX_IDS 256
#define LOOSE_HEX "c0ffee0000000000000000000000000000000001"
#define LOOSE_PATH "c0/ffee0000000000000000000000000000000001"
#define COMMIT_MAX ((size_t)1 << 20)
/* where a version 2 index's ids start: after its header and fanout */
#define IDS (8 + 256 * 4)

static fuzz_dir dir;

/* Read id twice: 1 both times with the same bytes, or 0 both times. */
static void read_commit(pg_repo *r, const pg_oid *id)
{
	const char *data = NULL;
	size_t len = 0, len2 = 0, i;
	unsigned sum = 0;
	char *copy;
	int err;

	err = pg_repo_pack_commit(&data, &len, r, id);
	if (err == PG_ENOMEM) {
		pg_error_clear();
		return;
	}
	if (err == PG_EINVALID || err == PG_EIO) {
		FUZZ_ASSERT(*pg_error_last());
		pg_error_clear();
		/* not half loaded: the next read meets the same damage */
		FUZZ_ASSERT(pg_repo_pack_commit(&data, &len2, r, id) == err);
		pg_error_clear();
		return;
	}
	FUZZ_ASSERT(err == 0 || err == 1);
	if (err == 0)
		return;
	FUZZ_ASSERT(len <= COMMIT_MAX && data[len] == '\0');
	for (i = 0; i < len; i++)
		sum += (unsigned char)data[i];
	FUZZ_ASSERT((copy = malloc(len + 1)));
	memcpy(copy, data, len + 1);
	FUZZ_ASSERT(pg_repo_pack_commit(&data, &len2, r, id) == 1);
	FUZZ_ASSERT(len2 == len && !memcmp(copy, data, len + 1));
	free(copy);
	(void)sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_part parts[3];
	size_t nparts = fuzz_split(parts, 3, data, size), i, nids;
	char *dirs[1];
	pg_repo r;
	pg_oid id;
	int err;

	fuzz_dir_reset(&dir, "fuzz-pack", "pack");
	fuzz_write(&dir, "pack/pack-fuzz.idx", parts[0].data, parts[0].len);
	if (nparts > 1)
		fuzz_write(&dir, "pack/pack-fuzz.pack", parts[1].data, parts[1].len);
	if (nparts > 2)
		fuzz_write(&dir, LOOSE_PATH, parts[2].data, parts[2].len);
	err = pg_repo_check_packs(dir.objects, NULL, NULL);
	FUZZ_ASSERT(err == 0 || err == PG_ENOMEM || ((err == PG_EINVALID || err == PG_EIO) &&
						    *pg_error_last()));
	pg_error_clear();

	/* a repository whose one trusted directory is this one; nothing else is used */
	memset(&r, 0, sizeof(r));
	dirs[0] = dir.objects;
	r.graph_dirs = dirs;
	r.ngraph_dirs = 1;

	/* the ids the index lists, as many as its fanout counts and it holds */
	nids = 0;
	if (parts[0].len >= IDS) {
		const uint8_t *c = parts[0].data + IDS - 4;

		nids = (size_t)c[0] << 24 | (size_t)c[1] << 16 | (size_t)c[2] << 8 | c[3];
		if (nids > (parts[0].len - IDS) / PG_OID_RAWSZ)
			nids = (parts[0].len - IDS) / PG_OID_RAWSZ;
	}
	for (i = 0; i < nids && i < MAX_IDS; i++) {
		memcpy(id.id, parts[0].data + IDS + i * PG_OID_RAWSZ, PG_OID_RAWSZ);
		read_commit(&r, &id);
	}
	FUZZ_ASSERT(pg_oid_fromhex(&id, LOOSE_HEX, PG_OID_HEXSZ) == 0);
	read_commit(&r, &id);
	memset(id.id, 0xff, sizeof(id.id));
	read_commit(&r, &id);
	pg_packs_free(r.packs);
	return 0;
}
