/* chain.h - the committers of upstream's first-parent line, newest first: walked once per tip, kept on disk. */
#ifndef PG_CHAIN_H
#define PG_CHAIN_H

#include "common/oid.h"
#include "repo/repo.h"

/* How far down the line: the top-level maintainer commits the newest of them. */
#define PG_CHAIN_MAX 500

typedef struct pg_chain_entry {
	pg_oid id;
	int64_t time;      /* committer date */
	char *email;       /* committer e-mail, as the commit has it */
} pg_chain_entry;

typedef struct pg_chain {
	pg_chain_entry *v; /* from the tip down its first parents, PG_CHAIN_MAX at most */
	size_t n, alloc;
} pg_chain;

/*
 * The newest PG_CHAIN_MAX commits of tip's first-parent line in r, into
 * *out (released with pg_chain_release, also on failure).  cache, when not
 * NULL, is a file of $PULLGATE_HOME that keeps a line once walked: a line
 * from an id never changes (ids name their history), so a cache of the
 * same tip is the answer, one of an older tip on the line is its tail and
 * only the commits above it are read, and anything else (another branch,
 * a rewritten history, a damaged file) is walked again.  The cache is then
 * rewritten atomically; failing to write it is not an error.
 */
int pg_chain_load(pg_chain *out, pg_repo *r, const pg_oid *tip, const char *cache);
void pg_chain_release(pg_chain *c);

#endif
