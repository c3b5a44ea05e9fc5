/* test_throttle.c - unit tests for log-in throttling: free failures, a doubling backoff, attempts in flight, forgetting. */
#include "tests/unit/unit.h"

#include "server/throttle.h"

static void test_backoff(void **state)
{
	pg_throttle_rules r = { 3, 100, 1000, 8000 };
	pg_throttle *t = NULL;
	uint64_t now = 1000000;
	int i;

	(void)state;
	assert_int_equal(pg_throttle_new(&t, &r), 0);
	/* three failures in a row are free */
	for (i = 0; i < 3; i++) {
		assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.1", now), 0);
		pg_throttle_end(t, "linus", "10.0.0.1", false, now);
	}
	/* then the account waits 1 s, whatever the address */
	assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.1", now), 1000);
	assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.2", now + 400), 600);
	/* other accounts are not held up */
	assert_int_equal(pg_throttle_begin(t, "greg", "10.0.0.2", now), 0);
	pg_throttle_end(t, "greg", "10.0.0.2", true, now);
	/* each failure after the wait doubles it, up to the cap */
	now += 1000;
	assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.1", now), 0);
	pg_throttle_end(t, "linus", "10.0.0.1", false, now);
	assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.1", now), 2000);
	now += 2000;
	assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.1", now), 0);
	pg_throttle_end(t, "linus", "10.0.0.1", false, now);
	assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.1", now), 4000);
	for (i = 0; i < 5; i++) {
		now += 8000;
		assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.1", now), 0);
		pg_throttle_end(t, "linus", "10.0.0.1", false, now);
	}
	assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.1", now), 8000);
	/* a success clears it */
	now += 8000;
	assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.1", now), 0);
	pg_throttle_end(t, "linus", "10.0.0.1", true, now);
	assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.1", now), 0);
	pg_throttle_end(t, "linus", "10.0.0.1", true, now);
	pg_throttle_free(t);
}

static void test_in_flight_and_addresses(void **state)
{
	pg_throttle_rules r = { 2, 3, 1000, 60000 };
	pg_throttle *t = NULL;
	uint64_t now = 5000;

	(void)state;
	assert_int_equal(pg_throttle_new(&t, &r), 0);
	/* as many attempts in flight as would lock the account: the next waits for them */
	assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.1", now), 0);
	assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.2", now), 0);
	assert_true(pg_throttle_begin(t, "linus", "10.0.0.3", now) > 0);
	pg_throttle_end(t, "linus", "10.0.0.1", true, now);
	pg_throttle_end(t, "linus", "10.0.0.2", true, now);
	/* one address failing over many accounts is held up itself */
	assert_int_equal(pg_throttle_begin(t, "a", "10.9.9.9", now), 0);
	pg_throttle_end(t, "a", "10.9.9.9", false, now);
	assert_int_equal(pg_throttle_begin(t, "b", "10.9.9.9", now), 0);
	pg_throttle_end(t, "b", "10.9.9.9", false, now);
	assert_int_equal(pg_throttle_begin(t, "c", "10.9.9.9", now), 0);
	pg_throttle_end(t, "c", "10.9.9.9", false, now);
	assert_int_equal(pg_throttle_begin(t, "d", "10.9.9.9", now), 1000);
	assert_int_equal(pg_throttle_begin(t, "d", "10.9.9.8", now), 0);
	pg_throttle_end(t, "d", "10.9.9.8", true, now);
	/* an hour without a failure forgets it */
	now += 3600 * 1000 + 1;
	assert_int_equal(pg_throttle_begin(t, "d", "10.9.9.9", now), 0);
	pg_throttle_end(t, "d", "10.9.9.9", true, now);
	pg_throttle_free(t);
}

static void test_a_full_table_forgets_the_idlest(void **state)
{
	pg_throttle_rules r = { 1, 1000000, 1000000, 1000000 };
	pg_throttle *t = NULL;
	char name[32];
	int i;

	(void)state;
	assert_int_equal(pg_throttle_new(&t, &r), 0);
	assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.1", 1), 0);
	pg_throttle_end(t, "linus", "10.0.0.1", false, 1);
	assert_true(pg_throttle_begin(t, "linus", "10.0.0.1", 2) > 0);
	/* thousands of other names: the table stays bounded, the idlest go (its lock with it) */
	for (i = 0; i < PG_THROTTLE_KEYS; i++) {
		snprintf(name, sizeof(name), "u%d", i);
		assert_int_equal(pg_throttle_begin(t, name, "10.0.0.2", 10 + (uint64_t)i), 0);
		pg_throttle_end(t, name, "10.0.0.2", true, 10 + (uint64_t)i);
	}
	assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.1", 20000), 0);
	pg_throttle_end(t, "linus", "10.0.0.1", true, 20000);
	pg_throttle_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_in_flight_and_addresses),
		cmocka_unit_test(test_a_full_table_forgets_the_idlest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
