/* hooks.c - push records read through the capped YAML tree; delivery ids and mail refs checked. */
#include "server/hooks.h"
#include "common/error.h"
#include "common/yaml_tree.h"

static int bad(const pg_yaml_node *at, const char *fmt, ...) PG_PRINTF(2, 3);
static int bad(const pg_yaml_node *at, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!at)
		return pg_error_set(PG_EINVALID, "%s", msg);
	return pg_error_set(PG_EINVALID, "line %u, column %u: %s", at->mark.line, at->mark.column,
			    msg);
}

void pg_push_record_free(pg_push_record *r)
{
	size_t i;

	if (!r)
		return;
	free(r->repo);
	free(r->user);
	for (i = 0; i < r->nchanges; i++)
		free(r->changes[i].ref);
	free(r->changes);
	free(r);
}

static const pg_yaml_node *field(const pg_yaml_node *map, const char *key, bool required,
				 int *err)
{
	const pg_yaml_node *v = pg_yaml_map_get(map, key);

	if (*err)
		return NULL;
	if (!v && required)
		*err = bad(map, "the record has no '%s'", key);
	else if (v && (v->type != PG_YAML_SCALAR || pg_yaml_is_null(v) || !v->len))
		*err = bad(v, "'%s' wants a non-empty string", key);
	else if (v && v->len > PG_PUSH_MAX_NAME)
		*err = bad(v, "'%s' is longer than %d bytes", key, PG_PUSH_MAX_NAME);
	return *err ? NULL : v;
}

static bool plain_repo_name(const char *s)
{
	const char *p;

	if (s[0] == '/' || strstr(s, "..") || strstr(s, "//"))
		return false;
	for (p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("/._-+~", *p)))
			return false;
	return true;
}

/*
 * A ref name as git check-ref-format accepts it, more strictly: only
 * [A-Za-z0-9._/+-], no "..", no empty component, none starting with '.' or
 * ending with ".lock", and not ending with '/' or '.'.
 */
static bool ref_ok(const char *s)
{
	const char *c = s;
	size_t n = strlen(s);

	if (!n || n > PG_PUSH_MAX_NAME || strstr(s, "..") || strstr(s, "//") || s[0] == '/' ||
	    s[n - 1] == '/' || s[n - 1] == '.')
		return false;
	if (strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/+-") != n)
		return false;
	for (; c; c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL) {
		size_t len = strcspn(c, "/");

		if (c[0] == '.' || (len >= 5 && !strncmp(c + len - 5, ".lock", 5)))
			return false;
	}
	return true;
}

static int read_change(pg_push_change *c, const pg_yaml_node *n)
{
	const pg_yaml_node *ref, *old_id, *new_id;
	int err = 0;

	if (n->type != PG_YAML_MAP)
		return bad(n, "each change wants a mapping of ref, old and new");
	ref = field(n, "ref", true, &err);
	old_id = field(n, "old", true, &err);
	new_id = field(n, "new", true, &err);
	if (err)
		return err;
	if (strncmp(ref->value, "refs/", 5) || !ref_ok(ref->value))
		return bad(ref, "'ref' wants a full ref name (refs/tags/... or refs/heads/...)");
	if (pg_oid_fromhex(&c->old_id, old_id->value, old_id->len) < 0 || old_id->len != 40)
		return bad(old_id, "'old' wants 40 hex digits");
	if (pg_oid_fromhex(&c->new_id, new_id->value, new_id->len) < 0 || new_id->len != 40)
		return bad(new_id, "'new' wants 40 hex digits");
	c->is_tag = !strncmp(ref->value, "refs/tags/", 10) && ref->value[10];
	if (!(c->ref = pg_strdup(ref->value)))
		return PG_ENOMEM;
	return 0;
}

int pg_push_parse(pg_push_record **out, const char *text, size_t len)
{
	pg_push_record *r = NULL;
	pg_yaml_node *root = NULL;
	const pg_yaml_node *repo, *user, *changes;
	pg_yaml_mark where;
	size_t i;
	int err;

	*out = NULL;
	err = pg_yaml_parse(&root, &where, text, len);
	if (err == PG_EINVALID) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", pg_error_last());
		return pg_error_set(PG_EINVALID, "line %u, column %u: %s", where.line, where.column,
				    msg);
	}
	if (err < 0)
		return err;
	if (!root || root->type != PG_YAML_MAP) {
		err = bad(root, "a push record is a mapping with repo, user and changes");
		goto done;
	}
	err = 0;
	repo = field(root, "repo", true, &err);
	user = field(root, "user", false, &err);
	if (err)
		goto done;
	if (!plain_repo_name(repo->value)) {
		err = bad(repo, "'repo' wants a plain repository path");
		goto done;
	}
	changes = pg_yaml_map_get(root, "changes");
	if (!changes || changes->type != PG_YAML_LIST || changes->n == 0) {
		err = bad(changes ? changes : root, "'changes' wants a list of at least one change");
		goto done;
	}
	if (changes->n > PG_PUSH_MAX_CHANGES) {
		err = pg_error_set(PG_ETOOBIG, "a push record has at most %d changes",
				   PG_PUSH_MAX_CHANGES);
		goto done;
	}
	if (!(r = calloc(1, sizeof(*r))) || !(r->changes = calloc(changes->n, sizeof(*r->changes)))) {
		err = pg_error_oom();
		goto done;
	}
	if (!(r->repo = pg_strdup(repo->value)) || (user && !(r->user = pg_strdup(user->value)))) {
		err = PG_ENOMEM;
		goto done;
	}
	for (i = 0; i < changes->n; i++) {
		if ((err = read_change(&r->changes[i], changes->items[i])) < 0)
			goto done;
		r->nchanges++;
	}
	*out = r;
	r = NULL;
done:
	pg_push_record_free(r);
	pg_yaml_free(root);
	return err;
}

size_t pg_push_tag_count(const pg_push_record *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->nchanges; i++)
		n += r->changes[i].is_tag && !pg_oid_is_zero(&r->changes[i].new_id);
	return n;
}

bool pg_hook_delivery_valid(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	return n >= 1 && n <= 128 &&
	       strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-") == n;
}

int pg_hook_mail_tag(pg_buf *out, const char *ref)
{
	size_t start = out->len;
	int err;

	if (!ref || !*ref)
		return pg_error_set(PG_EINVALID, "the mail names no tag to pull");
	if (!strncmp(ref, "refs/tags/", 10))
		ref += 10;
	else if (!strncmp(ref, "tags/", 5))
		ref += 5;
	else if (!strncmp(ref, "refs/", 5))
		return pg_error_set(PG_EINVALID, "the mail asks to pull '%s', which is not a tag", ref);
	if ((err = pg_buf_printf(out, "refs/tags/%s", ref)) < 0)
		return err;
	if (!ref_ok(out->ptr + start)) {
		pg_buf_truncate(out, start);
		return pg_error_set(PG_EINVALID, "the mail names an invalid tag");
	}
	return 0;
}
