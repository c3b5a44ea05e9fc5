/* api.c - the JSON API: pulls, logs, live events, decisions and the maintainer's session. */
#include "server/web.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/json.h"
#include "common/testpoint.h"
#include "server/clock.h"
#include "verifier/mail.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LIST_MAX 200
#define LOG_TAIL_DEFAULT ((size_t)64 << 10)
#define LOG_TAIL_MAX ((size_t)1 << 20)
#define EVENT_WAIT_MS 10000

/* An object id of a job in hex, or null when its row has none. */
static void put_oid(pg_json_writer *w, const char *key, bool has, const pg_oid *id)
{
	char hex[PG_OID_HEXSZ + 1];

	if (has)
		pg_oid_tohex(hex, id);
	pg_json_put_str(w, key, has ? hex : NULL);
}

/* The fields of a job that the list, the pull and a decision's answer share. */
static void job_fields(pg_json_writer *w, const pg_job *j)
{
	char url[64];

	snprintf(url, sizeof(url), "/api/pulls/%lld", (long long)j->id);
	pg_json_put_int(w, "id", j->id);
	pg_json_put_str(w, "url", url);
	pg_json_put_str(w, "state", pg_job_state_name(j->state));
	pg_json_put_str(w, "kind", pg_job_kind_name(j->kind));
	pg_json_put_str(w, "repo", j->repo);
	pg_json_put_str(w, "repo_name", j->repo_name);
	pg_json_put_str(w, "tag", j->tag);
	pg_json_put_str(w, "sender", j->sender);
	pg_json_put_str(w, "delivery", j->delivery);
	pg_json_put_str(w, "verdict", j->has_verdict ? pg_job_verdict_name(j->verdict) : NULL);
	pg_json_put_int(w, "errors", j->errors);
	pg_json_put_int(w, "warnings", j->warnings);
	pg_json_put_int(w, "commits", j->commits);
	pg_json_put_int(w, "merges", j->merges);
	pg_json_put_str(w, "message", j->message);
	put_oid(w, "tag_object", j->has_tag_object, &j->tag_object);
	put_oid(w, "merge_base", j->has_merge, &j->merge_base);
	put_oid(w, "merge_commit", j->has_merge, &j->merge_commit);
	pg_json_put_bool(w, "held", j->held);
	pg_json_put_str(w, "attribution", j->attribution);
	if (j->with_pull)
		pg_json_put_int(w, "with", j->with_pull);
	else
		pg_json_put_null(w, "with");
	pg_json_put_str(w, "conflict", j->conflict);
	if (j->conflict_with)
		pg_json_put_int(w, "conflict_with", j->conflict_with);
	else
		pg_json_put_null(w, "conflict_with");
	pg_json_put_int(w, "attempts", j->attempts);
	pg_json_put_int(w, "created", j->created);
	pg_json_put_int(w, "updated", j->updated);
}

/* Answer 200 with the document, indented, one newline after it. */
static int send_json(pg_resp *rs, const pg_json_writer *w)
{
	int err;

	pg_buf_clear(&rs->body);
	if ((err = pg_json_write(&rs->body, w, PG_JSON_INDENT)) < 0 ||
	    (err = pg_buf_putc(&rs->body, '\n')) < 0)
		return err;
	rs->status = 200;
	rs->type = "application/json";
	return 0;
}

int pg_api_list(pg_req *rq, pg_resp *rs)
{
	pg_job_list l;
	pg_json_writer *w = NULL;
	const char *state = pg_req_arg(rq, "state");
	enum pg_job_state st = PG_JOB_QUEUED;
	size_t limit = 50, offset = 0, i;
	int err;

	if (state && pg_job_state_from_name(&st, state) < 0)
		return pg_resp_error(rs, 400, "unknown state '%.40s'", state);
	if (pg_req_count(&limit, pg_req_arg(rq, "limit"), LIST_MAX) < 0 || limit == 0)
		return pg_resp_error(rs, 400, "limit wants a number from 1 to %d", LIST_MAX);
	if (pg_req_count(&offset, pg_req_arg(rq, "offset"), (size_t)1 << 40) < 0)
		return pg_resp_error(rs, 400, "offset wants a number");
	if ((err = pg_store_list(&l, pg_server_reader(rq->srv), state ? &st : NULL, offset,
				 limit)) < 0)
		return err;
	if ((err = pg_json_writer_new(&w)) == 0) {
		pg_json_put_int(w, "total", (int64_t)l.total);
		pg_json_put_int(w, "offset", (int64_t)offset);
		pg_json_put_int(w, "limit", (int64_t)limit);
		pg_json_put_str(w, "state", state);
		pg_json_open_array(w, "pulls");
		for (i = 0; i < l.n; i++) {
			pg_json_open_object(w, NULL);
			job_fields(w, l.items[i]);
			pg_json_close(w);
		}
		pg_json_close(w);
		err = send_json(rs, w);
	}
	pg_json_writer_free(w);
	pg_job_list_release(&l);
	return err;
}

/* The pulls of the queue that found, as they entered it, that they conflict with pull id. */
static void conflicted_by(pg_json_writer *w, const pg_job_list *q, int64_t id)
{
	size_t i;

	pg_json_open_array(w, "conflicted_by");
	for (i = 0; i < q->n; i++)
		if (q->items[i]->conflict_with == id)
			pg_json_put_int(w, NULL, q->items[i]->id);
	pg_json_close(w);
}

static int get_job(pg_req *rq, pg_resp *rs, pg_job **j)
{
	int err = pg_store_get(j, pg_server_reader(rq->srv), rq->id);

	if (err == PG_ENOTFOUND) {
		pg_resp_error(rs, 404, "pull %lld does not exist", (long long)rq->id);
		return 1;
	}
	return err;
}

/*
 * The transparency log's record of the pull's tag, as its report (the
 * stored one, parsed) names it (report.transparency), with its link in
 * the log's web view when one is configured and the Message-Id makes one;
 * null when the report names none, or there is no report.
 */
static int put_tlog_record(pg_json_writer *w, const pg_config *c, const pg_json *report)
{
	const pg_json *t = pg_json_get(report, "transparency");
	const char *id;
	pg_buf url = PG_BUF_INIT;
	int err;

	if (pg_json_type(t) != PG_JSON_OBJECT) {
		pg_json_put_null(w, "transparency");
		return 0;
	}
	id = pg_json_get_str(t, "message_id");
	if (c->tlog_web && (err = pg_mail_link(&url, c->tlog_web, id)) < 0)
		goto done;
	pg_json_open_object(w, "transparency");
	pg_json_put_str(w, "message_id", id);
	pg_json_put_str(w, "date", pg_json_get_str(t, "date"));
	pg_json_put_str(w, "pushed_by", pg_json_get_str(t, "pushed_by"));
	pg_json_put_str(w, "repo", pg_json_get_str(t, "repo"));
	pg_json_put_bool(w, "certified", pg_json_get_bool(t, "certified"));
	pg_json_put_str(w, "url", url.len ? url.ptr : NULL);
	pg_json_close(w);
	err = 0;
done:
	pg_buf_release(&url);
	return err;
}

/*
 * The pull's KCIDB submission (kcidb.submit): its state, tries, the
 * receiver's last status and the last try's note; null when it has none.
 */
static int put_submission(pg_json_writer *w, pg_server *srv, int64_t id)
{
	pg_submission sub;
	int err = pg_store_submission(&sub, pg_server_reader(srv), id);

	if (err == PG_ENOTFOUND) {
		pg_error_clear();
		pg_json_put_null(w, "kcidb_submission");
		return 0;
	}
	if (err < 0)
		return err;
	pg_json_open_object(w, "kcidb_submission");
	pg_json_put_str(w, "state", sub.state);
	pg_json_put_int(w, "run", sub.run);
	pg_json_put_int(w, "tries", sub.tries);
	if (sub.status)
		pg_json_put_int(w, "status", sub.status);
	else
		pg_json_put_null(w, "status");
	pg_json_put_str(w, "note", sub.note);
	if (!strcmp(sub.state, "retrying"))
		pg_json_put_int(w, "next_at", sub.next_at);
	else
		pg_json_put_null(w, "next_at");
	pg_json_put_int(w, "updated", sub.updated);
	pg_json_close(w);
	pg_submission_release(&sub);
	return 0;
}

int pg_api_pull(pg_req *rq, pg_resp *rs)
{
	pg_job_list q = { 0 };
	pg_job *j = NULL;
	pg_json_writer *w = NULL;
	pg_json *report = NULL;
	pg_buf lore = PG_BUF_INIT;
	size_t i;
	int err;

	if ((err = get_job(rq, rs, &j)) != 0)
		return err < 0 ? err : 0;
	/* the stored report (up to limits.report-size) parsed once, for its record and itself */
	if (j->report && (err = pg_json_parse(&report, j->report, strlen(j->report))) < 0) {
		err = pg_error_wrap(err, "pull %lld: its stored report", (long long)rq->id);
		goto done;
	}
	if ((err = pg_server_queue(&q, rq->srv)) < 0 || (err = pg_json_writer_new(&w)) < 0)
		goto done;
	job_fields(w, j);
	/* a mail that makes no link is no reason to fail the pull's answer */
	if (j->mail && pg_mail_thread_link(&lore, NULL, j->mail, j->mail_len) < 0) {
		pg_error_clear();
		pg_buf_clear(&lore);
	}
	pg_json_put_str(w, "lore_url", lore.len ? lore.ptr : NULL);
	if ((err = put_tlog_record(w, rq->srv->config, report)) < 0 ||
	    (err = put_submission(w, rq->srv, j->id)) < 0)
		goto done;
	conflicted_by(w, &q, j->id);
	pg_json_open_array(w, "stages");
	for (i = 0; i < j->nstages; i++) {
		pg_json_open_object(w, NULL);
		pg_json_put_str(w, "name", j->stages[i].name);
		pg_json_put_str(w, "status", j->stages[i].status);
		pg_json_put_real(w, "seconds", j->stages[i].seconds);
		pg_json_put_bool(w, "has_log", j->stages[i].log != NULL);
		pg_json_put_str(w, "summary", j->stages[i].summary);
		pg_json_close(w);
	}
	pg_json_close(w);
	pg_json_open_array(w, "decisions");
	for (i = 0; i < j->ndecisions; i++) {
		pg_json_open_object(w, NULL);
		pg_json_put_str(w, "user", j->decisions[i].user);
		pg_json_put_str(w, "action", j->decisions[i].action);
		pg_json_put_int(w, "at", j->decisions[i].at);
		pg_json_put_str(w, "note", j->decisions[i].note);
		pg_json_close(w);
	}
	pg_json_close(w);
	pg_json_put_value(w, "report", report);
	if ((err = send_json(rs, w)) < 0)
		err = pg_error_wrap(err, "pull %lld: cannot render it", (long long)rq->id);
done:
	pg_json_writer_free(w);
	pg_json_free(report);
	pg_job_list_release(&q);
	pg_job_free(j);
	pg_buf_release(&lore);
	return err;
}

/*
 * What the pull's newest finished run found: 404 before one, 422 when the
 * store cut its report (the pull is there, its document cannot be made),
 * 503 out of memory.  Messages name no path.
 */
int pg_api_kcidb(pg_req *rq, pg_resp *rs)
{
	pg_job *j = NULL;
	int err;

	if ((err = get_job(rq, rs, &j)) != 0)
		return err < 0 ? err : 0;
	pg_buf_clear(&rs->body);
	err = pg_server_kcidb(&rs->body, rq->srv, j);
	if (err == PG_ENOTFOUND || err == PG_EINVALID || err == PG_ENOMEM) {
		err = pg_resp_error(rs, err == PG_ENOTFOUND ? 404 : err == PG_EINVALID ? 422 : 503,
				    "%s", pg_error_last());
		pg_error_clear();
	} else if (err == 0) {
		rs->status = 200;
		rs->type = "application/json";
	}
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
	size_t i;
	int err = 0;

	for (i = 0; i < j->nstages; i++)
		if (!strcmp(j->stages[i].name, stage) && j->stages[i].log)
			err = pg_buf_puts(out, j->stages[i].log);
	/* while it runs: each job's logs are under job-<id>, its current run's at latest/ */
	if (err == 0 && out->len == 0 && (!strcmp(stage, "build") || !strcmp(stage, "boot")))
		err = pg_buf_printf(out, "%s/logs/job-%lld/latest/%s.log", s->home,
				    (long long)j->id, stage);
	if (err == 0 && (out->len == 0 || !pg_server_owns_log(s, out->ptr)))
		err = pg_error_set(PG_ENOTFOUND, "no %s log", stage);
	return err;
}

typedef struct follow {
	pg_server *srv;
	int64_t id;
	int fd;
	char *path;
	unsigned idle;       /* polls without new data */
	uint64_t until;      /* the stream's end (pg_req_stream) */
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
	bool fin = true;

	/* verified is the end only when no kernel stage follows */
	if (pg_store_get(&j, pg_server_reader(s), id) == 0)
		fin = pg_job_state_is_final(j->state) ||
		      (j->state == PG_JOB_VERIFIED && !s->config->stages);
	pg_job_free(j);
	return fin;
}

/* The stream's time is up: it ends cleanly, and its client comes again. */
static bool stream_over(uint64_t until)
{
	return pg_test_clock_ms(pg_now_ms()) >= until;
}

static ssize_t follow_read(void *ctx, uint64_t pos, char *buf, size_t max)
{
	follow *f = ctx;

	(void)pos;
	while (!f->srv->stopping) {
		ssize_t n;

		/* a FIFO planted for a log would hold this thread: refused, as absent */
		if (f->fd < 0 && pg_open_regular(&f->fd, NULL, f->path, PG_OPEN_READ, NULL) < 0)
			pg_error_clear();
		n = f->fd >= 0 ? read(f->fd, buf, max) : 0;
		if (n > 0) {
			f->idle = 0;
			return n;
		}
		/* nothing new: the log is complete once the job is over */
		if (job_final(f->srv, f->id) || ++f->idle > 7200 || stream_over(f->until))
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
	off_t size;
	bool cut;
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
		follow *f;
		uint64_t until;

		if (pg_req_stream(rq, rs, &until))
			goto done;
		if (!(f = calloc(1, sizeof(*f)))) {
			err = pg_error_oom();
			goto done;
		}
		f->srv = rq->srv;
		f->id = rq->id;
		f->fd = -1;
		f->path = pg_buf_detach(&path);
		f->until = until;
		rs->status = 200;
		rs->type = "text/plain; charset=utf-8";
		rs->stream = follow_read;
		rs->stream_ctx = f;
		rs->stream_free = follow_free;
		goto done;
	}
	if (pg_open_regular(&fd, &size, path.ptr, PG_OPEN_READ, NULL) < 0) {
		pg_error_clear();
		err = pg_resp_error(rs, 404, "pull %lld has no %s log yet", (long long)rq->id, stage);
		goto done;
	}
	if ((size_t)size > tail)
		lseek(fd, size - (off_t)tail, SEEK_SET);
	pg_buf_init(&text, tail);
	/* the tail as it was when opened: what the run writes meanwhile is the next request's */
	if ((err = pg_buf_read_fd(&text, fd, tail, &cut)) < 0) {
		err = pg_resp_error(rs, err == PG_ENOMEM ? 503 : 500, "pull %lld: its %s log: %s",
				    (long long)rq->id, stage, pg_error_last());
		pg_error_clear();
		goto done;
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

/* A stream of one pull's events, or of the merge window's changes. */
typedef struct sse {
	pg_server *srv;
	int64_t id;          /* the pull's; 0 for the window */
	uint64_t seq;        /* the last event sent: a pull's sequence, the window's generation */
	bool told;           /* the window's reader said which generation it saw (Last-Event-ID) */
	pg_buf pending;
	size_t sent;
	bool started, ending, ended;
	uint64_t until;      /* the stream's end (pg_req_stream) */
} sse;

static void sse_free(void *p)
{
	sse *e = p;

	pg_buf_release(&e->pending);
	free(e);
}

/* How long this turn waits for an event: until the stream's end, a keep-alive at most. */
static unsigned turn_wait(const sse *e)
{
	uint64_t now = pg_test_clock_ms(pg_now_ms());

	return e->until - now < EVENT_WAIT_MS ? (unsigned)(e->until - now) : EVENT_WAIT_MS;
}

/* A pull's stream: "hello" with its state, its events, "end" once it is over. */
static void pull_turn(sse *e)
{
	pg_job *j = NULL;

	if (e->ending) {
		pg_buf_puts(&e->pending, "event: end\ndata: {}\n\n");
		e->ended = true;
		return;
	}
	if (!e->started) {
		/* first, where the job is now */
		e->started = true;
		if (pg_store_get(&j, pg_server_reader(e->srv), e->id) == 0)
			pg_buf_printf(&e->pending, "retry: 3000\nevent: hello\ndata: "
				      "{\"state\": \"%s\"}\n\n", pg_job_state_name(j->state));
		pg_job_free(j);
		return;
	}
	if (pg_events_read(e->srv->events, &e->pending, e->id, &e->seq, turn_wait(e)) > 0) {
		/* send these, then end if the job is over */
		e->ending = job_final(e->srv, e->id);
	} else if (job_final(e->srv, e->id))
		e->ending = true;
	else
		pg_buf_puts(&e->pending, ": keep-alive\n\n");
}

static void queue_event(sse *e)
{
	pg_buf_printf(&e->pending, "id: %llu\nevent: queue\ndata: {\"generation\": %llu}\n\n",
		      (unsigned long long)e->seq, (unsigned long long)e->seq);
}

/*
 * The window's stream: "hello" with the generation now, then "queue" each
 * time it moves, for the reader to look at the queue again.  A reader back
 * with the Last-Event-ID of a generation since passed is told at once.
 */
static void queue_turn(sse *e)
{
	if (!e->started) {
		uint64_t gen = pg_events_queue_generation(e->srv->events), seen = e->seq;

		e->started = true;
		e->seq = gen;
		pg_buf_printf(&e->pending, "retry: 3000\nevent: hello\ndata: {\"generation\": "
			      "%llu}\n\n", (unsigned long long)gen);
		if (e->told && seen != gen)
			queue_event(e);
		return;
	}
	if (pg_events_queue_wait(e->srv->events, &e->seq, turn_wait(e)) > 0)
		queue_event(e);
	else
		pg_buf_puts(&e->pending, ": keep-alive\n\n");
}

static ssize_t sse_read(void *ctx, uint64_t pos, char *buf, size_t max)
{
	sse *e = ctx;
	size_t n;

	(void)pos;
	while (e->sent == e->pending.len) {
		if (e->ended || e->srv->stopping || stream_over(e->until))
			return PG_STREAM_END;
		pg_buf_clear(&e->pending);
		e->sent = 0;
		if (e->id)
			pull_turn(e);
		else
			queue_turn(e);
	}
	n = e->pending.len - e->sent;
	if (n > max)
		n = max;
	memcpy(buf, e->pending.ptr + e->sent, n);
	e->sent += n;
	return (ssize_t)n;
}

/* The stream of pull id (0: of the window), from the reader's Last-Event-ID. */
static int start_sse(pg_req *rq, pg_resp *rs, int64_t id)
{
	const char *last = pg_req_header(rq, "Last-Event-ID");
	uint64_t until;
	sse *e;

	if (pg_req_stream(rq, rs, &until))
		return 0;
	if (!(e = calloc(1, sizeof(*e))))
		return pg_error_oom();
	e->until = until;
	e->srv = rq->srv;
	e->id = id;
	pg_buf_init(&e->pending, 0);
	if (last && *last) {
		char *end;

		e->seq = strtoull(last, &end, 10);
		e->told = *end == '\0';
	}
	rs->status = 200;
	rs->type = "text/event-stream";
	rs->stream = sse_read;
	rs->stream_ctx = e;
	rs->stream_free = sse_free;
	return 0;
}

int pg_api_events(pg_req *rq, pg_resp *rs)
{
	pg_job *j = NULL;
	int err;

	if ((err = get_job(rq, rs, &j)) != 0)
		return err < 0 ? err : 0;
	pg_job_free(j);
	return start_sse(rq, rs, rq->id);
}

int pg_api_queue_events(pg_req *rq, pg_resp *rs)
{
	return start_sse(rq, rs, 0);
}

/* --- decisions -------------------------------------------------------------------- */

/* What a decision answers: the job as it is now, and what was done. */
static int decided(pg_req *rq, pg_resp *rs, const char *what)
{
	pg_job *j = NULL;
	pg_json_writer *w = NULL;
	int err;

	if ((err = pg_store_get(&j, pg_server_reader(rq->srv), rq->id)) == 0 &&
	    (err = pg_json_writer_new(&w)) == 0) {
		job_fields(w, j);
		pg_json_put_str(w, "done", what);
		err = send_json(rs, w);
	}
	pg_json_writer_free(w);
	pg_job_free(j);
	return err;
}

typedef int (*decide_fn)(pg_worker *w, int64_t id, const char *user);

/*
 * A maintainer's decision: with a session and its CSRF token, the worker
 * decides; a pull it does not know is 404, one whose state does not allow
 * the decision 409.
 */
static int decide(pg_req *rq, pg_resp *rs, decide_fn fn, enum pg_job_state done)
{
	pg_buf user = PG_BUF_INIT;
	int err = 0;

	if (pg_req_require_maintainer(rq, rs, &user) == 0) {
		err = fn(rq->srv->worker, rq->id, user.ptr);
		if (err == PG_ENOTFOUND)
			err = pg_resp_error(rs, 404, "%s", pg_error_last());
		else if (err == PG_ECONFLICT || err == PG_EEXISTS)
			err = pg_resp_error(rs, 409, "%s", pg_error_last());
		else if (err == PG_EINVALID)
			err = pg_resp_error(rs, 422, "%s", pg_error_last());
		else if (err == 0)
			err = decided(rq, rs, pg_job_state_name(done));
	}
	pg_buf_release(&user);
	return err;
}

int pg_api_approve(pg_req *rq, pg_resp *rs)
{
	return decide(rq, rs, pg_worker_approve, PG_JOB_APPROVED);
}

int pg_api_reject(pg_req *rq, pg_resp *rs)
{
	return decide(rq, rs, pg_worker_reject, PG_JOB_REJECTED);
}

/* "done": "cancelled" also for a running pull, which its worker is stopping. */
int pg_api_cancel(pg_req *rq, pg_resp *rs)
{
	return decide(rq, rs, pg_worker_cancel, PG_JOB_CANCELLED);
}

/* --- the merge window's queue ---------------------------------------------------------- */

/*
 * The queue, first place first: each pull's fields, its position, and the
 * pull whose merge it was tested on ("tested_on": an id; null, on the
 * branch itself or not tested yet; on_branch says which).
 */
int pg_api_queue(pg_req *rq, pg_resp *rs)
{
	pg_job_list q;
	pg_json_writer *w = NULL;
	size_t i, k;
	int err;

	if ((err = pg_server_queue(&q, rq->srv)) < 0)
		return err;
	if ((err = pg_json_writer_new(&w)) == 0) {
		pg_json_open_array(w, "queue");
		for (i = 0; i < q.n; i++) {
			const pg_job *j = q.items[i];

			for (k = 0; j->has_merge && k < i; k++)
				if (q.items[k]->has_merge &&
				    !pg_oid_cmp(&q.items[k]->merge_commit, &j->merge_base))
					break;
			pg_json_open_object(w, NULL);
			pg_json_put_int(w, "position", (int64_t)i + 1);
			job_fields(w, j);
			if (j->has_merge && k < i)
				pg_json_put_int(w, "tested_on", q.items[k]->id);
			else
				pg_json_put_null(w, "tested_on");
			pg_json_put_bool(w, "on_branch", j->has_merge && k == i);
			conflicted_by(w, &q, j->id);
			pg_json_close(w);
		}
		pg_json_close(w);
		err = send_json(rs, w);
	}
	pg_json_writer_free(w);
	pg_job_list_release(&q);
	return err;
}

/* A worker's error as the API answers it: 404 unknown, 409 the state does not allow it. */
static int worker_error(pg_resp *rs, int err)
{
	if (err == PG_ENOTFOUND)
		return pg_resp_error(rs, 404, "%s", pg_error_last());
	if (err == PG_ECONFLICT || err == PG_EEXISTS)
		return pg_resp_error(rs, 409, "%s", pg_error_last());
	if (err == PG_EINVALID)
		return pg_resp_error(rs, 422, "%s", pg_error_last());
	return err;
}

static void put_ids(pg_json_writer *w, const char *key, const int64_t *ids, size_t n)
{
	size_t i;

	pg_json_open_array(w, key);
	for (i = 0; i < n; i++)
		pg_json_put_int(w, NULL, ids[i]);
	pg_json_close(w);
}

/* What approving the pull through would approve, in order, before anyone does it. */
int pg_api_through(pg_req *rq, pg_resp *rs)
{
	pg_json_writer *w = NULL;
	int64_t *ids = NULL;
	size_t n = 0;
	int err;

	if ((err = pg_worker_through(rq->srv->worker, rq->id, &ids, &n)) < 0)
		return worker_error(rs, err);
	if ((err = pg_json_writer_new(&w)) == 0) {
		pg_json_put_int(w, "id", rq->id);
		put_ids(w, "through", ids, n);
		err = send_json(rs, w);
	}
	pg_json_writer_free(w);
	free(ids);
	return err;
}

/* Approve every pull under this one in the queue, in order, and then it. */
int pg_api_approve_through(pg_req *rq, pg_resp *rs)
{
	pg_buf user = PG_BUF_INIT;
	pg_json_writer *w = NULL;
	int64_t *ids = NULL;
	size_t n = 0, approved = 0;
	int err = 0;

	if (pg_req_require_maintainer(rq, rs, &user) != 0)
		goto done;
	if ((err = pg_worker_approve_through(rq->srv->worker, rq->id, user.ptr, &ids, &n,
					     &approved)) < 0) {
		if (approved)
			err = worker_error(rs, pg_error_wrap(err, "approved %zu of %zu (through pull "
							      "%lld), then", approved, n,
							      (long long)ids[approved - 1]));
		else
			err = worker_error(rs, err);
		goto done;
	}
	if ((err = pg_json_writer_new(&w)) == 0) {
		pg_json_put_int(w, "id", rq->id);
		put_ids(w, "approved", ids, approved);
		err = send_json(rs, w);
	}
done:
	pg_json_writer_free(w);
	pg_buf_release(&user);
	free(ids);
	return err;
}

/* A change to the queue by the maintainer: the pull as it is now. */
static int queue_change(pg_req *rq, pg_resp *rs, int hold, int by, const char *what)
{
	pg_buf user = PG_BUF_INIT;
	int err = 0;

	if (pg_req_require_maintainer(rq, rs, &user) == 0) {
		err = hold >= 0 ? pg_worker_hold(rq->srv->worker, rq->id, hold == 1) :
		      pg_worker_move(rq->srv->worker, rq->id, by);
		err = err < 0 ? worker_error(rs, err) : decided(rq, rs, what);
	}
	pg_buf_release(&user);
	return err;
}

int pg_api_hold(pg_req *rq, pg_resp *rs)
{
	return queue_change(rq, rs, 1, 0, "held");
}

int pg_api_release(pg_req *rq, pg_resp *rs)
{
	return queue_change(rq, rs, 0, 0, "released");
}

int pg_api_up(pg_req *rq, pg_resp *rs)
{
	return queue_change(rq, rs, -1, -1, "moved up");
}

int pg_api_down(pg_req *rq, pg_resp *rs)
{
	return queue_change(rq, rs, -1, 1, "moved down");
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
	pg_json *in = NULL;
	pg_json_writer *out = NULL;
	const char *user, *password, *ctype = pg_req_header(rq, "Content-Type");
	const pg_account *acc;
	pg_buf id = PG_BUF_INIT, csrf = PG_BUF_INIT;
	char addr[64], after[32];
	uint64_t wait;
	bool right;
	int err = 0;

	if (!ctype || strncasecmp(ctype, "application/json", 16))
		return pg_resp_error(rs, 415, "Content-Type must be application/json");
	if (pg_json_parse(&in, rq->body.ptr, rq->body.len) < 0 ||
	    !(user = pg_json_get_str(in, "user")) || !(password = pg_json_get_str(in, "password"))) {
		err = pg_resp_error(rs, 400, "the body must be {\"user\": ..., \"password\": ...}%s%s",
				    in ? "" : ": ", in ? "" : pg_error_last());
		goto done;
	}
	/*
	 * A throttled attempt is refused before its password costs a PBKDF2.
	 * A name no account has is throttled by its address only: a key per
	 * junk name would let a flood of them push a locked account out.
	 */
	pg_req_address(rq, addr, sizeof(addr));
	acc = find_account(s->config, user);
	if ((wait = pg_throttle_begin(s->throttle, acc ? acc->name : NULL, addr,
				      pg_test_clock_ms(pg_now_ms())))) {
		snprintf(after, sizeof(after), "%llu", (unsigned long long)((wait + 999) / 1000));
		pthread_mutex_lock(&s->metrics_lock);
		s->login_throttled++;
		pthread_mutex_unlock(&s->metrics_lock);
		pg_resp_header(rs, "Retry-After", after);
		err = pg_resp_error(rs, 429, "too many failed log-ins for this account or from this "
				    "address: try again in %s s", after);
		goto done;
	}
	right = pg_auth_password_check(acc ? acc->hash : dummy, password) == 0 && acc;
	pg_throttle_end(s->throttle, acc ? acc->name : NULL, addr, right,
			pg_test_clock_ms(pg_now_ms()));
	pthread_mutex_lock(&s->metrics_lock);
	s->password_checks++;
	s->login_failures += !right;
	pthread_mutex_unlock(&s->metrics_lock);
	if (!right) {
		pg_server_log(s, "login refused for an account (from %s)", addr);
		err = pg_resp_error(rs, 401, "wrong user name or password");
		goto done;
	}
	if ((err = pg_sessions_create(s->sessions, &id, &csrf, acc->name, time(NULL))) < 0 ||
	    (err = cookie(rs, s, id.ptr, s->config->session_hours * 3600u)) < 0 ||
	    (err = pg_json_writer_new(&out)) < 0)
		goto done;
	pg_json_put_str(out, "user", acc->name);
	pg_json_put_str(out, "csrf", csrf.ptr);
	err = send_json(rs, out);
	pg_server_log(s, "maintainer %s logged in", acc->name);
done:
	pg_json_free(in);
	pg_json_writer_free(out);
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
	pg_json_writer *w = NULL;
	int err;

	if ((err = pg_json_writer_new(&w)) == 0) {
		if (pg_req_session(rq, &user, &csrf) == 0) {
			pg_json_put_str(w, "user", user.ptr);
			pg_json_put_str(w, "csrf", csrf.ptr);
		} else {
			pg_error_clear();
			pg_json_put_null(w, "user");
		}
		err = send_json(rs, w);
	}
	pg_json_writer_free(w);
	pg_buf_release(&user);
	pg_buf_release_secret(&csrf);
	return err;
}
