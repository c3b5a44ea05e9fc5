/* oid.c - object ids to and from hex. */
#include "common/oid.h"
#include "common/error.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int pg_oid_fromhex(pg_oid *out, const char *hex, size_t len)
{
	size_t i;

	if (len != PG_OID_HEXSZ)
		return pg_error_set(PG_EINVALID, "'%.*s' is not a full object id",
				    (int)(len > 64 ? 64 : len), hex);
	for (i = 0; i < PG_OID_RAWSZ; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return pg_error_set(PG_EINVALID, "'%.40s' is not an object id", hex);
		out->id[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

void pg_oid_tohex(char out[PG_OID_HEXSZ + 1], const pg_oid *oid)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < PG_OID_RAWSZ; i++) {
		out[2 * i] = digits[oid->id[i] >> 4];
		out[2 * i + 1] = digits[oid->id[i] & 15];
	}
	out[PG_OID_HEXSZ] = '\0';
}

bool pg_oid_is_zero(const pg_oid *oid)
{
	size_t i;

	for (i = 0; i < PG_OID_RAWSZ; i++)
		if (oid->id[i])
			return false;
	return true;
}
