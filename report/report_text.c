/* report_text.c - the report for a terminal: one line per finding, details below. */
#include "report/report.h"
#include "common/sanitize.h"

#define SUBJECT_MAX 100
#define VALUE_MAX 300
/* what a farm of many hosts did is longer than a fact: a few lines of them */
#define FARM_MAX 2000

/* Append s sanitized to one line, cut at max bytes on a character boundary. */
static int put_safe(pg_buf *out, const char *s, size_t max)
{
	pg_buf tmp = PG_BUF_INIT;
	size_t n;
	int err;

	if (!s)
		s = "";
	if ((err = pg_sanitize_terminal(&tmp, s, strlen(s), PG_SANITIZE_ONELINE)) < 0)
		goto done;
	n = tmp.len;
	if (n > max) {
		n = max;
		while (n && ((unsigned char)tmp.ptr[n] & 0xC0) == 0x80)
			n--;
		pg_buf_truncate(&tmp, n);
		err = pg_buf_puts(&tmp, "\xE2\x80\xA6"); /* an ellipsis */
	}
	if (err == 0)
		err = pg_buf_put(out, tmp.ptr, tmp.len);
done:
	pg_buf_release(&tmp);
	return err;
}

/* What a detail's second side is: upstream's, the mail's, or the description's. */
static const char *other_side(enum pg_check_id check)
{
	switch (check) {
	case PG_CHECK_PR_BASE:
	case PG_CHECK_PR_HEAD:
	case PG_CHECK_PR_URL:
	case PG_CHECK_PR_SHORTLOG:
	case PG_CHECK_PR_DIFFSTAT:
		return "mail";
	case PG_CHECK_RANGE_SIZE:
		return "limit";
	default:
		return "upstream";
	}
}

static int put_detail(pg_buf *out, const pg_detail *d, const char *other)
{
	int err;

	if ((err = pg_buf_puts(out, "    ")) < 0 || (err = put_safe(out, d->field, 40)) < 0 ||
	    (err = pg_buf_puts(out, ":")) < 0)
		return err;
	if (d->pull && d->upstream) {
		if ((err = pg_buf_puts(out, " pull ")) < 0 ||
		    (err = put_safe(out, d->pull, VALUE_MAX)) < 0 ||
		    (err = pg_buf_printf(out, "; %s ", other)) < 0 ||
		    (err = put_safe(out, d->upstream, VALUE_MAX)) < 0)
			return err;
	} else if (d->pull) {
		if ((err = pg_buf_putc(out, ' ')) < 0 || (err = put_safe(out, d->pull, VALUE_MAX)) < 0)
			return err;
	} else if (d->upstream) {
		if ((err = pg_buf_printf(out, " %s ", other)) < 0 ||
		    (err = put_safe(out, d->upstream, VALUE_MAX)) < 0)
			return err;
	}
	return pg_buf_putc(out, '\n');
}

static int put_finding(pg_buf *out, const pg_finding *f)
{
	char hex[PG_OID_HEXSZ + 1];
	size_t i;
	int err;

	if (f->has_commit)
		pg_oid_tohex(hex, &f->commit);
	else
		memcpy(hex, "-", 2);
	hex[12] = '\0';
	if ((err = pg_buf_printf(out, "%-7s  %-22s  %-12s  ", pg_severity_name(f->severity),
				 pg_check_name(f->check), hex)) < 0 ||
	    (err = put_safe(out, f->has_commit ? f->subject : f->message, SUBJECT_MAX)) < 0 ||
	    (err = pg_buf_putc(out, '\n')) < 0)
		return err;
	if (f->has_commit) {
		if ((err = pg_buf_puts(out, "    ")) < 0 ||
		    (err = put_safe(out, f->message, VALUE_MAX)) < 0 ||
		    (err = pg_buf_putc(out, '\n')) < 0)
			return err;
	}
	if (f->has_upstream) {
		pg_oid_tohex(hex, &f->upstream);
		if ((err = pg_buf_printf(out, "    upstream original: %s\n", hex)) < 0)
			return err;
	}
	for (i = 0; i < f->ndetails; i++)
		if ((err = put_detail(out, &f->details[i], other_side(f->check))) < 0)
			return err;
	return 0;
}

/* "... and 9800 more back-merge findings (9800 warnings): the policy lists 200 per check" */
static int put_omitted(pg_buf *out, const pg_report *r)
{
	size_t i;
	int err = 0;

	for (i = 0; i < PG_CHECK__COUNT && err == 0; i++) {
		size_t e = r->omitted[i][PG_SEV_ERROR], w = r->omitted[i][PG_SEV_WARNING];

		if (e + w)
			err = pg_buf_printf(out, "... and %zu more %s finding%s (%zu error%s, "
					    "%zu warning%s): the policy lists %zu per check\n",
					    e + w, pg_check_name((enum pg_check_id)i),
					    e + w == 1 ? "" : "s", e, e == 1 ? "" : "s", w,
					    w == 1 ? "" : "s", r->max_per_check);
	}
	return err;
}

/* "signed:   mergetag 'x' in 0123456789ab by Name <email>: good, key FPR (a@b, c@d)" */
static int put_signature(pg_buf *out, const pg_signature_info *s, bool first)
{
	char hex[PG_OID_HEXSZ + 1];
	size_t i;
	int err;

	if ((err = pg_buf_puts(out, first ? "signed:   " : "          ")) < 0 ||
	    (err = pg_buf_puts(out, s->mergetag ? "mergetag '" : "tag '")) < 0 ||
	    (err = put_safe(out, s->tag, 100)) < 0 || (err = pg_buf_putc(out, '\'')) < 0)
		return err;
	if (s->has_commit) {
		pg_oid_tohex(hex, &s->commit);
		if ((err = pg_buf_printf(out, " in %.12s", hex)) < 0)
			return err;
	}
	if (s->tagger && ((err = pg_buf_puts(out, " by ")) < 0 ||
			  (err = put_safe(out, s->tagger, 100)) < 0))
		return err;
	if ((err = pg_buf_puts(out, ": ")) < 0 || (err = put_safe(out, s->status, 20)) < 0)
		return err;
	if (s->fingerprint && ((err = pg_buf_puts(out, ", key ")) < 0 ||
			       (err = put_safe(out, s->fingerprint, 64)) < 0))
		return err;
	for (i = 0; i < s->nemails; i++)
		if ((err = pg_buf_puts(out, i ? ", " : " (")) < 0 ||
		    (err = put_safe(out, s->emails[i], 100)) < 0)
			return err;
	return pg_buf_puts(out, s->nemails ? ")\n" : "\n");
}

static int put_stages(pg_buf *out, const pg_report *r)
{
	size_t i;
	int err = pg_buf_puts(out, r->nfindings ? "\nstages:\n" : "stages:\n");

	for (i = 0; i < r->nstages && err == 0; i++) {
		const pg_stage *s = &r->stages[i];

		err = pg_buf_printf(out, "  %-8s %-8s %7.1fs  ", s->name,
				    pg_stage_status_name(s->status), (double)s->elapsed_ms / 1000);
		if (err == 0)
			err = put_safe(out, s->summary, VALUE_MAX);
		if (err == 0 && s->log) {
			err = pg_buf_puts(out, "\n           log: ");
			if (err == 0)
				err = put_safe(out, s->log, VALUE_MAX);
		}
		if (err == 0)
			err = pg_buf_putc(out, '\n');
	}
	if (err == 0 && r->has_merge) {
		char hex[PG_OID_HEXSZ + 1];

		pg_oid_tohex(hex, &r->merge_commit);
		err = pg_buf_printf(out, "merge:    %s%s\n", hex,
				    r->approved ? " (the integration branch moved here)" : "");
	}
	if (err == 0 && r->attestation && (err = pg_buf_puts(out, "attested: ")) == 0 &&
	    (err = put_safe(out, r->attestation, VALUE_MAX)) == 0)
		err = pg_buf_putc(out, '\n');
	return err;
}

static int put_counts(pg_buf *out, bool present, const pg_suite_counts *c)
{
	char cell[64];

	if (present)
		snprintf(cell, sizeof(cell), "%zu/%zu/%zu/%zu", c->passed, c->failed, c->skipped,
			 c->crashed);
	else
		snprintf(cell, sizeof(cell), "-");
	return pg_buf_printf(out, "  %-18s", cell);
}

/* "  label: value" when value is recorded, cut after max bytes. */
static int put_fact_max(pg_buf *out, const char *label, const char *value, size_t max)
{
	int err;

	if (!value)
		return 0;
	if ((err = pg_buf_printf(out, "           %s: ", label)) == 0 &&
	    (err = put_safe(out, value, max)) == 0)
		err = pg_buf_putc(out, '\n');
	return err;
}

static int put_fact(pg_buf *out, const char *label, const char *value)
{
	return put_fact_max(out, label, value, VALUE_MAX);
}

static int put_provenance(pg_buf *out, const pg_provenance *p)
{
	size_t i;
	int err = pg_buf_printf(out, "  %-8s %s", p->stage, p->simulated ? "SIMULATED" : "shipped scripts");

	if (err == 0 && p->exit_status >= 0)
		err = pg_buf_printf(out, ", exit status %d", p->exit_status);
	if (err == 0 && p->cached)
		err = pg_buf_puts(out, ", kept from an earlier run");
	if (err == 0)
		err = pg_buf_putc(out, '\n');
	for (i = 0; i < p->nfiles && err == 0; i++) {
		const pg_prov_file *f = &p->files[i];

		if ((err = pg_buf_puts(out, "           ")) == 0 &&
		    (err = put_safe(out, f->path, VALUE_MAX)) == 0)
			err = pg_buf_printf(out, " sha256 %s%s\n", f->sha256 ? f->sha256 : "(unreadable)",
					    f->shipped ? "" : " (not the shipped file)");
	}
	if (err == 0)
		err = put_fact(out, "tree", p->tree);
	if (err == 0)
		err = put_fact(out, "toolchain", p->toolchain);
	if (err == 0)
		err = put_fact(out, "qemu", p->qemu);
	if (err == 0)
		err = put_fact(out, "config sha256", p->config_sha256);
	if (err == 0)
		err = put_fact(out, "Image sha256", p->image_sha256);
	if (err == 0)
		err = put_fact(out, "nonce", p->nonce);
	if (err == 0)
		err = put_fact(out, "log", p->log);
	if (err == 0)
		err = put_fact_max(out, "icecc environment", p->farm_env, FARM_MAX);
	if (err == 0)
		err = put_fact_max(out, "farm", p->farm, FARM_MAX);
	return err;
}

/* A suite's row of the base-against-merge table, or NULL when it did not report. */
static const pg_suite_result *find_suite(const pg_report *r, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < r->nsuites; i++)
		if (strlen(r->suites[i].name) == len && !memcmp(r->suites[i].name, name, len))
			return &r->suites[i];
	return NULL;
}

int pg_report_format_selection(pg_buf *out, const pg_report *r)
{
	size_t i;
	int err = 0;

	if (!r->has_selection)
		return 0;
	if ((err = pg_buf_puts(out, "kunit selection: ")) < 0 ||
	    (err = put_safe(out, r->selection_note, VALUE_MAX)) < 0 ||
	    (err = pg_buf_printf(out, " (cap %u)\n", r->selection_cap)) < 0)
		return err;
	for (i = 0; i < r->nselected && err == 0; i++) {
		const pg_selected *s = &r->selected[i];
		const char *p = s->suites;

		if ((err = pg_buf_puts(out, "  ")) < 0 || (err = put_safe(out, s->option, 60)) < 0 ||
		    (err = pg_buf_printf(out, " %s, from ", pg_selected_status_name(s->status))) < 0 ||
		    (err = put_safe(out, s->source, 120)) < 0 ||
		    (err = pg_buf_puts(out, " for ")) < 0 || (err = put_safe(out, s->path, 200)) < 0 ||
		    (err = pg_buf_putc(out, '\n')) < 0)
			break;
		if (s->reason && ((err = pg_buf_puts(out, "    ")) < 0 ||
				  (err = put_safe(out, s->reason, VALUE_MAX)) < 0 ||
				  (err = pg_buf_putc(out, '\n')) < 0))
			break;
		while (err == 0 && p && *p) {
			size_t n = strcspn(p, " ");
			const pg_suite_result *res = find_suite(r, p, n);
			pg_buf name = PG_BUF_INIT;

			if ((err = pg_buf_put(&name, p, n)) == 0 &&
			    (err = pg_buf_puts(out, "    suite ")) == 0 &&
			    (err = put_safe(out, name.ptr, 64)) == 0) {
				if (!res)
					err = pg_buf_puts(out, r->nsuites ? ": did not report\n" : "\n");
				else if ((err = pg_buf_puts(out, ": base")) == 0 &&
					 (err = put_counts(out, res->on_base, &res->base)) == 0 &&
					 (err = pg_buf_puts(out, " merge")) == 0 &&
					 (err = put_counts(out, res->on_merge, &res->merge)) == 0)
					err = pg_buf_printf(out, " %s\n", res->verdict);
			}
			pg_buf_release(&name);
			p += n + (p[n] == ' ');
		}
	}
	return err;
}

/* Provenance per stage, the suites on base and merge, and a word when stand-ins ran. */
static int put_evidence(pg_buf *out, const pg_report *r)
{
	size_t i;
	int err = 0;

	if (r->nprovenance)
		err = pg_buf_puts(out, "provenance:\n");
	for (i = 0; i < r->nprovenance && err == 0; i++)
		err = put_provenance(out, &r->provenance[i]);
	if (err == 0 && r->base_boot && (err = pg_buf_puts(out, "base boot: ")) == 0 &&
	    (err = put_safe(out, r->base_boot, VALUE_MAX)) == 0)
		err = pg_buf_putc(out, '\n');
	if (err == 0 && r->nsuites)
		err = pg_buf_printf(out, "kunit suites (pass/fail/skip/crash):\n  %-28s  %-18s  %-18s  %s\n",
				    "suite", "base", "merge", "verdict");
	for (i = 0; i < r->nsuites && err == 0; i++) {
		const pg_suite_result *s = &r->suites[i];
		pg_buf name = PG_BUF_INIT;

		if ((err = put_safe(&name, s->name, 28)) == 0 &&
		    (err = pg_buf_printf(out, "  %-28s", name.ptr)) == 0 &&
		    (err = put_counts(out, s->on_base, &s->base)) == 0 &&
		    (err = put_counts(out, s->on_merge, &s->merge)) == 0)
			err = pg_buf_printf(out, "  %s\n", s->verdict);
		pg_buf_release(&name);
	}
	if (err == 0)
		err = pg_report_format_selection(out, r);
	if (err == 0 && r->simulated)
		err = pg_buf_puts(out, "SIMULATED: stand-in scripts ran in place of pullgate's own "
				  "(see provenance): nothing above was really built or booted\n");
	return err;
}


/* "    also: error foreign-committer: committed by ...": a finding that follows from another. */
static int put_implied(pg_buf *out, const pg_finding *f)
{
	int err;

	if ((err = pg_buf_printf(out, "    also: %s %s: ", pg_severity_name(f->severity),
				 pg_check_name(f->check))) < 0 ||
	    (err = put_safe(out, f->message, VALUE_MAX)) < 0)
		return err;
	return pg_buf_putc(out, '\n');
}

static int put_note(pg_buf *out, const pg_note *n)
{
	char hex[PG_OID_HEXSZ + 1];
	int err;

	if (n->has_commit)
		pg_oid_tohex(hex, &n->commit);
	else
		memcpy(hex, "-", 2);
	hex[12] = '\0';
	if ((err = pg_buf_printf(out, "%-7s  %-22s  %-12s  ", "note", pg_check_name(n->check),
				 hex)) < 0 ||
	    (err = put_safe(out, n->has_commit ? n->subject : n->message, SUBJECT_MAX)) < 0 ||
	    (err = pg_buf_putc(out, '\n')) < 0)
		return err;
	if (n->has_commit && ((err = pg_buf_puts(out, "    ")) < 0 ||
			      (err = put_safe(out, n->message, VALUE_MAX)) < 0 ||
			      (err = pg_buf_putc(out, '\n')) < 0))
		return err;
	return 0;
}

static const char *plural(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* The pull, the upstream and how copies were sought: the lines under the summary. */
static int put_header(pg_buf *out, const pg_report *r)
{
	char tag[PG_OID_HEXSZ + 1], up[PG_OID_HEXSZ + 1];
	int err;

	pg_oid_tohex(tag, &r->tag_commit);
	pg_oid_tohex(up, &r->upstream_tip);
	if ((err = pg_buf_puts(out, "pull:     ")) < 0 || (err = put_safe(out, r->tag, 200)) < 0 ||
	    (err = pg_buf_puts(out, " of ")) < 0 || (err = put_safe(out, r->repo, 300)) < 0 ||
	    (err = pg_buf_printf(out, "\n          commit %s, %zu %s (%zu %s)\n", tag, r->ncommits,
				 plural(r->ncommits, "commit", "commits"), r->nmerges,
				 plural(r->nmerges, "merge", "merges"))) < 0 ||
	    (err = pg_buf_puts(out, "upstream: ")) < 0 ||
	    (err = put_safe(out, r->upstream_ref, 200)) < 0 ||
	    (err = pg_buf_puts(out, " of ")) < 0 || (err = put_safe(out, r->upstream, 300)) < 0 ||
	    (err = pg_buf_printf(out, "\n          commit %s\n          copies sought among %zu "
				 "upstream %s", up, r->upstream_examined,
				 plural(r->upstream_examined, "commit", "commits"))) < 0)
		return err;
	/* what the count is: index hits or a date window, the divergence and cherry-pick sources */
	if (r->upstream_index &&
	    (err = pg_buf_printf(out, ": those sharing a pull commit's identity in upstream's "
				 "identity index of %zu %s (%s), upstream's side of the divergence "
				 "and cherry-pick sources", r->upstream_indexed,
				 plural(r->upstream_indexed, "commit", "commits"),
				 r->upstream_index)) < 0)
		return err;
	if (r->upstream_since &&
	    ((err = pg_buf_puts(out, ": those committed since ")) < 0 ||
	     (err = pg_time_format(out, r->upstream_since, 0)) < 0 ||
	     (err = pg_buf_puts(out, " (a date window), upstream's side of the divergence and "
				"cherry-pick sources")) < 0))
		return err;
	return pg_buf_puts(out, "\n\n");
}

int pg_report_format_text(pg_buf *out, const pg_report *r)
{
	size_t i, k, errors = pg_report_count_roots(r, PG_SEV_ERROR),
		  warnings = pg_report_count_roots(r, PG_SEV_WARNING),
		  implied = pg_report_count_implied(r);
	int err;

	if (r->has_summary) {
		pg_buf story = PG_BUF_INIT;

		if ((err = pg_summary_format(&story, r)) == 0 &&
		    (err = pg_buf_puts(out, "summary:  ")) == 0 &&
		    (err = put_safe(out, story.ptr, 1000)) == 0)
			err = pg_buf_puts(out, "\n");
		pg_buf_release(&story);
		if (err < 0)
			return err;
	}
	if ((err = put_header(out, r)) < 0)
		return err;
	for (i = 0; i < r->nsignatures; i++)
		if ((err = put_signature(out, &r->signatures[i], i == 0)) < 0)
			return err;
	if (!r->nsignatures && r->no_keyring &&
	    (err = pg_buf_puts(out, "signed:   not checked (no keyring)\n")) < 0)
		return err;
	if ((r->nsignatures || r->no_keyring) && (err = pg_buf_putc(out, '\n')) < 0)
		return err;
	for (i = 0; i < r->nfindings; i++) {
		if (r->findings[i].implied_by || r->findings[i].implied_unlisted)
			continue;
		if ((err = put_finding(out, &r->findings[i])) < 0)
			return err;
		for (k = 0; k < r->nfindings; k++)
			if (r->findings[k].implied_by == i + 1 &&
			    (err = put_implied(out, &r->findings[k])) < 0)
				return err;
	}
	for (i = 0, k = 0; i < r->nfindings; i++) {
		if (!r->findings[i].implied_unlisted)
			continue;
		if (!k++ && (err = pg_buf_puts(out, "on rewritten copies past the cap of "
					       "rewritten-upstream findings, following from them:\n")) < 0)
			return err;
		if ((err = put_finding(out, &r->findings[i])) < 0)
			return err;
	}
	for (i = 0; i < r->nnotes; i++)
		if ((err = put_note(out, &r->notes[i])) < 0)
			return err;
	if ((err = put_omitted(out, r)) < 0)
		return err;
	if (r->nstages && ((err = put_stages(out, r)) < 0 || (err = put_evidence(out, r)) < 0))
		return err;
	if ((err = pg_buf_printf(out, "%sverdict: %s (%zu %s, %zu %s", r->nfindings || r->nnotes ? "\n" : "",
				 pg_report_verdict(r) == PG_VERDICT_ACCEPT ? "accept" : "reject",
				 errors, plural(errors, "error", "errors"), warnings,
				 plural(warnings, "warning", "warnings"))) < 0)
		return err;
	if (implied && (err = pg_buf_printf(out, "; %zu more %s follow%s from them", implied,
					    plural(implied, "finding", "findings"),
					    implied == 1 ? "s" : "")) < 0)
		return err;
	return pg_buf_puts(out, ")\n");
}
