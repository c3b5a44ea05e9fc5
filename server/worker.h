/* worker.h - the job runner: concurrent verification, a kernel job per build worktree, cancellable. */
#ifndef PG_SERVER_WORKER_H
#define PG_SERVER_WORKER_H

#include "policies/policy.h"
#include "server/events.h"
#include "server/store.h"

/* A line for the service's log; the text may quote pull data (sanitize to print). */
typedef void (*pg_log_fn)(void *ctx, const char *line);

typedef struct pg_worker_opts {
	pg_store *store;            /* borrowed; outlives the worker */
	pg_events *events;          /* borrowed */
	const pg_policy *policy;    /* borrowed */
	const char *home;           /* $PULLGATE_HOME */
	const char *datadir;        /* where scripts/kernel/ lives */
	const char *tree;           /* NULL: home/linux */
	const char *branch;         /* NULL: master */
	const char *merge_name, *merge_email;
	const char *attest_key;     /* the attestation key, and its GNUPGHOME; NULL: the policy's */
	const char *attest_gnupg_home;
	const char *public_base;    /* push records' public URL: this + the repo name */
	unsigned stages;            /* pg_gate_stage flags after verify; 0: verify only */
	unsigned verify_workers;    /* at least 1 */
	unsigned build_worktrees;   /* kernel jobs at once, each in a build worktree; 0: 1 */
	bool each_on_head;          /* every pull tested on the branch's head, not on the
				       queue's stack (pipeline.queue: each) */
	uint64_t index_cache_size;  /* bytes home/identity may hold; 0: 1 GiB */
	uint64_t index_memory;      /* an identity index's working memory; 0: 16 MiB */
	uint64_t verify_memory;     /* address space of a verify's child process; 0: unlimited */
	pg_log_fn log;              /* may be NULL */
	void *log_ctx;
	/* a job was approved (by the policy or the maintainer); notice: the
	   notice file the approval wrote.  May be NULL. */
	void (*approved)(void *ctx, int64_t id, const char *notice);
	void *approved_ctx;
	/* a run was decided and its report stored with its KCIDB submission
	   (pg_store_update.kcidb).  May be NULL. */
	void (*decided)(void *ctx, int64_t id);
	/* whether a decided run is to be submitted (its ctx decided_ctx); NULL: never */
	bool (*submits)(void *ctx);
	void *decided_ctx;
} pg_worker_opts;

/* Every field zero, each zero its default: pg_worker_opts o = PG_WORKER_OPTS_INIT; */
#define PG_WORKER_OPTS_INIT { 0 }

typedef struct pg_worker pg_worker;

/*
 * Start verify_workers verification threads (queued -> verifying ->
 * rejected | verified) and, when stages is not 0, build_worktrees kernel
 * threads (verified -> merging -> building -> booting -> waiting |
 * approved | passed | rejected); server/job.h has every move.  A kernel
 * thread runs pg_gate_run in the first free build worktree, which
 * verifies again on the fetched tag, so a tag that moved after
 * verification is caught.  A push record's expected id must match the
 * tag object that was verified, else the job ends in error.  A job whose
 * approval (approval: auto) found the integration branch moved by another
 * job's since its merge was made goes back to the queue, to be tested on
 * the new head.  Every change of state is posted to the events and logged.
 */
int pg_worker_start(pg_worker **out, const pg_worker_opts *opts);

/*
 * The public URL of job j's repository, which the merge message and the
 * notice name, appended to out: a mail's URL (fetched from the mirror the
 * configuration maps it to); for a push record, public_base (NULL:
 * git://git.kernel.org/) and the record's repository name.  0 with
 * nothing appended when there is none (a mail whose URL is the location
 * fetched); PG_ENOMEM.
 */
int pg_worker_public_url(pg_buf *out, const pg_job *j, const char *public_base);

/* A new job was queued. */
void pg_worker_wake(pg_worker *w);

/*
 * Cancel a job: a queued or verified one at once; a running one is
 * stopped (its build or boot child is killed) and ends cancelled.
 * PG_ECONFLICT when the job has finished already.
 */
int pg_worker_cancel(pg_worker *w, int64_t id, const char *user);

/*
 * The maintainer approves a job that waits: the approval is recorded
 * (approving), the integration branch moves to the tested merge
 * (compare-and-swap), and the job is approved with its notice in the
 * store's outbox.  On PG_ECONFLICT (the job does not wait, or the branch
 * moved since the test; then the job is queued again to be tested anew)
 * nothing moves.  pg_worker_start ends the approvals a stop cut short
 * (docs/server.md, "An approval survives kill -9").
 */
int pg_worker_approve(pg_worker *w, int64_t id, const char *user);

/*
 * The merge window's queue (docs/server.md, "The queue"): a pull waits on
 * the merges of the pulls under it in the queue, and approving it moves
 * the branch through each of them first, in order.  *ids (the caller's to
 * free) the pulls an approval through id approves, bottom first, ending
 * with id; just id when the service does not stack (pipeline.queue: each).
 * PG_ENOTFOUND when id does not wait in the queue, PG_ECONFLICT when the
 * stack it was tested on is gone (it is tested again).
 */
int pg_worker_through(pg_worker *w, int64_t id, int64_t **ids, size_t *n);

/*
 * Approve pull id through: every pull of pg_worker_through's list, in
 * order, each as pg_worker_approve does (recorded, then a compare-and-swap
 * of the branch from its stack to its merge), stopping at the first that
 * fails; *approved counts those approved.  pg_worker_approve alone refuses
 * a pull with unapproved pulls under it (PG_ECONFLICT, naming them).
 */
int pg_worker_approve_through(pg_worker *w, int64_t id, const char *user, int64_t **ids,
			      size_t *n, size_t *approved);

/*
 * The maintainer holds pull id in the queue (the stack goes on without it,
 * nothing is tested on it) or lets it go on.  PG_ENOTFOUND when it is not
 * in the queue.
 */
int pg_worker_hold(pg_worker *w, int64_t id, bool held);

/*
 * The maintainer moves pull id one place up (by < 0) or down (by > 0) in
 * the queue: the pulls whose stack changes are tested again.
 * PG_ENOTFOUND when it is not in the queue, PG_ECONFLICT when it is first
 * (last) already.
 */
int pg_worker_move(pg_worker *w, int64_t id, int by);

/*
 * The maintainer rejects a job that waits, or was verified or passed; the
 * decision is recorded.  PG_ECONFLICT when it is in another state.
 */
int pg_worker_reject(pg_worker *w, int64_t id, const char *user);

/*
 * From the next job on (a running one keeps what it started with), use
 * o's policy, tree, branch, merge identity, public base, attestation key
 * and limits; the rest of o (what needs a restart) is ignored.
 * The old ones must stay valid until pg_worker_stop.
 */
void pg_worker_reload(pg_worker *w, const pg_worker_opts *o);

/* Stop: running jobs are interrupted and left queued for the next start. */
void pg_worker_stop(pg_worker *w);

#endif
