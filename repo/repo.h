/* repo.h - the repository layer: the one place pullgate talks to libgit2. */
#ifndef PG_REPO_H
#define PG_REPO_H

#include "common/buf.h"
#include "common/oid.h"
#include "common/progress.h"
#include "common/str.h"
#include "repo/object.h"

#include <signal.h>

/*
 * A pg_repo is one git repository opened through libgit2: the verifier's
 * object cache, the maintainer's tree or a worktree of it.  libgit2's
 * handles, types and error codes never leave repo/ (only repo/ includes
 * git2.h): every function here returns 0, or the non-negative value it
 * documents, or a negative PG_E* code with the last error set
 * (common/error.h).  What comes back through an out-parameter is the
 * caller's to free as noted; a pointer returned directly is borrowed.  A
 * pg_repo is used by one thread at a time.
 *
 * The layer is split by concern, as libgit2 splits its own code:
 *	open.c      open a repository; fetch a URL, attach or copy a local one
 *	refs.c      ref names, read, set, compare-and-swap, delete
 *	read.c      objects by id or abbreviated id, commits and tags parsed
 *	walk.c      history: ranges, date-ordered walks, merge bases
 *	commits.c   the walks' commits: from a trusted commit-graph, else the object
 *	graph.c     git's commit-graph files, read in place
 *	diff.c      patch ids and the paths a diff touches
 *	merge.c     merge two commits' trees, count a conflict's hunks, apply a resolution,
 *	            write a commit
 *	worktree.c  linked worktrees and checkouts
 *	notes.c     git notes on commits
 *	error.c     libgit2's failures converted to PG_E* codes (pg_git_fail)
 */
typedef struct pg_repo pg_repo;

/*
 * Keep libgit2 initialised; counted, so each successful call pairs with one
 * pg_repo_lib_shutdown().  Opening a repository does this itself.  libgit2
 * frees its per-thread state when a thread ends only while it is
 * initialised, so a process whose threads open repositories in turn holds
 * it for as long as they run.
 */
int pg_repo_lib_init(void);
/*
 * Whether the system CA bundle libgit2's init asked for is still unparsed
 * (repo/tls.c: parsed before the first fetch by URL), and its path then.
 */
bool pg_repo_tls_deferred(const char **path);
void pg_repo_lib_shutdown(void);

/*
 * The object cache, $PULLGATE_HOME/repos/cache.git: a bare repository,
 * made on first use, into which a pull and its upstream are made visible
 * together (pg_repo_fetch).
 */
int pg_repo_open_cache(pg_repo **out, const char *home);

/*
 * The repository at path exactly, never a parent of it: a working tree, a
 * bare repository or a linked worktree.  PG_ENOTFOUND when path is not a
 * git repository.
 */
int pg_repo_open(pg_repo **out, const char *path);
void pg_repo_free(pg_repo *r);

/*
 * Report each fetch's transfer progress on r (objects received of the
 * total, bytes) to fn, at most ten times a second and once when it ends;
 * fn NULL stops it.  The events' stage is "fetch".
 */
void pg_repo_set_progress(pg_repo *r, pg_progress_fn fn, void *ctx);

/* Hand p to r's progress function, if it has one: what a long read of r does (an index built). */
void pg_repo_progress(pg_repo *r, const pg_progress *p);

/*
 * The repository git itself would use here: $GIT_DIR and the other GIT_*
 * variables when set (as in a hook), else the current directory or the
 * nearest parent that is one.  PG_ENOTFOUND when there is none.
 */
int pg_repo_open_env(pg_repo **out);

/*
 * Whether location names a local repository rather than a URL to fetch:
 * a file:// URL or a path.  Any other "scheme://" is remote, and so is
 * scp-like "[user@]host:path" unless a directory of that name exists.
 * Every caller that must tell the two apart asks here.
 */
bool pg_repo_is_local(const char *location);

/* How a local repository's objects become visible in r. */
enum pg_local_mode {
	PG_LOCAL_ATTACH, /* its object store becomes an alternate of r, in memory,
			    for r's lifetime: nothing is copied */
	PG_LOCAL_COPY,   /* the objects r lacks are copied into r, and stay */
};

typedef struct pg_fetch_opts {
	enum pg_local_mode local;
	/*
	 * The ref of r to point at what was fetched.  NULL: for a URL,
	 * refs/pullgate/<hash of the URL>/<ref>; for a local repository, none.
	 * Never written for an attached local repository, whose objects r
	 * does not keep.
	 */
	const char *into;
	/*
	 * An attached repository's commit-graph may be read by the walks
	 * (repo/graph.h), in place.  Only for a repository whose files are
	 * trusted, the upstream: a graph is not checked against the objects,
	 * so a lying one, written by a pull's sender, would hide commits.
	 */
	bool trust_graph;
} pg_fetch_opts;

#define PG_FETCH_OPTS_INIT { PG_LOCAL_ATTACH, NULL, false }

/*
 * Make the objects reachable from the full ref name `ref` at location
 * present in r and set *out to what the ref points at (a tag object for
 * an annotated tag).  A URL is fetched with libgit2; a local repository
 * (pg_repo_is_local) is read in place, then attached or copied as
 * opts->local says (NULL opts: PG_FETCH_OPTS_INIT).  Copying walks from
 * the ref and stops at every object r already has, so it costs what r
 * lacks, not the size of the history.  PG_ENOTFOUND when the repository or
 * the ref does not exist.
 */
int pg_repo_fetch(pg_oid *out, pg_repo *r, const char *location, const char *ref,
		  const pg_fetch_opts *opts);

/*
 * Bring ref of r up to date from r's own remote named remote, as a mirror
 * does ("+REF:REF"): from remote.NAME.url of r's configuration (a URL, a
 * path or file://, all through libgit2; no url.*.insteadOf rewrites it),
 * held to this thread's fetch limits.  *fetched says whether r has such a
 * remote: 0 with *fetched false when it has none.  PG_ENOTFOUND when the
 * remote names no repository: a path that is no directory, an HTTP 404
 * (a git:// daemon's refusal is not told apart from other failures).
 */
int pg_repo_fetch_mirror(bool *fetched, pg_repo *r, const char *remote, const char *ref);

/*
 * A new bare repository at path (which must not hold one) whose remote
 * named remote is url, to be brought up to date by pg_repo_fetch_mirror.
 */
int pg_repo_init_mirror(pg_repo **out, const char *path, const char *remote, const char *url);

/*
 * What bounds the fetches from a URL that this thread makes from now on
 * (pg_repo_fetch, pg_repo_resolve): each whole fetch (connecting, the
 * negotiation, the transfer) must end within timeout_s seconds (0: no
 * deadline), and stops soon after *cancel is set (cancel may be NULL).
 * A fetch stopped so fails with PG_ETIMEOUT or PG_ECANCELLED.  The
 * verifier's and the gate's callers set them from the policy
 * (fetch-timeout-seconds) and their stop flag; NULL limits clear them.
 * Over ssh:// only the connection is bounded.
 */
typedef struct pg_fetch_limits {
	unsigned timeout_s;
	const volatile sig_atomic_t *cancel;
	const char *source;   /* what set timeout_s, named in a timeout's error (NULL: none) */
} pg_fetch_limits;

void pg_repo_set_fetch_limits(const pg_fetch_limits *limits);

enum pg_ref_kind {
	PG_REF_TAG,    /* name is a tag: "v1" or "refs/tags/v1" */
	PG_REF_BRANCH, /* name is a branch, or NULL for the remote's HEAD */
};

/*
 * pg_repo_fetch of a tag or branch given by name (NULL opts:
 * PG_FETCH_OPTS_INIT, which attaches a local repository).  *full_ref, if
 * given, receives the full ref name (free()).  PG_EINVALID when name is
 * not a valid ref name.
 */
int pg_repo_resolve(pg_oid *out, char **full_ref, pg_repo *r, const char *location,
		    enum pg_ref_kind kind, const char *name, const pg_fetch_opts *opts);

/* refs.c */

/* Whether full_ref ("refs/tags/v1") is a valid ref name. */
bool pg_repo_refname_valid(const char *full_ref);

/*
 * The object ref points at, symbolic refs followed.  PG_ENOTFOUND when
 * there is no such ref.
 */
int pg_repo_ref_target(pg_oid *out, pg_repo *r, const char *ref);

/* Point ref at id, creating it or moving it from wherever it was; log goes in the reflog. */
int pg_repo_ref_set(pg_repo *r, const char *ref, const pg_oid *id, const char *log);

/*
 * Move ref from expected to next atomically: PG_ECONFLICT, moving nothing,
 * when ref no longer points at expected or another writer holds its lock.
 */
int pg_repo_ref_cas(pg_repo *r, const char *ref, const pg_oid *expected, const pg_oid *next,
		    const char *log);

/* Delete ref; 0 when it does not exist. */
int pg_repo_ref_delete(pg_repo *r, const char *ref);

/*
 * The full names of the refs below prefix (a full name ending in '/',
 * "refs/pullgate/conflicts/"), sorted.  Free with pg_str_list_free.
 */
int pg_repo_ref_list(char ***refs, size_t *n, pg_repo *r, const char *prefix);

/*
 * Remove the lock file a writer of ref left behind when it was killed
 * (ref + ".lock" in the common git directory); 0 when there is none.  Only
 * for refs no live writer can hold: the caller's own, under its own lock.
 */
int pg_repo_ref_unlock(pg_repo *r, const char *ref);

/* Whether ref is the branch checked out in r's own working tree (never for a bare r). */
bool pg_repo_ref_checked_out(pg_repo *r, const char *ref);

/* config.c */

/*
 * The value of a configuration key ("pullgate.upstream") as git reads it
 * (repository, global and system files): malloc()ed into *out, or *out
 * NULL and 0 when it is not set.
 */
int pg_repo_config_string(char **out, pg_repo *r, const char *key);

/*
 * The full name of the remote-tracking ref a local branch (a full ref,
 * "refs/heads/x") tracks, its @{upstream}: malloc()ed into *out, or *out
 * NULL and 0 when it tracks none.
 */
int pg_repo_branch_upstream(char **out, pg_repo *r, const char *branch_ref);

/* The local branch HEAD is on (a full ref), or *out NULL when HEAD is detached. */
int pg_repo_head_branch(char **out, pg_repo *r);

/*
 * The commit a revision names, as git rev-parse REV^{commit} finds it
 * ("origin/master", "v6.12", a full ref or an id).  PG_ENOTFOUND when it
 * names nothing, PG_EINVALID when it names no commit.
 */
int pg_repo_revparse_commit(pg_oid *out, pg_repo *r, const char *rev);

/*
 * The directory git runs this repository's hooks from: core.hooksPath
 * (relative to the working tree) when set, else hooks/ in the common git
 * directory.  malloc()ed into *out.
 */
int pg_repo_hooks_dir(char **out, pg_repo *r);

/* Whether r has the object id (any type). */
bool pg_repo_has_object(pg_repo *r, const pg_oid *id);

/* read.c */

enum pg_object_type {
	PG_OBJ_NONE = 0,
	PG_OBJ_COMMIT,
	PG_OBJ_TREE,
	PG_OBJ_BLOB,
	PG_OBJ_TAG,
};

int pg_repo_object_type(enum pg_object_type *out, pg_repo *r, const pg_oid *id);
const char *pg_object_type_name(enum pg_object_type t);

/*
 * Raw object bytes (without the "type len\0" prefix) appended to out,
 * capped by out->max.  PG_ENOTFOUND when r has no such object.
 */
int pg_repo_read_raw(pg_buf *out, enum pg_object_type *type, pg_repo *r, const pg_oid *id);

/* A commit or tag object, parsed (repo/object.h); PG_EINVALID when it is another type. */
int pg_repo_read_commit(pg_commit **out, pg_repo *r, const pg_oid *id);
/*
 * A commit's bytes as pg_repo_read_commit reads them (from a trusted pack
 * with pack.c when one holds it whole, not by libgit2's search of its map
 * of the whole pack index, which makes hundreds of KiB of it resident a
 * search), appended to out as pg_repo_read_raw appends them; PG_EINVALID
 * when it is another type.
 */
int pg_repo_read_commit_raw(pg_buf *out, pg_repo *r, const pg_oid *id);

/*
 * Every commit of ids[0..n), each given to fn with its place i in ids (the
 * commit is fn's to read, not to keep), in the order their storage
 * suits: located in the packs by one pass over each index, then read along
 * each pack (a history's every commit, read by id, makes both the index and
 * the pack resident, and the index is searched a million times).  What no
 * trusted pack holds whole is read as pg_repo_read_commit reads it.
 * Errors as pg_repo_read_commit's, or what fn returns (negative).
 */
typedef int (*pg_repo_commit_fn)(void *ctx, size_t i, const pg_commit *c);
int pg_repo_read_commits(pg_repo *r, const pg_oid *ids, size_t n, pg_repo_commit_fn fn,
			 void *ctx);
/*
 * The same, fn given each commit's bytes (its body, as pg_commit_parse
 * takes it; fn's to read until it returns), not parsed: what needs a few
 * fields of every commit reads them without a copy (pg_commit_keys_parse).
 */
typedef int (*pg_repo_commit_bytes_fn)(void *ctx, size_t i, const pg_oid *id, const char *data,
				       size_t len);
int pg_repo_read_commits_raw(pg_repo *r, const pg_oid *ids, size_t n,
			     pg_repo_commit_bytes_fn fn, void *ctx);
/*
 * What reading n commits holds while it reads them, a commit: where each
 * lies (16 bytes), and its copy while they are sorted by place (16), beside
 * the caller's list of their ids (20).
 */
#define PG_REPO_READ_BYTES 52
/*
 * How the two above read many commits: other threads inflate them ahead
 * of fn (fn is still called on the caller's thread, in the same order,
 * with the same bytes and errors), in batches handed over in order.  fn
 * must not make r trust another directory meanwhile (pg_repo_trust_graph).
 * Each field 0 is its default.
 */
typedef struct pg_read_ahead {
	size_t min;       /* the fewest commits read so (PG_REPO_READ_AHEAD_MIN, or never
			   * when this process may run on one CPU only); SIZE_MAX: never */
	unsigned threads; /* threads inflating (a CPU each, at most PG_REPO_READ_AHEAD_THREADS) */
	unsigned batch;   /* commits a batch (at most, and by default, 512) */
	size_t bytes;     /* a batch's bytes at most (2 MiB; all the batches held, 8 MiB):
			   * a commit past them, as a delta or one in no pack, is read
			   * on fn's thread */
} pg_read_ahead;
#define PG_REPO_READ_AHEAD_MIN 4096
#define PG_REPO_READ_AHEAD_THREADS 8
void pg_repo_set_read_ahead(pg_repo *r, const pg_read_ahead *ra);
/* How many batches the last reading of many commits had inflated by other threads (0: none). */
size_t pg_repo_read_ahead_batches(const pg_repo *r);
int pg_repo_read_tag(pg_tagobj **out, pg_repo *r, const pg_oid *id);

/* The commit a tag, or a chain of tags, ends at; a commit is its own. */
int pg_repo_peel_commit(pg_oid *out, pg_repo *r, const pg_oid *id);

/* The tree of commit; PG_ENOTFOUND when r does not have the commit. */
int pg_repo_commit_tree(pg_oid *out, pg_repo *r, const pg_oid *commit);

/*
 * The blob at path ("dir/file") in tree, appended to out (capped by
 * out->max).  PG_ENOTFOUND when there is no such path or it is not a file.
 */
int pg_repo_tree_read_file(pg_buf *out, pg_repo *r, const pg_oid *tree, const char *path);

/*
 * The kind of what path names in tree: PG_OBJ_BLOB, PG_OBJ_TREE or
 * PG_OBJ_COMMIT (a gitlink), PG_OBJ_NONE when there is no such path.  The
 * object itself is not read.  Errors: the tree's.
 */
int pg_repo_tree_entry_type(enum pg_object_type *out, pg_repo *r, const pg_oid *tree,
			    const char *path);

/*
 * The names of the files (blobs, not subtrees) directly in directory dir
 * of tree ("" the root), in tree order.  PG_ENOTFOUND when dir is not a
 * directory there.  Free with pg_str_list_free.
 */
int pg_repo_tree_list_files(char ***names, size_t *n, pg_repo *r, const pg_oid *tree,
			    const char *dir);

/*
 * Resolve an abbreviated commit id (at least 4 hex digits).  PG_ENOTFOUND
 * when nothing matches, PG_EINVALID when it is not hex or is ambiguous.
 */
int pg_repo_resolve_prefix(pg_oid *out, pg_repo *r, const char *hex, size_t len);

/* commits.c */

/*
 * Remember the commit-graph files whose checksum held in the file path
 * (in HOME: pg_graph_open_checked), so that the next verify does not read
 * them whole again.  Before the first walk.
 */
int pg_repo_set_graph_checks(pg_repo *r, const char *path);

/*
 * What the walks read commits from besides the objects: the checksum of
 * the trusted commit-graph (the top layer's, which names the layers below;
 * of several graphs, a hash of their checksums), *has false when no graph
 * is used.  PG_ENOMEM.
 */
int pg_repo_graph_id(pg_oid *out, bool *has, pg_repo *r);

/*
 * Why a trusted commit-graph, or upper layers of its chain, were left out
 * (a damaged file, a checksum that does not hold): one line, or NULL.
 * The walks then read those commits from the objects.
 */
const char *pg_repo_graph_warning(pg_repo *r);

/* walk.c */

/*
 * Commits reachable from tip and not from any of hide[0..nhide), oldest
 * first in topological order (libgit2's, which is git rev-list
 * --topo-order's).  Costs O(result + the hidden side down to the merge
 * base), as git rev-list does; commits in a trusted commit-graph cost no
 * object read.  Exact where the commits below the tip's own have
 * generation numbers; among commits in no graph, a guess by commit date
 * that may keep a hidden commit under clock skew (as git's), never drops
 * one of the tip's.  *out is malloc()ed.  A commit that cannot be parsed
 * is named in the error (PG_EINVALID), as is a corrupt graph entry.
 */
int pg_repo_walk_range(pg_oid **out, size_t *n, pg_repo *r, const pg_oid *tip,
		       const pg_oid *hide, size_t nhide);

/*
 * The commits reachable from one of tips[0..ntips) and from none of
 * hide[0..nhide), exactly, in no order: pg_repo_walk_range's range
 * without its guess under clock skew.  Among commits in no graph, the
 * hidden side is walked on while some commit taken for the tips' may still
 * turn out hidden: as cheap as pg_repo_walk_range when the range is empty
 * or the commits below it are in a graph, else down to the roots below
 * the hidden commits.  *out is malloc()ed; errors as pg_repo_walk_range's.
 */
int pg_repo_walk_range_exact(pg_oid **out, size_t *n, pg_repo *r, const pg_oid *tips,
			     size_t ntips, const pg_oid *hide, size_t nhide);

/*
 * Every commit reachable from one of tips[0..ntips), each once (a commit
 * two commit-graphs hold too), those of a commit-graph in its order (by
 * id within each of its files), the others first: what
 * pg_repo_walk_range_exact gives with nothing hidden, walked with a bit a
 * commit where a trusted commit-graph holds it, rather than a walk's node
 * (a history's first index: 150 bytes a commit, git rev-list's own).
 * *out is malloc()ed; errors as pg_repo_walk_range's.  It is
 * pg_repo_reach_all, then pg_repo_reach_list.
 */
int pg_repo_walk_all(pg_oid **out, size_t *n, pg_repo *r, const pg_oid *tips, size_t ntips);

/*
 * The same walk, kept (a bit a commit of a graph, the ids of the
 * commits no graph holds), to list or read its commits: *count of them.
 * Errors as pg_repo_walk_all's.
 */
typedef struct pg_repo_reach pg_repo_reach;
int pg_repo_reach_all(pg_repo_reach **out, size_t *count, pg_repo *r, const pg_oid *tips,
		      size_t ntips);
/* What pg_repo_walk_all lists, of a walk. */
int pg_repo_reach_list(pg_oid **out, size_t *n, const pg_repo_reach *w);
/*
 * Each commit of the walk, once, given to fn as pg_repo_read_commits_raw
 * gives them (i: its place in its share, of no use past it), in shares of
 * at most share commits (*shares of them, when not NULL).  Each share is
 * the commits of a stretch of the packs, read along them, so the packs
 * are read once whatever the shares; a share lists its commits
 * (PG_REPO_READ_BYTES a commit) and reads them, and the next reuses that
 * room.  More than one share costs a first pass that locates every commit
 * in the packs (along each pack's index once), 8 bytes a commit (where it
 * lies) beside the walk's bits, and a reading of the graphs' tables of
 * ids a share.  A stretch of a pack's bytes (a 49,152th of all the
 * packs') that alone holds more commits is a share of its own, and so are
 * every 256 commits no pack holds.
 */
int pg_repo_reach_read(pg_repo_reach *w, size_t share, size_t *shares, pg_repo_commit_bytes_fn fn,
		       void *ctx);
void pg_repo_reach_free(pg_repo_reach *w);

/*
 * The subjects (git's summary: the first paragraph on one line) of the
 * non-merge commits reachable from tip and not from hide (the range of
 * pg_repo_walk_range), newest first in git's --date-order, as git
 * fmt-merge-msg lists them.  A commit that cannot be parsed is named in
 * the error, as by pg_repo_walk_range.  Free with pg_str_list_free.
 */
int pg_repo_walk_subjects(char ***subjects, size_t *n, pg_repo *r, const pg_oid *tip,
			  const pg_oid *hide);

/*
 * Visit commits reachable from tip in committer-date order, newest first,
 * until every commit left to visit was committed before `since` (a few
 * more are visited past the line, to tolerate clock skew), or until max
 * commits were visited.  fn returning non-zero stops the walk and is
 * returned.  Costs O(commits committed since `since`), with no object read
 * for those a trusted commit-graph holds.
 */
typedef int (*pg_repo_visit_fn)(void *ctx, const pg_oid *id, int64_t time,
				const pg_oid *first_parent);
int pg_repo_walk_since(pg_repo *r, const pg_oid *tip, int64_t since, size_t max,
		       pg_repo_visit_fn fn, void *ctx);

/*
 * 1 when ancestor is descendant or one of its ancestors, 0 when not.  With
 * the ancestor in a trusted commit-graph, only commits at or above its
 * generation are read.
 */
int pg_repo_is_ancestor(pg_repo *r, const pg_oid *ancestor, const pg_oid *descendant);

/*
 * Which of ids[0..n) lie on tip's first-parent line (tip, its first
 * parent, that one's first parent...): on[i] says.  The line is walked
 * once, down to where no id can lie below (by generation where the
 * commit-graph gives one, else by ancestry once the line is dated before
 * the id), never to the root for an id that is elsewhere.
 */
int pg_repo_first_parent_line(bool *on, pg_repo *r, const pg_oid *tip, const pg_oid *ids,
			      size_t n);

/* The best common ancestor of a and b; PG_ENOTFOUND when they share none. */
int pg_repo_merge_base(pg_oid *out, pg_repo *r, const pg_oid *a, const pg_oid *b);

/* diff.c */

/* Patch id of a non-merge commit against its parent (git patch-id semantics). */
int pg_repo_patch_id(pg_oid *out, pg_repo *r, const pg_commit *c);

/*
 * The paths a diff from commit `from` (NULL: the empty tree) to commit `to`
 * touches, sorted and unique; both sides of a rename are listed, since no
 * rename detection is done.  Free with pg_str_list_free.
 */
int pg_repo_diff_paths(char ***paths, size_t *n, pg_repo *r, const pg_oid *from,
		       const pg_oid *to);

/*
 * The paths of tree a that tree b changes or removes (what b adds is not
 * in a), sorted and unique.  Free with pg_str_list_free.
 */
int pg_repo_diff_tree_changed(char ***paths, size_t *n, pg_repo *r, const pg_oid *a,
			      const pg_oid *b);

/* A line a diff adds or removes, in path, without its newline; nonzero stops the walk. */
typedef int (*pg_repo_line_fn)(void *ctx, const char *path, const char *line, size_t len);

/*
 * Hand each line the diff from commit from to commit to adds or removes
 * in a text file (a file over budget bytes counts as binary) to fn, until
 * budget bytes of lines were handed over: the rest is not read, and *cut,
 * unless NULL, says so.  0, a negative error, or fn's nonzero return.
 */
int pg_repo_diff_lines(pg_repo *r, const pg_oid *from, const pg_oid *to, size_t budget,
		       bool *cut, pg_repo_line_fn fn, void *ctx);

/* merge.c */

/*
 * Merge commit theirs into commit ours as git merge does, in memory: no
 * working tree or ref is touched.  When the trees merge cleanly the merged
 * tree is written to r and *tree set, and *nconflicts is 0.  Otherwise
 * nothing is written and *conflicts lists the *nconflicts conflicted
 * paths (free with pg_str_list_free).
 */
int pg_repo_merge_trees(pg_oid *tree, char ***conflicts, size_t *nconflicts, pg_repo *r,
			const pg_oid *ours, const pg_oid *theirs);

/* A conflicted path of a merge and its conflict regions. */
typedef struct pg_conflict {
	char *path;
	/*
	 * The conflict regions ("hunks") of the three-way merge of the file's
	 * versions, as git merge-file marks them; 0 when the conflict is not
	 * in a text: deleted on one side, a binary file, a link or submodule,
	 * a file larger than PG_CONFLICT_FILE_MAX.
	 */
	unsigned hunks;
} pg_conflict;

/* What is read of a conflicted file to count its hunks, per side. */
#define PG_CONFLICT_FILE_MAX ((size_t)32 << 20)
/* A file with a line opening with this many '<' has its hunks left uncounted (0). */
#define PG_CONFLICT_MARKER_MAX 1000

typedef struct pg_conflict_list {
	pg_conflict *items;  /* in index order (by path) */
	size_t n;            /* listed: at most the max asked for */
	size_t more;         /* conflicted paths past the max, not listed */
} pg_conflict_list;

void pg_conflict_list_init(pg_conflict_list *l);
void pg_conflict_list_release(pg_conflict_list *l);

/*
 * Merge commit theirs into commit ours as pg_repo_merge_trees does, in
 * memory, writing nothing, and list the conflicts in *out (released
 * first): the first max paths with their hunks, the number of the others
 * in out->more.  No conflict: out->n and out->more are 0.  Counting a
 * path's hunks reads its versions, so the work is bounded by max.
 */
int pg_repo_merge_conflicts(pg_conflict_list *out, pg_repo *r, const pg_oid *ours,
			    const pg_oid *theirs, size_t max);

/*
 * Merge commit theirs into commit ours as pg_repo_merge_trees does, and
 * where it conflicts take the versions a merge made by hand recorded:
 * resolution, a commit whose second parent is theirs.  It applies only
 * when each conflict here is one its own merge (its first parent with
 * theirs) had, on the same paths with the same two sides, ours and
 * theirs, mode and blob (the ancestor's path only: see find_triple), so
 * it resolves exactly what it was made for; then the paths those
 * conflicts name take its tree's version (or go, where it removed them),
 * and every other path keeps this merge's own.  The tree written is
 * checked to hold at each of those paths what the resolution holds (a
 * directory/file conflict it cannot settle so does not apply).  1 and
 * *tree written when it applies; 0, with the reason appended to why ("it
 * was made where 'x.c' conflicted otherwise"), when it does not.
 */
int pg_repo_merge_resolved(pg_oid *tree, pg_buf *why, pg_repo *r, const pg_oid *ours,
			   const pg_oid *theirs, const pg_oid *resolution);

typedef struct pg_new_commit {
	const pg_oid *tree;
	const pg_oid *parents;
	size_t nparents;
	const char *name;    /* author and committer */
	const char *email;
	int64_t time;        /* 0: now */
	int offset;          /* minutes east of UTC */
	const char *message;
	const char *header;  /* one more header after the committer ("mergetag"), or NULL */
	const char *header_value; /* its value; libgit2 adds the final newline */
} pg_new_commit;

/* Write the commit c describes to r; no ref moves. */
int pg_repo_commit_write(pg_oid *out, pg_repo *r, const pg_new_commit *c);

/* notes.c */

/*
 * The note on commit under notes_ref ("refs/notes/pullgate"), appended to
 * out (whose cap applies, PG_ETOOBIG past it) as the blob's exact bytes:
 * out->len of them, NUL bytes included, which the caller judges.
 * PG_ENOTFOUND when there is no such note (or no such notes ref).
 */
int pg_repo_note_read(pg_buf *out, pg_repo *r, const char *notes_ref, const pg_oid *commit);

/*
 * Write text as the note on commit under notes_ref, replacing one that is
 * there, in a notes commit by name <email> with log as its message.  The
 * note is the exact bytes of text (git notes add would clean them up).
 */
int pg_repo_note_write(pg_repo *r, const char *notes_ref, const pg_oid *commit,
		       const char *text, const char *name, const char *email, const char *log);

/* worktree.c */

/* 1 when r has a linked worktree called name, 0 when not. */
int pg_repo_worktree_exists(pg_repo *r, const char *name);

/*
 * Add a linked worktree called name at path, on the branch ref (which must
 * exist), checked out.
 */
int pg_repo_worktree_add(pg_repo *r, const char *name, const char *path, const char *ref);

/*
 * Prune the linked worktree called name, its files included, even when it
 * is locked; 0 when there is none.
 */
int pg_repo_worktree_prune(pg_repo *r, const char *name);

/*
 * Remove the locks (index and HEAD) a checkout of the linked worktree called
 * name left behind when it was killed; 0 when there are none.  As pg_repo_ref_unlock,
 * only for a worktree no live process uses.
 */
int pg_repo_worktree_unlock(pg_repo *r, const char *name);

/*
 * Detach r's HEAD at commit and check it out, overwriting changed files
 * and removing untracked ones.  A detached worktree holds no branch, so
 * that the same branch can be checked out in another worktree next.
 */
int pg_repo_checkout_detached(pg_repo *r, const pg_oid *commit);

/* The directory git keeps r's refs, objects and worktrees in (a worktree's: its main repository's); borrowed. */
const char *pg_repo_common_dir(const pg_repo *r);

#endif
