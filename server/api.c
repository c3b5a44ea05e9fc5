/* api.c - the JSON API: pulls, logs, live events, decisions and the maintainer's session. */
#include "server/web.h"
#include "common/error.h"
#include "common/json.h"
#include "pipeline/gate.h"

#include <fcntl.h>
#include <jansson.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LIST_MAX 200
#define LOG_TAIL_DEFAULT ((size_t)64 << 10)
#define LOG_TAIL_MAX ((size_t)1 << 20)
#define EVENT_WAIT_MS 10000

static json_t *job_summary(const pg_job *j, bool *ok)
{
	json_t *o = json_object();
	char url[64];

	if (!o) {
		*ok = false;
		return NULL;
	}
	snprintf(url, sizeof(url), "/api/pulls/%lld", (long long)j->id);
	pg_json_set(o, "id", json_integer(j->id), ok);
	pg_json_set(o, "url", json_string(url), ok);
	pg_json_set(o, "state", pg_json_str(j->state), ok);
	pg_json_set(o, "kind", pg_json_str(j->kind), ok);
	pg_json_set(o, "repo", pg_json_str(j->repo), ok);
	pg_json_set(o, "repo_name", pg_json_str(j->repo_name), ok);
	pg_json_set(o, "tag", pg_json_str(j->tag), ok);
	pg_json_set(o, "sender", pg_json_str(j->sender), ok);
	pg_json_set(o, "delivery", pg_json_str(j->delivery), ok);
	pg_json_set(o, "verdict", pg_json_str(j->verdict), ok);
	pg_json_set(o, "errors", json_integer(j->errors), ok);
	pg_json_set(o, "warnings", json_integer(j->warnings), ok);
	pg_json_set(o, "commits", json_integer(j->commits), ok);
	pg_json_set(o, "merges", json_integer(j->merges), ok);
	pg_json_set(o, "message", pg_json_str(j->message), ok);
	pg_json_set(o, "tag_object", pg_json_str(j->tag_object), ok);
	pg_json_set(o, "merge_base", pg_json_str(j->merge_base), ok);
	pg_json_set(o, "merge_commit", pg_json_str(j->merge_commit), ok);
	pg_json_set(o, "attempts", json_integer(j->attempts), ok);
	pg_json_set(o, "created", json_integer(j->created), ok);
	pg_json_set(o, "updated", json_integer(j->updated), ok);
	return o;
}

static int send_json(pg_resp *rs, unsigned status, json_t *o)
{
	char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	int err;

	if (!text)
		return pg_error_oom();
	err = pg_resp_text(rs, status, "application/json", text, strlen(text));
	if (err == 0)
		err = pg_buf_putc(&rs->body, '\n');
	free(text);
	return err;
}

int pg_api_list(pg_req *rq, pg_resp *rs)
{
	pg_job_list l;
	const char *state = pg_req_arg(rq, "state");
	enum pg_job_state st;
	size_t limit = 50, offset = 0, i;
	json_t *root = NULL, *items = NULL;
	bool ok = true;
	int err;

	if (state && pg_job_state_from_name(&st, state) < 0)
		return pg_resp_error(rs, 400, "unknown state '%.40s'", state);
	if (pg_req_count(&limit, pg_req_arg(rq, "limit"), LIST_MAX) < 0 || limit == 0)
		return pg_resp_error(rs, 400, "limit wants a number from 1 to %d", LIST_MAX);
	if (pg_req_count(&offset, pg_req_arg(rq, "offset"), (size_t)1 << 40) < 0)
		return pg_resp_error(rs, 400, "offset wants a number");
	if ((err = pg_store_list(rq->srv->store, &l, state, offset, limit)) < 0)
		return err;
	root = json_object();
	items = json_array();
	ok = root && items;
	for (i = 0; i < l.n && ok; i++)
		if (json_array_append_new(items, job_summary(l.items[i], &ok)) < 0)
			ok = false;
	if (ok) {
		pg_json_set(root, "total", json_integer((json_int_t)l.total), &ok);
		pg_json_set(root, "offset", json_integer((json_int_t)offset), &ok);
		pg_json_set(root, "limit", json_integer((json_int_t)limit), &ok);
		pg_json_set(root, "state", state ? json_string(state) : json_null(), &ok);
		pg_json_set(root, "pulls", items, &ok);
		items = NULL;
	}
	err = ok ? send_json(rs, 200, root) : pg_error_oom();
	json_decref(items);
	json_decref(root);
	pg_job_list_release(&l);
	return err;
}

static int get_job(pg_req *rq, pg_resp *rs, pg_job **j)
{
	int err = pg_store_get(rq->srv->store, j, rq->id);

	if (err == PG_ENOTFOUND) {
		pg_resp_error(rs, 404, "pull %lld does not exist", (long long)rq->id);
		return 1;
	}
	return err;
}

int pg_api_pull(pg_req *rq, pg_resp *rs)
{
	pg_job *j = NULL;
	json_t *o = NULL, *stages = NULL, *decisions = NULL, *report = NULL;
	bool ok = true;
	size_t i;
	int err;

	if ((err = get_job(rq, rs, &j)) != 0)
		return err < 0 ? err : 0;
	o = job_summary(j, &ok);
	stages = json_array();
	decisions = json_array();
	ok = ok && o && stages && decisions;
	for (i = 0; ok && i < j->nstages; i++) {
		json_t *s = json_object();

		if (!s) {
			ok = false;
			break;
		}
		pg_json_set(s, "name", pg_json_str(j->stages[i].name), &ok);
		pg_json_set(s, "status", pg_json_str(j->stages[i].status), &ok);
		pg_json_set(s, "seconds", json_real(j->stages[i].seconds), &ok);
		pg_json_set(s, "has_log", json_boolean(j->stages[i].log != NULL), &ok);
		pg_json_set(s, "summary", pg_json_str(j->stages[i].summary), &ok);
		if (json_array_append_new(stages, s) < 0)
			ok = false;
	}
	for (i = 0; ok && i < j->ndecisions; i++) {
		json_t *d = json_object();

		if (!d) {
			ok = false;
			break;
		}
		pg_json_set(d, "user", pg_json_str(j->decisions[i].user), &ok);
		pg_json_set(d, "action", pg_json_str(j->decisions[i].action), &ok);
		pg_json_set(d, "at", json_integer(j->decisions[i].at), &ok);
		pg_json_set(d, "note", pg_json_str(j->decisions[i].note), &ok);
		if (json_array_append_new(decisions, d) < 0)
			ok = false;
	}
	if (ok && j->report && !(report = json_loads(j->report, 0, NULL)))
		ok = false;
	if (ok) {
		pg_json_set(o, "stages", stages, &ok);
		pg_json_set(o, "decisions", decisions, &ok);
		pg_json_set(o, "report", report ? report : json_null(), &ok);
		stages = decisions = report = NULL;
	}
	err = ok ? send_json(rs, 200, o) : pg_error_set(PG_ENOMEM, "pull %lld: cannot render it",
						       (long long)rq->id);
	json_decref(o);
	json_decref(stages);
	json_decref(decisions);
	json_decref(report);
	pg_job_free(j);
	return err;
}

/* --- logs -------------------------------------------------------------------- */

/*
 * The log of a stage: the one its report names, else (while it runs) where
 * the gate writes it.  Only files under home/logs are served.
 */
static int log_path(pg_buf *out, pg_server *s, const pg_job *j, const char *stage)
{
	pg_buf prefix = PG_BUF_INIT;
	size_t i;
	int err = 0;

	for (i = 0; i < j->nstages; i++)
		if (!strcmp(j->stages[i].name, stage) && j->stages[i].log)
			err = pg_buf_puts(out, j->stages[i].log);
	/* while it runs: the worker names each job's log directory job-<id> */
	if (err == 0 && out->len == 0 && (!strcmp(stage, "build") || !strcmp(stage, "boot")))
		err = pg_buf_printf(out, "%s/logs/job-%lld/%s.log", s->home, (long long)j->id, stage);
	if (err == 0 && (err = pg_buf_printf(&prefix, "%s/logs/", s->home)) == 0 &&
	    (out->len == 0 || strncmp(out->ptr, prefix.ptr, prefix.len) || strstr(out->ptr, "/../")))
		err = pg_error_set(PG_ENOTFOUND, "no %s log", stage);
	pg_buf_release(&prefix);
	return err;
}

typedef struct follow {
	pg_server *srv;
	int64_t id;
	int fd;
	char *path;
	unsigned idle;       /* polls without new data */
} follow;

static void follow_free(void *p)
{
	follow *f = p;

	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f);
}

static bool job_final(pg_server *s, int64_t id)
{
	pg_job *j = NULL;
	enum pg_job_state st;
	bool fin = true;

	/* verified is the end only when no kernel stage follows */
	if (pg_store_get(s->store, &j, id) == 0 && pg_job_state_from_name(&st, j->state) == 0)
		fin = pg_job_state_is_final(st) || (st == PG_JOB_VERIFIED && !s->config->stages);
	pg_job_free(j);
	return fin;
}

static ssize_t follow_read(void *ctx, uint64_t pos, char *buf, size_t max)
{
	follow *f = ctx;

	(void)pos;
	while (!f->srv->stopping) {
		ssize_t n;

		if (f->fd < 0)
			f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
		n = f->fd >= 0 ? read(f->fd, buf, max) : 0;
		if (n > 0) {
			f->idle = 0;
			return n;
		}
		/* nothing new: the log is complete once the job is over */
		if (job_final(f->srv, f->id) || ++f->idle > 7200)
			return PG_STREAM_END;
		usleep(250000);
	}
	return PG_STREAM_END;
}

int pg_api_log(pg_req *rq, pg_resp *rs)
{
	pg_job *j = NULL;
	pg_buf path = PG_BUF_INIT, text = PG_BUF_INIT;
	const char *stage = pg_req_arg(rq, "stage");
	const char *follow_arg = pg_req_arg(rq, "follow");
	size_t tail = LOG_TAIL_DEFAULT;
	struct stat st;
	int fd = -1, err;

	if (!stage || strspn(stage, "abcdefghijklmnopqrstuvwxyz") != strlen(stage) || !*stage)
		return pg_resp_error(rs, 400, "stage wants a stage name (merge, build, boot)");
	if (pg_req_count(&tail, pg_req_arg(rq, "bytes"), LOG_TAIL_MAX) < 0)
		return pg_resp_error(rs, 400, "bytes wants a number up to %zu", LOG_TAIL_MAX);
	if ((err = get_job(rq, rs, &j)) != 0)
		return err < 0 ? err : 0;
	if ((err = log_path(&path, rq->srv, j, stage)) < 0) {
		err = pg_resp_error(rs, 404, "pull %lld has no %s log", (long long)rq->id, stage);
		goto done;
	}
	if (follow_arg && !strcmp(follow_arg, "1")) {
		follow *f = calloc(1, sizeof(*f));

		if (!f) {
			err = pg_error_oom();
			goto done;
		}
		f->srv = rq->srv;
		f->id = rq->id;
		f->fd = -1;
		f->path = pg_buf_detach(&path);
		rs->status = 200;
		rs->type = "text/plain; charset=utf-8";
		rs->stream = follow_read;
		rs->stream_ctx = f;
		rs->stream_free = follow_free;
		goto done;
	}
	if ((fd = open(path.ptr, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) < 0) {
		err = pg_resp_error(rs, 404, "pull %lld has no %s log yet", (long long)rq->id, stage);
		goto done;
	}
	if ((size_t)st.st_size > tail)
		lseek(fd, st.st_size - (off_t)tail, SEEK_SET);
	pg_buf_init(&text, tail + 1);
	for (;;) {
		char chunk[8192];
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n <= 0 || pg_buf_put(&text, chunk, (size_t)n) < 0)
			break;
	}
	err = pg_resp_text(rs, 200, "text/plain; charset=utf-8", text.ptr, text.len);
done:
	if (fd >= 0)
		close(fd);
	pg_job_free(j);
	pg_buf_release(&path);
	pg_buf_release(&text);
	return err;
}

/* --- server-sent events ----------------------------------------------------------- */

typedef struct sse {
	pg_server *srv;
	int64_t id;
	uint64_t seq;
	pg_buf pending;
	size_t sent;
	bool started, ending, ended;
} sse;

static void sse_free(void *p)
{
	sse *e = p;

	pg_buf_release(&e->pending);
	free(e);
}

static ssize_t sse_read(void *ctx, uint64_t pos, char *buf, size_t max)
{
	sse *e = ctx;
	size_t n;

	(void)pos;
	while (e->sent == e->pending.len) {
		pg_job *j = NULL;

		if (e->ended || e->srv->stopping)
			return PG_STREAM_END;
		pg_buf_clear(&e->pending);
		e->sent = 0;
		if (e->ending) {
			pg_buf_puts(&e->pending, "event: end\ndata: {}\n\n");
			e->ended = true;
			break;
		}
		if (!e->started) {
			/* first, where the job is now */
			e->started = true;
			if (pg_store_get(e->srv->store, &j, e->id) == 0)
				pg_buf_printf(&e->pending, "retry: 3000\nevent: hello\ndata: "
					      "{\"state\": \"%s\"}\n\n", j->state);
			pg_job_free(j);
			continue;
		}
		if (pg_events_read(e->srv->events, &e->pending, e->id, &e->seq, EVENT_WAIT_MS) > 0) {
			/* send these, then end if the job is over */
			e->ending = job_final(e->srv, e->id);
		} else if (job_final(e->srv, e->id))
			e->ending = true;
		else
			pg_buf_puts(&e->pending, ": keep-alive\n\n");
	}
	n = e->pending.len - e->sent;
	if (n > max)
		n = max;
	memcpy(buf, e->pending.ptr + e->sent, n);
	e->sent += n;
	return (ssize_t)n;
}

int pg_api_events(pg_req *rq, pg_resp *rs)
{
	pg_job *j = NULL;
	sse *e;
	const char *last = pg_req_header(rq, "Last-Event-ID");
	int err;

	if ((err = get_job(rq, rs, &j)) != 0)
		return err < 0 ? err : 0;
	pg_job_free(j);
	if (!(e = calloc(1, sizeof(*e))))
		return pg_error_oom();
	e->srv = rq->srv;
	e->id = rq->id;
	pg_buf_init(&e->pending, 0);
	if (last)
		e->seq = strtoull(last, NULL, 10);
	rs->status = 200;
	rs->type = "text/event-stream";
	rs->stream = sse_read;
	rs->stream_ctx = e;
	rs->stream_free = sse_free;
	return 0;
}

/* --- decisions -------------------------------------------------------------------- */

static int decided(pg_req *rq, pg_resp *rs, const char *what)
{
	pg_job *j = NULL;
	json_t *o;
	bool ok = true;
	int err;

	if ((err = pg_store_get(rq->srv->store, &j, rq->id)) < 0)
		return err;
	o = job_summary(j, &ok);
	if (o && ok)
		pg_json_set(o, "done", json_string(what), &ok);
	err = o && ok ? send_json(rs, 200, o) : pg_error_oom();
	json_decref(o);
	pg_job_free(j);
	return err;
}

static int decision_failed(pg_resp *rs, int err)
{
	if (err == PG_ENOTFOUND)
		return pg_resp_error(rs, 404, "%s", pg_error_last());
	if (err == PG_ECONFLICT || err == PG_EEXISTS)
		return pg_resp_error(rs, 409, "%s", pg_error_last());
	if (err == PG_EINVALID)
		return pg_resp_error(rs, 422, "%s", pg_error_last());
	return err;
}

int pg_api_approve(pg_req *rq, pg_resp *rs)
{
	pg_buf user = PG_BUF_INIT;
	int err = 0;

	if (pg_req_require_maintainer(rq, rs, &user) == 0) {
		if ((err = pg_worker_approve(rq->srv->worker, rq->id, user.ptr)) < 0)
			err = decision_failed(rs, err);
		else
			err = decided(rq, rs, "approved");
	}
	pg_buf_release(&user);
	return err;
}

int pg_api_reject(pg_req *rq, pg_resp *rs)
{
	pg_buf user = PG_BUF_INIT;
	int err = 0;

	if (pg_req_require_maintainer(rq, rs, &user) == 0) {
		if ((err = pg_worker_reject(rq->srv->worker, rq->id, user.ptr)) < 0)
			err = decision_failed(rs, err);
		else
			err = decided(rq, rs, "rejected");
	}
	pg_buf_release(&user);
	return err;
}

int pg_api_cancel(pg_req *rq, pg_resp *rs)
{
	pg_buf user = PG_BUF_INIT;
	int err = 0;

	if (pg_req_require_maintainer(rq, rs, &user) == 0) {
		if ((err = pg_worker_cancel(rq->srv->worker, rq->id, user.ptr)) < 0)
			err = decision_failed(rs, err);
		else
			err = decided(rq, rs, "cancelled");
	}
	pg_buf_release(&user);
	return err;
}

/* --- the maintainer's session -------------------------------------------------------- */

static int cookie(pg_resp *rs, pg_server *s, const char *value, unsigned max_age)
{
	pg_buf c = PG_BUF_INIT;
	int err = pg_buf_printf(&c, "pg_session=%s; Path=/; Max-Age=%u; HttpOnly; SameSite=Strict%s",
				value, max_age, s->config->cookie_secure ? "; Secure" : "");

	if (err == 0)
		err = pg_resp_header(rs, "Set-Cookie", c.ptr);
	pg_buf_release_secret(&c);
	return err;
}

static const pg_account *find_account(const pg_config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->naccounts; i++)
		if (pg_auth_equal(c->accounts[i].name, name))
			return &c->accounts[i];
	return NULL;
}

int pg_api_login(pg_req *rq, pg_resp *rs)
{
	/* checked against when the user is unknown, so that both take as long */
	static const char dummy[] = "pbkdf2-sha256$200000$00000000000000000000000000000000$"
		"0000000000000000000000000000000000000000000000000000000000000000";
	pg_server *s = rq->srv;
	json_t *in = NULL, *out = NULL;
	const char *user = NULL, *password = NULL, *ctype = pg_req_header(rq, "Content-Type");
	const pg_account *acc;
	pg_buf id = PG_BUF_INIT, csrf = PG_BUF_INIT;
	bool ok = true;
	int err = 0;

	if (!ctype || strncasecmp(ctype, "application/json", 16))
		return pg_resp_error(rs, 415, "Content-Type must be application/json");
	if (!(in = json_loadb(rq->body.ptr, rq->body.len, JSON_REJECT_DUPLICATES, NULL)) ||
	    json_unpack(in, "{s:s, s:s}", "user", &user, "password", &password) < 0) {
		err = pg_resp_error(rs, 400, "the body must be {\"user\": ..., \"password\": ...}");
		goto done;
	}
	acc = find_account(s->config, user);
	if (pg_auth_password_check(acc ? acc->hash : dummy, password) < 0 || !acc) {
		pg_server_log(s, "login refused for an account");
		err = pg_resp_error(rs, 401, "wrong user name or password");
		goto done;
	}
	if ((err = pg_sessions_create(s->sessions, &id, &csrf, acc->name, time(NULL))) < 0 ||
	    (err = cookie(rs, s, id.ptr, s->config->session_hours * 3600u)) < 0)
		goto done;
	out = json_object();
	ok = out != NULL;
	if (ok) {
		pg_json_set(out, "user", pg_json_str(acc->name), &ok);
		pg_json_set(out, "csrf", json_string(csrf.ptr), &ok);
	}
	err = ok ? send_json(rs, 200, out) : pg_error_oom();
	pg_server_log(s, "maintainer %s logged in", acc->name);
done:
	json_decref(in);
	json_decref(out);
	pg_buf_release_secret(&id);
	pg_buf_release_secret(&csrf);
	return err;
}

int pg_api_logout(pg_req *rq, pg_resp *rs)
{
	pg_buf user = PG_BUF_INIT;
	int err = 0;

	if (pg_req_require_maintainer(rq, rs, &user) == 0) {
		pg_sessions_end(rq->srv->sessions, pg_req_cookie(rq, "pg_session"));
		if ((err = cookie(rs, rq->srv, "", 0)) == 0)
			err = pg_resp_text(rs, 200, "application/json", "{\"user\": null}\n", 15);
	}
	pg_buf_release(&user);
	return err;
}

int pg_api_session(pg_req *rq, pg_resp *rs)
{
	pg_buf user = PG_BUF_INIT, csrf = PG_BUF_INIT;
	json_t *o = json_object();
	bool ok = o != NULL;
	int err;

	if (ok && pg_req_session(rq, &user, &csrf) == 0) {
		pg_json_set(o, "user", pg_json_str(user.ptr), &ok);
		pg_json_set(o, "csrf", json_string(csrf.ptr), &ok);
	} else if (ok) {
		pg_error_clear();
		pg_json_set(o, "user", json_null(), &ok);
	}
	err = ok ? send_json(rs, 200, o) : pg_error_oom();
	json_decref(o);
	pg_buf_release(&user);
	pg_buf_release_secret(&csrf);
	return err;
}
