/* tlog_internal.h - what tlog_index.c and tlog_follow.c share of reading an epoch (private). */
#ifndef PG_TLOG_INTERNAL_H
#define PG_TLOG_INTERNAL_H

#include "verifier/tlog.h"
#include "repo/repo.h"

/* Commits of one epoch read in one walk, at most. */
#define PG_TLOG_MAX_WALK ((size_t)10 << 20)

/* git/N.git under the log's absolute path abs, for N = 0, 1, ... until one is missing. */
size_t pg_tlog_count_epochs(const char *abs);

/*
 * The commits of epoch e's master from tip down to since, since not
 * included, newest first: *ids is malloc()ed (NULL when *n is 0).
 * *found says whether since was met; with a zero since (nothing read
 * yet) the walk goes to the root and *found is false.  PG_ETOOBIG past
 * PG_TLOG_MAX_WALK commits; PG_ECANCELLED soon after *cancel is set (cancel
 * may be NULL).
 */
int pg_tlog_walk(pg_oid **ids, size_t *n, bool *found, pg_repo *r, const pg_oid *tip,
		 const pg_oid *since, size_t e, const volatile sig_atomic_t *cancel);

/*
 * The message blob "m" of commit id, under PG_TLOG_RECORD_MAX.
 * PG_ENOTFOUND: no "m", or one that is no file, or its blob missing;
 * *deletion (when given) is true only for public-inbox's deletion of a
 * message, a tree with a file "d" and no "m".
 */
int pg_tlog_read_message(pg_buf *out, bool *deletion, pg_repo *r, const pg_oid *id);

#endif
