/* worktree.c - linked worktrees: find, add and prune them, and check a commit out. */
#include "repo/internal.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"

int pg_repo_worktree_exists(pg_repo *r, const char *name)
{
	git_strarray names = { NULL, 0 };
	size_t i;
	int gerr = git_worktree_list(&names, r->git), found = 0;

	if (gerr < 0)
		return pg_git_fail(gerr, "worktrees");
	for (i = 0; i < names.count; i++)
		if (!strcmp(names.strings[i], name))
			found = 1;
	git_strarray_dispose(&names);
	return found;
}

int pg_repo_worktree_add(pg_repo *r, const char *name, const char *path, const char *ref)
{
	git_reference *branch = NULL;
	git_worktree *wt = NULL;
	git_worktree_add_options add;
	pg_buf dir = PG_BUF_INIT;
	int gerr, err;

	/*
	 * libgit2 1.5 makes <common dir>/worktrees when it sees none, with an
	 * exclusive mkdir: two build worktrees added at once (two pulls gated
	 * in parallel) raced, and the second failed with "directory exists".
	 * Made here first, where another's making it is no error.
	 */
	if ((err = pg_buf_printf(&dir, "%sworktrees", git_repository_commondir(r->git))) == 0)
		err = pg_mkdir_p(dir.ptr);
	pg_buf_release(&dir);
	if (err < 0)
		return pg_error_wrap(err, "worktree '%s' at '%s'", name, path);
	if ((gerr = git_reference_lookup(&branch, r->git, ref)) == 0) {
		git_worktree_add_options_init(&add, GIT_WORKTREE_ADD_OPTIONS_VERSION);
		add.ref = branch;
		add.checkout_options.checkout_strategy = GIT_CHECKOUT_FORCE;
		gerr = git_worktree_add(&wt, r->git, name, path, &add);
	}
	git_worktree_free(wt);
	git_reference_free(branch);
	return gerr < 0 ? pg_git_fail(gerr, "worktree '%s' at '%s'", name, path) : 0;
}

int pg_repo_worktree_prune(pg_repo *r, const char *name)
{
	git_worktree *wt = NULL;
	git_worktree_prune_options popts;
	int gerr;

	/* libgit2's lookup of a missing worktree is not GIT_ENOTFOUND: list first */
	if ((gerr = pg_repo_worktree_exists(r, name)) <= 0)
		return gerr;
	gerr = git_worktree_lookup(&wt, r->git, name);
	if (gerr == GIT_ENOTFOUND)
		return 0;
	if (gerr == 0) {
		git_worktree_prune_options_init(&popts, GIT_WORKTREE_PRUNE_OPTIONS_VERSION);
		popts.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_LOCKED |
			      GIT_WORKTREE_PRUNE_WORKING_TREE;
		gerr = git_worktree_prune(wt, &popts);
		git_worktree_free(wt);
	}
	return gerr < 0 ? pg_git_fail(gerr, "worktree '%s'", name) : 0;
}

int pg_repo_worktree_unlock(pg_repo *r, const char *name)
{
	/* a checkout locks the index; setting the detached HEAD locks HEAD */
	static const char *const locks[] = { "index.lock", "HEAD.lock" };
	pg_buf path = PG_BUF_INIT;
	size_t i;
	int err;

	if (!*name || strchr(name, '/') || !strcmp(name, "..") || !strcmp(name, "."))
		return pg_error_set(PG_EINVALID, "'%s' is not a worktree name", name);
	for (i = 0, err = 0; i < PG_ARRAY_SIZE(locks) && err == 0; i++) {
		pg_buf_clear(&path);
		if ((err = pg_buf_printf(&path, "%sworktrees/%s/%s",
					 git_repository_commondir(r->git), name, locks[i])) == 0)
			err = pg_repo_unlink_stale(path.ptr);
	}
	pg_buf_release(&path);
	return err;
}

int pg_repo_checkout_detached(pg_repo *r, const pg_oid *commit)
{
	git_checkout_options co;
	char hex[PG_OID_HEXSZ + 1];
	int gerr;

	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED;
	if ((gerr = git_repository_set_head_detached(r->git, pg_git_oid(commit))) < 0 ||
	    (gerr = git_checkout_head(r->git, &co)) < 0) {
		pg_oid_tohex(hex, commit);
		return pg_git_fail(gerr, "checkout %.12s in '%s'", hex, r->path);
	}
	return 0;
}

const char *pg_repo_common_dir(const pg_repo *r)
{
	return git_repository_commondir(r->git);
}
