/* test_queue.c - unit tests for the queue's contract: what it refuses to run, its outcomes and its JSON. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "common/json.h"
#include "pipeline/queue.h"

static void test_refuses_approval_and_a_queue_without_merge(void **state)
{
	pg_gate_opts o = PG_GATE_OPTS_INIT;
	pg_pull_spec spec = { 0 };
	pg_queue_result *q = (pg_queue_result *)&o; /* anything but NULL: it must be reset */
	unsigned refused[] = { PG_GATE_ALL, 0 };
	size_t i;

	(void)state;
	spec.repo = "/nonexistent";
	spec.tag = "t";
	o.home = "/nonexistent";
	for (i = 0; i < PG_ARRAY_SIZE(refused); i++) {
		o.stages = refused[i];
		assert_int_equal(pg_queue_run(&q, &spec, 1, NULL, &o), PG_EINVALID);
		assert_null(q);
		assert_non_null(strstr(pg_error_last(), "approval through a queue is the service's"));
	}
	o.stages = PG_GATE_MERGE;
	o.explain_tests = true;
	assert_int_equal(pg_queue_run(&q, &spec, 1, NULL, &o), PG_EINVALID);
	assert_null(q);
}

static void test_outcomes(void **state)
{
	pg_queue_result q = { 0 };
	pg_queue_item items[2] = { { 0 } };

	(void)state;
	assert_string_equal(pg_queue_outcome_name(PG_QUEUE_PASSED), "passed");
	assert_string_equal(pg_queue_outcome_name(PG_QUEUE_FAILED), "failed");
	assert_string_equal(pg_queue_outcome_name(PG_QUEUE_REJECTED), "rejected");
	q.items = items;
	assert_true(pg_queue_all_passed(&q));
	q.n = 2;
	assert_true(pg_queue_all_passed(&q));
	items[1].outcome = PG_QUEUE_REJECTED;
	assert_false(pg_queue_all_passed(&q));
}

static pg_oid oid_of(unsigned char b)
{
	pg_oid o;

	memset(&o, b, sizeof(o));
	return o;
}

static void test_json(void **state)
{
	pg_queue_result *q = calloc(1, sizeof(*q));
	pg_queue_item *it;
	pg_json *v = NULL;
	const pg_json *a, *b, *rr;
	pg_buf out = PG_BUF_INIT;
	int64_t n;

	(void)state;
	assert_non_null(q);
	assert_non_null(q->items = calloc(2, sizeof(*q->items)));
	q->n = q->alloc = 2;
	q->head = oid_of(0x11);
	q->stack = oid_of(0x22);
	q->has_stack = true;
	it = &q->items[0];
	it->position = 1;
	assert_non_null(it->repo = strdup("/r"));
	assert_non_null(it->tag = strdup("a"));
	assert_int_equal(pg_report_new(&it->report), 0);
	it->tested = it->has_merge = true;
	it->tested_on = q->head;
	it->merge = q->stack;
	it = &q->items[1];
	it->position = 2;
	it->outcome = PG_QUEUE_FAILED;
	assert_non_null(it->repo = strdup("/r"));
	assert_non_null(it->tag = strdup("b"));
	assert_int_equal(pg_report_new(&it->report), 0);
	it->tested = true;
	it->tested_on = q->stack;
	it->stage = "build";
	it->with = 1;
	it->suspect = 1;
	assert_non_null(it->attribution = strdup("pull 2 (b) and pull 1 (a) each pass without the other and fail build together"));
	assert_non_null(it->reruns = calloc(1, sizeof(*it->reruns)));
	it->nreruns = it->reruns_alloc = 1;
	it->reruns[0].onto = q->head;
	it->reruns[0].stages = PG_GATE_MERGE | PG_GATE_BUILD;
	assert_non_null(it->reruns[0].run_dir = strdup("/logs/queue-2-b-alone/run-1"));

	assert_int_equal(pg_queue_format_json(&out, q), 0);
	assert_int_equal(pg_json_parse(&v, out.ptr, out.len), 0);
	assert_string_equal(pg_json_get_str(v, "head"), "1111111111111111111111111111111111111111");
	assert_string_equal(pg_json_get_str(v, "stack"), "2222222222222222222222222222222222222222");
	a = pg_json_at(pg_json_get(v, "queue"), 0);
	b = pg_json_at(pg_json_get(v, "queue"), 1);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(pg_json_get_str(a, "outcome"), "passed");
	assert_string_equal(pg_json_get_str(a, "merge"), "2222222222222222222222222222222222222222");
	assert_null(pg_json_get_str(a, "attribution"));
	assert_int_equal(pg_json_len(pg_json_get(a, "reruns")), 0);
	assert_non_null(pg_json_get(a, "report"));
	assert_string_equal(pg_json_get_str(b, "outcome"), "failed");
	assert_string_equal(pg_json_get_str(b, "stage"), "build");
	assert_null(pg_json_get_str(b, "merge"));
	assert_int_equal(pg_json_get_int(b, "with", &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(pg_json_get_int(b, "suspect", &n), 0);
	assert_int_equal(n, 1);
	assert_true(pg_json_get_int(a, "suspect", &n) < 0);
	pg_error_clear();
	assert_string_equal(pg_json_get_str(b, "tested_on"), "2222222222222222222222222222222222222222");
	rr = pg_json_at(pg_json_get(b, "reruns"), 0);
	assert_string_equal(pg_json_get_str(rr, "stages"), "merge,build");
	assert_string_equal(pg_json_get_str(rr, "onto"), "1111111111111111111111111111111111111111");
	assert_int_equal(pg_json_get_int(rr, "upto", &n), 0);
	assert_int_equal(n, 0);
	assert_false(pg_json_get_bool(rr, "failed"));
	pg_json_free(v);
	pg_buf_release(&out);
	pg_queue_result_free(q);
	pg_queue_result_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refuses_approval_and_a_queue_without_merge),
		cmocka_unit_test(test_outcomes),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
