/* stack.h - the merge window's queue as a stack: which pull is tested next on which merges, which must be tested again. */
#ifndef PG_SERVER_STACK_H
#define PG_SERVER_STACK_H

#include "server/store.h"

/*
 * The queue (pg_store_queue, first place first) is read as a stack on
 * the integration branch's tip (docs/server.md, "The queue"): a pull
 * that waits for approval (or is being approved) stands on the stack when
 * it was tested on the stack's top so far, and its merge becomes the new
 * top; so does a pull whose run made its merge on the top and still
 * builds or boots (the pulls behind it are tested on it at once, as if it
 * passes, as Zuul does: when it fails, they are tested again).  A waiting
 * pull tested on anything else was tested on a stack that is gone (a pull
 * under it failed, was dropped or moved, or the branch moved) and must be
 * tested again.  The first pull verified and not yet tested is tested
 * next, on the top, unless a pull ahead of it runs without a merge yet or
 * is being approved: then it waits, as does every pull behind it (a pull
 * behind it that waits neither stands nor is stale until it is tested:
 * its stack may still be the one it was tested on).  A held
 * pull is left out: it neither stands on the stack nor holds anything up;
 * so is a verified pull that conflicts with a pull ahead of it that is
 * not held (pg_job.conflict_with), until that pull leaves the queue
 * (or a resolution recorded since settles it: the worker runs the entry
 * check again when the resolutions change).
 */
typedef struct pg_stack_plan {
	int64_t *stack;         /* the pulls that stand on the stack, bottom first */
	pg_oid *tops;           /* tops[0] the tip, tops[i] the merge of stack[i - 1] */
	size_t nstack;
	int64_t next;           /* the verified pull to test now; 0: none */
	size_t nunder;          /* with next: it merges onto tops[nunder], over stack[0..nunder) */
	int64_t *stale;         /* waiting pulls whose stack is gone: to be tested again */
	size_t nstale;
	size_t alloc_stack, alloc_tops, alloc_stale;
} pg_stack_plan;

/*
 * Whether queue->items[k] is a verified pull that waits behind a pull
 * ahead of it, not held, that it conflicts with (pg_job.conflict_with).
 */
bool pg_stack_waits_behind(const pg_job_list *queue, size_t k);

/*
 * An estimate of when each pull of the queue is tested (eta[i] seconds
 * from now; 0: it is, and waits; -1: not known, for a held pull, one
 * waiting behind a conflict, or when run_s, the seconds of a kernel run,
 * is not known): the pulls to test, in order, run worktrees at a time,
 * each for run_s, a running one counted whole.  Pulls tested again, or
 * whose stack fails, take longer.
 */
void pg_stack_eta(double *eta, const pg_job_list *queue, double run_s, unsigned worktrees);

/* The plan for queue on tip; tip NULL: the branch has no tip yet (nothing stands on it). */
int pg_stack_plan_make(pg_stack_plan *out, const pg_oid *tip, const pg_job_list *queue);
void pg_stack_plan_release(pg_stack_plan *p);

/*
 * The pulls pull id stands on, bottom first, ending with it: what
 * approving it through takes, in order.  PG_ENOTFOUND when id does not
 * wait in the queue; PG_ECONFLICT when the stack it was tested on is gone
 * (the message says so: it is tested again).
 */
int pg_stack_through(int64_t **ids, size_t *n, const pg_oid *tip, const pg_job_list *queue,
		     int64_t id);

#endif
