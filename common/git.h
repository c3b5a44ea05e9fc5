/* git.h - the conversions every libgit2 wrapper shares: errors and object ids. */
#ifndef PG_GIT_H
#define PG_GIT_H

#include "common/oid.h"

#include <git2.h>

/*
 * Only the wrapper modules (verifier/repo.c, pipeline/tree.c) include this
 * header; libgit2 types never appear in other headers.
 */

/* Convert a libgit2 failure to one of ours, keeping its message after "what: ". */
int pg_git_fail(int gerr, const char *fmt, ...) PG_PRINTF(2, 3);

static inline const git_oid *pg_git_oid(const pg_oid *id)
{
	/* both are the 20 raw bytes of a SHA-1 */
	return (const git_oid *)(const void *)id->id;
}

static inline void pg_oid_from_git(pg_oid *out, const git_oid *id)
{
	memcpy(out->id, id->id, PG_OID_RAWSZ);
}

/* git_libgit2_init() with our error convention; pair with git_libgit2_shutdown(). */
int pg_git_init(void);

#endif
