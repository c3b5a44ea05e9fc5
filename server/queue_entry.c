/* queue_entry.c - the merge window's queue: a pull's entry check, run again when the resolutions change, and the runs no thread runs sent back. */
#include "server/worker_internal.h"
#include "common/array.h"
#include "common/error.h"
#include "common/testpoint.h"
#include "server/entry.h"
#include "server/isolate.h"

/* The pulls in the queue ahead of j (all of them when j has no place yet): 0, with *ahead to free. */
static int pulls_ahead(const pg_job ***ahead, size_t *n, const pg_job_list *q, const pg_job *j)
{
	size_t i;

	*n = 0;
	if (!(*ahead = calloc(q->n ? q->n : 1, sizeof(**ahead))))
		return pg_error_oom();
	for (i = 0; i < q->n; i++)
		if (q->items[i]->id != j->id &&
		    (!j->queue_rank || q->items[i]->queue_rank < j->queue_rank))
			(*ahead)[(*n)++] = q->items[i];
	return 0;
}

/* Run `pullgate conflicts` on the pull against the listed pulls ahead: the sentence, and with whom. */
static int conflicts_with(pg_buf *sentence, int64_t *with, const pg_worker_opts *o,
			  volatile sig_atomic_t *cancel, const pg_job *j, const pg_oid *tag_object,
			  const pg_job **listed, size_t nlisted, const pg_buf *lines)
{
	pg_isolate_opts io = { 0 };
	pg_isolate_pull ip = { 0 };
	pg_gate_settings gs;
	pg_json *doc = NULL;
	int err;

	pg_worker_gate_settings(&gs, o);
	ip.repo = j->repo;
	ip.tag = j->tag;
	ip.expect = tag_object; /* the tag its verify read, and no other */
	io.home = o->home;
	io.policy = o->policy;
	io.max_memory = o->verify_memory;
	io.settings = &gs;
	io.cancel = cancel;
	if ((err = pg_isolated_conflicts(&doc, &ip, lines->ptr, lines->len, &io)) == 0)
		err = pg_entry_sentence(sentence, with, doc, listed, nlisted, gs.branch);
	pg_json_free(doc);
	return err;
}

/*
 * The check at a pull's entry into the queue q: merged in memory with
 * every pull ahead of it, in a child process, tag_object the tag its
 * verify read.  *sentence its textual conflicts (empty: none), *with the
 * pull it waits behind (0: none).
 */
static int entry_check(pg_buf *sentence, int64_t *with, const pg_worker_opts *o,
		       volatile sig_atomic_t *cancel, const pg_job_list *q, const pg_job *j,
		       const pg_oid *tag_object)
{
	const pg_job **ahead = NULL, **listed = NULL;
	pg_buf lines = PG_BUF_INIT;
	bool *used = NULL;
	size_t i, n = 0, nlisted = 0;
	int err;

	*with = 0;
	if ((err = pulls_ahead(&ahead, &n, q, j)) < 0)
		goto done;
	if (!(used = calloc(n ? n : 1, sizeof(*used))) ||
	    !(listed = calloc(n ? n : 1, sizeof(*listed)))) {
		err = pg_error_oom();
		goto done;
	}
	if ((err = pg_entry_ahead_file(&lines, used, ahead, n)) < 0)
		goto done;
	for (i = 0; i < n; i++)
		if (used[i])
			listed[nlisted++] = ahead[i];
	/* the first in the queue merges onto the branch: its merge stage says whether it conflicts */
	if (nlisted)
		err = conflicts_with(sentence, with, o, cancel, j, tag_object, listed, nlisted,
				     &lines);
done:
	free(used);
	free(listed);
	free(ahead);
	pg_buf_release(&lines);
	return err;
}

/*
 * Verify accepted the pull, which enters the queue (under the entry lock:
 * no other pull enters meanwhile): merged in memory with every pull ahead
 * of it, in a child process, its textual conflicts are recorded at once
 * (pg_store_set_conflict), and it waits behind the first pull it conflicts
 * with (server/stack.h).  A check that cannot decide is logged and records
 * nothing: the pull's merge stage finds any conflict later.
 */
void pg_queue_entry_enter(slot *s, const pg_job *j, const pg_report *r)
{
	pg_job_list q = { 0 };
	pg_buf sentence = PG_BUF_INIT;
	int64_t with = 0;
	int err;

	if ((err = pg_store_queue(&q, s->o.store)) == 0 &&
	    (err = entry_check(&sentence, &with, &s->o, &s->cancel, &q, j, &r->tag_object)) == 0)
		err = pg_store_set_conflict(s->o.store, j->id, s->state,
					    sentence.len ? sentence.ptr : NULL, with);
	if (err == 0 && sentence.len) {
		pg_events_post(s->o.events, j->id, "progress", "queue", sentence.ptr);
		pg_worker_logf(s->w, "pull %lld: %s", (long long)j->id, sentence.ptr);
	}
	if (err < 0) {
		pg_worker_logf(s->w, "pull %lld: its conflicts with the pulls ahead could not be checked: %s",
		      (long long)j->id, pg_error_last());
		pg_error_clear();
		/* what an earlier entry found is not this one's */
		if (pg_store_set_conflict(s->o.store, j->id, s->state, NULL, 0) < 0)
			pg_error_clear();
	}
	pg_buf_release(&sentence);
	pg_job_list_release(&q);
}

/*
 * The entry check of a verified pull j of the queue q, run again: what it
 * finds now is recorded, and the log says when the pull stops waiting
 * behind another or waits again.  One that cannot decide leaves what the
 * last found (the merge stage finds any conflict).  Whether the pull it
 * waits behind changed.
 */
static bool entry_again(pg_worker *w, const pg_worker_opts *o, volatile sig_atomic_t *cancel,
			const pg_job_list *q, const pg_job *j)
{
	pg_buf sentence = PG_BUF_INIT;
	const char *now;
	int64_t with = 0;
	bool moved = false;
	int err;

	if ((err = entry_check(&sentence, &with, o, cancel, q, j, &j->tag_object)) == 0)
		err = pg_store_set_conflict(w->o.store, j->id, PG_JOB_VERIFIED,
					    sentence.len ? sentence.ptr : NULL, with);
	if (err == PG_ECONFLICT) {
		/* the store's answer when the pull moved on since the look */
		char why[512];
		enum pg_job_state state;

		snprintf(why, sizeof(why), "%s", pg_error_last());
		pg_error_clear();
		if (pg_worker_state_of(w, j->id, &state) == 0 && state != PG_JOB_VERIFIED)
			goto done; /* tested, decided or sent back since the look */
		pg_error_set(err, "%s", why);
	}
	if (err < 0) {
		pg_worker_logf(w, "pull %lld: its conflicts could not be checked again: %s; what was found "
		      "stands", (long long)j->id, pg_error_last());
		pg_error_clear();
		goto done;
	}
	now = sentence.len ? sentence.ptr : "it conflicts with no pull ahead";
	if (with == j->conflict_with && j->conflict && !strcmp(j->conflict, now))
		goto done;
	if (j->conflict_with && !with)
		pg_worker_logf(w, "pull %lld: waits behind pull %lld no longer, the resolutions having "
		      "changed: %s", (long long)j->id, (long long)j->conflict_with, now);
	else if (with && with != j->conflict_with)
		pg_worker_logf(w, "pull %lld: waits behind pull %lld, the resolutions having changed: %s",
		      (long long)j->id, (long long)with, now);
	else
		pg_worker_logf(w, "pull %lld: the resolutions having changed: %s", (long long)j->id, now);
	pg_events_post(w->o.events, j->id, "progress", "queue", now);
	/* the window's conflicts cell says it too, "resolved" or whom it waits behind */
	pg_events_queue_changed(w->o.events);
	moved = with != j->conflict_with;
done:
	pg_buf_release(&sentence);
	return moved;
}

/*
 * Whether the sentence of j's entry check names pull id (pg_entry_sentence:
 * "conflicts with pull 9 (", "; with pull 9 (").
 */
static bool names_pull(const pg_job *j, int64_t id)
{
	char first[48], next[48];

	snprintf(first, sizeof(first), "conflicts with pull %lld (", (long long)id);
	snprintf(next, sizeof(next), "; with pull %lld (", (long long)id);
	return !strncmp(j->conflict, first, strlen(first)) || strstr(j->conflict, next);
}

/*
 * Whether the entry check of j is run again when the resolutions change:
 * j conflicted as it entered with a pull that is still in the queue (the
 * one it waits behind, or one a resolution settled), and is not tested
 * yet.  Once the other is decided, j waits no longer, and its finding
 * stays as it was ("resolved" on the window): a failing merge names the
 * other (attribute).  A conflict with the branch alone has no other.
 */
static bool again(const pg_job_list *q, const pg_job *j)
{
	size_t i;

	if (j->state != PG_JOB_VERIFIED || !j->conflict || !j->has_tag_object)
		return false;
	for (i = 0; i < q->n; i++) {
		const pg_job *other = q->items[i];

		if (other != j && (j->conflict_with ? other->id == j->conflict_with :
				   names_pull(j, other->id)))
			return true;
	}
	return false;
}

static bool has_id(const int64_t *ids, size_t n, int64_t id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/*
 * Whether pull next of the queue q waits for the entry check run again
 * (resolutions_looked_at): while a thread has seen the resolutions change
 * and not read yet which pulls it checks, or while it checks next or a
 * pull ahead of it (what it finds may put that pull first, or keep next
 * waiting).  The pulls ahead of those it checks go on.  A claim that
 * waits so is woken when the check ends (recheck_refused).
 */
bool pg_queue_entry_waits(pg_worker *w, const pg_job_list *q, int64_t next)
{
	size_t i, k;
	bool waits = false;

	pthread_mutex_lock(&w->lock);
	for (k = 0; k < MAX_THREADS && !waits; k++)
		waits = w->slots[k].recheck_pending;
	for (i = 0; i < q->n && !waits; i++) {
		for (k = 0; k < MAX_THREADS && !waits; k++)
			waits = has_id(w->slots[k].recheck, w->slots[k].nrecheck, q->items[i]->id);
		if (q->items[i]->id == next)
			break;
	}
	w->recheck_refused |= waits;
	pthread_mutex_unlock(&w->lock);
	return waits;
}

/* The digest of the resolutions could not be made: said once, until a look makes one. */
static void resolutions_unread(pg_worker *w)
{
	bool say;

	pthread_mutex_lock(&w->lock);
	say = !w->resolutions_failing;
	w->resolutions_failing = true;
	pthread_mutex_unlock(&w->lock);
	if (say)
		pg_worker_logf(w, "queue: the resolutions cannot be looked at: %s; the entry check is not "
		      "run again until they can", pg_error_last());
	pg_error_clear();
}

/* The verified pulls of the queue whose entry check is run again (again): *ids to free. */
static int to_recheck(int64_t **ids, size_t *n, pg_worker *w)
{
	pg_job_list q = { 0 };
	size_t i, alloc = 0;
	int err;

	*ids = NULL;
	*n = 0;
	if ((err = pg_store_queue(&q, w->o.store)) == 0)
		for (i = 0; i < q.n && err == 0; i++)
			if (again(&q, q.items[i]) && (err = PG_ARRAY_GROW(*ids, *n + 1, alloc)) == 0)
				(*ids)[(*n)++] = q.items[i]->id;
	pg_job_list_release(&q);
	return err;
}

/*
 * A kernel thread's look for work: when a resolution was recorded, moved
 * or removed under refs/pullgate/resolutions/ since the last look (the
 * first look after the start counts as one), the entry check runs again
 * on every verified pull of the queue that conflicted as it entered with
 * a pull still in it (again), so that a pull a resolution now settles
 * stops waiting behind the other, and one whose resolution is gone (or
 * no longer applies) waits again before it is tested.  Under the entry
 * lock: no pull enters meanwhile.  Neither the pulls it checks nor those
 * behind them are claimed until it is done (waits_for_recheck).  A queue
 * that cannot be read is looked at again at the next poll, not at once.
 */
void pg_queue_entry_look(slot *s, const pg_worker_opts *o)
{
	pg_worker *w = s->w;
	pg_job_list q = { 0 };
	pg_tree *t = NULL;
	int64_t *ids = NULL;
	uint64_t digest = 0;
	size_t i, n = 0;
	bool changed, moved = false, wake;
	int err;

	if ((err = pg_worker_open_tree(&t, o)) == 0)
		err = pg_tree_resolutions_digest(&digest, t);
	pg_tree_free(t);
	if (err == 1)
		return; /* no tree yet: nothing was merged, no pull waits behind another */
	if (err < 0) {
		resolutions_unread(w);
		return;
	}
	pthread_mutex_lock(&w->lock);
	changed = !w->resolutions_seen || w->resolutions != digest;
	w->resolutions_failing = false;
	w->resolutions_seen = true;
	w->resolutions = digest;
	s->recheck_pending = changed;
	s->cancel = w->stopping;
	pthread_mutex_unlock(&w->lock);
	if (!changed)
		return;
	err = to_recheck(&ids, &n, w);
	pthread_mutex_lock(&w->lock);
	s->recheck_pending = false;
	s->recheck = err == 0 ? ids : NULL;
	s->nrecheck = err == 0 ? n : 0;
	pthread_mutex_unlock(&w->lock);
	if (err == 0 && n) {
		char first[32];

		snprintf(first, sizeof(first), "pull %lld", (long long)ids[0]);
		pg_testpoint("recheck", first);
		pthread_mutex_lock(&w->entry_lock);
		/* the queue as it is now: the pulls ahead of each, those that entered meanwhile too */
		if ((err = pg_store_queue(&q, w->o.store)) == 0)
			for (i = 0; i < q.n && !s->cancel; i++)
				if (has_id(ids, n, q.items[i]->id) && again(&q, q.items[i]))
					moved |= entry_again(w, o, &s->cancel, &q, q.items[i]);
		pthread_mutex_unlock(&w->entry_lock);
		pg_job_list_release(&q);
	}
	if (err < 0) {
		pg_worker_logf(w, "queue: %s; the entry check is run again at the next look", pg_error_last());
		pg_error_clear();
	}
	pthread_mutex_lock(&w->lock);
	s->recheck = NULL;
	s->nrecheck = 0;
	if (err < 0)
		w->resolutions_seen = false;
	/* a pull that waits no longer, or a claim that waited for the check, is work now */
	wake = err == 0 && (moved || w->recheck_refused);
	if (wake)
		w->recheck_refused = false;
	pthread_mutex_unlock(&w->lock);
	free(ids);
	if (wake)
		pg_worker_wake(w);
}

#define ORPHAN_RETURNS 2

/* The record of pull id among the orphans (a new one when there is none); under approve_lock. */
static orphan *orphan_of(pg_worker *w, int64_t id)
{
	size_t i;

	for (i = 0; i < w->norphans; i++)
		if (w->orphans[i].id == id)
			return &w->orphans[i];
	if (PG_ARRAY_GROW(w->orphans, w->norphans + 1, w->alloc_orphans) < 0)
		return NULL;
	memset(&w->orphans[w->norphans], 0, sizeof(*w->orphans));
	w->orphans[w->norphans].id = id;
	return &w->orphans[w->norphans++];
}

/* The orphans' records of pulls no longer in the queue q are forgotten; under approve_lock. */
static void orphans_forget(pg_worker *w, const pg_job_list *q)
{
	size_t i, k, kept = 0;

	for (i = 0; i < w->norphans; i++) {
		for (k = 0; k < q->n && q->items[k]->id != w->orphans[i].id; k++)
			;
		if (k < q->n)
			w->orphans[kept++] = w->orphans[i];
	}
	w->norphans = kept;
}

/*
 * The pulls of the queue q in a running state that no thread of ours
 * runs: a run whose end the store could not record (advance) left it
 * there.  Left so, one would hold the queue (one with no merge holds up
 * the pulls behind it; one with a merge is stood on and never decided):
 * each goes back to verified, keeping its place, to be tested again, as
 * a start does with the runs the last stop cut short; twice at most
 * (ORPHAN_RETURNS, counted while the service runs): a third is an error,
 * not a test run forever.  A move the store refuses is logged once per
 * pull.  Under the approval lock, which a claim names its thread's pull
 * under (claim_stacked): a pull just claimed is never taken for one.  How
 * many moved.
 */
size_t pg_queue_entry_orphans(pg_worker *w, const pg_job_list *q)
{
	pg_store_update u = PG_STORE_UPDATE_INIT;
	size_t i, n = 0;

	orphans_forget(w, q);
	for (i = 0; i < q->n; i++) {
		const pg_job *j = q->items[i];
		enum pg_job_state to = PG_JOB_VERIFIED;
		orphan *o;

		if (!pg_job_state_is_running(j->state) || pg_worker_runs_now(w, j->id))
			continue;
		if (!(o = orphan_of(w, j->id))) {
			pg_error_clear(); /* out of memory: the next look */
			continue;
		}
		u.message = "its run ended, but the store could not record how: no thread runs it; "
			    "testing it again on the stack as it is";
		if (o->returns >= ORPHAN_RETURNS) {
			to = PG_JOB_ERROR;
			u.message = "its run ended, but the store could not record how, for the third "
				    "time: not tested again (the service's log says why the store "
				    "refused)";
		}
		if (pg_worker_set_state(w, j->id, j->state, to, PG_JOB_BY_WORKER, &u) < 0) {
			if (!o->said)
				pg_worker_logf(w, "pull %lld: %s", (long long)j->id, pg_error_last());
			o->said = true;
			pg_error_clear();
			continue;
		}
		o->said = false;
		o->returns++;
		n++;
	}
	return n;
}
