/* hooks.c - push records as field tables over the YAML walker; delivery ids and mail refs checked. */
#include "server/hooks.h"
#include "common/error.h"
#include "common/yaml_schema.h"

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

/* A repository name that cannot point outside the base it is joined to. */
const char *pg_push_why_repo(const char *s)
{
	const char *p;

	if (s[0] == '/' || strstr(s, "..") || strstr(s, "//"))
		return "no '..', no '//' and no '/' at the start";
	for (p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("/._-+~", *p)))
			return "letters, digits and '/._-+~' only";
	return NULL;
}

/*
 * A ref name as git check-ref-format accepts it, more strictly: only
 * [A-Za-z0-9._/+-], no "..", no empty component, none starting with '.' or
 * ending with ".lock", and not ending with '/' or '.'.
 */
bool pg_push_ref_valid(const char *s)
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

static const char *why_ref(const char *s)
{
	return strncmp(s, "refs/", 5) || !pg_push_ref_valid(s) ?
		"refs/tags/... or refs/heads/..., as git check-ref-format allows" : NULL;
}

static void read_oid(pg_yaml_reader *r, void *base, const pg_yaml_node *v, const char *path,
		     const pg_yaml_field *f)
{
	const char *s = pg_yaml_string(r, v, path, f);

	if (s && (v->len != PG_OID_HEXSZ || pg_oid_fromhex((pg_oid *)((char *)base + f->offset),
							   s, v->len) < 0))
		pg_yaml_wrong(r, v, path, f->wants);
}

/* After a change's fields: whether it is a tag's. */
static void check_change(pg_yaml_reader *r, void *base, const pg_yaml_node *map,
			 const char *path)
{
	pg_push_change *c = base;

	(void)r;
	(void)map;
	(void)path;
	c->is_tag = c->ref && !strncmp(c->ref, "refs/tags/", 10) && c->ref[10];
}

static const pg_yaml_field change_fields[] = {
	{ .key = "ref", .kind = PG_FIELD_STRING, .offset = offsetof(pg_push_change, ref),
	  .required = true, .max = PG_PUSH_MAX_NAME, .why = why_ref, .wants = "a full ref name" },
	{ .key = "old", .kind = PG_FIELD_CUSTOM, .offset = offsetof(pg_push_change, old_id),
	  .required = true, .read = read_oid, .wants = "40 hex digits" },
	{ .key = "new", .kind = PG_FIELD_CUSTOM, .offset = offsetof(pg_push_change, new_id),
	  .required = true, .read = read_oid, .wants = "40 hex digits" },
};

static const pg_yaml_field changes_list = {
	.kind = PG_FIELD_MAPS, .offset = offsetof(pg_push_record, changes),
	.count = offsetof(pg_push_record, nchanges), .size = sizeof(pg_push_change),
	.sub = PG_YAML_SUB(change_fields, check_change), .wants = "a mapping of ref, old and new",
};

/*
 * At least one change; past PG_PUSH_MAX_CHANGES the record is too big
 * (PG_ETOOBIG, a 413), not malformed.
 */
static void read_changes(pg_yaml_reader *r, void *base, const pg_yaml_node *v, const char *path,
			 const pg_yaml_field *f)
{
	if (v->type != PG_YAML_LIST || !v->n)
		pg_yaml_wrong(r, v, path, f->list_wants);
	else if (v->n > PG_PUSH_MAX_CHANGES)
		pg_yaml_fail(r, pg_error_set(PG_ETOOBIG, "line %u, column %u: '%s' has %zu "
					     "entries: a push record has at most %d changes",
					     v->mark.line, v->mark.column, path, v->n,
					     PG_PUSH_MAX_CHANGES));
	else
		pg_yaml_read_value(r, base, v, path, &changes_list);
}

static const pg_yaml_field record_fields[] = {
	{ .key = "repo", .kind = PG_FIELD_STRING, .offset = offsetof(pg_push_record, repo),
	  .required = true, .max = PG_PUSH_MAX_NAME, .why = pg_push_why_repo,
	  .wants = "a plain repository path" },
	{ .key = "user", .kind = PG_FIELD_STRING, .offset = offsetof(pg_push_record, user),
	  .max = PG_PUSH_MAX_NAME, .wants = "a user name" },
	{ .key = "changes", .kind = PG_FIELD_CUSTOM, .required = true, .read = read_changes,
	  .list_wants = "a list of at least one change" },
};

static const pg_yaml_doc record_doc = {
	.what = "the push record",
	.wants = "a mapping of repo, user and changes",
	.root = PG_YAML_SUB(record_fields, NULL),
};

int pg_push_parse(pg_push_record **out, const char *text, size_t len)
{
	pg_push_record *r = NULL;
	int err;

	*out = NULL;
	if (!(r = calloc(1, sizeof(*r))))
		return pg_error_oom();
	/* a request body has no file name: its problems say "line L, column C" */
	if ((err = pg_yaml_load(r, &record_doc, text, len, NULL, NULL, NULL)) < 0) {
		pg_push_record_free(r);
		return err;
	}
	*out = r;
	return 0;
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
	if (!pg_push_ref_valid(out->ptr + start)) {
		pg_buf_truncate(out, start);
		return pg_error_set(PG_EINVALID, "the mail names an invalid tag");
	}
	return 0;
}
