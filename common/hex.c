/* hex.c - bytes to lower-case hex and back, with strict validation. */
#include "common/hex.h"
#include "common/error.h"

static const char digits[] = "0123456789abcdef";

int pg_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
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
