/* oid.c - object ids to and from hex. */
#include "common/oid.h"
#include "common/error.h"
#include "common/hex.h"

int pg_oid_fromhex(pg_oid *out, const char *hex, size_t len)
{
	if (len != PG_OID_HEXSZ)
		return pg_error_set(PG_EINVALID, "'%.*s' is not a full object id",
				    (int)(len > 64 ? 64 : len), hex);
	if (pg_hex_decode(out->id, PG_OID_RAWSZ, hex, len) < 0)
		return pg_error_set(PG_EINVALID, "'%.40s' is not an object id", hex);
	return 0;
}

void pg_oid_tohex(char out[PG_OID_HEXSZ + 1], const pg_oid *oid)
{
	pg_hex_encode(out, oid->id, PG_OID_RAWSZ);
}

void pg_oid_toshort(char out[PG_OID_SHORTSZ + 1], const pg_oid *oid)
{
	pg_hex_encode(out, oid->id, PG_OID_SHORTSZ / 2);
}

bool pg_oid_is_zero(const pg_oid *oid)
{
	size_t i;

	for (i = 0; i < PG_OID_RAWSZ; i++)
		if (oid->id[i])
			return false;
	return true;
}
