/* yaml_tree.h - one YAML document as a small tree with positions (libyaml inside). */
#ifndef PG_YAML_TREE_H
#define PG_YAML_TREE_H

#include "common/compat.h"

/*
 * Everything fed to pg_yaml_parse is treated as hostile.  The reader
 * refuses, with PG_EINVALID and the place of the problem:
 *   - NUL bytes, control characters other than tab/LF/CR, invalid UTF-8
 *     (so UTF-16 and UTF-32 input too), anywhere in the text;
 *   - anchors and aliases (no billion laughs), explicit tags (!!str),
 *     a second document;
 *   - nesting deeper than PG_YAML_MAX_DEPTH, more than PG_YAML_MAX_NODES
 *     nodes, a scalar longer than PG_YAML_MAX_SCALAR bytes, or a scalar
 *     whose escapes produce a NUL or invalid UTF-8;
 *   - anything libyaml calls malformed.
 * Mapping keys may be any node and are kept in document order, duplicates
 * included: the consumer decides what a duplicate means.
 */
#define PG_YAML_MAX_DEPTH 64
#define PG_YAML_MAX_NODES 100000
#define PG_YAML_MAX_SCALAR 65536

typedef enum pg_yaml_type {
	PG_YAML_SCALAR,
	PG_YAML_LIST,
	PG_YAML_MAP,
} pg_yaml_type;

/* A place in the text: 1-based line, 1-based column counted in characters. */
typedef struct pg_yaml_mark {
	unsigned line;
	unsigned column;
} pg_yaml_mark;

typedef struct pg_yaml_node pg_yaml_node;
struct pg_yaml_node {
	pg_yaml_type type;
	pg_yaml_mark mark;    /* where the node starts */
	/* PG_YAML_SCALAR */
	char *value;          /* NUL-terminated, valid UTF-8, no NUL inside */
	size_t len;
	bool plain;           /* unquoted flow scalar: may mean null, a bool, a number */
	/* PG_YAML_LIST: items[0..n); PG_YAML_MAP: keys[i] maps to items[i] */
	pg_yaml_node **keys;
	pg_yaml_node **items;
	size_t n;
	size_t alloc;
};

/*
 * Parse text[0..len) (need not be NUL-terminated).  On 0, *out is the
 * document's root (free with pg_yaml_free), or NULL when the text holds
 * no document at all (empty, or only comments).  On PG_EINVALID, *where is
 * the place of the problem and pg_error_last() says what was expected,
 * without the place.  PG_ENOMEM when memory runs out.
 */
int pg_yaml_parse(pg_yaml_node **out, pg_yaml_mark *where, const char *text, size_t len);

/*
 * pg_yaml_parse with scalars of up to max_scalar bytes instead of
 * PG_YAML_MAX_SCALAR: for a document whose format holds one long text (a
 * push record's log of commits), read under a cap its caller sets.
 */
int pg_yaml_parse_max(pg_yaml_node **out, pg_yaml_mark *where, const char *text, size_t len,
		      size_t max_scalar);

void pg_yaml_free(pg_yaml_node *node);

/* A plain empty, ~ or null scalar (YAML's null). */
bool pg_yaml_is_null(const pg_yaml_node *node);

/* The value of the first key equal to key in a mapping, or NULL. Borrowed. */
const pg_yaml_node *pg_yaml_map_get(const pg_yaml_node *map, const char *key);

/* The place of byte offset in text, counted as pg_yaml_mark counts. */
pg_yaml_mark pg_yaml_locate(const char *text, size_t len, size_t offset);

#endif
