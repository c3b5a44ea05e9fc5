/* test_gate.c - unit tests for the gate's pull keys and stage sets. */
#include "tests/unit/unit.h"

#include "common/buf.h"
#include "pipeline/gate.h"

static char *key(const char *tag)
{
	pg_buf b = PG_BUF_INIT;

	assert_int_equal(pg_gate_pull_key(&b, tag), 0);
	return pg_buf_detach(&b);
}

static void test_plain_tags_keep_their_name(void **state)
{
	char *k;

	(void)state;
	k = key("hardening-v6.16-rc1-fix1-take2");
	assert_string_equal(k, "hardening-v6.16-rc1-fix1-take2");
	free(k);
	k = key("refs/tags/for-linus_6.16");
	assert_string_equal(k, "for-linus_6.16");
	free(k);
}

static void test_changed_names_do_not_collide(void **state)
{
	char *slash, *dash, *again, *long1, *long2, *empty, *dot;
	char a[200], b[200];

	(void)state;
	slash = key("a/b");
	dash = key("a-b");
	again = key("a/b");
	assert_string_equal(dash, "a-b");
	assert_string_not_equal(slash, dash);
	assert_true(!strncmp(slash, "a-b-pull-", 9) && strlen(slash) == 9 + 16);
	assert_string_equal(slash, again); /* the same tag, the same key */

	memset(a, 'x', sizeof(a) - 1);
	a[sizeof(a) - 1] = '\0';
	memcpy(b, a, sizeof(b));
	b[150] = 'y'; /* differs after the 80 characters a key keeps */
	long1 = key(a);
	long2 = key(b);
	assert_string_not_equal(long1, long2);
	assert_true(strlen(long1) <= 80 + 6 + 16);

	empty = key("refs/tags/");
	assert_true(!strncmp(empty, "pull-", 5));
	dot = key(".hidden");
	assert_int_equal(dot[0], '-');
	assert_non_null(strstr(dot, "-pull-"));
	free(slash);
	free(dash);
	free(again);
	free(long1);
	free(long2);
	free(empty);
	free(dot);
}

static void test_stage_sets(void **state)
{
	(void)state;
	assert_int_equal(pg_gate_stage_flag("build", 5), PG_GATE_BUILD);
	assert_int_equal(pg_gate_stage_flag("buildx", 5), PG_GATE_BUILD);
	assert_int_equal(pg_gate_stage_flag("buil", 4), 0);
	assert_int_equal(pg_gate_stage_flag("deploy", 6), 0);
	assert_true(pg_gate_stages_valid(0));
	assert_true(pg_gate_stages_valid(PG_GATE_MERGE));
	assert_true(pg_gate_stages_valid(PG_GATE_MERGE | PG_GATE_BUILD | PG_GATE_BOOT));
	assert_true(pg_gate_stages_valid(PG_GATE_ALL));
	assert_false(pg_gate_stages_valid(PG_GATE_MERGE | PG_GATE_APPROVE));
	assert_false(pg_gate_stages_valid(PG_GATE_BOOT));
	assert_false(pg_gate_stages_valid(PG_GATE_BUILD | PG_GATE_BOOT | PG_GATE_APPROVE));
	assert_false(pg_gate_stages_valid(PG_GATE_ALL + 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_tags_keep_their_name),
		cmocka_unit_test(test_changed_names_do_not_collide),
		cmocka_unit_test(test_stage_sets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
