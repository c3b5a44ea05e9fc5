/* test_ktap.c - unit tests for the KTAP boot log parser, on synthetic console logs. */
#include "tests/unit/unit.h"

#include "pipeline/ktap.h"

#include <jansson.h>

static pg_boot_result *parse(const char *log)
{
	pg_boot_result *r = NULL;

	assert_int_equal(pg_ktap_parse(&r, log, strlen(log)), 0);
	assert_non_null(r);
	return r;
}

static const pg_ktap_test *find(const pg_boot_result *r, const char *path)
{
	size_t i;

	for (i = 0; i < r->ntests; i++)
		if (!strcmp(r->tests[i].path, path))
			return &r->tests[i];
	fail_msg("no test '%s'", path);
	return NULL;
}

static void assert_counts(const pg_boot_result *r, size_t pass, size_t fail,
			  size_t skip, size_t crashed)
{
	assert_int_equal(r->passed, pass);
	assert_int_equal(r->failed, fail);
	assert_int_equal(r->skipped, skip);
	assert_int_equal(r->crashed, crashed);
}

/* What KUnit prints on a 6.12 arm64 console, with other messages mixed in. */
static const char kunit_log[] =
	"[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x000f0510]\n"
	"[    0.412345] KTAP version 1\n"
	"[    0.412400] 1..2\n"
	"[    0.412500]     KTAP version 1\n"
	"[    0.412600]     # Subtest: flex\n"
	"[    0.412700]     # module: pullgate_kunit\n"
	"[    0.412800]     1..3\n"
	"[    0.413000]     ok 1 no_initializer\n"
	"[    0.413100] random: crng init done\n"
	"[    0.413200]         KTAP version 1\n"
	"[    0.413300]         # Subtest: sizes\n"
	"[    0.413400]         ok 1 count-1\n"
	"[    0.413500]         ok 2 count-37\n"
	"[    0.413600]     # sizes: pass:2 fail:0 skip:0 total:2\n"
	"[    0.413700]     ok 2 sizes\n"
	"[    0.413800]     ok 3 randstruct # SKIP needs RANDSTRUCT_FULL\n"
	"[    0.413900] # flex: pass:2 fail:0 skip:1 total:3\n"
	"[    0.414000] ok 1 flex\n"
	"[    0.414100]     KTAP version 1\n"
	"[    0.414200]     # Subtest: kconfig\n"
	"[    0.414300]     1..1\n"
	"[    0.414400]     ok 1 signed_wrap_needs_broken\n"
	"[    0.414500] ok 2 kconfig\n"
	"[    0.900000] Run /init as init process\n"
	"pullgate-init: uptime 0.95 s\n"
	"pullgate-init: done\n"
	"[    1.250000] pullgate-init: done\n"
	"[    1.260000] reboot: Power down\n";

static void test_nested_suites(void **state)
{
	pg_boot_result *r;
	const pg_ktap_test *t;

	(void)state;
	r = parse(kunit_log);
	assert_counts(r, 4, 0, 1, 0);
	assert_true(r->saw_ktap);
	assert_int_equal(r->nsplats, 0);
	assert_true(pg_boot_result_ok(r));

	t = find(r, "flex");
	assert_true(t->has_subtests);
	assert_int_equal(t->depth, 0);
	assert_int_equal(t->status, PG_KTAP_PASS);
	t = find(r, "flex.sizes");
	assert_true(t->has_subtests);
	assert_int_equal(t->depth, 1);
	t = find(r, "flex.sizes.count-37");
	assert_false(t->has_subtests);
	assert_int_equal(t->depth, 2);
	assert_int_equal(t->status, PG_KTAP_PASS);
	assert_int_equal(t->line, 13);
	t = find(r, "kconfig.signed_wrap_needs_broken");
	assert_int_equal(t->status, PG_KTAP_PASS);
	pg_boot_result_free(r);
}

static void test_boot_time_from_marker(void **state)
{
	pg_boot_result *r;

	(void)state;
	r = parse(kunit_log);
	assert_true(r->saw_marker);
	assert_true(r->powered_off);
	/* the untimestamped stdout copy is skipped for the /dev/kmsg one */
	assert_true(r->boot_time > 1.2499 && r->boot_time < 1.2501);
	pg_boot_result_free(r);

	r = parse("[    2.500000] ok 1 a\n[    3.000000] reboot: Power down\n");
	assert_false(r->saw_marker);
	assert_true(r->boot_time > 2.9999 && r->boot_time < 3.0001);
	pg_boot_result_free(r);

	r = parse("[    7.125000] ok 1 a\n");
	assert_true(r->boot_time > 7.1249 && r->boot_time < 7.1251);
	pg_boot_result_free(r);

	r = parse("ok 1 a\n");
	assert_true(r->boot_time < 0);
	pg_boot_result_free(r);
}

static void test_skips(void **state)
{
	pg_boot_result *r;
	const pg_ktap_test *t;

	(void)state;
	r = parse("KTAP version 1\n"
		  "1..3\n"
		  "ok 1 plain # SKIP no hardware\n"
		  "ok 2 lower # skip\n"
		  "not ok 3 todo # TODO later\n");
	/* a "not ok" fails whatever its directive says: the judge fails closed */
	assert_counts(r, 0, 1, 2, 0);
	assert_int_equal(find(r, "todo")->status, PG_KTAP_FAIL);
	assert_string_equal(find(r, "todo")->reason, "later");
	t = find(r, "plain");
	assert_int_equal(t->status, PG_KTAP_SKIP);
	assert_string_equal(t->reason, "no hardware");
	/* skips alone are not a pass */
	assert_false(pg_boot_result_ok(r));
	pg_boot_result_free(r);

	/* a whole suite skipped, with no children */
	r = parse("KTAP version 1\n1..2\n"
		  "    KTAP version 1\n    # Subtest: hw\n    1..0\n"
		  "ok 1 hw # SKIP not on this machine\n"
		  "ok 2 other\n"
		  "pullgate-init: done\nreboot: Power down\n");
	assert_counts(r, 1, 0, 1, 0);
	assert_string_equal(find(r, "hw")->reason, "not on this machine");
	assert_true(pg_boot_result_ok(r));
	pg_boot_result_free(r);
}

static void test_failures(void **state)
{
	pg_boot_result *r;

	(void)state;
	r = parse("KTAP version 1\n1..2\n"
		  "    # Subtest: s\n    1..2\n"
		  "    # a: EXPECTATION FAILED at lib/x.c:10\n"
		  "    not ok 1 a\n    ok 2 b\n"
		  "not ok 1 s\n"
		  "    # Subtest: t\n    1..1\n    ok 1 c\n"
		  "not ok 2 t\n");
	/* s failed through a; t failed with every child passing: count it */
	assert_counts(r, 2, 2, 0, 0);
	assert_int_equal(find(r, "s.a")->status, PG_KTAP_FAIL);
	assert_int_equal(find(r, "t")->status, PG_KTAP_FAIL);
	assert_false(pg_boot_result_ok(r));
	pg_boot_result_free(r);
}

static size_t count_lines(const char *s)
{
	size_t lines = 1;

	for (; *s; s++)
		lines += *s == '\n';
	return lines;
}

/* n bytes that are no UTF-8 (0xff), in a static buffer */
static const char *invalid_run(size_t n)
{
	static char b[1024];

	assert_true(n < sizeof(b));
	memset(b, 0xff, n);
	b[n] = '\0';
	return b;
}

static bool valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t k = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 :
			   (*p & 0xf8) == 0xf0 ? 3 : 9;

		if (k == 9)
			return false;
		for (p++; k; k--, p++)
			if ((*p & 0xc0) != 0x80)
				return false;
	}
	return true;
}

/* KUnit's why of a failed case is kept with it, from its "FAILED at" line, within bounds. */
static void test_failure_diagnostics(void **state)
{
	pg_boot_result *r;
	pg_buf log = PG_BUF_INIT;
	const pg_ktap_test *t;
	int i;

	(void)state;
	r = parse("[    1.000000] KTAP version 1\n[    1.000001] 1..1\n"
		  "[    1.000002]     # Subtest: s\n[    1.000003]     1..4\n"
		  "[    1.000004]     # a: EXPECTATION FAILED at lib/x.c:10\n"
		  "[    1.000005]     Expected limit == 16, but\n"
		  "[    1.000006]         limit == 32 (0x20)\n"
		  "[    1.000007]     not ok 1 a\n"
		  "[    1.000008]     # b: a note that is no failure\n"
		  "[    1.000009]     not ok 2 b\n"
		  "[    1.000010]     # c: ASSERTION FAILED at lib/y.c:7\n"
		  "[    1.000011]     Expected \x1b[31mp\x1b[0m is not null, but is\n"
		  "[    1.000012]     ok 3 c\n"
		  "[    1.000013]     not ok 4 d\n"
		  "[    1.000014] not ok 1 s\n");
	t = find(r, "s.a");
	assert_non_null(t->diagnostic);
	assert_string_equal(t->diagnostic, "# a: EXPECTATION FAILED at lib/x.c:10\n"
			    "Expected limit == 16, but\nlimit == 32 (0x20)");
	/* no "FAILED at" line before it: nothing; one before a pass is forgotten by it */
	assert_null(find(r, "s.b")->diagnostic);
	assert_null(find(r, "s.c")->diagnostic);
	assert_null(find(r, "s.d")->diagnostic);
	assert_null(find(r, "s")->diagnostic);
	pg_boot_result_free(r);

	/* escapes never kept; at most PG_KTAP_DIAG_LINES lines */
	assert_int_equal(pg_buf_puts(&log, "1..1\n# a: EXPECTATION FAILED at lib/x.c:1\n"), 0);
	for (i = 0; i < 40; i++)
		assert_int_equal(pg_buf_printf(&log, "\x1b]0;%0200d\x07 line %d\n", i, i), 0);
	assert_int_equal(pg_buf_puts(&log, "not ok 1 a\n"), 0);
	r = parse(log.ptr);
	t = find(r, "a");
	assert_non_null(t->diagnostic);
	assert_null(strchr(t->diagnostic, '\x1b'));
	assert_null(strchr(t->diagnostic, '\x07'));
	assert_int_equal(count_lines(t->diagnostic), PG_KTAP_DIAG_LINES);
	assert_non_null(strstr(t->diagnostic, " line 6"));
	assert_null(strstr(t->diagnostic, " line 7"));
	pg_boot_result_free(r);

	/* under PG_KTAP_DIAG_MAX bytes though each invalid byte becomes three, cut on a character */
	pg_buf_clear(&log);
	assert_int_equal(pg_buf_puts(&log, "1..1\n# a: EXPECTATION FAILED at lib/x.c:1\n"), 0);
	for (i = 0; i < 7; i++) {
		assert_int_equal(pg_buf_puts(&log, "x"), 0);
		assert_int_equal(pg_buf_printf(&log, "%s", invalid_run(500)), 0);
		assert_int_equal(pg_buf_puts(&log, "\n"), 0);
	}
	assert_int_equal(pg_buf_puts(&log, "not ok 1 a\n"), 0);
	r = parse(log.ptr);
	t = find(r, "a");
	assert_non_null(t->diagnostic);
	assert_true(strlen(t->diagnostic) < PG_KTAP_DIAG_MAX);
	assert_true(strlen(t->diagnostic) > PG_KTAP_DIAG_MAX - 8);
	assert_true(valid_utf8(t->diagnostic));
	pg_boot_result_free(r);

	/* a boot's diagnostics hold at most PG_KTAP_DIAG_TOTAL bytes */
	pg_buf_clear(&log);
	assert_int_equal(pg_buf_puts(&log, "1..200\n"), 0);
	for (i = 1; i <= 200; i++) {
		assert_int_equal(pg_buf_printf(&log, "# c%d: EXPECTATION FAILED at lib/x.c:%d\n", i, i), 0);
		assert_int_equal(pg_buf_printf(&log, "Expected %0900d\nnot ok %d c%d\n", i, i, i), 0);
	}
	r = parse(log.ptr);
	{
		size_t total = 0, with = 0, k;

		for (k = 0; k < r->ntests; k++)
			if (r->tests[k].diagnostic) {
				total += strlen(r->tests[k].diagnostic);
				with++;
			}
		assert_true(total <= PG_KTAP_DIAG_TOTAL);
		assert_true(with > 50 && with < 200);
		assert_non_null(find(r, "c1")->diagnostic);
		assert_null(find(r, "c200")->diagnostic);
	}
	pg_boot_result_free(r);
	pg_buf_release(&log);
}

static void test_crash_mid_suite(void **state)
{
	pg_boot_result *r;
	const pg_ktap_test *t;

	(void)state;
	r = parse("[    1.000000] KTAP version 1\n"
		  "[    1.000001] 1..2\n"
		  "[    1.000002]     KTAP version 1\n"
		  "[    1.000003]     # Subtest: flex\n"
		  "[    1.000004]     1..4\n"
		  "[    1.000005]     ok 1 a\n"
		  "[    1.000006]     ok 2 b\n"
		  "[    1.000007] some unrelated message\n");
	/* c was running, d never started, and suite 2 never came */
	assert_counts(r, 2, 0, 0, 3);
	t = find(r, "flex");
	assert_int_equal(t->status, PG_KTAP_CRASHED);
	assert_non_null(t->reason);
	assert_int_equal(find(r, "flex.#3")->status, PG_KTAP_CRASHED);
	assert_int_equal(find(r, "flex.#4")->status, PG_KTAP_CRASHED);
	assert_int_equal(find(r, "#2")->status, PG_KTAP_CRASHED);
	assert_false(r->saw_marker);
	assert_false(pg_boot_result_ok(r));
	pg_boot_result_free(r);

	/* no plan: only the running test is known to have crashed */
	r = parse("    # Subtest: s\n    ok 1 a\n"
		  "        # Subtest: p\n        ok 1 p-0\n");
	assert_counts(r, 2, 0, 0, 1);
	assert_int_equal(find(r, "s.p.#2")->status, PG_KTAP_CRASHED);
	assert_int_equal(find(r, "s.p")->status, PG_KTAP_CRASHED);
	assert_int_equal(find(r, "s")->status, PG_KTAP_CRASHED);
	pg_boot_result_free(r);

	/* every child reported but the suite's own line never came */
	r = parse("KTAP version 1\n1..1\n    # Subtest: s\n    1..1\n    ok 1 a\n");
	assert_counts(r, 1, 0, 0, 1);
	pg_boot_result_free(r);
}

static void test_new_block_after_crash(void **state)
{
	pg_boot_result *r;

	(void)state;
	/* suite a died without a result; the executor went on with b */
	r = parse("KTAP version 1\n1..2\n"
		  "    KTAP version 1\n    # Subtest: a\n    1..2\n    ok 1 x\n"
		  "    KTAP version 1\n    # Subtest: b\n    1..1\n    ok 1 y\n"
		  "ok 2 b\n");
	assert_counts(r, 2, 0, 0, 1);
	assert_int_equal(find(r, "a")->status, PG_KTAP_CRASHED);
	assert_int_equal(find(r, "a.#2")->status, PG_KTAP_CRASHED);
	assert_int_equal(find(r, "b")->status, PG_KTAP_PASS);
	pg_boot_result_free(r);
}

static void test_panic(void **state)
{
	pg_boot_result *r;

	(void)state;
	r = parse("[    1.0] KTAP version 1\n[    1.0] 1..1\n"
		  "[    1.1]     # Subtest: s\n[    1.1]     1..2\n"
		  "[    1.2]     ok 1 a\n"
		  "[    1.3] Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b\n"
		  "[    1.3] CPU: 0 UID: 0 PID: 1 Comm: swapper/0 Not tainted 6.12.118 #1\n"
		  "[    1.3] Hardware name: linux,dummy-virt (DT)\n"
		  "[    1.3] ---[ end Kernel panic - not syncing: Attempted to kill init! ]---\n");
	assert_int_equal(r->nsplats, 1);
	assert_int_equal(r->splats[0].kind, PG_SPLAT_PANIC);
	assert_true(r->splats[0].time > 1.29 && r->splats[0].time < 1.31);
	assert_non_null(strstr(r->splats[0].text, "Attempted to kill init"));
	assert_non_null(strstr(r->splats[0].text, "Hardware name"));
	assert_null(strstr(r->splats[0].text, "---[ end"));
	assert_counts(r, 1, 0, 0, 1);
	assert_false(pg_boot_result_ok(r));
	pg_boot_result_free(r);
}

static void test_oops_warn_bug(void **state)
{
	pg_boot_result *r;

	(void)state;
	r = parse("[    2.000000] Unable to handle kernel NULL pointer dereference at virtual address 0000000000000000\n"
		  "[    2.000001] Mem abort info:\n"
		  "[    2.000002] Internal error: Oops: 0000000096000004 [#1] PREEMPT SMP\n"
		  "[    2.000003] pc : pg_test+0x10/0x20\n"
		  "[    2.000004] ---[ end trace 0000000000000000 ]---\n"
		  "[    3.000000] ------------[ cut here ]------------\n"
		  "[    3.000001] WARNING: CPU: 0 PID: 1 at lib/foo.c:12 foo+0x4/0x8\n"
		  "[    3.000002] Modules linked in:\n"
		  "[    3.000003] ---[ end trace 0000000000000000 ]---\n"
		  "[    4.000000] kernel BUG at mm/slub.c:123!\n"
		  "[    4.500000] BUG: KASAN: slab-out-of-bounds in foo+0x1/0x2\n"
		  "[    5.000000] UBSAN: array-index-out-of-bounds in lib/x.c:3:9\n"
		  "[    6.000000] INFO: task kworker/0:1:12 blocked for more than 120 seconds.\n"
		  "[    7.000000] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:\n"
		  "[    8.000000] general protection fault, probably for non-canonical address\n");
	assert_int_equal(r->nsplats, 8);
	assert_int_equal(r->splats[0].kind, PG_SPLAT_OOPS);
	/* arm64's two headers make one Oops */
	assert_non_null(strstr(r->splats[0].text, "Internal error: Oops"));
	assert_non_null(strstr(r->splats[0].text, "pc : pg_test"));
	assert_int_equal(r->splats[0].line, 1);
	assert_int_equal(r->splats[1].kind, PG_SPLAT_WARN);
	assert_non_null(strstr(r->splats[1].text, "lib/foo.c:12"));
	assert_int_equal(r->splats[2].kind, PG_SPLAT_BUG);
	assert_int_equal(r->splats[3].kind, PG_SPLAT_BUG);
	assert_int_equal(r->splats[4].kind, PG_SPLAT_UBSAN);
	assert_int_equal(r->splats[5].kind, PG_SPLAT_HUNG);
	assert_int_equal(r->splats[6].kind, PG_SPLAT_STALL);
	assert_int_equal(r->splats[7].kind, PG_SPLAT_OOPS);
	assert_string_equal(pg_splat_kind_name(r->splats[1].kind), "warn");
	pg_boot_result_free(r);

	/* the reports that are no WARN(): lockdep, SLUB, kmemleak, OOM, hard lockups */
	r = parse("[    1.0] ======================================================\n"
		  "[    1.0] WARNING: possible circular locking dependency detected\n"
		  "[    1.0] 6.12.0 #1 Not tainted\n"
		  "\n"
		  "[    2.0] WARNING: suspicious RCU usage\n"
		  "\n"
		  "[    3.0] BUG kmalloc-64 (Not tainted): Poison overwritten\n"
		  "\n"
		  "[    4.0] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)\n"
		  "[    5.0] Out of memory: Killed process 12 (init) total-vm:1kB\n"
		  "\n"
		  "[    6.0] kworker/0:1: page allocation failure: order:4, mode:0xcc0\n"
		  "\n"
		  "[    7.0] NMI watchdog: Watchdog detected hard LOCKUP on cpu 1\n"
		  "\n"
		  "[    8.0] WARNING: this is not a kernel report header\n"
		  "[    9.0] BUG reports go to the list\n");
	assert_int_equal(r->nsplats, 7);
	assert_int_equal(r->splats[0].kind, PG_SPLAT_LOCKDEP);
	assert_int_equal(r->splats[1].kind, PG_SPLAT_LOCKDEP);
	assert_int_equal(r->splats[2].kind, PG_SPLAT_BUG);
	assert_int_equal(r->splats[3].kind, PG_SPLAT_LEAK);
	assert_int_equal(r->splats[4].kind, PG_SPLAT_OOM);
	assert_int_equal(r->splats[5].kind, PG_SPLAT_OOM);
	assert_int_equal(r->splats[6].kind, PG_SPLAT_BUG);
	assert_string_equal(pg_splat_kind_name(r->splats[0].kind), "lockdep");
	assert_string_equal(pg_splat_kind_name(r->splats[3].kind), "leak");
	assert_string_equal(pg_splat_kind_name(r->splats[4].kind), "oom");
	pg_boot_result_free(r);

	/* a splat fails a run whose tests all passed */
	r = parse("ok 1 a\n[    1.0] WARNING: CPU: 1 PID: 9 at x.c:1 f+0x0/0x4\n");
	assert_counts(r, 1, 0, 0, 0);
	assert_false(pg_boot_result_ok(r));
	pg_boot_result_free(r);
}

static void test_console_prefixes(void **state)
{
	pg_boot_result *r;

	(void)state;
	r = parse("<6>[    1.000000][    T1] KTAP version 1\r\n"
		  "<6>[    1.000001][    T1] 1..1\r\n"
		  "<6>[    1.000002][    T1]     # Subtest: s\r\n"
		  "<6>[    1.000003][    T1]     1..2\r\n"
		  "<6>[    1.000004][    C0]     ok 1 a\r\n"
		  "<6>[   12.345678][    T1]     ok 2 - b\r\n"
		  "<6>[   12.345679][    T1] ok 1 s\r\n");
	assert_counts(r, 2, 0, 0, 0);
	assert_int_equal(find(r, "s.b")->depth, 1);
	assert_true(r->boot_time > 12.3456 && r->boot_time < 12.3457);
	pg_boot_result_free(r);

	/* TAP 14, flat, no prefixes at all, tab indentation */
	r = parse("TAP version 14\n1..2\nok 1 - first\n\t# Subtest: t\n\tok 1 inner\nok 2 t\n");
	assert_counts(r, 2, 0, 0, 0);
	/* a tab is one level */
	assert_int_equal(find(r, "t.inner")->depth, 1);
	pg_boot_result_free(r);
}

static void test_garbage_never_crashes(void **state)
{
	static const char *const bad[] = {
		"", "\n\n\n", "ok", "ok x", "not ok", "1..", "1..x", "[", "[ 1.", "[    1.0",
		"<", "<9999999>", "[T]", "    # Subtest:", "# Subtest: \n ok 1", "ok 1 #",
		"ok 1 # SKIP", "ok 99999999999999999999999 big",
		"1..99999999999999999999999\n", "KTAP version 1\n        ok 1 deep\n",
		"    ok 1 a\nok 1 b\n        ok 1 c\n", "---[ end trace ]---",
		"\xff\xfe\x80 ok 1 \xc3\x28\n", "ok 1 \xe2\x80\xae" "evil\n",
	};
	char *buf;
	size_t i, n = 1 << 20;
	unsigned seed = 12345;
	pg_boot_result *r;

	(void)state;
	for (i = 0; i < PG_ARRAY_SIZE(bad); i++) {
		r = parse(bad[i]);
		pg_boot_result_free(r);
	}
	/* random bytes biased towards KTAP's alphabet, with NULs inside */
	buf = malloc(n);
	assert_non_null(buf);
	for (i = 0; i < n; i++) {
		static const char alpha[] = "ok not 1..# Subtest:KTAP version[]. \n\t<>0123456789";

		seed = seed * 1103515245u + 12345u;
		buf[i] = (seed >> 24) % 5 ? alpha[(seed >> 16) % (sizeof(alpha) - 1)]
					  : (char)(seed >> 8);
	}
	assert_int_equal(pg_ktap_parse(&r, buf, n), 0);
	for (i = 0; i < r->ntests; i++) {
		assert_non_null(r->tests[i].path);
		assert_true(r->tests[i].parent < (long)i);
	}
	pg_boot_result_free(r);
	free(buf);

	assert_int_equal(pg_ktap_parse(&r, NULL, 0), 0);
	assert_int_equal(r->ntests, 0);
	pg_boot_result_free(r);
	assert_int_not_equal(pg_ktap_parse(NULL, "ok 1 a", 6), 0);
	pg_boot_result_free(NULL);
}

static void test_caps(void **state)
{
	pg_buf log = PG_BUF_INIT;
	pg_boot_result *r;
	size_t i, total = PG_KTAP_MAX_TESTS + 500;

	(void)state;
	for (i = 1; i <= total; i++)
		assert_int_equal(pg_buf_printf(&log, "ok %zu t%zu\n", i, i), 0);
	for (i = 0; i < PG_SPLAT_MAX + 5; i++)
		assert_int_equal(pg_buf_puts(&log, "WARNING: CPU: 0 PID: 1 at x.c:1 f\n"), 0);
	/* a very long line and a very deep one */
	for (i = 0; i < 3 * PG_KTAP_MAX_LINE; i++)
		assert_int_equal(pg_buf_putc(&log, 'x'), 0);
	assert_int_equal(pg_buf_putc(&log, '\n'), 0);
	for (i = 0; i < 4 * (PG_KTAP_MAX_DEPTH + 3); i++)
		assert_int_equal(pg_buf_putc(&log, ' '), 0);
	assert_int_equal(pg_buf_puts(&log, "ok 1 too-deep\n"), 0);

	assert_int_equal(pg_ktap_parse(&r, log.ptr, log.len), 0);
	assert_int_equal(r->ntests, PG_KTAP_MAX_TESTS);
	assert_int_equal(r->passed, total);
	assert_int_equal(r->nsplats, PG_SPLAT_MAX);
	assert_true(r->truncated);
	pg_boot_result_free(r);
	pg_buf_release(&log);
}

static void test_long_names_are_capped_and_clean(void **state)
{
	pg_buf log = PG_BUF_INIT;
	pg_boot_result *r;
	size_t i;

	(void)state;
	assert_int_equal(pg_buf_puts(&log, "ok 1 "), 0);
	for (i = 0; i < 1000; i++)
		assert_int_equal(pg_buf_putc(&log, 'n'), 0);
	assert_int_equal(pg_buf_puts(&log, "\nok 2 bad\xff" "name\n"), 0);
	assert_int_equal(pg_ktap_parse(&r, log.ptr, log.len), 0);
	assert_int_equal(r->ntests, 2);
	assert_true(strlen(r->tests[0].name) <= 256);
	assert_string_equal(r->tests[1].name, "bad\xef\xbf\xbdname");
	pg_boot_result_free(r);
	pg_buf_release(&log);
}

static void test_render_text(void **state)
{
	pg_boot_result *r;
	pg_buf out = PG_BUF_INIT;
	const char *last;

	(void)state;
	r = parse(kunit_log);
	assert_int_equal(pg_ktap_render_text(&out, r), 0);
	assert_non_null(strstr(out.ptr, "ok       flex.sizes.count-1\n"));
	assert_non_null(strstr(out.ptr, "skip     flex.randstruct  # needs RANDSTRUCT_FULL\n"));
	assert_non_null(strstr(out.ptr, "boot: 1.250 s, marker seen, powered off\n"));
	/* suites are not listed, only their leaves */
	assert_null(strstr(out.ptr, "ok       flex\n"));
	pg_buf_rtrim(&out);
	last = strrchr(out.ptr, '\n');
	assert_non_null(last);
	assert_string_equal(last + 1, "ktap: 4 passed, 0 failed, 1 skipped");
	pg_buf_release(&out);
	pg_boot_result_free(r);
}

static void test_render_json(void **state)
{
	pg_boot_result *r;
	pg_buf out = PG_BUF_INIT;
	json_error_t jerr;
	json_t *root, *tests, *t;

	(void)state;
	r = parse("[    1.5] ok 1 a\n[    1.6] not ok 2 b\n"
		  "[    1.7] WARNING: CPU: 0 PID: 1 at x.c:1 \"q\"\n");
	assert_int_equal(pg_ktap_render_json(&out, r), 0);
	root = json_loads(out.ptr, 0, &jerr);
	assert_non_null(root);
	assert_false(json_is_true(json_object_get(root, "ok")));
	assert_int_equal(json_integer_value(json_object_get(root, "passed")), 1);
	assert_int_equal(json_integer_value(json_object_get(root, "failed")), 1);
	assert_true(json_real_value(json_object_get(root, "boot_time")) > 1.69);
	tests = json_object_get(root, "tests");
	assert_int_equal(json_array_size(tests), 2);
	t = json_array_get(tests, 1);
	assert_string_equal(json_string_value(json_object_get(t, "status")), "fail");
	assert_string_equal(json_string_value(json_object_get(t, "path")), "b");
	t = json_array_get(json_object_get(root, "splats"), 0);
	assert_string_equal(json_string_value(json_object_get(t, "kind")), "warn");
	assert_non_null(strstr(json_string_value(json_object_get(t, "text")), "\"q\""));
	json_decref(root);
	pg_buf_release(&out);
	pg_boot_result_free(r);
}

/* The gaps of a console as one string, one line each. */
static char *gaps_of(const char *log, const char *nonce, int *n)
{
	pg_boot_result *r = parse(log);
	pg_buf why = PG_BUF_INIT;

	*n = pg_boot_evidence_gaps(&why, r, nonce);
	assert_true(*n >= 0);
	pg_boot_result_free(r);
	return pg_buf_detach(&why);
}

#define GOOD_KTAP "[ 1.0] KTAP version 1\n[ 1.0] 1..1\n[ 1.0]     # Subtest: s\n" \
	"[ 1.0]     1..1\n[ 1.0]     ok 1 a\n[ 1.0] ok 1 s\n"
#define MARKER_OF(n) "[ 2.0] pullgate-init: done nonce=" n "\n"
#define POWER_DOWN "[ 2.1] reboot: Power down\n"

static void assert_gap(const char *log, const char *nonce, const char *want)
{
	int n;
	char *why = gaps_of(log, nonce, &n);

	if (!want) {
		if (n != 0)
			fail_msg("unexpected gaps: %s", why);
	} else if (!strstr(why, want)) {
		fail_msg("no gap '%s' in: %s", want, why);
	}
	free(why);
}

static void test_evidence_gaps(void **state)
{
	(void)state;
	assert_gap(GOOD_KTAP MARKER_OF("abc123") POWER_DOWN, "abc123", NULL);
	assert_gap(GOOD_KTAP MARKER_OF("abc123") POWER_DOWN, NULL, NULL);
	/* each piece of evidence, missing */
	assert_gap(MARKER_OF("abc123") POWER_DOWN, "abc123", "no KTAP output");
	assert_gap("KTAP version 1\nok 1 a\n" MARKER_OF("abc123") POWER_DOWN, "abc123",
		   "no plan");
	assert_gap("KTAP version 1\n1..0\n" MARKER_OF("abc123") POWER_DOWN, "abc123",
		   "no test passed");
	assert_gap("KTAP version 1\n1..3\nok 1 a\nok 2 b\n" MARKER_OF("abc123") POWER_DOWN,
		   "abc123", "announced 3 results and 2 arrived");
	assert_gap(GOOD_KTAP GOOD_KTAP MARKER_OF("abc123") POWER_DOWN, "abc123", "2 KTAP runs");
	assert_gap(GOOD_KTAP POWER_DOWN, "abc123", "never appeared");
	assert_gap(GOOD_KTAP "[ 2.0] pullgate-init: done\n" POWER_DOWN, "abc123",
		   "carries no nonce");
	assert_gap(GOOD_KTAP MARKER_OF("0ld") POWER_DOWN, "abc123", "nonce 0ld, not this boot's abc123");
	assert_gap(GOOD_KTAP MARKER_OF("abc123") MARKER_OF("0ld") POWER_DOWN, "abc123",
		   "different nonces");
	assert_gap(GOOD_KTAP MARKER_OF("abc123"), "abc123", "did not power off");
	/* a power-off before the marker is an earlier boot's */
	assert_gap(GOOD_KTAP POWER_DOWN MARKER_OF("abc123"), "abc123", "did not power off");
	/* the kernel's echo of its command line is no marker */
	assert_gap(GOOD_KTAP "[ 0.0] Kernel command line: pullgate.nonce=abc123\n" POWER_DOWN,
		   "abc123", "never appeared");
}

static void test_ok_needs_evidence(void **state)
{
	pg_boot_result *r;

	(void)state;
	r = parse(GOOD_KTAP MARKER_OF("n1") POWER_DOWN);
	assert_true(pg_boot_result_ok(r));
	assert_string_equal(r->marker_nonce, "n1");
	assert_int_equal(r->plan, 1);
	assert_int_equal(r->top_results, 1);
	pg_boot_result_free(r);
	/* passes without the marker or the power-off prove nothing */
	r = parse(GOOD_KTAP);
	assert_int_equal(r->passed, 1);
	assert_false(pg_boot_result_ok(r));
	pg_boot_result_free(r);
}

static void test_suites(void **state)
{
	pg_boot_result *r;
	pg_ktap_suite *s = NULL;
	size_t n = 0, i, sum[4] = { 0, 0, 0, 0 };

	(void)state;
	r = parse(kunit_log);
	assert_int_equal(pg_ktap_suites(&s, &n, r), 0);
	assert_int_equal(n, 2);
	assert_string_equal(s[0].name, "flex");
	assert_int_equal(s[0].passed, 3);
	assert_int_equal(s[0].skipped, 1);
	assert_string_equal(s[1].name, "kconfig");
	assert_int_equal(s[1].passed, 1);
	free(s);
	pg_boot_result_free(r);

	/* a crash mid-suite: the missing suite is a suite of its own, crashed */
	r = parse("KTAP version 1\n1..2\n    # Subtest: flex\n    1..3\n    ok 1 a\n"
		  "    not ok 2 b\n");
	assert_int_equal(pg_ktap_suites(&s, &n, r), 0);
	assert_int_equal(n, 2);
	assert_string_equal(s[0].name, "flex");
	assert_string_equal(s[1].name, "#2");
	for (i = 0; i < n; i++) {
		sum[0] += s[i].passed;
		sum[1] += s[i].failed;
		sum[2] += s[i].skipped;
		sum[3] += s[i].crashed;
	}
	/* the suites' counts add up to the console's */
	assert_int_equal(sum[0], r->passed);
	assert_int_equal(sum[1], r->failed);
	assert_int_equal(sum[2], r->skipped);
	assert_int_equal(sum[3], r->crashed);
	free(s);
	pg_boot_result_free(r);
}

static void test_splat_key(void **state)
{
	pg_boot_result *a, *b;
	pg_buf ka = PG_BUF_INIT, kb = PG_BUF_INIT;

	(void)state;
	a = parse("[ 1.0] WARNING: CPU: 0 PID: 1 at lib/overflow.c:10 probe+0x10/0x20\n");
	b = parse("[ 3.5] WARNING: CPU: 1 PID: 77 at lib/overflow.c:10 probe+0x14/0x28\n");
	assert_int_equal(pg_splat_key(&ka, &a->splats[0]), 0);
	assert_int_equal(pg_splat_key(&kb, &b->splats[0]), 0);
	/* the same WARN at another moment is the same splat */
	assert_string_equal(ka.ptr, kb.ptr);
	assert_string_equal(ka.ptr, "warn WARNING: CPU: # PID: # at lib/overflow.c:10 probe+0x#/0x#");
	pg_boot_result_free(b);
	pg_buf_clear(&kb);
	/* another line of the source is another splat */
	b = parse("[ 1.0] WARNING: CPU: 0 PID: 1 at lib/overflow.c:11 probe+0x10/0x20\n");
	assert_int_equal(pg_splat_key(&kb, &b->splats[0]), 0);
	assert_string_not_equal(ka.ptr, kb.ptr);
	pg_boot_result_free(b);
	pg_buf_clear(&kb);
	b = parse("[ 1.0] Unable to handle kernel paging request at virtual address dead000000000100\n");
	assert_int_equal(pg_splat_key(&kb, &b->splats[0]), 0);
	assert_string_equal(kb.ptr, "oops Unable to handle kernel paging request at virtual address #");
	pg_boot_result_free(a);
	pg_boot_result_free(b);
	pg_buf_release(&ka);
	pg_buf_release(&kb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nested_suites),
		cmocka_unit_test(test_boot_time_from_marker),
		cmocka_unit_test(test_skips),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_failure_diagnostics),
		cmocka_unit_test(test_crash_mid_suite),
		cmocka_unit_test(test_new_block_after_crash),
		cmocka_unit_test(test_panic),
		cmocka_unit_test(test_oops_warn_bug),
		cmocka_unit_test(test_console_prefixes),
		cmocka_unit_test(test_garbage_never_crashes),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_long_names_are_capped_and_clean),
		cmocka_unit_test(test_render_text),
		cmocka_unit_test(test_render_json),
		cmocka_unit_test(test_evidence_gaps),
		cmocka_unit_test(test_ok_needs_evidence),
		cmocka_unit_test(test_suites),
		cmocka_unit_test(test_splat_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
