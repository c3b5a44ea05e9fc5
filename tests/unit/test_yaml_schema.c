/* test_yaml_schema.c - unit tests for the typed YAML walker: every kind, both modes, the messages. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "common/str.h"
#include "common/yaml_schema.h"

typedef struct item {
	char *name;
	unsigned weight;
} item;

typedef struct pair {
	char *key;
	char *value;
} pair;

typedef struct toy {
	char *title;
	char *dir;
	char *secret;
	bool on;
	unsigned port;
	size_t big;
	char **tags;
	size_t ntags;
	item *items;
	size_t nitems;
	pair *pairs;
	size_t npairs;
	unsigned inner;
	int custom;
} toy;

static void toy_release(toy *t)
{
	size_t i;

	free(t->title);
	free(t->dir);
	free(t->secret);
	pg_str_list_free(t->tags, t->ntags);
	for (i = 0; i < t->nitems; i++)
		free(t->items[i].name);
	free(t->items);
	for (i = 0; i < t->npairs; i++) {
		free(t->pairs[i].key);
		free(t->pairs[i].value);
	}
	free(t->pairs);
	memset(t, 0, sizeof(*t));
}

static const char *why_lower(const char *s)
{
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			return "lower case only";
	return NULL;
}

static void read_pair(pg_yaml_reader *r, void *base, const pg_yaml_node *key,
		      const pg_yaml_node *v, const char *map_path, const char *path)
{
	static const pg_yaml_field value = { .wants = "a value" };
	pair *p = base;
	const char *s = pg_yaml_string(r, v, path, &value);

	(void)map_path;
	if (s && (!(p->key = pg_strdup(key->value)) || !(p->value = pg_strdup(s))))
		pg_yaml_fail(r, PG_ENOMEM);
}

static void read_custom(pg_yaml_reader *r, void *base, const pg_yaml_node *v, const char *path,
			const pg_yaml_field *f)
{
	(void)f;
	if (v->type == PG_YAML_SCALAR && !strcmp(v->value, "yes"))
		((toy *)base)->custom = 1;
	else
		pg_yaml_wrong(r, v, path, "yes");
}

static void check_item(pg_yaml_reader *r, void *base, const pg_yaml_node *map, const char *path)
{
	item *it = base;

	if (it->name && !strcmp(it->name, "heavy") && it->weight < 10)
		pg_yaml_problem_at(r, map, "'%s' is too light for its name", path);
}

static const pg_yaml_field item_fields[] = {
	{ .key = "name", .kind = PG_FIELD_STRING, .offset = offsetof(item, name),
	  .required = true, .wants = "a name" },
	{ .key = "weight", .kind = PG_FIELD_UINT, .offset = offsetof(item, weight), .min = 1,
	  .max = 100 },
};
static const pg_yaml_table item_table = PG_YAML_TABLE(item_fields, check_item);

static const pg_yaml_field inner_fields[] = {
	{ .key = "n", .kind = PG_FIELD_UINT, .offset = offsetof(toy, inner) },
};
static const pg_yaml_table inner_table = PG_YAML_TABLE(inner_fields, NULL);

static const pg_yaml_field toy_fields[] = {
	{ .key = "title", .kind = PG_FIELD_STRING, .offset = offsetof(toy, title), .max = 10,
	  .why = why_lower, .wants = "a title" },
	{ .key = "dir", .kind = PG_FIELD_PATH, .offset = offsetof(toy, dir) },
	{ .key = "secret", .kind = PG_FIELD_STRING, .offset = offsetof(toy, secret), .min = 8,
	  .secret = true, .why = why_lower, .wants = "a secret" },
	{ .key = "on", .kind = PG_FIELD_BOOL, .offset = offsetof(toy, on) },
	{ .key = "port", .kind = PG_FIELD_UINT, .offset = offsetof(toy, port), .max = 65535 },
	{ .key = "big", .kind = PG_FIELD_SIZE, .offset = offsetof(toy, big) },
	{ .key = "tags", .kind = PG_FIELD_STRINGS, .offset = offsetof(toy, tags),
	  .count = offsetof(toy, ntags), .wants = "a tag", .list_wants = "a list of tags" },
	{ .key = "items", .kind = PG_FIELD_MAPS, .offset = offsetof(toy, items),
	  .count = offsetof(toy, nitems), .size = sizeof(item), .sub = &item_table, .max = 3,
	  .list_wants = "a list of items" },
	{ .key = "pairs", .kind = PG_FIELD_NAMES, .offset = offsetof(toy, pairs),
	  .count = offsetof(toy, npairs), .size = sizeof(pair), .entry = read_pair },
	{ .key = "inner", .kind = PG_FIELD_MAP, .sub = &inner_table },
	{ .key = "custom", .kind = PG_FIELD_CUSTOM, .read = read_custom, .required = true,
	  .wants = "yes" },
};
static const pg_yaml_table toy_table = PG_YAML_TABLE(toy_fields, NULL);
static const pg_yaml_doc toy_doc = { "the toy", "a mapping of toy settings", &toy_table, false };

/* Read text in first-problem mode; the formatted problem, or "" when none. */
static char *first(toy *t, const char *text)
{
	pg_yaml_problems pr = PG_YAML_PROBLEMS_INIT(1);
	pg_buf out = PG_BUF_INIT;

	memset(t, 0, sizeof(*t));
	assert_int_equal(pg_yaml_read(&pr, t, &toy_doc, text, strlen(text), "/base", NULL), 0);
	assert_true(pr.n <= 1);
	if (pr.n)
		assert_int_equal(pg_yaml_problem_format(&out, "t.yaml", &pr.items[0]), 0);
	pg_yaml_problems_release(&pr);
	return pg_buf_detach(&out);
}

static void expect(const char *text, const char *want)
{
	toy t;
	char *got = first(&t, text);

	assert_string_equal(got, want);
	free(got);
	toy_release(&t);
}

static void test_every_kind(void **state)
{
	toy t;
	char *got;

	(void)state;
	got = first(&t, "title: toy\ndir: d\nsecret: abcdefgh\non: true\nport: 0\n"
		    "big: 18446744073709551615\ntags: [a, b]\n"
		    "items: [{name: x}, {name: heavy, weight: 10}]\n"
		    "pairs: {p: q, r: s}\ninner: {n: 7}\ncustom: yes\n");
	assert_string_equal(got, "");
	free(got);
	assert_string_equal(t.title, "toy");
	assert_string_equal(t.dir, "/base/d");
	assert_string_equal(t.secret, "abcdefgh");
	assert_true(t.on);
	assert_int_equal(t.port, 0);
	assert_true(t.big == SIZE_MAX);
	assert_int_equal(t.ntags, 2);
	assert_string_equal(t.tags[1], "b");
	assert_int_equal(t.nitems, 2);
	assert_string_equal(t.items[1].name, "heavy");
	assert_int_equal(t.items[1].weight, 10);
	assert_int_equal(t.npairs, 2);
	assert_string_equal(t.pairs[1].key, "r");
	assert_string_equal(t.pairs[1].value, "s");
	assert_int_equal(t.inner, 7);
	assert_int_equal(t.custom, 1);
	toy_release(&t);

	/* an empty list leaves the array unallocated */
	got = first(&t, "tags: []\nitems: []\npairs: {}\ncustom: yes\n");
	assert_string_equal(got, "");
	free(got);
	assert_null(t.tags);
	assert_null(t.items);
	assert_null(t.pairs);
	toy_release(&t);
}

static void test_messages(void **state)
{
	(void)state;
	expect("", "t.yaml:1:1: the toy is empty: expected a mapping of toy settings");
	expect("[1]\n", "t.yaml:1:1: the toy wants a mapping of toy settings at the top level, "
	       "not a list");
	expect("title: x\n", "t.yaml:1:1: the toy has no 'custom': expected yes");
	expect("custom: no\n", "t.yaml:1:9: 'custom' wants yes, not 'no'");
	expect("custom: yes\ntitl: x\n",
	       "t.yaml:2:1: unknown key 'titl' at the top level (did you mean 'title'?)");
	expect("custom: yes\ninner: {m: 1}\n",
	       "t.yaml:2:9: unknown key 'm' in 'inner' (expected one of: n)");
	expect("custom: yes\ncustom: yes\n",
	       "t.yaml:2:1: duplicate key 'custom' at the top level (first at 1:1)");
	expect("custom: yes\npairs: {a: b, a: c}\n",
	       "t.yaml:2:15: duplicate key 'a' in 'pairs' (first at 2:9)");
	expect("custom: yes\npairs: {[x]: b}\n", "t.yaml:2:9: keys in 'pairs' are names, not a list");
	expect("custom: yes\npairs: {a: [b]}\n", "t.yaml:2:12: 'pairs.a' wants a value, not a list");
	expect("custom: yes\ntitle: Toy\n",
	       "t.yaml:2:8: 'title' wants a title, not 'Toy': expected lower case only");
	expect("custom: yes\ntitle: abcdefghijk\n",
	       "t.yaml:2:8: 'title' is 11 bytes long: expected at most 10");
	expect("custom: yes\ntitle: ''\n", "t.yaml:2:8: 'title' wants a title, not ''");
	expect("custom: yes\ntitle: \"a\\tb\"\n",
	       "t.yaml:2:8: 'title' wants text without control characters, not 'a b'");
	expect("custom: yes\non: yes\n", "t.yaml:2:5: 'on' wants true or false, not 'yes'");
	expect("custom: yes\nport: 65536\n", "t.yaml:2:7: 'port' wants at most 65535, not 65536");
	expect("custom: yes\nport: -1\n", "t.yaml:2:7: 'port' wants a non-negative integer, not '-1'");
	expect("custom: yes\nport: '1'\n", "t.yaml:2:7: 'port' wants a non-negative integer, not '1'");
	expect("custom: yes\nport: 01\n",
	       "t.yaml:2:7: 'port' wants a decimal integer without leading zeros, not '01'");
	expect("custom: yes\nbig: 18446744073709551616\n",
	       "t.yaml:2:6: 'big' wants at most 18446744073709551615, not 18446744073709551616");
	expect("custom: yes\ntags: a\n", "t.yaml:2:7: 'tags' wants a list of tags, not 'a'");
	expect("custom: yes\ntags: [a, {}]\n", "t.yaml:2:11: 'tags[1]' wants a tag, not an empty mapping");
	expect("custom: yes\nitems: {}\n", "t.yaml:2:8: 'items' wants a list of items, not an empty mapping");
	expect("custom: yes\nitems: [1]\n", "t.yaml:2:9: 'items[0]' wants a mapping, not '1'");
	expect("custom: yes\nitems: [{weight: 1}]\n",
	       "t.yaml:2:9: 'items[0]' has no 'name': expected a name");
	expect("custom: yes\nitems: [{name: a, weight: 0}]\n",
	       "t.yaml:2:27: 'items[0].weight' wants at least 1, not 0");
	expect("custom: yes\nitems: [{name: heavy, weight: 9}]\n",
	       "t.yaml:2:9: 'items[0]' is too light for its name");
	expect("custom: yes\nitems: [{name: a}, {name: b}, {name: c}, {name: d}]\n",
	       "t.yaml:2:8: 'items' has 4 entries: expected at most 3");
	/* keys made of escapes come back printable */
	expect("custom: yes\npairs: {\"\\e[31mred\": [x]}\n",
	       "t.yaml:2:22: 'pairs.red' wants a value, not a list");
}

/* A secret is never quoted back, whatever is wrong with it. */
static void test_secret_not_echoed(void **state)
{
	(void)state;
	expect("custom: yes\nsecret: short\n", "t.yaml:2:9: 'secret' wants at least 8 characters");
	expect("custom: yes\nsecret: LONGERSECRET\n",
	       "t.yaml:2:9: 'secret' wants a secret: expected lower case only");
	expect("custom: yes\nsecret: \"abcdefgh\\t\"\n",
	       "t.yaml:2:9: 'secret' wants text without control characters, not this value");
	expect("custom: yes\nsecret: [x]\n", "t.yaml:2:9: 'secret' wants a secret, not a list");
}

static void test_collect_mode(void **state)
{
	static const char text[] = "titel: x\nport: x\non: 1\ncustom: no\n";
	pg_yaml_problems pr = PG_YAML_PROBLEMS_INIT(2);
	toy t;

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(pg_yaml_read(&pr, &t, &toy_doc, text, strlen(text), NULL, NULL), 0);
	/* two kept, then one saying the rest are not shown */
	assert_int_equal(pr.n, 3);
	assert_true(pr.full);
	assert_int_equal(pr.items[0].line, 1);
	assert_int_equal(pr.items[1].line, 2);
	assert_string_equal(pr.items[2].message, "too many problems; the rest are not shown");
	pg_yaml_problems_release(&pr);
	toy_release(&t);
}

static void test_format_and_error(void **state)
{
	static const char text[] = "custom: yes\nport: x\n";
	pg_yaml_problems pr = PG_YAML_PROBLEMS_INIT(1);
	pg_buf out = PG_BUF_INIT;
	toy t;

	(void)state;
	memset(&t, 0, sizeof(t));
	assert_int_equal(pg_yaml_read(&pr, &t, &toy_doc, text, strlen(text), NULL, NULL), 0);
	assert_int_equal(pg_yaml_problems_error(&pr, "t.yaml"), PG_EINVALID);
	assert_string_equal(pg_error_last(),
			    "t.yaml:2:7: 'port' wants a non-negative integer, not 'x'");
	/* a request body has no file name */
	assert_int_equal(pg_yaml_problem_format(&out, NULL, &pr.items[0]), 0);
	assert_string_equal(out.ptr, "line 2, column 7: 'port' wants a non-negative integer, not 'x'");
	pg_buf_release(&out);
	pg_yaml_problems_release(&pr);
	toy_release(&t);

	/* a syntax error is a problem like any other */
	expect("a: [\n", "t.yaml:2:1: invalid YAML: did not find expected node content "
	       "(while parsing a flow node at 2:1)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind),
		cmocka_unit_test(test_messages),
		cmocka_unit_test(test_secret_not_echoed),
		cmocka_unit_test(test_collect_mode),
		cmocka_unit_test(test_format_and_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
