/* oid.h - the object id: 20 raw bytes of a SHA-1, shared by every layer. */
#ifndef PG_OID_H
#define PG_OID_H

#include "common/compat.h"

#define PG_OID_RAWSZ 20
#define PG_OID_HEXSZ 40
/* Messages abbreviate an id to its first 12 hex digits. */
#define PG_OID_SHORTSZ 12

typedef struct pg_oid {
	unsigned char id[PG_OID_RAWSZ];
} pg_oid;

/* Parse 40 hex digits; returns 0 or PG_EINVALID. */
int pg_oid_fromhex(pg_oid *out, const char *hex, size_t len);
/* Write 40 hex digits and a NUL into out (41 bytes). */
void pg_oid_tohex(char out[PG_OID_HEXSZ + 1], const pg_oid *oid);
/* Write the first PG_OID_SHORTSZ hex digits and a NUL into out. */
void pg_oid_toshort(char out[PG_OID_SHORTSZ + 1], const pg_oid *oid);
static inline int pg_oid_cmp(const pg_oid *a, const pg_oid *b)
{
	return memcmp(a->id, b->id, PG_OID_RAWSZ);
}
bool pg_oid_is_zero(const pg_oid *oid);

#endif
