/* intake.c - the transparency log as an intake: a thread fetches the log, reads what it gained since its cursor and queues the watched tags' pushes. */
#include "server/intake.h"
#include "server/web.h"
#include "server/clock.h"
#include "common/error.h"
#include "common/str.h"
#include "repo/repo.h"

#include <fnmatch.h>
#include <signal.h>

/* Records read between two saves of the cursor. */
#define PER_BATCH 1000
/* A fetch of the log's epochs, at most. */
#define FETCH_TIMEOUT_S 600
#define KEY_PREFIX "tlog-intake:"

struct pg_intake {
	pg_server *s;
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	volatile sig_atomic_t cancel;   /* a fetch under way stops */
	char *log;                      /* the path followed, as configured */
	char *key;                      /* its cursor's key in the store, from its real path */
	pg_tlog_follower *f;
	pg_tlog_cursor cursor;
	bool have_cursor;
	size_t jobs;                    /* made by the batch read, for its log line */
};

int pg_intake_delivery_id(pg_buf *out, const char *message_id)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
				 "._:@+=~!#$%&'*?^`{|}/-";
	const char *p = message_id;
	size_t n;

	if (!p)
		return pg_error_set(PG_EINVALID, "the record has no Message-Id");
	n = strlen(p);
	if (n >= 2 && p[0] == '<' && p[n - 1] == '>') {
		p++;
		n -= 2;
	}
	if (!n || n > 120 || strspn(p, ok) < n)
		return pg_error_set(PG_EINVALID, "the record's Message-Id is not one msg-id of at "
				    "most 120 characters");
	return pg_buf_printf(out, "tlog:%.*s", (int)n, p);
}

bool pg_intake_wants(const pg_intake_conf *conf, const char *repo, const char *ref)
{
	size_t i;
	bool watched = false;

	for (i = 0; i < conf->nrepos && !watched; i++)
		watched = !strcmp(conf->repos[i], repo);
	if (!watched || strncmp(ref, "refs/tags/", 10) || !ref[10] || !pg_push_ref_valid(ref))
		return false;
	for (i = 0; i < conf->ntags; i++)
		if (!fnmatch(conf->tags[i], ref + 10, 0))
			return true;
	return !conf->ntags;
}

/* The pushing account as a sender: a name the push hook would take (no control character, C1 included), else none. */
static const char *sender_of(const char *user)
{
	if (!user || !*user || strlen(user) > PG_PUSH_MAX_NAME || pg_str_has_control(user))
		return NULL;
	return user;
}

/* The jobs of one record's changes that the intake wants; the record's own strings. */
static size_t record_jobs(pg_job_spec *jobs, const pg_intake_conf *conf,
			  const pg_tlog_record *rec, const char *location)
{
	size_t i, n = 0;

	for (i = 0; i < rec->nchanges; i++) {
		const pg_tlog_change *ch = &rec->changes[i];

		/* a deleted tag is no pull */
		if (pg_oid_is_zero(&ch->new_id) || !pg_intake_wants(conf, rec->repo, ch->ref))
			continue;
		jobs[n].kind = PG_JOB_PUSH;
		jobs[n].repo = location;
		jobs[n].repo_name = rec->repo;
		jobs[n].tag = ch->ref;
		jobs[n].expect = &ch->new_id;
		jobs[n].sender = sender_of(rec->user);
		n++;
	}
	return n;
}

/* Record the delivery of a record's jobs: 0 also when it was recorded before. */
static int deliver(pg_intake *in, const pg_tlog_entry *e, const char *id, pg_job_spec *jobs,
		   size_t njobs)
{
	pg_server *s = in->s;
	pg_buf digest = PG_BUF_INIT, ids = PG_BUF_INIT;
	pg_delivery d;
	size_t created = 0;
	int err;

	memset(&d, 0, sizeof(d));
	/* the message as the log holds it: the same record read again is the same delivery */
	if ((err = pg_auth_hmac_hex(&digest, "pullgate-delivery", e->raw, e->raw_len)) < 0)
		goto done;
	d.id = id;
	d.hook = "tlog";
	d.digest = digest.ptr;
	err = pg_hook_record(&ids, &created, s->store, &d, jobs, njobs);
	if (err == PG_EEXISTS) {
		/* read again after a stop that came before the cursor was saved */
		err = 0;
		goto done;
	}
	if (err == PG_ECONFLICT) {
		pg_server_log(s, "transparency log: epoch %u: delivery %s was recorded before with "
			      "another record: this one makes no job", e->epoch, id);
		err = 0;
		goto done;
	}
	if (err < 0)
		goto done;
	pg_server_log(s, "tlog delivery %s: %zu new job%s, %zu open already", id, created,
		      created == 1 ? "" : "s", ids.len / sizeof(int64_t) - created);
	in->jobs += created;
	if (created)
		pg_worker_wake(s->worker);
done:
	pg_buf_release(&digest);
	pg_buf_release(&ids);
	return err;
}

/* One message past the cursor: skipped with a line, nothing, or jobs. */
static int on_entry(void *ctx, const pg_tlog_entry *e)
{
	pg_intake *in = ctx;
	pg_server *s = in->s;
	const pg_config *c = __atomic_load_n(&s->config, __ATOMIC_ACQUIRE);
	const pg_policy *policy = __atomic_load_n(&s->policy, __ATOMIC_ACQUIRE);
	const pg_tlog_record *rec = e->rec;
	pg_buf id = PG_BUF_INIT, location = PG_BUF_INIT;
	pg_job_spec *jobs = NULL;
	char hex[PG_OID_HEXSZ + 1];
	size_t njobs;
	int err = 0;

	pg_oid_tohex(hex, &e->commit);
	if (!rec) {
		/* public-inbox's deletion of a message is no push at all */
		if (!e->deletion)
			pg_server_log(s, "transparency log: epoch %u commit %s is no push record, "
				      "skipped: %s", e->epoch, hex, e->error);
		return 0;
	}
	/* most of kernel.org's pushes are none of the service's: no word of them */
	if (!rec->repo || !rec->nchanges || pg_push_why_repo(rec->repo))
		return 0;
	if (!(jobs = calloc(rec->nchanges, sizeof(*jobs))))
		return pg_error_oom();
	/* the location first: the jobs point at it */
	if ((err = pg_config_intake_location(&location, c, rec->repo)) < 0 ||
	    !(njobs = record_jobs(jobs, &c->intake, rec, location.ptr)))
		goto done;
	if ((err = pg_intake_delivery_id(&id, rec->message_id)) < 0) {
		pg_server_log(s, "transparency log: epoch %u commit %s, a push to %s, is skipped: %s",
			      e->epoch, hex, rec->repo, pg_error_last());
		err = 0;
		goto done;
	}
	if (!pg_policy_repository_allowed(policy, location.ptr)) {
		pg_server_log(s, "transparency log: %s, a push to %s, makes no job: repository '%s' "
			      "is not in the policy's allow-list", id.ptr, rec->repo, location.ptr);
		goto done;
	}
	err = deliver(in, e, id.ptr, jobs, njobs);
done:
	free(jobs);
	pg_buf_release(&id);
	pg_buf_release(&location);
	return err;
}

static int save_cursor(pg_intake *in, const pg_tlog_cursor *c)
{
	pg_buf text = PG_BUF_INIT;
	int err;

	if ((err = pg_tlog_cursor_format(&text, c)) == 0)
		err = pg_store_meta_set(in->s->store, in->key, text.ptr);
	pg_buf_release(&text);
	return err;
}

/*
 * The cursor the store keeps, or one at the log's end now (saved at once),
 * but only after a fetch of every epoch with an origin succeeded, the
 * epochs the origin began since cloned: the end of a clone left behind
 * would make jobs of the pushes it lacks.  1: none yet.
 */
static int load_cursor(pg_intake *in, bool fetched)
{
	pg_server *s = in->s;
	char *text = NULL;
	int err;

	if ((err = pg_store_meta_get(&text, s->store, in->key)) < 0)
		return err;
	if (text && pg_tlog_cursor_parse(&in->cursor, text, strlen(text)) == 0) {
		pg_server_log(s, "transparency log '%s': following from the cursor the store kept "
			      "(%zu epochs)", in->log, in->cursor.nepochs);
		in->have_cursor = true;
		free(text);
		return 0;
	}
	if (text)
		pg_server_log(s, "transparency log '%s': the cursor the store kept does not read "
			      "back (%s): following from the log's end", in->log, pg_error_last());
	free(text);
	if (!fetched)
		return 1;
	if ((err = pg_tlog_cursor_at_end(&in->cursor, in->f)) < 0 || (err = save_cursor(in, &in->cursor)) < 0)
		return err;
	in->have_cursor = true;
	pg_server_log(s, "transparency log '%s': following from its end (%zu epochs); the "
		      "records before are not read", in->log, in->cursor.nepochs);
	return 0;
}

/* After each batch the cursor passed: saved, and a line of what it read. */
static int on_batch(void *ctx, const pg_tlog_cursor *c, size_t read)
{
	pg_intake *in = ctx;
	int err;

	if ((err = save_cursor(in, c)) < 0) {
		pg_server_log(in->s, "transparency log '%s': the cursor was not saved: %s", in->log,
			      pg_error_last());
		return err;
	}
	if (read)
		pg_server_log(in->s, "transparency log '%s': %zu message%s read, %zu new job%s",
			      in->log, read, read == 1 ? "" : "s", in->jobs,
			      in->jobs == 1 ? "" : "s");
	in->jobs = 0;
	return 0;
}

/* One turn: fetch, then read what the log gained, the cursor saved after each batch. */
static void turn(pg_intake *in)
{
	pg_server *s = in->s;
	const pg_config *c = __atomic_load_n(&s->config, __ATOMIC_ACQUIRE);
	pg_tlog_follow_opts opts = { PER_BATCH, on_entry, on_batch, &in->cancel, in };
	pg_tlog_follow_info info;
	pg_buf key = PG_BUF_INIT;
	size_t fetched = 0;
	bool more = false;
	int err, fetch_err;

	if (!in->f && (err = pg_tlog_follower_new(&in->f, in->log)) < 0) {
		pg_server_log(s, "transparency log: %s: tried again in %u s", pg_error_last(),
			      c->intake.fetch_seconds);
		return;
	}
	/* the cursor belongs to the log where it is, as the index's file does */
	if (!in->key && pg_buf_printf(&key, KEY_PREFIX "%s", pg_tlog_follower_path(in->f)) == 0)
		in->key = pg_buf_detach(&key);
	if (!in->key) {
		pg_server_log(s, "transparency log '%s': out of memory: tried again in %u s",
			      in->log, c->intake.fetch_seconds);
		pg_buf_release(&key);
		return;
	}
	if ((fetch_err = pg_tlog_fetch(&fetched, &more, in->f)) < 0)
		pg_server_log(s, "transparency log '%s': fetch failed, tried again in %u s: %s",
			      in->log, c->intake.fetch_seconds, pg_error_last());
	/* the log's end is the start only once no epoch the origin has is missing here */
	if (!in->have_cursor && (err = load_cursor(in, fetch_err == 0 && !more)) != 0) {
		if (err > 0)
			pg_server_log(s, "transparency log '%s': its end is taken as the start once "
				      "every epoch with an origin was fetched: tried again in %u s",
				      in->log, c->intake.fetch_seconds);
		else
			pg_server_log(s, "transparency log '%s': %s: tried again in %u s", in->log,
				      pg_error_last(), c->intake.fetch_seconds);
		return;
	}
	in->jobs = 0;
	err = pg_tlog_follow(&info, in->f, &in->cursor, &opts);
	if (err < 0 && err != PG_ECANCELLED)
		pg_server_log(s, "transparency log '%s': %s, tried again in %u s: %s", in->log,
			      info.unread ? "an epoch was not read" : "reading stopped",
			      c->intake.fetch_seconds, pg_error_last());
	if (info.rewritten)
		pg_server_log(s, "transparency log '%s': %zu epoch%s rewritten since it was read "
			      "(the last: epoch %zu): followed from %s master as it is now, what "
			      "it holds is not read: pushes may have been missed", in->log,
			      info.rewritten, info.rewritten == 1 ? " was" : "s were",
			      info.last_rewritten, info.rewritten == 1 ? "its" : "their");
}

static void *loop(void *p)
{
	pg_intake *in = p;
	pg_fetch_limits limits = { FETCH_TIMEOUT_S, &in->cancel,
				   "the transparency log intake's bound on a fetch" };
	struct timespec until;

	pg_repo_set_fetch_limits(&limits);
	pthread_mutex_lock(&in->lock);
	while (!in->stop) {
		unsigned secs;

		pthread_mutex_unlock(&in->lock);
		turn(in);
		secs = __atomic_load_n(&in->s->config, __ATOMIC_ACQUIRE)->intake.fetch_seconds;
		pthread_mutex_lock(&in->lock);
		if (in->stop)
			break;
		pg_monotonic_after(&until, secs * 1000u);
		pthread_cond_timedwait(&in->wake, &in->lock, &until);
	}
	pthread_mutex_unlock(&in->lock);
	pg_repo_set_fetch_limits(NULL);
	return NULL;
}

static void intake_free(pg_intake *in)
{
	pg_tlog_follower_free(in->f);
	pg_tlog_cursor_release(&in->cursor);
	pthread_cond_destroy(&in->wake);
	pthread_mutex_destroy(&in->lock);
	free(in->log);
	free(in->key);
	free(in);
}

int pg_intake_start(pg_intake **out, pg_server *s)
{
	const char *log = s->config->intake.log;
	pthread_condattr_t attr;
	pg_intake *in;

	*out = NULL;
	if (!log)
		return 0;
	if (!(in = calloc(1, sizeof(*in))))
		return pg_error_oom();
	pthread_mutex_init(&in->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&in->wake, &attr);
	pthread_condattr_destroy(&attr);
	in->s = s;
	if (!(in->log = pg_strdup(log))) {
		intake_free(in);
		return pg_error_oom();
	}
	if (pthread_create(&in->thread, NULL, loop, in) != 0) {
		intake_free(in);
		return pg_error_set(PG_EIO, "cannot start the transparency log's intake");
	}
	in->running = true;
	*out = in;
	return 0;
}

void pg_intake_stop(pg_intake *in)
{
	if (!in)
		return;
	if (in->running) {
		pthread_mutex_lock(&in->lock);
		in->stop = true;
		in->cancel = 1;
		pthread_cond_broadcast(&in->wake);
		pthread_mutex_unlock(&in->lock);
		pthread_join(in->thread, NULL);
	}
	intake_free(in);
}
