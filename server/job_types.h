/* job_types.h - what a job's typed fields hold (its state, how it came in, its verdict) and their names. */
#ifndef PG_SERVER_JOB_TYPES_H
#define PG_SERVER_JOB_TYPES_H

#include "report/report.h"

/*
 * The store keeps each of these as its name (a text column) and the API,
 * the dashboard and the log show the name; everything else in server/
 * holds the value.  A name is read back only by the store (store_read.c:
 * one that is none is a damaged row) and from a request's query.  The
 * names are job.c's.
 */

/*
 * The states of a pull (docs/server.md, "Jobs").  Every change of state
 * goes through pg_job_move (server/job.h), which allows only the moves of
 * the table in job.c.  A new pull starts queued.
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
	PG_JOB_APPROVING,  /* an approval is recorded and moves the branch now: a start
			      that finds one finishes it (the branch moved) or undoes it */
	PG_JOB_APPROVED,   /* the integration branch moved (by the maintainer or the policy) */
	PG_JOB_PASSED,     /* every configured stage passed, and approval is not one of them */
	PG_JOB_REJECTED,   /* a finding of severity error, a failed stage, or the maintainer said no */
	PG_JOB_CANCELLED,  /* cancelled on request */
	PG_JOB_ERROR,      /* pullgate could not decide (the message says why) */
	PG_JOB__COUNT
};

/* How a pull came in. */
enum pg_job_kind {
	PG_JOB_PUSH,       /* a push record: "push" */
	PG_JOB_MAIL,       /* a request-pull mail: "mail" */
};

/* The state's name as the store, the API and the dashboard spell it; "unknown" out of range. */
const char *pg_job_state_name(enum pg_job_state state);

/* The state called name: 0, or PG_EINVALID (*out untouched) when no state is (name may be NULL). */
int pg_job_state_from_name(enum pg_job_state *out, const char *name);

/* "push" or "mail"; "unknown" out of range. */
const char *pg_job_kind_name(enum pg_job_kind kind);
/* The kind called name: 0, or PG_EINVALID (*out untouched). */
int pg_job_kind_from_name(enum pg_job_kind *out, const char *name);

/* A report's verdict as the store and the API spell it: "accept" or "reject". */
const char *pg_job_verdict_name(enum pg_verdict verdict);
/* The verdict called name: 0, or PG_EINVALID (*out untouched). */
int pg_job_verdict_from_name(enum pg_verdict *out, const char *name);

#endif
