/* hex.c - bytes to lower-case hex and back, with strict validation. */
#include "common/hex.h"
#include "common/error.h"

static const char digits[] = "0123456789abcdef";

/* each byte's value as a hex digit plus one, 0 when it is none: ids are read by the million */
static const unsigned char values[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

int pg_hex_digit(int c)
{
	return c >= 0 && c < 256 ? values[c] - 1 : -1;
}

bool pg_hex_is(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pg_hex_digit((unsigned char)s[i]) < 0)
			return false;
	return true;
}

void pg_hex_encode(char *out, const void *data, size_t n)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

int pg_hex_put(pg_buf *out, const void *data, size_t n)
{
	int err;

	if (n > SIZE_MAX / 2)
		return pg_error_set(PG_ETOOBIG, "%zu bytes are too many to write as hex", n);
	if ((err = pg_buf_grow(out, 2 * n)) < 0)
		return err;
	pg_hex_encode(out->ptr + out->len, data, n);
	out->len += 2 * n;
	return 0;
}

int pg_hex_decode(unsigned char *out, size_t n, const char *s, size_t len)
{
	size_t i;

	if (n > SIZE_MAX / 2 || len != 2 * n)
		return pg_error_set(PG_EINVALID, "%zu characters are not %zu bytes of hex", len, n);
	for (i = 0; i < n; i++) {
		int hi = pg_hex_digit((unsigned char)s[2 * i]);
		int lo = pg_hex_digit((unsigned char)s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			/* not the text itself: it may be a secret */
			return pg_error_set(PG_EINVALID, "character %zu is not a hex digit",
					    2 * i + (hi >= 0));
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}
