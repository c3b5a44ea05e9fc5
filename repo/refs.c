/* refs.c - refs: valid names and what they point at. */
#include "repo/internal.h"
#include "common/error.h"

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
