/* test_stack.c - unit tests for the merge window's queue read as a stack: next test, its base, stale pulls, approval through. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "common/str.h"
#include "server/dashboard.h"
#include "server/stack.h"

/* Commit ids by number: 1 the tip, 10 + k the merge of pull k. */
static pg_oid oid(unsigned n)
{
	pg_oid o;

	memset(&o, 0, sizeof(o));
	o.id[0] = (unsigned char)n;
	o.id[1] = 0xAB;
	return o;
}

#define TIP 1
#define MERGE(k) (10 + (k))
#define NONE 0

typedef struct row {
	int64_t id;
	enum pg_job_state state;
	unsigned base;   /* NONE: no merge recorded */
	bool held;
} row;

static pg_job_list *queue_of(const row *rows, size_t n)
{
	pg_job_list *l = calloc(1, sizeof(*l));
	size_t i;

	assert_non_null(l);
	assert_non_null(l->items = calloc(n ? n : 1, sizeof(*l->items)));
	for (i = 0; i < n; i++) {
		pg_job *j = calloc(1, sizeof(*j));

		assert_non_null(j);
		j->id = rows[i].id;
		j->state = rows[i].state;
		j->held = rows[i].held;
		j->queue_rank = (int64_t)i + 1;
		if (rows[i].base != NONE) {
			j->has_merge = true;
			j->merge_base = oid(rows[i].base);
			j->merge_commit = oid(MERGE((unsigned)j->id));
		}
		l->items[i] = j;
	}
	l->n = l->total = n;
	return l;
}

static void queue_free(pg_job_list *l)
{
	pg_job_list_release(l);
	free(l);
}

/* Pulls 1 and 2 wait on the stack, 3 is verified: it goes onto 2's merge, over 1 and 2. */
static void test_next_goes_onto_the_stack(void **state)
{
	const row rows[] = {
		{ 1, PG_JOB_WAITING, TIP, false },
		{ 2, PG_JOB_WAITING, MERGE(1), false },
		{ 3, PG_JOB_VERIFIED, NONE, false },
		{ 4, PG_JOB_VERIFIED, NONE, false },
	};
	pg_job_list *q = queue_of(rows, 4);
	pg_oid tip = oid(TIP), m2 = oid(MERGE(2));
	pg_stack_plan p;

	(void)state;
	assert_int_equal(pg_stack_plan_make(&p, &tip, q), 0);
	assert_int_equal(p.next, 3);
	assert_int_equal(p.nunder, 2);
	assert_int_equal(p.nstack, 2);
	assert_int_equal(p.stack[0], 1);
	assert_int_equal(p.stack[1], 2);
	assert_memory_equal(&p.tops[0], &tip, sizeof(tip));
	assert_memory_equal(&p.tops[p.nunder], &m2, sizeof(m2));
	assert_int_equal(p.nstale, 0);
	pg_stack_plan_release(&p);
	queue_free(q);
}

/* A pull runs: the pulls behind it wait for it, whatever their state. */
static void test_a_running_pull_holds_up_the_ones_behind(void **state)
{
	const row rows[] = {
		{ 1, PG_JOB_BUILDING, NONE, false },
		{ 2, PG_JOB_VERIFIED, NONE, false },
	};
	pg_job_list *q = queue_of(rows, 2);
	pg_oid tip = oid(TIP);
	pg_stack_plan p;

	(void)state;
	assert_int_equal(pg_stack_plan_make(&p, &tip, q), 0);
	assert_int_equal(p.next, 0);
	pg_stack_plan_release(&p);
	queue_free(q);
}

/*
 * Pull 1 failed and left the queue: 2 waited on its merge, and 3 on 2's.
 * 2 is stale and tested again first; 3, behind it, waits to be known
 * stale once 2 is tested; the top stays the tip; a verified 4 waits.
 */
static void test_a_stack_that_is_gone_is_stale(void **state)
{
	const row rows[] = {
		{ 2, PG_JOB_WAITING, MERGE(1), false },
		{ 3, PG_JOB_WAITING, MERGE(2), false },
		{ 4, PG_JOB_VERIFIED, NONE, false },
	};
	pg_job_list *q = queue_of(rows, 3);
	pg_oid tip = oid(TIP);
	pg_stack_plan p;

	(void)state;
	assert_int_equal(pg_stack_plan_make(&p, &tip, q), 0);
	assert_int_equal(p.nstale, 1);
	assert_int_equal(p.stale[0], 2);
	assert_int_equal(p.nstack, 0);
	assert_int_equal(p.next, 0);
	pg_stack_plan_release(&p);
	queue_free(q);
}

/* The branch moved (another push): the first waiting pull's base is not the tip. */
static void test_the_branch_moved(void **state)
{
	const row rows[] = {
		{ 1, PG_JOB_WAITING, TIP, false },
		{ 2, PG_JOB_WAITING, MERGE(1), false },
	};
	pg_job_list *q = queue_of(rows, 2);
	pg_oid moved = oid(7);
	pg_stack_plan p;

	(void)state;
	assert_int_equal(pg_stack_plan_make(&p, &moved, q), 0);
	assert_int_equal(p.nstale, 1);
	assert_int_equal(p.nstack, 0);
	pg_stack_plan_release(&p);
	queue_free(q);
}

/*
 * Pull 1 builds, its merge made on the tip: 2 goes onto it at once; a
 * waiting 3 tested on 2's merge stands too.  A pull that runs without a
 * merge yet holds up the pulls behind it, which neither stand nor are stale.
 */
static void test_a_merged_running_pull_is_stacked_on(void **state)
{
	const row merged[] = {
		{ 1, PG_JOB_BUILDING, TIP, false },
		{ 2, PG_JOB_VERIFIED, NONE, false },
	};
	const row unmerged[] = {
		{ 1, PG_JOB_WAITING, TIP, false },
		{ 2, PG_JOB_MERGING, NONE, false },
		{ 3, PG_JOB_WAITING, MERGE(1), false },
		{ 4, PG_JOB_VERIFIED, NONE, false },
	};
	pg_job_list *q = queue_of(merged, 2);
	pg_oid tip = oid(TIP), m1 = oid(MERGE(1));
	int64_t *ids = NULL;
	size_t n = 0;
	pg_stack_plan p;

	(void)state;
	assert_int_equal(pg_stack_plan_make(&p, &tip, q), 0);
	assert_int_equal(p.next, 2);
	assert_int_equal(p.nunder, 1);
	assert_memory_equal(&p.tops[1], &m1, sizeof(m1));
	pg_stack_plan_release(&p);
	queue_free(q);
	q = queue_of(unmerged, 4);
	assert_int_equal(pg_stack_plan_make(&p, &tip, q), 0);
	assert_int_equal(p.next, 0);
	assert_int_equal(p.nstale, 0);
	assert_int_equal(p.nstack, 1);
	pg_stack_plan_release(&p);
	/* 3 waits behind a pull not tested yet: it cannot be approved before 2 is */
	assert_int_equal(pg_stack_through(&ids, &n, &tip, q, 3), PG_ECONFLICT);
	pg_error_clear();
	queue_free(q);
}

/*
 * A verified pull that conflicts with a pull ahead of it waits behind it,
 * and the pull behind goes on; once that pull is held (or gone), it is
 * the next one tested.
 */
static void test_a_conflicting_pull_waits_behind_the_other(void **state)
{
	const row rows[] = {
		{ 1, PG_JOB_WAITING, TIP, false },
		{ 2, PG_JOB_VERIFIED, NONE, false },
		{ 3, PG_JOB_VERIFIED, NONE, false },
	};
	pg_job_list *q = queue_of(rows, 3);
	pg_oid tip = oid(TIP);
	pg_stack_plan p;

	(void)state;
	q->items[1]->conflict_with = 1;
	assert_int_equal(pg_stack_plan_make(&p, &tip, q), 0);
	assert_int_equal(p.next, 3);
	assert_int_equal(p.nunder, 1);
	assert_int_equal(p.nstale, 0);
	pg_stack_plan_release(&p);
	/* a conflict with a pull that is not ahead of it holds nothing */
	q->items[1]->conflict_with = 3;
	assert_int_equal(pg_stack_plan_make(&p, &tip, q), 0);
	assert_int_equal(p.next, 2);
	pg_stack_plan_release(&p);
	/* the other one held: it is tested, on the tip */
	q->items[1]->conflict_with = 1;
	q->items[0]->held = true;
	assert_int_equal(pg_stack_plan_make(&p, &tip, q), 0);
	assert_int_equal(p.next, 2);
	assert_int_equal(p.nunder, 0);
	pg_stack_plan_release(&p);
	queue_free(q);
}

/* When each is tested: the pulls to test two at a time; none for a held one or one behind a conflict. */
static void test_the_eta(void **state)
{
	const row rows[] = {
		{ 1, PG_JOB_WAITING, TIP, false },
		{ 2, PG_JOB_BUILDING, MERGE(1), false },
		{ 3, PG_JOB_VERIFIED, NONE, true },
		{ 4, PG_JOB_VERIFIED, NONE, false },
		{ 5, PG_JOB_VERIFIED, NONE, false },
		{ 6, PG_JOB_VERIFIED, NONE, false },
	};
	pg_job_list *q = queue_of(rows, 6);
	double eta[6];

	(void)state;
	q->items[4]->conflict_with = 2;
	pg_stack_eta(eta, q, 100, 2);
	assert_true(eta[0] == 0);
	assert_true(eta[1] == 100);
	assert_true(eta[2] == -1);
	assert_true(eta[3] == 100);
	assert_true(eta[4] == -1);
	assert_true(eta[5] == 200);
	pg_stack_eta(eta, q, 100, 1);
	assert_true(eta[5] == 300);
	pg_stack_eta(eta, q, 0, 1);
	assert_true(eta[0] == 0);
	assert_true(eta[3] == -1);
	queue_free(q);
}

/* The window's ETAs are on the page in seconds too, for it to count down between changes. */
static void test_the_window_counts_down(void **state)
{
	const row rows[] = {
		{ 1, PG_JOB_WAITING, TIP, false },
		{ 2, PG_JOB_BUILDING, MERGE(1), false },
		{ 3, PG_JOB_VERIFIED, NONE, true },
	};
	pg_job_list *q = queue_of(rows, 3);
	pg_buf out = PG_BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < q->n; i++)
		assert_non_null(q->items[i]->tag = pg_strdup("refs/tags/t"));
	pg_dash_window(&out, q, 600, 1);
	assert_non_null(strstr(out.ptr, "<td class=\"eta\" data-eta=\"600\">in about 10 min</td>"));
	/* tested, or not known: nothing to count down */
	assert_non_null(strstr(out.ptr, "<td class=\"eta\">tested</td>"));
	assert_non_null(strstr(out.ptr, "<td class=\"eta\">not known</td>"));
	assert_null(strstr(out.ptr, "data-eta=\"0\""));
	assert_null(strstr(out.ptr, "data-eta=\"-"));
	pg_buf_release(&out);
	queue_free(q);
}

/* A held pull is left out: the pull behind it goes onto the stack without it. */
static void test_a_held_pull_is_left_out(void **state)
{
	const row rows[] = {
		{ 1, PG_JOB_WAITING, TIP, false },
		{ 2, PG_JOB_VERIFIED, NONE, true },
		{ 3, PG_JOB_WAITING, MERGE(1), false },
		{ 4, PG_JOB_VERIFIED, NONE, false },
	};
	pg_job_list *q = queue_of(rows, 4);
	pg_oid tip = oid(TIP), m3 = oid(MERGE(3));
	pg_stack_plan p;

	(void)state;
	assert_int_equal(pg_stack_plan_make(&p, &tip, q), 0);
	assert_int_equal(p.next, 4);
	assert_int_equal(p.nunder, 2);
	assert_memory_equal(&p.tops[2], &m3, sizeof(m3));
	assert_int_equal(p.nstale, 0);
	pg_stack_plan_release(&p);
	queue_free(q);
}

/* Without a tip (no tree yet) nothing stands, nothing is stale, a waiting pull holds up the rest. */
static void test_no_tip(void **state)
{
	const row first[] = { { 1, PG_JOB_VERIFIED, NONE, false } };
	const row waiting[] = {
		{ 1, PG_JOB_WAITING, TIP, false },
		{ 2, PG_JOB_VERIFIED, NONE, false },
	};
	pg_job_list *q = queue_of(first, 1);
	pg_stack_plan p;

	(void)state;
	assert_int_equal(pg_stack_plan_make(&p, NULL, q), 0);
	assert_int_equal(p.next, 1);
	assert_int_equal(p.nunder, 0);
	pg_stack_plan_release(&p);
	queue_free(q);
	q = queue_of(waiting, 2);
	assert_int_equal(pg_stack_plan_make(&p, NULL, q), 0);
	assert_int_equal(p.next, 0);
	assert_int_equal(p.nstale, 0);
	pg_stack_plan_release(&p);
	queue_free(q);
}

/* Approving 3 through takes 1, 2 and 3 in order; a stale pull or one not waiting is refused. */
static void test_through(void **state)
{
	const row rows[] = {
		{ 1, PG_JOB_WAITING, TIP, false },
		{ 2, PG_JOB_WAITING, MERGE(1), false },
		{ 3, PG_JOB_WAITING, MERGE(2), false },
		{ 5, PG_JOB_WAITING, MERGE(4), false },
		{ 6, PG_JOB_VERIFIED, NONE, false },
	};
	pg_job_list *q = queue_of(rows, 5);
	pg_oid tip = oid(TIP);
	int64_t *ids = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(pg_stack_through(&ids, &n, &tip, q, 3), 0);
	assert_int_equal(n, 3);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], 2);
	assert_int_equal(ids[2], 3);
	free(ids);
	assert_int_equal(pg_stack_through(&ids, &n, &tip, q, 1), 0);
	assert_int_equal(n, 1);
	free(ids);
	assert_int_equal(pg_stack_through(&ids, &n, &tip, q, 5), PG_ECONFLICT);
	assert_null(ids);
	assert_int_equal(pg_stack_through(&ids, &n, &tip, q, 6), PG_ENOTFOUND);
	assert_int_equal(pg_stack_through(&ids, &n, &tip, q, 99), PG_ENOTFOUND);
	q->items[2]->held = true;
	assert_int_equal(pg_stack_through(&ids, &n, &tip, q, 3), PG_ECONFLICT);
	assert_non_null(strstr(pg_error_last(), "held in the queue: release it first"));
	pg_error_clear();
	queue_free(q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_next_goes_onto_the_stack),
		cmocka_unit_test(test_a_running_pull_holds_up_the_ones_behind),
		cmocka_unit_test(test_a_stack_that_is_gone_is_stale),
		cmocka_unit_test(test_the_branch_moved),
		cmocka_unit_test(test_a_merged_running_pull_is_stacked_on),
		cmocka_unit_test(test_a_held_pull_is_left_out),
		cmocka_unit_test(test_a_conflicting_pull_waits_behind_the_other),
		cmocka_unit_test(test_the_eta),
		cmocka_unit_test(test_the_window_counts_down),
		cmocka_unit_test(test_no_tip),
		cmocka_unit_test(test_through),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
