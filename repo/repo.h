/* repo.h - the repository layer: the one place pullgate talks to libgit2. */
#ifndef PG_REPO_H
#define PG_REPO_H

#include "common/buf.h"
#include "common/oid.h"
#include "repo/object.h"

/*
 * A pg_repo is one git repository opened through libgit2: the verifier's
 * object cache.  libgit2's handles, types and error codes never leave
 * repo/: every function here returns 0, or the non-negative value it
 * documents, or a negative PG_E* code with the last error set
 * (common/error.h).  What comes back through an out-parameter is the
 * caller's to free as noted; a pointer returned directly is borrowed.  A
 * pg_repo is used by one thread at a time.
 *
 * The layer is split by concern, as libgit2 splits its own code:
 *	open.c      open the cache; fetch a URL or attach a local repository
 *	refs.c      ref names and what they point at
 *	read.c      objects by id or abbreviated id, commits and tags parsed
 *	walk.c      history: ranges, date-ordered walks, merge bases
 *	diff.c      patch ids and the paths a diff touches
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
void pg_repo_lib_shutdown(void);

/*
 * The object cache, $PULLGATE_HOME/repos/cache.git: a bare repository,
 * made on first use, into which a pull and its upstream are made visible
 * together (pg_repo_resolve).
 */
int pg_repo_open_cache(pg_repo **out, const char *home);
void pg_repo_free(pg_repo *r);

enum pg_ref_kind {
	PG_REF_TAG,    /* name is a tag: "v1" or "refs/tags/v1" */
	PG_REF_BRANCH, /* name is a branch, or NULL for the remote's HEAD */
};

/*
 * Make the objects of location visible in r and resolve the named ref
 * there.  A URL is fetched with libgit2 into refs/pullgate/<hash of the
 * URL>/<ref>.  A local repository (a file:// URL or a path; scp-like
 * "[user@]host:path" only when a directory of that name exists) is
 * attached as an in-memory alternate object store: nothing is copied.
 * *out is what the ref points at (a tag object for an annotated tag);
 * *full_ref, if given, receives the full ref name (free()).  PG_ENOTFOUND
 * when the repository or the ref does not exist, PG_EINVALID when name is
 * not a valid ref name.
 */
int pg_repo_resolve(pg_oid *out, char **full_ref, pg_repo *r, const char *location,
		    enum pg_ref_kind kind, const char *name);

/* refs.c */

/* Whether full_ref ("refs/tags/v1") is a valid ref name. */
bool pg_repo_refname_valid(const char *full_ref);

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
int pg_repo_read_tag(pg_tagobj **out, pg_repo *r, const pg_oid *id);

/*
 * Resolve an abbreviated commit id (at least 4 hex digits).  PG_ENOTFOUND
 * when nothing matches, PG_EINVALID when it is not hex or is ambiguous.
 */
int pg_repo_resolve_prefix(pg_oid *out, pg_repo *r, const char *hex, size_t len);

/* walk.c */

/*
 * Commits reachable from tip and not from any of hide[0..nhide), oldest
 * first in topological order.  Costs O(result + the hidden side down to
 * the merge base), as git rev-list does.  *out is malloc()ed.  A commit
 * libgit2 cannot parse is named in the error.
 */
int pg_repo_walk_range(pg_oid **out, size_t *n, pg_repo *r, const pg_oid *tip,
		       const pg_oid *hide, size_t nhide);

/*
 * Visit commits reachable from tip in committer-date order, newest first,
 * until every commit left to visit was committed before `since` (a few
 * more are visited past the line, to tolerate clock skew), or until max
 * commits were visited.  fn returning non-zero stops the walk and is
 * returned.  Costs O(commits committed since `since`).
 */
typedef int (*pg_repo_visit_fn)(void *ctx, const pg_oid *id, int64_t time,
				const pg_oid *first_parent);
int pg_repo_walk_since(pg_repo *r, const pg_oid *tip, int64_t since, size_t max,
		       pg_repo_visit_fn fn, void *ctx);

/* 1 when ancestor is descendant or one of its ancestors, 0 when not. */
int pg_repo_is_ancestor(pg_repo *r, const pg_oid *ancestor, const pg_oid *descendant);

/* The best common ancestor of a and b; PG_ENOTFOUND when they share none. */
int pg_repo_merge_base(pg_oid *out, pg_repo *r, const pg_oid *a, const pg_oid *b);

/* diff.c */

/* Patch id of a non-merge commit against its parent (git patch-id semantics). */
int pg_repo_patch_id(pg_oid *out, pg_repo *r, const pg_commit *c);

/*
 * The paths a diff from commit `from` (NULL: the empty tree) to commit `to`
 * touches, sorted and unique; both sides of a rename are listed, since no
 * rename detection is done.  Free with pg_repo_strings_free.
 */
int pg_repo_diff_paths(char ***paths, size_t *n, pg_repo *r, const pg_oid *from,
		       const pg_oid *to);

/* Free an array of n malloc()ed strings, as the functions above return; NULL-safe. */
void pg_repo_strings_free(char **strings, size_t n);

#endif
