/* repo.h - the one place the verifier talks to libgit2: cache, fetch, read, walk. */
#ifndef PG_REPO_H
#define PG_REPO_H

#include "repo/object.h"

/*
 * A pg_repo is the object cache under $PULLGATE_HOME/repos/cache.git, a
 * bare repository into which the pull and the upstream tree are made
 * visible together: a local repository is attached as an in-memory
 * alternate object store (nothing is copied), a URL is fetched with
 * libgit2 into refs/pullgate/<hash>/...  git_repository and every other
 * libgit2 handle stay inside repo.c; libgit2 errors are converted here.
 */
typedef struct pg_repo pg_repo;

int pg_repo_open_cache(pg_repo **out, const char *home);
void pg_repo_free(pg_repo *r);

enum pg_ref_kind {
	PG_REF_TAG,    /* name is a tag: "v1" or "refs/tags/v1" */
	PG_REF_BRANCH, /* name is a branch, or NULL for the remote's HEAD */
};

/*
 * Make the objects of location (a path or a URL) visible and resolve the
 * named ref there.  *out is what the ref points at (a tag object for an
 * annotated tag); *full_ref, if given, receives the full ref name (free()).
 * PG_ENOTFOUND when the repository or the ref does not exist.
 */
int pg_repo_resolve(pg_oid *out, char **full_ref, pg_repo *r, const char *location,
		    enum pg_ref_kind kind, const char *name);

enum pg_object_type {
	PG_OBJ_NONE = 0,
	PG_OBJ_COMMIT,
	PG_OBJ_TREE,
	PG_OBJ_BLOB,
	PG_OBJ_TAG,
};

int pg_repo_object_type(enum pg_object_type *out, pg_repo *r, const pg_oid *id);
const char *pg_object_type_name(enum pg_object_type t);

/* Raw object bytes (without the "type len\0" prefix), capped by buf->max. */
int pg_repo_read_raw(pg_buf *out, enum pg_object_type *type, pg_repo *r, const pg_oid *id);
int pg_repo_read_commit(pg_commit **out, pg_repo *r, const pg_oid *id);
int pg_repo_read_tag(pg_tagobj **out, pg_repo *r, const pg_oid *id);

/*
 * Commits reachable from tip and not from any of hide[0..nhide), oldest
 * first in topological order.  Costs O(result + the hidden side down to
 * the merge base), as git rev-list does.  *out is malloc()ed.
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

/* Patch id of a non-merge commit against its parent (git patch-id semantics). */
int pg_repo_patch_id(pg_oid *out, pg_repo *r, const pg_commit *c);

/* 1 when ancestor is descendant or one of its ancestors, 0 when not. */
int pg_repo_is_ancestor(pg_repo *r, const pg_oid *ancestor, const pg_oid *descendant);

/* The best common ancestor of a and b; PG_ENOTFOUND when they share none. */
int pg_repo_merge_base(pg_oid *out, pg_repo *r, const pg_oid *a, const pg_oid *b);

/*
 * The paths a diff from commit `from` (NULL: the empty tree) to commit `to`
 * touches, sorted and unique; both sides of a rename are listed, since no
 * rename detection is done.  *paths and each path are malloc()ed: free
 * with pg_repo_paths_free.
 */
int pg_repo_diff_paths(char ***paths, size_t *n, pg_repo *r, const pg_oid *from,
		       const pg_oid *to);
void pg_repo_paths_free(char **paths, size_t n);

/*
 * Resolve an abbreviated commit id (at least 4 hex digits).  PG_ENOTFOUND
 * when nothing matches, PG_EINVALID when it is not hex or is ambiguous.
 */
int pg_repo_resolve_prefix(pg_oid *out, pg_repo *r, const char *hex, size_t len);

/* Whether a string is a valid ref name component set (e.g. a tag name). */
bool pg_repo_refname_valid(const char *full_ref);

#endif
