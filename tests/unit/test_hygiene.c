/* test_hygiene.c - unit tests for the sign-off and Fixes: parsers behind the hygiene checks. */
#include "tests/unit/unit.h"

#include "verifier/pull.h"

static void test_fixes_parse(void **state)
{
	const char *subject;
	size_t idlen, sublen;

	(void)state;
	assert_int_equal(pg_fixes_parse("557f8c582a9b (\"ubsan: Reintroduce signed overflow sanitizer\")",
					&idlen, &subject, &sublen), 0);
	assert_int_equal(idlen, 12);
	assert_int_equal(sublen, strlen("ubsan: Reintroduce signed overflow sanitizer"));
	assert_memory_equal(subject, "ubsan: Reintroduce", 18);
	/* a subject that itself holds quotes and parentheses */
	assert_int_equal(pg_fixes_parse("abcdef1 (\"x: quote \"y\" (z)\")", &idlen, &subject, &sublen), 0);
	assert_int_equal(sublen, strlen("x: quote \"y\" (z)"));
	assert_int_equal(pg_fixes_parse("the helper from last week", &idlen, &subject, &sublen), -1);
	assert_int_equal(pg_fixes_parse("abc (\"too short\")", &idlen, &subject, &sublen), -1);
	assert_int_equal(pg_fixes_parse("557f8c582a9b", &idlen, &subject, &sublen), -1);
	assert_int_equal(pg_fixes_parse("557f8c582a9b (no quotes)", &idlen, &subject, &sublen), -1);
	assert_int_equal(pg_fixes_parse("557f8c582a9b (\"\")", &idlen, &subject, &sublen), 0);
	assert_int_equal(sublen, 0);
}

static void test_signed_off_by(void **state)
{
	static const char text[] = "tree 16f9d75b755ac2e271285acb0fc12f5d8bff4697\n"
		"author Frank <frank@example.org> 1 +0000\n"
		"committer Sam <sam@example.org> 1 +0000\n\n"
		"subject\n\nSigned-off-by: Frank <FRANK@example.org>\n"
		"Acked-by: Sam <sam@example.org>\n";
	pg_commit *c = NULL;

	(void)state;
	assert_int_equal(pg_commit_parse(&c, NULL, text, strlen(text)), 0);
	assert_true(pg_commit_signed_off_by(c, "frank@example.org"));
	/* an Acked-by is not a sign-off */
	assert_false(pg_commit_signed_off_by(c, "sam@example.org"));
	assert_false(pg_commit_signed_off_by(c, "rank@example.org"));
	assert_false(pg_commit_signed_off_by(c, ""));
	pg_commit_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixes_parse),
		cmocka_unit_test(test_signed_off_by),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
