/* fuzz.h - what every libFuzzer target shares: the entry point and the checks of what a parser promises. */
#ifndef PG_FUZZ_H
#define PG_FUZZ_H

#include "common/compat.h"
#include "common/error.h"
#include "common/json.h"
#include "common/sanitize.h"

/*
 * libFuzzer calls this with each input: data[0..size), not NUL-terminated,
 * so that a parser reading past its length is caught by ASan.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * A broken promise is a crash like any other: libFuzzer keeps the input.
 * (A trap, not abort(): UBSan and ASan are not involved, the signal is.)
 */
#define FUZZ_ASSERT(cond) do { if (!(cond)) __builtin_trap(); } while (0)

/* s[0..len) is valid UTF-8 without NULs. */
static inline bool fuzz_utf8(const char *s, size_t len)
{
	size_t i = 0, n;
	uint32_t cp;

	while (i < len) {
		if (!s[i] || !(n = pg_utf8_decode((const unsigned char *)s + i, len - i, &cp)))
			return false;
		i += n;
	}
	return true;
}

/* What a renderer wrote parses as JSON. */
static inline bool fuzz_json(const pg_buf *b)
{
	pg_json *v = NULL;
	int err = pg_json_parse(&v, b->ptr, b->len);

	pg_json_free(v);
	return err == 0 || err == PG_ENOMEM;
}

#endif
