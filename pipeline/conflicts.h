/* conflicts.h - a pull merged in memory onto the base alone and with each pull ahead of it: its textual conflicts before anything is built. */
#ifndef PG_CONFLICTS_H
#define PG_CONFLICTS_H

#include "pipeline/settings.h"
#include "repo/repo.h"

#include <signal.h>

/*
 * pullgate conflicts: when a pull enters a queue, which pull ahead of it
 * it conflicts with, and where, without building anything.  In the
 * maintainer's tree, and in memory: the tags are fetched (copied) under
 * refs/pullgate/conflicts/<pid>/, dropped before the check returns, and the
 * merges are written as objects only.  No other ref moves, no worktree or
 * build worktree is touched and no lock is taken, so it runs while kernel
 * runs hold every build worktree.
 *
 *  1. The pull alone: its commit merged into the base.  Its conflicts
 *     there are "alone", and then no pull ahead is looked at, unless a
 *     resolution recorded for the pull settles them (pg_tree_resolution).
 *  2. For each pull j ahead, in order: j's commit merged into the base,
 *     through j's resolution where it conflicts (j conflicting there by
 *     itself, unsettled: skipped; j already in the base: in the base),
 *     that merge written as a commit, and the pull's commit merged into
 *     it.  Its conflicts are the pull's with j (resolved, when a
 *     resolution of the pull's settles them; none, when they are only its
 *     settled conflicts with the base).  Pairwise, not cumulative: each j
 *     on the base alone.
 *
 * Cost: one in-memory merge alone, then two for each pull ahead, each
 * reading the trees the merge compares; counting a path's hunks reads its
 * three versions, for at most PG_CONFLICTS_MAX_PATHS paths a merge.
 */

/* The paths listed per merge; the others are counted in more. */
#define PG_CONFLICTS_MAX_PATHS 100

/* A pull to fetch: its tag at repo, and the tag object it must be. */
typedef struct pg_conflicts_pull {
	const char *repo;         /* a path or URL, as gate takes it */
	const char *tag;          /* "v1" or "refs/tags/v1" */
	const pg_oid *expect;     /* the tag object verified, or NULL: whatever is there */
} pg_conflicts_pull;

typedef struct pg_conflicts_opts {
	const char *home;            /* $PULLGATE_HOME: the tree is home/linux unless the settings name one */
	pg_gate_settings settings;   /* the tree, the branch and the identity of the merges written
					(pg_gate_settings_resolve), as the gate's */
	const pg_oid *onto;          /* the base: a commit in the tree; NULL: the branch's head */
	const volatile sig_atomic_t *cancel; /* set: stop between steps (PG_ECANCELLED); may be NULL */
} pg_conflicts_opts;

#define PG_CONFLICTS_OPTS_INIT { .settings = PG_GATE_SETTINGS_DEFAULT }

enum pg_conflicts_status {
	PG_CONFLICTS_CLEAN,      /* the pull merges cleanly onto j's merge */
	PG_CONFLICTS_CONFLICTS,  /* it conflicts there: with j */
	PG_CONFLICTS_SKIPPED,    /* not looked at: j conflicts by itself with the base, or the pull does */
	PG_CONFLICTS_IN_BASE,    /* j's commit is already in the base: nothing to conflict with */
	PG_CONFLICTS_UNKNOWN,    /* j could not be read or merged (its tag moved, its repository is
				    gone, an object is damaged): why says it; the others are checked */
	PG_CONFLICTS_RESOLVED,   /* it conflicts there, and a resolution recorded for the pull
				    settles it (pg_tree_resolution): conflicts and resolution say so */
};

/* "clean", "conflicts", "skipped", "in-base", "unknown". */
const char *pg_conflicts_status_name(enum pg_conflicts_status s);

typedef struct pg_conflicts_ahead {
	size_t position;         /* 1-based, in queue order */
	char *repo, *tag;        /* as given */
	pg_oid commit;           /* its tag peeled */
	enum pg_conflicts_status status;
	pg_conflict_list conflicts; /* the pull's with it: empty unless CONFLICTS or RESOLVED */
	char *why;               /* with PG_CONFLICTS_UNKNOWN: the reason, one line */
	char *resolution;        /* with PG_CONFLICTS_RESOLVED: its ref, full name */
	pg_oid resolution_commit;
} pg_conflicts_ahead;

typedef struct pg_conflicts_result {
	pg_oid base;
	bool onto;               /* the base is the caller's onto, not the branch's head */
	char *branch;            /* the integration branch's short name */
	char *repo, *tag;        /* the pull, as given */
	pg_oid commit;           /* its tag peeled */
	pg_conflict_list alone;  /* its conflicts with the base */
	char *alone_resolution;  /* the resolution that settles them, or NULL */
	pg_oid alone_resolution_commit;
	pg_conflicts_ahead *ahead; /* every pull ahead, in order */
	size_t nahead;
} pg_conflicts_result;

/*
 * Check pull against the base alone and with each of ahead[0..nahead) as
 * above.  0 with *out the result (conflicts are data, not errors).
 * Negative when it cannot decide, with the error set and *out NULL: the
 * tree, the base, the pull's repository or tag that cannot be read, its
 * tag not the one expected (PG_ECONFLICT, "tag 'X' moved since it was
 * verified: A, now B"), a damaged object, cancel.  A pull ahead that
 * cannot be read or merged is PG_CONFLICTS_UNKNOWN, with why: one stale
 * pull does not stop the check of the others.  A tag whose expected
 * object is in the tree already is not fetched again.  The refs it made are
 * dropped in every case, and so are those a killed check left (a process
 * that no longer runs).
 */
int pg_conflicts_check(pg_conflicts_result **out, const pg_conflicts_pull *pull,
		       const pg_conflicts_pull *ahead, size_t nahead,
		       const pg_conflicts_opts *opts);
void pg_conflicts_result_free(pg_conflicts_result *r);

/* Whether the pull conflicts: alone, or with any pull ahead. */
bool pg_conflicts_found(const pg_conflicts_result *r);

/*
 * The result as JSON (docs/man/pullgate-conflicts.1.scd): {"base", "pull":
 * {repo, tag, commit}, "alone": [{path, hunks}], "alone_more", "ahead":
 * [{position, repo, tag, commit, status, conflicts: [{path, hunks}],
 * more, why}]} (commit null and why a string for an unknown one).
 */
int pg_conflicts_format_json(pg_buf *out, const pg_conflicts_result *r);

#endif
