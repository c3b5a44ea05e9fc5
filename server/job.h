/* job.h - a pull's life as a state machine: its states, their names, and the moves allowed between them. */
#ifndef PG_SERVER_JOB_H
#define PG_SERVER_JOB_H

#include "server/store.h"

/*
 * The states and their names are server/job_types.h's (the store holds a
 * job's state typed, too); which are final or running, and the moves
 * between them, are here.
 */

/* Who moves a pull: each move of the table names who may make it. */
enum pg_job_actor {
	PG_JOB_BY_WORKER = 1 << 0,     /* the verify threads and the kernel thread */
	PG_JOB_BY_MAINTAINER = 1 << 1, /* approve, reject and cancel, through the API */
	PG_JOB_BY_START = 1 << 2,      /* the service starting again after a stop */
};

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
