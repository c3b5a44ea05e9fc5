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

/* The value of key in cfg, or *out NULL (ENOTFOUND and an empty value are none). */
static int config_value(char **out, const git_config *cfg, const char *key)
{
	git_buf value = GIT_BUF_INIT;
	int gerr, err = 0;

	*out = NULL;
	gerr = git_config_get_string_buf(&value, cfg, key);
	if (gerr == 0 && value.size && !(*out = pg_strdup(value.ptr)))
		err = PG_ENOMEM;
	else if (gerr < 0 && gerr != GIT_ENOTFOUND)
		err = pg_git_fail(gerr, "configuration key '%s'", key);
	git_buf_dispose(&value);
	return err;
}

/* What a remote's fetch refspecs make of the ref its branch merges. */
typedef struct tracking {
	const char *merge;
	git_buf dst;
	int gerr;
} tracking;

static int track_refspec(const git_config_entry *e, void *payload)
{
	tracking *t = payload;
	git_refspec *spec = NULL;
	int gerr, found = 0;

	/* a refspec that does not parse is an error, as it is to git_remote_lookup() */
	if ((gerr = git_refspec_parse(&spec, e->value, 1)) < 0)
		return gerr;
	if (git_refspec_src_matches(spec, t->merge)) {
		t->gerr = git_refspec_transform(&t->dst, spec, t->merge);
		found = 1;
	}
	git_refspec_free(spec);
	return found;
}

/*
 * git_branch_upstream_name() without git_remote_lookup(): libgit2 1.5.1's
 * lookup rewrites the remote's URL by url.*.insteadOf, which leaks (see
 * repo/open.c's fetch_url), and the URL plays no part in the name.  The
 * rest is the same: branch.B.remote and branch.B.merge, "." for a local
 * branch, else the first of remote.R.fetch whose source matches the
 * merged ref, turned into its destination.
 */
int pg_repo_branch_upstream(char **out, pg_repo *r, const char *branch_ref)
{
	git_config *cfg = NULL;
	tracking t = { NULL, GIT_BUF_INIT, 0 };
	char *remote = NULL, *merge = NULL, *url = NULL;
	pg_buf key = PG_BUF_INIT;
	const char *name = branch_ref + 11;
	int gerr, err;

	*out = NULL;
	if (strncmp(branch_ref, "refs/heads/", 11))
		return pg_error_set(PG_EINVALID, "the upstream of '%s': not a local branch",
				    branch_ref);
	if ((gerr = git_repository_config_snapshot(&cfg, r->git)) < 0)
		return pg_git_fail(gerr, "the configuration of '%s'", r->path);
	if ((err = pg_buf_printf(&key, "branch.%s.remote", name)) < 0 ||
	    (err = config_value(&remote, cfg, key.ptr)) < 0)
		goto done;
	pg_buf_clear(&key);
	if ((err = pg_buf_printf(&key, "branch.%s.merge", name)) < 0 ||
	    (err = config_value(&merge, cfg, key.ptr)) < 0 || !remote || !merge)
		goto done;
	if (!strcmp(remote, ".")) {
		*out = merge;
		merge = NULL;
		goto done;
	}
	/* a remote exists when it has a URL (git_remote_lookup's test) */
	pg_buf_clear(&key);
	if ((err = pg_buf_printf(&key, "remote.%s.url", remote)) < 0 ||
	    (err = config_value(&url, cfg, key.ptr)) < 0)
		goto done;
	if (!url) {
		pg_buf_clear(&key);
		if ((err = pg_buf_printf(&key, "remote.%s.pushurl", remote)) < 0 ||
		    (err = config_value(&url, cfg, key.ptr)) < 0 || !url)
			goto done;
	}
	pg_buf_clear(&key);
	if ((err = pg_buf_printf(&key, "remote.%s.fetch", remote)) < 0)
		goto done;
	t.merge = merge;
	gerr = git_config_get_multivar_foreach(cfg, key.ptr, NULL, track_refspec, &t);
	if (gerr < 0 && gerr != GIT_ENOTFOUND)
		err = pg_git_fail(gerr, "the fetch refspecs of remote '%s'", remote);
	else if (t.gerr < 0)
		err = pg_git_fail(t.gerr, "the upstream of '%s'", branch_ref);
	else if (gerr > 0 && !(*out = pg_strdup(t.dst.ptr)))
		err = PG_ENOMEM;
done:
	git_buf_dispose(&t.dst);
	pg_buf_release(&key);
	free(url);
	free(merge);
	free(remote);
	git_config_free(cfg);
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
