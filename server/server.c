/* server.c - start and stop the service: store, policy, secrets, worker, listener, in that order. */
#include "server/web.h"
#include "server/clock.h"
#include "server/intake.h"
#include "server/kcidb_submit.h"
#include "common/digest.h"
#include "common/error.h"
#include "common/fs.h"
#include "pipeline/gate.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

bool pg_server_owns_log(const pg_server *s, const char *path)
{
	size_t n = strlen(s->home);

	/* a stored path is data: nothing outside home/logs, no way up out of it */
	return path && !strncmp(path, s->home, n) && !strncmp(path + n, "/logs/", 6) &&
	       !strstr(path, "/../");
}

/* The generated hook secret: read it, or make one (0600) the first time. */
int pg_server_hook_secret(char **out, const char *state)
{
	pg_buf path = PG_BUF_INIT, secret = PG_BUF_INIT;
	int fd = -1, err;

	*out = NULL;
	pg_buf_init(&secret, 4096);
	if ((err = pg_buf_printf(&path, "%s/hook-secret", state)) < 0)
		goto done;
	err = pg_buf_read_file(&secret, path.ptr);
	if (err == PG_ENOTFOUND) {
		pg_error_clear();
		if ((err = pg_random_hex(&secret, 32)) < 0)
			goto done;
		if ((err = pg_open_regular(&fd, NULL, path.ptr, PG_OPEN_NEW | PG_OPEN_PRIVATE,
					   NULL)) < 0)
			goto done;
		if (write(fd, secret.ptr, secret.len) != (ssize_t)secret.len ||
		    write(fd, "\n", 1) != 1 || fsync(fd) < 0) {
			err = pg_error_set(PG_EIO, "'%s': %s", path.ptr, strerror(errno));
			goto done;
		}
	} else if (err < 0)
		goto done;
	pg_buf_rtrim(&secret);
	if (secret.len < 16) {
		err = pg_error_set(PG_EINVALID, "'%s' holds fewer than 16 characters", path.ptr);
		goto done;
	}
	*out = pg_buf_detach(&secret);
done:
	if (fd >= 0)
		close(fd);
	pg_buf_release(&path);
	pg_buf_release_secret(&secret);
	return err;
}

/*
 * What the gate runs that died with the last stop left in the tree, in
 * every build worktree, cleaned before any job runs: a log line for each.
 */
static int recover(pg_server *s)
{
	pg_buf what = PG_BUF_INIT;
	int err = pg_gate_recover(s->home, &what);
	char *line, *next;

	for (line = what.ptr; err == 0 && what.len && s->log && line; line = next) {
		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		s->log(s->log_ctx, line);
	}
	pg_buf_release(&what);
	return err;
}

/*
 * One service per state directory: an exclusive lock on state/pullgate.lock
 * for as long as it runs (the kernel lets go when the process ends, killed
 * or not), which names its pid for the next one that tries.
 */
static int lock_state(int *out, const char *state)
{
	pg_buf path = PG_BUF_INIT, pid = PG_BUF_INIT;
	char held[32] = "";
	ssize_t n;
	int fd, err = 0;

	*out = -1;
	if ((err = pg_buf_printf(&path, "%s/pullgate.lock", state)) < 0)
		goto done;
	if ((err = pg_open_regular(&fd, NULL, path.ptr,
				   PG_OPEN_LOCK | PG_OPEN_NOFOLLOW | PG_OPEN_PRIVATE, NULL)) < 0)
		goto done;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		n = errno == EWOULDBLOCK ? pread(fd, held, sizeof(held) - 1, 0) : -1;
		held[n > 0 ? strcspn(held, "\n") : 0] = '\0';
		err = errno == EWOULDBLOCK || n >= 0 ?
			pg_error_set(PG_ECONFLICT, "state directory '%s' is in use by another "
				     "pullgate serve%s%s%s: one service per state directory", state,
				     held[0] ? " (pid " : "", held, held[0] ? ")" : "") :
			pg_error_set(PG_EIO, "'%s': %s", path.ptr, strerror(errno));
		close(fd);
		goto done;
	}
	if ((err = pg_buf_printf(&pid, "%ld\n", (long)getpid())) < 0 || ftruncate(fd, 0) < 0 ||
	    pwrite(fd, pid.ptr, pid.len, 0) != (ssize_t)pid.len) {
		err = err < 0 ? err : pg_error_set(PG_EIO, "'%s': %s", path.ptr, strerror(errno));
		close(fd);
		goto done;
	}
	*out = fd;
done:
	pg_buf_release(&path);
	pg_buf_release(&pid);
	return err;
}

#define CHECKPOINT_EVERY_MS 250

/* How long a write of the worker's waits at most while hooks are written (pg_store_give_way). */
#define WORKER_GIVES_WAY_MS 100

/* Copy the write-ahead log into the database now and then, so that no hook's commit does. */
static void *checkpoints(void *p)
{
	pg_server *s = p;
	struct timespec until;

	pthread_mutex_lock(&s->checkpointer_lock);
	while (!s->checkpointer_stop) {
		pg_monotonic_after(&until, CHECKPOINT_EVERY_MS);
		pthread_cond_timedwait(&s->checkpointer_wake, &s->checkpointer_lock, &until);
		pthread_mutex_unlock(&s->checkpointer_lock);
		if (pg_store_checkpoint(s->checkpoint_store) < 0)
			pg_server_log(s, "%s", pg_error_last());
		pthread_mutex_lock(&s->checkpointer_lock);
	}
	pthread_mutex_unlock(&s->checkpointer_lock);
	return NULL;
}

static int start_checkpoints(pg_server *s, const char *db)
{
	pthread_condattr_t attr;
	int err;

	if ((err = pg_store_open(&s->checkpoint_store, db)) < 0)
		return err;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&s->checkpointer_wake, &attr);
	pthread_condattr_destroy(&attr);
	if (pthread_create(&s->checkpointer, NULL, checkpoints, s) != 0)
		return pg_error_set(PG_EIO, "cannot start the checkpointer");
	s->checkpointer_running = true;
	/* the hooks' commits only append to the log and sync it */
	pg_store_manual_checkpoints(s->store);
	return 0;
}

static void stop_checkpoints(pg_server *s)
{
	if (s->checkpointer_running) {
		pthread_mutex_lock(&s->checkpointer_lock);
		s->checkpointer_stop = true;
		pthread_cond_broadcast(&s->checkpointer_wake);
		pthread_mutex_unlock(&s->checkpointer_lock);
		pthread_join(s->checkpointer, NULL);
		pthread_cond_destroy(&s->checkpointer_wake);
		s->checkpointer_running = false;
	}
	pg_store_free(s->checkpoint_store);
	s->checkpoint_store = NULL;
}

/* The connections the HTTP threads read through: WAL lets them read while a group commits. */
static int open_readers(pg_server *s, const char *db)
{
	size_t i;
	int err = 0;

	for (i = 0; i < PG_SERVER_READERS && err == 0; i++)
		err = pg_store_open(&s->readers[i], db);
	return err;
}

pg_store *pg_server_reader(pg_server *s)
{
	unsigned i = __atomic_fetch_add(&s->next_reader, 1, __ATOMIC_RELAXED);

	return s->readers[i % PG_SERVER_READERS];
}

int pg_server_queue(pg_job_list *out, pg_server *s)
{
	/* without kernel stages a verified pull is decided: there is no window to show */
	if (!s->config->stages) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	return pg_store_queue(out, pg_server_reader(s));
}

int pg_server_start(pg_server **out, const pg_server_opts *o)
{
	pg_server *s = calloc(1, sizeof(*s));
	pg_buf db = PG_BUF_INIT, tmp = PG_BUF_INIT;
	pg_throttle_rules tr = PG_THROTTLE_RULES_INIT;
	size_t swept = 0;
	pg_worker_opts wo = PG_WORKER_OPTS_INIT;
	char *gen = NULL;
	int err;

	*out = NULL;
	if (!s)
		return pg_error_oom();
	pthread_mutex_init(&s->metrics_lock, NULL);
	pthread_mutex_init(&s->checkpointer_lock, NULL);
	s->state_fd = s->scratch_fd = -1;
	s->config = o->config;
	s->log = o->log;
	s->log_ctx = o->log_ctx;
	if (!(s->home = pg_strdup(o->home)) || !(s->datadir = pg_strdup(o->datadir)) ||
	    !(s->state = pg_strdup(o->config->state ? o->config->state : o->home))) {
		err = PG_ENOMEM;
		goto fail;
	}
	if ((err = pg_mkdir_p(s->state)) < 0 || (err = pg_mkdir_p(s->home)) < 0 ||
	    (err = lock_state(&s->state_fd, s->state)) < 0)
		goto fail;
	/* what a killed verification left in home/tmp (its private GnuPG homes) */
	if ((err = pg_buf_printf(&tmp, "%s/tmp", s->home)) < 0 ||
	    (err = pg_scratch_claim(&s->scratch_fd, &swept, tmp.ptr)) < 0)
		goto fail;
	if (swept && o->log) {
		char line[128];

		snprintf(line, sizeof(line), "removed %zu temporary director%s left by a killed run",
			 swept, swept == 1 ? "y" : "ies");
		o->log(o->log_ctx, line);
	}
	if ((err = o->config->policy ? pg_policy_load(&s->policy, o->config->policy) :
	     pg_policy_new_default(&s->policy)) < 0)
		goto fail;
	if (!o->config->push_secret || !o->config->mail_secret) {
		if ((err = pg_server_hook_secret(&gen, s->state)) < 0)
			goto fail;
	}
	s->push_secret = pg_strdup(o->config->push_secret ? o->config->push_secret : gen);
	s->mail_secret = pg_strdup(o->config->mail_secret ? o->config->mail_secret : gen);
	if (!s->push_secret || !s->mail_secret) {
		err = PG_ENOMEM;
		goto fail;
	}
	tr.base_ms = o->config->limits.login_backoff * 1000u;
	if ((err = pg_buf_printf(&db, "%s/pullgate.db", s->state)) < 0 ||
	    (err = pg_store_open(&s->store, db.ptr)) < 0 ||
	    /* the worker's own connection: a long write of its never holds up a hook */
	    (err = pg_store_open(&s->worker_store, db.ptr)) < 0 ||
	    (err = open_readers(s, db.ptr)) < 0 ||
	    (err = start_checkpoints(s, db.ptr)) < 0 ||
	    (err = pg_job_requeue(&s->requeued, s->store)) < 0 ||
	    (err = recover(s)) < 0 ||
	    (err = pg_events_new(&s->events)) < 0 ||
	    (err = pg_sessions_new(&s->sessions, o->config->session_hours * 3600u)) < 0 ||
	    (err = pg_throttle_new(&s->throttle, &tr)) < 0)
		goto fail;
	pg_store_set_limits(s->store, o->config->limits.findings_per_check,
			    o->config->limits.report_size);
	pg_store_set_limits(s->worker_store, o->config->limits.findings_per_check,
			    o->config->limits.report_size);
	pg_store_sync_decisions_only(s->worker_store);
	pg_store_give_way(s->worker_store, WORKER_GIVES_WAY_MS);
	wo.store = s->worker_store;
	wo.events = s->events;
	wo.policy = s->policy;
	wo.home = s->home;
	wo.datadir = s->datadir;
	wo.tree = o->config->tree;
	wo.branch = o->config->branch;
	wo.merge_name = o->config->merge_name;
	wo.merge_email = o->config->merge_email;
	wo.attest_key = o->config->attest_key;
	wo.attest_gnupg_home = o->config->attest_gnupg_home;
	wo.public_base = o->config->public_base;
	wo.stages = o->config->stages;
	wo.verify_workers = o->config->verify_workers;
	wo.build_worktrees = o->config->build_worktrees;
	wo.each_on_head = o->config->each_on_head;
	wo.index_cache_size = o->config->limits.index_cache_size;
	wo.index_memory = o->config->limits.index_memory;
	wo.verify_memory = o->config->limits.verify_memory;
	wo.log = o->log;
	wo.log_ctx = o->log_ctx;
	if ((err = pg_notify_start(&s->notify, s->store, o->config, s->policy, s->home, o->log,
				   o->log_ctx)) < 0)
		goto fail;
	wo.approved = pg_notify_approved;
	wo.approved_ctx = s->notify;
	if ((err = pg_submit_start(&s->submit, s)) < 0)
		goto fail;
	wo.decided = pg_submit_wake;
	wo.submits = pg_submit_enabled;
	wo.decided_ctx = s->submit;
	if ((err = pg_worker_start(&s->worker, &wo)) < 0 || (err = pg_intake_start(&s->intake, s)) < 0 ||
	    (err = pg_http_start(s)) < 0)
		goto fail;
	pg_free_secret(gen);
	pg_buf_release(&db);
	pg_buf_release(&tmp);
	*out = s;
	return 0;
fail:
	pg_free_secret(gen);
	pg_buf_release(&db);
	pg_buf_release(&tmp);
	pg_server_stop(s);
	return err;
}

const char *pg_server_url(const pg_server *s)
{
	return s->url;
}

size_t pg_server_requeued(const pg_server *s)
{
	return s->requeued;
}

void pg_server_stop(pg_server *s)
{
	size_t i;

	if (!s)
		return;
	s->stopping = true;
	/* event streams return first, so that the listener's threads can end */
	if (s->events)
		pg_events_close(s->events);
	pg_http_stop(s);
	/* no job is made once the worker stops */
	pg_intake_stop(s->intake);
	pg_worker_stop(s->worker);
	pg_notify_stop(s->notify);
	pg_submit_stop(s->submit);
	pg_events_free(s->events);
	pg_sessions_free(s->sessions);
	pg_throttle_free(s->throttle);
	stop_checkpoints(s);
	pg_store_free(s->store);
	pg_store_free(s->worker_store);
	for (i = 0; i < PG_SERVER_READERS; i++)
		pg_store_free(s->readers[i]);
	pg_policy_free(s->policy);
	pg_free_secret(s->push_secret);
	pg_free_secret(s->mail_secret);
	pg_server_free_retired(s);
	free(s->home);
	free(s->datadir);
	free(s->state);
	if (s->scratch_fd >= 0)
		close(s->scratch_fd);
	/* the last thing: the next service may start once the store is closed */
	if (s->state_fd >= 0)
		close(s->state_fd);
	pthread_mutex_destroy(&s->checkpointer_lock);
	pthread_mutex_destroy(&s->metrics_lock);
	free(s);
}
