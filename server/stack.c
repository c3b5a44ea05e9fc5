/* stack.c - the merge window's queue read as a stack on the branch's tip: the next test, its base, what is stale. */
#include "server/stack.h"
#include "server/job.h"
#include "common/array.h"
#include "common/error.h"

void pg_stack_plan_release(pg_stack_plan *p)
{
	free(p->stack);
	free(p->tops);
	free(p->stale);
	memset(p, 0, sizeof(*p));
}

static bool stands(const pg_job *j)
{
	return j->state == PG_JOB_WAITING || j->state == PG_JOB_APPROVING;
}

/* Its merge is made and it builds or boots now: the next pull may go onto it (speculatively). */
static bool merged_and_running(const pg_job *j)
{
	return (j->state == PG_JOB_MERGING || j->state == PG_JOB_BUILDING ||
		j->state == PG_JOB_BOOTING) && j->has_merge;
}

/*
 * A verified pull that conflicts with a pull still ahead of it in the queue
 * (found when it entered: pg_store_set_conflict) waits behind that pull,
 * without holding up the pulls behind it: tested now, it would fail its
 * merge.  It goes on once the other leaves the queue or is held.
 */
bool pg_stack_waits_behind(const pg_job_list *queue, size_t k)
{
	const pg_job *j = queue->items[k];
	size_t i;

	if (j->state != PG_JOB_VERIFIED || !j->conflict_with)
		return false;
	for (i = 0; i < k; i++)
		if (queue->items[i]->id == j->conflict_with)
			return !queue->items[i]->held;
	return false;
}

int pg_stack_plan_make(pg_stack_plan *out, const pg_oid *tip, const pg_job_list *queue)
{
	pg_oid top;
	bool has_top = tip != NULL, blocked = false;
	size_t i, n = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (tip)
		top = *tip;
	else
		memset(&top, 0, sizeof(top));
	if ((err = PG_ARRAY_GROW(out->tops, 1, out->alloc_tops)) < 0)
		return err;
	out->tops[0] = top;
	for (i = 0; i < queue->n && err == 0; i++) {
		const pg_job *j = queue->items[i];

		if (j->held || pg_stack_waits_behind(queue, i))
			continue;
		if (stands(j) && !has_top) {
			/* no tip to stand on was read: nothing is stale, nothing runs */
			blocked = true;
			continue;
		}
		if ((stands(j) || merged_and_running(j)) && blocked)
			/* behind a pull not tested yet: whether its stack is gone is not known */
			continue;
		if ((stands(j) || merged_and_running(j)) && j->has_merge &&
		    !pg_oid_cmp(&j->merge_base, &top)) {
			top = j->merge_commit;
			if ((err = PG_ARRAY_GROW(out->tops, n + 2, out->alloc_tops)) < 0 ||
			    (err = PG_ARRAY_GROW(out->stack, n + 1, out->alloc_stack)) < 0)
				break;
			out->stack[n++] = j->id;
			out->tops[n] = top;
		} else if (j->state == PG_JOB_WAITING) {
			/* tested on a stack that is gone: the top does not move past it */
			if ((err = PG_ARRAY_GROW(out->stale, out->nstale + 1, out->alloc_stale)) == 0)
				out->stale[out->nstale++] = j->id;
			/* it is tested again before the pulls behind it */
			blocked = true;
		} else if (j->state == PG_JOB_VERIFIED && !blocked) {
			out->next = j->id;
			out->nunder = n;
			blocked = true;
		} else
			/* running, being approved on another base, or verified behind one */
			blocked = true;
	}
	out->nstack = n;
	if (err < 0)
		pg_stack_plan_release(out);
	return err;
}

int pg_stack_through(int64_t **ids, size_t *n, const pg_oid *tip, const pg_job_list *queue,
		     int64_t id)
{
	pg_stack_plan p;
	size_t i, k;
	int err;

	*ids = NULL;
	*n = 0;
	for (k = 0; k < queue->n && queue->items[k]->id != id; k++)
		;
	if (k == queue->n || !stands(queue->items[k]))
		return pg_error_set(PG_ENOTFOUND, "pull %lld does not wait in the queue",
				    (long long)id);
	if (queue->items[k]->held)
		return pg_error_set(PG_ECONFLICT, "pull %lld is held in the queue: release it first",
				    (long long)id);
	if ((err = pg_stack_plan_make(&p, tip, queue)) < 0)
		return err;
	for (i = 0; i < p.nstack && p.stack[i] != id; i++)
		;
	if (i == p.nstack)
		err = pg_error_set(PG_ECONFLICT, "pull %lld does not stand on the queue's stack now: "
				   "a pull ahead of it is being tested, or the stack it was tested "
				   "on is gone (a pull under it failed or left the queue, or the "
				   "branch moved) and it is tested again", (long long)id);
	else if (!(*ids = malloc((i + 1) * sizeof(**ids))))
		err = pg_error_oom();
	else {
		memcpy(*ids, p.stack, (i + 1) * sizeof(**ids));
		*n = i + 1;
	}
	pg_stack_plan_release(&p);
	return err;
}

void pg_stack_eta(double *eta, const pg_job_list *queue, double run_s, unsigned worktrees)
{
	size_t i, runs = 0;

	if (!worktrees)
		worktrees = 1;
	for (i = 0; i < queue->n; i++) {
		const pg_job *j = queue->items[i];

		if (j->state == PG_JOB_WAITING || j->state == PG_JOB_APPROVING)
			eta[i] = 0;
		else if (j->held || pg_stack_waits_behind(queue, i) || run_s <= 0 ||
			 (j->state != PG_JOB_VERIFIED && !pg_job_state_is_running(j->state)))
			eta[i] = -1;
		else
			eta[i] = (double)((++runs + worktrees - 1) / worktrees) * run_s;
	}
}
