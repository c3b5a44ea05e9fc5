/* worker.c - verify threads and the one kernel thread, driving pg_gate_run and the store. */
#include "server/worker.h"
#include "common/error.h"
#include "common/git.h"
#include "pipeline/gate.h"
#include "verifier/mail.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>

#define MAX_THREADS 17
#define IDLE_POLL_MS 2000

typedef struct thread_arg {
	pg_worker *w;
	bool kernel;
} thread_arg;

/* A job being run: the cancel flag its gate watches. */
typedef struct slot {
	int64_t id;                      /* 0: free */
	volatile sig_atomic_t cancel;
	bool by_user;
	char user[128];
} slot;

struct pg_worker {
	pg_worker_opts o;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_mutex_t approve_lock;   /* one approval at a time */
	bool stopping;
	pthread_t threads[MAX_THREADS];
	size_t nthreads;
	bool git_ready;         /* pg_git_init() succeeded: shut down after the threads */
	slot slots[MAX_THREADS];
	thread_arg args[2];     /* what the verify threads and the kernel thread run with */
};

/* Context of one gate run, for its progress callback. */
typedef struct run {
	pg_worker *w;
	int64_t id;
	slot *slot;
} run;

static void logf_(pg_worker *w, const char *fmt, ...) PG_PRINTF(2, 3);
static void logf_(pg_worker *w, const char *fmt, ...)
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

static void set_state(pg_worker *w, int64_t id, const char *state, const char *expect,
		      const char *message)
{
	if (pg_store_set_state(w->o.store, id, state, expect, message) < 0) {
		logf_(w, "pull %lld: cannot record state %s: %s", (long long)id, state,
		      pg_error_last());
		return;
	}
	pg_events_post(w->o.events, id, "state", NULL, state);
}

static void save(pg_worker *w, int64_t id, const char *state, const pg_report *r,
		 const char *message)
{
	if (pg_store_save_report(w->o.store, id, state, r, message) < 0) {
		logf_(w, "pull %lld: cannot store the report: %s", (long long)id, pg_error_last());
		return;
	}
	pg_events_post(w->o.events, id, "state", NULL, state);
	logf_(w, "pull %lld: %s%s%s", (long long)id, state, message ? ": " : "",
	      message ? message : "");
}

static void progress(void *ctx, const char *stage, const char *line)
{
	run *r = ctx;
	static const struct {
		const char *stage, *state;
	} map[] = { { "build", "building" }, { "boot", "booting" } };
	size_t i;

	if (!strcmp(line, "starting"))
		for (i = 0; i < PG_ARRAY_SIZE(map); i++)
			if (!strcmp(stage, map[i].stage))
				set_state(r->w, r->id, map[i].state, NULL, NULL);
	pg_events_post(r->w->o.events, r->id, "progress", stage, line);
}

static slot *take_slot(pg_worker *w, int64_t id)
{
	size_t i;
	slot *s = NULL;

	pthread_mutex_lock(&w->lock);
	for (i = 0; i < MAX_THREADS && !s; i++)
		if (!w->slots[i].id)
			s = &w->slots[i];
	if (s) {
		memset(s, 0, sizeof(*s));
		s->id = id;
		s->cancel = w->stopping;
	}
	pthread_mutex_unlock(&w->lock);
	return s;
}

static void drop_slot(pg_worker *w, slot *s)
{
	pthread_mutex_lock(&w->lock);
	s->id = 0;
	pthread_mutex_unlock(&w->lock);
}

/* The gate failed: cancelled by a user, interrupted by shutdown, or undecided. */
static void ended_in_error(pg_worker *w, const pg_job *j, slot *s, int err)
{
	char msg[1024];

	snprintf(msg, sizeof(msg), "%s", pg_error_last());
	if (s->by_user) {
		if (pg_store_decide(w->o.store, j->id, s->user, "cancel", NULL, "cancelled",
				    "cancelled while running") < 0)
			logf_(w, "pull %lld: %s", (long long)j->id, pg_error_last());
		pg_events_post(w->o.events, j->id, "state", NULL, "cancelled");
		logf_(w, "pull %lld: cancelled", (long long)j->id);
	} else if (s->cancel || err == PG_ECANCELLED) {
		set_state(w, j->id, "queued", NULL, "interrupted by a shutdown: run again");
	} else {
		set_state(w, j->id, "error", NULL, msg);
		logf_(w, "pull %lld: error: %s", (long long)j->id, msg);
	}
}

/* The push record said which tag object it pushed: the verified tag must be it. */
static bool tag_matches(const pg_job *j, const pg_report *r, char *msg, size_t cap)
{
	char hex[PG_OID_HEXSZ + 1];

	if (!j->expect)
		return true;
	pg_oid_tohex(hex, &r->tag_object);
	if (!strcasecmp(hex, j->expect))
		return true;
	snprintf(msg, cap, "%s is %.12s, not the %.12s the push record names", j->tag, hex,
		 j->expect);
	return false;
}

/*
 * The gate's options for a job, the one place they are filled: the
 * service's tree, branch and merge identity, the policy's timeouts, and a
 * log directory of the job's own (two jobs for one tag keep their own
 * logs), named in run_name.
 */
static void gate_opts(pg_gate_opts *go, char *run_name, size_t cap, const pg_worker *w,
		      int64_t id)
{
	*go = (pg_gate_opts)PG_GATE_OPTS_INIT;
	go->home = w->o.home;
	go->tree = w->o.tree;
	go->branch = w->o.branch;
	go->datadir = w->o.datadir;
	go->merge_name = w->o.merge_name;
	go->merge_email = w->o.merge_email;
	go->build_timeout_s = w->o.policy->build_timeout_minutes * 60u;
	go->boot_timeout_s = w->o.policy->boot_timeout_seconds;
	snprintf(run_name, cap, "job-%lld", (long long)id);
	go->run_name = run_name;
}

static int run_gate(pg_worker *w, pg_report **out, const pg_job *j, slot *s, unsigned stages,
		    bool approve)
{
	pg_pull_request *pr = NULL;
	pg_pull_spec spec;
	pg_gate_opts go;
	run ctx = { w, j->id, s };
	char run_name[32];
	int err;

	*out = NULL;
	memset(&spec, 0, sizeof(spec));
	spec.repo = j->repo;
	/* a mail's URL fetched from the mirror the configuration maps it to */
	if (j->mail && j->repo_name && strcmp(j->repo_name, j->repo))
		spec.name = j->repo_name;
	spec.tag = j->tag;
	if (j->mail && (err = pg_mail_parse(&pr, j->mail, j->mail_len)) < 0)
		return pg_error_wrap(err, "the pull-request mail");
	spec.request = pr;
	gate_opts(&go, run_name, sizeof(run_name), w, j->id);
	go.stages = stages;
	go.approve = approve;
	go.progress = progress;
	go.ctx = &ctx;
	go.cancel = &s->cancel;
	err = pg_gate_run(out, &spec, w->o.policy, &go);
	pg_pull_request_free(pr);
	return err;
}

static void verify_job(pg_worker *w, pg_job *j, slot *s)
{
	pg_report *r = NULL;
	char msg[512];
	int err;

	logf_(w, "pull %lld: verifying %s from %s", (long long)j->id, j->tag, j->repo);
	pg_events_post(w->o.events, j->id, "state", NULL, "verifying");
	if ((err = run_gate(w, &r, j, s, 0, false)) < 0) {
		ended_in_error(w, j, s, err);
		return;
	}
	if (s->by_user) /* verification does not watch the flag: it finished first */
		ended_in_error(w, j, s, PG_ECANCELLED);
	else if (!tag_matches(j, r, msg, sizeof(msg)))
		save(w, j->id, "error", r, msg);
	else if (pg_report_verdict(r) != PG_VERDICT_ACCEPT) {
		snprintf(msg, sizeof(msg), "rejected by verify: %zu error%s",
			 pg_report_count(r, PG_SEV_ERROR),
			 pg_report_count(r, PG_SEV_ERROR) == 1 ? "" : "s");
		save(w, j->id, "rejected", r, msg);
	} else
		save(w, j->id, "verified", r, w->o.stages ? "waiting for the kernel stages" :
		     "accepted by verify");
	pg_report_free(r);
}

static const pg_stage *find_stage(const pg_report *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nstages; i++)
		if (!strcmp(r->stages[i].name, name))
			return &r->stages[i];
	return NULL;
}

static void kernel_job(pg_worker *w, pg_job *j, slot *s)
{
	pg_report *r = NULL;
	const pg_stage *last, *approve_stage;
	char msg[512];
	int err;

	logf_(w, "pull %lld: merge, build and boot of %s", (long long)j->id, j->tag);
	pg_events_post(w->o.events, j->id, "state", NULL, "merging");
	if ((err = run_gate(w, &r, j, s, w->o.stages, w->o.policy->auto_approve)) < 0) {
		ended_in_error(w, j, s, err);
		return;
	}
	last = r->nstages ? &r->stages[r->nstages - 1] : NULL;
	approve_stage = find_stage(r, "approve");
	if (s->by_user && !r->approved)
		ended_in_error(w, j, s, PG_ECANCELLED);
	else if (!tag_matches(j, r, msg, sizeof(msg)))
		save(w, j->id, "error", r, msg);
	else if (pg_report_verdict(r) != PG_VERDICT_ACCEPT || (last && last->status == PG_STAGE_FAILED)) {
		snprintf(msg, sizeof(msg), "rejected at the %s stage: %s", last ? last->name : "verify",
			 last && last->summary ? last->summary : "see the findings");
		save(w, j->id, "rejected", r, msg);
	} else if (approve_stage && approve_stage->status == PG_STAGE_WAITING)
		save(w, j->id, "waiting", r, "every stage passed: waiting for the maintainer");
	else if (approve_stage && approve_stage->status == PG_STAGE_PASSED && r->approved) {
		save(w, j->id, "approved", r, approve_stage->summary);
		if (pg_store_decide(w->o.store, j->id, "pullgate", "approve", "approved", "approved",
				    "approved by the policy (approval: auto)") < 0)
			logf_(w, "pull %lld: %s", (long long)j->id, pg_error_last());
	} else if (last && last->status == PG_STAGE_SKIPPED)
		save(w, j->id, "passed", r, last->summary);
	else
		save(w, j->id, "passed", r, "every configured stage passed");
	pg_report_free(r);
}

static void *loop(void *p)
{
	const thread_arg *a = p;
	pg_worker *w = a->w;

	for (;;) {
		pg_job *j = NULL;
		slot *s;
		int err;

		pthread_mutex_lock(&w->lock);
		if (w->stopping) {
			pthread_mutex_unlock(&w->lock);
			break;
		}
		pthread_mutex_unlock(&w->lock);
		err = a->kernel ? pg_store_claim(w->o.store, &j, "verified", "merging") :
			pg_store_claim(w->o.store, &j, "queued", "verifying");
		if (err < 0)
			logf_(w, "store: %s", pg_error_last());
		if (!j) {
			struct timespec until;

			clock_gettime(CLOCK_MONOTONIC, &until);
			until.tv_sec += IDLE_POLL_MS / 1000;
			pthread_mutex_lock(&w->lock);
			if (!w->stopping)
				pthread_cond_timedwait(&w->wake, &w->lock, &until);
			pthread_mutex_unlock(&w->lock);
			continue;
		}
		if (!(s = take_slot(w, j->id))) {
			set_state(w, j->id, a->kernel ? "verified" : "queued", NULL, NULL);
			pg_job_free(j);
			continue;
		}
		if (a->kernel)
			kernel_job(w, j, s);
		else
			verify_job(w, j, s);
		drop_slot(w, s);
		pg_job_free(j);
		pg_error_clear();
		if (!a->kernel)
			pg_worker_wake(w); /* the kernel thread may have work now */
	}
	return NULL;
}

int pg_worker_start(pg_worker **out, const pg_worker_opts *opts)
{
	pg_worker *w = calloc(1, sizeof(*w));
	pthread_condattr_t attr;
	unsigned i, n;
	int err = 0;

	*out = NULL;
	if (!w)
		return pg_error_oom();
	/*
	 * libgit2 keeps per-thread state that it frees when a thread ends only
	 * while it is initialised: keep it so for as long as the threads run,
	 * not just for each verification.
	 */
	if ((err = pg_git_init()) < 0) {
		free(w);
		return err;
	}
	w->git_ready = true;
	w->o = *opts;
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->approve_lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&w->wake, &attr);
	pthread_condattr_destroy(&attr);
	w->args[0].w = w;
	w->args[0].kernel = false;
	w->args[1].w = w;
	w->args[1].kernel = true;
	n = opts->verify_workers ? opts->verify_workers : 1;
	if (n > MAX_THREADS - 1)
		n = MAX_THREADS - 1;
	for (i = 0; i < n + (opts->stages ? 1 : 0) && err == 0; i++) {
		if (pthread_create(&w->threads[w->nthreads], NULL, loop, &w->args[i < n ? 0 : 1]) != 0)
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
	size_t i;
	bool running = false;
	int err;

	/* not running yet: cancelled where it waits */
	err = pg_store_decide(w->o.store, id, user, "cancel", "queued,verified", "cancelled",
			      "cancelled before it ran");
	if (err == 0) {
		pg_events_post(w->o.events, id, "state", NULL, "cancelled");
		return 0;
	}
	if (err != PG_ECONFLICT)
		return err;
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

static int oid_of(pg_oid *out, const char *hex)
{
	if (!hex)
		return pg_error_set(PG_EINVALID, "no tested merge is recorded");
	return pg_oid_fromhex(out, hex, strlen(hex));
}

int pg_worker_approve(pg_worker *w, int64_t id, const char *user)
{
	pg_job *j = NULL;
	pg_report *r = NULL;
	pg_buf notice = PG_BUF_INIT, note = PG_BUF_INIT;
	pg_gate_opts go;
	char run_name[32];
	int err;

	pthread_mutex_lock(&w->approve_lock);
	if ((err = pg_store_get(w->o.store, &j, id)) < 0)
		goto done;
	if (strcmp(j->state, "waiting")) {
		err = pg_error_set(PG_ECONFLICT, "pull %lld is %s, not waiting for approval",
				   (long long)id, j->state);
		goto done;
	}
	if ((err = pg_report_new(&r)) < 0)
		goto done;
	if (!(r->tag = pg_strdup(j->tag))) {
		err = PG_ENOMEM;
		goto done;
	}
	r->tag_time = j->tag_time;
	r->tag_offset = j->tag_offset;
	r->has_merge = true;
	if ((err = oid_of(&r->merge_base, j->merge_base)) < 0 ||
	    (err = oid_of(&r->merge_commit, j->merge_commit)) < 0)
		goto done;
	gate_opts(&go, run_name, sizeof(run_name), w, j->id);
	/* the notice names the repository as the sender announced it */
	err = pg_gate_approve(r, &go, j->mail && j->repo_name ? j->repo_name : j->repo, &notice);
	if (err == PG_ECONFLICT) {
		char msg[1024];

		snprintf(msg, sizeof(msg), "%s", pg_error_last());
		set_state(w, id, "queued", "waiting", "the integration branch moved since the test: "
			  "testing again");
		pg_worker_wake(w);
		err = pg_error_set(PG_ECONFLICT, "%s; the pull is queued to be tested again", msg);
		goto done;
	}
	if (err < 0)
		goto done;
	if ((err = pg_buf_printf(&note, "approved by %s: %s moved to %.12s", user,
				 w->o.branch ? w->o.branch : "master", j->merge_commit)) < 0 ||
	    (err = pg_store_decide(w->o.store, id, user, "approve", "waiting", "approved", note.ptr)) < 0)
		goto done;
	if (pg_store_set_stage(w->o.store, id, "approve", "passed", note.ptr) < 0)
		logf_(w, "pull %lld: %s", (long long)id, pg_error_last());
	pg_events_post(w->o.events, id, "state", NULL, "approved");
	logf_(w, "pull %lld: %s", (long long)id, note.ptr);
done:
	pthread_mutex_unlock(&w->approve_lock);
	pg_report_free(r);
	pg_job_free(j);
	pg_buf_release(&notice);
	pg_buf_release(&note);
	return err;
}

void pg_worker_stop(pg_worker *w)
{
	size_t i;

	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	for (i = 0; i < MAX_THREADS; i++)
		if (w->slots[i].id)
			w->slots[i].cancel = 1;
	pthread_cond_broadcast(&w->wake);
	pthread_mutex_unlock(&w->lock);
	for (i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->approve_lock);
	if (w->git_ready)
		git_libgit2_shutdown();
	free(w);
}
