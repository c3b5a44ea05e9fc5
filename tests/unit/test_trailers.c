/* test_trailers.c - unit tests for finding the trailer block. */
#include "tests/unit/unit.h"

#include "repo/trailers.h"

typedef struct parsed {
	pg_trailer *t;
	size_t n;
	size_t body_len;
} parsed;

static parsed parse(const char *msg)
{
	parsed p;

	assert_int_equal(pg_trailers_parse(&p.t, &p.n, &p.body_len, msg, strlen(msg)), 0);
	return p;
}

static void test_kernel_trailers(void **state)
{
	const char *msg = "overflow: Introduce __DEFINE_FLEX\n\nBody text.\n\n"
			  "Link: https://lore.kernel.org/r/1\n"
			  "Fixes: 47e36ed78406 (\"overflow: Fix direct struct member\")\n"
			  "Signed-off-by: Kees Cook <kees@kernel.org>\n";
	parsed p = parse(msg);

	(void)state;
	assert_int_equal(p.n, 3);
	assert_string_equal(p.t[0].key, "Link");
	assert_string_equal(p.t[1].value, "47e36ed78406 (\"overflow: Fix direct struct member\")");
	assert_string_equal(p.t[2].line, "Signed-off-by: Kees Cook <kees@kernel.org>");
	assert_int_equal(p.body_len, strlen("overflow: Introduce __DEFINE_FLEX\n\nBody text."));
	pg_trailers_free(p.t, p.n);
}

static void test_subject_only_has_no_trailers(void **state)
{
	parsed p = parse("Fixes: a subject that looks like a trailer\n");

	(void)state;
	assert_int_equal(p.n, 0);
	assert_int_equal(p.body_len, strlen("Fixes: a subject that looks like a trailer"));
}

static void test_prose_paragraph_is_not_a_block(void **state)
{
	parsed p = parse("subject\n\nThis is prose: it has a colon.\nAnd more text.\n");

	(void)state;
	assert_int_equal(p.n, 0);
}

static void test_cherry_pick_note_and_continuation(void **state)
{
	const char *msg = "net: add helper\n\nText.\n\n"
			  "Signed-off-by: A <a@example.org>\n"
			  "Link: https://example.org/a\n"
			  "  /continued\n"
			  "(cherry picked from commit db813ed34e4d4a08c86124cbcbf8c35120d91333)\n";
	parsed p = parse(msg);

	(void)state;
	assert_int_equal(p.n, 3);
	assert_string_equal(p.t[1].value, "https://example.org/a /continued");
	assert_string_equal(p.t[1].line, "Link: https://example.org/a\n  /continued");
	assert_string_equal(p.t[2].key, "(cherry picked from commit");
	assert_string_equal(p.t[2].value, "db813ed34e4d4a08c86124cbcbf8c35120d91333");
	pg_trailers_free(p.t, p.n);
}

static void test_mixed_block_with_signoff(void **state)
{
	/* git accepts a block where a quarter are trailers and one is a sign-off */
	const char *msg = "subject\n\nbody\n\n"
			  "[kees: tweaked the commit log]\n"
			  "Signed-off-by: Kees Cook <kees@kernel.org>\n";
	parsed p = parse(msg);

	(void)state;
	assert_int_equal(p.n, 1);
	assert_string_equal(p.t[0].key, "Signed-off-by");
	pg_trailers_free(p.t, p.n);
}

static void test_url_is_not_a_trailer(void **state)
{
	parsed p = parse("subject\n\nhttps://example.org/x\n");

	(void)state;
	assert_int_equal(p.n, 0);
}

static void test_trailer_equal(void **state)
{
	parsed a = parse("s\n\nreviewed-by: X <x@y>\n"), b = parse("s\n\nReviewed-by:   X <x@y>  \n");

	(void)state;
	assert_int_equal(a.n, 1);
	assert_int_equal(b.n, 1);
	assert_true(pg_trailer_equal(&a.t[0], &b.t[0]));
	pg_trailers_free(a.t, a.n);
	pg_trailers_free(b.t, b.n);
}

static void test_crlf_and_trailing_blank_lines(void **state)
{
	parsed p = parse("subject\r\n\r\nSigned-off-by: A <a@b>\r\n\r\n\r\n");

	(void)state;
	assert_int_equal(p.n, 1);
	assert_string_equal(p.t[0].value, "A <a@b>");
	assert_int_equal(p.body_len, strlen("subject"));
	pg_trailers_free(p.t, p.n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_trailers),
		cmocka_unit_test(test_subject_only_has_no_trailers),
		cmocka_unit_test(test_prose_paragraph_is_not_a_block),
		cmocka_unit_test(test_cherry_pick_note_and_continuation),
		cmocka_unit_test(test_mixed_block_with_signoff),
		cmocka_unit_test(test_url_is_not_a_trailer),
		cmocka_unit_test(test_trailer_equal),
		cmocka_unit_test(test_crlf_and_trailing_blank_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
