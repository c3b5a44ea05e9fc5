/* test_search.c - the interpolation search: the same answer as a linear scan, on even and uneven keys. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "common/search.h"

typedef struct table {
	uint64_t *keys;
	size_t n, reads, fail_at;
} table;

static int key_at(uint64_t *key, void *ctx, size_t i)
{
	table *t = ctx;

	assert_true(i < t->n);
	t->reads++;
	if (t->fail_at && i == t->fail_at)
		return pg_error_set(PG_EIO, "cannot read entry %zu", i);
	*key = t->keys[i];
	return 0;
}

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static int cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t linear(const table *t, uint64_t want)
{
	size_t i = 0;

	while (i < t->n && t->keys[i] < want)
		i++;
	return i;
}

/* every key, its neighbours and random ones: as a scan finds them; the reads per search */
static double check_all(table *t, uint64_t seed)
{
	size_t i, at, searches = 0;

	t->reads = 0;
	for (i = 0; i < t->n + 200; i++) {
		uint64_t want = i < t->n ? t->keys[i] + (i % 3) - 1 : next(&seed);

		if (i % 50 == 0)
			want = i % 100 ? 0 : UINT64_MAX;
		assert_int_equal(pg_search_uniform(&at, 0, t->n, 0, UINT64_MAX, want, key_at, t), 0);
		assert_int_equal(at, linear(t, want));
		searches++;
	}
	return (double)t->reads / (double)searches;
}

static void test_uniform_keys_are_found_in_few_reads(void **state)
{
	table t = { .n = 20000 };
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	size_t i;

	(void)state;
	assert_non_null(t.keys = calloc(t.n, sizeof(*t.keys)));
	for (i = 0; i < t.n; i++)
		t.keys[i] = next(&x);
	qsort(t.keys, t.n, sizeof(*t.keys), cmp64);
	/* a binary search of 20,000 entries reads 15 */
	assert_true(check_all(&t, 7) < 6.0);
	free(t.keys);
}

static void test_uneven_keys_and_duplicates_are_still_right(void **state)
{
	table t = { .n = 5000 };
	uint64_t x = 0x243f6a8885a308d3ULL;
	size_t i;

	(void)state;
	assert_non_null(t.keys = calloc(t.n, sizeof(*t.keys)));
	/* clustered at both ends, runs of equal keys in the middle */
	for (i = 0; i < t.n; i++)
		t.keys[i] = i < 2000 ? next(&x) % 1000 : i < 3000 ? 1ULL << 40 :
			    UINT64_MAX - next(&x) % 5000;
	qsort(t.keys, t.n, sizeof(*t.keys), cmp64);
	/* falling back to halving keeps it near a binary search's 13 */
	assert_true(check_all(&t, 11) < 30.0);
	free(t.keys);
}

static void test_empty_and_failing_reads(void **state)
{
	uint64_t keys[4] = { 1, 2, 3, 4 };
	table t = { keys, 4, 0, 0 };
	size_t at = 99;

	(void)state;
	assert_int_equal(pg_search_uniform(&at, 2, 2, 0, UINT64_MAX, 3, key_at, &t), 0);
	assert_int_equal(at, 2);
	assert_int_equal(t.reads, 0);
	t.fail_at = 2;
	at = 99;
	assert_int_equal(pg_search_uniform(&at, 0, 4, 0, UINT64_MAX, 3, key_at, &t), PG_EIO);
	assert_int_equal(at, 99);
	pg_error_clear();
}

static void test_prefix64_orders_as_ids_do(void **state)
{
	unsigned char a[20] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0xff };
	unsigned char b[20] = { 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x09 };

	(void)state;
	assert_true(pg_key_prefix64(a) == 0x0102030405060708ULL);
	assert_true(pg_key_prefix64(a) < pg_key_prefix64(b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uniform_keys_are_found_in_few_reads),
		cmocka_unit_test(test_uneven_keys_and_duplicates_are_still_right),
		cmocka_unit_test(test_empty_and_failing_reads),
		cmocka_unit_test(test_prefix64_orders_as_ids_do),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
