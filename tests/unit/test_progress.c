/* test_progress.c - unit tests for progress events: the ETA and the status line. */
#include "tests/unit/unit.h"

#include "common/progress.h"

static void expect_line(const pg_progress *p, const char *want)
{
	pg_buf b = PG_BUF_INIT;

	assert_int_equal(pg_progress_format(&b, p), 0);
	assert_string_equal(b.ptr, want);
	pg_buf_release(&b);
}

static void test_eta(void **state)
{
	pg_progress p = { .stage = "build", .line = "", .done = 250, .total = 1000,
			  .elapsed_ms = 60000 };

	(void)state;
	/* 250 in a minute: 750 more take three */
	assert_int_equal(pg_progress_eta_s(&p), 180);
	p.total = 0;
	assert_int_equal(pg_progress_eta_s(&p), -1);
	p.total = 100; /* more done than the last build's total: no estimate */
	assert_int_equal(pg_progress_eta_s(&p), -1);
	p.total = 1000;
	p.done = 0;
	assert_int_equal(pg_progress_eta_s(&p), -1);
	p.done = 10;
	p.elapsed_ms = 500; /* too early to tell */
	assert_int_equal(pg_progress_eta_s(&p), -1);
}

static void test_format(void **state)
{
	pg_progress p = { .stage = "build", .line = "starting" };

	(void)state;
	expect_line(&p, "starting");
	p.done = 250;
	p.total = 1000;
	p.unit = "objects";
	p.elapsed_ms = 60000;
	expect_line(&p, "250/1000 objects (25%), 1 min 0 s, about 3 min 0 s left");
	p.total = 0;
	p.bytes = 3 * 1024 * 1024 + 512 * 1024;
	p.elapsed_ms = 400;
	expect_line(&p, "250 objects, 3.5 MiB");
	p.bytes = 1536;
	expect_line(&p, "250 objects, 1.5 KiB");
	p.bytes = 0;
	p.done = 2000;
	p.total = 1000; /* past the total: 100%, no estimate */
	p.elapsed_ms = 7200 * 1000;
	expect_line(&p, "2000/1000 objects (100%), 2 h 0 min");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eta),
		cmocka_unit_test(test_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
