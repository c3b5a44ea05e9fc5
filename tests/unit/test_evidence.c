/* test_evidence.c - unit tests for judging a boot on its evidence and against the base's boot. */
#include "tests/unit/unit.h"

#include "pipeline/evidence.h"
#include "common/array.h"
#include "common/compat.h"
#include "common/error.h"
#include "common/str.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>

#define KTAP_HEAD "[ 1.0] KTAP version 1\n"
#define SUITE_A_OK "[ 1.0]     # Subtest: a\n[ 1.0]     1..2\n[ 1.0]     ok 1 x\n" \
	"[ 1.0]     ok 2 y\n"
#define SUITE_A_FAIL_Y "[ 1.0]     # Subtest: a\n[ 1.0]     1..2\n[ 1.0]     ok 1 x\n" \
	"[ 1.0]     not ok 2 y\n"
#define SUITE_B_OK "[ 1.1]     # Subtest: b\n[ 1.1]     1..1\n[ 1.1]     ok 1 z\n"
#define SPLAT "[ 1.5] WARNING: CPU: 0 PID: 1 at lib/x.c:10 f+0x1/0x2\n"
#define END(n) "[ 2.0] pullgate-init: done nonce=" n "\n[ 2.1] reboot: Power down\n"

#define two_ok KTAP_HEAD "[ 1.0] 1..2\n" SUITE_A_OK "[ 1.0] ok 1 a\n" SUITE_B_OK "[ 1.1] ok 2 b\n"
#define a_fails KTAP_HEAD "[ 1.0] 1..2\n" SUITE_A_FAIL_Y "[ 1.0] not ok 1 a\n" SUITE_B_OK \
	"[ 1.1] ok 2 b\n"
#define only_a KTAP_HEAD "[ 1.0] 1..1\n" SUITE_A_OK "[ 1.0] ok 1 a\n"

typedef struct judged {
	pg_report *r;
	pg_boot_result *m, *b;
} judged;

/* Judge merge (console, exit status) against base (NULL: none) under the default policy. */
static void judge(judged *j, const pg_policy *policy, const char *merge, int exit_status,
		  const char *base)
{
	pg_policy *own = NULL;
	pg_boot_run mr = { NULL, exit_status, false, "m1" }, br = { NULL, 0, false, "b1" };

	memset(j, 0, sizeof(*j));
	if (!policy) {
		assert_int_equal(pg_policy_new_default(&own), 0);
		policy = own;
	}
	assert_int_equal(pg_report_new(&j->r), 0);
	if (merge) {
		assert_int_equal(pg_ktap_parse(&j->m, merge, strlen(merge)), 0);
		mr.result = j->m;
	}
	if (base) {
		assert_int_equal(pg_ktap_parse(&j->b, base, strlen(base)), 0);
		br.result = j->b;
	}
	assert_int_equal(pg_boot_judge(j->r, policy, &mr, base ? &br : NULL, 300), 0);
	pg_policy_free(own);
}

static void release(judged *j)
{
	pg_report_free(j->r);
	pg_boot_result_free(j->m);
	pg_boot_result_free(j->b);
}

/* The one finding of check (there must be exactly one). */
static const pg_finding *only(const pg_report *r, enum pg_check_id check)
{
	size_t i;
	const pg_finding *f = NULL;

	assert_int_equal(pg_report_count_check(r, check), 1);
	for (i = 0; i < r->nfindings; i++)
		if (r->findings[i].check == check)
			f = &r->findings[i];
	return f;
}

static const pg_suite_result *row(const pg_report *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nsuites; i++)
		if (!strcmp(r->suites[i].name, name))
			return &r->suites[i];
	fail_msg("no suite row '%s'", name);
	return NULL;
}

static void test_clean_against_clean(void **state)
{
	judged j;

	(void)state;
	judge(&j, NULL, two_ok END("m1"), 0, two_ok END("b1"));
	assert_int_equal(j.r->nfindings, 0);
	assert_int_equal(j.r->nsuites, 2);
	assert_string_equal(row(j.r, "a")->verdict, "ok");
	assert_true(row(j.r, "a")->on_base);
	assert_int_equal(row(j.r, "a")->merge.passed, 2);
	assert_int_equal(row(j.r, "b")->base.passed, 1);
	release(&j);
}

static void test_failures_against_the_base(void **state)
{
	judged j;
	const pg_finding *f;

	(void)state;
	/* the base fails a.y too: pre-existing, a warning */
	judge(&j, NULL, a_fails END("m1"), 0, a_fails END("b1"));
	f = only(j.r, PG_CHECK_KTAP_FAILURE);
	assert_int_equal(f->severity, PG_SEV_WARNING);
	assert_non_null(strstr(f->message, "a.y failed (pre-existing"));
	assert_string_equal(row(j.r, "a")->verdict, "pre-existing");
	assert_int_equal(pg_report_verdict(j.r), PG_VERDICT_ACCEPT);
	release(&j);

	/* a new failure blocks */
	judge(&j, NULL, a_fails END("m1"), 0, two_ok END("b1"));
	f = only(j.r, PG_CHECK_KTAP_FAILURE);
	assert_int_equal(f->severity, PG_SEV_ERROR);
	assert_string_equal(f->message, "a.y failed");
	assert_string_equal(row(j.r, "a")->verdict, "new-failures");
	assert_int_equal(pg_report_verdict(j.r), PG_VERDICT_REJECT);
	release(&j);

	/* a base without evidence excuses nothing: judged on its own */
	judge(&j, NULL, a_fails END("m1"), 0, a_fails);
	assert_int_equal(only(j.r, PG_CHECK_KTAP_FAILURE)->severity, PG_SEV_ERROR);
	assert_false(row(j.r, "a")->on_base);
	release(&j);
}

static void test_splats_against_the_base(void **state)
{
	judged j;

	(void)state;
	/* on the base only: not the merge's; the merge's own evidence is clean */
	judge(&j, NULL, two_ok END("m1"), 0, two_ok SPLAT END("b1"));
	assert_int_equal(j.r->nfindings, 0);
	release(&j);
	/* on both: pre-existing */
	judge(&j, NULL, two_ok SPLAT END("m1"), 0,
	      two_ok "[ 9.9] WARNING: CPU: 1 PID: 9 at lib/x.c:10 f+0x3/0x4\n" END("b1"));
	assert_int_equal(only(j.r, PG_CHECK_KERNEL_SPLAT)->severity, PG_SEV_WARNING);
	release(&j);
	/* new */
	judge(&j, NULL, two_ok SPLAT END("m1"), 0, two_ok END("b1"));
	assert_int_equal(only(j.r, PG_CHECK_KERNEL_SPLAT)->severity, PG_SEV_ERROR);
	release(&j);
}

static void test_vanished_suite(void **state)
{
	judged j;
	const pg_finding *f;

	(void)state;
	judge(&j, NULL, only_a END("m1"), 0, two_ok END("b1"));
	f = only(j.r, PG_CHECK_BOOT_EVIDENCE);
	assert_int_equal(f->severity, PG_SEV_ERROR);
	assert_non_null(strstr(f->message, "suite b ran on the base and did not report"));
	assert_string_equal(row(j.r, "b")->verdict, "vanished");
	assert_false(row(j.r, "b")->on_merge);
	release(&j);
	/* a suite only the merge has is new, and fine */
	judge(&j, NULL, two_ok END("m1"), 0, only_a END("b1"));
	assert_int_equal(j.r->nfindings, 0);
	assert_string_equal(row(j.r, "b")->verdict, "added");
	release(&j);
}

static void test_evidence_is_not_negotiable(void **state)
{
	pg_policy *p = NULL;
	judged j;

	(void)state;
	/* a good console, but boot.sh said it failed */
	judge(&j, NULL, two_ok END("m1"), 1, two_ok END("b1"));
	assert_non_null(strstr(only(j.r, PG_CHECK_BOOT_EVIDENCE)->message, "exited with status 1"));
	release(&j);
	/* another boot's marker */
	judge(&j, NULL, two_ok END("b1"), 0, two_ok END("b1"));
	assert_non_null(strstr(only(j.r, PG_CHECK_BOOT_EVIDENCE)->message, "not this boot's m1"));
	release(&j);
	/* no console at all */
	judge(&j, NULL, NULL, 0, two_ok END("b1"));
	assert_true(pg_report_count_check(j.r, PG_CHECK_BOOT_EVIDENCE) >= 1);
	assert_non_null(strstr(j.r->findings[0].message, "wrote no console"));
	release(&j);
	/* a policy that turns the KTAP checks off cannot turn the evidence off */
	assert_int_equal(pg_policy_new_default(&p), 0);
	p->severity[PG_CHECK_KTAP_FAILURE] = PG_SEV_OFF;
	judge(&j, p, KTAP_HEAD "[ 1.0] 1..0\n" END("m1"), 0, NULL);
	assert_non_null(strstr(only(j.r, PG_CHECK_BOOT_EVIDENCE)->message, "no test passed"));
	assert_int_equal(only(j.r, PG_CHECK_BOOT_EVIDENCE)->severity, PG_SEV_ERROR);
	release(&j);
	pg_policy_free(p);
}


/*
 * The gate and `pullgate ktap` are one judge: for console, both reject
 * (the gate with an error finding naming what, against a clean base and
 * with none), or both accept.
 */
static void one_judge_rejects(const char *console, enum pg_check_id check, const char *what)
{
	judged j;
	size_t i;
	int found = 0;

	judge(&j, NULL, console, 0, two_ok END("b1"));
	assert_int_equal(pg_report_verdict(j.r), PG_VERDICT_REJECT);
	for (i = 0; i < j.r->nfindings; i++)
		if (j.r->findings[i].check == check && j.r->findings[i].severity == PG_SEV_ERROR &&
		    strstr(j.r->findings[i].message, what))
			found++;
	if (found != 1)
		fail_msg("no one error finding with '%s' for:\n%s", what, console);
	assert_false(pg_boot_result_ok(j.m));
	assert_true(pg_ktap_problems(j.m, "m1", NULL, NULL) > 0);
	release(&j);
	judge(&j, NULL, console, 0, NULL);
	assert_int_equal(pg_report_verdict(j.r), PG_VERDICT_REJECT);
	release(&j);
}

static void test_failures_at_any_depth(void **state)
{
	char *big;
	pg_buf b = PG_BUF_INIT;
	size_t i;

	(void)state;
	/* a suite says "not ok" while each of its cases says ok */
	one_judge_rejects(KTAP_HEAD "[ 1.0] 1..2\n" SUITE_A_OK "[ 1.0] not ok 1 a\n" SUITE_B_OK
			  "[ 1.1] ok 2 b\n" END("m1"),
			  PG_CHECK_KTAP_FAILURE, "a failed, though none of its tests did");
	/* a suite's result never came: the next suite began (a crash mid-suite) */
	one_judge_rejects(KTAP_HEAD "[ 1.0] 1..2\n" SUITE_A_OK SUITE_B_OK "[ 1.1] ok 2 b\n"
			  END("m1"),
			  PG_CHECK_KTAP_FAILURE, "a crashed");
	/* a failing case whose log holds a block of its own before its "not ok" */
	one_judge_rejects(KTAP_HEAD "[ 1.0] 1..2\n[ 1.0]     # Subtest: a\n[ 1.0]     1..2\n"
			  "[ 1.0]     ok 1 x\n[ 1.0]         KTAP version 1\n"
			  "[ 1.0]     not ok 2 y\n[ 1.0] not ok 1 a\n" SUITE_B_OK "[ 1.1] ok 2 b\n"
			  END("m1"),
			  PG_CHECK_KTAP_FAILURE, "a.y failed");
	/* a "not ok" the parser cannot read as a result */
	one_judge_rejects(KTAP_HEAD "[ 1.0] 1..2\n" SUITE_A_OK "[ 1.0]     not ok - y\n"
			  "[ 1.0] ok 1 a\n" SUITE_B_OK "[ 1.1] ok 2 b\n" END("m1"),
			  PG_CHECK_BOOT_EVIDENCE, "holds a \"not ok\" that is no result");
	/* a "not ok" past the cap of tests kept */
	assert_int_equal(pg_buf_puts(&b, KTAP_HEAD "[ 1.0] 1..2\n" SUITE_A_OK "[ 1.0] ok 1 a\n"
				     "[ 1.2]     # Subtest: b\n"), 0);
	assert_int_equal(pg_buf_printf(&b, "[ 1.2]     1..%d\n", PG_KTAP_MAX_TESTS + 1), 0);
	for (i = 1; i <= PG_KTAP_MAX_TESTS; i++)
		assert_int_equal(pg_buf_printf(&b, "[ 1.2]     ok %zu t%zu\n", i, i), 0);
	assert_int_equal(pg_buf_printf(&b, "[ 1.2]     not ok %d last\n[ 1.2] ok 2 b\n"
				       END("m1"), PG_KTAP_MAX_TESTS + 1), 0);
	big = pg_buf_detach(&b);
	one_judge_rejects(big, PG_CHECK_BOOT_EVIDENCE, "past the parser's caps");
	free(big);
	/* and still: cases that are ok at every depth, with a skip, pass both */
	{
		judged j;

		judge(&j, NULL, two_ok END("m1"), 0, NULL);
		assert_int_equal(pg_report_verdict(j.r), PG_VERDICT_ACCEPT);
		assert_true(pg_boot_result_ok(j.m));
		release(&j);
	}
}

/* ---- the property: consoles from KTAP's grammar, damaged at random ---------------- */

/* splitmix64: the same consoles for the same seed, on every machine */
static uint64_t next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static unsigned pick(uint64_t *x, unsigned n)
{
	return (unsigned)(next(x) % n);
}

#define MAX_LINES 512

typedef struct console {
	char *line[MAX_LINES];
	size_t n;
} console;

static void add(console *c, uint64_t *x, unsigned depth, const char *fmt, ...)
	PG_PRINTF(4, 5);
static void add(console *c, uint64_t *x, unsigned depth, const char *fmt, ...)
{
	pg_buf b = PG_BUF_INIT;
	va_list ap;

	if (c->n >= MAX_LINES)
		return;
	/* most lines carry a timestamp, some a log level too */
	if (pick(x, 8))
		assert_int_equal(pg_buf_printf(&b, "%s[%5u.%06u] ", pick(x, 6) ? "" : "<6>",
					       pick(x, 30), pick(x, 1000000)), 0);
	assert_int_equal(pg_buf_printf(&b, "%*s", (int)(4 * depth), ""), 0);
	va_start(ap, fmt);
	assert_int_equal(pg_buf_vprintf(&b, fmt, ap), 0);
	va_end(ap);
	c->line[c->n++] = pg_buf_detach(&b);
}

static const char *const printk[] = {
	"random: crng init done", "virtio_blk virtio1: [vda] 2048 512-byte logical blocks",
	"Run /init as init process", "ok, that went well", "clocksource: Switched to arch_sys_counter",
	"Freeing unused kernel memory: 1024K",
};
/* crash markers, as the splat scanner knows them at the start of a line */
static const char *const crash[] = {
	"Kernel panic - not syncing: Attempted to kill init!",
	"BUG: kernel NULL pointer dereference, address: 0000000000000008",
	"WARNING: CPU: 0 PID: 1 at lib/overflow_kunit.c:42 f+0x10/0x20",
	"Unable to handle kernel paging request at virtual address dead",
	"UBSAN: array-index-out-of-bounds in lib/x.c:3:7",
	"Oops: 0000 [#1] PREEMPT SMP",
};

/* A test at depth: a leaf, or (one in four, while not too deep) a parameterised case. */
static void gen_test(console *c, uint64_t *x, unsigned depth, unsigned k)
{
	unsigned i, n;

	if (depth < 3 && !pick(x, 4)) {
		n = 1 + pick(x, 3);
		add(c, x, depth + 1, "KTAP version 1");
		add(c, x, depth + 1, "# Subtest: case%u", k);
		if (pick(x, 2))
			add(c, x, depth + 1, "1..%u", n);
		for (i = 1; i <= n; i++)
			gen_test(c, x, depth + 1, i);
		add(c, x, depth, "ok %u case%u", k, k);
		return;
	}
	if (!pick(x, 10))
		add(c, x, depth, "ok %u skipped%u # SKIP not here", k, k);
	else
		add(c, x, depth, "ok %u t%u", k, k);
	if (!pick(x, 6))
		add(c, x, 0, "%s", printk[pick(x, PG_ARRAY_SIZE(printk))]);
}

/* A good boot: every suite and case ok, the marker with nonce m1, a power-off. */
static void gen_console(console *c, uint64_t *x)
{
	unsigned s, nsuites = 1 + pick(x, 3), i, n;

	add(c, x, 0, "Booting Linux on physical CPU 0x0");
	add(c, x, 0, "KTAP version 1");
	add(c, x, 0, "1..%u", nsuites);
	for (s = 1; s <= nsuites; s++) {
		n = 1 + pick(x, 5);
		add(c, x, 1, "KTAP version 1");
		add(c, x, 1, "# Subtest: suite%u", s);
		add(c, x, 1, "1..%u", n);
		for (i = 1; i <= n; i++)
			gen_test(c, x, 1, i);
		add(c, x, 0, "ok %u suite%u", s, s);
	}
	add(c, x, 0, "pullgate-init: done nonce=m1");
	add(c, x, 0, "reboot: Power down");
}

/* Damage the console; true when the damage put a failure or a crash in it. */
static bool damage(console *c, uint64_t *x)
{
	unsigned what = pick(x, 9), at = c->n ? pick(x, (unsigned)c->n) : 0;
	char *l, *p;
	pg_buf b = PG_BUF_INIT;
	bool failure = false;

	if (!c->n)
		return false;
	l = c->line[at];
	switch (what) {
	case 0: /* a line lost */
		free(l);
		memmove(&c->line[at], &c->line[at + 1], (c->n - at - 1) * sizeof(char *));
		c->n--;
		break;
	case 1: /* a line twice */
		if (c->n < MAX_LINES) {
			memmove(&c->line[at + 1], &c->line[at], (c->n - at) * sizeof(char *));
			c->line[at + 1] = pg_strdup(l);
			c->n++;
		}
		break;
	case 2: /* two lines swapped */
		if (at + 1 < c->n) {
			c->line[at] = c->line[at + 1];
			c->line[at + 1] = l;
		}
		break;
	case 3: /* nesting changed: four spaces more, or fewer, after the console prefix */
		p = strstr(l, "] ") ? strstr(l, "] ") + 2 : l;
		if (pick(x, 2) || strncmp(p, "    ", 4))
			assert_int_equal(pg_buf_printf(&b, "%.*s    %s", (int)(p - l), l, p), 0);
		else
			assert_int_equal(pg_buf_printf(&b, "%.*s%s", (int)(p - l), l, p + 4), 0);
		free(l);
		c->line[at] = pg_buf_detach(&b);
		break;
	case 4: /* the log cut here (a hang, a kill) */
		while (c->n > at)
			free(c->line[--c->n]);
		break;
	case 5: /* a crash */
		if (c->n < MAX_LINES) {
			memmove(&c->line[at + 1], &c->line[at], (c->n - at) * sizeof(char *));
			c->line[at] = pg_strdup(crash[pick(x, PG_ARRAY_SIZE(crash))]);
			c->n++;
			failure = true;
		}
		break;
	case 6: /* a result turns into a failure */
		if ((p = strstr(l, "ok ")) && (p == l || p[-1] == ' ' || p[-1] == ']')) {
			assert_int_equal(pg_buf_printf(&b, "%.*snot %s", (int)(p - l), l, p), 0);
			free(l);
			c->line[at] = pg_buf_detach(&b);
			failure = true;
		}
		break;
	case 7: /* printk text spliced into the middle of a line */
		assert_int_equal(pg_buf_printf(&b, "%.*s%s%s", (int)(strlen(l) / 2), l,
					       printk[pick(x, PG_ARRAY_SIZE(printk))],
					       l + strlen(l) / 2), 0);
		free(l);
		c->line[at] = pg_buf_detach(&b);
		break;
	default: /* a failing result spliced into the middle of a line */
		assert_int_equal(pg_buf_printf(&b, "%.*snot ok %u spliced%s", (int)(strlen(l) / 2), l,
					       1 + pick(x, 3), l + strlen(l) / 2), 0);
		free(l);
		c->line[at] = pg_buf_detach(&b);
		failure = true;
		break;
	}
	return failure;
}

/* Whether "not ok" stands as a word anywhere in the text (what a reader would see). */
static bool says_not_ok(const char *text)
{
	const char *p;

	for (p = text; (p = strstr(p, "not ok")); p += 6)
		if (p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_'))
			return true;
	return false;
}

static unsigned long env_ul(const char *name, unsigned long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 10) : dflt;
}

/*
 * For each console: the gate's judge and `pullgate ktap`'s agree, and
 * neither accepts a console that holds a "not ok" or a crash anywhere.
 * PULLGATE_PROPERTY_CONSOLES and PULLGATE_PROPERTY_SEED let the bench run
 * more of them (bench/judge-property.sh).
 */
static void test_property_one_judge(void **state)
{
	unsigned long count = env_ul("PULLGATE_PROPERTY_CONSOLES", 3000), k;
	uint64_t x = env_ul("PULLGATE_PROPERTY_SEED", 1);
	unsigned long rejected = 0, failing = 0;

	(void)state;
	for (k = 0; k < count; k++) {
		console c = { { NULL }, 0 };
		pg_buf text = PG_BUF_INIT;
		bool failure = false, gate_ok, ktap_ok;
		unsigned d, nd = pick(&x, 4);
		judged j;
		size_t i;

		gen_console(&c, &x);
		for (d = 0; d < nd; d++)
			failure |= damage(&c, &x);
		for (i = 0; i < c.n; i++) {
			assert_int_equal(pg_buf_printf(&text, "%s\n", c.line[i]), 0);
			free(c.line[i]);
		}
		failure = failure && (says_not_ok(text.ptr) || strstr(text.ptr, "Kernel panic") ||
				      strstr(text.ptr, "BUG: ") || strstr(text.ptr, "WARNING: CPU") ||
				      strstr(text.ptr, "Unable to handle") || strstr(text.ptr, "UBSAN") ||
				      strstr(text.ptr, "Oops: "));
		failure |= says_not_ok(text.ptr);
		judge(&j, NULL, text.ptr, 0, NULL);
		gate_ok = pg_report_verdict(j.r) == PG_VERDICT_ACCEPT;
		ktap_ok = pg_ktap_problems(j.m, "m1", NULL, NULL) == 0;
		if (gate_ok != ktap_ok)
			fail_msg("console %lu (seed %lu): the gate says %s, pullgate ktap %s:\n%s", k,
				 env_ul("PULLGATE_PROPERTY_SEED", 1), gate_ok ? "accept" : "reject",
				 ktap_ok ? "accept" : "reject", text.ptr);
		if (failure && gate_ok)
			fail_msg("console %lu (seed %lu) holds a failure and was accepted:\n%s", k,
				 env_ul("PULLGATE_PROPERTY_SEED", 1), text.ptr);
		rejected += !gate_ok;
		failing += failure;
		release(&j);
		pg_buf_release(&text);
	}
	/* the generator made both kinds: the property was tested, not assumed */
	assert_true(failing > count / 10);
	assert_true(rejected < count);
	print_message("%lu consoles, %lu with a failure, %lu rejected, 0 disagreements\n", count,
		      failing, rejected);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_against_clean),
		cmocka_unit_test(test_failures_against_the_base),
		cmocka_unit_test(test_splats_against_the_base),
		cmocka_unit_test(test_vanished_suite),
		cmocka_unit_test(test_evidence_is_not_negotiable),
		cmocka_unit_test(test_failures_at_any_depth),
		cmocka_unit_test(test_property_one_judge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
