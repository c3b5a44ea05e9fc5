/* test_job.c - unit tests for the job state machine: names, final and running sets, the table, moves. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "server/job.h"

#define W PG_JOB_BY_WORKER
#define M PG_JOB_BY_MAINTAINER
#define S PG_JOB_BY_START

/* Every allowed move, written out once more: the table must be exactly this. */
static const struct {
	enum pg_job_state from, to;
	unsigned by;
} allowed[] = {
	{ PG_JOB_QUEUED, PG_JOB_VERIFYING, W },
	{ PG_JOB_QUEUED, PG_JOB_CANCELLED, M },
	{ PG_JOB_VERIFYING, PG_JOB_VERIFIED, W },
	{ PG_JOB_VERIFYING, PG_JOB_REJECTED, W },
	{ PG_JOB_VERIFYING, PG_JOB_ERROR, W },
	{ PG_JOB_VERIFYING, PG_JOB_CANCELLED, W },
	{ PG_JOB_VERIFYING, PG_JOB_QUEUED, W | S },
	{ PG_JOB_VERIFIED, PG_JOB_MERGING, W },
	{ PG_JOB_VERIFIED, PG_JOB_REJECTED, M },
	{ PG_JOB_VERIFIED, PG_JOB_CANCELLED, M },
	{ PG_JOB_MERGING, PG_JOB_BUILDING, W },
	{ PG_JOB_MERGING, PG_JOB_PASSED, W },
	{ PG_JOB_MERGING, PG_JOB_REJECTED, W },
	{ PG_JOB_MERGING, PG_JOB_ERROR, W },
	{ PG_JOB_MERGING, PG_JOB_CANCELLED, W },
	{ PG_JOB_MERGING, PG_JOB_QUEUED, W | S },
	{ PG_JOB_MERGING, PG_JOB_VERIFIED, W },
	{ PG_JOB_BUILDING, PG_JOB_BOOTING, W },
	{ PG_JOB_BUILDING, PG_JOB_PASSED, W },
	{ PG_JOB_BUILDING, PG_JOB_REJECTED, W },
	{ PG_JOB_BUILDING, PG_JOB_ERROR, W },
	{ PG_JOB_BUILDING, PG_JOB_CANCELLED, W },
	{ PG_JOB_BUILDING, PG_JOB_QUEUED, W | S },
	{ PG_JOB_BUILDING, PG_JOB_VERIFIED, W },
	{ PG_JOB_BOOTING, PG_JOB_WAITING, W },
	{ PG_JOB_BOOTING, PG_JOB_APPROVING, W },
	{ PG_JOB_BOOTING, PG_JOB_PASSED, W },
	{ PG_JOB_BOOTING, PG_JOB_REJECTED, W },
	{ PG_JOB_BOOTING, PG_JOB_ERROR, W },
	{ PG_JOB_BOOTING, PG_JOB_CANCELLED, W },
	{ PG_JOB_BOOTING, PG_JOB_QUEUED, W | S },
	{ PG_JOB_BOOTING, PG_JOB_VERIFIED, W },
	{ PG_JOB_WAITING, PG_JOB_VERIFIED, W },
	{ PG_JOB_WAITING, PG_JOB_APPROVING, M },
	{ PG_JOB_APPROVING, PG_JOB_APPROVED, M },
	{ PG_JOB_APPROVING, PG_JOB_WAITING, M },
	{ PG_JOB_APPROVING, PG_JOB_QUEUED, M },
	{ PG_JOB_APPROVING, PG_JOB_ERROR, M },
	{ PG_JOB_WAITING, PG_JOB_REJECTED, M },
	{ PG_JOB_WAITING, PG_JOB_QUEUED, M },
	{ PG_JOB_PASSED, PG_JOB_REJECTED, M },
};

static const enum pg_job_actor actors[] = { W, M, S };

static unsigned expected(enum pg_job_state from, enum pg_job_state to)
{
	size_t i;

	for (i = 0; i < PG_ARRAY_SIZE(allowed); i++)
		if (allowed[i].from == from && allowed[i].to == to)
			return allowed[i].by;
	return 0;
}

static void test_names_round_trip(void **state)
{
	static const char *const names[] = {
		"queued", "verifying", "verified", "merging", "building", "booting", "waiting",
		"approving", "approved", "passed", "rejected", "cancelled", "error",
	};
	enum pg_job_state st, got;

	(void)state;
	assert_int_equal(PG_ARRAY_SIZE(names), PG_JOB__COUNT);
	for (st = 0; st < PG_JOB__COUNT; st++) {
		assert_string_equal(pg_job_state_name(st), names[st]);
		got = PG_JOB__COUNT;
		assert_int_equal(pg_job_state_from_name(&got, names[st]), 0);
		assert_int_equal(got, st);
	}
	got = PG_JOB_QUEUED;
	assert_int_equal(pg_job_state_from_name(&got, "bogus"), PG_EINVALID);
	assert_string_equal(pg_error_last(), "unknown state 'bogus'");
	assert_int_equal(pg_job_state_from_name(&got, NULL), PG_EINVALID);
	assert_int_equal(pg_job_state_from_name(&got, "Queued"), PG_EINVALID);
	assert_int_equal(got, PG_JOB_QUEUED); /* untouched */
	assert_string_equal(pg_job_state_name(PG_JOB__COUNT), "unknown");
}

static void test_kinds_and_verdicts_round_trip(void **state)
{
	enum pg_job_kind kind = PG_JOB_MAIL;
	enum pg_verdict verdict = PG_VERDICT_ACCEPT;

	(void)state;
	assert_string_equal(pg_job_kind_name(PG_JOB_PUSH), "push");
	assert_string_equal(pg_job_kind_name(PG_JOB_MAIL), "mail");
	assert_int_equal(pg_job_kind_from_name(&kind, "push"), 0);
	assert_int_equal(kind, PG_JOB_PUSH);
	assert_int_equal(pg_job_kind_from_name(&kind, "mail"), 0);
	assert_int_equal(kind, PG_JOB_MAIL);
	assert_int_equal(pg_job_kind_from_name(&kind, "Push"), PG_EINVALID);
	assert_string_equal(pg_error_last(), "unknown kind 'Push'");
	assert_int_equal(pg_job_kind_from_name(&kind, NULL), PG_EINVALID);
	assert_int_equal(kind, PG_JOB_MAIL); /* untouched */
	assert_string_equal(pg_job_kind_name((enum pg_job_kind)7), "unknown");

	assert_string_equal(pg_job_verdict_name(PG_VERDICT_ACCEPT), "accept");
	assert_string_equal(pg_job_verdict_name(PG_VERDICT_REJECT), "reject");
	assert_int_equal(pg_job_verdict_from_name(&verdict, "reject"), 0);
	assert_int_equal(verdict, PG_VERDICT_REJECT);
	assert_int_equal(pg_job_verdict_from_name(&verdict, "accept"), 0);
	assert_int_equal(verdict, PG_VERDICT_ACCEPT);
	assert_int_equal(pg_job_verdict_from_name(&verdict, ""), PG_EINVALID);
	assert_string_equal(pg_error_last(), "unknown verdict ''");
	assert_int_equal(verdict, PG_VERDICT_ACCEPT);
	pg_error_clear();
}

static void test_final_and_running(void **state)
{
	enum pg_job_state st, to;

	(void)state;
	assert_true(pg_job_state_is_running(PG_JOB_VERIFYING));
	assert_true(pg_job_state_is_running(PG_JOB_MERGING));
	assert_true(pg_job_state_is_running(PG_JOB_BUILDING));
	assert_true(pg_job_state_is_running(PG_JOB_BOOTING));
	assert_false(pg_job_state_is_running(PG_JOB_QUEUED));
	assert_false(pg_job_state_is_running(PG_JOB_VERIFIED));
	assert_false(pg_job_state_is_running(PG_JOB_WAITING));
	assert_false(pg_job_state_is_running(PG_JOB__COUNT));
	/* what the API's event streams and the dashboard wait for */
	assert_true(pg_job_state_is_final(PG_JOB_WAITING));
	assert_true(pg_job_state_is_final(PG_JOB_APPROVED));
	assert_true(pg_job_state_is_final(PG_JOB_PASSED));
	assert_true(pg_job_state_is_final(PG_JOB_REJECTED));
	assert_true(pg_job_state_is_final(PG_JOB_CANCELLED));
	assert_true(pg_job_state_is_final(PG_JOB_ERROR));
	assert_false(pg_job_state_is_final(PG_JOB_QUEUED));
	assert_false(pg_job_state_is_final(PG_JOB_VERIFIED));
	assert_false(pg_job_state_is_final(PG_JOB_BUILDING));
	assert_false(pg_job_state_is_final(PG_JOB__COUNT));
	for (st = 0; st < PG_JOB__COUNT; st++) {
		bool worker_moves = false, start_moves = false;

		for (to = 0; to < PG_JOB__COUNT; to++) {
			worker_moves |= pg_job_can_move(st, to, W);
			start_moves |= pg_job_can_move(st, to, S);
		}
		/* final: the worker has nothing more to do with it; an approval in
		 * progress is the maintainer's to end, and not final; a waiting pull
		 * whose stack is gone the queue sends back to be tested again */
		assert_int_equal((pg_job_state_is_final(st) && st != PG_JOB_WAITING) ||
				 st == PG_JOB_APPROVING, !worker_moves);
		/* a run cut short goes back to the queue, from any running state, and only then */
		assert_int_equal(pg_job_state_is_running(st), start_moves);
		assert_int_equal(pg_job_state_is_running(st), pg_job_can_move(st, PG_JOB_QUEUED, S));
		/* no one but its worker moves a running job */
		for (to = 0; to < PG_JOB__COUNT && pg_job_state_is_running(st); to++)
			assert_false(pg_job_can_move(st, to, M));
	}
}

static void test_the_table(void **state)
{
	enum pg_job_state from, to;
	size_t a;

	(void)state;
	for (from = 0; from < PG_JOB__COUNT; from++)
		for (to = 0; to < PG_JOB__COUNT; to++)
			for (a = 0; a < PG_ARRAY_SIZE(actors); a++)
				assert_int_equal(pg_job_can_move(from, to, actors[a]),
						 (expected(from, to) & actors[a]) != 0);
	/* a few refusals that matter, by name */
	assert_false(pg_job_can_move(PG_JOB_VERIFYING, PG_JOB_REJECTED, M)); /* the worker decides */
	assert_false(pg_job_can_move(PG_JOB_BUILDING, PG_JOB_CANCELLED, M)); /* its worker stops it */
	assert_false(pg_job_can_move(PG_JOB_VERIFIED, PG_JOB_APPROVED, M));  /* untested */
	assert_false(pg_job_can_move(PG_JOB_WAITING, PG_JOB_APPROVED, M));   /* unrecorded */
	assert_false(pg_job_can_move(PG_JOB_BOOTING, PG_JOB_APPROVED, W));   /* ditto */
	assert_false(pg_job_can_move(PG_JOB_REJECTED, PG_JOB_REJECTED, M));
	assert_false(pg_job_can_move(PG_JOB_APPROVED, PG_JOB_QUEUED, S));
	assert_false(pg_job_can_move(PG_JOB_QUEUED, PG_JOB__COUNT, W));
	assert_false(pg_job_can_move(PG_JOB__COUNT, PG_JOB_QUEUED, S));
	for (from = 0; from < PG_JOB__COUNT; from++)
		assert_false(pg_job_can_move(from, from, W | M | S)); /* nothing stays where it is */
}

/* --- moves in a store ---------------------------------------------------------------- */

/* A fresh store in memory with n queued jobs, ids 1..n. */
static pg_store *store_with(size_t n)
{
	pg_job_spec jobs[3];
	pg_buf ids = PG_BUF_INIT;
	pg_store *s = NULL;
	pg_delivery d;
	size_t i, created;

	memset(jobs, 0, sizeof(jobs));
	memset(&d, 0, sizeof(d));
	for (i = 0; i < n; i++) {
		jobs[i].kind = PG_JOB_PUSH;
		jobs[i].repo = "/srv/kees.git";
		jobs[i].tag = "refs/tags/a";
	}
	assert_int_equal(pg_store_open(&s, ":memory:"), 0);
	d.id = "d1";
	d.hook = "push";
	d.digest = "x";
	d.state = PG_JOB_QUEUED;
	d.jobs = jobs;
	d.njobs = n;
	assert_int_equal(pg_store_add_delivery(&ids, &created, s, &d), 0);
	assert_int_equal(created, n);
	pg_buf_release(&ids);
	return s;
}

static void assert_state(pg_store *s, int64_t id, const char *state, size_t ndecisions)
{
	pg_job *j = NULL;

	assert_int_equal(pg_store_get(&j, s, id), 0);
	assert_string_equal(pg_job_state_name(j->state), state);
	assert_int_equal(j->ndecisions, ndecisions);
	pg_job_free(j);
}

static void test_a_move_is_a_compare_and_swap(void **state)
{
	pg_store *s = store_with(1);
	pg_store_update u = PG_STORE_UPDATE_INIT;

	(void)state;
	u.message = "rejected by linus";
	u.user = "linus";
	u.action = "reject";
	/* the table refuses before the store is asked */
	assert_int_equal(pg_job_move(s, 1, PG_JOB_QUEUED, PG_JOB_REJECTED, M, &u), PG_ECONFLICT);
	assert_string_equal(pg_error_last(), "pull 1 is queued: a maintainer cannot make it rejected");
	assert_state(s, 1, "queued", 0);
	assert_int_equal(pg_job_move(s, 1, PG_JOB_QUEUED, PG_JOB_VERIFYING, W, NULL), 0);
	assert_int_equal(pg_job_move(s, 1, PG_JOB_VERIFYING, PG_JOB_VERIFIED, W, NULL), 0);
	/* the worker and the maintainer both saw verified: the first to move wins */
	assert_int_equal(pg_job_move(s, 1, PG_JOB_VERIFIED, PG_JOB_REJECTED, M, &u), 0);
	assert_int_equal(pg_job_move(s, 1, PG_JOB_VERIFIED, PG_JOB_MERGING, W, NULL), PG_ECONFLICT);
	assert_string_equal(pg_error_last(), "pull 1 is rejected, not verified");
	assert_int_equal(pg_job_move(s, 1, PG_JOB_VERIFIED, PG_JOB_REJECTED, M, &u), PG_ECONFLICT);
	assert_state(s, 1, "rejected", 1);
	assert_int_equal(pg_job_move(s, 7, PG_JOB_QUEUED, PG_JOB_VERIFYING, W, NULL), PG_ENOTFOUND);
	pg_store_free(s);
}

static void test_claim_and_requeue(void **state)
{
	pg_store *s = store_with(3);
	pg_job *j = NULL;
	size_t n;

	(void)state;
	/* the oldest queued job first, and each only once; a run counts an attempt */
	assert_int_equal(pg_job_claim(&j, s, PG_JOB_QUEUED, PG_JOB_VERIFYING), 0);
	assert_non_null(j);
	assert_int_equal(j->id, 1);
	assert_string_equal(pg_job_state_name(j->state), "verifying");
	assert_int_equal(j->attempts, 1);
	pg_job_free(j);
	assert_int_equal(pg_job_claim(&j, s, PG_JOB_QUEUED, PG_JOB_VERIFYING), 0);
	assert_int_equal(j->id, 2);
	pg_job_free(j);
	assert_int_equal(pg_job_move(s, 2, PG_JOB_VERIFYING, PG_JOB_VERIFIED, W, NULL), 0);
	assert_int_equal(pg_job_claim(&j, s, PG_JOB_VERIFIED, PG_JOB_MERGING), 0);
	assert_int_equal(j->id, 2);
	assert_int_equal(j->attempts, 1); /* the kernel stages are the same run */
	pg_job_free(j);
	assert_int_equal(pg_job_claim(&j, s, PG_JOB_VERIFIED, PG_JOB_MERGING), 0);
	assert_null(j);
	/* a claim the table does not allow is refused, not tried */
	assert_int_equal(pg_job_claim(&j, s, PG_JOB_QUEUED, PG_JOB_APPROVED), PG_ECONFLICT);
	assert_null(j);
	/* at start the two runs go back to the queue; the queued job stays as it is */
	assert_int_equal(pg_job_requeue(&n, s), 0);
	assert_int_equal(n, 2);
	assert_int_equal(pg_store_get(&j, s, 2), 0);
	assert_string_equal(pg_job_state_name(j->state), "queued");
	assert_string_equal(j->message, "interrupted: run again");
	pg_job_free(j);
	assert_int_equal(pg_job_claim(&j, s, PG_JOB_QUEUED, PG_JOB_VERIFYING), 0);
	assert_int_equal(j->id, 1);
	assert_int_equal(j->attempts, 2);
	pg_job_free(j);
	pg_store_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_round_trip),
		cmocka_unit_test(test_kinds_and_verdicts_round_trip),
		cmocka_unit_test(test_final_and_running),
		cmocka_unit_test(test_the_table),
		cmocka_unit_test(test_a_move_is_a_compare_and_swap),
		cmocka_unit_test(test_claim_and_requeue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
