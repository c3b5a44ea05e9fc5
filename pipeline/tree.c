/* tree.c - the maintainer's tree: fetch a verified tag, merge it with its mergetag, build worktrees, CAS advance. */
#include "pipeline/tree.h"
#include "common/error.h"
#include "common/testpoint.h"
#include "common/fs.h"
#include "common/map.h"
#include "repo/repo.h"

#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct pg_tree {
	pg_repo *repo;
	char *path;
	char *branch_ref;
};

int pg_tree_open(pg_tree **out, const char *path, const char *branch)
{
	pg_tree *t = NULL;
	pg_buf ref = PG_BUF_INIT;
	int err;

	*out = NULL;
	if (!(t = calloc(1, sizeof(*t)))) {
		err = pg_error_oom();
		goto fail;
	}
	if ((err = pg_buf_printf(&ref, "refs/heads/%s", branch)) < 0)
		goto fail;
	if (!pg_repo_refname_valid(ref.ptr)) {
		err = pg_error_set(PG_EINVALID, "'%s' is not a valid branch name", branch);
		goto fail;
	}
	if ((err = pg_repo_open(&t->repo, path)) < 0) {
		if (err == PG_ENOTFOUND)
			pg_error_set(err, "tree '%s' is not a git repository", path);
		goto fail;
	}
	if (!(t->path = pg_strdup(path)) || !(t->branch_ref = pg_buf_detach(&ref))) {
		err = PG_ENOMEM;
		goto fail;
	}
	*out = t;
	return 0;
fail:
	pg_buf_release(&ref);
	pg_tree_free(t);
	return err;
}

void pg_tree_free(pg_tree *t)
{
	if (!t)
		return;
	pg_repo_free(t->repo);
	free(t->path);
	free(t->branch_ref);
	free(t);
}

pg_repo *pg_tree_repo(pg_tree *t)
{
	return t->repo;
}

const char *pg_tree_branch(const pg_tree *t)
{
	return t->branch_ref;
}

int pg_tree_head(pg_oid *out, pg_tree *t)
{
	int err = pg_repo_ref_target(out, t->repo, t->branch_ref);

	if (err == PG_ENOTFOUND)
		return pg_error_set(PG_ENOTFOUND, "integration branch '%s' does not exist in '%s'",
				    t->branch_ref, t->path);
	return err;
}

int pg_tree_holds(pg_tree *t, const pg_oid *commit)
{
	pg_oid head;
	int err = pg_tree_head(&head, t);

	if (err < 0)
		return err;
	return !pg_oid_cmp(&head, commit) ? 1 : pg_repo_is_ancestor(t->repo, commit, &head);
}

int pg_tree_commit_tree(pg_oid *out, pg_tree *t, const pg_oid *commit)
{
	return pg_repo_commit_tree(out, t->repo, commit);
}

int pg_tree_read_file(pg_buf *out, pg_tree *t, const pg_oid *tree, const char *path)
{
	return pg_repo_tree_read_file(out, t->repo, tree, path);
}

int pg_tree_list_files(char ***names, size_t *n, pg_tree *t, const pg_oid *tree, const char *dir)
{
	return pg_repo_tree_list_files(names, n, t->repo, tree, dir);
}

int pg_tree_changed_paths(char ***paths, size_t *n, pg_tree *t, const pg_oid *from,
			  const pg_oid *to)
{
	return pg_repo_diff_paths(paths, n, t->repo, from, to);
}

/* A path git could hand us that must not be followed out of the worktree. */
static bool unsafe_path(const char *p)
{
	const char *c;

	if (p[0] == '/')
		return true;
	for (c = p; (c = strstr(c, "..")); c += 2)
		if ((c == p || c[-1] == '/') && (c[2] == '/' || c[2] == '\0'))
			return true;
	return false;
}

int pg_tree_touch_changed(pg_tree *t, const char *path, const pg_oid *tree_a,
			  const pg_oid *tree_b, size_t *touched)
{
	pg_buf full = PG_BUF_INIT;
	char **paths = NULL;
	size_t i, n = 0;
	int err;

	*touched = 0;
	/* what a has and b changes or removes: the files its build compiled */
	if ((err = pg_repo_diff_tree_changed(&paths, &n, t->repo, tree_a, tree_b)) < 0) {
		err = pg_error_wrap(err, "comparing the base and the merge");
		goto done;
	}
	for (i = 0; i < n && err == 0; i++) {
		if (unsafe_path(paths[i]))
			continue;
		pg_buf_clear(&full);
		if ((err = pg_buf_printf(&full, "%s/%s", path, paths[i])) < 0)
			break;
		if (utimensat(AT_FDCWD, full.ptr, NULL, AT_SYMLINK_NOFOLLOW) == 0)
			(*touched)++;
		else if (errno != ENOENT && errno != ENOTDIR)
			err = pg_error_set(PG_EIO, "touching '%s': %s", full.ptr, strerror(errno));
	}
done:
	pg_str_list_free(paths, n);
	pg_buf_release(&full);
	return err;
}

int pg_tree_fetch_tag_into(pg_oid *got, pg_tree *t, const char *location, const char *tag,
			   const char *into, const pg_oid *expected)
{
	pg_fetch_opts opts = PG_FETCH_OPTS_INIT;
	pg_buf ref = PG_BUF_INIT;
	const char *name = strncmp(tag, "refs/tags/", 10) ? tag : tag + 10;
	int err;

	/* copied, not attached: the merge commit will need the tag's objects for good */
	opts.local = PG_LOCAL_COPY;
	opts.into = into;
	if ((err = pg_buf_printf(&ref, "refs/tags/%s", name)) < 0 ||
	    (err = pg_repo_fetch(got, t->repo, location, ref.ptr, &opts)) < 0)
		goto done;
	if (expected && pg_oid_cmp(got, expected)) {
		char a[PG_OID_HEXSZ + 1], b[PG_OID_HEXSZ + 1];

		pg_oid_tohex(a, expected);
		pg_oid_tohex(b, got);
		err = pg_error_set(PG_ECONFLICT, "tag '%s' moved since it was verified: %s, now %s",
				   name, a, b);
	}
done:
	pg_buf_release(&ref);
	return err;
}

int pg_tree_fetch_tag(pg_tree *t, const char *location, const char *tag, const pg_oid *verified)
{
	pg_buf local = PG_BUF_INIT;
	const char *name = strncmp(tag, "refs/tags/", 10) ? tag : tag + 10;
	pg_oid got;
	int err;

	if ((err = pg_buf_printf(&local, "refs/pullgate/tags/%s", name)) == 0)
		err = pg_tree_fetch_tag_into(&got, t, location, tag, local.ptr, verified);
	pg_buf_release(&local);
	return err;
}

int pg_tree_list_refs(char ***refs, size_t *n, pg_tree *t, const char *prefix)
{
	return pg_repo_ref_list(refs, n, t->repo, prefix);
}

int pg_tree_drop_refs(pg_tree *t, const char *prefix)
{
	pg_buf dir = PG_BUF_INIT;
	char **refs = NULL;
	size_t i, n = 0;
	int err, first = 0;

	if (strncmp(prefix, "refs/pullgate/", 14))
		return pg_error_set(PG_EINVALID, "'%s' is not pullgate's own", prefix);
	if ((err = pg_repo_ref_list(&refs, &n, t->repo, prefix)) < 0)
		return err;
	/* every one tried, the first failure kept: what is left is left for the next run */
	for (i = 0; i < n; i++)
		if ((err = pg_repo_ref_delete(t->repo, refs[i])) < 0 && first == 0)
			first = err;
	/*
	 * libgit2 removes the directories a delete leaves empty only under
	 * refs/heads/, refs/tags/ and refs/remotes/: this one goes too, or
	 * every run would leave one.  Not its parents: another run's refs may
	 * be made in them at this moment.
	 */
	if ((err = pg_buf_printf(&dir, "%s/%s", pg_repo_common_dir(t->repo), prefix)) == 0 &&
	    rmdir(dir.ptr) < 0 && errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST &&
	    first == 0)
		first = pg_error_set(PG_EIO, "'%s': %s", dir.ptr, strerror(errno));
	if (err < 0 && first == 0)
		first = err;
	pg_str_list_free(refs, n);
	pg_buf_release(&dir);
	return first;
}

void pg_merge_result_init(pg_merge_result *r)
{
	memset(r, 0, sizeof(*r));
	pg_buf_init(&r->message, 0);
	pg_buf_init(&r->unresolved, 0);
}

void pg_merge_result_release(pg_merge_result *r)
{
	pg_str_list_free(r->conflicts, r->nconflicts);
	free(r->resolution_ref);
	pg_buf_release(&r->unresolved);
	pg_buf_release(&r->message);
	pg_merge_result_init(r);
}

/* A failure that is the ref's or its objects', to say and pass over, not the whole merge's. */
static bool passable(int err)
{
	return err < 0 && err != PG_ENOMEM && err != PG_ECANCELLED;
}

/* "; " between the notes of unresolved, which may be NULL */
static int note(pg_buf *unresolved, const char *fmt, ...) PG_PRINTF(2, 3);
static int note(pg_buf *unresolved, const char *fmt, ...)
{
	va_list ap;
	int err;

	if (!unresolved)
		return 0;
	if (unresolved->len && (err = pg_buf_puts(unresolved, "; ")) < 0)
		return err;
	va_start(ap, fmt);
	err = pg_buf_vprintf(unresolved, fmt, ap);
	va_end(ap);
	return err;
}

/*
 * Whether ref holds a merge whose second parent is commit: a resolution
 * for it (1, *id its commit).  A ref that is not a commit's is no one's
 * resolution; one that cannot be read is said in unresolved and passed
 * over: one damaged ref of the maintainer's stops no pull's merge.
 */
static int resolves(pg_oid *id, pg_buf *unresolved, pg_tree *t, const char *ref,
		    const pg_oid *commit)
{
	pg_commit *c = NULL;
	pg_oid target;
	int err;

	if ((err = pg_repo_ref_target(&target, t->repo, ref)) == PG_ENOTFOUND) {
		pg_error_clear();
		return 0; /* deleted meanwhile */
	}
	if (err == 0 && (err = pg_repo_peel_commit(id, t->repo, &target)) == PG_EINVALID) {
		pg_error_clear();
		return 0; /* a tree or blob, or a tag of one: no one's resolution */
	}
	if (err == 0 && (err = pg_repo_read_commit(&c, t->repo, id)) == 0)
		err = c->nparents == 2 && !pg_oid_cmp(&c->parents[1], commit);
	pg_commit_free(c);
	if (passable(err)) {
		err = note(unresolved, "%s cannot be read: %s", ref, pg_error_last());
		pg_error_clear();
	}
	return err;
}

int pg_tree_resolution(pg_oid *tree, char **name, pg_oid *id, pg_buf *unresolved, pg_tree *t,
		       const pg_oid *base, const pg_oid *commit)
{
	char **refs = NULL;
	size_t n = 0, i;
	int err, found = 0;

	*name = NULL;
	if ((err = pg_repo_ref_list(&refs, &n, t->repo, PG_TREE_RESOLUTIONS)) < 0)
		return err;
	for (i = 0; i < n && !found && err >= 0; i++) {
		const char *ref = refs[i];
		pg_buf why = PG_BUF_INIT;
		char hex[PG_OID_HEXSZ + 1];

		if ((err = resolves(id, unresolved, t, refs[i], commit)) <= 0)
			continue;
		err = pg_repo_merge_resolved(tree, &why, t->repo, base, commit, id);
		pg_oid_tohex(hex, id);
		if (err == 1)
			err = (found = (*name = pg_strdup(ref)) != NULL) ? 0 : PG_ENOMEM;
		else if (err == 0)
			err = note(unresolved, "%s (%.12s) does not apply: %s", ref, hex, why.ptr);
		else if (passable(err)) {
			/* its objects damaged or missing: said, and the conflict stands */
			err = note(unresolved, "%s (%.12s) cannot be used: %s", ref, hex,
				   pg_error_last());
			pg_error_clear();
		}
		pg_buf_release(&why);
	}
	pg_str_list_free(refs, n);
	return err < 0 ? err : found;
}

int pg_tree_resolutions_digest(uint64_t *out, pg_tree *t)
{
	pg_buf all = PG_BUF_INIT;
	char **refs = NULL;
	char hex[PG_OID_HEXSZ + 1];
	size_t n = 0, i;
	pg_oid target;
	int err;

	*out = 0;
	if ((err = pg_repo_ref_list(&refs, &n, t->repo, PG_TREE_RESOLUTIONS)) < 0)
		return err;
	for (i = 0; i < n && err == 0; i++) {
		if ((err = pg_repo_ref_target(&target, t->repo, refs[i])) == PG_ENOTFOUND) {
			pg_error_clear();
			err = 0;
			continue; /* deleted meanwhile */
		}
		if (passable(err)) {
			/* a symbolic ref's loop, say: a state of its own, and the others still count */
			pg_error_clear();
			err = pg_buf_printf(&all, "%s unreadable\n", refs[i]);
		} else if (err == 0) {
			pg_oid_tohex(hex, &target);
			err = pg_buf_printf(&all, "%s %s\n", refs[i], hex);
		}
	}
	if (err == 0 && all.len)
		*out = pg_hash_bytes(all.ptr, all.len);
	pg_buf_release(&all);
	pg_str_list_free(refs, n);
	return err;
}

int pg_tree_merge(pg_merge_result *out, pg_tree *t, const pg_oid *base, const pg_oid *tag,
		  const pg_merge_opts *opts)
{
	enum pg_object_type type = PG_OBJ_NONE;
	pg_buf tagtext = PG_BUF_INIT;
	pg_tagobj *parsed = NULL;
	char **subjects = NULL;
	size_t nsubjects = 0;
	pg_oid parents[2];
	pg_new_commit c;
	int err, up;

	pg_merge_result_release(out);
	if ((err = pg_repo_read_raw(&tagtext, &type, t->repo, tag)) < 0)
		goto done;
	if (type != PG_OBJ_TAG) {
		char hex[PG_OID_HEXSZ + 1];

		pg_oid_tohex(hex, tag);
		err = pg_error_set(PG_EINVALID, "merge: %s is a %s, not a tag", hex,
				   pg_object_type_name(type));
		goto done;
	}
	parents[0] = *base;
	if ((err = pg_repo_peel_commit(&parents[1], t->repo, tag)) < 0 ||
	    (err = up = pg_repo_is_ancestor(t->repo, &parents[1], base)) < 0)
		goto done;
	if (up) {
		out->up_to_date = true;
		err = 0;
		goto done;
	}
	if ((err = pg_repo_merge_trees(&out->tree, &out->conflicts, &out->nconflicts, t->repo,
				       base, &parents[1])) < 0)
		goto done;
	if (out->nconflicts &&
	    (err = pg_tree_resolution(&out->tree, &out->resolution_ref, &out->resolution,
				      &out->unresolved, t, base, &parents[1])) < 0)
		goto done;
	out->resolved = err == 1;
	if (out->nconflicts && !out->resolved) {
		out->conflicted = true;
		goto done;
	}

	/* the mergetag: the tag object as stored, as `git merge` embeds it */
	if ((err = pg_tagobj_parse(&parsed, tagtext.ptr, tagtext.len)) < 0)
		goto done;
	pg_buf_rtrim(&tagtext); /* libgit2 ends the header with the newline itself */
	if ((err = pg_repo_walk_subjects(&subjects, &nsubjects, t->repo, &parents[1], base)) < 0 ||
	    (err = pg_merge_message(&out->message, opts, parsed,
				    (const char *const *)subjects, nsubjects)) < 0)
		goto done;
	memset(&c, 0, sizeof(c));
	c.tree = &out->tree;
	c.parents = parents;
	c.nparents = 2;
	c.name = opts->name;
	c.email = opts->email;
	c.time = opts->time;
	c.offset = opts->offset;
	c.message = out->message.ptr;
	c.header = "mergetag";
	c.header_value = tagtext.ptr;
	err = pg_repo_commit_write(&out->commit, t->repo, &c);
done:
	pg_str_list_free(subjects, nsubjects);
	pg_tagobj_free(parsed);
	pg_buf_release(&tagtext);
	return err;
}

/* The branch of a pull: refs/heads/pullgate/<name>. */
static int pull_branch(pg_buf *out, const char *name)
{
	return pg_buf_printf(out, "refs/heads/pullgate/%s", name);
}

/*
 * The pulls' branches are written under a lock of the tree's own
 * (pullgate-refs.lock in its git directory), held by runs in every build
 * worktree and process: libgit2 removes refs/heads/pullgate/ once a
 * delete leaves it empty, and a branch made in it at that moment by
 * another run would fail.  *fd: close it to let go.
 */
static int lock_refs(int *fd, pg_tree *t)
{
	pg_buf path = PG_BUF_INIT;
	int err;

	*fd = -1;
	if ((err = pg_buf_printf(&path, "%s/pullgate-refs.lock", pg_repo_common_dir(t->repo))) == 0)
		err = pg_lock_file(fd, path.ptr, true);
	pg_buf_release(&path);
	return err;
}

static void unlock_refs(int fd)
{
	if (fd >= 0)
		close(fd);
}

int pg_tree_set_pull_branch(pg_tree *t, const char *name, const pg_oid *commit)
{
	pg_buf full = PG_BUF_INIT;
	int err, fd = -1;

	if ((err = pull_branch(&full, name)) == 0 && (err = lock_refs(&fd, t)) == 0)
		err = pg_repo_ref_set(t->repo, full.ptr, commit, "pullgate: merge");
	unlock_refs(fd);
	pg_buf_release(&full);
	return err;
}

int pg_tree_remove_worktree(pg_tree *t, const char *name, const char *path)
{
	int err = pg_repo_worktree_prune(t->repo, name);

	return err < 0 ? err : pg_remove_tree(path);
}

int pg_tree_worktree_checkout(pg_tree *t, const char *wt_name, const char *name,
			      const char *path, const pg_oid *commit)
{
	pg_repo *wt = NULL;
	pg_buf full = PG_BUF_INIT;
	int err, registered;

	if ((err = pg_tree_set_pull_branch(t, name, commit)) < 0 ||
	    (err = pull_branch(&full, name)) < 0 ||
	    (err = registered = pg_repo_worktree_exists(t->repo, wt_name)) < 0)
		goto done;
	/* a registered worktree whose directory went away is pruned and made again */
	if (registered && pg_repo_open(&wt, path) < 0) {
		if ((err = pg_tree_remove_worktree(t, wt_name, path)) < 0)
			goto done;
		registered = 0;
	}
	/* made on the pull's branch (libgit2 adds a worktree on a branch only) */
	if (!registered && ((err = pg_remove_tree(path)) < 0 ||
			    (err = pg_repo_worktree_add(t->repo, wt_name, path, full.ptr)) < 0 ||
			    (err = pg_repo_open(&wt, path)) < 0))
		goto done;
	/* then detached at the commit: no worktree holds a pull's branch for another */
	err = pg_repo_checkout_detached(wt, commit);
done:
	pg_repo_free(wt);
	pg_buf_release(&full);
	return err;
}

/* A pull's two refs: its branch and the verified tag fetched into refs/pullgate/tags/. */
static int pull_refs(pg_buf *branch, pg_buf *tagref, const char *name, const char *tag)
{
	const char *short_tag = strncmp(tag, "refs/tags/", 10) ? tag : tag + 10;
	int err = pull_branch(branch, name);

	return err < 0 ? err : pg_buf_printf(tagref, "refs/pullgate/tags/%s", short_tag);
}

int pg_tree_drop_pull_refs(pg_tree *t, const char *name, const char *tag)
{
	pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT;
	int err, fd = -1;

	if ((err = pull_refs(&a, &b, name, tag)) == 0 && (err = lock_refs(&fd, t)) == 0 &&
	    (err = pg_repo_ref_delete(t->repo, a.ptr)) == 0)
		err = pg_repo_ref_delete(t->repo, b.ptr);
	unlock_refs(fd);
	pg_buf_release(&a);
	pg_buf_release(&b);
	return err;
}

int pg_tree_drop_stale(pg_tree *t, const char *name, const char *tag, const char *wt_name)
{
	pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT;
	int err;

	if ((err = pg_repo_worktree_unlock(t->repo, wt_name)) < 0 || !name)
		goto done;
	if ((err = pull_refs(&a, &b, name, tag)) == 0 &&
	    (err = pg_repo_ref_unlock(t->repo, a.ptr)) == 0 &&
	    (err = pg_repo_ref_unlock(t->repo, b.ptr)) == 0)
		err = pg_tree_drop_pull_refs(t, name, tag);
done:
	pg_buf_release(&a);
	pg_buf_release(&b);
	return err;
}

int pg_tree_can_advance(pg_tree *t)
{
	/* moving the checked-out branch under a working tree would leave it stale */
	if (pg_repo_ref_checked_out(t->repo, t->branch_ref))
		return pg_error_set(PG_ECONFLICT, "refusing to move '%s': it is checked out in "
				    "'%s'", t->branch_ref, t->path);
	return 0;
}

/* How long a compare-and-swap waits for a lock another writer holds on the branch. */
#define ADVANCE_TRIES 40
#define ADVANCE_WAIT_NS (50 * 1000 * 1000L)

int pg_tree_advance(pg_tree *t, const pg_oid *expected, const pg_oid *next, const char *reason)
{
	pg_oid now;
	int err, i;

	if ((err = pg_tree_can_advance(t)) < 0)
		return err;
	for (i = 0; i < ADVANCE_TRIES; i++) {
		struct timespec ts = { 0, ADVANCE_WAIT_NS };

		err = pg_repo_ref_cas(t->repo, t->branch_ref, expected, next, reason);
		if (err != PG_ECONFLICT)
			return err;
		/* moved: refused; still there: locked by another writer for a moment */
		if ((err = pg_tree_head(&now, t)) < 0)
			return err;
		if (pg_oid_cmp(&now, expected))
			return pg_error_set(PG_ECONFLICT, "'%s' moved while the pull was tested; "
					    "nothing was changed", t->branch_ref);
		if (i == 0)
			pg_testpoint("approve", "branch-locked");
		nanosleep(&ts, NULL);
	}
	return pg_error_set(PG_ECONFLICT, "'%s' stayed locked by another writer (its .lock file); "
			    "nothing was changed", t->branch_ref);
}
