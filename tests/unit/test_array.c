/* test_array.c - unit tests for the growable-array helper. */
#include "tests/unit/unit.h"

#include "common/array.h"
#include "common/error.h"

static void test_push_many(void **state)
{
	int *v = NULL;
	size_t n = 0, alloc = 0, reallocs = 0, i;

	(void)state;
	for (i = 0; i < 100000; i++) {
		size_t before = alloc;

		assert_int_equal(PG_ARRAY_GROW(v, n + 1, alloc), 0);
		assert_true(alloc >= n + 1);
		reallocs += alloc != before;
		v[n++] = (int)i;
	}
	for (i = 0; i < n; i++)
		assert_int_equal(v[i], (int)i);
	/* geometric: a few dozen reallocations, not one per push */
	assert_true(reallocs < 40);
	free(v);
}

static void test_want_below_alloc_is_a_no_op(void **state)
{
	char *v = NULL;
	size_t alloc = 0;
	char *before;

	(void)state;
	assert_int_equal(PG_ARRAY_GROW(v, 3, alloc), 0);
	assert_int_equal(alloc, 8);
	before = v;
	assert_int_equal(PG_ARRAY_GROW(v, 8, alloc), 0);
	assert_ptr_equal(v, before);
	assert_int_equal(PG_ARRAY_GROW(v, 100, alloc), 0);
	assert_true(alloc >= 100);
	free(v);
}

static void test_overflow_is_refused(void **state)
{
	double *v = NULL;
	size_t alloc = 0;

	(void)state;
	assert_int_equal(PG_ARRAY_GROW(v, 4, alloc), 0);
	v[0] = 1.5;
	assert_int_equal(PG_ARRAY_GROW(v, SIZE_MAX / 4, alloc), PG_ENOMEM);
	assert_non_null(strstr(pg_error_last(), "too large"));
	/* the array is left as it was */
	assert_int_equal(alloc, 8);
	assert_true(v[0] == 1.5);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_many),
		cmocka_unit_test(test_want_below_alloc_is_a_no_op),
		cmocka_unit_test(test_overflow_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
