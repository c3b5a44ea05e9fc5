/* report_json.c - the report as JSON (docs/report-schema.md), through the JSON writer. */
#include "report/report.h"
#include "common/error.h"
#include "common/json.h"

static void put_finding(pg_json_writer *w, const pg_finding *f)
{
	size_t i;

	pg_json_open_object(w, NULL);
	pg_json_put_str(w, "check", pg_check_name(f->check));
	pg_json_put_str(w, "severity", pg_severity_name(f->severity));
	pg_json_put_oid(w, "commit", f->has_commit ? &f->commit : NULL);
	pg_json_put_str(w, "subject", f->subject);
	pg_json_put_oid(w, "upstream", f->has_upstream ? &f->upstream : NULL);
	pg_json_put_str(w, "message", f->message);
	pg_json_open_array(w, "details");
	for (i = 0; i < f->ndetails; i++) {
		pg_json_open_object(w, NULL);
		pg_json_put_str(w, "field", f->details[i].field);
		pg_json_put_str(w, "pull", f->details[i].pull);
		pg_json_put_str(w, "upstream", f->details[i].upstream);
		pg_json_close(w);
	}
	pg_json_close(w);
	if (f->implied_by)
		pg_json_put_int(w, "implied_by", (int64_t)f->implied_by - 1);
	else
		pg_json_put_null(w, "implied_by");
	if (f->implied_unlisted)
		pg_json_put_bool(w, "implied_unlisted", true);
	pg_json_close(w);
}

static void put_note(pg_json_writer *w, const pg_note *n)
{
	pg_json_open_object(w, NULL);
	pg_json_put_str(w, "check", pg_check_name(n->check));
	pg_json_put_oid(w, "commit", n->has_commit ? &n->commit : NULL);
	pg_json_put_str(w, "subject", n->subject);
	pg_json_put_oid(w, "upstream", n->has_upstream ? &n->upstream : NULL);
	pg_json_put_str(w, "message", n->message);
	pg_json_close(w);
}

/* The story first: what a maintainer reads before any finding. */
static int put_summary(pg_json_writer *w, const pg_report *r)
{
	pg_buf text = PG_BUF_INIT, verdict = PG_BUF_INIT;
	size_t errors = pg_report_count_roots(r, PG_SEV_ERROR),
	       warnings = pg_report_count_roots(r, PG_SEV_WARNING),
	       implied = pg_report_count_implied(r);
	int err;

	if (!r->has_summary) {
		pg_json_put_null(w, "summary");
		return 0;
	}
	if ((err = pg_summary_format(&text, r)) == 0)
		err = pg_summary_verdict(&verdict, r);
	if (err == 0) {
		pg_json_open_object(w, "summary");
		pg_json_put_str(w, "text", text.ptr);
		pg_json_put_str(w, "verdict", verdict.ptr);
		pg_json_put_int(w, "commits", (int64_t)r->ncommits);
		pg_json_put_int(w, "merges", (int64_t)r->nmerges);
		pg_json_put_int(w, "rewritten", (int64_t)r->summary.rewritten);
		pg_json_put_int(w, "rewritten_merges", (int64_t)r->summary.rewritten_merges);
		pg_json_put_int(w, "dropped_mergetags", (int64_t)r->summary.dropped_mergetags);
		pg_json_put_int(w, "quoted_ids_rewritten", (int64_t)r->summary.quoted_ids);
		pg_json_put_int(w, "should_carry", (int64_t)r->summary.own);
		pg_json_put_int(w, "reapplied", (int64_t)r->summary.reapplied);
		pg_json_put_int(w, "root_errors", (int64_t)errors);
		pg_json_put_int(w, "root_warnings", (int64_t)warnings);
		pg_json_put_int(w, "implied", (int64_t)implied);
		pg_json_close(w);
	}
	pg_buf_release(&text);
	pg_buf_release(&verdict);
	return err;
}

static void put_signature(pg_json_writer *w, const pg_signature_info *s)
{
	size_t i;

	pg_json_open_object(w, NULL);
	pg_json_put_str(w, "kind", s->mergetag ? "mergetag" : "tag");
	pg_json_put_oid(w, "commit", s->has_commit ? &s->commit : NULL);
	pg_json_put_str(w, "tag", s->tag);
	pg_json_put_str(w, "tagger", s->tagger);
	pg_json_put_str(w, "status", s->status);
	pg_json_put_str(w, "fingerprint", s->fingerprint);
	pg_json_open_array(w, "uids");
	for (i = 0; i < s->nemails; i++)
		pg_json_put_str(w, NULL, s->emails[i]);
	pg_json_close(w);
	pg_json_close(w);
}

/* Per check that has some, its errors and warnings of by (and their sum, "count"). */
static void put_by_check(pg_json_writer *w, const char *key,
			 const size_t (*by)[PG_SEV_ERROR + 1], bool count)
{
	size_t i;

	pg_json_open_array(w, key);
	for (i = 0; i < PG_CHECK__COUNT; i++) {
		size_t e = by[i][PG_SEV_ERROR], n = by[i][PG_SEV_WARNING];

		if (!e && !n)
			continue;
		pg_json_open_object(w, NULL);
		pg_json_put_str(w, "check", pg_check_name((enum pg_check_id)i));
		if (count)
			pg_json_put_int(w, "count", (int64_t)(e + n));
		pg_json_put_int(w, "errors", (int64_t)e);
		pg_json_put_int(w, "warnings", (int64_t)n);
		pg_json_close(w);
	}
	pg_json_close(w);
}

/*
 * The findings counted past the policy's cap, by check: "omitted", and of
 * those the ones that follow from their commit's rewritten copy (no root
 * causes), "omitted_implied".
 */
static void put_omitted(pg_json_writer *w, const pg_report *r)
{
	put_by_check(w, "omitted", r->omitted, true);
	put_by_check(w, "omitted_implied", r->omitted_implied, false);
	pg_json_put_int(w, "max_findings_per_check", (int64_t)r->max_per_check);
	pg_json_put_str(w, "policy_sha256", r->policy_sha256);
}

static void put_stages(pg_json_writer *w, const pg_report *r)
{
	size_t i;

	pg_json_open_array(w, "stages");
	for (i = 0; i < r->nstages; i++) {
		pg_json_open_object(w, NULL);
		pg_json_put_str(w, "name", r->stages[i].name);
		pg_json_put_str(w, "status", pg_stage_status_name(r->stages[i].status));
		pg_json_put_real(w, "seconds", (double)r->stages[i].elapsed_ms / 1000);
		pg_json_put_str(w, "log", r->stages[i].log);
		pg_json_put_str(w, "summary", r->stages[i].summary);
		pg_json_close(w);
	}
	pg_json_close(w);
}

static void put_counts(pg_json_writer *w, const char *key, bool present,
		       const pg_suite_counts *c)
{
	if (!present) {
		pg_json_put_null(w, key);
		return;
	}
	pg_json_open_object(w, key);
	pg_json_put_int(w, "passed", (int64_t)c->passed);
	pg_json_put_int(w, "failed", (int64_t)c->failed);
	pg_json_put_int(w, "skipped", (int64_t)c->skipped);
	pg_json_put_int(w, "crashed", (int64_t)c->crashed);
	pg_json_close(w);
}

static void put_provenance(pg_json_writer *w, const pg_provenance *p)
{
	size_t i;

	pg_json_open_object(w, NULL);
	pg_json_put_str(w, "stage", p->stage);
	pg_json_put_bool(w, "simulated", p->simulated);
	pg_json_open_array(w, "files");
	for (i = 0; i < p->nfiles; i++) {
		pg_json_open_object(w, NULL);
		pg_json_put_str(w, "path", p->files[i].path);
		pg_json_put_str(w, "sha256", p->files[i].sha256);
		pg_json_put_bool(w, "shipped", p->files[i].shipped);
		pg_json_close(w);
	}
	pg_json_close(w);
	pg_json_put_str(w, "tree", p->tree);
	pg_json_put_str(w, "toolchain", p->toolchain);
	pg_json_put_str(w, "qemu", p->qemu);
	pg_json_put_str(w, "config_sha256", p->config_sha256);
	pg_json_put_str(w, "image_sha256", p->image_sha256);
	pg_json_put_str(w, "nonce", p->nonce);
	pg_json_put_str(w, "log", p->log);
	pg_json_put_str(w, "farm_env", p->farm_env);
	pg_json_put_str(w, "farm", p->farm);
	if (p->exit_status >= 0)
		pg_json_put_int(w, "exit_status", p->exit_status);
	else
		pg_json_put_null(w, "exit_status");
	pg_json_put_bool(w, "cached", p->cached);
	pg_json_close(w);
}

/* The pull-aware KUnit selection: null when none was made. */
static void put_selection(pg_json_writer *w, const pg_report *r)
{
	size_t i;

	if (!r->has_selection) {
		pg_json_put_null(w, "selection");
		return;
	}
	pg_json_open_object(w, "selection");
	pg_json_put_int(w, "paths", (int64_t)r->selection_paths);
	pg_json_put_int(w, "cap", (int64_t)r->selection_cap);
	pg_json_put_str(w, "note", r->selection_note);
	pg_json_open_array(w, "options");
	for (i = 0; i < r->nselected; i++) {
		const pg_selected *s = &r->selected[i];
		const char *p = s->suites;

		pg_json_open_object(w, NULL);
		pg_json_put_str(w, "option", s->option);
		pg_json_put_str(w, "status", pg_selected_status_name(s->status));
		pg_json_put_bool(w, "test", s->test);
		pg_json_put_str(w, "path", s->path);
		pg_json_put_str(w, "source", s->source);
		pg_json_put_str(w, "depends", s->depends);
		pg_json_put_str(w, "reason", s->reason);
		pg_json_open_array(w, "suites");
		while (p && *p) {
			size_t n = strcspn(p, " ");
			char name[80];

			snprintf(name, sizeof(name), "%.*s", (int)(n < 79 ? n : 79), p);
			pg_json_put_str(w, NULL, name);
			p += n + (p[n] == ' ');
		}
		pg_json_close(w);
		pg_json_close(w);
	}
	pg_json_close(w);
	pg_json_close(w);
}

/* The gate's evidence: where the run's logs are, what ran, and the suites on base and merge. */
static void put_evidence(pg_json_writer *w, const pg_report *r)
{
	size_t i;

	pg_json_put_bool(w, "simulated", r->simulated);
	pg_json_put_str(w, "run_dir", r->run_dir);
	pg_json_open_array(w, "provenance");
	for (i = 0; i < r->nprovenance; i++)
		put_provenance(w, &r->provenance[i]);
	pg_json_close(w);
	pg_json_put_str(w, "base_boot", r->base_boot);
	pg_json_open_array(w, "suites");
	for (i = 0; i < r->nsuites; i++) {
		const pg_suite_result *s = &r->suites[i];

		pg_json_open_object(w, NULL);
		pg_json_put_str(w, "name", s->name);
		put_counts(w, "base", s->on_base, &s->base);
		put_counts(w, "merge", s->on_merge, &s->merge);
		pg_json_put_str(w, "verdict", s->verdict);
		pg_json_close(w);
	}
	pg_json_close(w);
	put_selection(w, r);
}

int pg_report_format_json(pg_buf *out, const pg_report *r)
{
	pg_json_writer *w = NULL;
	size_t i;
	int err;

	if ((err = pg_json_writer_new(&w)) < 0)
		return err;
	pg_json_put_int(w, "schema", PG_REPORT_SCHEMA_VERSION);
	pg_json_put_str(w, "tool", "pullgate " PG_VERSION);
	pg_json_put_str(w, "verdict", pg_report_verdict(r) == PG_VERDICT_ACCEPT ? "accept" : "reject");
	pg_json_put_int(w, "errors", (int64_t)pg_report_count(r, PG_SEV_ERROR));
	pg_json_put_int(w, "warnings", (int64_t)pg_report_count(r, PG_SEV_WARNING));
	if ((err = put_summary(w, r)) < 0) {
		pg_json_writer_free(w);
		return err;
	}
	pg_json_put_str(w, "repo", r->repo);
	pg_json_put_str(w, "tag", r->tag);
	pg_json_put_oid(w, "tag_object", &r->tag_object);
	pg_json_put_oid(w, "tag_commit", &r->tag_commit);
	pg_json_put_int(w, "tag_time", r->tag_time);
	pg_json_put_int(w, "tag_offset", r->tag_offset);
	pg_json_put_str(w, "upstream", r->upstream);
	pg_json_put_str(w, "upstream_ref", r->upstream_ref);
	pg_json_put_oid(w, "upstream_tip", &r->upstream_tip);
	pg_json_put_int(w, "commits", (int64_t)r->ncommits);
	pg_json_put_int(w, "merges", (int64_t)r->nmerges);
	pg_json_put_int(w, "upstream_examined", (int64_t)r->upstream_examined);
	if (r->upstream_since) {
		pg_buf since = PG_BUF_INIT;

		if ((err = pg_time_format(&since, r->upstream_since, 0)) < 0) {
			pg_json_writer_free(w);
			return err;
		}
		pg_json_put_str(w, "upstream_window_since", since.ptr);
		pg_buf_release(&since);
	} else {
		pg_json_put_null(w, "upstream_window_since");
	}
	if (r->upstream_index) {
		pg_json_open_object(w, "upstream_index");
		pg_json_put_str(w, "action", r->upstream_index);
		pg_json_put_int(w, "commits", (int64_t)r->upstream_indexed);
		pg_json_put_int(w, "added", (int64_t)r->upstream_index_added);
		pg_json_close(w);
	} else {
		pg_json_put_null(w, "upstream_index");
	}
	pg_json_put_bool(w, "signatures_checked", !r->no_keyring);
	pg_json_open_array(w, "signatures");
	for (i = 0; i < r->nsignatures; i++)
		put_signature(w, &r->signatures[i]);
	pg_json_close(w);
	pg_json_open_array(w, "findings");
	for (i = 0; i < r->nfindings; i++)
		put_finding(w, &r->findings[i]);
	pg_json_close(w);
	pg_json_open_array(w, "notes");
	for (i = 0; i < r->nnotes; i++)
		put_note(w, &r->notes[i]);
	pg_json_close(w);
	put_omitted(w, r);
	if (r->nstages) {
		put_stages(w, r);
		pg_json_put_oid(w, "merge_base", r->has_merge ? &r->merge_base : NULL);
		pg_json_put_oid(w, "merge_commit", r->has_merge ? &r->merge_commit : NULL);
		pg_json_put_bool(w, "approved", r->approved);
		pg_json_put_str(w, "attestation", r->attestation);
		put_evidence(w, r);
	}
	if (r->tlog_evidence) {
		pg_json_open_object(w, "transparency");
		pg_json_put_str(w, "message_id", r->tlog_evidence->message_id);
		pg_json_put_str(w, "date", r->tlog_evidence->date);
		pg_json_put_str(w, "pushed_by", r->tlog_evidence->pushed_by);
		pg_json_put_str(w, "repo", r->tlog_evidence->repo);
		pg_json_put_bool(w, "certified", r->tlog_evidence->certified);
		pg_json_close(w);
	}
	pg_json_put_str(w, "tag_signer", r->tag_signer);
	if ((err = pg_json_write(out, w, PG_JSON_INDENT)) == 0)
		err = pg_buf_putc(out, '\n');
	pg_json_writer_free(w);
	return err;
}
