/* test_yaml_tree.c - unit tests for the YAML tree: shape, places, refusals. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "common/yaml_tree.h"

static pg_yaml_node *parse(const char *text)
{
	pg_yaml_node *root = NULL;
	pg_yaml_mark where;

	if (pg_yaml_parse(&root, &where, text, strlen(text)) < 0)
		fail_msg("%u:%u: %s", where.line, where.column, pg_error_last());
	return root;
}

static void refused(const char *text, size_t len, unsigned line, unsigned column,
		    const char *msg)
{
	pg_yaml_node *root = (pg_yaml_node *)&root;
	pg_yaml_mark where;

	assert_int_equal(pg_yaml_parse(&root, &where, text, len), PG_EINVALID);
	assert_null(root);
	assert_int_equal(where.line, line);
	assert_int_equal(where.column, column);
	assert_string_equal(pg_error_last(), msg);
}

static void test_shape_and_marks(void **state)
{
	pg_yaml_node *root = parse("a: 1\nb:\n  - x\n  - 'y z'\n  - {c: ~}\na: 2\n");
	const pg_yaml_node *b, *c;

	(void)state;
	assert_non_null(root);
	assert_int_equal(root->type, PG_YAML_MAP);
	/* duplicates are kept, in order: the consumer decides */
	assert_int_equal(root->n, 3);
	assert_string_equal(root->keys[2]->value, "a");
	assert_string_equal(root->items[2]->value, "2");
	assert_string_equal(pg_yaml_map_get(root, "a")->value, "1");
	assert_null(pg_yaml_map_get(root, "zz"));

	b = pg_yaml_map_get(root, "b");
	assert_int_equal(b->type, PG_YAML_LIST);
	assert_int_equal(b->n, 3);
	assert_int_equal(b->mark.line, 3);
	assert_int_equal(b->mark.column, 3);
	assert_true(b->items[0]->plain);
	assert_false(b->items[1]->plain);
	assert_string_equal(b->items[1]->value, "y z");
	assert_int_equal(b->items[1]->mark.line, 4);
	assert_int_equal(b->items[1]->mark.column, 5);
	c = pg_yaml_map_get(b->items[2], "c");
	assert_non_null(c);
	assert_true(pg_yaml_is_null(c));
	assert_false(pg_yaml_is_null(b->items[1]));
	assert_null(pg_yaml_map_get(b, "c"));
	pg_yaml_free(root);
}

static void test_nulls(void **state)
{
	static const char *const nulls[] = { "a:\n", "a: ~\n", "a: null\n", "a: NULL\n" };
	size_t i;

	(void)state;
	for (i = 0; i < PG_ARRAY_SIZE(nulls); i++) {
		pg_yaml_node *root = parse(nulls[i]);

		assert_true(pg_yaml_is_null(root->items[0]));
		pg_yaml_free(root);
	}
	{
		pg_yaml_node *root = parse("a: ''\nb: 'null'\n");

		assert_false(pg_yaml_is_null(root->items[0]));
		assert_false(pg_yaml_is_null(root->items[1]));
		pg_yaml_free(root);
	}
	/* no document at all */
	assert_null(parse(""));
	assert_null(parse("# only a comment\n"));
}

static void test_refusals(void **state)
{
	(void)state;
	refused("a: &x 1\n", 8, 1, 4, "an anchor (&): anchors and aliases are not allowed");
	refused("a: *x\n", 6, 1, 4, "an alias (*): anchors and aliases are not allowed");
	refused("a: !!int 1\n", 11, 1, 4, "an explicit tag (!): tags are not allowed");
	refused("a: !t {}\n", 9, 1, 4, "an explicit tag (!): tags are not allowed");
	refused("a: 1\n--- b\n", 11, 2, 1, "a second document: expected only one");
	refused("a: b\0c\n", 7, 1, 5, "NUL byte: expected UTF-8 text");
	refused("a: \xE6\x97\n", 6, 1, 4, "invalid UTF-8 (byte 0xE6): expected UTF-8 text");
	refused("a: \xC0\xAF\n", 6, 1, 4, "invalid UTF-8 (byte 0xC0): expected UTF-8 text");
	refused("a: \"\\0\"\n", 8, 1, 4, "an escape in this scalar makes a NUL: expected UTF-8 text");
	refused("a: \"\\uD800\"\n", 12, 1, 7, "invalid YAML: found invalid Unicode character "
		"escape code (while parsing a quoted scalar at 1:4)");
	refused("a:\r\n  b: \x7f\r\n", 13, 2, 6, "control character U+007F: expected printable text");
	refused("a: [b\n", 6, 2, 1, "invalid YAML: did not find expected ',' or ']' "
		"(while parsing a flow sequence at 1:4)");
}

static void test_locate(void **state)
{
	static const char text[] = "ab\n\xC3\xA9x\r\ny\rz";
	pg_yaml_mark m;

	(void)state;
	m = pg_yaml_locate(text, sizeof(text) - 1, 0);
	assert_int_equal(m.line, 1);
	assert_int_equal(m.column, 1);
	m = pg_yaml_locate(text, sizeof(text) - 1, 5); /* the x after a 2-byte é */
	assert_int_equal(m.line, 2);
	assert_int_equal(m.column, 2);
	m = pg_yaml_locate(text, sizeof(text) - 1, 8); /* y, after CR LF */
	assert_int_equal(m.line, 3);
	assert_int_equal(m.column, 1);
	m = pg_yaml_locate(text, sizeof(text) - 1, 10); /* z, after a lone CR */
	assert_int_equal(m.line, 4);
	assert_int_equal(m.column, 1);
	m = pg_yaml_locate(text, sizeof(text) - 1, 1000);
	assert_int_equal(m.line, 4);
	assert_int_equal(m.column, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shape_and_marks),
		cmocka_unit_test(test_nulls),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_locate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
