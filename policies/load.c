/* load.c - read a policy file under its size cap and report its problems. */
#include "policies/schema.h"
#include "common/error.h"
#include "common/fs.h"

/*
 * Examine text; problems go to *pr (as many as it keeps).  *out is set
 * only when there are none.  A negative return means pullgate itself
 * failed (memory).
 */
static int examine(pg_policy **out, pg_yaml_problems *pr, const char *text, size_t len,
		   const char *name, const char *basedir)
{
	pg_policy *p = NULL;
	int err;

	*out = NULL;
	if ((err = pg_policy_new_default(&p)) < 0)
		return err;
	free(p->source);
	if (!(p->source = pg_strdup(name))) {
		err = PG_ENOMEM;
		goto done;
	}
	/* what the attestation of a merge this policy approved names it by */
	if ((err = pg_sha256_hex(p->sha256, text, len)) == 0)
		err = pg_policy_schema_read(pr, p, text, len, basedir);
done:
	if (err == 0 && pr->n == 0) {
		*out = p;
		p = NULL;
	}
	pg_policy_free(p);
	return err;
}

void pg_policy_problems_free(pg_policy_problem *list, size_t n)
{
	pg_yaml_problems pr = { list, n, n, 0, false };

	pg_yaml_problems_release(&pr);
}

int pg_policy_problem_format(pg_buf *out, const char *name, const pg_policy_problem *pr)
{
	return pg_yaml_problem_format(out, name, pr);
}

static const char *too_big_msg(void)
{
	return "the policy is larger than 1 MiB: expected a smaller file";
}

/* The directory part of path, or NULL when it has none. */
static int dir_of(char **out, const char *path)
{
	const char *slash = strrchr(path, '/');

	*out = NULL;
	if (!slash)
		return 0;
	if (!(*out = pg_strndup(path, slash == path ? 1 : (size_t)(slash - path))))
		return PG_ENOMEM;
	return 0;
}

int pg_policy_parse(pg_policy **out, const char *text, size_t len, const char *name)
{
	pg_yaml_problems pr = PG_YAML_PROBLEMS_INIT(1);
	char *dir = NULL;
	int err;

	*out = NULL;
	if (len > PG_POLICY_MAX_SIZE)
		return pg_error_set(PG_ETOOBIG, "%s: %s", name, too_big_msg());
	if ((err = dir_of(&dir, name)) < 0)
		return err;
	if ((err = examine(out, &pr, text, len, name, dir)) == 0 && pr.n)
		err = pg_yaml_problems_error(&pr, name);
	pg_yaml_problems_release(&pr);
	free(dir);
	return err;
}

/* Read path under the cap; the base for relative paths is its absolute directory. */
static int read_policy(pg_buf *text, char **basedir, const char *path)
{
	char *dir = NULL;
	int err;

	*basedir = NULL;
	pg_buf_init(text, PG_POLICY_MAX_SIZE);
	if ((err = pg_buf_read_file(text, path)) < 0) {
		if (err == PG_ETOOBIG)
			return pg_error_set(err, "%s: %s", path, too_big_msg());
		return pg_error_wrap(err, "cannot read the policy");
	}
	if ((err = dir_of(&dir, path)) < 0)
		return err;
	*basedir = realpath(dir ? dir : ".", NULL);
	if (!*basedir) {
		/* it was just read, so this is rare; resolve against the given path */
		*basedir = dir;
		return 0;
	}
	free(dir);
	return 0;
}

int pg_policy_load(pg_policy **out, const char *path)
{
	pg_yaml_problems pr = PG_YAML_PROBLEMS_INIT(1);
	pg_buf text = PG_BUF_INIT;
	char *basedir = NULL;
	int err;

	*out = NULL;
	if ((err = read_policy(&text, &basedir, path)) < 0)
		goto done;
	if ((err = examine(out, &pr, text.ptr, text.len, path, basedir)) == 0 && pr.n)
		err = pg_yaml_problems_error(&pr, path);
done:
	pg_yaml_problems_release(&pr);
	pg_buf_release(&text);
	free(basedir);
	return err;
}

int pg_policy_check(pg_policy_problem **out, size_t *n, const char *path)
{
	pg_yaml_problems pr = PG_YAML_PROBLEMS_INIT(PG_POLICY_MAX_PROBLEMS);
	pg_policy *p = NULL;
	pg_buf text = PG_BUF_INIT;
	char *basedir = NULL;
	int err;

	*out = NULL;
	*n = 0;
	if ((err = read_policy(&text, &basedir, path)) == PG_ETOOBIG) {
		pg_yaml_mark whole = { 0, 0 };

		err = pg_yaml_problems_add(&pr, whole, too_big_msg());
	} else if (err == 0) {
		err = examine(&p, &pr, text.ptr, text.len, path, basedir);
	}
	pg_policy_free(p);
	pg_buf_release(&text);
	free(basedir);
	if (err < 0) {
		pg_yaml_problems_release(&pr);
		return err;
	}
	*out = pr.items;
	*n = pr.n;
	return 0;
}
