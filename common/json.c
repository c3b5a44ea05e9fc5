/* json.c - the JSON writer and reader over jansson. */
#include "common/json.h"
#include "common/error.h"
#include "common/sanitize.h"

#include <jansson.h>
#include <string.h>

/*
 * A pg_json is a json_t under another name: the reader hands out
 * jansson's own values, borrowed from the parsed root, without copies.
 */
static const json_t *value(const pg_json *v)
{
	return (const json_t *)(const void *)v;
}

struct pg_json_writer {
	json_t *open[PG_JSON_MAX_DEPTH];  /* open[0] is the root; puts go to open[depth - 1] */
	size_t depth;
	int err;                          /* the first error; later puts do nothing */
};

static json_t *str(const char *s)
{
	pg_buf b = PG_BUF_INIT;
	json_t *j;

	if (!s)
		return json_null();
	if (pg_sanitize_utf8(&b, s, strlen(s)) < 0)
		return NULL;
	j = json_stringn(b.ptr, b.len);
	pg_buf_release(&b);
	return j;
}

int pg_json_writer_new(pg_json_writer **out)
{
	pg_json_writer *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w || !(w->open[0] = json_object())) {
		free(w);
		return pg_error_oom();
	}
	w->depth = 1;
	*out = w;
	return 0;
}

int pg_json_writer_from(pg_json_writer **out, const char *text, size_t len)
{
	pg_json_writer *w = NULL;
	pg_json *root = NULL;
	int err;

	*out = NULL;
	if ((err = pg_json_parse(&root, text, len)) < 0)
		return err;
	if (!json_is_object(value(root))) {
		pg_json_free(root);
		return pg_error_set(PG_EINVALID, "json: the document is not an object");
	}
	if (!(w = calloc(1, sizeof(*w)))) {
		pg_json_free(root);
		return pg_error_oom();
	}
	w->open[0] = (json_t *)(void *)root;
	w->depth = 1;
	*out = w;
	return 0;
}

void pg_json_writer_free(pg_json_writer *w)
{
	if (!w)
		return;
	json_decref(w->open[0]);
	free(w);
}

/* Put v (whose reference the writer takes) into what is open; false when it did not go in. */
static bool put(pg_json_writer *w, const char *key, json_t *v)
{
	json_t *into = w->open[w->depth - 1];

	if (w->err) {
		json_decref(v);
		return false;
	}
	if (!v) {
		w->err = pg_error_oom();
		return false;
	}
	if (json_is_array(into) != !key) {
		json_decref(v);
		w->err = pg_error_set(PG_EINVALID, "json: '%s' %s", key ? key : "a value",
				      key ? "is a key inside an array" : "needs a key inside an object");
		return false;
	}
	/* the _new setters take the reference even when they fail */
	if ((key ? json_object_set_new(into, key, v) : json_array_append_new(into, v)) < 0) {
		w->err = pg_error_oom();
		return false;
	}
	return true;
}

static void open_container(pg_json_writer *w, const char *key, json_t *v)
{
	if (w->depth == PG_JSON_MAX_DEPTH && !w->err) {
		json_decref(v);
		w->err = pg_error_set(PG_ETOOBIG, "json: nested more than %d deep", PG_JSON_MAX_DEPTH);
		return;
	}
	/* what goes in stays alive, held by its container: keep it open */
	if (put(w, key, v))
		w->open[w->depth++] = v;
}

void pg_json_open_object(pg_json_writer *w, const char *key)
{
	open_container(w, key, json_object());
}

void pg_json_open_array(pg_json_writer *w, const char *key)
{
	open_container(w, key, json_array());
}

void pg_json_close(pg_json_writer *w)
{
	if (w->depth > 1)
		w->depth--;
	else if (!w->err)
		w->err = pg_error_set(PG_EINVALID, "json: closing the root");
}

void pg_json_put_str(pg_json_writer *w, const char *key, const char *s)
{
	put(w, key, str(s));
}

void pg_json_put_int(pg_json_writer *w, const char *key, int64_t v)
{
	put(w, key, json_integer((json_int_t)v));
}

void pg_json_put_real(pg_json_writer *w, const char *key, double v)
{
	put(w, key, json_real(v));
}

void pg_json_put_bool(pg_json_writer *w, const char *key, bool v)
{
	put(w, key, json_boolean(v));
}

void pg_json_put_null(pg_json_writer *w, const char *key)
{
	put(w, key, json_null());
}

void pg_json_put_oid(pg_json_writer *w, const char *key, const pg_oid *id)
{
	char hex[PG_OID_HEXSZ + 1];

	if (!id) {
		put(w, key, json_null());
		return;
	}
	pg_oid_tohex(hex, id);
	put(w, key, json_string(hex));
}

void pg_json_put_text(pg_json_writer *w, const char *key, const char *text)
{
	pg_json *v = NULL;
	int err;

	if (!text) {
		put(w, key, json_null());
		return;
	}
	if (w->err)
		return;
	if ((err = pg_json_parse(&v, text, strlen(text))) < 0) {
		w->err = err;
		return;
	}
	put(w, key, (json_t *)(void *)v);
}

void pg_json_put_value(pg_json_writer *w, const char *key, const pg_json *v)
{
	/* jansson's values are counted: the writer takes a reference of its own */
	put(w, key, v ? json_incref((json_t *)(const void *)v) : json_null());
}

static int dump(const char *buffer, size_t size, void *data)
{
	return pg_buf_put(data, buffer, size) < 0 ? -1 : 0;
}

int pg_json_write(pg_buf *out, const pg_json_writer *w, enum pg_json_style style)
{
	size_t flags = JSON_PRESERVE_ORDER | (style == PG_JSON_COMPACT ? JSON_COMPACT : JSON_INDENT(2));
	size_t len = out->len;

	if (w->err)
		return w->err;
	if (json_dump_callback(w->open[0], dump, out, flags) < 0) {
		pg_buf_truncate(out, len);
		return pg_error_oom();
	}
	return 0;
}


static const pg_json *handle(const json_t *v)
{
	return (const pg_json *)(const void *)v;
}

int pg_json_parse(pg_json **out, const char *text, size_t len)
{
	json_error_t e;
	json_t *v;

	*out = NULL;
	if (!(v = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e))) {
		if (json_error_code(&e) == json_error_out_of_memory)
			return pg_error_oom();
		return pg_error_set(PG_EINVALID, "line %d column %d: %s", e.line, e.column, e.text);
	}
	*out = (pg_json *)(void *)v;
	return 0;
}

void pg_json_free(pg_json *v)
{
	json_decref((json_t *)(void *)v);
}

const pg_json *pg_json_get(const pg_json *v, const char *key)
{
	return v ? handle(json_object_get(value(v), key)) : NULL;
}

const char *pg_json_get_str(const pg_json *v, const char *key)
{
	return json_string_value(value(pg_json_get(v, key)));
}

const char *pg_json_str(const pg_json *v)
{
	return json_string_value(value(v));
}

bool pg_json_get_bool(const pg_json *v, const char *key)
{
	return json_is_true(value(pg_json_get(v, key)));
}

int pg_json_get_int(const pg_json *v, const char *key, int64_t *out)
{
	const json_t *j = value(pg_json_get(v, key));

	if (!json_is_integer(j))
		return PG_ENOTFOUND;
	*out = (int64_t)json_integer_value(j);
	return 0;
}

const pg_json *pg_json_at(const pg_json *v, size_t i)
{
	return v ? handle(json_array_get(value(v), i)) : NULL;
}

size_t pg_json_len(const pg_json *v)
{
	return v ? json_array_size(value(v)) : 0;
}

int64_t pg_json_int(const pg_json *v, int64_t dflt)
{
	return v && json_is_integer(value(v)) ? (int64_t)json_integer_value(value(v)) : dflt;
}

enum pg_json_type pg_json_type(const pg_json *v)
{
	switch (v ? json_typeof(value(v)) : JSON_NULL) {
	case JSON_OBJECT: return PG_JSON_OBJECT;
	case JSON_ARRAY: return PG_JSON_ARRAY;
	case JSON_STRING: return PG_JSON_STRING;
	case JSON_INTEGER: return PG_JSON_INTEGER;
	case JSON_REAL: return PG_JSON_REAL;
	case JSON_TRUE:
	case JSON_FALSE: return PG_JSON_BOOL;
	case JSON_NULL: break;
	}
	return v ? PG_JSON_NULL : PG_JSON_ABSENT;
}

double pg_json_real(const pg_json *v, double dflt)
{
	return v && json_is_number(value(v)) ? json_number_value(value(v)) : dflt;
}
