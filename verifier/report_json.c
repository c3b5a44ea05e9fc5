/* report_json.c - the report as JSON (docs/report-schema.md), through the JSON writer. */
#include "verifier/report.h"
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
	pg_json_close(w);
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

/* The findings counted past the policy's cap, by check: "omitted". */
static void put_omitted(pg_json_writer *w, const pg_report *r)
{
	size_t i;

	pg_json_open_array(w, "omitted");
	for (i = 0; i < PG_CHECK__COUNT; i++) {
		size_t e = r->omitted[i][PG_SEV_ERROR], n = r->omitted[i][PG_SEV_WARNING];

		if (!e && !n)
			continue;
		pg_json_open_object(w, NULL);
		pg_json_put_str(w, "check", pg_check_name((enum pg_check_id)i));
		pg_json_put_int(w, "count", (int64_t)(e + n));
		pg_json_put_int(w, "errors", (int64_t)e);
		pg_json_put_int(w, "warnings", (int64_t)n);
		pg_json_close(w);
	}
	pg_json_close(w);
	pg_json_put_int(w, "max_findings_per_check", (int64_t)r->max_per_check);
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
	pg_json_put_str(w, "repo", r->repo);
	pg_json_put_str(w, "tag", r->tag);
	pg_json_put_oid(w, "tag_object", &r->tag_object);
	pg_json_put_oid(w, "tag_commit", &r->tag_commit);
	pg_json_put_str(w, "upstream", r->upstream);
	pg_json_put_str(w, "upstream_ref", r->upstream_ref);
	pg_json_put_oid(w, "upstream_tip", &r->upstream_tip);
	pg_json_put_int(w, "commits", (int64_t)r->ncommits);
	pg_json_put_int(w, "merges", (int64_t)r->nmerges);
	pg_json_put_int(w, "upstream_examined", (int64_t)r->upstream_examined);
	pg_json_open_array(w, "signatures");
	for (i = 0; i < r->nsignatures; i++)
		put_signature(w, &r->signatures[i]);
	pg_json_close(w);
	pg_json_open_array(w, "findings");
	for (i = 0; i < r->nfindings; i++)
		put_finding(w, &r->findings[i]);
	pg_json_close(w);
	put_omitted(w, r);
	if (r->nstages) {
		put_stages(w, r);
		pg_json_put_oid(w, "merge_base", r->has_merge ? &r->merge_base : NULL);
		pg_json_put_oid(w, "merge_commit", r->has_merge ? &r->merge_commit : NULL);
		pg_json_put_bool(w, "approved", r->approved);
	}
	if ((err = pg_json_write(out, w, PG_JSON_INDENT)) == 0)
		err = pg_buf_putc(out, '\n');
	pg_json_writer_free(w);
	return err;
}
