/* kcidb_submit.c - each decided run's KCIDB document POSTed to kcidb.submit.url: the store's outbox, one sender thread, retries, the outcome on the pull. */
#include "server/kcidb_submit.h"
#include "server/web.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sanitize.h"
#include "common/str.h"
#include "common/testpoint.h"
#include "server/http_client.h"

#include <unistd.h>

/* A longer wait between tries is an hour. */
#define RETRY_MAX_SECONDS 3600
/* Of a refusal's body, the first line, cut to this many bytes, for the note. */
#define REPLY_NOTE_MAX 200

/* --- the URL and the token --------------------------------------------------- */

/* Whether host (n bytes) is this machine's: localhost, 127.0.0.0/8 or [::1]. */
static bool loopback_host(const char *host, size_t n)
{
	unsigned part, parts = 0;
	size_t i = 0;

	if ((n == 9 && !strncasecmp(host, "localhost", 9)) || (n == 5 && !memcmp(host, "[::1]", 5)))
		return true;
	if (n < 4 || strncmp(host, "127.", 4))
		return false;
	while (i < n) {
		size_t start = i;

		for (part = 0; i < n && host[i] >= '0' && host[i] <= '9' && i - start < 3; i++)
			part = part * 10 + (unsigned)(host[i] - '0');
		if (i == start || part > 255 || (i - start > 1 && host[start] == '0'))
			return false;
		parts++;
		if (i < n && (host[i] != '.' || ++i == n))
			return false;
	}
	return parts == 4;
}

const char *pg_submit_why_url(const char *url)
{
	const char *host, *p;
	size_t n, hn;
	bool https = !strncmp(url, "https://", 8);

	if (!https && strncmp(url, "http://", 7))
		return "an https:// URL (or http:// to this machine: 127.0.0.1, [::1], localhost)";
	for (p = url; *p; p++)
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f || strchr("\"'<>\\", *p))
			return "a URL of printable ASCII without blanks, quotes or backslashes";
	host = url + (https ? 8 : 7);
	n = strcspn(host, "/?#");
	if (memchr(host, '@', n))
		return "a URL without a user or password before the host ('@'): the token is "
		       "the receiver's credential";
	if (*host == '[')
		hn = host[strcspn(host, "]")] == ']' ? strcspn(host, "]") + 1 : n + 1;
	else
		hn = strcspn(host, ":/?#");
	if (!hn || hn > n || (hn < n && host[hn] != ':'))
		return "a URL naming its host after '//'";
	if (hn < n && (n - hn < 2 || n - hn > 6 || strspn(host + hn + 1, "0123456789") != n - hn - 1))
		return "a URL whose port, after the host's ':', is a number";
	if (!https && !loopback_host(host, hn))
		return "an https:// URL: the token never goes over plain http beyond this machine "
		       "(http:// only to 127.0.0.1, [::1] or localhost)";
	return NULL;
}

int pg_submit_token_read(char **out, const char *path)
{
	pg_buf text = PG_BUF_INIT;
	bool cut = false;
	size_t i;
	int fd = -1, err;

	*out = NULL;
	if ((err = pg_open_regular(&fd, NULL, path, PG_OPEN_READ | PG_OPEN_NOFOLLOW, NULL)) < 0)
		return pg_error_wrap(err, "token file");
	err = pg_buf_read_fd(&text, fd, PG_SUBMIT_TOKEN_MAX, &cut);
	close(fd);
	if (err < 0)
		goto done;
	if (cut) {
		err = pg_error_set(PG_ETOOBIG, "token file '%s' is longer than %d bytes", path,
				   PG_SUBMIT_TOKEN_MAX);
		goto done;
	}
	if (text.len && text.ptr[text.len - 1] == '\n')
		text.ptr[--text.len] = '\0';
	if (!text.len) {
		err = pg_error_set(PG_EINVALID, "token file '%s' is empty", path);
		goto done;
	}
	for (i = 0; i < text.len; i++)
		if ((unsigned char)text.ptr[i] <= ' ' || (unsigned char)text.ptr[i] >= 0x7f) {
			err = pg_error_set(PG_EINVALID, "token file '%s' %s", path,
					   memchr(text.ptr, '\n', text.len) ?
					   "holds more than one line: one token, one line" :
					   "holds a control character, a blank or a byte past ASCII: "
					   "a token is printable ASCII");
			goto done;
		}
	if (!(*out = pg_buf_detach(&text)))
		err = pg_error_oom();
done:
	pg_buf_release_secret(&text);
	return err;
}

/* --- the sender thread --------------------------------------------------------- */

struct pg_submit {
	pg_server *srv;
	pg_store *store;
	pthread_mutex_t lock;
	pthread_cond_t wake;             /* on the monotonic clock */
	pthread_t thread;
	bool started;
	bool stopping;
	bool woken;                      /* the outbox may hold more than the thread knows */
	bool unrecorded;                 /* a try's outcome the store refused: look again later */
	volatile sig_atomic_t cancel;    /* a POST under way gives up */
};

static const pg_config *config_now(const pg_submit *sub)
{
	return __atomic_load_n(&sub->srv->config, __ATOMIC_ACQUIRE);
}

/*
 * Wait until woken, stopped or, with due > 0, until that time (seconds
 * since the epoch): false once the service stops.
 */
static bool wait_for_work(pg_submit *sub, int64_t due)
{
	struct timespec until;
	bool go;

	pthread_mutex_lock(&sub->lock);
	if (due > 0) {
		int64_t left = due - (int64_t)time(NULL);

		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += left > 0 ? (time_t)left : 0;
		while (!sub->stopping && !sub->woken &&
		       pthread_cond_timedwait(&sub->wake, &sub->lock, &until) == 0)
			;
	} else
		while (!sub->stopping && !sub->woken)
			pthread_cond_wait(&sub->wake, &sub->lock);
	sub->woken = false;
	go = !sub->stopping;
	pthread_mutex_unlock(&sub->lock);
	return go;
}

/* The first line of a receiver's answer, cleaned and cut, after ": " (nothing when empty). */
static void reply_line(pg_buf *note, const pg_buf *reply)
{
	size_t n = reply->len ? strcspn(reply->ptr, "\r\n") : 0;

	if (n > REPLY_NOTE_MAX)
		n = REPLY_NOTE_MAX;
	if (n && pg_buf_puts(note, ": ") == 0)
		pg_sanitize_terminal(note, reply->ptr, n, PG_SANITIZE_ONELINE);
}

/* Whether an answer is one to try again: the receiver was busy or down, not refusing. */
static bool transient(unsigned status)
{
	return status == 408 || status == 429 || status >= 500;
}

/* The try's outcome in the outbox, the decision when final, and the service's log. */
static void record(pg_submit *sub, pg_submission *row, const char *decision)
{
	int err = pg_store_submission_set(sub->store, row, decision);

	if (err < 0) {
		pg_server_log(sub->srv, "pull %lld: cannot record the KCIDB submission: %s",
			      (long long)row->pull, pg_error_last());
		/* the row stays as the store has it (queued, say): tried again in a while */
		sub->unrecorded = true;
	}
	else if (err == 1)
		pg_server_log(sub->srv, "pull %lld: the KCIDB submission of run %lld was replaced "
			      "by a newer decision", (long long)row->pull, (long long)row->run);
	pg_error_clear();
}

/* One try of row's submission, with the configuration of the moment. */
static void try_one(pg_submit *sub, pg_submission *row)
{
	const pg_config *c = config_now(sub);
	const pg_submit_conf *k = &c->kcidb_submit;
	pg_http_post p = PG_HTTP_POST_INIT;
	pg_job *j = NULL;
	pg_buf doc = PG_BUF_INIT, line = PG_BUF_INIT, reply = PG_BUF_INIT, note = PG_BUF_INIT,
	       decision = PG_BUF_INIT, reply_status = PG_BUF_INIT;
	unsigned status = 0, wait, i;
	bool retry;
	int err;

	row->tries++;
	if (pg_testfault("kcidb", "document"))
		err = pg_error_set(PG_EIO, "kcidb document: a test's fault");
	else if ((err = pg_store_get(&j, sub->store, row->pull)) == 0)
		err = pg_server_kcidb(&doc, sub->srv, j);
	if (err < 0) {
		row->status = 0;
		pg_buf_puts(&note, "no document to send: ");
		pg_sanitize_terminal(&note, pg_error_last(), strlen(pg_error_last()),
				     PG_SANITIZE_ONELINE);
		/*
		 * no finished report, or one cut short, is no document at any
		 * try; a busy store, a read that failed or memory may be there next
		 */
		retry = err != PG_ENOTFOUND && err != PG_EINVALID;
		goto outcome;
	}
	p.url = k->url;
	p.bearer = k->token;
	p.content_type = "application/json";
	p.body = doc.ptr;
	p.len = doc.len;
	p.timeout_s = k->timeout_seconds;
	p.cancel = &sub->cancel;
	err = pg_http_client_post(&status, &line, &reply, &p);
	/* a kill here sends the document again at the next start: the same ids, no harm */
	pg_testpoint("kcidb", "posted");
	if (err == PG_ECANCELLED) {
		row->tries--;
		pg_server_log(sub->srv, "pull %lld: the KCIDB submission is left for the next start",
			      (long long)row->pull);
		goto done;
	}
	row->status = status;
	/* the receiver's words reach the API, the page and the log: one line, no escapes */
	if (err < 0)
		pg_sanitize_terminal(&note, pg_error_last(), strlen(pg_error_last()),
				     PG_SANITIZE_ONELINE);
	else {
		pg_sanitize_terminal(&reply_status, line.ptr, line.len, PG_SANITIZE_ONELINE);
		pg_buf_puts(&note, reply_status.ptr);
		if (status >= 300 && status < 400)
			pg_buf_puts(&note, " (a redirect, which is not followed)");
		reply_line(&note, &reply);
	}
	if (err == 0 && status >= 200 && status < 300) {
		snprintf(row->state, sizeof(row->state), "sent");
		pg_buf_printf(&decision, "KCIDB document of run %lld sent to %s: %s (%u attempt%s)",
			      (long long)row->run, k->url, note.ptr, row->tries,
			      row->tries == 1 ? "" : "s");
		pg_buf_release(&note);
		pg_buf_printf(&note, "%s", reply_status.ptr);
		goto final;
	}
	/* a libcurl missing or refusing an option is not there at the next try either */
	retry = (err < 0 && err != PG_EUNSUPPORTED) || (err == 0 && transient(status));
outcome:
	if (retry) {
		if (row->tries < k->attempts) {
			wait = k->retry_seconds;
			for (i = 1; i < row->tries && wait < RETRY_MAX_SECONDS; i++)
				wait *= 2;
			if (wait > RETRY_MAX_SECONDS)
				wait = RETRY_MAX_SECONDS;
			snprintf(row->state, sizeof(row->state), "retrying");
			row->next_at = (int64_t)time(NULL) + wait;
			free(row->note);
			row->note = pg_buf_detach(&note);
			record(sub, row, NULL);
			pg_server_log(sub->srv, "pull %lld: KCIDB document, attempt %u of %u: %s; again "
				      "in %u s", (long long)row->pull, row->tries, k->attempts,
				      row->note ? row->note : "", wait);
			goto done;
		}
	}
	snprintf(row->state, sizeof(row->state), "failed");
	pg_buf_printf(&decision, "KCIDB document of run %lld not sent%s: %s", (long long)row->run,
		      retry && row->tries > 1 ? " after every attempt" : "", note.ptr);
final:
	free(row->note);
	row->note = pg_buf_detach(&note);
	record(sub, row, decision.ptr);
	pg_server_log(sub->srv, "pull %lld: %s", (long long)row->pull, decision.ptr);
done:
	pg_job_free(j);
	pg_buf_release(&doc);
	pg_buf_release(&line);
	pg_buf_release(&reply_status);
	pg_buf_release(&reply);
	pg_buf_release(&note);
	pg_buf_release(&decision);
	pg_error_clear();
}

/*
 * Try what is due in the outbox; the time the next one is due (0: none
 * waits for a time).  With no URL configured the outbox is emptied.
 */
static int64_t send_due(pg_submit *sub)
{
	pg_submission *rows = NULL;
	size_t n = 0, i;
	int64_t next = 0, now;

	if (!config_now(sub)->kcidb_submit.url) {
		int err = pg_store_submissions_drop(sub->store, &n);

		if (err < 0)
			pg_server_log(sub->srv, "KCIDB: %s", pg_error_last());
		else if (n)
			pg_server_log(sub->srv, "KCIDB: %zu submission%s dropped: kcidb.submit is not "
				      "configured", n, n == 1 ? "" : "s");
		pg_error_clear();
		return err < 0 ? (int64_t)time(NULL) + 60 : 0;
	}
	if (pg_store_submissions_due(&rows, &n, sub->store) < 0) {
		pg_server_log(sub->srv, "KCIDB: cannot read the outbox: %s", pg_error_last());
		pg_error_clear();
		/* read again in a while, not at once */
		return (int64_t)time(NULL) + 60;
	}
	sub->unrecorded = false;
	for (i = 0; i < n && !sub->cancel; i++) {
		now = (int64_t)time(NULL);
		if (rows[i].next_at > now) {
			if (!next || rows[i].next_at < next)
				next = rows[i].next_at;
			continue;
		}
		try_one(sub, &rows[i]);
		if (!strcmp(rows[i].state, "retrying") && (!next || rows[i].next_at < next))
			next = rows[i].next_at;
	}
	pg_submissions_free(rows, n);
	/* an outcome the store refused (its lock held, say) is looked at again, not forgotten */
	now = (int64_t)time(NULL);
	if (sub->unrecorded && (!next || next > now + 60))
		next = now + 60;
	return next;
}

bool pg_submit_enabled(void *ctx)
{
	pg_submit *sub = ctx;

	return sub && config_now(sub)->kcidb_submit.url;
}

static void *loop(void *arg)
{
	pg_submit *sub = arg;
	int64_t due = 0;

	while (wait_for_work(sub, due))
		due = send_due(sub);
	return NULL;
}

int pg_submit_start(pg_submit **out, pg_server *s)
{
	pg_submit *sub;
	pthread_condattr_t attr;
	int err;

	*out = NULL;
	if (s->config->kcidb_submit.url && (err = pg_http_client_ready()) < 0)
		return err;
	if (!(sub = calloc(1, sizeof(*sub))))
		return pg_error_oom();
	sub->srv = s;
	sub->store = s->store;
	/* what the outbox held at the last stop is looked at first */
	sub->woken = true;
	pthread_mutex_init(&sub->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&sub->wake, &attr);
	pthread_condattr_destroy(&attr);
	if (pthread_create(&sub->thread, NULL, loop, sub) != 0) {
		pg_submit_stop(sub);
		return pg_error_set(PG_EIO, "cannot start the KCIDB submission thread");
	}
	sub->started = true;
	*out = sub;
	return 0;
}

void pg_submit_wake(void *ctx, int64_t id)
{
	pg_submit *sub = ctx;

	(void)id;
	if (!sub)
		return;
	pthread_mutex_lock(&sub->lock);
	sub->woken = true;
	pthread_cond_broadcast(&sub->wake);
	pthread_mutex_unlock(&sub->lock);
}

void pg_submit_stop(pg_submit *sub)
{
	if (!sub)
		return;
	pthread_mutex_lock(&sub->lock);
	sub->stopping = true;
	sub->cancel = 1;
	pthread_cond_broadcast(&sub->wake);
	pthread_mutex_unlock(&sub->lock);
	if (sub->started)
		pthread_join(sub->thread, NULL);
	pthread_cond_destroy(&sub->wake);
	pthread_mutex_destroy(&sub->lock);
	free(sub);
}
