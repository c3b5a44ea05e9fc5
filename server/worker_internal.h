/* worker_internal.h - what worker.c and queue_entry.c share: the worker, its threads' slots and their calls of each other (private). */
#ifndef PG_SERVER_WORKER_INTERNAL_H
#define PG_SERVER_WORKER_INTERNAL_H

#include "server/worker.h"
#include "pipeline/gate.h"
#include "pipeline/tree.h"
#include "server/job.h"

#include <pthread.h>
#include <signal.h>

#define MAX_THREADS 32 /* 16 verify workers and 16 build worktrees */

/*
 * A worker thread and the job it runs.  While it runs one, the job's
 * state is the thread's to move (no one else may move a running job), so
 * state is where the job is; cancel is the flag its gate watches.
 */
typedef struct slot {
	pg_worker *w;
	bool kernel;                     /* merge, build and boot; else verify */
	int64_t id;                      /* the job it runs; 0: none */
	enum pg_job_state state;
	volatile sig_atomic_t cancel;
	bool branch_moved;               /* the approval found the branch moved: test again */
	bool auto_approve;               /* the policy approves what passes (approval: auto) */
	bool by_user;
	char user[128];
	pg_worker_opts o;                /* the settings the job runs with, taken when claimed */
	uint64_t status_ms;              /* when the last transient progress was posted */
	bool rerun;                      /* a run to attribute a failure: the state stays */
	/* the stack the job is tested on (the merge window's queue): its merge goes onto
	   tops[nunder], over the pulls under[0..nunder); tops[0] is the branch's tip */
	bool stacked;
	bool has_tip;                    /* tops[0] is the branch's tip; false: there was no tree */
	pg_oid *tops;
	int64_t *under;
	size_t nunder;
	/* the entry check run again by this thread (resolutions_looked_at), under w->lock:
	   a change seen, the pulls to check not read yet; then those pulls */
	bool recheck_pending;
	int64_t *recheck;
	size_t nrecheck;
} slot;

/* A pull of the queue that a run left in a running state no thread runs (orphans). */
typedef struct orphan {
	int64_t id;
	unsigned returns;       /* times sent back to be tested again */
	bool said;              /* a failure to send it back was logged */
} orphan;

struct pg_worker {
	pg_worker_opts o;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_mutex_t approve_lock;   /* one approval at a time */
	pthread_mutex_t entry_lock;     /* one pull enters the queue at a time */
	bool stopping;
	bool resolutions_seen;  /* resolutions holds the digest of the last look */
	uint64_t resolutions;   /* pg_tree_resolutions_digest, at the last look */
	bool resolutions_failing; /* the last look's digest failed, and the log said so */
	bool recheck_refused;   /* a claim waited for the entry check run again: wake after */
	orphan *orphans;        /* under approve_lock */
	size_t norphans, alloc_orphans;
	pthread_t threads[MAX_THREADS];
	size_t nthreads;
	bool git_ready;         /* pg_git_init() succeeded: shut down after the threads */
	slot slots[MAX_THREADS];        /* one per thread */
};

/* worker.c */

/* A line for the service's log, when there is a log. */
void pg_worker_logf(pg_worker *w, const char *fmt, ...) PG_PRINTF(2, 3);

/* Move a job (pg_job_move), then tell the event streams and the log. */
int pg_worker_set_state(pg_worker *w, int64_t id, enum pg_job_state from, enum pg_job_state to,
	 enum pg_job_actor by, const pg_store_update *u);

/* Where job id is now. */
int pg_worker_state_of(pg_worker *w, int64_t id, enum pg_job_state *state);

/* The gate's settings: serve.yaml's, else the policy's, else the defaults. */
void pg_worker_gate_settings(pg_gate_settings *out, const pg_worker_opts *o);

/* The maintainer's tree: 0 with *t to free, 1 when there is none (nothing was merged yet). */
int pg_worker_open_tree(pg_tree **t, const pg_worker_opts *o);

/* Whether a thread of the worker runs pull id now. */
bool pg_worker_runs_now(pg_worker *w, int64_t id);

/* queue_entry.c */

/*
 * Verify accepted pull j, which enters the queue: its conflicts with the
 * pulls ahead are recorded.  Under the entry lock.
 */
void pg_queue_entry_enter(slot *s, const pg_job *j, const pg_report *r);

/* Whether pull next of the queue q waits for the entry check run again (resolutions_looked_at). */
bool pg_queue_entry_waits(pg_worker *w, const pg_job_list *q, int64_t next);

/* A kernel thread's look for work: the entry check run again when the resolutions changed. */
void pg_queue_entry_look(slot *s, const pg_worker_opts *o);

/*
 * The pulls of the queue q in a running state no thread runs, sent back
 * to be tested again (a third time: an error); under approve_lock.  How
 * many moved.
 */
size_t pg_queue_entry_orphans(pg_worker *w, const pg_job_list *q);

/* worker.c: what the approval (approve.c) shares with the runs */
int pg_worker_pull_spec(pg_pull_spec *spec, pg_buf *url, const pg_worker_opts *o, const pg_job *j);
void pg_worker_gate_opts(pg_gate_opts *go, char *run_name, size_t cap, const pg_worker_opts *o,
			 int64_t id);
bool pg_worker_stacking(const pg_worker_opts *o);
int pg_worker_branch_tip(pg_oid *tip, const pg_worker_opts *o);

/* approve.c: an approval by the maintainer or the policy, and those a stop cut short */
int pg_worker_approve_job(pg_worker *w, int64_t id, const char *user, bool by_policy, bool recorded);
int pg_worker_resume_approvals(pg_worker *w);

#endif
