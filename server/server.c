/* server.c - start and stop the service: store, policy, secrets, worker, listener, in that order. */
#include "server/web.h"
#include "common/error.h"
#include "common/fs.h"
#include "pipeline/gate.h"

#include <fcntl.h>
#include <sys/stat.h>
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
		if ((err = pg_auth_random_hex(&secret, 32)) < 0)
			goto done;
		fd = open(path.ptr, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, secret.ptr, secret.len) != (ssize_t)secret.len ||
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

/* What a gate run that died with the last stop left in the tree, cleaned before any job runs. */
static int recover(pg_server *s)
{
	pg_buf what = PG_BUF_INIT;
	int err = pg_gate_recover(s->home, &what);

	if (err == 0 && what.len && s->log)
		s->log(s->log_ctx, what.ptr);
	pg_buf_release(&what);
	return err;
}

int pg_server_start(pg_server **out, const pg_server_opts *o)
{
	pg_server *s = calloc(1, sizeof(*s));
	pg_buf db = PG_BUF_INIT;
	pg_worker_opts wo;
	char *gen = NULL;
	int err;

	*out = NULL;
	if (!s)
		return pg_error_oom();
	pthread_mutex_init(&s->metrics_lock, NULL);
	s->config = o->config;
	s->log = o->log;
	s->log_ctx = o->log_ctx;
	if (!(s->home = pg_strdup(o->home)) || !(s->datadir = pg_strdup(o->datadir)) ||
	    !(s->state = pg_strdup(o->config->state ? o->config->state : o->home))) {
		err = PG_ENOMEM;
		goto fail;
	}
	if ((err = pg_mkdir_p(s->state)) < 0 || (err = pg_mkdir_p(s->home)) < 0)
		goto fail;
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
	if ((err = pg_buf_printf(&db, "%s/pullgate.db", s->state)) < 0 ||
	    (err = pg_store_open(&s->store, db.ptr)) < 0 ||
	    (err = pg_job_requeue(s->store, &s->requeued)) < 0 ||
	    (err = recover(s)) < 0 ||
	    (err = pg_events_new(&s->events)) < 0 ||
	    (err = pg_sessions_new(&s->sessions, o->config->session_hours * 3600u)) < 0)
		goto fail;
	memset(&wo, 0, sizeof(wo));
	wo.store = s->store;
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
	wo.log = o->log;
	wo.log_ctx = o->log_ctx;
	if ((err = pg_notify_start(&s->notify, s->store, o->config, o->log, o->log_ctx)) < 0)
		goto fail;
	wo.approved = pg_notify_approved;
	wo.approved_ctx = s->notify;
	if ((err = pg_worker_start(&s->worker, &wo)) < 0 || (err = pg_http_start(s)) < 0)
		goto fail;
	pg_free_secret(gen);
	pg_buf_release(&db);
	*out = s;
	return 0;
fail:
	pg_free_secret(gen);
	pg_buf_release(&db);
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
	if (!s)
		return;
	s->stopping = true;
	/* event streams return first, so that the listener's threads can end */
	if (s->events)
		pg_events_close(s->events);
	pg_http_stop(s);
	pg_worker_stop(s->worker);
	pg_notify_stop(s->notify);
	pg_events_free(s->events);
	pg_sessions_free(s->sessions);
	pg_store_free(s->store);
	pg_policy_free(s->policy);
	pg_free_secret(s->push_secret);
	pg_free_secret(s->mail_secret);
	pg_server_free_retired(s);
	free(s->home);
	free(s->datadir);
	free(s->state);
	pthread_mutex_destroy(&s->metrics_lock);
	free(s);
}
