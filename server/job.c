/* job.c - the job state machine: the states' names and kinds, the one table of allowed moves; the kinds' and verdicts' names. */
#include "server/job.h"
#include "common/error.h"

enum { FINAL = 1, RUNNING = 2 };

static const struct {
	const char *name;
	unsigned kind;
} states[PG_JOB__COUNT] = {
	[PG_JOB_QUEUED] = { "queued", 0 },
	[PG_JOB_VERIFYING] = { "verifying", RUNNING },
	[PG_JOB_VERIFIED] = { "verified", 0 },
	[PG_JOB_MERGING] = { "merging", RUNNING },
	[PG_JOB_BUILDING] = { "building", RUNNING },
	[PG_JOB_BOOTING] = { "booting", RUNNING },
	[PG_JOB_WAITING] = { "waiting", FINAL },
	[PG_JOB_APPROVING] = { "approving", 0 },
	[PG_JOB_APPROVED] = { "approved", FINAL },
	[PG_JOB_PASSED] = { "passed", FINAL },
	[PG_JOB_REJECTED] = { "rejected", FINAL },
	[PG_JOB_CANCELLED] = { "cancelled", FINAL },
	[PG_JOB_ERROR] = { "error", FINAL },
};

#define W PG_JOB_BY_WORKER
#define M PG_JOB_BY_MAINTAINER
#define S PG_JOB_BY_START

/*
 * moves[from][to]: who may move a pull from one state to another; 0, no
 * one.  The worker claims a pull, says when the build and the boot start,
 * records the verdict (or that it could not decide), gives a run that a
 * shutdown cut short back to the queue, and ends a run that the
 * maintainer cancelled.  The maintainer cancels what does not run, and
 * decides on what waits, or was verified or passed; an approval that
 * finds the integration branch moved since the test queues the pull to be
 * tested again.  An approval, the maintainer's (or the policy's, which
 * approves for the maintainer with approval: auto), is recorded as
 * approving before the branch moves, and ends approved, or, when the
 * branch did not move, waiting again (or queued, the branch being
 * elsewhere now; or error, when it cannot be told); an approval the last
 * stop cut short is ended the same way at the start (docs/server.md).
 * The start requeues the runs the last stop cut short.  In the merge
 * window's queue, a pull that waits or runs on a stack that is gone (a
 * pull under it failed or left, or the branch moved) goes back to
 * verified, keeping its place, to be tested on the stack as it is now.
 * Which stage ends a run follows from the stages running in order, from
 * merge, without a gap: only the boot comes before the approval.
 */
static const unsigned char moves[PG_JOB__COUNT][PG_JOB__COUNT] = {
	[PG_JOB_QUEUED] = {
		[PG_JOB_VERIFYING] = W,
		[PG_JOB_CANCELLED] = M,
	},
	[PG_JOB_VERIFYING] = {
		[PG_JOB_VERIFIED] = W, [PG_JOB_REJECTED] = W, [PG_JOB_ERROR] = W,
		[PG_JOB_CANCELLED] = W,
		[PG_JOB_QUEUED] = W | S,
	},
	[PG_JOB_VERIFIED] = {
		[PG_JOB_MERGING] = W,
		[PG_JOB_REJECTED] = M, [PG_JOB_CANCELLED] = M,
	},
	[PG_JOB_MERGING] = {
		[PG_JOB_BUILDING] = W,
		[PG_JOB_PASSED] = W, [PG_JOB_REJECTED] = W, [PG_JOB_ERROR] = W,
		[PG_JOB_CANCELLED] = W,
		[PG_JOB_QUEUED] = W | S,
		[PG_JOB_VERIFIED] = W,
	},
	[PG_JOB_BUILDING] = {
		[PG_JOB_BOOTING] = W,
		[PG_JOB_PASSED] = W, [PG_JOB_REJECTED] = W, [PG_JOB_ERROR] = W,
		[PG_JOB_CANCELLED] = W,
		[PG_JOB_QUEUED] = W | S,
		[PG_JOB_VERIFIED] = W,
	},
	[PG_JOB_BOOTING] = {
		[PG_JOB_WAITING] = W, [PG_JOB_APPROVING] = W,
		[PG_JOB_PASSED] = W, [PG_JOB_REJECTED] = W, [PG_JOB_ERROR] = W,
		[PG_JOB_CANCELLED] = W,
		[PG_JOB_QUEUED] = W | S,
		[PG_JOB_VERIFIED] = W,
	},
	[PG_JOB_WAITING] = {
		[PG_JOB_VERIFIED] = W,
		[PG_JOB_APPROVING] = M,
		[PG_JOB_REJECTED] = M,
		[PG_JOB_QUEUED] = M,
	},
	[PG_JOB_APPROVING] = {
		[PG_JOB_APPROVED] = M, [PG_JOB_WAITING] = M, [PG_JOB_QUEUED] = M,
		[PG_JOB_ERROR] = M,
	},
	[PG_JOB_PASSED] = {
		[PG_JOB_REJECTED] = M,
	},
	/* approved, rejected, cancelled and error are the end */
};

static bool valid(enum pg_job_state state)
{
	return (unsigned)state < PG_JOB__COUNT;
}

const char *pg_job_state_name(enum pg_job_state state)
{
	return valid(state) ? states[state].name : "unknown";
}

int pg_job_state_from_name(enum pg_job_state *out, const char *name)
{
	unsigned i;

	for (i = 0; name && i < PG_JOB__COUNT; i++)
		if (!strcmp(states[i].name, name)) {
			*out = (enum pg_job_state)i;
			return 0;
		}
	return pg_error_set(PG_EINVALID, "unknown state '%.40s'", name ? name : "");
}

static const char *const kinds[] = { [PG_JOB_PUSH] = "push", [PG_JOB_MAIL] = "mail" };
static const char *const verdicts[] = {
	[PG_VERDICT_ACCEPT] = "accept", [PG_VERDICT_REJECT] = "reject",
};

/* The index of name in names[0..n): 0, or PG_EINVALID naming what was looked for. */
static int find(unsigned *out, const char *const *names, size_t n, const char *what,
		const char *name)
{
	size_t i;

	for (i = 0; name && i < n; i++)
		if (!strcmp(names[i], name)) {
			*out = (unsigned)i;
			return 0;
		}
	return pg_error_set(PG_EINVALID, "unknown %s '%.40s'", what, name ? name : "");
}

const char *pg_job_kind_name(enum pg_job_kind kind)
{
	return (unsigned)kind < PG_ARRAY_SIZE(kinds) ? kinds[kind] : "unknown";
}

int pg_job_kind_from_name(enum pg_job_kind *out, const char *name)
{
	unsigned i;
	int err = find(&i, kinds, PG_ARRAY_SIZE(kinds), "kind", name);

	if (err == 0)
		*out = (enum pg_job_kind)i;
	return err;
}

const char *pg_job_verdict_name(enum pg_verdict verdict)
{
	return (unsigned)verdict < PG_ARRAY_SIZE(verdicts) ? verdicts[verdict] : "unknown";
}

int pg_job_verdict_from_name(enum pg_verdict *out, const char *name)
{
	unsigned i;
	int err = find(&i, verdicts, PG_ARRAY_SIZE(verdicts), "verdict", name);

	if (err == 0)
		*out = (enum pg_verdict)i;
	return err;
}

bool pg_job_state_is_final(enum pg_job_state state)
{
	return valid(state) && (states[state].kind & FINAL);
}

bool pg_job_state_is_running(enum pg_job_state state)
{
	return valid(state) && (states[state].kind & RUNNING);
}

bool pg_job_can_move(enum pg_job_state from, enum pg_job_state to, enum pg_job_actor by)
{
	return valid(from) && valid(to) && (moves[from][to] & by) != 0;
}

static const char *actor_name(enum pg_job_actor by)
{
	return by == PG_JOB_BY_WORKER ? "the worker" : by == PG_JOB_BY_MAINTAINER ?
	       "a maintainer" : by == PG_JOB_BY_START ? "the start" : "nobody";
}

int pg_job_move(pg_store *s, int64_t id, enum pg_job_state from, enum pg_job_state to,
		enum pg_job_actor by, const pg_store_update *u)
{
	pg_store_update x = PG_STORE_UPDATE_INIT;

	if (!pg_job_can_move(from, to, by))
		return pg_error_set(PG_ECONFLICT, "pull %lld is %s: %s cannot make it %s",
				    (long long)id, pg_job_state_name(from), actor_name(by),
				    pg_job_state_name(to));
	if (u)
		x = *u;
	x.new_run = to == PG_JOB_VERIFYING;
	return pg_store_set_state(s, id, from, to, &x);
}

int pg_job_claim(pg_job **out, pg_store *s, enum pg_job_state from, enum pg_job_state to)
{
	pg_job *j = NULL;
	int err;

	*out = NULL;
	if (!pg_job_can_move(from, to, PG_JOB_BY_WORKER))
		return pg_error_set(PG_ECONFLICT, "the worker cannot take a pull from %s to %s",
				    pg_job_state_name(from), pg_job_state_name(to));
	for (;;) {
		if ((err = pg_store_oldest(&j, s, from)) < 0 || !j)
			return err;
		err = pg_job_move(s, j->id, from, to, PG_JOB_BY_WORKER, NULL);
		if (err != PG_ECONFLICT)
			break;
		/* another worker took it between the look and the move: look again */
		pg_error_clear();
		pg_job_free(j);
		j = NULL;
	}
	if (err == 0) {
		j->state = to;
		j->attempts += to == PG_JOB_VERIFYING;
	}
	if (err < 0) {
		pg_job_free(j);
		return err;
	}
	*out = j;
	return 0;
}

int pg_job_requeue(size_t *n, pg_store *s)
{
	pg_store_update u = PG_STORE_UPDATE_INIT;
	pg_job *j = NULL;
	unsigned st;
	int err = 0;

	*n = 0;
	u.message = "interrupted: run again";
	for (st = 0; st < PG_JOB__COUNT && err == 0; st++) {
		if (!pg_job_state_is_running((enum pg_job_state)st))
			continue;
		while (err == 0 && (err = pg_store_oldest(&j, s, (enum pg_job_state)st)) == 0 && j) {
			err = pg_job_move(s, j->id, (enum pg_job_state)st, PG_JOB_QUEUED,
					  PG_JOB_BY_START, &u);
			pg_job_free(j);
			j = NULL;
			if (err == PG_ECONFLICT) {
				/* it moved on by itself since the look: nothing to requeue */
				pg_error_clear();
				err = 0;
			} else if (err == 0)
				(*n)++;
		}
	}
	return err;
}
