/* job.h - a pull's life as a state machine: its states, their names, and the moves allowed between them. */
#ifndef PG_SERVER_JOB_H
#define PG_SERVER_JOB_H

#include "server/store.h"

/*
 * The states of a pull (docs/server.md, "Jobs").  The store keeps each as
 * its name; nothing else in server/ spells one.  Every change of state goes
 * through pg_job_move, which allows only the moves of the table in job.c.
 * A new pull starts queued.
 */
enum pg_job_state {
	PG_JOB_QUEUED,     /* waits for a verify worker (new, or to be run again) */
	PG_JOB_VERIFYING,
	PG_JOB_VERIFIED,   /* accepted by verify: waits for the kernel stages (or,
			      when none are configured, done) */
	PG_JOB_MERGING,
	PG_JOB_BUILDING,
	PG_JOB_BOOTING,
	PG_JOB_WAITING,    /* every stage passed: waits for the maintainer's approval */
	PG_JOB_APPROVED,   /* the integration branch moved (by the maintainer or the policy) */
	PG_JOB_PASSED,     /* every configured stage passed, and approval is not one of them */
	PG_JOB_REJECTED,   /* a finding of severity error, a failed stage, or the maintainer said no */
	PG_JOB_CANCELLED,  /* cancelled on request */
	PG_JOB_ERROR,      /* pullgate could not decide (the message says why) */
	PG_JOB__COUNT
};

/* Who moves a pull: each move of the table names who may make it. */
enum pg_job_actor {
	PG_JOB_BY_WORKER = 1 << 0,     /* the verify threads and the kernel thread */
	PG_JOB_BY_MAINTAINER = 1 << 1, /* approve, reject and cancel, through the API */
	PG_JOB_BY_START = 1 << 2,      /* the service starting again after a stop */
};

/* The state's name as the store, the API and the dashboard spell it; "unknown" out of range. */
const char *pg_job_state_name(enum pg_job_state state);

/* The state called name: 0, or PG_EINVALID (*out untouched) when no state is (name may be NULL). */
int pg_job_state_from_name(enum pg_job_state *out, const char *name);

/*
 * Final: nothing more happens to the pull without a person, because it is
 * decided or because it waits for the maintainer (waiting).  Verified is
 * not final, though it is the end when no kernel stage is configured,
 * which only the caller knows.
 */
bool pg_job_state_is_final(enum pg_job_state state);

/* Running: a worker runs the pull now; at start such pulls go back to the queue. */
bool pg_job_state_is_running(enum pg_job_state state);

/* Whether the table lets by move a pull from from to to. */
bool pg_job_can_move(enum pg_job_state from, enum pg_job_state to, enum pg_job_actor by);

/*
 * The one way a pull changes state: move pull id from from to to, as by,
 * with what u carries (a message, a report, a decision; u may be NULL),
 * in one transaction.  The move must be in the table, and the store
 * changes only while the pull is still in from (a compare-and-swap on the
 * stored state), so that of two actors who saw the same state, say the
 * worker ending a run and the maintainer rejecting, one wins.  Errors:
 * PG_ECONFLICT when the table does not allow the move or the pull is no
 * longer in from (either way its state does not allow it, which is what
 * a maintainer's request gets told; the message says which), PG_ENOTFOUND
 * for an unknown id.  A move to verifying counts a run (attempts).
 */
int pg_job_move(pg_store *s, int64_t id, enum pg_job_state from, enum pg_job_state to,
		enum pg_job_actor by, const pg_store_update *u);

/*
 * A worker takes the oldest pull in from and moves it to to: *out is the
 * pull (its state to, without stages and decisions; the caller's to
 * free), or NULL when none is in from.  Of two workers that look at once,
 * each gets another pull.
 */
int pg_job_claim(pg_job **out, pg_store *s, enum pg_job_state from, enum pg_job_state to);

/* At start: pulls whose run the last stop cut short go back to the queue; *n counts them. */
int pg_job_requeue(size_t *n, pg_store *s);

#endif
