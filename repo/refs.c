/* refs.c - refs: valid names, what they point at, and the three ways pullgate moves them. */
#include "repo/internal.h"
#include "common/array.h"
#include "common/error.h"

#include <unistd.h>

bool pg_repo_refname_valid(const char *full_ref)
{
	int valid = 0;

	return git_reference_name_is_valid(&valid, full_ref) == 0 && valid;
}

int pg_git_ref_target(pg_oid *out, git_repository *git, const char *name, const char *shown,
		      const char *where)
{
	git_reference *ref = NULL, *resolved = NULL;
	int gerr = git_reference_lookup(&ref, git, name), err = 0;

	if (gerr == 0)
		gerr = git_reference_resolve(&resolved, ref);
	if (gerr < 0)
		err = gerr == GIT_ENOTFOUND ?
			pg_error_set(PG_ENOTFOUND, "'%s' not found in '%s'", shown, where) :
			pg_git_fail(gerr, "'%s' in '%s'", shown, where);
	else
		pg_oid_from_git(out, git_reference_target(resolved));
	git_reference_free(resolved);
	git_reference_free(ref);
	return err;
}

int pg_repo_ref_target(pg_oid *out, pg_repo *r, const char *ref)
{
	return pg_git_ref_target(out, r->git, ref, ref, r->path);
}

int pg_repo_ref_set(pg_repo *r, const char *ref, const pg_oid *id, const char *log)
{
	git_reference *out = NULL;
	int gerr = git_reference_create(&out, r->git, ref, pg_git_oid(id), 1, log);

	git_reference_free(out);
	return gerr < 0 ? pg_git_fail(gerr, "'%s'", ref) : 0;
}

int pg_repo_ref_cas(pg_repo *r, const char *ref, const pg_oid *expected, const pg_oid *next,
		    const char *log)
{
	git_reference *out = NULL;
	int gerr = git_reference_create_matching(&out, r->git, ref, pg_git_oid(next), 1,
						 pg_git_oid(expected), log);

	git_reference_free(out);
	if (gerr == GIT_EMODIFIED || gerr == GIT_ELOCKED)
		return pg_error_set(PG_ECONFLICT, "'%s' moved or is locked; nothing was changed",
				    ref);
	return gerr < 0 ? pg_git_fail(gerr, "'%s'", ref) : 0;
}

int pg_repo_ref_delete(pg_repo *r, const char *ref)
{
	git_reference *found = NULL;
	int gerr = git_reference_lookup(&found, r->git, ref);

	if (gerr == GIT_ENOTFOUND)
		return 0;
	if (gerr == 0)
		gerr = git_reference_delete(found);
	git_reference_free(found);
	return gerr < 0 ? pg_git_fail(gerr, "'%s'", ref) : 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int pg_repo_ref_list(char ***refs, size_t *n, pg_repo *r, const char *prefix)
{
	git_reference_iterator *it = NULL;
	pg_buf glob = PG_BUF_INIT;
	const char *name;
	char **list = NULL;
	size_t count = 0, alloc = 0;
	int gerr = 0, err;

	*refs = NULL;
	*n = 0;
	if (strncmp(prefix, "refs/", 5) || prefix[strlen(prefix) - 1] != '/' ||
	    strpbrk(prefix, "*?[\\"))
		return pg_error_set(PG_EINVALID, "'%s' is not a directory of refs", prefix);
	/* libgit2's ref globs match '/' with '*': every ref below prefix */
	if ((err = pg_buf_printf(&glob, "%s*", prefix)) < 0)
		goto done;
	if ((gerr = git_reference_iterator_glob_new(&it, r->git, glob.ptr)) < 0) {
		err = pg_git_fail(gerr, "refs under '%s'", prefix);
		goto done;
	}
	while ((gerr = git_reference_next_name(&name, it)) == 0) {
		if ((err = PG_ARRAY_GROW(list, count + 1, alloc)) < 0)
			goto done;
		if (!(list[count] = pg_strdup(name))) {
			err = PG_ENOMEM;
			goto done;
		}
		count++;
	}
	if (gerr != GIT_ITEROVER) {
		err = pg_git_fail(gerr, "refs under '%s'", prefix);
		goto done;
	}
	if (count)
		qsort(list, count, sizeof(*list), cmp_name);
	*refs = list;
	*n = count;
	list = NULL;
	count = 0;
done:
	pg_str_list_free(list, count);
	git_reference_iterator_free(it);
	pg_buf_release(&glob);
	return err;
}

/* Unlink path; a missing file is fine. */
int pg_repo_unlink_stale(const char *path)
{
	if (unlink(path) < 0 && errno != ENOENT)
		return pg_error_set(PG_EIO, "'%s': %s", path, strerror(errno));
	return 0;
}

int pg_repo_ref_unlock(pg_repo *r, const char *ref)
{
	pg_buf path = PG_BUF_INIT;
	int err;

	if (!pg_repo_refname_valid(ref) || strncmp(ref, "refs/", 5))
		return pg_error_set(PG_EINVALID, "'%s' is not a ref", ref);
	if ((err = pg_buf_printf(&path, "%s%s.lock", git_repository_commondir(r->git), ref)) == 0)
		err = pg_repo_unlink_stale(path.ptr);
	pg_buf_release(&path);
	return err;
}

bool pg_repo_ref_checked_out(pg_repo *r, const char *ref)
{
	git_reference *head = NULL;
	bool checked_out;

	checked_out = !git_repository_is_bare(r->git) &&
		      git_reference_lookup(&head, r->git, "HEAD") == 0 &&
		      git_reference_type(head) == GIT_REFERENCE_SYMBOLIC &&
		      !strcmp(git_reference_symbolic_target(head), ref);
	git_reference_free(head);
	return checked_out;
}
