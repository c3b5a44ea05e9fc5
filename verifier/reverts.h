/* reverts.h - which upstream commits upstream itself has since reverted. */
#ifndef PG_REVERTS_H
#define PG_REVERTS_H

#include "repo/object.h"
#include "repo/repo.h"

/*
 * A pull that carries again a change upstream took and then reverted
 * brings it back; it does not re-create a commit upstream holds.  git
 * revert says what it undoes in the message: "This reverts commit X." and,
 * for a merge, "This reverts commit M, reversing changes made to P.", X, M
 * and P in full or abbreviated (7 to 40 hex digits).  A revert that a
 * later revert undid ("Reapply", a revert of the revert) no longer counts.
 *
 * For each of originals[0..n) (upstream commits), by[i] is set to the
 * commit that reverted it (a revert of it, or of a merge that brought it
 * in), and reverted[i] says whether there is one.  The walk visits every
 * commit reachable from tip committed since the oldest original, and
 * reads each; past max_walk commits it stops and counts what it saw (a
 * revert not seen leaves its original a copy: the finding stays).
 */
int pg_upstream_reverts(bool *reverted, pg_oid *by, pg_repo *r, const pg_oid *tip,
			const pg_commit *const *originals, size_t n, size_t max_walk);

/*
 * The next "This reverts commit X" in a commit message msg[0..len) from
 * `from`: 1 with the id's offset and length set (and, when git's merge
 * form follows, ", reversing changes made to P", P's offset and length;
 * else *parent_len = 0), or 0 when there is none.  Line breaks inside the
 * sentence count as spaces, as git wraps it.
 */
int pg_revert_line_next(size_t *id, size_t *id_len, size_t *parent, size_t *parent_len,
			const char *msg, size_t len, size_t from);

#endif
