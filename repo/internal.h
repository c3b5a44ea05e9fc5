/* internal.h - what the repo/ files share: libgit2, the handle, error and id conversions. */
#ifndef PG_REPO_INTERNAL_H
#define PG_REPO_INTERNAL_H

#include "common/map.h"
#include "repo/repo.h"

#include <git2.h>
#include <signal.h>

/*
 * Only the .c files of repo/ include this header (check-code.sh refuses git2.h
 * anywhere else), so libgit2 types never appear in another header.
 */

struct pg_repo {
	git_repository *git;
	char *path;             /* as it was opened, for messages */
	pg_map attached;        /* object directories attached as alternates */
	char **attached_keys;   /* the map's keys, owned here */
	size_t nattached, attached_alloc;
};

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

/*
 * stream.c: the network stream that honours this thread's fetch limits.
 * Register it (once per process) before a fetch; begin a fetch with its
 * limits, and end it to learn whether they stopped it.  check is what the
 * stream and the transfer callbacks ask: 0, or -1 with libgit2's error set
 * once the deadline passed or the flag was set.
 */
int pg_git_stream_register(void);
void pg_git_fetch_begin(unsigned timeout_s, const volatile sig_atomic_t *cancel);
int pg_git_fetch_check(void);
int pg_git_fetch_end(bool *timed_out, bool *cancelled);

/*
 * The object the ref `name` of git points at, symbolic refs followed.
 * Messages name the ref as `shown` in the repository `where`, so that a
 * ref fetched under another name is reported as the user wrote it.
 */
int pg_git_ref_target(pg_oid *out, git_repository *git, const char *name, const char *shown,
		      const char *where);

#endif
