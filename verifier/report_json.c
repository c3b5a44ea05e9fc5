/* report_json.c - the report as JSON (docs/report-schema.md), built with jansson. */
#include "verifier/report.h"
#include "common/error.h"
#include "common/sanitize.h"

#include <jansson.h>

/* A JSON string from repository bytes: made valid UTF-8 first. */
static json_t *str(const char *s)
{
	pg_buf b = PG_BUF_INIT;
	json_t *j;

	if (!s)
		return json_null();
	if (pg_sanitize_utf8(&b, s, strlen(s)) < 0)
		return NULL;
	j = json_stringn(b.ptr, b.len);
	pg_buf_release(&b);
	return j;
}

static json_t *oid(const pg_oid *id)
{
	char hex[PG_OID_HEXSZ + 1];

	pg_oid_tohex(hex, id);
	return json_string(hex);
}

/* json_object_set_new that remembers a failure (NULL value or OOM). */
static void set(json_t *obj, const char *key, json_t *value, bool *ok)
{
	if (!value || json_object_set_new(obj, key, value) < 0)
		*ok = false;
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
	set(o, "check", json_string(pg_check_name(f->check)), &ok);
	set(o, "severity", json_string(pg_severity_name(f->severity)), &ok);
	set(o, "commit", f->has_commit ? oid(&f->commit) : json_null(), &ok);
	set(o, "subject", str(f->subject), &ok);
	set(o, "upstream", f->has_upstream ? oid(&f->upstream) : json_null(), &ok);
	set(o, "message", str(f->message), &ok);
	for (i = 0; i < f->ndetails && ok; i++) {
		json_t *d = json_object();

		if (!d) {
			ok = false;
			break;
		}
		set(d, "field", str(f->details[i].field), &ok);
		set(d, "pull", str(f->details[i].pull), &ok);
		set(d, "upstream", str(f->details[i].upstream), &ok);
		if (json_array_append_new(details, d) < 0)
			ok = false;
	}
	set(o, "details", details, &ok);
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
	set(o, "kind", json_string(s->mergetag ? "mergetag" : "tag"), &ok);
	set(o, "commit", s->has_commit ? oid(&s->commit) : json_null(), &ok);
	set(o, "tag", str(s->tag), &ok);
	set(o, "tagger", str(s->tagger), &ok);
	set(o, "status", str(s->status), &ok);
	set(o, "fingerprint", str(s->fingerprint), &ok);
	for (i = 0; i < s->nemails && ok; i++)
		if (json_array_append_new(emails, str(s->emails[i])) < 0)
			ok = false;
	set(o, "uids", emails, &ok);
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
		set(s, "name", str(r->stages[i].name), &ok);
		set(s, "status", json_string(pg_stage_status_name(r->stages[i].status)), &ok);
		set(s, "seconds", json_real((double)r->stages[i].elapsed_ms / 1000), &ok);
		set(s, "log", str(r->stages[i].log), &ok);
		set(s, "summary", str(r->stages[i].summary), &ok);
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
	set(root, "schema", json_integer(PG_REPORT_SCHEMA_VERSION), &ok);
	set(root, "tool", json_string("pullgate " PG_VERSION), &ok);
	set(root, "verdict", json_string(pg_report_verdict(r) == PG_VERDICT_ACCEPT ?
					 "accept" : "reject"), &ok);
	set(root, "errors", json_integer((json_int_t)pg_report_count(r, PG_SEV_ERROR)), &ok);
	set(root, "warnings", json_integer((json_int_t)pg_report_count(r, PG_SEV_WARNING)), &ok);
	set(root, "repo", str(r->repo), &ok);
	set(root, "tag", str(r->tag), &ok);
	set(root, "tag_object", oid(&r->tag_object), &ok);
	set(root, "tag_commit", oid(&r->tag_commit), &ok);
	set(root, "upstream", str(r->upstream), &ok);
	set(root, "upstream_ref", str(r->upstream_ref), &ok);
	set(root, "upstream_tip", oid(&r->upstream_tip), &ok);
	set(root, "commits", json_integer((json_int_t)r->ncommits), &ok);
	set(root, "merges", json_integer((json_int_t)r->nmerges), &ok);
	set(root, "upstream_examined", json_integer((json_int_t)r->upstream_examined), &ok);
	for (i = 0; i < r->nsignatures && ok; i++) {
		json_t *s = signature_json(&r->signatures[i]);

		if (!s || json_array_append_new(sigs, s) < 0)
			ok = false;
	}
	set(root, "signatures", sigs, &ok);
	for (i = 0; i < r->nfindings && ok; i++) {
		json_t *f = finding_json(&r->findings[i]);

		if (!f || json_array_append_new(findings, f) < 0)
			ok = false;
	}
	set(root, "findings", findings, &ok);
	if (ok && r->nstages)
		set(root, "stages", stages_json(r), &ok);
	if (ok && r->nstages) {
		set(root, "merge_base", r->has_merge ? oid(&r->merge_base) : json_null(), &ok);
		set(root, "merge_commit", r->has_merge ? oid(&r->merge_commit) : json_null(), &ok);
		set(root, "approved", json_boolean(r->approved), &ok);
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
