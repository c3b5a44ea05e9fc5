/* config.c - what a repository's configuration says: keys, a branch's upstream, its hooks. */
#include "repo/internal.h"
#include "common/buf.h"
#include "common/error.h"

int pg_repo_config_string(char **out, pg_repo *r, const char *key)
{
	git_config *cfg = NULL;
	git_buf value = GIT_BUF_INIT;
	int gerr, err = 0;

	*out = NULL;
	if ((gerr = git_repository_config_snapshot(&cfg, r->git)) < 0)
		return pg_git_fail(gerr, "the configuration of '%s'", r->path);
	gerr = git_config_get_string_buf(&value, cfg, key);
	if (gerr == 0 && !(*out = pg_strdup(value.ptr)))
		err = PG_ENOMEM;
	else if (gerr < 0 && gerr != GIT_ENOTFOUND)
		err = pg_git_fail(gerr, "configuration key '%s'", key);
	git_buf_dispose(&value);
	git_config_free(cfg);
	return err;
}

int pg_repo_branch_upstream(char **out, pg_repo *r, const char *branch_ref)
{
	git_buf name = GIT_BUF_INIT;
	int gerr, err = 0;

	*out = NULL;
	gerr = git_branch_upstream_name(&name, r->git, branch_ref);
	if (gerr == 0 && !(*out = pg_strdup(name.ptr)))
		err = PG_ENOMEM;
	else if (gerr < 0 && gerr != GIT_ENOTFOUND)
		err = pg_git_fail(gerr, "the upstream of '%s'", branch_ref);
	git_buf_dispose(&name);
	return err;
}

int pg_repo_head_branch(char **out, pg_repo *r)
{
	git_reference *head = NULL;
	int gerr, err = 0;

	*out = NULL;
	gerr = git_reference_lookup(&head, r->git, "HEAD");
	if (gerr == GIT_ENOTFOUND)
		return 0;
	if (gerr < 0)
		return pg_git_fail(gerr, "HEAD of '%s'", r->path);
	if (git_reference_type(head) == GIT_REFERENCE_SYMBOLIC &&
	    !strncmp(git_reference_symbolic_target(head), "refs/heads/", 11) &&
	    !(*out = pg_strdup(git_reference_symbolic_target(head))))
		err = PG_ENOMEM;
	git_reference_free(head);
	return err;
}

int pg_repo_revparse_commit(pg_oid *out, pg_repo *r, const char *rev)
{
	git_object *obj = NULL, *peeled = NULL;
	int gerr, err = 0;

	gerr = git_revparse_single(&obj, r->git, rev);
	if (gerr == GIT_ENOTFOUND || gerr == GIT_EAMBIGUOUS || gerr == GIT_EINVALIDSPEC)
		return pg_error_set(PG_ENOTFOUND, "'%s' names nothing in '%s'", rev, r->path);
	if (gerr < 0)
		return pg_git_fail(gerr, "'%s'", rev);
	if ((gerr = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT)) < 0)
		err = pg_error_set(PG_EINVALID, "'%s' names no commit", rev);
	else
		pg_oid_from_git(out, git_object_id(peeled));
	git_object_free(peeled);
	git_object_free(obj);
	return err;
}

int pg_repo_hooks_dir(char **out, pg_repo *r)
{
	pg_buf path = PG_BUF_INIT;
	char *configured = NULL;
	const char *workdir = git_repository_workdir(r->git);
	int err;

	*out = NULL;
	if ((err = pg_repo_config_string(&configured, r, "core.hooksPath")) < 0)
		return err;
	if (configured && configured[0] == '/')
		err = pg_buf_puts(&path, configured);
	else if (configured && !strncmp(configured, "~/", 2) && getenv("HOME"))
		err = pg_buf_printf(&path, "%s/%s", getenv("HOME"), configured + 2);
	else if (configured)
		err = pg_buf_printf(&path, "%s%s", workdir ? workdir : git_repository_commondir(r->git),
				    configured);
	else
		err = pg_buf_printf(&path, "%shooks", git_repository_commondir(r->git));
	free(configured);
	if (err == 0 && !(*out = pg_buf_detach(&path)))
		err = PG_ENOMEM;
	pg_buf_release(&path);
	return err;
}

bool pg_repo_has_object(pg_repo *r, const pg_oid *id)
{
	git_odb *odb = NULL;
	bool has;

	if (git_repository_odb(&odb, r->git) < 0)
		return false;
	has = git_odb_exists(odb, pg_git_oid(id)) == 1;
	git_odb_free(odb);
	return has;
}
