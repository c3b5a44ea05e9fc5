/* tree.h - the maintainer's tree: fetch a pull, merge it with its mergetag, advance on approval. */
#ifndef PG_TREE_H
#define PG_TREE_H

#include "common/buf.h"
#include "repo/object.h"
#include "repo/repo.h"

/*
 * A pg_tree is a git repository (the external kernel tree in production,
 * $PULLGATE_HOME/linux) with an integration branch.  The integration
 * branch moves only through pg_tree_advance(), a compare-and-swap of the
 * ref.  Everything else pullgate writes lives under refs/pullgate/ and
 * refs/heads/pullgate/, and in worktrees under the caller's work
 * directories, so a failed or killed run leaves the integration branch and
 * the main working tree untouched.  Runs in several build worktrees may
 * share the tree at once: each pull's refs are its own.  The repository is reached only
 * through the repo/ layer (repo/repo.h).
 */
typedef struct pg_tree pg_tree;

int pg_tree_open(pg_tree **out, const char *path, const char *branch);
void pg_tree_free(pg_tree *t);

/* The tree's repository, borrowed: what the verifier reads there (an approval's tag). */
pg_repo *pg_tree_repo(pg_tree *t);

/* The integration branch's full ref name ("refs/heads/master"); borrowed. */
const char *pg_tree_branch(const pg_tree *t);

/* The integration branch's commit; PG_ENOTFOUND when the branch does not exist. */
int pg_tree_head(pg_oid *out, pg_tree *t);

/* 1 when the integration branch holds commit (at its head or below it), 0 when not. */
int pg_tree_holds(pg_tree *t, const pg_oid *commit);

/*
 * The kernel tree of commit, read for the KUnit selection: a file
 * (PG_ENOTFOUND when none), the files of a directory, and the paths that
 * differ between two commits (pg_repo_diff_paths).
 */
int pg_tree_read_file(pg_buf *out, pg_tree *t, const pg_oid *tree, const char *path);
int pg_tree_list_files(char ***names, size_t *n, pg_tree *t, const pg_oid *tree, const char *dir);
int pg_tree_changed_paths(char ***paths, size_t *n, pg_tree *t, const pg_oid *from,
			  const pg_oid *to);

/* The tree of commit; PG_ENOTFOUND when the commit is not in the repository. */
int pg_tree_commit_tree(pg_oid *out, pg_tree *t, const pg_oid *commit);

/*
 * Set the modification time of every file of tree_a that tree_b changes or
 * removes to now, in the working tree at path (a checkout of tree_a), so
 * that an incremental build of it compiles what a build of tree_b will.
 * Paths that would leave the working tree are skipped.  *touched: how many.
 */
int pg_tree_touch_changed(pg_tree *t, const char *path, const pg_oid *tree_a,
			  const pg_oid *tree_b, size_t *touched);

/*
 * Fetch refs/tags/<tag> from location (a path or URL) into
 * refs/pullgate/tags/<tag>, and fail with PG_ECONFLICT unless it is still
 * the tag object that was verified (the tag moved since).
 */
int pg_tree_fetch_tag(pg_tree *t, const char *location, const char *tag, const pg_oid *verified);

/*
 * pg_tree_fetch_tag into the ref into (a full name under refs/pullgate/)
 * rather than refs/pullgate/tags/<tag>: *got is the tag object fetched,
 * and with expected (NULL: any), PG_ECONFLICT unless it is that one (the
 * ref is set all the same: its caller drops it).
 */
int pg_tree_fetch_tag_into(pg_oid *got, pg_tree *t, const char *location, const char *tag,
			   const char *into, const pg_oid *expected);

/* The refs below prefix (a full name ending in '/'), sorted; free with pg_str_list_free. */
int pg_tree_list_refs(char ***refs, size_t *n, pg_tree *t, const char *prefix);

/*
 * Delete every ref below prefix (a full name under refs/pullgate/ ending
 * in '/'), then the directory they leave empty.  Each is tried; the first
 * failure is returned.
 */
int pg_tree_drop_refs(pg_tree *t, const char *prefix);

typedef struct pg_merge_opts {
	const char *tag_name;   /* short name, for the message */
	const char *url;        /* where it was pulled from, for the message */
	const char *message_id; /* the pull mail's Message-Id as it came, for the message's
				   Link: trailer (pg_mail_link); NULL: no mail, no Link */
	const char *name;       /* author and committer of the merge */
	const char *email;
	int64_t time;           /* 0: now */
	int offset;             /* minutes east of UTC */
} pg_merge_opts;

/* Every field zero: pg_merge_opts o = PG_MERGE_OPTS_INIT; then set what the merge needs. */
#define PG_MERGE_OPTS_INIT { 0 }

/*
 * Where the maintainer records merges made by hand: a commit under this
 * prefix whose second parent is a pull's commit is a resolution of that
 * pull's conflicts (pg_repo_merge_resolved), used wherever the pull's
 * merge would conflict as it did where the resolution was made.
 */
#define PG_TREE_RESOLUTIONS "refs/pullgate/resolutions/"

/*
 * The resolution of commit's conflicts on base: the first commit under
 * PG_TREE_RESOLUTIONS, in the refs' order, whose second parent is commit
 * and which applies (pg_repo_merge_resolved).  1 with *tree merged, *name
 * its ref's full name (to free) and *id its commit; 0 when
 * none applies, each of commit's that does not said in unresolved (which
 * may be NULL).
 */
int pg_tree_resolution(pg_oid *tree, char **name, pg_oid *id, pg_buf *unresolved, pg_tree *t,
		       const pg_oid *base, const pg_oid *commit);

/*
 * A digest of the refs under PG_TREE_RESOLUTIONS, their names and what
 * they point at (no object read): it changes when a resolution is
 * recorded, moved or removed.  0 when there is none.  A ref that cannot
 * be read (a symbolic ref's loop) counts as its name and "unreadable":
 * it fails nothing; only the list of refs unread, or memory, does.
 */
int pg_tree_resolutions_digest(uint64_t *out, pg_tree *t);

typedef struct pg_merge_result {
	bool conflicted;        /* conflicts, and no resolution applies */
	char **conflicts;       /* paths, when conflicted or resolved */
	size_t nconflicts;
	bool resolved;          /* conflicts, which a resolution settled */
	char *resolution_ref;   /* then: its ref, full name */
	pg_oid resolution;      /* and its commit */
	pg_buf unresolved;      /* this pull's resolutions that did not apply, and why */
	bool up_to_date;        /* the tagged commit is already in the base */
	pg_oid commit;          /* the merge commit, when neither */
	pg_oid tree;
	pg_buf message;
} pg_merge_result;

void pg_merge_result_init(pg_merge_result *r);
void pg_merge_result_release(pg_merge_result *r);

/*
 * Merge the tag object into base the way `git merge <signed tag>` does: a
 * two-parent commit whose mergetag header embeds the tag, with a message in
 * the style of the kernel's pull merges.  The commit is written to the
 * object store but no ref moves; a conflict is reported in *out, not as an
 * error.
 */
int pg_tree_merge(pg_merge_result *out, pg_tree *t, const pg_oid *base, const pg_oid *tag,
		  const pg_merge_opts *opts);

/* Point refs/heads/pullgate/<name> at commit (created or moved). */
int pg_tree_set_pull_branch(pg_tree *t, const char *name, const pg_oid *commit);

/*
 * Point refs/heads/pullgate/<name> at commit and check commit out,
 * detached, in the linked worktree called wt_name at path, making the
 * worktree if it does not exist.  A build worktree serves every pull in
 * turn: kbuild and ccache key their work on the source tree's path, so a
 * new path per pull would cost a full kernel rebuild each time.  Its HEAD
 * is detached, so that no build worktree holds a pull's branch that
 * another one is to check out.  pg_tree_remove_worktree() removes a
 * worktree, files included.
 */
int pg_tree_worktree_checkout(pg_tree *t, const char *wt_name, const char *name,
			      const char *path, const pg_oid *commit);
int pg_tree_remove_worktree(pg_tree *t, const char *name, const char *path);

/* Delete refs/heads/pullgate/<name> and refs/pullgate/tags/<tag>, if present. */
int pg_tree_drop_pull_refs(pg_tree *t, const char *name, const char *tag);

/*
 * After a run that died: remove the index lock it may have left in the
 * worktree called wt_name; then, when name is not NULL, the lock files on
 * its pull's refs and the refs (pg_tree_drop_pull_refs).  Only with that
 * worktree's lock held, and with the pull's lock for its refs.
 */
int pg_tree_drop_stale(pg_tree *t, const char *name, const char *tag, const char *wt_name);

/* 0, or PG_ECONFLICT when the branch is checked out in the tree's working tree. */
int pg_tree_can_advance(pg_tree *t);

/*
 * Move the integration branch from expected to next, atomically: fails with
 * PG_ECONFLICT, moving nothing, when the branch is no longer at expected
 * (then pg_tree_head tells where it is) or stays locked by another writer
 * for two seconds (a lock held for a moment, by another run's approval or
 * a push, is waited for).
 */
int pg_tree_advance(pg_tree *t, const pg_oid *expected, const pg_oid *next, const char *reason);

/*
 * The merge message of opts->tag_name from opts->url: "Merge tag 'T' of
 * URL", a "Pull ... from ...:" paragraph, the rest of the tag message,
 * "* tag 'T' of URL:" with the subjects of the merged commits, newest
 * first; then, as the kernel's merges of a mailed pull end, a trailer
 * "Link: https://lore.kernel.org/r/<id>" naming the pull mail, when
 * opts->message_id makes a link (pg_mail_link: one that does not is left
 * out, never written in part).
 */
int pg_merge_message(pg_buf *out, const pg_merge_opts *opts, const pg_tagobj *tag,
		     const char *const *subjects, size_t nsubjects);

#endif
