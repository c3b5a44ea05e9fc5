/* worker.c - verify threads and a kernel thread per build worktree, driving pg_gate_run; the maintainer's decisions. */
#include "server/worker_internal.h"
#include "common/testpoint.h"
#include "common/error.h"
#include "common/fs.h"
#include "repo/repo.h"
#include "pipeline/gate.h"
#include "pipeline/queue.h"
#include "pipeline/suspect.h"
#include "pipeline/run.h"
#include "pipeline/tree.h"
#include "server/isolate.h"
#include "server/stack.h"
#include "server/job.h"
#include "verifier/mail.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#define IDLE_POLL_MS 2000

void pg_worker_logf(pg_worker *w, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!w->o.log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	w->o.log(w->o.log_ctx, line);
}

/* Move a job (pg_job_move), then tell the event streams and the log. */
int pg_worker_set_state(pg_worker *w, int64_t id, enum pg_job_state from, enum pg_job_state to,
	 enum pg_job_actor by, const pg_store_update *u)
{
	const char *state = pg_job_state_name(to);
	int err;

	if ((err = pg_job_move(w->o.store, id, from, to, by, u)) < 0)
		return err;
	pg_events_post(w->o.events, id, "state", NULL, state);
	pg_worker_logf(w, "pull %lld: %s%s%s", (long long)id, state, u && u->message ? ": " : "",
	      u && u->message ? u->message : "");
	return 0;
}

#define RECORD_TRIES 3
static const long record_backoff_ms[RECORD_TRIES - 1] = { 50, 200 };

/* Where job id is now. */
int pg_worker_state_of(pg_worker *w, int64_t id, enum pg_job_state *state)
{
	pg_job *j = NULL;
	int err;

	*state = PG_JOB__COUNT;
	if ((err = pg_store_get(&j, w->o.store, id)) == 0)
		*state = j->state;
	pg_job_free(j);
	return err;
}

/*
 * Whether the worker's move of job id from one state to another, which
 * failed with err, may be tried again: not a move the worker may not make,
 * nor one of a pull in another state now (PG_ECONFLICT: the store is asked
 * where the pull is, in case the update met a state it had for a moment),
 * nor a failure that is not the store's (memory, no such pull).  A store
 * that stayed busy (PG_ETIMEOUT) is tried again.
 */
static bool retryable(pg_worker *w, int64_t id, enum pg_job_state from, enum pg_job_state to,
		      int err)
{
	enum pg_job_state now;

	if (!pg_job_can_move(from, to, PG_JOB_BY_WORKER) || err == PG_ENOMEM ||
	    err == PG_ENOTFOUND || err == PG_EINVALID)
		return false;
	if (err != PG_ECONFLICT)
		return true;
	if (pg_worker_state_of(w, id, &now) < 0) {
		pg_error_clear();
		return true; /* the store cannot say: busy still */
	}
	return now == from;
}

/* Whether the service submits decided runs to KCIDB now (kcidb.submit, which a reload may change) */
static bool submits(const slot *s)
{
	return s->w->o.submits && s->w->o.submits(s->w->o.decided_ctx);
}

/*
 * The thread moves the job it runs; a store that fails (busy, short of
 * space a moment) is asked again, twice at most, after a pause that grows
 * (record_backoff_ms).  When it keeps refusing, the job stays where it
 * is: a running state no thread runs then, which the queue tests again
 * (orphans).
 */
static void advance(slot *s, enum pg_job_state to, const pg_store_update *u)
{
	char first[512] = "", last[512] = "";
	int tries = 0, err;

	for (;;) {
		struct timespec pause = { 0, 0 };

		if ((err = pg_worker_set_state(s->w, s->id, s->state, to, PG_JOB_BY_WORKER, u)) == 0)
			break;
		snprintf(last, sizeof(last), "%s", pg_error_last());
		if (!first[0])
			snprintf(first, sizeof(first), "%s", last);
		pg_error_clear();
		if (++tries == RECORD_TRIES || !retryable(s->w, s->id, s->state, to, err))
			break;
		pause.tv_nsec = record_backoff_ms[tries - 1] * 1000000L;
		nanosleep(&pause, NULL);
	}
	if (err < 0) {
		pg_worker_logf(s->w, "pull %lld: cannot record state %s (%d tr%s): %s", (long long)s->id,
		      pg_job_state_name(to), tries, tries == 1 ? "y" : "ies", last);
		return;
	}
	if (tries)
		pg_worker_logf(s->w, "pull %lld: state %s recorded at try %d (%s)", (long long)s->id,
		      pg_job_state_name(to), tries + 1, first);
	s->state = to;
	if (u && u->kcidb && u->report && s->w->o.decided)
		s->w->o.decided(s->w->o.decided_ctx, s->id);
}

/*
 * The merge stage said "merged MERGE onto BASE": recorded while the run
 * goes on, so that the queue tests the next pull on it at once
 * (server/stack.h).  Only the merge onto the stack the job was given
 * counts; anything else in the line is not a merge.
 */
static void merged(slot *s, const char *line)
{
	pg_oid merge, base;
	size_t hex = PG_OID_HEXSZ;

	if (strncmp(line, "merged ", 7) || strlen(line) != 7 + hex + 6 + hex ||
	    strncmp(line + 7 + hex, " onto ", 6) ||
	    pg_oid_fromhex(&merge, line + 7, hex) < 0 ||
	    pg_oid_fromhex(&base, line + 7 + hex + 6, hex) < 0 ||
	    pg_oid_cmp(&base, &s->tops[s->nunder])) {
		pg_error_clear();
		return;
	}
	if (pg_store_set_merge(s->w->o.store, s->id, s->state, &base, &merge) < 0) {
		pg_worker_logf(s->w, "pull %lld: cannot record its merge: %s", (long long)s->id,
		      pg_error_last());
		pg_error_clear();
		return;
	}
	pg_worker_wake(s->w);
}

/* The gate's progress: the build and the boot starting are states of their own. */
static void progress(void *ctx, const pg_progress *p)
{
	static const struct {
		const char *stage;
		enum pg_job_state state;
	} map[] = { { "build", PG_JOB_BUILDING }, { "boot", PG_JOB_BOOTING } };
	slot *s = ctx;
	uint64_t now = pg_progress_now_ms();
	size_t i;

	if (!strcmp(p->line, "starting") && !s->rerun)
		for (i = 0; i < PG_ARRAY_SIZE(map); i++)
			if (!strcmp(p->stage, map[i].stage))
				advance(s, map[i].state, NULL);
	if (s->stacked && !s->rerun && !strcmp(p->stage, "merge"))
		merged(s, p->line);
	/* a status at most once a second, so the ring keeps the lines that stay */
	if (p->transient && now - s->status_ms < 1000)
		return;
	if (p->transient)
		s->status_ms = now;
	pg_events_post_progress(s->w->o.events, s->id, p);
}

/* The gate failed: cancelled by a user, interrupted by shutdown, or undecided. */
static void ended_in_error(slot *s, int err)
{
	pg_store_update u = PG_STORE_UPDATE_INIT;
	char msg[1024];

	snprintf(msg, sizeof(msg), "%s", pg_error_last());
	if (s->by_user) {
		u.message = "cancelled while running";
		u.user = s->user;
		u.action = "cancel";
		advance(s, PG_JOB_CANCELLED, &u);
	} else if (s->cancel || err == PG_ECANCELLED) {
		u.message = "interrupted by a shutdown: run again";
		advance(s, PG_JOB_QUEUED, &u);
	} else if (err == PG_ECONFLICT && s->branch_moved) {
		/* another job's approval won: this merge was tested on a head that is gone */
		snprintf(msg, sizeof(msg), "%s: testing it again on the new head", pg_error_last());
		u.message = msg;
		advance(s, PG_JOB_QUEUED, &u);
		pg_worker_wake(s->w);
	} else {
		u.message = msg;
		advance(s, PG_JOB_ERROR, &u);
	}
}

/* The push record said which tag object it pushed: the verified tag must be it. */
static bool tag_matches(const pg_job *j, const pg_report *r, char *msg, size_t cap)
{
	if (pg_gate_expected_tag(r, j->has_expect ? &j->expect : NULL, NULL) == 0)
		return true;
	snprintf(msg, cap, "%s", pg_error_last());
	pg_error_clear();
	return false;
}

/* The gate's settings: serve.yaml's, else the policy's, else the defaults. */
void pg_worker_gate_settings(pg_gate_settings *out, const pg_worker_opts *o)
{
	pg_gate_given given = {
		.tree = o->tree,
		.branch = o->branch,
		.merge_name = o->merge_name,
		.merge_email = o->merge_email,
		.attest_key = o->attest_key,
		.attest_gnupg_home = o->attest_gnupg_home,
		.build_worktrees = o->build_worktrees,
	};

	pg_gate_settings_resolve(out, &given, o->policy);
}

/*
 * The gate's options for a job, the one place they are filled: the
 * gate's settings, and a log directory of the job's own (two jobs for one
 * tag keep their own logs), named in run_name.
 */
void pg_worker_gate_opts(pg_gate_opts *go, char *run_name, size_t cap, const pg_worker_opts *o,
		      int64_t id)
{
	*go = (pg_gate_opts)PG_GATE_OPTS_INIT;
	go->home = o->home;
	go->datadir = o->datadir;
	pg_worker_gate_settings(&go->settings, o);
	snprintf(run_name, cap, "job-%lld", (long long)id);
	go->run_name = run_name;
}

int pg_worker_public_url(pg_buf *out, const pg_job *j, const char *public_base)
{
	if (j->mail)
		return j->repo_name && strcmp(j->repo_name, j->repo) ?
		       pg_buf_puts(out, j->repo_name) : 0;
	if (!j->repo_name)
		return 0;
	return pg_buf_printf(out, "%s%s", public_base ? public_base : "git://git.kernel.org/",
			     j->repo_name);
}

/*
 * Where a job's pull is fetched from (spec->repo) and the public URL the
 * merge message and the notice name (spec->name, pg_worker_public_url),
 * whatever location the name maps to.  url holds it.
 */
int pg_worker_pull_spec(pg_pull_spec *spec, pg_buf *url, const pg_worker_opts *o, const pg_job *j)
{
	int err;

	memset(spec, 0, sizeof(*spec));
	spec->index_cache_size = o->index_cache_size;
	spec->index_memory = o->index_memory;
	spec->repo = j->repo;
	spec->tag = j->tag;
	err = pg_worker_public_url(url, j, o->public_base);
	spec->name = url->len ? url->ptr : NULL;
	return err;
}

/*
 * Run the gate on the job's pull in a child process (server/isolate.h):
 * verify alone (stages 0) or verify and the kernel stages.  A pull's
 * repository, which may crash or hang libgit2, ends this job at worst,
 * never the service.  The run never moves the branch: a pull the policy
 * approves by itself waits, and the worker approves it as the maintainer
 * does, recorded before the branch moves (approve_job).
 */
static int run_gate(slot *s, pg_report **out, const pg_job *j, unsigned stages,
		    const pg_oid *onto, const char *suffix)
{
	pg_isolate_opts io = { 0 };
	pg_isolate_pull ip = { 0 };
	pg_pull_request *pr = NULL;
	pg_gate_settings gs;
	pg_pull_spec spec;
	pg_buf url = PG_BUF_INIT;
	char run_name[64];
	int err;

	*out = NULL;
	/* a mail that is none is said here, as the service's own words, not the child's */
	if (j->mail && (err = pg_mail_parse(&pr, j->mail, j->mail_len)) < 0)
		return pg_error_wrap(err, "the pull-request mail");
	pg_pull_request_free(pr);
	if ((err = pg_worker_pull_spec(&spec, &url, &s->o, j)) < 0)
		goto done;
	pg_worker_gate_settings(&gs, &s->o);
	s->auto_approve = gs.approve;
	s->branch_moved = false;
	snprintf(run_name, sizeof(run_name), "job-%lld%s", (long long)j->id, suffix);
	ip.repo = spec.repo;
	ip.tag = spec.tag;
	ip.name = spec.name;
	ip.mail = j->mail;
	ip.mail_len = j->mail_len;
	ip.run_name = run_name;
	ip.stages = stages;
	/* nothing but the tag object the push record named is merged, let alone approved */
	if (stages && j->has_expect)
		ip.expect = &j->expect;
	ip.onto = onto;
	io.home = s->o.home;
	io.datadir = s->o.datadir;
	io.policy = s->o.policy;
	io.index_cache_size = s->o.index_cache_size;
	io.index_memory = s->o.index_memory;
	io.max_memory = s->o.verify_memory;
	io.settings = &gs;
	io.cancel = &s->cancel;
	io.progress = progress;
	io.ctx = s;
	s->status_ms = 0;
	err = pg_isolated_gate(out, &ip, &io);
done:
	pg_buf_release(&url);
	return err;
}


/* The maintainer's tree: 0 with *t to free, 1 when there is none (nothing was merged yet). */
int pg_worker_open_tree(pg_tree **t, const pg_worker_opts *o)
{
	pg_gate_opts go;
	pg_buf path = PG_BUF_INIT;
	char run_name[32];
	int err;

	*t = NULL;
	pg_worker_gate_opts(&go, run_name, sizeof(run_name), o, 0);
	if ((err = pg_run_tree_path(&path, &go)) == 0 && access(path.ptr, F_OK) != 0 &&
	    errno == ENOENT)
		err = 1;
	else if (err == 0)
		err = pg_tree_open(t, path.ptr, go.settings.branch);
	pg_buf_release(&path);
	return err;
}

static void verify_job(slot *s, const pg_job *j)
{
	pg_store_update u = PG_STORE_UPDATE_INIT;
	pg_report *r = NULL;
	enum pg_job_state to;
	char msg[512];
	int err;

	pg_worker_logf(s->w, "pull %lld: verifying %s from %s", (long long)j->id, j->tag, j->repo);
	if ((err = run_gate(s, &r, j, 0, NULL, "")) < 0) {
		ended_in_error(s, err);
		return;
	}
	u.report = r;
	u.message = msg;
	if (s->by_user) { /* verification does not watch the flag: it finished first */
		ended_in_error(s, PG_ECANCELLED);
		goto done;
	}
	if (!tag_matches(j, r, msg, sizeof(msg)))
		to = PG_JOB_ERROR;
	else if (pg_report_verdict(r) != PG_VERDICT_ACCEPT) {
		snprintf(msg, sizeof(msg), "rejected by verify: %zu error%s",
			 pg_report_count(r, PG_SEV_ERROR),
			 pg_report_count(r, PG_SEV_ERROR) == 1 ? "" : "s");
		to = PG_JOB_REJECTED;
	} else {
		u.message = s->o.stages ? "waiting for the kernel stages" : "accepted by verify";
		to = PG_JOB_VERIFIED;
	}
	/* a decided run is submitted to KCIDB; one that could not decide is not (gate --kcidb) */
	u.kcidb = (to == PG_JOB_REJECTED || (to == PG_JOB_VERIFIED && !s->o.stages)) && submits(s);
	if (to == PG_JOB_VERIFIED && pg_worker_stacking(&s->o)) {
		pthread_mutex_lock(&s->w->entry_lock);
		pg_queue_entry_enter(s, j, r);
		/* cancelled, or stopped by a shutdown, while it was checked: not entered */
		if (s->by_user || s->cancel)
			ended_in_error(s, PG_ECANCELLED);
		else
			advance(s, to, &u);
		pthread_mutex_unlock(&s->w->entry_lock);
	} else
		advance(s, to, &u);
done:
	pg_report_free(r);
}

/* A rerun of the job on part of its stack, to tell why it failed: the last failing run kept. */
typedef struct rerunning {
	slot *s;
	const pg_job *j;
	unsigned stages;
	pg_report *failing;
} rerunning;

static int rerun_fails(void *ctx, size_t upto)
{
	rerunning *rr = ctx;
	slot *s = rr->s;
	pg_report *r = NULL;
	char suffix[48];
	bool failed;
	int err;

	if (upto)
		snprintf(suffix, sizeof(suffix), "-on-%lld", (long long)s->under[upto - 1]);
	else
		snprintf(suffix, sizeof(suffix), "-alone");
	if (upto)
		pg_worker_logf(s->w, "pull %lld: again, on the stack up to pull %lld, to tell why it failed",
		      (long long)rr->j->id, (long long)s->under[upto - 1]);
	else
		pg_worker_logf(s->w, "pull %lld: again, alone on the branch, to tell why it failed",
		      (long long)rr->j->id);
	s->rerun = true;
	err = run_gate(s, &r, rr->j, rr->stages, &s->tops[upto], suffix);
	s->rerun = false;
	if (err < 0)
		return err;
	/* a run that verify rejects now (the tag moved) tells nothing of the stack */
	if ((failed = pg_queue_failed_stage(r) != NULL) && !strcmp(pg_queue_failed_stage(r), "verify"))
		err = pg_error_set(PG_ECONFLICT, "the tag no longer passes verify");
	if (err == 0 && failed) {
		pg_report_free(rr->failing);
		rr->failing = r;
		r = NULL;
	}
	pg_report_free(r);
	return err < 0 ? err : failed;
}

/*
 * The place under the job of the pull whose changes its failing run r
 * names (pipeline/suspect.h), or 0.  A hint: when it cannot be told, none.
 */
static size_t suspect_under(slot *s, const pg_job *j, const pg_report *r)
{
	pg_tree *t = NULL;
	size_t at = 0;

	if (!s->has_tip || pg_worker_open_tree(&t, &s->o) != 0 ||
	    pg_suspect_find(&at, pg_tree_repo(t), s->tops, s->nunder, r) < 0)
		at = 0;
	pg_error_clear();
	pg_tree_free(t);
	if (at)
		pg_worker_logf(s->w, "pull %lld: its failure names what pull %lld changed: tried first",
			       (long long)j->id, (long long)s->under[at - 1]);
	return at;
}

/*
 * Why the job failed a kernel stage on its stack, in one sentence in
 * *why: by itself, when it fails alone on the branch's tip too (or had
 * nothing under it), else together with the pull under it whose merge
 * makes it fail (*with), found by bisecting the stack (pipeline/queue.h).
 * Nothing for a pull verify rejected.
 */
static int attribute(slot *s, const pg_job *j, const pg_report *r, pg_buf *why, int64_t *with)
{
	rerunning rr = { s, j, 0, NULL };
	const char *stage = pg_queue_failed_stage(r);
	pg_queue_name self = { (size_t)j->id, j->tag }, other = { 0, NULL };
	pg_gate_settings gs;
	pg_job *culprit = NULL;
	size_t at;
	int err;

	*with = 0;
	if (!stage || !strcmp(stage, "verify"))
		return 0;
	pg_worker_gate_settings(&gs, &s->o);
	/*
	 * It conflicted with that pull as it entered the queue, waited behind
	 * it, and the branch took it: no rerun can say more.
	 */
	if (!strcmp(stage, "merge") && j->conflict_with &&
	    pg_store_get(&culprit, s->w->o.store, j->conflict_with) == 0 &&
	    culprit->state == PG_JOB_APPROVED) {
		other = (pg_queue_name){ (size_t)culprit->id, culprit->tag };
		*with = culprit->id;
		err = pg_queue_attribution_landed(why, &self, &other, gs.branch, r);
		goto done;
	}
	pg_error_clear();
	pg_job_free(culprit);
	culprit = NULL;
	rr.stages = pg_queue_stages_upto(stage, s->o.stages);
	if ((err = pg_queue_bisect(&at, s->nunder, suspect_under(s, j, r), rerun_fails, &rr)) < 0)
		goto done;
	if (at) {
		*with = s->under[at - 1];
		if ((err = pg_store_get(&culprit, s->w->o.store, *with)) < 0)
			goto done;
		other = (pg_queue_name){ (size_t)culprit->id, culprit->tag };
	} else if (rr.failing)
		stage = pg_queue_failed_stage(rr.failing);
	err = pg_queue_attribution(why, &self, at ? &other : NULL, stage, gs.branch,
				   rr.failing ? rr.failing : r);
done:
	pg_job_free(culprit);
	pg_report_free(rr.failing);
	return err;
}


/*
 * Whether a pull of the stack the job was tested on no longer stands:
 * it failed, left the queue or is tested again (its merge is not the one
 * the job was merged onto), while the job ran on it speculatively.  An
 * approved pull still stands: the branch holds its merge.  msg says which.
 */
static bool stack_gone(slot *s, char *msg, size_t cap)
{
	pg_oid tip;
	size_t i;
	bool gone = false;

	/* the branch is at the stack's bottom or at a merge of it (approved since): else it moved */
	if (s->has_tip && pg_worker_branch_tip(&tip, &s->o) == 0) {
		char hex[PG_OID_HEXSZ + 1];

		for (i = 0; i <= s->nunder && pg_oid_cmp(&tip, &s->tops[i]); i++)
			;
		if (i > s->nunder) {
			pg_oid_tohex(hex, &tip);
			snprintf(msg, cap, "tested on a stack the branch left (it moved to %.12s by "
				 "another hand): testing it again on the stack as it is", hex);
			return true;
		}
	}
	pg_error_clear();

	for (i = 0; i < s->nunder && !gone; i++) {
		pg_job *u = NULL;

		if (pg_store_get(&u, s->w->o.store, s->under[i]) < 0) {
			pg_error_clear();
			continue; /* unreadable: the approval's compare-and-swap still guards */
		}
		gone = !u->has_merge || pg_oid_cmp(&u->merge_commit, &s->tops[i + 1]) ||
		       !(u->state == PG_JOB_WAITING || u->state == PG_JOB_APPROVING ||
			 u->state == PG_JOB_APPROVED || u->state == PG_JOB_MERGING ||
			 u->state == PG_JOB_BUILDING || u->state == PG_JOB_BOOTING);
		if (gone)
			snprintf(msg, cap, "tested on the merge of pull %lld, which is %s since: "
				 "testing it again on the stack as it is", (long long)u->id,
				 u->has_merge && !pg_oid_cmp(&u->merge_commit, &s->tops[i + 1]) ?
				 pg_job_state_name(u->state) : "tested again");
		pg_job_free(u);
	}
	return gone;
}

/* Whether a thread of the worker runs pull id now. */
bool pg_worker_runs_now(pg_worker *w, int64_t id)
{
	size_t i;
	bool found = false;

	pthread_mutex_lock(&w->lock);
	for (i = 0; i < MAX_THREADS && !found; i++)
		found = w->slots[i].id == id;
	pthread_mutex_unlock(&w->lock);
	return found;
}

/*
 * Whether a pull under the job is not told yet: a thread of ours still
 * runs it (a state with no thread behind it, left by a failure to record,
 * waits for no one), or its approval is moving the branch now.
 */
static bool under_running(slot *s)
{
	size_t i;
	bool running = false;

	for (i = 0; i < s->nunder && !running; i++) {
		pg_job *u = NULL;

		if (pg_store_get(&u, s->w->o.store, s->under[i]) < 0)
			pg_error_clear();
		else
			running = u->state == PG_JOB_APPROVING ||
				  (pg_job_state_is_running(u->state) && pg_worker_runs_now(s->w, u->id));
		pg_job_free(u);
	}
	return running;
}

/*
 * The merge was skipped: every commit of the tag is in the stack it was
 * merged onto.  When the branch holds them, the pull passed (it adds
 * nothing); when only pulls of the queue under it do, it is held, back in
 * verified (nothing is lost: the maintainer releases it once they are
 * decided, and it is tested as it is then).  true when it was held.
 */
static bool in_the_stack_only(slot *s, const pg_report *r, char *msg, size_t cap)
{
	pg_store_update u = PG_STORE_UPDATE_INIT;
	pg_gate_opts go;
	pg_buf path = PG_BUF_INIT;
	pg_tree *t = NULL;
	char run_name[32];
	size_t i;
	int held = 1;

	for (i = 0; i < r->nstages; i++)
		if (!strcmp(r->stages[i].name, "merge"))
			break;
	if (!s->nunder || r->has_merge || i == r->nstages ||
	    r->stages[i].status != PG_STAGE_SKIPPED)
		return false;
	pg_worker_gate_opts(&go, run_name, sizeof(run_name), &s->o, 0);
	if (pg_run_tree_path(&path, &go) == 0 &&
	    pg_tree_open(&t, path.ptr, go.settings.branch) == 0)
		held = pg_tree_holds(t, &r->tag_commit);
	pg_tree_free(t);
	pg_buf_release(&path);
	pg_error_clear();
	if (held == 1)
		return false;
	snprintf(msg, cap, "every commit of the tag is in the queue's stack under it (up to the "
		 "merge of pull %lld), not in the branch: held; release it once the pulls under it "
		 "are decided", (long long)s->under[s->nunder - 1]);
	u.message = msg;
	if (pg_store_queue_hold(s->w->o.store, s->id, true) < 0) {
		pg_worker_logf(s->w, "pull %lld: %s", (long long)s->id, pg_error_last());
		pg_error_clear();
	}
	advance(s, PG_JOB_VERIFIED, &u);
	return true;
}

static void idle(pg_worker *w);


static void kernel_job(slot *s, const pg_job *j)
{
	pg_store_update u = PG_STORE_UPDATE_INIT;
	pg_report *r = NULL;
	pg_buf why = PG_BUF_INIT;
	const pg_stage *last, *approve_stage;
	enum pg_job_state to;
	int64_t with = 0;
	char msg[1024], failure[1024];
	int err;

	if (s->stacked && s->nunder)
		pg_worker_logf(s->w, "pull %lld: merge, build and boot of %s on the queue's stack of %zu pull%s "
		      "(top: pull %lld)", (long long)j->id, j->tag, s->nunder, s->nunder == 1 ? "" : "s",
		      (long long)s->under[s->nunder - 1]);
	else
		pg_worker_logf(s->w, "pull %lld: merge, build and boot of %s", (long long)j->id, j->tag);
	err = run_gate(s, &r, j, s->o.stages, s->stacked && s->has_tip ? &s->tops[s->nunder] : NULL,
		       "");
	/* what the run could not decide, kept while the stack is looked at */
	snprintf(failure, sizeof(failure), "%s", err < 0 ? pg_error_last() : "");
	/* a run on merges still being tested is told once they are: it may have to run again */
	while (s->stacked && !s->cancel && under_running(s))
		idle(s->w);
	/* what it did on a stack that is gone says nothing of it: tested again, as it is */
	if (s->stacked && !s->cancel && !s->by_user && stack_gone(s, msg, sizeof(msg))) {
		u.message = msg;
		advance(s, PG_JOB_VERIFIED, &u);
		goto done;
	}
	if (err < 0) {
		pg_error_set(err, "%s", failure);
		ended_in_error(s, err);
		goto done;
	}
	if (s->stacked && in_the_stack_only(s, r, msg, sizeof(msg)))
		goto done;
	last = r->nstages ? &r->stages[r->nstages - 1] : NULL;
	/* the stages run in order and stop at the first that does not pass: approve is last */
	approve_stage = last && !strcmp(last->name, "approve") ? last : NULL;
	u.report = r;
	u.message = msg;
	if (s->by_user && !r->approved) {
		ended_in_error(s, PG_ECANCELLED);
		goto done;
	}
	if (!tag_matches(j, r, msg, sizeof(msg)))
		to = PG_JOB_ERROR;
	else if (pg_report_verdict(r) != PG_VERDICT_ACCEPT || (last && last->status == PG_STAGE_FAILED)) {
		snprintf(msg, sizeof(msg), "rejected at the %s stage: %s", last ? last->name : "verify",
			 last && last->summary ? last->summary : "see the findings");
		to = PG_JOB_REJECTED;
		/* a merge known to fail is no base to stack the next pulls on while it is told why */
		if (s->stacked && r->has_merge &&
		    pg_store_set_merge(s->w->o.store, s->id, s->state, NULL, NULL) < 0)
			pg_error_clear();
		if (s->stacked && (err = attribute(s, j, r, &why, &with)) < 0 &&
		    (s->cancel || s->by_user)) {
			ended_in_error(s, err);
			goto done;
		}
		if (err < 0)
			pg_buf_printf(&why, "why could not be told: %s", pg_error_last());
		if (why.len) {
			snprintf(msg, sizeof(msg), "rejected at the %s stage: %s", last ? last->name :
				 "verify", why.ptr);
			u.attribution = why.ptr;
			u.with_pull = with;
		}
		/* the other pull's page says it too: its maintainer meets the pair from either side */
		if (with && pg_store_note(s->w->o.store, with, "pullgate", "queue", why.ptr) < 0) {
			pg_worker_logf(s->w, "pull %lld: %s", (long long)with, pg_error_last());
			pg_error_clear();
		}
	} else if (approve_stage && approve_stage->status == PG_STAGE_WAITING && s->auto_approve) {
		/* recorded before the branch moves (approve_job), as the maintainer's is */
		u.message = r->simulated ? "every stage passed, SIMULATED (stand-in build and boot "
			    "scripts): the policy approves it (approval: auto)" :
			    "every stage passed: the policy approves it (approval: auto)";
		u.user = "pullgate";
		u.action = "approving";
		to = PG_JOB_APPROVING;
	} else if (approve_stage && approve_stage->status == PG_STAGE_WAITING) {
		u.message = r->simulated ? "every stage passed, SIMULATED (stand-in build and boot "
			    "scripts): waiting for the maintainer" :
			    "every stage passed: waiting for the maintainer";
		to = PG_JOB_WAITING;
	} else {
		u.message = last && last->status == PG_STAGE_SKIPPED ? last->summary :
			    "every configured stage passed";
		to = PG_JOB_PASSED;
	}
	u.kcidb = to != PG_JOB_ERROR && submits(s);
	advance(s, to, &u);
	if (s->state == PG_JOB_APPROVING) {
		pg_testpoint("approve", "intent-recorded");
		if (pg_worker_approve_job(s->w, s->id, "pullgate", true, true) < 0)
			pg_worker_logf(s->w, "pull %lld: the policy's approval: %s", (long long)s->id,
			      pg_error_last());
	}
done:
	pg_buf_release(&why);
	pg_report_free(r);
}

/* Wait for a wake-up or the next poll, unless the worker stops. */
static void idle(pg_worker *w)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += IDLE_POLL_MS / 1000;
	pthread_mutex_lock(&w->lock);
	if (!w->stopping)
		pthread_cond_timedwait(&w->wake, &w->lock, &until);
	pthread_mutex_unlock(&w->lock);
}

/* The integration branch's tip now: 0, 1 when there is no tree (nothing was merged yet), or negative. */
int pg_worker_branch_tip(pg_oid *tip, const pg_worker_opts *o)
{
	pg_tree *t = NULL;
	int err;

	if ((err = pg_worker_open_tree(&t, o)) == 0)
		err = pg_tree_head(tip, t);
	pg_tree_free(t);
	return err;
}

/* Whether pulls are tested on the queue's stack: kernel stages up to approval, not each on the head. */
bool pg_worker_stacking(const pg_worker_opts *o)
{
	return !o->each_on_head && (o->stages & PG_GATE_APPROVE);
}

/* The stack as it is now, its stale pulls sent back to be tested again; under the approval lock. */
static int plan_now(pg_stack_plan *plan, bool *has_tip, pg_worker *w, const pg_worker_opts *o)
{
	pg_store_update u = PG_STORE_UPDATE_INIT;
	pg_job_list q;
	pg_oid tip;
	size_t i, round;
	int err = 0, has;

	memset(plan, 0, sizeof(*plan));
	if ((has = pg_worker_branch_tip(&tip, o)) < 0)
		return has;
	*has_tip = has == 0;
	/* twice at most: the stale pulls are verified once sent back */
	for (round = 0; round < 2; round++) {
		if ((err = pg_store_queue(&q, w->o.store)) < 0)
			return err;
		if (round == 0 && pg_queue_entry_orphans(w, &q)) {
			pg_job_list_release(&q);
			if ((err = pg_store_queue(&q, w->o.store)) < 0)
				return err;
		}
		err = pg_stack_plan_make(plan, has == 0 ? &tip : NULL, &q);
		if (err == 0 && plan->next && pg_queue_entry_waits(w, &q, plan->next))
			plan->next = 0;
		pg_job_list_release(&q);
		if (err < 0 || plan->nstale == 0)
			return err;
		u.message = "tested on a stack that is gone (a pull under it failed or left the "
			    "queue, or the branch moved): testing it again on the stack as it is";
		for (i = 0; i < plan->nstale; i++)
			if (pg_worker_set_state(w, plan->stale[i], PG_JOB_WAITING, PG_JOB_VERIFIED, PG_JOB_BY_WORKER,
				 &u) < 0) {
				pg_worker_logf(w, "pull %lld: %s", (long long)plan->stale[i], pg_error_last());
				pg_error_clear();
			}
		pg_stack_plan_release(plan);
	}
	return pg_error_set(PG_ECONFLICT, "the queue kept changing while it was read");
}

/*
 * The merge window's claim: the next pull of the queue, onto the stack
 * under it (server/stack.h).  *out NULL: none may run now.
 */
static int claim_stacked(pg_job **out, slot *s, const pg_worker_opts *o)
{
	pg_worker *w = s->w;
	pg_stack_plan plan;
	bool has_tip = false;
	int err;

	*out = NULL;
	memset(&plan, 0, sizeof(plan));
	pg_queue_entry_look(s, o);
	pthread_mutex_lock(&w->approve_lock);
	if ((err = plan_now(&plan, &has_tip, w, o)) < 0 || !plan.next)
		goto done;
	if ((err = pg_job_move(w->o.store, plan.next, PG_JOB_VERIFIED, PG_JOB_MERGING,
			       PG_JOB_BY_WORKER, NULL)) == PG_ECONFLICT) {
		/* cancelled or rejected since the look: the next look finds another */
		pg_error_clear();
		err = 0;
		goto done;
	}
	if (err < 0)
		goto done;
	/*
	 * its thread named before the lock is let go: never taken for an
	 * orphan; from here a maintainer's cancel is the thread's to record
	 */
	pthread_mutex_lock(&w->lock);
	s->id = plan.next;
	s->cancel = w->stopping;
	s->by_user = false;
	s->user[0] = '\0';
	pthread_mutex_unlock(&w->lock);
	if ((err = pg_store_get(out, w->o.store, plan.next)) < 0) {
		/* no thread runs it: it must not stay merging, holding up the queue */
		char why[512], user[sizeof(s->user)];
		pg_store_update u = PG_STORE_UPDATE_INIT;
		enum pg_job_state to = PG_JOB_VERIFIED;

		snprintf(why, sizeof(why), "%s", pg_error_last());
		u.message = "the kernel thread could not read it: tested later";
		pthread_mutex_lock(&w->lock);
		if (s->by_user) {
			/* its cancel answered "cancelling": kept */
			snprintf(user, sizeof(user), "%s", s->user);
			u.message = "cancelled while running";
			u.user = user;
			u.action = "cancel";
			to = PG_JOB_CANCELLED;
		}
		pthread_mutex_unlock(&w->lock);
		if (pg_worker_set_state(w, plan.next, PG_JOB_MERGING, to, PG_JOB_BY_WORKER, &u) < 0)
			pg_error_clear();
		pthread_mutex_lock(&w->lock);
		s->id = 0;
		pthread_mutex_unlock(&w->lock);
		err = pg_error_set(err, "%s", why);
		goto done;
	}
	free(s->tops);
	free(s->under);
	s->tops = plan.tops;
	s->under = plan.stack;
	s->nunder = plan.nunder;
	s->has_tip = has_tip;
	plan.tops = NULL;
	plan.stack = NULL;
done:
	pthread_mutex_unlock(&w->approve_lock);
	pg_stack_plan_release(&plan);
	return err;
}

static void *loop(void *p)
{
	slot *s = p;
	pg_worker *w = s->w;
	enum pg_job_state from = s->kernel ? PG_JOB_VERIFIED : PG_JOB_QUEUED;
	enum pg_job_state to = s->kernel ? PG_JOB_MERGING : PG_JOB_VERIFYING;

	for (;;) {
		pg_job *j = NULL;
		pg_worker_opts o;
		bool stopping, stacked;

		pthread_mutex_lock(&w->lock);
		stopping = w->stopping;
		pthread_mutex_unlock(&w->lock);
		if (stopping)
			break;
		pthread_mutex_lock(&w->lock);
		o = w->o;
		pthread_mutex_unlock(&w->lock);
		stacked = s->kernel && pg_worker_stacking(&o);
		if ((stacked ? claim_stacked(&j, s, &o) : pg_job_claim(&j, w->o.store, from, to)) < 0)
			pg_worker_logf(w, "%s: %s", stacked ? "queue" : "store", pg_error_last());
		if (!j) {
			idle(w);
			continue;
		}
		if (stacked)
			pg_testpoint("claim", "stacked");
		pthread_mutex_lock(&w->lock);
		s->id = j->id;
		s->state = to;
		if (!stacked) {
			/* a stacked claim did it as it named the pull: a cancel since is kept */
			s->cancel = w->stopping;
			s->by_user = false;
			s->user[0] = '\0';
		}
		s->o = w->o;
		s->stacked = stacked;
		pthread_mutex_unlock(&w->lock);
		pg_events_post(w->o.events, j->id, "state", NULL, pg_job_state_name(to));
		if (s->kernel)
			kernel_job(s, j);
		else
			verify_job(s, j);
		pthread_mutex_lock(&w->lock);
		s->id = 0;
		pthread_mutex_unlock(&w->lock);
		pg_job_free(j);
		pg_error_clear();
		/* a verified pull is work for a kernel thread; a decided one, for the next in the queue */
		pg_worker_wake(w);
	}
	return NULL;
}

int pg_worker_start(pg_worker **out, const pg_worker_opts *opts)
{
	pg_worker *w = calloc(1, sizeof(*w));
	pg_gate_settings gs;
	pthread_condattr_t attr;
	unsigned i, n, k;
	int err = 0;

	*out = NULL;
	if (!w)
		return pg_error_oom();
	/*
	 * libgit2 keeps per-thread state that it frees when a thread ends only
	 * while it is initialised: keep it so for as long as the threads run,
	 * not just for each verification.
	 */
	if ((err = pg_repo_lib_init()) < 0) {
		free(w);
		return err;
	}
	w->git_ready = true;
	w->o = *opts;
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->approve_lock, NULL);
	pthread_mutex_init(&w->entry_lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->wake, &attr);
	pthread_condattr_destroy(&attr);
	/* before any thread runs: what an approval cut short by the last stop left */
	if ((err = pg_worker_resume_approvals(w)) < 0) {
		pg_worker_stop(w);
		return err;
	}
	n = opts->verify_workers ? opts->verify_workers : 1;
	if (n > MAX_THREADS / 2)
		n = MAX_THREADS / 2;
	/* a kernel thread per build worktree: each job takes a free one (pg_gate_run) */
	pg_worker_gate_settings(&gs, opts);
	k = opts->stages ? gs.build_worktrees : 0;
	if (k > MAX_THREADS / 2)
		k = MAX_THREADS / 2;
	for (i = 0; i < n + k && err == 0; i++) {
		slot *s = &w->slots[w->nthreads];

		s->w = w;
		s->kernel = i >= n;
		if (pthread_create(&w->threads[w->nthreads], NULL, loop, s) != 0)
			err = pg_error_set(PG_EIO, "cannot start a worker thread");
		else
			w->nthreads++;
	}
	if (err < 0) {
		pg_worker_stop(w);
		return err;
	}
	*out = w;
	return 0;
}

void pg_worker_wake(pg_worker *w)
{
	pthread_mutex_lock(&w->lock);
	pthread_cond_broadcast(&w->wake);
	pthread_mutex_unlock(&w->lock);
}

int pg_worker_cancel(pg_worker *w, int64_t id, const char *user)
{
	pg_store_update u = PG_STORE_UPDATE_INIT;
	enum pg_job_state state;
	size_t i;
	bool running = false;
	int err;

	/* not running: cancelled where it waits */
	u.message = "cancelled before it ran";
	u.user = user;
	u.action = "cancel";
	if ((err = pg_worker_state_of(w, id, &state)) < 0 ||
	    (err = pg_worker_set_state(w, id, state, PG_JOB_CANCELLED, PG_JOB_BY_MAINTAINER,
					&u)) != PG_ECONFLICT)
		return err;
	/* running: stopped, and its thread records the cancellation */
	pg_error_clear();
	pthread_mutex_lock(&w->lock);
	for (i = 0; i < MAX_THREADS; i++)
		if (w->slots[i].id == id) {
			w->slots[i].by_user = true;
			snprintf(w->slots[i].user, sizeof(w->slots[i].user), "%s", user);
			w->slots[i].cancel = 1;
			running = true;
		}
	pthread_mutex_unlock(&w->lock);
	if (!running)
		return pg_error_set(PG_ECONFLICT, "pull %lld is not queued or running", (long long)id);
	pg_events_post(w->o.events, id, "progress", NULL, "cancelling");
	return 0;
}

int pg_worker_reject(pg_worker *w, int64_t id, const char *user)
{
	pg_store_update u = PG_STORE_UPDATE_INIT;
	pg_buf note = PG_BUF_INIT;
	enum pg_job_state state;
	int err;

	/* never while an approval of it runs: one of the two wins, and the branch agrees */
	pg_testpoint("reject", "before-lock");
	pthread_mutex_lock(&w->approve_lock);
	if ((err = pg_worker_state_of(w, id, &state)) == 0 &&
	    (err = pg_buf_printf(&note, "rejected by %s", user)) == 0) {
		u.message = note.ptr;
		u.user = user;
		u.action = "reject";
		err = pg_worker_set_state(w, id, state, PG_JOB_REJECTED, PG_JOB_BY_MAINTAINER, &u);
	}
	pthread_mutex_unlock(&w->approve_lock);
	if (err == 0)
		pg_worker_wake(w); /* the pulls on its merge are tested again */
	pg_buf_release(&note);
	return err;
}

void pg_worker_reload(pg_worker *w, const pg_worker_opts *o)
{
	pthread_mutex_lock(&w->lock);
	w->o.policy = o->policy;
	w->o.tree = o->tree;
	w->o.branch = o->branch;
	w->o.merge_name = o->merge_name;
	w->o.merge_email = o->merge_email;
	w->o.public_base = o->public_base;
	w->o.attest_key = o->attest_key;
	w->o.attest_gnupg_home = o->attest_gnupg_home;
	w->o.index_cache_size = o->index_cache_size;
	w->o.index_memory = o->index_memory;
	w->o.verify_memory = o->verify_memory;
	pthread_mutex_unlock(&w->lock);
}

void pg_worker_stop(pg_worker *w)
{
	size_t i;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	/* a job, or the entry check run again between jobs (resolutions_looked_at) */
	for (i = 0; i < MAX_THREADS; i++)
		w->slots[i].cancel = 1;
	pthread_cond_broadcast(&w->wake);
	pthread_mutex_unlock(&w->lock);
	for (i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	for (i = 0; i < MAX_THREADS; i++) {
		free(w->slots[i].tops);
		free(w->slots[i].under);
	}
	free(w->orphans);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->approve_lock);
	pthread_mutex_destroy(&w->entry_lock);
	if (w->git_ready)
		pg_repo_lib_shutdown();
	free(w);
}
