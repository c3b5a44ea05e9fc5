/* approve.c - the maintainer's approval (and the policy's): through the pulls under it, the branch moved by compare-and-swap, the intent recorded first, resumed after a stop. */
#include "server/worker_internal.h"
#include "common/testpoint.h"
#include "common/error.h"
#include "common/fs.h"
#include "repo/repo.h"
#include "pipeline/gate.h"
#include "pipeline/queue.h"
#include "pipeline/run.h"
#include "pipeline/tree.h"
#include "server/isolate.h"
#include "server/stack.h"
#include "server/job.h"
#include "verifier/mail.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

/* Whether dir is a run's log directory of this service's: under home/logs, nowhere else. */
static bool logs_dir(const pg_worker *w, const char *dir)
{
	size_t n = strlen(w->o.home);

	return dir && !strncmp(dir, w->o.home, n) && !strncmp(dir + n, "/logs/", 6) &&
	       !strstr(dir, "/../");
}

/* What an approval rests on, as the gate's run recorded it: a report to approve, and where. */
typedef struct approval {
	pg_report *r;
	pg_pull_spec spec;
	pg_gate_opts go;
	pg_buf url;
	char run_name[32];
} approval;

static void approval_release(approval *a)
{
	pg_report_free(a->r);
	pg_buf_release(&a->url);
}

static int approval_of(approval *a, pg_worker *w, const pg_worker_opts *o, const pg_job *j,
		       bool by_policy)
{
	pg_report *r;
	int err;

	memset(a, 0, sizeof(*a));
	pg_buf_init(&a->url, 0);
	if ((err = pg_report_new(&a->r)) < 0)
		return err;
	r = a->r;
	if (!(r->tag = pg_strdup(j->tag)))
		return pg_error_oom();
	r->tag_time = j->tag_time;
	r->tag_offset = j->tag_offset;
	if (!j->has_merge)
		return pg_error_set(PG_EINVALID, "no tested merge is recorded");
	r->has_merge = true;
	r->merge_base = j->merge_base;
	r->merge_commit = j->merge_commit;
	r->simulated = j->simulated;
	/* what else the gate's run recorded and an approval rests on */
	if (!j->has_tag_object)
		return pg_error_set(PG_EINVALID, "pull %lld has no recorded report to approve",
				    (long long)j->id);
	r->tag_object = j->tag_object;
	if ((j->tag_signer && !(r->tag_signer = pg_strdup(j->tag_signer))) ||
	    (logs_dir(w, j->run_dir) && !(r->run_dir = pg_strdup(j->run_dir))))
		return pg_error_oom();
	if ((err = pg_worker_pull_spec(&a->spec, &a->url, o, j)) < 0)
		return err;
	pg_worker_gate_opts(&a->go, a->run_name, sizeof(a->run_name), o, j->id);
	if (j->has_expect)
		a->go.expect_tag = &j->expect;
	a->go.by_policy = by_policy;
	/* the policy now, not the run's: trust withdrawn since the test approves nothing */
	a->go.policy = o->policy;
	return 0;
}

/* An approval is recorded before the branch moves: the pull is approving, and by whom. */
typedef struct intent {
	pg_worker *w;
	int64_t id;
	const char *user;
	enum pg_job_state state;
} intent;

static int record_intent(void *ctx)
{
	intent *in = ctx;
	pg_store_update u = PG_STORE_UPDATE_INIT;
	char msg[256];
	int err;

	snprintf(msg, sizeof(msg), "approved by %s: the integration branch moves now", in->user);
	u.message = msg;
	u.user = in->user;
	u.action = "approving";
	if ((err = pg_worker_set_state(in->w, in->id, in->state, PG_JOB_APPROVING,
				       PG_JOB_BY_MAINTAINER, &u)) == 0)
		in->state = PG_JOB_APPROVING;
	pg_testpoint("approve", "intent-recorded");
	return err;
}

/*
 * The branch moved: the pull is approved, in one transaction with its
 * notice put in the store's outbox (server/notify.c mails it, once).
 */
/*
 * The pulls that waited behind pull id for their conflict with it cannot
 * merge onto the branch that took it: each goes to the end of the queue
 * (in their order), so that the pulls behind it, tested without it, stand
 * as they were tested; it is tested there, and its failing merge names id
 * (attribute).  Under the approval lock: no claim comes between.
 */
static void conflicts_last(pg_worker *w, int64_t id)
{
	pg_job_list q;
	size_t i;

	if (pg_store_queue(&q, w->o.store) < 0) {
		pg_worker_logf(w, "pull %lld: the queue: %s", (long long)id, pg_error_last());
		pg_error_clear();
		return;
	}
	/* in their order, each behind every pull then in the queue, whatever comes or goes */
	for (i = 0; i < q.n; i++) {
		const pg_job *j = q.items[i];

		if (j->conflict_with != id || j->state != PG_JOB_VERIFIED)
			continue;
		if (pg_store_queue_to_end(w->o.store, j->id, PG_JOB_VERIFIED) < 0) {
			pg_worker_logf(w, "pull %lld: %s", (long long)j->id, pg_error_last());
			pg_error_clear();
			continue;
		}
		pg_worker_logf(w, "pull %lld: to the end of the queue: pull %lld, which it conflicts with, is "
		      "approved", (long long)j->id, (long long)id);
	}
	pg_job_list_release(&q);
}

static int approved(pg_worker *w, const pg_worker_opts *o, int64_t id, enum pg_job_state from,
		    const approval *a, const char *user, const char *notice, const char *how)
{
	pg_store_update u = PG_STORE_UPDATE_INIT;
	pg_buf note = PG_BUF_INIT;
	char merge[PG_OID_HEXSZ + 1];
	int err;

	pg_oid_tohex(merge, &a->r->merge_commit);
	if (a->go.by_policy)
		err = pg_buf_printf(&note, "%sapproved by the policy (approval: auto)%s: %s moved to "
				    "%.12s; attestation %s", how, a->r->simulated ? ", SIMULATED "
				    "(stand-in build and boot scripts)" : "", a->go.settings.branch,
				    merge, a->r->attestation ? a->r->attestation : "none");
	else
		err = pg_buf_printf(&note, "%sapproved by %s: %s moved to %.12s; attestation %s", how,
				    user, a->go.settings.branch, merge,
				    a->r->attestation ? a->r->attestation : "none");
	if (err < 0)
		goto done;
	u.message = note.ptr;
	u.user = user;
	u.action = "approve";
	u.notice = notice && *notice ? notice : NULL;
	if ((err = pg_worker_set_state(w, id, from, PG_JOB_APPROVED, PG_JOB_BY_MAINTAINER, &u)) < 0)
		goto done;
	if (pg_store_set_stage(w->o.store, id, "approve", pg_stage_status_name(PG_STAGE_PASSED),
			       note.ptr) < 0)
		pg_worker_logf(w, "pull %lld: %s", (long long)id, pg_error_last());
	pg_testpoint("approve", "recorded");
	if (pg_worker_stacking(o))
		conflicts_last(w, id);
	if (o->approved && u.notice)
		o->approved(o->approved_ctx, id, notice);
done:
	pg_buf_release(&note);
	return err;
}

/* The pulls job id stands on in the queue, bottom first, ending with it (pg_stack_through). */
static int stack_of(int64_t **ids, size_t *n, pg_worker *w, const pg_worker_opts *o, int64_t id)
{
	pg_job_list q;
	pg_oid tip;
	int err, has;

	*ids = NULL;
	*n = 0;
	if ((has = pg_worker_branch_tip(&tip, o)) < 0)
		return has;
	if (has == 1)
		return pg_error_set(PG_ENOTFOUND, "the integration branch has no tree yet");
	if ((err = pg_store_queue(&q, w->o.store)) < 0)
		return err;
	err = pg_stack_through(ids, n, &tip, &q, id);
	pg_job_list_release(&q);
	return err;
}

/*
 * A pull tested on the merges of pulls under it in the queue is approved
 * after them, never before: the branch would hold a tree nobody tested.
 * PG_ECONFLICT naming the pull to approve first, or saying that it does
 * not stand on the stack now (a pull ahead is being tested, or its stack
 * is gone and it is tested again); 0 when none is under it.
 */
static int under_first(pg_worker *w, const pg_worker_opts *o, const pg_job *j)
{
	int64_t *ids = NULL;
	size_t n = 0;
	int err;

	if (!pg_worker_stacking(o))
		return 0;
	if (j->held)
		return pg_error_set(PG_ECONFLICT, "pull %lld is held in the queue: release it first "
				    "(it is tested again if its stack is gone)", (long long)j->id);
	if ((err = stack_of(&ids, &n, w, o, j->id)) == PG_ENOTFOUND) {
		pg_error_clear();
		err = 0;
	} else if (err == 0 && n > 1)
		err = pg_error_set(PG_ECONFLICT, "pull %lld was tested on the merge of pull %lld, "
				   "which is not approved: approve pull %lld first, or approve "
				   "pull %lld through (the %zu pulls under it first, in order)",
				   (long long)j->id, (long long)ids[n - 2], (long long)ids[n - 2],
				   (long long)j->id, n - 1);
	free(ids);
	return err;
}

/*
 * Approve a waiting pull, for the maintainer user or (by_policy) for the
 * policy: recorded as approving before the branch moves, approved once it
 * moved; when it did not, waiting again (or queued, the branch being
 * elsewhere).  A start finishes what a stop cut short (pg_worker_start).
 */
int pg_worker_approve_job(pg_worker *w, int64_t id, const char *user, bool by_policy, bool recorded)
{
	pg_job *j = NULL;
	pg_buf notice = PG_BUF_INIT, note = PG_BUF_INIT, why = PG_BUF_INIT;
	pg_store_update u = PG_STORE_UPDATE_INIT;
	intent in = { w, id, user, PG_JOB__COUNT };
	approval a;
	pg_worker_opts o;
	bool moved = false;
	int err;

	memset(&a, 0, sizeof(a));
	/*
	 * The claim: under the lock a reject takes too, the pull is read and
	 * must still wait; nobody can reject it until the branch moved and the
	 * pull is recorded approved (or the approval failed, moving nothing).
	 */
	pthread_mutex_lock(&w->approve_lock);
	pthread_mutex_lock(&w->lock);
	o = w->o;
	pthread_mutex_unlock(&w->lock);
	if ((err = pg_store_get(&j, w->o.store, id)) < 0)
		goto done;
	in.state = j->state;
	if (recorded ? in.state != PG_JOB_APPROVING :
		       !pg_job_can_move(in.state, PG_JOB_APPROVING, PG_JOB_BY_MAINTAINER)) {
		err = pg_error_set(PG_ECONFLICT, "pull %lld is %s, not waiting for approval",
				   (long long)id, pg_job_state_name(in.state));
		goto done;
	}
	if (!recorded && (err = under_first(w, &o, j)) < 0)
		goto done;
	if ((err = approval_of(&a, w, &o, j, by_policy)) < 0)
		goto done;
	if (!recorded) {
		a.go.approving = record_intent;
		a.go.approving_ctx = &in;
	}
	a.go.branch_moved = &moved;
	err = pg_gate_approve(a.r, &a.spec, &a.go, &notice);
	if (a.r->approved) {
		/* the branch moved: the approval stands, whatever came after the move */
		if (err < 0)
			pg_worker_logf(w, "pull %lld: after the branch moved: %s", (long long)id, pg_error_last());
		err = approved(w, &o, id, in.state, &a, user, notice.ptr, "");
		goto done;
	}
	pg_buf_puts(&why, err < 0 ? pg_error_last() : "the approval moved nothing");
	if (err == PG_ECONFLICT && by_policy && !moved) {
		/* the sender pushed the tag again since it was verified: nothing is approved */
		u.message = why.ptr;
		if (pg_worker_set_state(w, id, in.state, PG_JOB_ERROR, PG_JOB_BY_MAINTAINER, &u) < 0)
			pg_worker_logf(w, "pull %lld: %s", (long long)id, pg_error_last());
	} else if (err == PG_ECONFLICT) {
		/* the branch or the tag moved since the test: nothing moved; test it anew */
		pg_buf_printf(&note, "%s: testing it again on the new head", why.ptr);
		u.message = note.ptr;
		if (pg_worker_set_state(w, id, in.state, PG_JOB_QUEUED, PG_JOB_BY_MAINTAINER, &u) < 0)
			pg_worker_logf(w, "pull %lld: %s", (long long)id, pg_error_last());
		pg_worker_wake(w);
		err = pg_error_set(PG_ECONFLICT, "%s; the pull is queued to be tested again", why.ptr);
	} else if (in.state == PG_JOB_APPROVING) {
		/* recorded, and then nothing moved: it waits again */
		pg_buf_printf(&note, "the approval by %s moved nothing: %s", user, why.ptr);
		u.message = note.ptr;
		if (pg_worker_set_state(w, id, in.state, PG_JOB_WAITING, PG_JOB_BY_MAINTAINER, &u) < 0)
			pg_worker_logf(w, "pull %lld: %s", (long long)id, pg_error_last());
		err = pg_error_set(err < 0 ? err : PG_EIO, "%s", why.ptr);
	} else if (err < 0) {
		/* refused before anything was recorded: it waits as it did, and the log says why */
		pg_worker_logf(w, "pull %lld: the approval by %s is refused: %s", (long long)id, user,
		      why.ptr);
		err = pg_error_set(err, "%s", why.ptr);
	}
done:
	pthread_mutex_unlock(&w->approve_lock);
	approval_release(&a);
	pg_job_free(j);
	pg_buf_release(&notice);
	pg_buf_release(&note);
	pg_buf_release(&why);
	return err;
}

int pg_worker_approve(pg_worker *w, int64_t id, const char *user)
{
	return pg_worker_approve_job(w, id, user, false, false);
}

int pg_worker_through(pg_worker *w, int64_t id, int64_t **ids, size_t *n)
{
	pg_worker_opts o;
	enum pg_job_state state;
	int err;

	pthread_mutex_lock(&w->lock);
	o = w->o;
	pthread_mutex_unlock(&w->lock);
	if (pg_worker_stacking(&o))
		return stack_of(ids, n, w, &o, id);
	if ((err = pg_worker_state_of(w, id, &state)) < 0)
		return err;
	if (state != PG_JOB_WAITING)
		return pg_error_set(PG_ENOTFOUND, "pull %lld does not wait for approval: it is %s",
				    (long long)id, pg_job_state_name(state));
	if (!(*ids = malloc(sizeof(**ids))))
		return pg_error_oom();
	(*ids)[0] = id;
	*n = 1;
	return 0;
}

int pg_worker_hold(pg_worker *w, int64_t id, bool held)
{
	int err;

	/* under the lock the queue is planned with: never between a look and a claim */
	pthread_mutex_lock(&w->approve_lock);
	err = pg_store_queue_hold(w->o.store, id, held);
	pthread_mutex_unlock(&w->approve_lock);
	if (err == 0) {
		pg_worker_logf(w, "pull %lld: %s in the queue", (long long)id, held ? "held" : "let go on");
		pg_events_queue_changed(w->o.events);
		pg_worker_wake(w);
	}
	return err;
}

int pg_worker_move(pg_worker *w, int64_t id, int by)
{
	int err;

	/* under the lock the queue is planned with: never between a look and a claim */
	pthread_mutex_lock(&w->approve_lock);
	err = pg_store_queue_move(w->o.store, id, by < 0 ? -1 : 1);
	pthread_mutex_unlock(&w->approve_lock);
	if (err == 0) {
		pg_worker_logf(w, "pull %lld: moved %s in the queue", (long long)id, by < 0 ? "up" : "down");
		pg_events_queue_changed(w->o.events);
		pg_worker_wake(w);
	}
	return err;
}

int pg_worker_approve_through(pg_worker *w, int64_t id, const char *user, int64_t **ids,
			      size_t *n, size_t *approved)
{
	int err;

	*approved = 0;
	if ((err = pg_worker_through(w, id, ids, n)) < 0)
		return err;
	/* each in turn, each recorded before the branch moves: a stop leaves it at a tested merge */
	for (; *approved < *n; ++*approved) {
		if ((err = pg_worker_approve_job(w, (*ids)[*approved], user, false, false)) < 0)
			return err;
	}
	return 0;
}

/* Who recorded the approval that job j is in: the last "approving" decision's user. */
static const char *approver(const pg_job *j)
{
	size_t i;

	for (i = j->ndecisions; i-- > 0;)
		if (!strcmp(j->decisions[i].action, "approving"))
			return j->decisions[i].user;
	return NULL;
}

/* One approval a stop cut short: finished when the branch moved, else undone. */
static void resume_one(pg_worker *w, const pg_job *j)
{
	const char *user = approver(j);
	bool by_policy = user && !strcmp(user, "pullgate");
	pg_store_update u = PG_STORE_UPDATE_INIT;
	pg_buf notice = PG_BUF_INIT, note = PG_BUF_INIT;
	enum pg_job_state to;
	approval a;
	int err;

	if ((err = approval_of(&a, w, &w->o, j, by_policy)) == 0 &&
	    (err = pg_gate_approve_resume(a.r, &a.spec, &a.go, &notice)) == 1) {
		if (approved(w, &w->o, j->id, PG_JOB_APPROVING, &a, user ? user : "unknown",
			     notice.ptr, "an approval the last stop cut short, finished: ") < 0)
			pg_worker_logf(w, "pull %lld: %s", (long long)j->id, pg_error_last());
		goto done;
	}
	if (err == 0 && by_policy) {
		/* nothing moved: the policy approves it now, as it would have */
		if (pg_worker_approve_job(w, j->id, "pullgate", true, true) < 0)
			pg_worker_logf(w, "pull %lld: the policy's approval: %s", (long long)j->id,
			      pg_error_last());
		goto done;
	}
	if (err == 0) {
		pg_buf_printf(&note, "the approval by %s was cut short by the last stop before the "
			      "branch moved: nothing moved; approve it again", user ? user : "unknown");
		to = PG_JOB_WAITING;
	} else {
		pg_buf_printf(&note, "the approval by %s was cut short by the last stop: %s%s",
			      user ? user : "unknown", pg_error_last(),
			      err == PG_ECONFLICT ? ": testing again" : "");
		to = err == PG_ECONFLICT ? PG_JOB_QUEUED : PG_JOB_ERROR;
	}
	u.message = note.ptr;
	if (pg_worker_set_state(w, j->id, PG_JOB_APPROVING, to, PG_JOB_BY_MAINTAINER, &u) < 0)
		pg_worker_logf(w, "pull %lld: %s", (long long)j->id, pg_error_last());
done:
	approval_release(&a);
	pg_buf_release(&notice);
	pg_buf_release(&note);
}

/* At start: every approval the last stop cut short, finished or undone. */
int pg_worker_resume_approvals(pg_worker *w)
{
	pg_job *oldest = NULL, *j = NULL;
	int err;

	while ((err = pg_store_oldest(&oldest, w->o.store, PG_JOB_APPROVING)) == 0 && oldest) {
		if ((err = pg_store_get(&j, w->o.store, oldest->id)) < 0)
			break;
		resume_one(w, j);
		/* it moved on, or stays approving: then it is left for the next start */
		if (j->state == PG_JOB_APPROVING && pg_worker_state_of(w, j->id, &j->state) == 0 &&
		    j->state == PG_JOB_APPROVING) {
			pg_worker_logf(w, "pull %lld: an approval the last stop cut short stays approving",
			      (long long)j->id);
			pg_job_free(j);
			pg_job_free(oldest);
			return 0;
		}
		pg_job_free(j);
		pg_job_free(oldest);
		j = oldest = NULL;
	}
	pg_job_free(j);
	pg_job_free(oldest);
	return err;
}

