/* test_buf.c - unit tests for the capped buffer and the hash map. */
#include "tests/unit/unit.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/map.h"

static void test_invariants(void **state)
{
	pg_buf b = PG_BUF_INIT;

	(void)state;
	assert_non_null(b.ptr);
	assert_string_equal(b.ptr, "");
	assert_int_equal(pg_buf_puts(&b, "abc"), 0);
	assert_int_equal(pg_buf_printf(&b, "-%d-", 42), 0);
	assert_string_equal(b.ptr, "abc-42-");
	assert_int_equal(b.len, 7);
	pg_buf_truncate(&b, 2);
	assert_string_equal(b.ptr, "ab");
	pg_buf_release(&b);
	assert_non_null(b.ptr);
	assert_int_equal(b.len, 0);
}

static void test_cap_is_enforced(void **state)
{
	pg_buf b;

	(void)state;
	pg_buf_init(&b, 8);
	assert_int_equal(pg_buf_puts(&b, "12345678"), 0);
	assert_int_equal(pg_buf_putc(&b, '9'), PG_ETOOBIG);
	/* a failed append leaves the buffer as it was */
	assert_string_equal(b.ptr, "12345678");
	assert_int_equal(pg_buf_printf(&b, "%s", "x"), PG_ETOOBIG);
	assert_int_equal(b.len, 8);
	pg_buf_release(&b);
}

static void test_detach_and_rtrim(void **state)
{
	pg_buf b = PG_BUF_INIT;
	char *s;

	(void)state;
	s = pg_buf_detach(&b);
	assert_string_equal(s, "");
	free(s);
	pg_buf_puts(&b, "text \n\t\r\n");
	pg_buf_rtrim(&b);
	assert_string_equal(b.ptr, "text");
	s = pg_buf_detach(&b);
	assert_string_equal(s, "text");
	assert_int_equal(b.len, 0);
	free(s);
}

static void test_map(void **state)
{
	pg_map m = PG_MAP_INIT;
	char keys[1000][16];
	int i;

	(void)state;
	assert_null(pg_map_gets(&m, "absent"));
	for (i = 0; i < 1000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%d", i);
		assert_int_equal(pg_map_sets(&m, keys[i], &keys[i]), 0);
	}
	assert_int_equal(m.count, 1000);
	for (i = 0; i < 1000; i++)
		assert_ptr_equal(pg_map_gets(&m, keys[i]), &keys[i]);
	assert_int_equal(pg_map_sets(&m, "k5", NULL), 0);
	assert_null(pg_map_gets(&m, "k5"));
	assert_int_equal(m.count, 1000);
	pg_map_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_invariants),
		cmocka_unit_test(test_cap_is_enforced),
		cmocka_unit_test(test_detach_and_rtrim),
		cmocka_unit_test(test_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
