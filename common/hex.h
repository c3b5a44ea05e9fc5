/* hex.h - bytes to lower-case hex and back, with strict validation. */
#ifndef PG_HEX_H
#define PG_HEX_H

#include "common/buf.h"

/* The value of the hex digit c (either case), or -1 when c is none. */
int pg_hex_digit(int c);

/* Are s[0..n) n hex digits (either case)?  A NUL before n is not one. */
bool pg_hex_is(const char *s, size_t n);

/* Write 2 * n lower-case hex digits of data[0..n) and a NUL into out (2 * n + 1 bytes). */
void pg_hex_encode(char *out, const void *data, size_t n);

/* Append 2 * n lower-case hex digits of data[0..n) to out. */
int pg_hex_put(pg_buf *out, const void *data, size_t n);

/*
 * Decode s[0..len) into exactly n bytes at out: len must be 2 * n and
 * every character a hex digit (either case), else PG_EINVALID and out is
 * left undefined.
 */
int pg_hex_decode(unsigned char *out, size_t n, const char *s, size_t len);

#endif
