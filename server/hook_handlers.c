/* hook_handlers.c - POST /hooks/push and /hooks/pull-request: decide (type, delivery, signature, body), then queue. */
#include "server/hooks.h"
#include "server/web.h"
#include "common/error.h"
#include "common/json.h"
#include "verifier/mail.h"

#include <ctype.h>
#include <strings.h>
#include <time.h>

/* The media type without parameters, compared case-insensitively against a list. */
static bool type_is(const char *header, const char *const *types, size_t n)
{
	size_t len, i;

	if (!header)
		return false;
	len = strcspn(header, "; \t");
	for (i = 0; i < n; i++)
		if (strlen(types[i]) == len && !strncasecmp(header, types[i], len))
			return true;
	return false;
}

/* Refuse: d holds the status, the reason and the one line.  Returns 0. */
static int refuse(pg_hook_decision *d, enum pg_hook_reject why, unsigned status,
		  const char *fmt, ...) PG_PRINTF(4, 5);
static int refuse(pg_hook_decision *d, enum pg_hook_reject why, unsigned status,
		  const char *fmt, ...)
{
	va_list ap;

	d->status = status;
	d->why = why;
	pg_buf_clear(&d->message);
	va_start(ap, fmt);
	pg_buf_vprintf(&d->message, fmt, ap);   /* the status says it, should this fail */
	va_end(ap);
	return 0;
}

/* A body that does not parse: 413 when too big, 415 in a form not decoded, else 400. */
static int malformed(pg_hook_decision *d, int err, const char *what)
{
	if (err == PG_ENOMEM)
		return err;
	return refuse(d, PG_REJECT_MALFORMED,
		      err == PG_ETOOBIG ? 413 : err == PG_EUNSUPPORTED ? 415 : 400,
		      "malformed %s: %s", what, pg_error_last());
}

/* A timestamp as X-Pullgate-Timestamp carries it: the Unix time in seconds. */
static bool timestamp_valid(const char *t, int64_t *out)
{
	size_t n = t ? strlen(t) : 0;

	if (!n || n > 12 || strspn(t, "0123456789") != n)
		return false;
	*out = (int64_t)strtoll(t, NULL, 10);
	return true;
}

/*
 * What both hooks check before looking at the body: its type, the delivery
 * id, the signature of the timestamp and the body, and that the timestamp
 * is within the replay window of this service's clock (so that a captured
 * request is refused once the window has passed; within it, the store
 * knows the signature).  0 to go on; 1 when d holds the refusal.
 */
static int authenticate(pg_hook_decision *d, const pg_hook_input *in, const char *const *types,
			size_t ntypes, const char *want)
{
	const char *ts = in->timestamp;
	unsigned window = in->config->replay_window;
	int64_t t = 0, off;

	if (!type_is(in->content_type, types, ntypes))
		return 1 + refuse(d, PG_REJECT_CONTENT_TYPE, 415, "Content-Type must be %s", want);
	if (!pg_hook_delivery_valid(in->delivery))
		return 1 + refuse(d, PG_REJECT_DELIVERY, 400, "X-Pullgate-Delivery must be 1 "
				  "to 128 characters of [A-Za-z0-9._:-]");
	if (ts && !timestamp_valid(ts, &t))
		return 1 + refuse(d, PG_REJECT_SIGNATURE, 401, "X-Pullgate-Timestamp must be "
				  "the Unix time in seconds, the time the request was signed");
	if (pg_auth_hook_verify(in->secret, in->signature, ts, in->body, in->body_len) < 0)
		return 1 + refuse(d, PG_REJECT_SIGNATURE, 401, "X-Pullgate-Signature: %s",
				  pg_error_last());
	off = (int64_t)time(NULL) - t;
	if (off > (int64_t)window || -off > (int64_t)window)
		return 1 + refuse(d, PG_REJECT_REPLAY, 401, "X-Pullgate-Timestamp is %lld s %s "
				  "this service's clock, more than the replay window of %u s: a "
				  "replayed or delayed request is refused (sign it again, now)",
				  (long long)(off < 0 ? -off : off), off < 0 ? "ahead of" : "behind",
				  window);
	return 0;
}

/*
 * What makes two jobs the same pull, for the store's dedupe: the kind,
 * the location fetched, the tag and the object id the push names, or for
 * a mail, the mail itself (which names no object id).
 */
static int dedupe_key(pg_buf *out, const pg_job_spec *j, const char *body_digest)
{
	char expect[PG_OID_HEXSZ + 1];

	if (j->expect)
		pg_oid_tohex(expect, j->expect);
	return pg_buf_printf(out, "%s\n%s\n%s\n%s", pg_job_kind_name(j->kind), j->repo, j->tag,
			     j->expect ? expect : body_digest);
}

/* The states in which a job is open: an equal delivery names it instead of making another. */
static size_t open_states(enum pg_job_state *out)
{
	size_t n = 0;
	int st;

	for (st = 0; st < PG_JOB__COUNT; st++)
		if (!pg_job_state_is_final((enum pg_job_state)st) || st == PG_JOB_WAITING)
			out[n++] = (enum pg_job_state)st;
	return n;
}

int pg_hook_record(pg_buf *ids, size_t *created, pg_store *store, pg_delivery *d,
		   pg_job_spec *jobs, size_t njobs)
{
	enum pg_job_state open[PG_JOB__COUNT];
	pg_buf *keys = NULL;
	size_t i;
	int err = 0;

	if (njobs && !(keys = calloc(njobs, sizeof(*keys))))
		return pg_error_oom();
	for (i = 0; i < njobs && err == 0; i++)
		if ((err = dedupe_key(&keys[i], &jobs[i], d->digest)) == 0)
			jobs[i].dedupe = keys[i].ptr;
	if (err == 0) {
		d->state = PG_JOB_QUEUED;
		d->jobs = jobs;
		d->njobs = njobs;
		d->open = open;
		d->nopen = open_states(open);
		err = pg_store_add_delivery(ids, created, store, d);
	}
	for (i = 0; i < njobs; i++) {
		jobs[i].dedupe = NULL;
		pg_buf_release(&keys[i]);
	}
	free(keys);
	d->open = NULL;
	return err;
}

/*
 * Record the delivery and answer: 202 with the new jobs, 200 for a
 * redelivery, a replay of a signed request or jobs that are all open
 * already, 409 for a clash.
 */
static int queue(pg_req *rq, pg_resp *rs, pg_job_spec *jobs, size_t njobs, const char *note)
{
	pg_server *s = rq->srv;
	bool mail = rq->hook_mail;
	pg_buf ids = PG_BUF_INIT, digest = PG_BUF_INIT, signature = PG_BUF_INIT, out = PG_BUF_INIT;
	pg_buf url = PG_BUF_INIT, message = PG_BUF_INIT;
	pg_json_writer *w = NULL;
	pg_delivery d;
	const int64_t *id;
	size_t i, n, created = 0;
	char sig[64];
	bool again;
	int err;

	memset(&d, 0, sizeof(d));
	/* the body's own digest, so that a redelivery is known by what it carries */
	/* and what it signed, in one case (upper-case hex is accepted), to know a replay */
	for (i = 0; i < 64; i++)
		sig[i] = (char)tolower((unsigned char)pg_req_header(rq, "X-Pullgate-Signature")[7 + i]);
	if ((err = pg_auth_hmac_hex(&digest, "pullgate-delivery", rq->body.ptr, rq->body.len)) < 0 ||
	    (err = pg_auth_hmac_hex(&signature, "pullgate-signature", sig, 64)) < 0)
		goto done;
	d.id = pg_req_header(rq, "X-Pullgate-Delivery");
	d.hook = mail ? "pull-request" : "push";
	d.digest = digest.ptr;
	d.signature = signature.ptr;
	err = pg_hook_record(&ids, &created, s->store, &d, jobs, njobs);
	if (err == PG_ECONFLICT) {
		pg_server_count_reject(s, mail, PG_REJECT_CONFLICT);
		err = pg_resp_error(rs, 409, "%s", pg_error_last());
		goto done;
	}
	if (err < 0 && err != PG_EEXISTS)
		goto done;
	again = err == PG_EEXISTS;
	id = (const int64_t *)(const void *)ids.ptr;
	n = ids.len / sizeof(int64_t);
	/* the store's message, kept before anything else can set one */
	if (again && (err = pg_buf_puts(&message, pg_error_last())) < 0)
		goto done;
	if ((err = pg_json_writer_new(&w)) < 0)
		goto done;
	pg_json_put_str(w, "delivery", d.id);
	pg_json_put_bool(w, "duplicate", again || (n && !created));
	pg_json_open_array(w, "jobs");
	for (i = 0; i < n; i++)
		pg_json_put_int(w, NULL, id[i]);
	pg_json_close(w);
	pg_json_open_array(w, "urls");
	for (i = 0; i < n; i++) {
		pg_buf_clear(&url);
		if ((err = pg_buf_printf(&url, "/api/pulls/%lld", (long long)id[i])) < 0)
			goto done;
		pg_json_put_str(w, NULL, url.ptr);
	}
	pg_json_close(w);
	pg_json_put_str(w, "message", again ? message.ptr : n && !created ?
			"an open job verifies this tag and object already: no new job" : note);
	if ((err = pg_json_write(&out, w, PG_JSON_COMPACT)) < 0 || (err = pg_buf_putc(&out, '\n')) < 0)
		goto done;
	if (!again) {
		pthread_mutex_lock(&s->metrics_lock);
		s->hooks_accepted[mail]++;
		pthread_mutex_unlock(&s->metrics_lock);
		if (n)
			pg_server_log(s, "%s delivery %s: %zu new job%s, %zu open already", d.hook, d.id,
				      created, created == 1 ? "" : "s", n - created);
		if (created)
			pg_worker_wake(s->worker);
	}
	err = pg_resp_text(rs, again || !created ? 200 : 202, "application/json", out.ptr, out.len);
done:
	pg_buf_release(&ids);
	pg_buf_release(&digest);
	pg_buf_release(&signature);
	pg_buf_release(&url);
	pg_buf_release(&message);
	pg_json_writer_free(w);
	pg_buf_release(&out);
	return err;
}

/* A push record: a job for each signed tag it creates or moves. */
static int decide_push(pg_hook_decision *d, const pg_hook_input *in)
{
	static const char *const types[] = {
		"application/json", "application/yaml", "application/x-yaml", "text/yaml",
		"text/x-yaml",
	};
	pg_push_record *rec;
	size_t i;
	int err;

	if (authenticate(d, in, types, PG_ARRAY_SIZE(types),
			 "application/json or application/yaml"))
		return 0;
	if ((err = pg_push_parse(&d->push, in->body, in->body_len)) < 0)
		return malformed(d, err, "push record");
	rec = d->push;
	if ((err = pg_config_repo_location(&d->location, in->config, rec->repo)) < 0)
		return refuse(d, PG_REJECT_REPOSITORY, 422, "%s", pg_error_last());
	if (!pg_policy_repository_allowed(in->policy, d->location.ptr))
		return refuse(d, PG_REJECT_REPOSITORY, 422, "repository '%s' is not in the "
			      "policy's allow-list", rec->repo);
	if (!(d->jobs = calloc(rec->nchanges, sizeof(*d->jobs))))
		return pg_error_oom();
	for (i = 0; i < rec->nchanges; i++) {
		const pg_push_change *c = &rec->changes[i];
		pg_job_spec *job = &d->jobs[d->njobs];

		/* branch pushes and deleted tags are acknowledged, not verified */
		if (!c->is_tag || pg_oid_is_zero(&c->new_id))
			continue;
		job->kind = PG_JOB_PUSH;
		job->repo = d->location.ptr;
		job->repo_name = rec->repo;
		job->tag = c->ref;
		job->expect = &c->new_id;
		job->sender = rec->user;
		d->njobs++;
	}
	d->note = d->njobs ? "queued: see the urls" :
		"no new signed tag in this push: nothing to verify";
	return 0;
}

/* A request-pull mail: one job for the signed tag it names, from a repository it may name. */
static int decide_mail(pg_hook_decision *d, const pg_hook_input *in)
{
	static const char *const types[] = { "message/rfc822", "text/plain", "application/mbox" };
	pg_pull_request *pr;
	bool mapped;
	int err;

	if (authenticate(d, in, types, PG_ARRAY_SIZE(types),
			 "message/rfc822, text/plain or application/mbox"))
		return 0;
	if ((err = pg_mail_parse(&d->mail, in->body, in->body_len)) < 0)
		return malformed(d, err, "pull-request mail");
	pr = d->mail;
	if (!pr->url || pg_hook_mail_tag(&d->tag, pr->ref) < 0)
		return refuse(d, PG_REJECT_MALFORMED, 422, "the mail does not name a signed tag "
			      "to pull: %s", pr->url ? pg_error_last() : "no repository URL");
	/*
	 * A URL the configuration maps is fetched from there.  Any other is
	 * text from whoever wrote the mail: it is fetched as it is only when it
	 * is a network URL and the policy has an allow-list that names it, never
	 * a local path or file:// (SSRF, local repositories).
	 */
	mapped = pg_config_repo_location(&d->location, in->config, pr->url) == 0;
	if (!mapped) {
		pg_error_clear();
		pg_buf_clear(&d->location);
		if (!strstr(pr->url, "://") || !strncasecmp(pr->url, "file:", 5) ||
		    !in->policy->nrepositories)
			return refuse(d, PG_REJECT_REPOSITORY, 422, "repository '%s' is not mapped "
				      "in the configuration, and only a network URL on the policy's "
				      "allow-list is fetched as a mail gives it", pr->url);
		if ((err = pg_buf_puts(&d->location, pr->url)) < 0)
			return err;
	}
	if (!pg_policy_repository_allowed(in->policy, d->location.ptr) &&
	    !(mapped && pg_policy_repository_allowed(in->policy, pr->url)))
		return refuse(d, PG_REJECT_REPOSITORY, 422, "repository '%s' is not in the "
			      "policy's allow-list", pr->url);
	if (!(d->jobs = calloc(1, sizeof(*d->jobs))))
		return pg_error_oom();
	d->jobs[0].kind = PG_JOB_MAIL;
	d->jobs[0].repo = d->location.ptr;
	d->jobs[0].repo_name = pr->url;
	d->jobs[0].tag = d->tag.ptr;
	d->jobs[0].mail = in->body;
	d->jobs[0].mail_len = in->body_len;
	d->njobs = 1;
	d->note = "queued: see the urls";
	return 0;
}

int pg_hook_decide(pg_hook_decision *d, const pg_hook_input *in)
{
	int err;

	memset(d, 0, sizeof(*d));
	pg_buf_init(&d->message, 0);
	pg_buf_init(&d->location, 0);
	pg_buf_init(&d->tag, 0);
	if ((err = in->mail ? decide_mail(d, in) : decide_push(d, in)) < 0)
		return err;
	if (d->status) {
		/* a refusal queues nothing */
		free(d->jobs);
		d->jobs = NULL;
		d->njobs = 0;
	}
	return 0;
}

void pg_hook_decision_release(pg_hook_decision *d)
{
	pg_buf_release(&d->message);
	pg_buf_release(&d->location);
	pg_buf_release(&d->tag);
	pg_push_record_free(d->push);
	pg_pull_request_free(d->mail);
	free(d->jobs);
	memset(d, 0, sizeof(*d));
}

/* Both hooks: the decision, then the refusal or the queue. */
static int hook(pg_req *rq, pg_resp *rs, const char *secret)
{
	pg_server *s = rq->srv;
	pg_hook_input in = {
		.mail = rq->hook_mail,
		.secret = secret,
		.config = s->config,
		.policy = s->policy,
		.content_type = pg_req_header(rq, "Content-Type"),
		.delivery = pg_req_header(rq, "X-Pullgate-Delivery"),
		.signature = pg_req_header(rq, "X-Pullgate-Signature"),
		.timestamp = pg_req_header(rq, "X-Pullgate-Timestamp"),
		.body = rq->body.ptr,
		.body_len = rq->body.len,
	};
	pg_hook_decision d;
	int err;

	if ((err = pg_hook_decide(&d, &in)) == 0) {
		if (d.status) {
			pg_server_count_reject(s, rq->hook_mail, d.why);
			err = pg_resp_error(rs, d.status, "%s", d.message.ptr);
		} else {
			err = queue(rq, rs, d.jobs, d.njobs, d.note);
		}
	}
	pg_hook_decision_release(&d);
	return err;
}

int pg_hook_push(pg_req *rq, pg_resp *rs)
{
	return hook(rq, rs, rq->srv->push_secret);
}

int pg_hook_pull_request(pg_req *rq, pg_resp *rs)
{
	return hook(rq, rs, rq->srv->mail_secret);
}
