/* test_json.c - unit tests for the JSON writer and reader that keep jansson inside common/json.c. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "common/json.h"

static void test_write_in_order_and_nested(void **state)
{
	pg_json_writer *w = NULL;
	pg_buf out = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_json_writer_new(&w), 0);
	pg_json_put_str(w, "z", "first");
	pg_json_put_int(w, "a", -42);
	pg_json_put_real(w, "r", 1.5);
	pg_json_put_bool(w, "b", true);
	pg_json_put_null(w, "n");
	pg_json_put_str(w, "s", NULL);
	pg_json_open_array(w, "list");
	pg_json_open_object(w, NULL);
	pg_json_put_str(w, "k", "v");
	pg_json_close(w);
	pg_json_put_int(w, NULL, 7);
	pg_json_close(w);
	pg_json_put_text(w, "embedded", "{\"x\": [1, 2]}");
	pg_json_put_text(w, "none", NULL);
	assert_int_equal(pg_json_write(&out, w, PG_JSON_COMPACT), 0);
	assert_string_equal(out.ptr, "{\"z\":\"first\",\"a\":-42,\"r\":1.5,\"b\":true,\"n\":null,"
			    "\"s\":null,\"list\":[{\"k\":\"v\"},7],\"embedded\":{\"x\":[1,2]},"
			    "\"none\":null}");
	pg_buf_clear(&out);
	pg_json_writer_free(w);
	assert_int_equal(pg_json_writer_new(&w), 0);
	pg_json_put_str(w, "a", "b");
	pg_json_open_array(w, "c");
	pg_json_close(w);
	assert_int_equal(pg_json_write(&out, w, PG_JSON_INDENT), 0);
	assert_string_equal(out.ptr, "{\n  \"a\": \"b\",\n  \"c\": []\n}");
	pg_json_writer_free(w);
	pg_buf_release(&out);
}

static void test_write_parsed_value(void **state)
{
	static const char text[] = "{\"t\": {\"id\": \"<a@b>\"}, \"n\": [1]}";
	pg_json_writer *w = NULL;
	pg_json *r = NULL;
	pg_buf out = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_json_parse(&r, text, strlen(text)), 0);
	assert_int_equal(pg_json_writer_new(&w), 0);
	/* the whole and one of its members: the writer holds them, the root is freed first */
	pg_json_put_value(w, "whole", r);
	pg_json_put_value(w, "member", pg_json_get(r, "t"));
	pg_json_put_value(w, "none", NULL);
	pg_json_free(r);
	assert_int_equal(pg_json_write(&out, w, PG_JSON_COMPACT), 0);
	assert_string_equal(out.ptr, "{\"whole\":{\"t\":{\"id\":\"<a@b>\"},\"n\":[1]},"
			    "\"member\":{\"id\":\"<a@b>\"},\"none\":null}");
	pg_json_writer_free(w);
	pg_buf_release(&out);
}

static void test_write_repository_text(void **state)
{
	pg_json_writer *w = NULL;
	pg_buf out = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_json_writer_new(&w), 0);
	/* invalid UTF-8 is made valid; quotes and controls are escaped */
	pg_json_put_str(w, "t", "a \"q\"\n\x01 \xff");
	assert_int_equal(pg_json_write(&out, w, PG_JSON_COMPACT), 0);
	assert_string_equal(out.ptr, "{\"t\":\"a \\\"q\\\"\\n\\u0001 \xef\xbf\xbd\"}");
	pg_json_writer_free(w);
	pg_buf_release(&out);
}

static void test_write_remembers_the_first_error(void **state)
{
	pg_json_writer *w = NULL;
	pg_buf out = PG_BUF_INIT;
	size_t i;

	(void)state;
	assert_int_equal(pg_json_writer_new(&w), 0);
	pg_json_open_array(w, "a");
	pg_json_put_int(w, "key", 1); /* a key inside an array */
	pg_json_put_int(w, NULL, 2);
	assert_int_equal(pg_json_write(&out, w, PG_JSON_COMPACT), PG_EINVALID);
	assert_int_equal(out.len, 0);
	pg_json_writer_free(w);

	assert_int_equal(pg_json_writer_new(&w), 0);
	pg_json_put_text(w, "r", "{\"x\": ");
	pg_json_put_int(w, "after", 1);
	assert_int_equal(pg_json_write(&out, w, PG_JSON_COMPACT), PG_EINVALID);
	pg_json_writer_free(w);

	assert_int_equal(pg_json_writer_new(&w), 0);
	pg_json_close(w);
	assert_int_equal(pg_json_write(&out, w, PG_JSON_COMPACT), PG_EINVALID);
	pg_json_writer_free(w);

	assert_int_equal(pg_json_writer_new(&w), 0);
	for (i = 0; i < PG_JSON_MAX_DEPTH; i++)
		pg_json_open_object(w, "deeper");
	assert_int_equal(pg_json_write(&out, w, PG_JSON_COMPACT), PG_ETOOBIG);
	pg_json_writer_free(w);
	pg_json_writer_free(NULL);
	pg_buf_release(&out);
}

static void test_read(void **state)
{
	static const char text[] = "{\"s\": \"x\", \"n\": 5, \"o\": {\"in\": \"y\"},"
				   " \"a\": [{\"k\": \"1\"}, {\"k\": \"2\"}]}";
	pg_json *v = NULL;
	const pg_json *a;

	(void)state;
	assert_int_equal(pg_json_parse(&v, text, strlen(text)), 0);
	assert_string_equal(pg_json_get_str(v, "s"), "x");
	assert_null(pg_json_get_str(v, "n"));      /* not a string */
	assert_null(pg_json_get_str(v, "absent"));
	assert_string_equal(pg_json_get_str(pg_json_get(v, "o"), "in"), "y");
	a = pg_json_get(v, "a");
	assert_int_equal(pg_json_len(a), 2);
	assert_string_equal(pg_json_get_str(pg_json_at(a, 1), "k"), "2");
	assert_null(pg_json_at(a, 2));
	assert_null(pg_json_at(v, 0));              /* not an array */
	assert_int_equal(pg_json_len(v), 0);
	assert_null(pg_json_get(NULL, "s"));
	assert_null(pg_json_get_str(NULL, "s"));
	assert_int_equal(pg_json_len(NULL), 0);
	pg_json_free(v);
	pg_json_free(NULL);
}

/* A reader that must tell null from absent, and a real from an integer. */
static void test_read_types(void **state)
{
	static const char text[] = "{\"z\": null, \"b\": false, \"i\": -3, \"r\": 1.5,"
				   " \"s\": \"x\", \"a\": [], \"o\": {}}";
	pg_json *v = NULL;

	(void)state;
	assert_int_equal(pg_json_parse(&v, text, strlen(text)), 0);
	assert_int_equal(pg_json_type(pg_json_get(v, "z")), PG_JSON_NULL);
	assert_int_equal(pg_json_type(pg_json_get(v, "absent")), PG_JSON_ABSENT);
	assert_int_equal(pg_json_type(pg_json_get(v, "b")), PG_JSON_BOOL);
	assert_int_equal(pg_json_type(pg_json_get(v, "i")), PG_JSON_INTEGER);
	assert_int_equal(pg_json_type(pg_json_get(v, "r")), PG_JSON_REAL);
	assert_int_equal(pg_json_type(pg_json_get(v, "s")), PG_JSON_STRING);
	assert_int_equal(pg_json_type(pg_json_get(v, "a")), PG_JSON_ARRAY);
	assert_int_equal(pg_json_type(v), PG_JSON_OBJECT);
	assert_int_equal(pg_json_type(NULL), PG_JSON_ABSENT);
	assert_true(pg_json_real(pg_json_get(v, "r"), 0) == 1.5);
	assert_true(pg_json_real(pg_json_get(v, "i"), 0) == -3);
	assert_true(pg_json_real(pg_json_get(v, "s"), 7) == 7);
	assert_true(pg_json_real(NULL, 7) == 7);
	pg_json_free(v);
}

static void test_read_refuses(void **state)
{
	pg_json *v = NULL;

	(void)state;
	assert_int_equal(pg_json_parse(&v, "{\"a\": 1, \"a\": 2}", 16), PG_EINVALID);
	assert_null(v);
	assert_int_equal(pg_json_parse(&v, "{\"a\": ", 6), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "line 1 column"));
	assert_int_equal(pg_json_parse(&v, "5", 1), PG_EINVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_in_order_and_nested),
		cmocka_unit_test(test_write_parsed_value),
		cmocka_unit_test(test_write_repository_text),
		cmocka_unit_test(test_write_remembers_the_first_error),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_read_types),
		cmocka_unit_test(test_read_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
