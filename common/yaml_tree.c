/* yaml_tree.c - libyaml events to a capped tree, refusing what no pullgate input needs. */
#include "common/yaml_tree.h"
#include "common/array.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/sanitize.h"

#include <limits.h>
#include <yaml.h>

typedef struct builder {
	pg_yaml_node *root;
	pg_yaml_node *stack[PG_YAML_MAX_DEPTH];
	size_t depth;
	size_t nodes;
	unsigned documents;
	size_t max_scalar;
} builder;

static unsigned one_based(size_t v)
{
	return v >= UINT_MAX - 1 ? UINT_MAX : (unsigned)v + 1;
}

static pg_yaml_mark from_libyaml(yaml_mark_t m)
{
	pg_yaml_mark where = { one_based(m.line), one_based(m.column) };

	return where;
}

pg_yaml_mark pg_yaml_locate(const char *text, size_t len, size_t offset)
{
	pg_yaml_mark where = { 1, 1 };
	size_t i;

	if (offset > len)
		offset = len;
	for (i = 0; i < offset; i++) {
		unsigned char c = (unsigned char)text[i];

		/* libyaml ends a line at LF, CR LF or a lone CR */
		if (c == '\n' || (c == '\r' && (i + 1 >= len || text[i + 1] != '\n'))) {
			if (where.line < UINT_MAX)
				where.line++;
			where.column = 1;
		} else if ((c & 0xC0) != 0x80 && c != '\r' && where.column < UINT_MAX) {
			where.column++; /* continuation bytes belong to the character before */
		}
	}
	return where;
}

/*
 * libyaml would take a BOM as a cue to read UTF-16 and reports bad bytes
 * by offset only; checking first gives every such problem a line and a
 * column, and keeps NULs and terminal controls out of the values.
 */
static int check_text(pg_yaml_mark *where, const char *text, size_t len)
{
	size_t i = 0, n;
	uint32_t cp;

	while (i < len) {
		unsigned char c = (unsigned char)text[i];

		if (c < 0x80) {
			n = 1;
			cp = c;
		} else if (!(n = pg_utf8_decode((const unsigned char *)text + i, len - i, &cp))) {
			*where = pg_yaml_locate(text, len, i);
			return pg_error_set(PG_EINVALID, "invalid UTF-8 (byte 0x%02X): expected UTF-8 text",
					    c);
		}
		if (cp == 0) {
			*where = pg_yaml_locate(text, len, i);
			return pg_error_set(PG_EINVALID, "NUL byte: expected UTF-8 text");
		}
		if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') ||
		    (cp >= 0x7F && cp <= 0x9F)) {
			*where = pg_yaml_locate(text, len, i);
			return pg_error_set(PG_EINVALID, "control character U+%04X: expected "
					    "printable text", (unsigned)cp);
		}
		i += n;
	}
	return 0;
}

static int check_scalar(const yaml_event_t *ev, size_t max)
{
	const unsigned char *v = ev->data.scalar.value;
	size_t len = ev->data.scalar.length, i = 0, n;
	uint32_t cp;

	if (len > max)
		return pg_error_set(PG_EINVALID, "a scalar of %zu bytes: expected at most %zu",
				    len, max);
	/* escapes in quoted scalars ("\0", "\uD800") can make what the text could not */
	while (i < len) {
		if (!(n = pg_utf8_decode(v + i, len - i, &cp)) || cp == 0)
			return pg_error_set(PG_EINVALID, "an escape in this scalar makes %s: "
					    "expected UTF-8 text", n ? "a NUL" : "invalid UTF-8");
		i += n;
	}
	return 0;
}

void pg_yaml_free(pg_yaml_node *node)
{
	size_t i;

	if (!node)
		return;
	for (i = 0; i < node->alloc; i++) {
		if (node->keys)
			pg_yaml_free(node->keys[i]);
		if (node->items)
			pg_yaml_free(node->items[i]);
	}
	free(node->keys);
	free(node->items);
	free(node->value);
	free(node);
}

/*
 * items and keys share one allocation count: items grows first, then keys
 * to the same size, and alloc moves only when both have, so that
 * pg_yaml_free never reads past either.
 */
static int grow(pg_yaml_node *node, size_t want)
{
	size_t old = node->alloc, items_alloc = old, keys_alloc = old;
	int err;

	if ((err = PG_ARRAY_GROW(node->items, want, items_alloc)) < 0)
		return err;
	memset(node->items + old, 0, (items_alloc - old) * sizeof(*node->items));
	if (node->type == PG_YAML_MAP) {
		if ((err = PG_ARRAY_GROW(node->keys, items_alloc, keys_alloc)) < 0)
			return err;
		memset(node->keys + old, 0, (keys_alloc - old) * sizeof(*node->keys));
	}
	node->alloc = items_alloc;
	return 0;
}

/* A map holds its pending key in keys[n] until the value arrives. */
static int add_child(pg_yaml_node *parent, pg_yaml_node *child)
{
	int err;

	if ((err = grow(parent, parent->n + 2)) < 0)
		return err;
	if (parent->type == PG_YAML_LIST) {
		parent->items[parent->n++] = child;
	} else if (!parent->keys[parent->n]) {
		parent->keys[parent->n] = child;
	} else {
		parent->items[parent->n++] = child;
	}
	return 0;
}

static int add_node(builder *b, pg_yaml_node **out, pg_yaml_type type, const yaml_event_t *ev)
{
	pg_yaml_node *node;
	int err;

	*out = NULL;
	if (b->nodes >= PG_YAML_MAX_NODES)
		return pg_error_set(PG_EINVALID, "more than %d nodes: expected a smaller document",
				    PG_YAML_MAX_NODES);
	if (!(node = calloc(1, sizeof(*node))))
		return pg_error_oom();
	node->type = type;
	node->mark = from_libyaml(ev->start_mark);
	if (type == PG_YAML_SCALAR) {
		node->len = ev->data.scalar.length;
		node->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
		if (!(node->value = pg_strndup((const char *)ev->data.scalar.value, node->len))) {
			free(node);
			return PG_ENOMEM;
		}
	}
	if (b->depth == 0) {
		b->root = node;
	} else if ((err = add_child(b->stack[b->depth - 1], node)) < 0) {
		pg_yaml_free(node);
		return err;
	}
	b->nodes++;
	*out = node;
	return 0;
}

static int refuse_decorations(const yaml_char_t *anchor, const yaml_char_t *tag)
{
	if (anchor)
		return pg_error_set(PG_EINVALID, "an anchor (&): anchors and aliases are not allowed");
	if (tag)
		return pg_error_set(PG_EINVALID, "an explicit tag (!): tags are not allowed");
	return 0;
}

static int on_event(builder *b, const yaml_event_t *ev)
{
	pg_yaml_node *node;
	int err;

	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (b->documents++)
			return pg_error_set(PG_EINVALID, "a second document: expected only one");
		return 0;
	case YAML_ALIAS_EVENT:
		return pg_error_set(PG_EINVALID, "an alias (*): anchors and aliases are not allowed");
	case YAML_SCALAR_EVENT:
		if ((err = refuse_decorations(ev->data.scalar.anchor, ev->data.scalar.tag)) < 0 ||
		    (err = check_scalar(ev, b->max_scalar)) < 0)
			return err;
		return add_node(b, &node, PG_YAML_SCALAR, ev);
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		err = ev->type == YAML_SEQUENCE_START_EVENT ?
			refuse_decorations(ev->data.sequence_start.anchor, ev->data.sequence_start.tag) :
			refuse_decorations(ev->data.mapping_start.anchor, ev->data.mapping_start.tag);
		if (err < 0)
			return err;
		if (b->depth >= PG_YAML_MAX_DEPTH)
			return pg_error_set(PG_EINVALID, "nesting deeper than %d levels",
					    PG_YAML_MAX_DEPTH);
		if ((err = add_node(b, &node, ev->type == YAML_SEQUENCE_START_EVENT ?
				    PG_YAML_LIST : PG_YAML_MAP, ev)) < 0)
			return err;
		b->stack[b->depth++] = node;
		return 0;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (b->depth)
			b->depth--;
		return 0;
	default:
		return 0;
	}
}

/* Convert libyaml's error into ours; foreign codes stop here. */
static int parser_error(pg_yaml_mark *where, const yaml_parser_t *parser, const char *text,
			size_t len)
{
	const char *problem = parser->problem ? parser->problem : "unreadable YAML";

	switch (parser->error) {
	case YAML_MEMORY_ERROR:
		return pg_error_oom();
	case YAML_READER_ERROR:
		*where = pg_yaml_locate(text, len, parser->problem_offset);
		return pg_error_set(PG_EINVALID, "invalid YAML: %s", problem);
	default:
		*where = from_libyaml(parser->problem_mark);
		if (parser->context) {
			pg_yaml_mark ctx = from_libyaml(parser->context_mark);

			return pg_error_set(PG_EINVALID, "invalid YAML: %s (%s at %u:%u)", problem,
					    parser->context, ctx.line, ctx.column);
		}
		return pg_error_set(PG_EINVALID, "invalid YAML: %s", problem);
	}
}

int pg_yaml_parse(pg_yaml_node **out, pg_yaml_mark *where, const char *text, size_t len)
{
	return pg_yaml_parse_max(out, where, text, len, PG_YAML_MAX_SCALAR);
}

int pg_yaml_parse_max(pg_yaml_node **out, pg_yaml_mark *where, const char *text, size_t len,
		      size_t max_scalar)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	builder b;
	bool done = false;
	int err;

	*out = NULL;
	where->line = where->column = 0;
	if ((err = check_text(where, text, len)) < 0)
		return err;
	memset(&b, 0, sizeof(b));
	b.max_scalar = max_scalar;
	if (!yaml_parser_initialize(&parser))
		return pg_error_oom();
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
	while (!done) {
		if (!yaml_parser_parse(&parser, &ev)) {
			err = parser_error(where, &parser, text, len);
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		if ((err = on_event(&b, &ev)) < 0)
			*where = from_libyaml(ev.start_mark);
		yaml_event_delete(&ev);
		if (err < 0)
			break;
	}
	yaml_parser_delete(&parser);
	if (err < 0) {
		pg_yaml_free(b.root);
		return err;
	}
	*out = b.root;
	return 0;
}

bool pg_yaml_is_null(const pg_yaml_node *node)
{
	return node->type == PG_YAML_SCALAR && node->plain &&
	       (!node->len || !strcmp(node->value, "~") || !strcmp(node->value, "null") ||
		!strcmp(node->value, "Null") || !strcmp(node->value, "NULL"));
}

const pg_yaml_node *pg_yaml_map_get(const pg_yaml_node *map, const char *key)
{
	size_t i;

	if (map->type != PG_YAML_MAP)
		return NULL;
	for (i = 0; i < map->n; i++)
		if (map->keys[i]->type == PG_YAML_SCALAR && !strcmp(map->keys[i]->value, key))
			return map->items[i];
	return NULL;
}
