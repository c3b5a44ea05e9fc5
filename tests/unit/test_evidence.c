/* test_evidence.c - unit tests for judging a boot on its evidence and against the base's boot. */
#include "tests/unit/unit.h"

#include "pipeline/evidence.h"
#include "common/error.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_against_clean),
		cmocka_unit_test(test_failures_against_the_base),
		cmocka_unit_test(test_splats_against_the_base),
		cmocka_unit_test(test_vanished_suite),
		cmocka_unit_test(test_evidence_is_not_negotiable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
