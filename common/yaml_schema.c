/* yaml_schema.c - the typed walker: a YAML tree into a struct by field tables, problems by place. */
#include "common/yaml_schema.h"
#include "common/array.h"
#include "common/error.h"
#include "common/map.h"
#include "common/sanitize.h"
#include "common/str.h"

#include <limits.h>

/* Longest value quoted back in a message, and longest key "did you mean" compares. */
#define QUOTE_MAX 60

/* --- problems ------------------------------------------------------------ */

int pg_yaml_problems_add(pg_yaml_problems *pr, pg_yaml_mark at, const char *msg)
{
	pg_yaml_problem *p;
	int err;

	if (pr->full)
		return 0;
	if (pr->max > 1 && pr->n == pr->max)
		msg = "too many problems; the rest are not shown";
	if ((err = PG_ARRAY_GROW(pr->items, pr->n + 1, pr->alloc)) < 0)
		return err;
	p = &pr->items[pr->n];
	p->line = at.line;
	p->column = at.column;
	if (!(p->message = pg_strdup(msg)))
		return PG_ENOMEM;
	pr->n++;
	pr->full = pr->n > pr->max || pr->max <= 1;
	return 0;
}

void pg_yaml_problems_release(pg_yaml_problems *pr)
{
	size_t i;

	for (i = 0; i < pr->n; i++)
		free(pr->items[i].message);
	free(pr->items);
	pr->items = NULL;
	pr->n = pr->alloc = 0;
	pr->full = false;
}

int pg_yaml_problem_format(pg_buf *out, const char *name, const pg_yaml_problem *p)
{
	if (!name)
		return pg_buf_printf(out, "line %u, column %u: %s", p->line, p->column, p->message);
	if (p->line)
		return pg_buf_printf(out, "%s:%u:%u: %s", name, p->line, p->column, p->message);
	return pg_buf_printf(out, "%s: %s", name, p->message);
}

int pg_yaml_problems_error(const pg_yaml_problems *pr, const char *name)
{
	pg_buf msg = PG_BUF_INIT;
	int err;

	if ((err = pg_yaml_problem_format(&msg, name, &pr->items[0])) < 0)
		return err;
	err = pg_error_set(PG_EINVALID, "%s", msg.ptr);
	pg_buf_release(&msg);
	return err;
}

/* --- reporting ------------------------------------------------------------ */

bool pg_yaml_stopped(const pg_yaml_reader *r)
{
	return r->err < 0 || r->pr->full;
}

void pg_yaml_fail(pg_yaml_reader *r, int err)
{
	if (r->err == 0)
		r->err = err;
}

static void add_at(pg_yaml_reader *r, pg_yaml_mark at, const char *fmt, va_list ap)
{
	pg_buf msg = PG_BUF_INIT;
	int err = pg_buf_vprintf(&msg, fmt, ap);

	if (err < 0 || (err = pg_yaml_problems_add(r->pr, at, msg.ptr)) < 0)
		pg_yaml_fail(r, err);
	pg_buf_release(&msg);
}

void pg_yaml_problem_at(pg_yaml_reader *r, const pg_yaml_node *at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_at(r, at->mark, fmt, ap);
	va_end(ap);
}

static void problem_start(pg_yaml_reader *r, const char *fmt, ...) PG_PRINTF(2, 3);
static void problem_start(pg_yaml_reader *r, const char *fmt, ...)
{
	pg_yaml_mark start = { 1, 1 };
	va_list ap;

	va_start(ap, fmt);
	add_at(r, start, fmt, ap);
	va_end(ap);
}

int pg_yaml_quote(pg_buf *out, const char *s)
{
	size_t len = strlen(s), cut = 0, chars = 0;
	uint32_t cp;
	int err;

	while (cut < len && chars < QUOTE_MAX) {
		size_t n = pg_utf8_decode((const unsigned char *)s + cut, len - cut, &cp);

		cut += n ? n : 1;
		chars++;
	}
	if ((err = pg_buf_putc(out, '\'')) < 0 ||
	    (err = pg_sanitize_terminal(out, s, cut, PG_SANITIZE_ONELINE)) < 0)
		return err;
	return pg_buf_puts(out, cut < len ? "...'" : "'");
}

/* "a mapping", "a list" (or empty ones), "nothing" or the quoted scalar (a secret is not quoted). */
static int describe(pg_buf *out, const pg_yaml_node *n, bool secret)
{
	if (n->type == PG_YAML_MAP)
		return pg_buf_puts(out, n->n ? "a mapping" : "an empty mapping");
	if (n->type == PG_YAML_LIST)
		return pg_buf_puts(out, n->n ? "a list" : "an empty list");
	if (pg_yaml_is_null(n))
		return pg_buf_puts(out, "nothing");
	if (secret)
		return pg_buf_puts(out, "this value");
	return pg_yaml_quote(out, n->value);
}

static void wrong(pg_yaml_reader *r, const pg_yaml_node *v, const char *path, const char *wants,
		  bool secret)
{
	pg_buf found = PG_BUF_INIT;
	int err;

	if ((err = describe(&found, v, secret)) < 0)
		pg_yaml_fail(r, err);
	else
		pg_yaml_problem_at(r, v, "'%s' wants %s, not %s", path, wants, found.ptr);
	pg_buf_release(&found);
}

void pg_yaml_wrong(pg_yaml_reader *r, const pg_yaml_node *v, const char *path, const char *wants)
{
	wrong(r, v, path, wants, false);
}

/* Levenshtein distance, for "did you mean"; long words are never close. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, row[QUOTE_MAX + 1];

	if (la > QUOTE_MAX || lb > QUOTE_MAX)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* "in 'path'", or "at the top level". */
static int place(pg_buf *out, const char *path)
{
	return *path ? pg_buf_printf(out, "in '%s'", path) : pg_buf_puts(out, "at the top level");
}

void pg_yaml_unknown(pg_yaml_reader *r, const pg_yaml_node *key, const char *what,
		     const char *path, const char *const *names, size_t n)
{
	pg_buf name = PG_BUF_INIT, where = PG_BUF_INIT, hint = PG_BUF_INIT;
	size_t i, best = SIZE_MAX, d;
	const char *near = NULL;
	int err;

	for (i = 0; i < n; i++) {
		d = distance(key->value, names[i]);
		if (d < best && d <= 2 && d < strlen(names[i]) / 2) {
			best = d;
			near = names[i];
		}
	}
	if ((err = pg_yaml_quote(&name, key->value)) < 0 || (err = place(&where, path)) < 0)
		goto done;
	if (near) {
		err = pg_buf_printf(&hint, "did you mean '%s'?", near);
	} else {
		err = pg_buf_puts(&hint, "expected one of: ");
		for (i = 0; i < n && err == 0; i++)
			err = pg_buf_printf(&hint, "%s%s", i ? ", " : "", names[i]);
	}
	if (err == 0)
		pg_yaml_problem_at(r, key, "unknown %s %s %s (%s)", what, name.ptr, where.ptr,
				   hint.ptr);
done:
	if (err < 0)
		pg_yaml_fail(r, err);
	pg_buf_release(&name);
	pg_buf_release(&where);
	pg_buf_release(&hint);
}

/* A key must be a name: a scalar, not null, not empty. */
static bool key_ok(pg_yaml_reader *r, const pg_yaml_node *k, const char *path)
{
	pg_buf found = PG_BUF_INIT;
	int err;

	if (k->type == PG_YAML_SCALAR && !pg_yaml_is_null(k) && k->len)
		return true;
	if ((err = describe(&found, k, false)) < 0)
		pg_yaml_fail(r, err);
	else if (*path)
		pg_yaml_problem_at(r, k, "keys in '%s' are names, not %s", path, found.ptr);
	else
		pg_yaml_problem_at(r, k, "keys at the top level are names, not %s", found.ptr);
	pg_buf_release(&found);
	return false;
}

static void duplicate(pg_yaml_reader *r, const pg_yaml_node *k, const char *path,
		      const pg_yaml_node *first)
{
	pg_buf name = PG_BUF_INIT, where = PG_BUF_INIT;
	int err;

	if ((err = pg_yaml_quote(&name, k->value)) < 0 || (err = place(&where, path)) < 0)
		pg_yaml_fail(r, err);
	else
		pg_yaml_problem_at(r, k, "duplicate key %s %s (first at %u:%u)", name.ptr,
				   where.ptr, first->mark.line, first->mark.column);
	pg_buf_release(&name);
	pg_buf_release(&where);
}

/* "path.key" (key made printable), or "key" at the top level; NULL after recording ENOMEM. */
static char *join(pg_yaml_reader *r, const char *path, const char *key)
{
	pg_buf b = PG_BUF_INIT;
	int err = 0;

	if (*path)
		err = pg_buf_printf(&b, "%s.", path);
	if (err < 0 || (err = pg_sanitize_terminal(&b, key, strlen(key), PG_SANITIZE_ONELINE)) < 0) {
		pg_yaml_fail(r, err);
		pg_buf_release(&b);
		return NULL;
	}
	return pg_buf_detach(&b);
}

static char *index_path(pg_yaml_reader *r, const char *path, size_t i)
{
	pg_buf b = PG_BUF_INIT;
	int err;

	if ((err = pg_buf_printf(&b, "%s[%zu]", path, i)) < 0) {
		pg_yaml_fail(r, err);
		pg_buf_release(&b);
		return NULL;
	}
	return pg_buf_detach(&b);
}

void pg_yaml_either(pg_yaml_reader *r, const pg_yaml_node *map, const char *path,
		    const char *a, const char *b)
{
	if (pg_yaml_map_get(map, a) && pg_yaml_map_get(map, b))
		pg_yaml_problem_at(r, map, "'%s' wants either '%s' or '%s', not both", path, a, b);
}

char *pg_yaml_path(pg_yaml_reader *r, const char *s)
{
	pg_buf full = PG_BUF_INIT;
	int err;

	if (s[0] == '/' || !r->basedir)
		err = pg_buf_puts(&full, s);
	else
		err = pg_buf_printf(&full, "%s/%s", r->basedir, s);
	if (err < 0) {
		pg_yaml_fail(r, err);
		pg_buf_release(&full);
		return NULL;
	}
	return pg_buf_detach(&full);
}

/* --- scalars ------------------------------------------------------------ */

static size_t characters(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

const char *pg_yaml_string(pg_yaml_reader *r, const pg_yaml_node *v, const char *path,
			   const pg_yaml_field *f)
{
	const char *wants = f->wants ? f->wants : "a string", *reason;
	unsigned long long most = f->max ? f->max : PG_YAML_STRING_MAX;
	pg_buf found = PG_BUF_INIT;
	int err;

	if (v->type != PG_YAML_SCALAR || pg_yaml_is_null(v) || !v->len) {
		wrong(r, v, path, wants, f->secret);
		return NULL;
	}
	if (v->len > most) {
		pg_yaml_problem_at(r, v, "'%s' is %zu bytes long: expected at most %llu", path,
				   v->len, most);
		return NULL;
	}
	/* escapes in quoted scalars can still make C0, DEL and C1 controls */
	if (pg_str_has_control(v->value)) {
		wrong(r, v, path, "text without control characters", f->secret);
		return NULL;
	}
	if (f->min && characters(v->value) < f->min) {
		pg_yaml_problem_at(r, v, "'%s' wants at least %llu characters", path, f->min);
		return NULL;
	}
	if (!f->why || !(reason = f->why(v->value)))
		return v->value;
	if (f->secret)
		pg_yaml_problem_at(r, v, "'%s' wants %s: expected %s", path, wants, reason);
	else if ((err = pg_yaml_quote(&found, v->value)) < 0)
		pg_yaml_fail(r, err);
	else
		pg_yaml_problem_at(r, v, "'%s' wants %s, not %s: expected %s", path, wants,
				   found.ptr, reason);
	pg_buf_release(&found);
	return NULL;
}

static bool want_uint(pg_yaml_reader *r, const pg_yaml_node *v, const char *path,
		      unsigned long long min, unsigned long long max, unsigned long long *out)
{
	const char *s = v->value;
	unsigned long long n = 0;
	bool over = false;
	size_t i;

	if (v->type != PG_YAML_SCALAR || !v->plain || !v->len) {
		wrong(r, v, path, "a non-negative integer", false);
		return false;
	}
	for (i = 0; i < v->len; i++) {
		unsigned digit = (unsigned)(s[i] - '0');

		if (s[i] < '0' || s[i] > '9') {
			wrong(r, v, path, "a non-negative integer", false);
			return false;
		}
		if (n > (ULLONG_MAX - digit) / 10)
			over = true;
		else
			n = n * 10 + digit;
	}
	if (s[0] == '0' && v->len > 1) {
		wrong(r, v, path, "a decimal integer without leading zeros", false);
		return false;
	}
	if (over || n > max) {
		pg_yaml_problem_at(r, v, "'%s' wants at most %llu, not %s", path, max, s);
		return false;
	}
	if (n < min) {
		pg_yaml_problem_at(r, v, "'%s' wants at least %llu, not %s", path, min, s);
		return false;
	}
	*out = n;
	return true;
}

static bool want_bool(pg_yaml_reader *r, const pg_yaml_node *v, const char *path, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE" };
	static const char *const no[] = { "false", "False", "FALSE" };
	size_t i;

	if (v->type == PG_YAML_SCALAR && v->plain) {
		for (i = 0; i < PG_ARRAY_SIZE(yes); i++) {
			if (!strcmp(v->value, yes[i]) || !strcmp(v->value, no[i])) {
				*out = !strcmp(v->value, yes[i]);
				return true;
			}
		}
	}
	wrong(r, v, path, "true or false", false);
	return false;
}

static void free_string(char *s, bool secret)
{
	if (secret)
		pg_free_secret(s);
	else
		free(s);
}

static void set_string(pg_yaml_reader *r, char **slot, const pg_yaml_node *v, const char *path,
		       const pg_yaml_field *f)
{
	const char *s = pg_yaml_string(r, v, path, f);
	char *copy;

	if (!s)
		return;
	copy = f->kind == PG_FIELD_PATH ? pg_yaml_path(r, s) : pg_strdup(s);
	if (!copy) {
		pg_yaml_fail(r, PG_ENOMEM);
		return;
	}
	free_string(*slot, f->secret);
	*slot = copy;
}

/* --- lists and mappings -------------------------------------------------- */

static void read_table(pg_yaml_reader *r, void *base, const pg_yaml_node *map, const char *path,
		       const pg_yaml_table *t, const char *wants);

/*
 * Make room for v->n more items of size bytes in the array at arrayp
 * counted by *count, once for the whole list.  Its allocation is not kept
 * beside it, so the count stands for it: growing from there is still right.
 */
static bool grow(pg_yaml_reader *r, void *arrayp, size_t *count, size_t more, size_t size)
{
	size_t alloc = *count;
	int err;

	if (more && (err = pg_array_grow(arrayp, &alloc, *count + more, size)) < 0) {
		pg_yaml_fail(r, err);
		return false;
	}
	return true;
}

/* The next item of an array grown by grow(), zeroed and counted. */
static void *next_item(void *arrayp, size_t *count, size_t size)
{
	char *array;
	void *item;

	memcpy(&array, arrayp, sizeof(array));
	item = array + *count * size;
	memset(item, 0, size);
	(*count)++;
	return item;
}

/* What a list or a mapping of names is, for messages. */
static const char *whole(const pg_yaml_field *f)
{
	if (f->list_wants)
		return f->list_wants;
	if (f->kind == PG_FIELD_STRINGS)
		return "a list of strings";
	if (f->kind == PG_FIELD_MAPS)
		return "a list of mappings";
	return f->kind == PG_FIELD_NAMES ? "a mapping" : f->wants ? f->wants : "a value";
}

static bool list_ok(pg_yaml_reader *r, const pg_yaml_node *v, const char *path,
		    const pg_yaml_field *f, pg_yaml_type type)
{
	if (v->type != type) {
		wrong(r, v, path, whole(f), false);
		return false;
	}
	if (f->max && v->n > f->max) {
		pg_yaml_problem_at(r, v, "'%s' has %zu entries: expected at most %llu", path, v->n,
				   f->max);
		return false;
	}
	return true;
}

static void read_strings(pg_yaml_reader *r, void *base, const pg_yaml_node *v, const char *path,
			 const pg_yaml_field *f)
{
	char ***list = (char ***)((char *)base + f->offset);
	size_t *count = (size_t *)((char *)base + f->count);
	size_t i;

	if (v->type != PG_YAML_LIST) {
		wrong(r, v, path, whole(f), false);
		return;
	}
	if (!grow(r, list, count, v->n, sizeof(**list)))
		return;
	for (i = 0; i < v->n && !pg_yaml_stopped(r); i++) {
		char *sub = index_path(r, path, i), *copy;
		const char *s;

		if (!sub)
			return;
		if ((s = pg_yaml_string(r, v->items[i], sub, f))) {
			if ((copy = pg_strdup(s)))
				(*list)[(*count)++] = copy;
			else
				pg_yaml_fail(r, PG_ENOMEM);
		}
		free(sub);
	}
}

static void read_maps(pg_yaml_reader *r, void *base, const pg_yaml_node *v, const char *path,
		      const pg_yaml_field *f)
{
	void *array = (char *)base + f->offset;
	size_t *count = (size_t *)((char *)base + f->count);
	size_t i;

	if (!list_ok(r, v, path, f, PG_YAML_LIST) || !grow(r, array, count, v->n, f->size))
		return;
	for (i = 0; i < v->n && !pg_yaml_stopped(r); i++) {
		char *sub = index_path(r, path, i);

		if (!sub)
			return;
		read_table(r, next_item(array, count, f->size), v->items[i], sub, f->sub, f->wants);
		free(sub);
	}
}

static void read_names(pg_yaml_reader *r, void *base, const pg_yaml_node *v, const char *path,
		       const pg_yaml_field *f)
{
	pg_map seen = PG_MAP_INIT;
	size_t *count = f->size ? (size_t *)((char *)base + f->count) : NULL;
	void *array = (char *)base + f->offset;
	size_t i;
	int err;

	if (!list_ok(r, v, path, f, PG_YAML_MAP) ||
	    (count && !grow(r, array, count, v->n, f->size)))
		return;
	for (i = 0; i < v->n && !pg_yaml_stopped(r); i++) {
		const pg_yaml_node *k = v->keys[i], *first;
		char *sub;

		if (!key_ok(r, k, path))
			continue;
		if ((first = pg_map_get(&seen, k->value, k->len))) {
			duplicate(r, k, path, first);
			continue;
		}
		if ((err = pg_map_set(&seen, k->value, k->len, (void *)k)) < 0) {
			pg_yaml_fail(r, err);
			break;
		}
		if (!(sub = join(r, path, k->value)))
			break;
		f->entry(r, count ? next_item(array, count, f->size) : base, k, v->items[i], path,
			 sub);
		free(sub);
	}
	pg_map_release(&seen);
}

void pg_yaml_read_value(pg_yaml_reader *r, void *base, const pg_yaml_node *v, const char *path,
			const pg_yaml_field *f)
{
	void *member = (char *)base + f->offset;
	unsigned long long n;

	switch (f->kind) {
	case PG_FIELD_STRING:
	case PG_FIELD_PATH:
		set_string(r, member, v, path, f);
		break;
	case PG_FIELD_BOOL:
		want_bool(r, v, path, member);
		break;
	case PG_FIELD_UINT:
		if (want_uint(r, v, path, f->min, f->max ? f->max : UINT_MAX, &n))
			*(unsigned *)member = (unsigned)n;
		break;
	case PG_FIELD_SIZE:
		if (want_uint(r, v, path, f->min, f->max ? f->max : SIZE_MAX, &n))
			*(size_t *)member = (size_t)n;
		break;
	case PG_FIELD_STRINGS:
		read_strings(r, base, v, path, f);
		break;
	case PG_FIELD_MAP:
		read_table(r, member, v, path, f->sub, f->wants);
		break;
	case PG_FIELD_MAPS:
		read_maps(r, base, v, path, f);
		break;
	case PG_FIELD_NAMES:
		read_names(r, base, v, path, f);
		break;
	case PG_FIELD_CUSTOM:
		f->read(r, base, v, path, f);
		break;
	}
}

/* The mapping's place and name for "... has no 'key'". */
static void missing(pg_yaml_reader *r, const pg_yaml_node *map, const char *path,
		    const pg_yaml_field *f)
{
	const char *wants = whole(f);

	if (*path)
		pg_yaml_problem_at(r, map, "'%s' has no '%s': expected %s", path, f->key, wants);
	else
		pg_yaml_problem_at(r, map, "%s has no '%s': expected %s", r->what, f->key, wants);
}

static void read_table(pg_yaml_reader *r, void *base, const pg_yaml_node *map, const char *path,
		       const pg_yaml_table *t, const char *wants)
{
	const pg_yaml_node *seen[PG_YAML_MAX_FIELDS] = { NULL };
	const char *names[PG_YAML_MAX_FIELDS];
	size_t i, j;

	if (t->n > PG_YAML_MAX_FIELDS) {
		pg_yaml_fail(r, pg_error_set(PG_ERROR, "a table of %zu fields: at most %d",
					     t->n, PG_YAML_MAX_FIELDS));
		return;
	}
	if (map->type != PG_YAML_MAP) {
		wrong(r, map, path, wants ? wants : "a mapping", false);
		return;
	}
	/* the mapping starts before its keys: missing keys first keeps document order */
	for (j = 0; j < t->n && !pg_yaml_stopped(r); j++) {
		names[j] = t->fields[j].key;
		if (t->fields[j].required && !pg_yaml_map_get(map, t->fields[j].key))
			missing(r, map, path, &t->fields[j]);
	}
	for (i = 0; i < map->n && !pg_yaml_stopped(r); i++) {
		const pg_yaml_node *k = map->keys[i];
		char *sub;

		if (!key_ok(r, k, path))
			continue;
		for (j = 0; j < t->n && strcmp(t->fields[j].key, k->value); j++)
			;
		if (j == t->n) {
			pg_yaml_unknown(r, k, "key", path, names, t->n);
		} else if (seen[j]) {
			duplicate(r, k, path, seen[j]);
		} else {
			seen[j] = k;
			if (!(sub = join(r, path, t->fields[j].key)))
				return;
			pg_yaml_read_value(r, base, map->items[i], sub, &t->fields[j]);
			free(sub);
		}
	}
	if (t->check && !pg_yaml_stopped(r))
		t->check(r, base, map, path);
}

int pg_yaml_read(pg_yaml_problems *pr, void *base, const pg_yaml_doc *doc, const char *text,
		 size_t len, const char *basedir, void *ctx)
{
	pg_yaml_reader r = { pr, basedir, ctx, doc->what, 0 };
	pg_yaml_node *root = NULL;
	pg_yaml_mark where;
	pg_buf found = PG_BUF_INIT;
	int err;

	if ((err = pg_yaml_parse(&root, &where, text, len)) == PG_EINVALID)
		return pg_yaml_problems_add(pr, where, pg_error_last());
	if (err < 0)
		return err;
	if (!root) {
		if (!doc->may_be_empty)
			problem_start(&r, "%s is empty: expected %s", doc->what, doc->wants);
	} else if (pg_yaml_is_null(root)) {
		if (!doc->may_be_empty)
			pg_yaml_problem_at(&r, root, "%s is empty: expected %s", doc->what,
					   doc->wants);
	} else if (root->type != PG_YAML_MAP) {
		if ((err = describe(&found, root, false)) < 0)
			pg_yaml_fail(&r, err);
		else
			pg_yaml_problem_at(&r, root, "%s wants %s at the top level, not %s",
					   doc->what, doc->wants, found.ptr);
	} else {
		read_table(&r, base, root, "", doc->root, NULL);
	}
	pg_buf_release(&found);
	pg_yaml_free(root);
	return r.err;
}

int pg_yaml_load(void *base, const pg_yaml_doc *doc, const char *text, size_t len,
		 const char *name, const char *basedir, void *ctx)
{
	pg_yaml_problems pr = PG_YAML_PROBLEMS_INIT(1);
	int err;

	if ((err = pg_yaml_read(&pr, base, doc, text, len, basedir, ctx)) == 0 && pr.n)
		err = pg_yaml_problems_error(&pr, name);
	pg_yaml_problems_release(&pr);
	return err;
}
