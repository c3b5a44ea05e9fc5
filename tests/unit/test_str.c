/* test_str.c - unit tests for trimming, blank spans, string lists and control characters. */
#include "tests/unit/unit.h"

#include "common/str.h"

static void test_blank(void **state)
{
	(void)state;
	assert_true(pg_str_is_blank("", 0, PG_STR_BLANKS));
	assert_true(pg_str_is_blank(" \t ", 3, PG_STR_BLANKS));
	assert_false(pg_str_is_blank(" \r", 2, PG_STR_BLANKS));
	assert_true(pg_str_is_blank(" \r\n\f\v\t", 6, PG_STR_SPACES));
	assert_false(pg_str_is_blank("  x ", 4, PG_STR_SPACES));
	/* only n characters count, and a NUL is in no set */
	assert_true(pg_str_is_blank("  x", 2, PG_STR_BLANKS));
	assert_false(pg_str_is_blank(" \0 ", 3, PG_STR_BLANKS));
}

static void test_trim(void **state)
{
	const char *s = " \t a b \t\r", *p;
	size_t n;

	(void)state;
	p = s;
	n = strlen(s);
	pg_str_ltrim(&p, &n, PG_STR_BLANKS);
	assert_ptr_equal(p, s + 3);
	assert_int_equal(n, 6);

	p = s;
	n = strlen(s);
	pg_str_rtrim(p, &n, PG_STR_BLANKS);
	/* the CR is no blank: nothing goes */
	assert_int_equal(n, strlen(s));
	pg_str_rtrim(p, &n, PG_STR_SPACES);
	assert_int_equal(n, 6);

	p = s;
	n = strlen(s);
	pg_str_trim(&p, &n, PG_STR_SPACES);
	assert_int_equal(n, 3);
	assert_memory_equal(p, "a b", 3);

	/* all blank: empty, at the end of the blanks */
	p = "  ";
	n = 2;
	pg_str_trim(&p, &n, PG_STR_BLANKS);
	assert_int_equal(n, 0);
}

static void test_trim_line(void **state)
{
	const char *p;
	size_t n;

	(void)state;
	p = " \tvalue here \r";
	n = strlen(p);
	pg_str_trim_line(&p, &n);
	assert_int_equal(n, 10);
	assert_memory_equal(p, "value here", 10);
	/* a CR at the start is text, not the end of a CRLF line */
	p = "\r x";
	n = strlen(p);
	pg_str_trim_line(&p, &n);
	assert_int_equal(n, 3);
	assert_int_equal(p[0], '\r');
}

/* C0, DEL and C1 (in UTF-8) are controls; other UTF-8, U+00A0 and U+00BF included, is text. */
static void test_has_control(void **state)
{
	(void)state;
	assert_false(pg_str_has_control(""));
	assert_false(pg_str_has_control("kees"));
	assert_false(pg_str_has_control("J\xc3\xa9" "r\xc3\xb4" "me"));
	assert_false(pg_str_has_control("a\xc2\xa0" "b\xc2\xbf"));
	assert_true(pg_str_has_control("a\nb"));
	assert_true(pg_str_has_control("\x1b[31m"));
	assert_true(pg_str_has_control("a\x7f"));
	assert_true(pg_str_has_control("a\xc2\x85" "b"));
	assert_true(pg_str_has_control("\xc2\x9b" "31m"));
	/* a lone 0xC2 at the end is no C1 control, and is not read past */
	assert_false(pg_str_has_control("a\xc2"));
}

/* A copy of each string, in order, in a list of its own; none for an empty list. */
static void test_list_dup(void **state)
{
	char a[] = "kees", b[] = "", c[] = "torvalds";
	char *const list[] = { a, b, c };
	char **copy = NULL;
	size_t n = 9;

	(void)state;
	assert_int_equal(pg_str_list_dup(&copy, &n, list, 3), 0);
	assert_int_equal(n, 3);
	assert_string_equal(copy[0], "kees");
	assert_string_equal(copy[1], "");
	assert_string_equal(copy[2], "torvalds");
	assert_ptr_not_equal(copy[0], list[0]);
	pg_str_list_free(copy, n);
	assert_int_equal(pg_str_list_dup(&copy, &n, list, 0), 0);
	assert_null(copy);
	assert_int_equal(n, 0);
}

static void test_list_free(void **state)
{
	char **list = calloc(3, sizeof(*list));

	(void)state;
	assert_non_null(list);
	list[0] = strdup("a");
	list[1] = strdup("b");
	list[2] = strdup("c");
	/* the sanitizer build finds a leak or a double free here */
	pg_str_list_free(list, 3);
	pg_str_list_free(NULL, 0);
	pg_str_list_free(NULL, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_blank),
		cmocka_unit_test(test_trim),
		cmocka_unit_test(test_trim_line),
		cmocka_unit_test(test_list_free),
		cmocka_unit_test(test_has_control),
		cmocka_unit_test(test_list_dup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
