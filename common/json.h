/* json.h - JSON documents written and read through opaque handles; jansson stays inside json.c. */
#ifndef PG_JSON_H
#define PG_JSON_H

#include "common/buf.h"
#include "common/oid.h"

/*
 * jansson is wrapped here: its values are made, read and freed in json.c
 * and nowhere else.  Strings written are made valid UTF-8 first:
 * much of what pullgate writes is repository text.
 */

/* A parsed value (reading, below).  What the getters return is borrowed from the parsed root. */
typedef struct pg_json pg_json;

/* --- writing ----------------------------------------------------------------------- */

/*
 * A document being written: an object at the root and, inside it, objects
 * and arrays opened and closed in order.  Members keep the order they were
 * put in.  Inside an array, key is NULL.  A put never fails by itself: the
 * writer remembers the first error (out of memory, text that does not
 * parse, a key where none belongs, nesting too deep) and pg_json_write
 * returns it, so a document is written without a check on every line.
 */
typedef struct pg_json_writer pg_json_writer;

#define PG_JSON_MAX_DEPTH 16

/* A writer with an empty object open at the root. */
int pg_json_writer_new(pg_json_writer **out);

/*
 * A writer whose root is the object text holds, open: what is put at the
 * root is added after its members, or takes the place of the member of
 * the same key (where that one was).  PG_EINVALID when text is not a JSON
 * object (duplicate keys refused), PG_ENOMEM.
 */
int pg_json_writer_from(pg_json_writer **out, const char *text, size_t len);
void pg_json_writer_free(pg_json_writer *w);

void pg_json_open_object(pg_json_writer *w, const char *key);
void pg_json_open_array(pg_json_writer *w, const char *key);
void pg_json_close(pg_json_writer *w);

/* s as a string (valid UTF-8 made of any bytes); null for NULL. */
void pg_json_put_str(pg_json_writer *w, const char *key, const char *s);
void pg_json_put_int(pg_json_writer *w, const char *key, int64_t v);
void pg_json_put_real(pg_json_writer *w, const char *key, double v);
void pg_json_put_bool(pg_json_writer *w, const char *key, bool v);
void pg_json_put_null(pg_json_writer *w, const char *key);
/* 40 hex digits; null for NULL. */
void pg_json_put_oid(pg_json_writer *w, const char *key, const pg_oid *id);

/* JSON text (a stored report, say), parsed and put as a value; null for NULL. */
void pg_json_put_text(pg_json_writer *w, const char *key, const char *text);

/*
 * A value already parsed (pg_json_parse, or one of its members) put as it
 * is, not copied: the writer holds it too, and the caller may free its
 * root after; null for NULL.
 */
void pg_json_put_value(pg_json_writer *w, const char *key, const pg_json *v);

enum pg_json_style {
	PG_JSON_COMPACT,     /* one line, no spaces */
	PG_JSON_INDENT,      /* two spaces a level */
};

/*
 * Append the document (whatever is still open is closed) to out: 0, or
 * the first error the writer met, whose message was set then.
 */
int pg_json_write(pg_buf *out, const pg_json_writer *w, enum pg_json_style style);

/* --- reading ----------------------------------------------------------------------- */

enum pg_json_type {
	PG_JSON_ABSENT,      /* no value: a member that is not there, an element past the end */
	PG_JSON_NULL,
	PG_JSON_BOOL,
	PG_JSON_INTEGER,
	PG_JSON_REAL,
	PG_JSON_STRING,
	PG_JSON_ARRAY,
	PG_JSON_OBJECT,
};

/*
 * Parse an object or an array (duplicate keys are refused); *out is the
 * caller's (pg_json_free).  PG_EINVALID "line L column C: what", PG_ENOMEM.
 */
int pg_json_parse(pg_json **out, const char *text, size_t len);
void pg_json_free(pg_json *v);

/* The member key of an object; NULL when v is no object or has no such member. */
const pg_json *pg_json_get(const pg_json *v, const char *key);

/* The member key when it is a string; NULL otherwise. */
const char *pg_json_get_str(const pg_json *v, const char *key);

/* v itself when it is a string (an element of an array); NULL otherwise. */
const char *pg_json_str(const pg_json *v);

/* Whether the member key is true (false when it is absent or no boolean). */
bool pg_json_get_bool(const pg_json *v, const char *key);

/* The member key when it is an integer: 0 and *out set; PG_ENOTFOUND otherwise (no message). */
int pg_json_get_int(const pg_json *v, const char *key, int64_t *out);

/* Element i of an array; NULL past its end or when v is no array. */
const pg_json *pg_json_at(const pg_json *v, size_t i);

/* How many elements an array has; 0 when v is no array. */
size_t pg_json_len(const pg_json *v);

/* v as an integer; dflt when v is NULL or no integer. */
int64_t pg_json_int(const pg_json *v, int64_t dflt);

/* What v is: a reader that must tell null from absent, or a string from a number. */
enum pg_json_type pg_json_type(const pg_json *v);

/* v as a number, an integer or a real; dflt when v is NULL or no number. */
double pg_json_real(const pg_json *v, double dflt);

#endif
