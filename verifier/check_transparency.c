/* check_transparency.c - the pull's tag and the upstream branch against kernel.org's transparency log of pushes. */
#include "verifier/pull.h"
#include "verifier/gpg.h"
#include "verifier/tlog.h"
#include "common/error.h"

/* Records of one ref read at most: a tag is pushed a few times, a branch daily. */
#define TAG_RECORDS_MAX 64
#define BRANCH_RECORDS_MAX 10000

typedef struct tcheck {
	pg_pull *p;
	pg_tlog *log;
	enum pg_severity sev;
	const char *signer;   /* the tag's signing key, or NULL */
	pg_gpg *gpg;
	pg_finding *f;        /* the finding add() made last */
} tcheck;

static const char *or_none(const char *s)
{
	return s ? s : "(none)";
}

/* "<id@host> of DATE": how a record is named in the report. */
static int record_name(pg_buf *out, const pg_tlog_record *rec)
{
	return pg_buf_printf(out, "%s of %s", or_none(rec->message_id), or_none(rec->date));
}

/* What pg_report_add gave (err, c->f), with the record that is its evidence as details. */
static int with_record(tcheck *c, const pg_tlog_record *rec, int err)
{
	pg_buf name = PG_BUF_INIT;

	if (err == 0 && c->f && rec && (err = record_name(&name, rec)) == 0 &&
	    (err = pg_finding_detail(c->f, "record", name.ptr, NULL)) == 0)
		err = pg_finding_detail(c->f, "pushed by", rec->user, NULL);
	pg_buf_release(&name);
	return err;
}

/* A finding of this check naming rec (may be NULL). */
#define add(c, sev, rec, ...) \
	with_record((c), (rec), pg_report_add(&(c)->f, (c)->p->report, PG_CHECK_TRANSPARENCY, \
					      (sev), NULL, __VA_ARGS__))

static enum pg_severity at_most(enum pg_severity a, enum pg_severity b)
{
	return a < b ? a : b;
}

/* The pulled tag's signing key, as the signature check found it, good or not. */
static const char *tag_signer(const pg_report *r)
{
	size_t i;

	if (r->tag_signer)
		return r->tag_signer;
	for (i = 0; i < r->nsignatures; i++)
		if (!r->signatures[i].mergetag && r->signatures[i].fingerprint)
			return r->signatures[i].fingerprint;
	return NULL;
}

/* 1 with a verifier, 0 when the policy names no keys. */
static int open_gpg(tcheck *c)
{
	pg_gpg_keys keys;
	int err;

	if (c->gpg)
		return 1;
	if (!pg_pull_gpg_keys(&keys, c->p->policy))
		return 0;
	return (err = pg_pull_gpg_open(&c->gpg, c->p)) < 0 ? err : 1;
}

/* Does the certificate say the pusher meant this ref to be the tag object? */
static bool cert_covers(const pg_push_cert *cert, const char *ref, const pg_oid *tag)
{
	size_t i;

	for (i = 0; i < cert->ncmds; i++)
		if (!strcmp(cert->cmds[i].ref, ref) && !pg_oid_cmp(&cert->cmds[i].new_id, tag))
			return true;
	return false;
}

/* The signed push certificate attached to the evidence, verified; *good when it holds. */
static int check_cert(tcheck *c, const pg_tlog_record *rec, const char *ref, const pg_oid *tag,
		      bool *good)
{
	pg_push_cert cert;
	pg_gpg_result r;
	char hex[PG_OID_HEXSZ + 1];
	int err, have;

	*good = false;
	memset(&r, 0, sizeof(r));
	if ((err = pg_push_cert_parse(&cert, rec->cert, rec->cert_len)) < 0)
		return err == PG_ENOMEM ? err :
		       add(c, c->sev, rec, "the push certificate of the record of '%s' is not one: %s",
			   ref, pg_error_last());
	pg_oid_tohex(hex, tag);
	if ((have = open_gpg(c)) <= 0) {
		err = have < 0 ? have : pg_report_add_note(c->p->report, PG_CHECK_TRANSPARENCY, NULL,
							   NULL, "no keyring: the push certificate "
							   "of the record of '%s' was not checked",
							   ref);
		goto done;
	}
	if ((err = pg_gpg_verify(&r, c->gpg, rec->cert, cert.payload_len, cert.sig,
				 cert.sig_len)) < 0)
		goto done;
	if (r.status != PG_GPG_GOOD)
		err = add(c, c->sev, rec, "the push certificate of the record of '%s' does not "
			  "verify: %s", ref, pg_gpg_status_name(r.status));
	else if (c->signer && (!r.fingerprint || strcasecmp(r.fingerprint, c->signer)))
		err = add(c, c->sev, rec, "the push certificate of the record of '%s' is signed by "
			  "%s, not by the tag's signer %s", ref, or_none(r.fingerprint), c->signer);
	else if (!cert_covers(&cert, ref, tag))
		err = add(c, c->sev, rec, "the push certificate of the record of '%s' does not "
			  "certify %s as its new value", ref, hex);
	else
		*good = true;
done:
	pg_gpg_result_release(&r);
	pg_push_cert_release(&cert);
	return err;
}

/* The pusher's account against the one the policy gives the tag's signer. */
static int check_account(tcheck *c, const pg_tlog_record *rec, const char *ref)
{
	const pg_signer *s = c->signer ? pg_policy_find_signer(c->p->policy, c->signer) : NULL;

	if (!s || !s->account)
		return pg_report_add_note(c->p->report, PG_CHECK_TRANSPARENCY, NULL, NULL,
					  "the policy maps no account to %s: the pusher '%s' of "
					  "'%s' was not checked", c->signer ? c->signer :
					  "the tag's signer (unknown)", rec->user, ref);
	if (strcmp(s->account, rec->user))
		return add(c, c->sev, rec, "'%s' was pushed by the account '%s', not by '%s', "
			   "the account the policy gives its signer %s", ref, rec->user,
			   s->account, c->signer);
	return 0;
}

/* What the evidence says, as a note: which record, who, and what it carried. */
static int evidence_note(tcheck *c, const pg_tlog_record *rec, const pg_tlog_change *ch,
			 const char *ref, bool cert_good)
{
	pg_buf msg = PG_BUF_INIT;
	char hex[PG_OID_HEXSZ + 1];
	int err;

	pg_oid_tohex(hex, &ch->new_id);
	err = pg_buf_printf(&msg, "push record %s of %s: '%s' pushed %s as %s to %s",
			    or_none(rec->message_id), or_none(rec->date), rec->user, ref, hex,
			    rec->repo);
	if (err == 0 && cert_good)
		err = pg_buf_printf(&msg, ", certified by a signed push of %s", c->signer ?
				    c->signer : "a good key");
	if (err == 0 && ch->log_file)
		err = ch->log_unread ?
		      pg_buf_printf(&msg, "; its log attached as '%s' (not read: too big)",
				    ch->log_file) :
		      pg_buf_printf(&msg, "; its log attached as '%s' (%zu lines)", ch->log_file,
				    ch->log_lines);
	if (err == 0)
		err = pg_report_add_note(c->p->report, PG_CHECK_TRANSPARENCY, NULL, NULL, "%s",
					 msg.ptr);
	pg_buf_release(&msg);
	return err;
}

/* A record the index pointed at, read and checked against what it was found for. */
static int read_hit(pg_tlog_record **out, const pg_tlog_change **ch, tcheck *c,
		    const pg_tlog_hit *hit, const char *location, const char *ref)
{
	int err;

	*ch = NULL;
	if ((err = pg_tlog_read(out, c->log, hit)) < 0)
		return err == PG_ENOMEM ? err :
		       pg_report_add_note(c->p->report, PG_CHECK_TRANSPARENCY, NULL, NULL,
					  "a push record of '%s' could not be read: %s", ref,
					  pg_error_last());
	if (!pg_tlog_repo_matches((*out)->repo, location) ||
	    !(*ch = pg_tlog_record_change(*out, ref))) {
		/* the index only points: one that points wrong is no evidence */
		pg_tlog_record_free(*out);
		*out = NULL;
	}
	return 0;
}

/* The records of the pull's tag: the one that created the tag object is the evidence. */
static int check_tag(tcheck *c, const char *location)
{
	pg_pull *p = c->p;
	const char *ref = p->report->tag;
	const pg_oid *tag = &p->report->tag_object;
	pg_tlog_hit *hits = NULL;
	pg_tlog_record *rec = NULL, *evidence = NULL, *last = NULL;
	const pg_tlog_change *ch, *ev_ch = NULL, *last_ch = NULL;
	char hex[PG_OID_HEXSZ + 1], now[PG_OID_HEXSZ + 1];
	size_t n = 0, i;
	bool cert_good = false;
	int err;

	pg_oid_tohex(hex, tag);
	if ((err = pg_tlog_find(&hits, &n, c->log, location, ref, TAG_RECORDS_MAX)) < 0)
		return err;
	if (!n && strcmp(location, p->repo_location) &&
	    (err = pg_tlog_find(&hits, &n, c->log, location = p->repo_location, ref,
				TAG_RECORDS_MAX)) < 0)
		return err;
	for (i = 0; i < n; i++) {
		if ((err = read_hit(&rec, &ch, c, &hits[i], location, ref)) < 0)
			goto done;
		if (!rec)
			continue;
		if (!pg_oid_cmp(&ch->new_id, tag)) {
			pg_tlog_record_free(evidence);
			evidence = rec;
			ev_ch = ch;
			last = NULL;
		} else {
			pg_tlog_record_free(last);
			last = rec;
			last_ch = ch;
		}
		rec = NULL;
	}
	if (!evidence && !last) {
		err = add(c, at_most(c->sev, p->policy->tlog_missing), NULL, "no push record of "
			  "'%s' to %s in the transparency log: nothing says who pushed tag object "
			  "%s", ref, location, hex);
		goto done;
	}
	if (last) {
		pg_oid_tohex(now, &last_ch->new_id);
		err = add(c, c->sev, last, evidence ?
			  "'%s' was pushed again after the tag object %s: the log's last push makes "
			  "it %s" : "the log's push of '%s' does not make it the tag object %s but %s",
			  ref, hex, pg_oid_is_zero(&last_ch->new_id) ? "(deleted)" : now);
		if (err < 0 || !evidence)
			goto done;
	}
	if (evidence->cert && (err = check_cert(c, evidence, ref, tag, &cert_good)) < 0)
		goto done;
	if (!evidence->cert && evidence->cert_status &&
	    (err = pg_report_add_note(p->report, PG_CHECK_TRANSPARENCY, NULL, NULL,
				      "the record of '%s' says the push was signed (%s) but "
				      "holds no certificate", ref, evidence->cert_status)) < 0)
		goto done;
	/* the report carries the evidence as data too: the dashboard links the record */
	if ((err = pg_report_set_tlog_evidence(p->report, evidence->message_id, evidence->date,
					     evidence->user, evidence->repo, cert_good)) < 0)
		goto done;
	if ((err = check_account(c, evidence, ref)) == 0)
		err = evidence_note(c, evidence, ev_ch, ref, cert_good);
done:
	pg_tlog_record_free(rec);
	pg_tlog_record_free(evidence);
	pg_tlog_record_free(last);
	free(hits);
	return err;
}

/* Whether old and new are both here, and then whether new descends from old (1, 0). */
static int judge(pg_pull *p, const pg_tlog_change *ch)
{
	if (!pg_repo_has_object(p->repo, &ch->old_id) || !pg_repo_has_object(p->repo, &ch->new_id))
		return -1;
	return pg_repo_is_ancestor(p->repo, &ch->old_id, &ch->new_id);
}

/* One push of the upstream branch since the base: a force-push, or one that cannot be judged. */
static int check_push(tcheck *c, const pg_tlog_hit *hit, const char *location, const char *ref)
{
	pg_tlog_record *rec = NULL;
	const pg_tlog_change *ch;
	char from[PG_OID_HEXSZ + 1], to[PG_OID_HEXSZ + 1];
	int err, fast;

	if ((err = read_hit(&rec, &ch, c, hit, location, ref)) < 0 || !rec)
		return err;
	pg_oid_tohex(from, &ch->old_id);
	pg_oid_tohex(to, &ch->new_id);
	if (pg_oid_is_zero(&ch->old_id) || pg_oid_is_zero(&ch->new_id))
		goto done;
	if ((fast = judge(c->p, ch)) == PG_ENOMEM) {
		err = fast;
	} else if (fast < 0) {
		err = pg_report_add_note(c->p->report, PG_CHECK_TRANSPARENCY, NULL, NULL,
					 "push record %s of %s: whether '%s' moved from %s to %s "
					 "without a force-push could not be judged: %s not in the "
					 "local upstream", or_none(rec->message_id),
					 or_none(rec->date), ref, from, to,
					 pg_repo_has_object(c->p->repo, &ch->old_id) ?
					 "the new commit is" : "the old commit is");
	} else if (!fast) {
		err = add(c, at_most(c->sev, PG_SEV_WARNING), rec, "upstream '%s' of %s was "
			  "force-pushed since the pull's base: %s is not an ancestor of %s", ref,
			  rec->repo, from, to);
	}
done:
	pg_tlog_record_free(rec);
	return err;
}

/* The upstream branch's records since the pull's base (the first whose new holds it). */
static int check_upstream(tcheck *c)
{
	pg_pull *p = c->p;
	const char *location = p->report->upstream, *ref = p->report->upstream_ref;
	pg_tlog_hit *hits = NULL;
	pg_oid base;
	size_t n = 0, i;
	bool since = false;
	int err;

	if (!location || !ref || strncmp(ref, "refs/heads/", 11))
		return 0;
	if ((err = pg_repo_merge_base(&base, p->repo, &p->tag_commit, &p->upstream_tip)) < 0)
		return err == PG_ENOTFOUND ? 0 : err;
	if ((err = pg_tlog_find(&hits, &n, c->log, location, ref, BRANCH_RECORDS_MAX)) < 0)
		return err;
	for (i = 0; i < n && err == 0; i++) {
		if (!since) {
			if (!pg_repo_has_object(p->repo, &hits[i].new_id))
				continue;
			if ((err = pg_repo_is_ancestor(p->repo, &base, &hits[i].new_id)) < 0) {
				err = err == PG_ENOMEM ? err : 0;
				continue;
			}
			if (!(since = err == 1))
				continue;
		}
		err = check_push(c, &hits[i], location, ref);
	}
	free(hits);
	return err;
}

int pg_check_transparency(pg_pull *p)
{
	tcheck c = { p, NULL, pg_pull_severity(p, PG_CHECK_TRANSPARENCY), NULL, NULL, NULL };
	pg_tlog_info info;
	int err;

	if (c.sev == PG_SEV_OFF || !p->policy->tlog || !p->home)
		return 0;
	if ((err = pg_tlog_open(&c.log, &info, p->policy->tlog, p->home)) < 0)
		return err;
	c.signer = tag_signer(p->report);
	if (info.unreadable &&
	    (err = pg_report_add_note(p->report, PG_CHECK_TRANSPARENCY, NULL, NULL,
				      "%zu messages of the transparency log read this time are "
				      "no push record pullgate can read: they are not indexed",
				      info.unreadable)) < 0)
		goto done;
	if ((err = check_tag(&c, p->repo_name ? p->repo_name : p->repo_location)) == 0)
		err = check_upstream(&c);
done:
	pg_gpg_free(c.gpg);
	pg_tlog_free(c.log);
	return err;
}
