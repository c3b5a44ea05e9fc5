/* test_settings.c - unit tests for the gate's settings: the caller's value, else the policy's, else the default. */
#include "tests/unit/unit.h"

#include "pipeline/gate.h"
#include "pipeline/settings.h"

/* A default policy with every setting the gate reads from it changed from its default. */
static pg_policy *policy_saying_everything(void)
{
	pg_policy *p = NULL;

	assert_int_equal(pg_policy_new_default(&p), 0);
	p->auto_approve = true;
	p->boot_on_lava = true;
	assert_non_null(p->merge_name = strdup("Policy Merger"));
	assert_non_null(p->merge_email = strdup("merger@policy.example"));
	p->build_timeout_minutes = 90;
	p->boot_timeout_seconds = 120;
	assert_non_null(p->attest_key = strdup("1111111111111111111111111111111111111111"));
	assert_non_null(p->attest_gnupg_home = strdup("/policy/gnupg"));
	assert_non_null(p->icecc = strdup("local"));
	return p;
}

static void assert_defaults(const pg_gate_settings *s)
{
	assert_null(s->tree);
	assert_string_equal(s->branch, "master");
	assert_string_equal(s->merge_name, "pullgate");
	assert_string_equal(s->merge_email, "pullgate@localhost");
	assert_false(s->approve);
	assert_false(s->boot_on_lava);
	assert_int_equal(s->build_timeout_s, 3600);
	assert_int_equal(s->boot_timeout_s, 300);
	assert_int_equal(s->build_worktrees, 1);
	assert_null(s->attest_key);
	assert_null(s->attest_gnupg_home);
	assert_null(s->icecc);
}

static void test_defaults_without_policy(void **state)
{
	pg_gate_given none = { 0 };
	pg_gate_opts o = PG_GATE_OPTS_INIT;
	pg_gate_settings s;

	(void)state;
	pg_gate_settings_resolve(&s, NULL, NULL);
	assert_defaults(&s);
	pg_gate_settings_resolve(&s, &none, NULL);
	assert_defaults(&s);
	/* options made with the initializer start from the same defaults */
	assert_defaults(&o.settings);
}

static void test_default_policy(void **state)
{
	pg_policy *p = NULL;
	pg_gate_settings s;

	(void)state;
	assert_int_equal(pg_policy_new_default(&p), 0);
	pg_gate_settings_resolve(&s, NULL, p);
	/* the policy's own defaults: a build of 120 minutes, approval by the maintainer, QEMU */
	assert_int_equal(s.build_timeout_s, 120 * 60);
	assert_int_equal(s.boot_timeout_s, 300);
	assert_false(s.approve);
	assert_false(s.boot_on_lava);
	assert_string_equal(s.branch, "master");
	assert_string_equal(s.merge_name, "pullgate");
	assert_string_equal(s.merge_email, "pullgate@localhost");
	assert_null(s.attest_key);
	assert_null(s.icecc);
	pg_policy_free(p);
}

static void test_policy_over_defaults(void **state)
{
	pg_policy *p = policy_saying_everything();
	pg_gate_settings s;

	(void)state;
	pg_gate_settings_resolve(&s, NULL, p);
	assert_true(s.approve);
	assert_true(s.boot_on_lava);
	assert_string_equal(s.merge_name, "Policy Merger");
	assert_string_equal(s.merge_email, "merger@policy.example");
	assert_int_equal(s.build_timeout_s, 90 * 60);
	assert_int_equal(s.boot_timeout_s, 120);
	assert_string_equal(s.attest_key, "1111111111111111111111111111111111111111");
	assert_string_equal(s.attest_gnupg_home, "/policy/gnupg");
	assert_string_equal(s.icecc, "local");
	/* what a policy has no say in keeps its default */
	assert_null(s.tree);
	assert_string_equal(s.branch, "master");
	assert_int_equal(s.build_worktrees, 1);
	pg_policy_free(p);
}

static void test_given_over_policy(void **state)
{
	pg_policy *p = policy_saying_everything();
	pg_gate_given g = {
		.tree = "/srv/linux",
		.branch = "next",
		.merge_name = "Service Merger",
		.merge_email = "merger@service.example",
		.attest_key = "2222222222222222222222222222222222222222",
		.attest_gnupg_home = "/service/gnupg",
		.icecc = "/run/icecc/iceccd.socket",
		.approve = PG_GATE_NO,
		.boot_on_lava = PG_GATE_NO,
		.boot_timeout_s = 45,
		.build_worktrees = 3,
	};
	pg_gate_settings s;

	(void)state;
	pg_gate_settings_resolve(&s, &g, p);
	assert_string_equal(s.tree, "/srv/linux");
	assert_string_equal(s.branch, "next");
	assert_string_equal(s.merge_name, "Service Merger");
	assert_string_equal(s.merge_email, "merger@service.example");
	assert_string_equal(s.attest_key, "2222222222222222222222222222222222222222");
	assert_string_equal(s.attest_gnupg_home, "/service/gnupg");
	assert_string_equal(s.icecc, "/run/icecc/iceccd.socket");
	/* "no" is a value: --no-approve and --boot-on qemu win over a policy that says yes */
	assert_false(s.approve);
	assert_false(s.boot_on_lava);
	assert_int_equal(s.boot_timeout_s, 45);
	assert_int_equal(s.build_worktrees, 3);
	/* no caller sets the build's time: the policy's */
	assert_int_equal(s.build_timeout_s, 90 * 60);
	pg_policy_free(p);
}

static void test_yes_over_policy_no(void **state)
{
	pg_policy *p = NULL;
	pg_gate_given g = { .approve = PG_GATE_YES, .boot_on_lava = PG_GATE_YES };
	pg_gate_settings s;

	(void)state;
	assert_int_equal(pg_policy_new_default(&p), 0);
	pg_gate_settings_resolve(&s, &g, p);
	assert_true(s.approve);
	assert_true(s.boot_on_lava);
	/* and without a policy */
	pg_gate_settings_resolve(&s, &g, NULL);
	assert_true(s.approve);
	assert_true(s.boot_on_lava);
	pg_policy_free(p);
}

static void test_policy_timeouts_of_zero(void **state)
{
	pg_policy *p = policy_saying_everything();
	pg_gate_given g = { .boot_timeout_s = 0 };
	pg_gate_settings s;

	(void)state;
	/* a policy's 0 leaves the default; a caller's 0 is no value given */
	p->build_timeout_minutes = 0;
	p->boot_timeout_seconds = 0;
	pg_gate_settings_resolve(&s, &g, p);
	assert_int_equal(s.build_timeout_s, 3600);
	assert_int_equal(s.boot_timeout_s, 300);
	p->boot_timeout_seconds = 600;
	pg_gate_settings_resolve(&s, &g, p);
	assert_int_equal(s.boot_timeout_s, 600);
	pg_policy_free(p);
}

static void test_merge_identity_field_by_field(void **state)
{
	pg_policy *p = NULL;
	pg_gate_given g = { .merge_name = "Service Merger" };
	pg_gate_settings s;

	(void)state;
	assert_int_equal(pg_policy_new_default(&p), 0);
	assert_non_null(p->merge_email = strdup("merger@policy.example"));
	pg_gate_settings_resolve(&s, &g, p);
	assert_string_equal(s.merge_name, "Service Merger");
	assert_string_equal(s.merge_email, "merger@policy.example");
	/* a name from nowhere but the default, an e-mail given */
	g.merge_name = NULL;
	g.merge_email = "merger@service.example";
	pg_gate_settings_resolve(&s, &g, p);
	assert_string_equal(s.merge_name, "pullgate");
	assert_string_equal(s.merge_email, "merger@service.example");
	pg_policy_free(p);
}

static void test_attestation_key_and_home_as_a_pair(void **state)
{
	pg_policy *p = policy_saying_everything();
	pg_gate_given g = { .attest_key = "2222222222222222222222222222222222222222" };
	pg_gate_settings s;

	(void)state;
	/* the service's key without a home: home/gnupg, never the policy's home for it */
	pg_gate_settings_resolve(&s, &g, p);
	assert_string_equal(s.attest_key, "2222222222222222222222222222222222222222");
	assert_null(s.attest_gnupg_home);
	/* a home without a key is nothing given: the policy's key and home */
	g.attest_key = NULL;
	g.attest_gnupg_home = "/service/gnupg";
	pg_gate_settings_resolve(&s, &g, p);
	assert_string_equal(s.attest_key, "1111111111111111111111111111111111111111");
	assert_string_equal(s.attest_gnupg_home, "/policy/gnupg");
	pg_policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_without_policy),
		cmocka_unit_test(test_default_policy),
		cmocka_unit_test(test_policy_over_defaults),
		cmocka_unit_test(test_given_over_policy),
		cmocka_unit_test(test_yes_over_policy_no),
		cmocka_unit_test(test_policy_timeouts_of_zero),
		cmocka_unit_test(test_merge_identity_field_by_field),
		cmocka_unit_test(test_attestation_key_and_home_as_a_pair),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
