/* test_diag.c - unit tests for reading compiler diagnostics out of a kernel build log. */
#include "tests/unit/unit.h"

#include "pipeline/diag.h"

static int parse(pg_diag *d, const char *line)
{
	return pg_diag_parse(d, line, strlen(line));
}

static void test_gcc_error_and_warning(void **state)
{
	pg_diag d;
	pg_buf key = PG_BUF_INIT;

	(void)state;
	assert_int_equal(parse(&d, "include/linux/fortify-string.h:719:4: error: call to "
				   "'__read_overflow' declared with 'error' attribute\n"), 1);
	assert_string_equal(d.file, "include/linux/fortify-string.h");
	assert_int_equal(d.line, 719);
	assert_true(d.error);
	assert_string_equal(d.message, "call to '__read_overflow' declared with 'error' attribute");
	pg_diag_release(&d);

	assert_int_equal(parse(&d, "lib/overflow.c:12: warning: unused variable 'x' [-Wunused-variable]"), 1);
	assert_false(d.error);
	assert_int_equal(d.line, 12);
	assert_int_equal(pg_diag_key(&key, &d), 0);
	assert_string_equal(key.ptr, "lib/overflow.c: unused variable 'x' [-Wunused-variable]");
	pg_diag_release(&d);
	pg_buf_release(&key);

	assert_int_equal(parse(&d, "a.c:1:2: fatal error: b.h: No such file or directory"), 1);
	assert_true(d.error);
	assert_string_equal(d.message, "b.h: No such file or directory");
	pg_diag_release(&d);
}

static void test_other_lines_are_not_diagnostics(void **state)
{
	static const char *const lines[] = {
		"  CC      kernel/fork.o",
		"make[2]: *** [scripts/Makefile.build:229: lib/x.o] Error 1",
		"In file included from lib/x.c:3:",
		"lib/x.c: In function 'f':",
		"lib/x.c:3:1: note: declared here",
		"http://example.org:80: error: not a file",
		":1: error: no file",
		"",
		"x:y: error: no line number",
	};
	size_t i;
	pg_diag d;

	(void)state;
	for (i = 0; i < PG_ARRAY_SIZE(lines); i++)
		assert_int_equal(parse(&d, lines[i]), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gcc_error_and_warning),
		cmocka_unit_test(test_other_lines_are_not_diagnostics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
