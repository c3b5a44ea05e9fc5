/* hook_handlers.c - POST /hooks/push and /hooks/pull-request: authenticate, parse, queue, answer 202. */
#include "server/hooks.h"
#include "server/web.h"
#include "common/error.h"
#include "verifier/mail.h"

#include <strings.h>

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

/* Refuse a delivery: counted, for /metrics, under why; rs holds the answer.  Returns 0. */
static int refuse(pg_req *rq, pg_resp *rs, enum pg_hook_reject why, unsigned status,
		  const char *fmt, ...) PG_PRINTF(5, 6);
static int refuse(pg_req *rq, pg_resp *rs, enum pg_hook_reject why, unsigned status,
		  const char *fmt, ...)
{
	pg_buf msg = PG_BUF_INIT;
	va_list ap;

	pg_server_count_reject(rq->srv, rq->hook_mail, why);
	va_start(ap, fmt);
	pg_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	pg_resp_error(rs, status, "%s", msg.ptr);
	pg_buf_release(&msg);
	return 0;
}

/* A body that does not parse: 413 when too big, 415 in a form not decoded, else 400. */
static int malformed(pg_req *rq, pg_resp *rs, int err, const char *what)
{
	if (err == PG_ENOMEM)
		return err;
	return refuse(rq, rs, PG_REJECT_MALFORMED,
		      err == PG_ETOOBIG ? 413 : err == PG_EUNSUPPORTED ? 415 : 400,
		      "malformed %s: %s", what, pg_error_last());
}

/*
 * What both hooks check before looking at the body: its type, the delivery
 * id and the signature.  0 to go on; 1 when rs holds the refusal.
 */
static int authenticate(pg_req *rq, pg_resp *rs, const char *secret, const char *const *types,
			size_t ntypes, const char *want)
{
	if (!type_is(pg_req_header(rq, "Content-Type"), types, ntypes))
		return 1 + refuse(rq, rs, PG_REJECT_CONTENT_TYPE, 415, "Content-Type must be %s", want);
	if (!pg_hook_delivery_valid(pg_req_header(rq, "X-Pullgate-Delivery")))
		return 1 + refuse(rq, rs, PG_REJECT_DELIVERY, 400, "X-Pullgate-Delivery must be 1 "
				  "to 128 characters of [A-Za-z0-9._:-]");
	if (pg_auth_hook_verify(secret, pg_req_header(rq, "X-Pullgate-Signature"), rq->body.ptr,
				rq->body.len) < 0)
		return 1 + refuse(rq, rs, PG_REJECT_SIGNATURE, 401, "X-Pullgate-Signature: %s",
				  pg_error_last());
	return 0;
}

/* Record the delivery and answer: 202 with the new jobs, 200 for a redelivery, 409 for a clash. */
static int queue(pg_req *rq, pg_resp *rs, const pg_job_spec *jobs, size_t njobs,
		 const char *note)
{
	pg_server *s = rq->srv;
	bool mail = rq->hook_mail;
	pg_buf ids = PG_BUF_INIT, digest = PG_BUF_INIT, out = PG_BUF_INIT;
	const char *delivery = pg_req_header(rq, "X-Pullgate-Delivery");
	const int64_t *id;
	size_t i, n, created;
	pg_delivery d;
	int err;

	/* the body's own digest, so that a redelivery is known by what it carries */
	if ((err = pg_auth_hmac_hex(&digest, "pullgate-delivery", rq->body.ptr, rq->body.len)) < 0)
		goto done;
	memset(&d, 0, sizeof(d));
	d.id = delivery;
	d.hook = mail ? "pull-request" : "push";
	d.digest = digest.ptr;
	d.state = pg_job_state_name(PG_JOB_QUEUED);
	d.jobs = jobs;
	d.njobs = njobs;
	err = pg_store_add_delivery(s->store, &ids, &created, &d);
	if (err == PG_ECONFLICT) {
		err = refuse(rq, rs, PG_REJECT_CONFLICT, 409, "%s", pg_error_last());
		goto done;
	}
	if (err < 0 && err != PG_EEXISTS)
		goto done;
	id = (const int64_t *)(const void *)ids.ptr;
	n = ids.len / sizeof(int64_t);
	pg_buf_printf(&out, "{\"delivery\": \"%s\", \"duplicate\": %s, \"jobs\": [", delivery,
		      err == PG_EEXISTS ? "true" : "false");
	for (i = 0; i < n; i++)
		pg_buf_printf(&out, "%s%lld", i ? ", " : "", (long long)id[i]);
	pg_buf_puts(&out, "], \"urls\": [");
	for (i = 0; i < n; i++)
		pg_buf_printf(&out, "%s\"/api/pulls/%lld\"", i ? ", " : "", (long long)id[i]);
	pg_buf_printf(&out, "], \"message\": \"%s\"}\n",
		      err == PG_EEXISTS ? "this delivery was received before: no new job" : note);
	if (err != PG_EEXISTS) {
		pthread_mutex_lock(&s->metrics_lock);
		s->hooks_accepted[mail]++;
		pthread_mutex_unlock(&s->metrics_lock);
		for (i = 0; i < n; i++)
			pg_server_log(s, "pull %lld: queued from %s delivery %s", (long long)id[i],
				      mail ? "pull-request" : "push", delivery);
		pg_worker_wake(s->worker);
	}
	err = pg_resp_text(rs, err == PG_EEXISTS ? 200 : n ? 202 : 200, "application/json",
			   out.ptr, out.len);
done:
	pg_buf_release(&ids);
	pg_buf_release(&digest);
	pg_buf_release(&out);
	return err;
}

int pg_hook_push(pg_req *rq, pg_resp *rs)
{
	static const char *const types[] = {
		"application/json", "application/yaml", "application/x-yaml", "text/yaml",
		"text/x-yaml",
	};
	pg_server *s = rq->srv;
	pg_push_record *rec = NULL;
	pg_job_spec *jobs = NULL;
	pg_buf location = PG_BUF_INIT;
	char (*hex)[PG_OID_HEXSZ + 1] = NULL;
	size_t i, n = 0;
	int err;

	if (authenticate(rq, rs, s->push_secret, types, PG_ARRAY_SIZE(types),
			 "application/json or application/yaml"))
		return 0;
	if ((err = pg_push_parse(&rec, rq->body.ptr, rq->body.len)) < 0)
		return malformed(rq, rs, err, "push record");
	if ((err = pg_config_repo_location(&location, s->config, rec->repo)) < 0) {
		err = refuse(rq, rs, PG_REJECT_REPOSITORY, 422, "%s", pg_error_last());
		goto done;
	}
	if (!pg_policy_repository_allowed(s->policy, location.ptr)) {
		err = refuse(rq, rs, PG_REJECT_REPOSITORY, 422, "repository '%s' is not in the "
			     "policy's allow-list", rec->repo);
		goto done;
	}
	if (!(jobs = calloc(rec->nchanges, sizeof(*jobs))) ||
	    !(hex = calloc(rec->nchanges, sizeof(*hex)))) {
		err = pg_error_oom();
		goto done;
	}
	for (i = 0; i < rec->nchanges; i++) {
		const pg_push_change *c = &rec->changes[i];

		/* branch pushes and deleted tags are acknowledged, not verified */
		if (!c->is_tag || pg_oid_is_zero(&c->new_id))
			continue;
		pg_oid_tohex(hex[n], &c->new_id);
		jobs[n].kind = "push";
		jobs[n].repo = location.ptr;
		jobs[n].repo_name = rec->repo;
		jobs[n].tag = c->ref;
		jobs[n].expect = hex[n];
		jobs[n].sender = rec->user;
		n++;
	}
	err = queue(rq, rs, jobs, n, n ? "queued: see the urls" :
		    "no new signed tag in this push: nothing to verify");
done:
	free(jobs);
	free(hex);
	pg_buf_release(&location);
	pg_push_record_free(rec);
	return err;
}

int pg_hook_pull_request(pg_req *rq, pg_resp *rs)
{
	static const char *const types[] = { "message/rfc822", "text/plain", "application/mbox" };
	pg_server *s = rq->srv;
	pg_pull_request *pr = NULL;
	pg_buf tag = PG_BUF_INIT, location = PG_BUF_INIT;
	pg_job_spec job;
	bool mapped;
	int err;

	if (authenticate(rq, rs, s->mail_secret, types, PG_ARRAY_SIZE(types),
			 "message/rfc822, text/plain or application/mbox"))
		return 0;
	if ((err = pg_mail_parse(&pr, rq->body.ptr, rq->body.len)) < 0)
		return malformed(rq, rs, err, "pull-request mail");
	if (!pr->url || pg_hook_mail_tag(&tag, pr->ref) < 0) {
		err = refuse(rq, rs, PG_REJECT_MALFORMED, 422, "the mail does not name a signed tag "
			     "to pull: %s", pr->url ? pg_error_last() : "no repository URL");
		goto done;
	}
	/*
	 * A URL the configuration maps is fetched from there.  Any other is
	 * text from whoever wrote the mail: it is fetched as it is only when it
	 * is a network URL and the policy has an allow-list that names it, never
	 * a local path or file:// (SSRF, local repositories).
	 */
	mapped = pg_config_repo_location(&location, s->config, pr->url) == 0;
	if (!mapped) {
		pg_error_clear();
		pg_buf_clear(&location);
		if (!strstr(pr->url, "://") || !strncasecmp(pr->url, "file:", 5) ||
		    !s->policy->nrepositories) {
			err = refuse(rq, rs, PG_REJECT_REPOSITORY, 422, "repository '%s' is not mapped "
				     "in the configuration, and only a network URL on the policy's "
				     "allow-list is fetched as a mail gives it", pr->url);
			goto done;
		}
		if ((err = pg_buf_puts(&location, pr->url)) < 0)
			goto done;
	}
	if (!pg_policy_repository_allowed(s->policy, location.ptr) &&
	    !(mapped && pg_policy_repository_allowed(s->policy, pr->url))) {
		err = refuse(rq, rs, PG_REJECT_REPOSITORY, 422, "repository '%s' is not in the "
			     "policy's allow-list", pr->url);
		goto done;
	}
	memset(&job, 0, sizeof(job));
	job.kind = "mail";
	job.repo = location.ptr;
	job.repo_name = pr->url;
	job.tag = tag.ptr;
	job.mail = rq->body.ptr;
	job.mail_len = rq->body.len;
	err = queue(rq, rs, &job, 1, "queued: see the urls");
done:
	pg_pull_request_free(pr);
	pg_buf_release(&tag);
	pg_buf_release(&location);
	return err;
}
