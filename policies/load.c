/* load.c - read a policy file under its size cap and report its problems. */
#include "policies/schema.h"
#include "common/error.h"

int pg_policy_problems_add(pg_policy_problems *pr, pg_yaml_mark at, const char *msg)
{
	pg_policy_problem *grown;

	if (pr->full)
		return 0;
	if (pr->n == PG_POLICY_MAX_PROBLEMS) {
		pr->full = true;
		msg = "too many problems; the rest are not shown";
	}
	if (!(grown = realloc(pr->items, (pr->n + 1) * sizeof(*grown))))
		return pg_error_oom();
	pr->items = grown;
	grown[pr->n].line = at.line;
	grown[pr->n].column = at.column;
	if (!(grown[pr->n].message = pg_strdup(msg)))
		return PG_ENOMEM;
	pr->n++;
	return 0;
}

/*
 * Examine text; problems go to *pr.  *out is set only when there are none.
 * A negative return means pullgate itself failed (memory).
 */
static int examine(pg_policy **out, pg_policy_problems *pr, const char *text, size_t len,
		   const char *name, const char *basedir)
{
	pg_policy *p = NULL;
	pg_yaml_node *root = NULL;
	pg_yaml_mark where;
	int err;

	*out = NULL;
	if ((err = pg_policy_new_default(&p)) < 0)
		return err;
	free(p->source);
	if (!(p->source = pg_strdup(name))) {
		err = PG_ENOMEM;
		goto done;
	}
	err = pg_yaml_parse(&root, &where, text, len);
	if (err == PG_EINVALID) {
		err = pg_policy_problems_add(pr, where, pg_error_last());
		goto done;
	}
	if (err < 0)
		goto done;
	if (!root) {
		pg_yaml_mark start = { 1, 1 };

		err = pg_policy_problems_add(pr, start,
					     "the policy is empty: expected a mapping of settings");
		goto done;
	}
	err = pg_policy_schema_walk(p, pr, root, basedir);
done:
	pg_yaml_free(root);
	if (err == 0 && pr->n == 0) {
		*out = p;
		p = NULL;
	}
	pg_policy_free(p);
	return err;
}

void pg_policy_problems_free(pg_policy_problem *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(list[i].message);
	free(list);
}

int pg_policy_problem_format(pg_buf *out, const char *name, const pg_policy_problem *pr)
{
	if (pr->line)
		return pg_buf_printf(out, "%s:%u:%u: %s", name, pr->line, pr->column, pr->message);
	return pg_buf_printf(out, "%s: %s", name, pr->message);
}

/* Turn the first problem into the thread's error (PG_EINVALID). */
static int first_problem(const pg_policy_problems *pr, const char *name)
{
	pg_buf msg = PG_BUF_INIT;
	int err;

	if ((err = pg_policy_problem_format(&msg, name, &pr->items[0])) < 0)
		return err;
	err = pg_error_set(PG_EINVALID, "%s", msg.ptr);
	pg_buf_release(&msg);
	return err;
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
	pg_policy_problems pr = { NULL, 0, false };
	char *dir = NULL;
	int err;

	*out = NULL;
	if (len > PG_POLICY_MAX_SIZE)
		return pg_error_set(PG_ETOOBIG, "%s: %s", name, too_big_msg());
	if ((err = dir_of(&dir, name)) < 0)
		return err;
	if ((err = examine(out, &pr, text, len, name, dir)) == 0 && pr.n)
		err = first_problem(&pr, name);
	pg_policy_problems_free(pr.items, pr.n);
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
	pg_policy_problems pr = { NULL, 0, false };
	pg_buf text = PG_BUF_INIT;
	char *basedir = NULL;
	int err;

	*out = NULL;
	if ((err = read_policy(&text, &basedir, path)) < 0)
		goto done;
	if ((err = examine(out, &pr, text.ptr, text.len, path, basedir)) == 0 && pr.n)
		err = first_problem(&pr, path);
done:
	pg_policy_problems_free(pr.items, pr.n);
	pg_buf_release(&text);
	free(basedir);
	return err;
}

int pg_policy_check(pg_policy_problem **out, size_t *n, const char *path)
{
	pg_policy_problems pr = { NULL, 0, false };
	pg_policy *p = NULL;
	pg_buf text = PG_BUF_INIT;
	char *basedir = NULL;
	int err;

	*out = NULL;
	*n = 0;
	if ((err = read_policy(&text, &basedir, path)) == PG_ETOOBIG) {
		pg_yaml_mark whole = { 0, 0 };

		err = pg_policy_problems_add(&pr, whole, too_big_msg());
	} else if (err == 0) {
		err = examine(&p, &pr, text.ptr, text.len, path, basedir);
	}
	pg_policy_free(p);
	pg_buf_release(&text);
	free(basedir);
	if (err < 0) {
		pg_policy_problems_free(pr.items, pr.n);
		return err;
	}
	*out = pr.items;
	*n = pr.n;
	return 0;
}
