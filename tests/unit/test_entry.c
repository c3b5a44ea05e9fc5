/* test_entry.c - unit tests for a pull entering the queue: the ahead file, and the sentence read from the conflict check's JSON. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "server/entry.h"

static pg_job *job(int64_t id, const char *repo, const char *tag, bool has_tag_object)
{
	pg_job *j = calloc(1, sizeof(*j));

	assert_non_null(j);
	j->id = id;
	j->repo = (char *)repo;
	j->tag = (char *)tag;
	j->has_tag_object = has_tag_object;
	memset(j->tag_object.id, 0xab, sizeof(j->tag_object.id));
	return j;
}

/* One line a pull, three words; a pull without its tag object, with a blank in a word or a leading '#', left out. */
static void test_the_ahead_file(void **state)
{
	pg_job *a = job(1, "/srv/a.git", "refs/tags/a", true), *b = job(2, "/srv/b.git", "b", false),
	       *c = job(3, "/srv/c c.git", "c", true), *d = job(4, "/srv/d.git", "refs/tags/d", true),
	       *e = job(5, "#x", "e", true);
	const pg_job *ahead[] = { a, b, c, d, e };
	pg_buf out = PG_BUF_INIT;
	bool used[5];

	(void)state;
	assert_int_equal(pg_entry_ahead_file(&out, used, ahead, 5), 0);
	assert_string_equal(out.ptr, "/srv/a.git refs/tags/a abababababababababababababababababababab\n"
			    "/srv/d.git refs/tags/d abababababababababababababababababababab\n");
	assert_true(used[0]);
	assert_false(used[1]);
	assert_false(used[2]);
	assert_true(used[3]);
	assert_false(used[4]); /* it would be read as a comment */
	pg_buf_release(&out);
	free(a), free(b), free(c), free(d), free(e);
}

static bool first_held;

static void sentence_of(const char *json, pg_buf *s, int64_t *with, int expect_err)
{
	pg_job *a = job(7, "/a", "refs/tags/edit-a", true), *b = job(9, "/b", "edit-b", true);
	const pg_job *listed[] = { a, b };

	a->held = first_held;
	pg_json *doc = NULL;

	assert_int_equal(pg_json_parse(&doc, json, strlen(json)), 0);
	assert_int_equal(pg_entry_sentence(s, with, doc, listed, 2, "master"), expect_err);
	pg_error_clear();
	pg_json_free(doc);
	free(a), free(b);
}

/* With each pull it conflicts with, its paths and hunks; the first is the one it waits behind. */
static void test_the_sentence(void **state)
{
	pg_buf s = PG_BUF_INIT;
	int64_t with = -1;

	(void)state;
	sentence_of("{\"alone\": [], \"ahead\": [{\"position\": 1, \"status\": \"clean\", \"conflicts\": []},"
		    "{\"position\": 2, \"status\": \"skipped\", \"conflicts\": []}]}", &s, &with, 0);
	assert_int_equal(s.len, 0);
	assert_int_equal(with, 0);
	sentence_of("{\"alone\": [], \"ahead\": [{\"position\": 1, \"status\": \"conflicts\","
		    "\"conflicts\": [{\"path\": \"fs/ext4/super.c\", \"hunks\": 2}], \"more\": 0},"
		    "{\"position\": 2, \"status\": \"conflicts\", \"conflicts\": [{\"path\": \"a\\u001b[31mb\","
		    "\"hunks\": 1}, {\"path\": \"bin\", \"hunks\": 0}], \"more\": 3}]}", &s, &with, 0);
	assert_string_equal(s.ptr, "conflicts with pull 7 (edit-a) in fs/ext4/super.c: 2 hunks; with pull 9 "
			    "(edit-b) in ab: 1 hunk, bin: not a text conflict, and 3 more paths");
	assert_int_equal(with, 7);
	pg_buf_clear(&s);
	/* the first one held: it waits behind the second */
	first_held = true;
	sentence_of("{\"alone\": [], \"ahead\": [{\"position\": 1, \"status\": \"conflicts\","
		    "\"conflicts\": [{\"path\": \"x\", \"hunks\": 1}]}, {\"position\": 2, \"status\": "
		    "\"conflicts\", \"conflicts\": [{\"path\": \"y\", \"hunks\": 1}]}]}", &s, &with, 0);
	first_held = false;
	assert_string_equal(s.ptr, "conflicts with pull 7 (edit-a) in x: 1 hunk; with pull 9 (edit-b) "
			    "in y: 1 hunk");
	assert_int_equal(with, 9);
	pg_buf_clear(&s);
	sentence_of("{\"alone\": [{\"path\": \"x.c\", \"hunks\": 1}], \"alone_more\": 0, \"ahead\": "
		    "[{\"position\": 1, \"status\": \"skipped\", \"conflicts\": []}]}", &s, &with, 0);
	assert_string_equal(s.ptr, "conflicts by itself with master in x.c: 1 hunk");
	assert_int_equal(with, 0);
	pg_buf_release(&s);
}

/* A conflict a resolution settles is said with it, and the pull does not wait behind it. */
static void test_a_resolved_conflict_holds_nothing_up(void **state)
{
	pg_buf s = PG_BUF_INIT;
	int64_t with = -1;

	(void)state;
	sentence_of("{\"alone\": [], \"ahead\": [{\"position\": 1, \"status\": \"resolved\","
		    "\"conflicts\": [{\"path\": \"x\", \"hunks\": 1}], \"resolution\": {\"ref\": "
		    "\"refs/pullgate/resolutions/x\\u001b[1m\", \"commit\": \"0\"}}, {\"position\": 2, "
		    "\"status\": \"conflicts\", \"conflicts\": [{\"path\": \"y\", \"hunks\": 2}]}]}",
		    &s, &with, 0);
	assert_string_equal(s.ptr, "conflicts with pull 7 (edit-a) in x: 1 hunk, resolved by "
			    "refs/pullgate/resolutions/x; with pull 9 (edit-b) in y: 2 hunks");
	assert_int_equal(with, 9);
	pg_buf_clear(&s);
	/* settled with the base by itself: the pulls ahead were looked at */
	sentence_of("{\"alone\": [{\"path\": \"x.c\", \"hunks\": 1}], \"alone_resolution\": "
		    "{\"ref\": \"refs/pullgate/resolutions/r\"}, \"ahead\": [{\"position\": 1, "
		    "\"status\": \"clean\", \"conflicts\": []}]}", &s, &with, 0);
	assert_string_equal(s.ptr, "conflicts by itself with master in x.c: 1 hunk, resolved by "
			    "refs/pullgate/resolutions/r");
	assert_int_equal(with, 0);
	pg_buf_clear(&s);
	/* a resolution without its ref is none the command writes */
	sentence_of("{\"alone\": [], \"ahead\": [{\"position\": 1, \"status\": \"resolved\","
		    "\"conflicts\": [{\"path\": \"x\", \"hunks\": 1}], \"resolution\": {}}]}",
		    &s, &with, PG_EINVALID);
	assert_int_equal(with, 0);
	pg_buf_release(&s);
}

/* What the command never writes is an error, not a sentence: a place out of range, paths missing. */
static void test_a_document_that_is_none_is_refused(void **state)
{
	pg_buf s = PG_BUF_INIT;
	int64_t with = -1;

	(void)state;
	sentence_of("{\"ahead\": []}", &s, &with, PG_EINVALID);
	sentence_of("{\"alone\": [], \"ahead\": [{\"position\": 3, \"status\": \"conflicts\"}]}", &s,
		    &with, PG_EINVALID);
	sentence_of("{\"alone\": [], \"ahead\": [{\"position\": 1, \"status\": \"conflicts\","
		    "\"conflicts\": []}]}", &s, &with, PG_EINVALID);
	sentence_of("{\"alone\": [], \"ahead\": [{\"position\": 1, \"status\": \"conflicts\","
		    "\"conflicts\": [{\"path\": \"x\", \"hunks\": -1}]}]}", &s, &with, PG_EINVALID);
	assert_int_equal(s.len, 0);
	assert_int_equal(with, 0);
	pg_buf_release(&s);
}

/* Thousands of paths: the sentence is cut, on a character's first byte, and says so. */
static void test_a_long_sentence_is_cut(void **state)
{
	pg_buf json = PG_BUF_INIT, s = PG_BUF_INIT;
	int64_t with = 0;
	size_t i;

	(void)state;
	pg_buf_puts(&json, "{\"alone\": [], \"ahead\": [{\"position\": 2, \"status\": \"conflicts\", "
		    "\"conflicts\": [");
	for (i = 0; i < 100; i++)
		pg_buf_printf(&json, "%s{\"path\": \"dir/\\u00e9\\u00e9\\u00e9-%zu.c\", \"hunks\": 1}",
			      i ? ", " : "", i);
	pg_buf_puts(&json, "]}]}");
	sentence_of(json.ptr, &s, &with, 0);
	assert_true(s.len <= PG_ENTRY_SENTENCE_MAX);
	assert_memory_equal(s.ptr + s.len - 4, " ...", 4);
	assert_true(((unsigned char)s.ptr[s.len - 5] & 0xC0) != 0xC0); /* no lead byte left alone */
	assert_int_equal(with, 9);
	pg_buf_release(&json);
	pg_buf_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_ahead_file),
		cmocka_unit_test(test_the_sentence),
		cmocka_unit_test(test_a_resolved_conflict_holds_nothing_up),
		cmocka_unit_test(test_a_document_that_is_none_is_refused),
		cmocka_unit_test(test_a_long_sentence_is_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
