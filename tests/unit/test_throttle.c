/* test_throttle.c - unit tests for log-in throttling: free failures, a doubling backoff, attempts in flight, forgetting, floods of junk names. */
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

/* linus fails once from 10.0.0.1 at time 1 and is locked for rules' base_ms. */
static void lock_linus(pg_throttle *t)
{
	assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.1", 1), 0);
	pg_throttle_end(t, "linus", "10.0.0.1", false, 1);
	assert_true(pg_throttle_begin(t, "linus", "10.0.0.1", 2) > 0);
}

static void address(char *out, size_t size, unsigned i)
{
	snprintf(out, size, "10.%u.%u.%u", 1 + i / 65536, i / 256 % 256, i % 256);
}

static void test_a_full_table_forgets_the_idlest(void **state)
{
	pg_throttle_rules r = { 1, 1000000, 1000000, 1000000 };
	pg_throttle *t = NULL;
	char name[32], addr[32];
	int i;

	(void)state;
	assert_int_equal(pg_throttle_new(&t, &r), 0);
	assert_int_equal(pg_throttle_begin(t, "greg", "10.0.0.1", 1), 0);
	pg_throttle_end(t, "greg", "10.0.0.1", true, 1);
	/* thousands of other keys that hold nothing: the table stays bounded, the idlest go */
	for (i = 0; i < 2 * PG_THROTTLE_KEYS; i++) {
		snprintf(name, sizeof(name), "u%d", i);
		address(addr, sizeof(addr), (unsigned)i);
		assert_int_equal(pg_throttle_begin(t, name, addr, 10 + (uint64_t)i), 0);
		pg_throttle_end(t, name, addr, true, 10 + (uint64_t)i);
	}
	assert_int_equal(pg_throttle_begin(t, "greg", "10.0.0.1", 20000), 0);
	pg_throttle_end(t, "greg", "10.0.0.1", true, 20000);
	pg_throttle_free(t);
}

/*
 * 100,000 junk names from one address.  They are passed as accounts here,
 * as a caller that does not check names would: the address locks, and a
 * refused attempt makes no entry, so none can push linus's lock out.
 */
static void test_junk_names_from_one_address(void **state)
{
	pg_throttle_rules r = { 5, 20, 1000000, 1000000 };
	pg_throttle *t = NULL;
	char name[32];
	unsigned i, refused = 0;
	uint64_t now = 10;

	(void)state;
	assert_int_equal(pg_throttle_new(&t, &r), 0);
	for (i = 0; i < 5; i++) {
		assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.1", 1), 0);
		pg_throttle_end(t, "linus", "10.0.0.1", false, 1);
	}
	assert_true(pg_throttle_begin(t, "linus", "10.0.0.9", 2) > 0);
	for (i = 0; i < 100000; i++, now++) {
		snprintf(name, sizeof(name), "junk%u", i);
		if (pg_throttle_begin(t, name, "192.0.2.7", now)) {
			refused++;
			continue;
		}
		pg_throttle_end(t, name, "192.0.2.7", false, now);
	}
	assert_int_equal(refused, 100000 - 20);
	assert_true(pg_throttle_begin(t, "linus", "10.0.0.9", now) > 0);
	/* the table did not fill: another account from another address gets in */
	assert_int_equal(pg_throttle_begin(t, "greg", "10.0.0.9", now), 0);
	pg_throttle_end(t, "greg", "10.0.0.9", true, now);
	pg_throttle_free(t);
}

/*
 * 100,000 junk names from as many addresses, each failing once (a name no
 * account has comes as NULL): the addresses' entries come and go, linus's
 * lock stays, and so do the failures of greg, short of a lock.
 */
static void test_junk_names_from_many_addresses(void **state)
{
	pg_throttle_rules r = { 5, 20, 1000000, 1000000 };
	pg_throttle *t = NULL;
	char addr[32];
	unsigned i;
	uint64_t now = 10;

	(void)state;
	assert_int_equal(pg_throttle_new(&t, &r), 0);
	for (i = 0; i < 5; i++) {
		assert_int_equal(pg_throttle_begin(t, "linus", "10.0.0.1", 1), 0);
		pg_throttle_end(t, "linus", "10.0.0.1", false, 1);
	}
	for (i = 0; i < 4; i++) {
		assert_int_equal(pg_throttle_begin(t, "greg", "10.0.0.2", 1), 0);
		pg_throttle_end(t, "greg", "10.0.0.2", false, 1);
	}
	for (i = 0; i < 100000; i++, now++) {
		address(addr, sizeof(addr), i);
		assert_int_equal(pg_throttle_begin(t, NULL, addr, now), 0);
		pg_throttle_end(t, NULL, addr, false, now);
	}
	assert_true(pg_throttle_begin(t, "linus", "10.0.0.9", now) > 0);
	/* greg's fifth failure locks him: his first four were not forgotten */
	assert_int_equal(pg_throttle_begin(t, "greg", "10.0.0.9", now), 0);
	pg_throttle_end(t, "greg", "10.0.0.9", false, now);
	assert_true(pg_throttle_begin(t, "greg", "10.0.0.8", now) > 0);
	pg_throttle_free(t);
}

/*
 * A table full of locked keys forgets none of them: a new key is refused,
 * with a wait, until a lock ends and its key may go.
 */
static void test_a_locked_key_survives_a_full_table(void **state)
{
	pg_throttle_rules r = { 1, 1, 5000, 5000 };
	pg_throttle *t = NULL;
	char addr[32];
	unsigned i;
	uint64_t w;

	(void)state;
	assert_int_equal(pg_throttle_new(&t, &r), 0);
	lock_linus(t);
	for (i = 0; i < PG_THROTTLE_KEYS; i++) {
		address(addr, sizeof(addr), i);
		if (pg_throttle_begin(t, NULL, addr, 10))
			break;
		pg_throttle_end(t, NULL, addr, false, 10);
	}
	/* linus's key and 10.0.0.1's, and the rest locked addresses: the table is full */
	assert_int_equal(i, PG_THROTTLE_KEYS - 2);
	w = pg_throttle_begin(t, "greg", "10.200.0.1", 20);
	assert_true(w > 0);
	assert_true(w <= 4990);
	assert_true(pg_throttle_begin(t, "linus", "10.0.0.1", 20) > 0);
	/* refused attempts change nothing: still full, linus still locked */
	for (i = 0; i < 1000; i++)
		assert_true(pg_throttle_begin(t, NULL, "10.200.0.2", 20 + i) > 0);
	assert_true(pg_throttle_begin(t, "linus", "10.0.0.1", 1000) > 0);
	/* once the addresses' locks end, they make room */
	assert_int_equal(pg_throttle_begin(t, "greg", "10.200.0.1", 5010), 0);
	pg_throttle_end(t, "greg", "10.200.0.1", true, 5010);
	pg_throttle_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_in_flight_and_addresses),
		cmocka_unit_test(test_a_full_table_forgets_the_idlest),
		cmocka_unit_test(test_junk_names_from_one_address),
		cmocka_unit_test(test_junk_names_from_many_addresses),
		cmocka_unit_test(test_a_locked_key_survives_a_full_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
