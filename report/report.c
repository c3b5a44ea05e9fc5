/* report.c - building reports: findings, details, verdict. */
#include "report/report.h"
#include "common/array.h"
#include "common/error.h"

int pg_report_new(pg_report **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : pg_error_oom();
}

static void finding_release(pg_finding *f)
{
	size_t i;

	for (i = 0; i < f->ndetails; i++) {
		free(f->details[i].field);
		free(f->details[i].pull);
		free(f->details[i].upstream);
	}
	free(f->details);
	free(f->subject);
	free(f->message);
}

static void signature_release(pg_signature_info *s)
{
	size_t i;

	for (i = 0; i < s->nemails; i++)
		free(s->emails[i]);
	free(s->emails);
	free(s->tag);
	free(s->tagger);
	free(s->status);
	free(s->fingerprint);
}

static void tlog_evidence_free(pg_tlog_evidence *p)
{
	if (!p)
		return;
	free(p->message_id);
	free(p->date);
	free(p->pushed_by);
	free(p->repo);
	free(p);
}

int pg_report_set_tlog_evidence(pg_report *r, const char *message_id, const char *date,
			      const char *pushed_by, const char *repo, bool certified)
{
	pg_tlog_evidence *p = calloc(1, sizeof(*p));

	if (!p || (message_id && !(p->message_id = pg_strdup(message_id))) ||
	    (date && !(p->date = pg_strdup(date))) || !(p->pushed_by = pg_strdup(pushed_by)) ||
	    !(p->repo = pg_strdup(repo))) {
		tlog_evidence_free(p);
		return pg_error_oom();
	}
	p->certified = certified;
	tlog_evidence_free(r->tlog_evidence);
	r->tlog_evidence = p;
	return 0;
}

void pg_report_free(pg_report *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nstages; i++) {
		free(r->stages[i].name);
		free(r->stages[i].log);
		free(r->stages[i].summary);
	}
	free(r->stages);
	for (i = 0; i < r->nfindings; i++)
		finding_release(&r->findings[i]);
	free(r->findings);
	for (i = 0; i < r->nnotes; i++) {
		free(r->notes[i].subject);
		free(r->notes[i].message);
	}
	free(r->notes);
	pg_map_release(&r->copies);
	for (i = 0; i < r->ncopies; i++)
		free(r->copy_ids[i]);
	free(r->copy_ids);
	for (i = 0; i < r->nsignatures; i++)
		signature_release(&r->signatures[i]);
	free(r->signatures);
	free(r->repo);
	free(r->policy_sha256);
	free(r->tag);
	free(r->upstream);
	free(r->upstream_ref);
	tlog_evidence_free(r->tlog_evidence);
	pg_report_free_evidence(r);
	free(r);
}

bool pg_check_follows_from_copy(enum pg_check_id check)
{
	switch (check) {
	case PG_CHECK_FOREIGN_COMMITTER:
	case PG_CHECK_SIGNOFF:
	case PG_CHECK_FIXES_TAG:
	case PG_CHECK_BACK_MERGE:
	case PG_CHECK_RECENT_REBASE:
	case PG_CHECK_DATE_ANOMALY:
		return true;
	default:
		return false;
	}
}

int pg_report_mark_copy(pg_report *r, const pg_oid *commit, enum pg_severity sev)
{
	pg_oid *id;
	int err;

	if (sev == PG_SEV_OFF || pg_report_copy_severity(r, commit))
		return 0;
	if (!(id = malloc(sizeof(*id))))
		return pg_error_oom();
	*id = *commit;
	if ((err = PG_ARRAY_GROW(r->copy_ids, r->ncopies + 1, r->copies_alloc)) < 0) {
		free(id);
		return err;
	}
	r->copy_ids[r->ncopies++] = id;
	return pg_map_set(&r->copies, id->id, PG_OID_RAWSZ, (void *)(uintptr_t)(sev + 1));
}

unsigned pg_report_copy_severity(const pg_report *r, const pg_oid *commit)
{
	return (unsigned)(uintptr_t)pg_map_get(&r->copies, commit->id, PG_OID_RAWSZ);
}

int pg_report_add(pg_finding **out, pg_report *r, enum pg_check_id check,
		  enum pg_severity sev, const pg_commit *commit, const char *fmt, ...)
{
	pg_finding *f;
	pg_buf msg = PG_BUF_INIT;
	va_list ap;
	int err;

	if (out)
		*out = NULL;
	if (sev == PG_SEV_OFF)
		return 0;
	if ((unsigned)check >= PG_CHECK__COUNT || (unsigned)sev > PG_SEV_ERROR)
		return pg_error_set(PG_EINVALID, "finding of an unknown check or severity");
	if (r->max_per_check && r->kept[check] >= r->max_per_check) {
		unsigned copy = commit ? pg_report_copy_severity(r, &commit->id) : 0;

		r->omitted[check][sev]++;
		if (copy && pg_check_follows_from_copy(check) && sev <= copy - 1)
			r->omitted_implied[check][sev]++;
		return 0;
	}
	va_start(ap, fmt);
	err = pg_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	if (err < 0)
		return err;
	if ((err = PG_ARRAY_GROW(r->findings, r->nfindings + 1, r->findings_alloc)) < 0) {
		pg_buf_release(&msg);
		return err;
	}
	f = &r->findings[r->nfindings];
	memset(f, 0, sizeof(*f));
	f->check = check;
	f->severity = sev;
	if (commit) {
		f->has_commit = true;
		f->commit = commit->id;
		if (!(f->subject = pg_strdup(commit->subject))) {
			pg_buf_release(&msg);
			return PG_ENOMEM;
		}
	}
	if (!(f->message = pg_buf_detach(&msg))) {
		free(f->subject);
		return PG_ENOMEM;
	}
	r->nfindings++;
	r->kept[check]++;
	if (out)
		*out = f;
	return 0;
}

int pg_report_add_note(pg_report *r, enum pg_check_id check, const pg_commit *commit,
		       const pg_oid *upstream, const char *fmt, ...)
{
	pg_note *n;
	pg_buf msg = PG_BUF_INIT;
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = pg_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	if (err < 0 || (err = PG_ARRAY_GROW(r->notes, r->nnotes + 1, r->notes_alloc)) < 0) {
		pg_buf_release(&msg);
		return err;
	}
	n = &r->notes[r->nnotes];
	memset(n, 0, sizeof(*n));
	n->check = check;
	if (upstream) {
		n->has_upstream = true;
		n->upstream = *upstream;
	}
	if (commit) {
		n->has_commit = true;
		n->commit = commit->id;
		if (!(n->subject = pg_strdup(commit->subject))) {
			pg_buf_release(&msg);
			return PG_ENOMEM;
		}
	}
	if (!(n->message = pg_buf_detach(&msg))) {
		free(n->subject);
		return PG_ENOMEM;
	}
	r->nnotes++;
	return 0;
}

int pg_finding_detail(pg_finding *f, const char *field, const char *pull,
		      const char *upstream)
{
	pg_detail *d;
	int err;

	if (!f)
		return 0;
	if ((err = PG_ARRAY_GROW(f->details, f->ndetails + 1, f->details_alloc)) < 0)
		return err;
	d = &f->details[f->ndetails];
	d->field = pg_strdup(field);
	d->pull = pull ? pg_strdup(pull) : NULL;
	d->upstream = upstream ? pg_strdup(upstream) : NULL;
	if (!d->field || (pull && !d->pull) || (upstream && !d->upstream)) {
		free(d->field);
		free(d->pull);
		free(d->upstream);
		return PG_ENOMEM;
	}
	f->ndetails++;
	return 0;
}

int pg_finding_detailf(pg_finding *f, const char *field, const char *fmt, ...)
{
	pg_buf b = PG_BUF_INIT;
	va_list ap;
	int err;

	if (!f)
		return 0;
	va_start(ap, fmt);
	err = pg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (err == 0)
		err = pg_finding_detail(f, field, b.ptr, NULL);
	pg_buf_release(&b);
	return err;
}

/* strdup that keeps NULL and sets *ok = false when a copy fails */
static char *dup_or_null(const char *s, bool *ok)
{
	char *d = s ? pg_strdup(s) : NULL;

	if (s && !d)
		*ok = false;
	return d;
}

int pg_report_add_signature(pg_report *r, const pg_signature_info *info)
{
	pg_signature_info s;
	bool ok = true;
	size_t i;

	memset(&s, 0, sizeof(s));
	s.mergetag = info->mergetag;
	s.has_commit = info->has_commit;
	s.commit = info->commit;
	s.tag = dup_or_null(info->tag, &ok);
	s.tagger = dup_or_null(info->tagger, &ok);
	s.status = dup_or_null(info->status, &ok);
	s.fingerprint = dup_or_null(info->fingerprint, &ok);
	if (ok && info->nemails && !(s.emails = calloc(info->nemails, sizeof(*s.emails))))
		ok = false;
	for (i = 0; ok && i < info->nemails; i++, s.nemails++)
		s.emails[i] = dup_or_null(info->emails[i], &ok);
	if (ok && PG_ARRAY_GROW(r->signatures, r->nsignatures + 1, r->signatures_alloc) == 0) {
		r->signatures[r->nsignatures++] = s;
		return 0;
	}
	signature_release(&s);
	return pg_error_oom();
}

size_t pg_report_count(const pg_report *r, enum pg_severity sev)
{
	size_t i, n = 0;

	for (i = 0; i < r->nfindings; i++)
		if (r->findings[i].severity == sev)
			n++;
	if ((unsigned)sev <= PG_SEV_ERROR)
		for (i = 0; i < PG_CHECK__COUNT; i++)
			n += r->omitted[i][sev];
	return n;
}

size_t pg_report_omitted(const pg_report *r, enum pg_check_id check)
{
	return (unsigned)check < PG_CHECK__COUNT ?
		r->omitted[check][PG_SEV_WARNING] + r->omitted[check][PG_SEV_ERROR] : 0;
}

size_t pg_report_count_roots(const pg_report *r, enum pg_severity sev)
{
	size_t i, n = 0;

	for (i = 0; i < r->nfindings; i++)
		if (r->findings[i].severity == sev && !r->findings[i].implied_by &&
		    !r->findings[i].implied_unlisted)
			n++;
	if ((unsigned)sev <= PG_SEV_ERROR)
		for (i = 0; i < PG_CHECK__COUNT; i++)
			n += r->omitted[i][sev] - r->omitted_implied[i][sev];
	return n;
}

size_t pg_report_count_implied(const pg_report *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->nfindings; i++)
		if (r->findings[i].implied_by || r->findings[i].implied_unlisted)
			n++;
	for (i = 0; i < PG_CHECK__COUNT; i++)
		n += r->omitted_implied[i][PG_SEV_WARNING] + r->omitted_implied[i][PG_SEV_ERROR];
	return n;
}

static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

int pg_summary_format(pg_buf *out, const pg_report *r)
{
	const pg_summary *s = &r->summary;
	int err;

	if (!r->has_summary)
		return 0;
	if (!s->rewritten)
		err = pg_buf_printf(out, "the pull carries %zu %s (%zu %s) and re-creates no "
				    "upstream commit", r->ncommits, plural(r->ncommits, "commit", "commits"),
				    r->nmerges, plural(r->nmerges, "merge", "merges"));
	else
		err = pg_buf_printf(out, "the pull re-creates %zu upstream %s under new ids",
				    s->rewritten, plural(s->rewritten, "commit", "commits"));
	if (err == 0 && s->rewritten && (s->rewritten_merges || s->quoted_ids))
		err = pg_buf_putc(out, ' ');
	if (err == 0 && s->rewritten && s->rewritten_merges)
		err = pg_buf_printf(out, "(%zu %s, %zu signed %s dropped", s->rewritten_merges,
				    plural(s->rewritten_merges, "merge", "merges"), s->dropped_mergetags,
				    plural(s->dropped_mergetags, "tag", "tags"));
	if (err == 0 && s->rewritten && s->quoted_ids)
		err = pg_buf_printf(out, "%s%zu quoted commit %s rewritten", s->rewritten_merges ? "; " : "(",
				    s->quoted_ids, plural(s->quoted_ids, "id", "ids"));
	if (err == 0 && s->rewritten)
		err = pg_buf_printf(out, "%s: without them it should carry %zu %s",
				    s->rewritten_merges || s->quoted_ids ? ")" : "", s->own,
				    plural(s->own, "commit", "commits"));
	if (err == 0 && s->reapplied)
		err = pg_buf_printf(out, "; %zu %s an upstream change anew, not as a copy "
				    "(a note, not a finding)", s->reapplied,
				    plural(s->reapplied, "commit applies", "commits apply"));
	return err;
}

int pg_summary_verdict(pg_buf *out, const pg_report *r)
{
	size_t errors = pg_report_count_roots(r, PG_SEV_ERROR),
	       warnings = pg_report_count_roots(r, PG_SEV_WARNING),
	       implied = pg_report_count_implied(r);

	return pg_buf_printf(out, "%s: %zu %s, %zu %s as root causes; %zu %s from them",
			     pg_report_verdict(r) == PG_VERDICT_ACCEPT ? "accept" : "reject",
			     errors, plural(errors, "error", "errors"),
			     warnings, plural(warnings, "warning", "warnings"),
			     implied, plural(implied, "finding follows", "findings follow"));
}

size_t pg_report_count_check(const pg_report *r, enum pg_check_id check)
{
	size_t i, n = 0;

	for (i = 0; i < r->nfindings; i++)
		if (r->findings[i].check == check)
			n++;
	return n;
}

enum pg_verdict pg_report_verdict(const pg_report *r)
{
	return pg_report_count(r, PG_SEV_ERROR) ? PG_VERDICT_REJECT : PG_VERDICT_ACCEPT;
}

const char *pg_stage_status_name(enum pg_stage_status s)
{
	switch (s) {
	case PG_STAGE_PASSED: return "passed";
	case PG_STAGE_FAILED: return "failed";
	case PG_STAGE_ERROR: return "error";
	case PG_STAGE_SKIPPED: return "skipped";
	case PG_STAGE_WAITING: return "waiting";
	}
	return "error";
}

int pg_report_add_stage(pg_stage **out, pg_report *r, const char *name)
{
	int err;

	*out = NULL;
	if ((err = PG_ARRAY_GROW(r->stages, r->nstages + 1, r->stages_alloc)) < 0)
		return err;
	memset(&r->stages[r->nstages], 0, sizeof(*r->stages));
	if (!(r->stages[r->nstages].name = pg_strdup(name)))
		return PG_ENOMEM;
	*out = &r->stages[r->nstages++];
	return 0;
}

int pg_stage_set(pg_stage *s, enum pg_stage_status status, const char *log, const char *fmt, ...)
{
	pg_buf b = PG_BUF_INIT;
	va_list ap;
	int err = 0;

	s->status = status;
	if (log) {
		free(s->log);
		if (!(s->log = pg_strdup(log)))
			return PG_ENOMEM;
	}
	if (fmt) {
		va_start(ap, fmt);
		err = pg_buf_vprintf(&b, fmt, ap);
		va_end(ap);
		if (err == 0) {
			free(s->summary);
			if (!(s->summary = pg_buf_detach(&b)))
				err = PG_ENOMEM;
		}
	}
	pg_buf_release(&b);
	return err;
}
