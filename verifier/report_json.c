/* report_json.c - the report as JSON (docs/report-schema.md), built with jansson. */
#include "verifier/report.h"
#include "common/error.h"
#include "common/json.h"

#include <jansson.h>

static json_t *oid(const pg_oid *id)
{
	char hex[PG_OID_HEXSZ + 1];

	pg_oid_tohex(hex, id);
	return json_string(hex);
}

static json_t *finding_json(const pg_finding *f)
{
	json_t *o = json_object(), *details = json_array();
	bool ok = o && details;
	size_t i;

	if (!ok) {
		json_decref(o);
		json_decref(details);
		return NULL;
	}
	pg_json_set(o, "check", json_string(pg_check_name(f->check)), &ok);
	pg_json_set(o, "severity", json_string(pg_severity_name(f->severity)), &ok);
	pg_json_set(o, "commit", f->has_commit ? oid(&f->commit) : json_null(), &ok);
	pg_json_set(o, "subject", pg_json_str(f->subject), &ok);
	pg_json_set(o, "upstream", f->has_upstream ? oid(&f->upstream) : json_null(), &ok);
	pg_json_set(o, "message", pg_json_str(f->message), &ok);
	for (i = 0; i < f->ndetails && ok; i++) {
		json_t *d = json_object();

		if (!d) {
			ok = false;
			break;
		}
		pg_json_set(d, "field", pg_json_str(f->details[i].field), &ok);
		pg_json_set(d, "pull", pg_json_str(f->details[i].pull), &ok);
		pg_json_set(d, "upstream", pg_json_str(f->details[i].upstream), &ok);
		if (json_array_append_new(details, d) < 0)
			ok = false;
	}
	pg_json_set(o, "details", details, &ok);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *signature_json(const pg_signature_info *s)
{
	json_t *o = json_object(), *emails = json_array();
	bool ok = o && emails;
	size_t i;

	if (!ok) {
		json_decref(o);
		json_decref(emails);
		return NULL;
	}
	pg_json_set(o, "kind", json_string(s->mergetag ? "mergetag" : "tag"), &ok);
	pg_json_set(o, "commit", s->has_commit ? oid(&s->commit) : json_null(), &ok);
	pg_json_set(o, "tag", pg_json_str(s->tag), &ok);
	pg_json_set(o, "tagger", pg_json_str(s->tagger), &ok);
	pg_json_set(o, "status", pg_json_str(s->status), &ok);
	pg_json_set(o, "fingerprint", pg_json_str(s->fingerprint), &ok);
	for (i = 0; i < s->nemails && ok; i++)
		if (json_array_append_new(emails, pg_json_str(s->emails[i])) < 0)
			ok = false;
	pg_json_set(o, "uids", emails, &ok);
	if (!ok) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *stages_json(const pg_report *r)
{
	json_t *a = json_array();
	bool ok = a != NULL;
	size_t i;

	for (i = 0; i < r->nstages && ok; i++) {
		json_t *s = json_object();

		if (!s) {
			ok = false;
			break;
		}
		pg_json_set(s, "name", pg_json_str(r->stages[i].name), &ok);
		pg_json_set(s, "status", json_string(pg_stage_status_name(r->stages[i].status)), &ok);
		pg_json_set(s, "seconds", json_real((double)r->stages[i].elapsed_ms / 1000), &ok);
		pg_json_set(s, "log", pg_json_str(r->stages[i].log), &ok);
		pg_json_set(s, "summary", pg_json_str(r->stages[i].summary), &ok);
		if (json_array_append_new(a, s) < 0)
			ok = false;
	}
	if (!ok) {
		json_decref(a);
		return NULL;
	}
	return a;
}

int pg_report_format_json(pg_buf *out, const pg_report *r)
{
	json_t *root = json_object(), *findings = json_array(), *sigs = json_array();
	bool ok = root && findings && sigs;
	char *text = NULL;
	size_t i;
	int err = 0;

	if (!ok) {
		json_decref(findings);
		json_decref(sigs);
		goto done;
	}
	pg_json_set(root, "schema", json_integer(PG_REPORT_SCHEMA_VERSION), &ok);
	pg_json_set(root, "tool", json_string("pullgate " PG_VERSION), &ok);
	pg_json_set(root, "verdict", json_string(pg_report_verdict(r) == PG_VERDICT_ACCEPT ?
					 "accept" : "reject"), &ok);
	pg_json_set(root, "errors", json_integer((json_int_t)pg_report_count(r, PG_SEV_ERROR)), &ok);
	pg_json_set(root, "warnings", json_integer((json_int_t)pg_report_count(r, PG_SEV_WARNING)), &ok);
	pg_json_set(root, "repo", pg_json_str(r->repo), &ok);
	pg_json_set(root, "tag", pg_json_str(r->tag), &ok);
	pg_json_set(root, "tag_object", oid(&r->tag_object), &ok);
	pg_json_set(root, "tag_commit", oid(&r->tag_commit), &ok);
	pg_json_set(root, "upstream", pg_json_str(r->upstream), &ok);
	pg_json_set(root, "upstream_ref", pg_json_str(r->upstream_ref), &ok);
	pg_json_set(root, "upstream_tip", oid(&r->upstream_tip), &ok);
	pg_json_set(root, "commits", json_integer((json_int_t)r->ncommits), &ok);
	pg_json_set(root, "merges", json_integer((json_int_t)r->nmerges), &ok);
	pg_json_set(root, "upstream_examined", json_integer((json_int_t)r->upstream_examined), &ok);
	for (i = 0; i < r->nsignatures && ok; i++) {
		json_t *s = signature_json(&r->signatures[i]);

		if (!s || json_array_append_new(sigs, s) < 0)
			ok = false;
	}
	pg_json_set(root, "signatures", sigs, &ok);
	for (i = 0; i < r->nfindings && ok; i++) {
		json_t *f = finding_json(&r->findings[i]);

		if (!f || json_array_append_new(findings, f) < 0)
			ok = false;
	}
	pg_json_set(root, "findings", findings, &ok);
	if (ok && r->nstages)
		pg_json_set(root, "stages", stages_json(r), &ok);
	if (ok && r->nstages) {
		pg_json_set(root, "merge_base", r->has_merge ? oid(&r->merge_base) : json_null(), &ok);
		pg_json_set(root, "merge_commit", r->has_merge ? oid(&r->merge_commit) : json_null(), &ok);
		pg_json_set(root, "approved", json_boolean(r->approved), &ok);
	}
	if (ok && (text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER)))
		err = pg_buf_puts(out, text);
	else
		ok = false;
done:
	free(text);
	json_decref(root);
	if (!ok && err == 0)
		err = pg_error_oom();
	return err < 0 ? err : pg_buf_putc(out, '\n');
}
