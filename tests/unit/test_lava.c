/* test_lava.c - unit tests for reading a LAVA job log back as its console. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "pipeline/lava.h"

static char *console_of(const char *log, size_t *n)
{
	pg_buf out = PG_BUF_INIT;

	assert_int_equal(pg_lava_console(&out, n, log, strlen(log)), 0);
	return pg_buf_detach(&out);
}

/* The target records, in order; the dispatcher's own records are not console. */
static void test_target_records_only(void **state)
{
	const char *log =
		"- {\"dt\": \"2026-12-03T22:00:00.1\", \"lvl\": \"info\", \"msg\": \"start: 1 tmpfs-deploy\"}\n"
		"- {\"dt\": \"2026-12-03T22:00:00.2\", \"lvl\": \"target\", \"msg\": \"KTAP version 1\"}\n"
		"- {\"dt\": \"2026-12-03T22:00:00.3\", \"lvl\": \"results\", \"msg\": {\"case\": ! \"x\"}}\n"
		"- {\"dt\": \"2026-12-03T22:00:00.4\", \"lvl\": \"target\", \"msg\": \"ok 1 pullgate\"}\n"
		"- {\"dt\": \"2026-12-03T22:00:00.5\", \"lvl\": \"debug\", \"msg\": \"target\"}\n";
	size_t n = 0;
	char *c;

	(void)state;
	c = console_of(log, &n);
	assert_int_equal(n, 2);
	assert_string_equal(c, "KTAP version 1\nok 1 pullgate\n");
	free(c);
}

/*
 * lava-run prints the records without the list's "- "; what the dispatcher
 * reads from the device outside an action is "feedback" (with a namespace
 * after the message), and console too; what it typed ("input") is not.
 */
static void test_dispatcher_records(void **state)
{
	const char *log =
		"{\"dt\": \"2026-12-04T08:44:07.1\", \"lvl\": \"target\", \"msg\": \"ok 1 pullgate\"}\n"
		"{\"dt\": \"2026-12-04T08:44:07.2\", \"lvl\": \"info\", \"msg\": \"start: 4 finalize\"}\n"
		"{\"dt\": \"2026-12-04T08:44:07.3\", \"lvl\": \"feedback\", \"msg\": \"pullgate-init: done nonce=ab\", \"ns\": \"common\"}\n"
		"{\"dt\": \"2026-12-04T08:44:07.4\", \"lvl\": \"input\", \"msg\": \"poweroff\\n\"}\n"
		"{\"dt\": \"2026-12-04T08:44:07.5\", \"lvl\": \"feedback\", \"msg\": \"reboot: Power down\", \"ns\": \"common\"}\n"
		"-{\"dt\": \"d\", \"lvl\": \"target\", \"msg\": \"not a record\"}\n"
		"- {\"dt\": \"d\", \"lvl\": \"feedbacks\", \"msg\": \"nor this\"}\n";
	size_t n = 0;
	char *c;

	(void)state;
	c = console_of(log, &n);
	assert_int_equal(n, 3);
	assert_string_equal(c, "ok 1 pullgate\npullgate-init: done nonce=ab\nreboot: Power down\n");
	free(c);
}

/*
 * The dispatcher's console logger writes every '"' the device printed as
 * '\"' before dumping the record (which escapes both again): one
 * backslash comes off, so the device's own '\"' stays itself.
 */
static void test_dispatcher_quotes(void **state)
{
	const char *log =
		"{\"dt\": \"d\", \"lvl\": \"target\", \"msg\": \"[    0.2] Kernel panic - not syncing: "
		"VFS: Unable to mount root fs on \\\\\\\"\\\\\\\" or unknown-block(0,0)\"}\n"
		"{\"dt\": \"d\", \"lvl\": \"target\", \"msg\": \"a \\\\\\\\\\\" b\"}\n";
	size_t n = 0;
	char *c;

	(void)state;
	c = console_of(log, &n);
	assert_int_equal(n, 2);
	assert_string_equal(c, "[    0.2] Kernel panic - not syncing: VFS: Unable to mount root fs on "
			       "\"\" or unknown-block(0,0)\na \\\" b\n");
	free(c);
}

/* LAVA writes the message as a YAML double-quoted scalar: its escapes are decoded. */
static void test_yaml_escapes(void **state)
{
	const char *log =
		"- {\"dt\": \"d\", \"lvl\": \"target\", \"msg\": \"a\\e[0m \\\"q\\\" \\\\ \\xE9 \\u20ac \\N\\t\\0z\"}\n";
	size_t n = 0;
	char *c;

	(void)state;
	c = console_of(log, &n);
	assert_int_equal(n, 1);
	assert_memory_equal(c, "a\x1b[0m \"q\" \\ \xc3\xa9 \xe2\x82\xac \xc2\x85\t", 22);
	assert_int_equal(c[22], '\0');
	assert_int_equal(c[23], 'z');
	free(c);
}

/* What is no record is skipped: a broken escape, an unclosed message, other text. */
static void test_not_records(void **state)
{
	const char *log =
		"KTAP version 1\n"
		"- {\"dt\": \"d\", \"lvl\": \"target\", \"msg\": \"bad \\q escape\"}\n"
		"- {\"dt\": \"d\", \"lvl\": \"target\", \"msg\": \"unclosed\n"
		"- {\"dt\": \"d\", \"lvl\": \"target\", \"msg\": \"short \\x4\"}\n"
		"- {\"dt\": \"d\", \"lvl\": \"target\"}\n"
		"- {\"dt\": \"d\", \"lvl\": \"target\", \"msg\": \"kept\"}";
	size_t n = 0;
	char *c;

	(void)state;
	c = console_of(log, &n);
	assert_int_equal(n, 1);
	assert_string_equal(c, "kept\n");
	free(c);
	c = console_of("", &n);
	assert_int_equal(n, 0);
	assert_string_equal(c, "");
	free(c);
}

/* The console is capped by the caller's buffer. */
static void test_cap(void **state)
{
	const char *log = "- {\"dt\": \"d\", \"lvl\": \"target\", \"msg\": \"0123456789\"}\n";
	pg_buf out;

	(void)state;
	pg_buf_init(&out, 4);
	assert_int_equal(pg_lava_console(&out, NULL, log, strlen(log)), PG_ETOOBIG);
	pg_buf_release(&out);
	pg_error_clear();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_target_records_only),
		cmocka_unit_test(test_dispatcher_records),
		cmocka_unit_test(test_dispatcher_quotes),
		cmocka_unit_test(test_yaml_escapes),
		cmocka_unit_test(test_not_records),
		cmocka_unit_test(test_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
