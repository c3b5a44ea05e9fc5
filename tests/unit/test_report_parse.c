/* test_report_parse.c - unit tests for reading a report back from its JSON: every member, byte for byte, and what is refused. */
#include "tests/unit/unit.h"
#include "tests/unit/run.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/json.h"
#include "report/report.h"
#include "verifier/verify.h"

#include <sys/mman.h>

static pg_commit *commit(unsigned char id, const char *subject)
{
	static const char head[] = "tree 16f9d75b755ac2e271285acb0fc12f5d8bff4697\n"
				   "author A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\n";
	pg_buf text = PG_BUF_INIT;
	pg_commit *c = NULL;

	assert_int_equal(pg_buf_printf(&text, "%s%s\n", head, subject), 0);
	assert_int_equal(pg_commit_parse(&c, NULL, text.ptr, text.len), 0);
	memset(&c->id, 0, sizeof(c->id));
	c->id.id[0] = id;
	c->id.id[19] = 0xab;
	pg_buf_release(&text);
	return c;
}

static pg_oid oid(unsigned char b)
{
	pg_oid o;

	memset(&o, b, sizeof(o));
	return o;
}

/*
 * The property: the JSON of the report read back from r's JSON is r's JSON,
 * byte for byte, and the verdict and counts are r's.  The parsed report is
 * returned for more checks (the caller frees it).
 */
static pg_report *round_trip(const pg_report *r)
{
	pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT;
	pg_report *p = NULL;
	enum pg_severity sev;

	assert_int_equal(pg_report_format_json(&a, r), 0);
	if (pg_report_parse_json(&p, a.ptr, a.len) < 0)
		fail_msg("%s\n%s", pg_error_last(), a.ptr);
	assert_non_null(p);
	assert_int_equal(pg_report_format_json(&b, p), 0);
	assert_int_equal(a.len, b.len);
	assert_string_equal(a.ptr, b.ptr);
	assert_int_equal(pg_report_verdict(p), pg_report_verdict(r));
	for (sev = PG_SEV_WARNING; sev <= PG_SEV_ERROR; sev++) {
		assert_int_equal(pg_report_count(p, sev), pg_report_count(r, sev));
		assert_int_equal(pg_report_count_roots(p, sev), pg_report_count_roots(r, sev));
	}
	assert_int_equal(pg_report_count_implied(p), pg_report_count_implied(r));
	pg_buf_release(&a);
	pg_buf_release(&b);
	return p;
}

static void test_empty_verify_report(void **state)
{
	pg_report *r = NULL, *p;

	(void)state;
	assert_int_equal(pg_report_new(&r), 0);
	p = round_trip(r);
	assert_null(p->repo);
	assert_false(p->has_summary);
	assert_null(p->upstream_index);
	assert_int_equal(p->nstages, 0);
	pg_report_free(p);
	pg_report_free(r);
}

/* What a repository can put in a string: quotes, escapes, control bytes, bytes that are no UTF-8. */
static const char hostile[] = "say \"hi\" \\ back\\slash\t\n\r\x01\x1b[31mred\x7f \xff\xfe\xc3 "
			      "caf\xc3\xa9 \xe2\x80\xae" "bidi \xf0\x9f\x90\xa7";

/*
 * A verify report with every member, built as the verifier builds it:
 * three rewritten copies under a cap of 2 per check (the third counted,
 * not listed), what each rewrite did (listed, implied by its copy's
 * finding; on the unlisted copy, implied_unlisted; past the cap, omitted
 * and implied), a root cause of its own, notes and signatures.
 */
static pg_report *full_verify_report(void)
{
	pg_report *r = NULL;
	pg_finding *f = NULL;
	pg_commit *c[4];
	pg_oid up = oid(0x77);
	const char *emails[] = { "kees@kernel.org", hostile, NULL };
	/* the report copies what it is given */
	pg_signature_info sig = { .mergetag = false, .tag = (char *)"v1",
				  .tagger = (char *)"Kees <kees@kernel.org>", .status = (char *)"good",
				  .fingerprint = (char *)"B0F873150B3E6E4901AF0974A6A4F7090CD948D5",
				  .emails = (char **)emails, .nemails = 3 };
	size_t i;

	assert_int_equal(pg_report_new(&r), 0);
	for (i = 0; i < 4; i++)
		c[i] = commit((unsigned char)(i + 1), i == 3 ? hostile : "subsys: a copy");
	r->max_per_check = 2;
	assert_non_null(r->repo = pg_strdup("/srv/git/kees.git"));
	assert_non_null(r->policy_sha256 = pg_strdup("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
	assert_non_null(r->tag = pg_strdup("refs/tags/hardening-v6.16-rc1-fix1"));
	assert_non_null(r->upstream = pg_strdup(hostile));
	assert_non_null(r->upstream_ref = pg_strdup("refs/heads/master"));
	r->tag_object = oid(0x11);
	r->tag_commit = oid(0x22);
	r->upstream_tip = oid(0x33);
	r->tag_time = 1748600000;
	r->tag_offset = -420;
	r->ncommits = 39;
	r->nmerges = 7;
	r->upstream_examined = 1234;
	r->upstream_since = 1748000000;
	r->upstream_index = "built (rewritten)";
	r->upstream_indexed = 1000000;
	r->upstream_index_added = 17;
	assert_int_equal(pg_report_add_signature(r, &sig), 0);
	sig.mergetag = true;
	sig.has_commit = true;
	sig.commit = oid(0x44);
	sig.tagger = NULL;
	sig.status = (char *)"no-key";
	sig.fingerprint = NULL;
	sig.nemails = 0;
	assert_int_equal(pg_report_add_signature(r, &sig), 0);

	for (i = 0; i < 3; i++) {
		assert_int_equal(pg_report_mark_copy(r, &c[i]->id, PG_SEV_ERROR), 0);
		assert_int_equal(pg_report_add(&f, r, PG_CHECK_REWRITTEN_UPSTREAM, PG_SEV_ERROR, c[i],
					       "rewritten copy of upstream commit %zu", i), 0);
		if (!f)
			continue;
		f->has_upstream = true;
		f->upstream = up;
		assert_int_equal(pg_finding_detail(f, "mergetag", "(none)", hostile), 0);
		assert_int_equal(pg_finding_detail(f, "parents", NULL, "abc"), 0);
		assert_int_equal(pg_finding_detail(f, "trailer-added", "Reviewed-by: x", NULL), 0);
	}
	/* what the rewrite did: the third, on the unlisted copy, past the cap */
	for (i = 0; i < 3; i++)
		assert_int_equal(pg_report_add(NULL, r, PG_CHECK_FOREIGN_COMMITTER, PG_SEV_WARNING,
					       c[i], "committed by %s", hostile), 0);
	assert_int_equal(pg_report_add(NULL, r, PG_CHECK_SIGNOFF, PG_SEV_WARNING, c[2], "no sign-off"), 0);
	/* a root cause of its own, and an error past the cap of its check */
	assert_int_equal(pg_report_add(&f, r, PG_CHECK_SIGNOFF, PG_SEV_ERROR, c[3], "no sign-off"), 0);
	assert_int_equal(pg_finding_detailf(f, "author", "%s", hostile), 0);
	assert_int_equal(pg_report_add(NULL, r, PG_CHECK_SIGNOFF, PG_SEV_ERROR, c[3], "again"), 0);
	assert_int_equal(pg_report_add(NULL, r, PG_CHECK_RANGE_SIZE, PG_SEV_WARNING, NULL,
				       "the pull is large"), 0);
	/* the story's links (verifier/story.c) */
	r->findings[2].implied_by = 1;
	r->findings[3].implied_by = 2;
	r->findings[4].implied_unlisted = true;
	assert_int_equal(r->omitted_implied[PG_CHECK_FOREIGN_COMMITTER][PG_SEV_WARNING], 1);

	assert_int_equal(pg_report_add_note(r, PG_CHECK_REWRITTEN_UPSTREAM, c[3], &up,
					    "re-applies an upstream change: %s", hostile), 0);
	assert_int_equal(pg_report_add_note(r, PG_CHECK_LABELLED_BACKPORT, NULL, NULL, "a note"), 0);
	r->has_summary = true;
	r->summary = (pg_summary){ .rewritten = 3, .rewritten_merges = 1, .dropped_mergetags = 1,
				   .quoted_ids = 2, .reapplied = 1, .own = 36 };
	assert_non_null(r->tag_signer = pg_strdup("B0F873150B3E6E4901AF0974A6A4F7090CD948D5"));
	assert_int_equal(pg_report_set_tlog_evidence(r, "<1.2@gitolite.kernel.org>", NULL, hostile,
						     "pub/scm/linux/kernel/git/kees/linux", true), 0);
	for (i = 0; i < 4; i++)
		pg_commit_free(c[i]);
	return r;
}

static void test_every_verify_member(void **state)
{
	pg_report *r = full_verify_report(), *p;

	(void)state;
	assert_int_equal(pg_report_count_implied(r), 4);
	p = round_trip(r);
	assert_int_equal(p->tag_time, r->tag_time);
	assert_int_equal(p->tag_offset, -420);
	assert_int_equal(p->upstream_since, r->upstream_since);
	assert_string_equal(p->upstream_index, "built (rewritten)");
	assert_int_equal(p->nfindings, r->nfindings);
	assert_int_equal(p->findings[3].implied_by, 2);
	assert_true(p->findings[4].implied_unlisted);
	assert_int_equal(memcmp(p->omitted, r->omitted, sizeof(r->omitted)), 0);
	assert_int_equal(memcmp(p->omitted_implied, r->omitted_implied, sizeof(r->omitted_implied)), 0);
	assert_int_equal(memcmp(p->kept, r->kept, sizeof(r->kept)), 0);
	/* the listed copies are known again; the one the cap left unlisted is not */
	assert_int_equal(p->ncopies, 2);
	assert_int_equal(pg_report_copy_severity(p, &r->findings[0].commit), PG_SEV_ERROR + 1);
	assert_int_equal(p->nsignatures, 2);
	assert_int_equal(p->signatures[0].nemails, 3);
	assert_null(p->signatures[0].emails[2]);
	assert_null(p->signatures[1].tagger);
	assert_false(p->no_keyring);
	assert_int_equal(p->max_per_check, 2);
	/* the transparency log's evidence, the record's own strings kept as they are */
	assert_non_null(p->tlog_evidence);
	assert_string_equal(p->tlog_evidence->message_id, "<1.2@gitolite.kernel.org>");
	assert_null(p->tlog_evidence->date);
	/* JSON carries the hostile account's text (its invalid UTF-8 replaced) */
	assert_non_null(strstr(p->tlog_evidence->pushed_by, "say \"hi\" \\ back"));
	assert_string_equal(p->tlog_evidence->repo, "pub/scm/linux/kernel/git/kees/linux");
	assert_true(p->tlog_evidence->certified);
	pg_report_free(p);

	/* a report made further from the parsed one caps and counts as the original does */
	r->no_keyring = true;
	r->upstream_index = NULL;
	r->has_summary = false;
	p = round_trip(r);
	assert_true(p->no_keyring);
	assert_int_equal(pg_report_add(NULL, p, PG_CHECK_RANGE_SIZE, PG_SEV_ERROR, NULL, "x"), 0);
	assert_int_equal(pg_report_add(NULL, r, PG_CHECK_RANGE_SIZE, PG_SEV_ERROR, NULL, "x"), 0);
	assert_int_equal(pg_report_add(NULL, p, PG_CHECK_RANGE_SIZE, PG_SEV_ERROR, NULL, "y"), 0);
	assert_int_equal(pg_report_add(NULL, r, PG_CHECK_RANGE_SIZE, PG_SEV_ERROR, NULL, "y"), 0);
	assert_int_equal(p->nfindings, r->nfindings);
	assert_int_equal(pg_report_omitted(p, PG_CHECK_RANGE_SIZE), 1);
	pg_report_free(round_trip(p));
	pg_report_free(p);
	pg_report_free(r);
}

/* Each of the identity index's actions comes back as the verifier's string. */
static void test_index_actions_and_dates(void **state)
{
	static const char *const actions[] = {
		"current", "extended", "built (new)", "built (rewritten)", "built (key)",
		"built (graph)", "built (damaged)",
	};
	/* the epoch's next second, before it, a five-digit year, and past gmtime's range ("@T") */
	static const int64_t since[] = {
		1, -1, -12345678901, 253402300800, (int64_t)1 << 62, -((int64_t)1 << 62),
	};
	pg_report *r = NULL, *p;
	size_t i;

	(void)state;
	assert_int_equal(pg_report_new(&r), 0);
	for (i = 0; i < PG_ARRAY_SIZE(actions); i++) {
		r->upstream_index = actions[i];
		r->upstream_indexed = i;
		p = round_trip(r);
		assert_string_equal(p->upstream_index, actions[i]);
		pg_report_free(p);
	}
	for (i = 0; i < PG_ARRAY_SIZE(since); i++) {
		r->upstream_since = since[i];
		p = round_trip(r);
		assert_int_equal(p->upstream_since, since[i]);
		pg_report_free(p);
	}
	pg_report_free(r);
}

/* A gate report: stages of each status, provenance, suites on base and merge, the selection. */
static pg_report *full_gate_report(void)
{
	static const uint64_t ms[] = { 0, 1, 999, 1234567, 86400123 };
	pg_report *r = full_verify_report();
	pg_stage *s = NULL;
	pg_provenance *pv = NULL;
	pg_selected *sel = NULL;
	pg_suite_counts base = { 10, 1, 2, 0 }, merge = { 9, 2, 2, 1 };
	unsigned k;

	for (k = 0; k <= PG_STAGE_WAITING; k++) {
		assert_int_equal(pg_report_add_stage(&s, r, k == 0 ? "verify" : hostile), 0);
		if (k % 2)
			assert_int_equal(pg_stage_set(s, (enum pg_stage_status)k, "/logs/x.log", NULL), 0);
		else
			assert_int_equal(pg_stage_set(s, (enum pg_stage_status)k, NULL, "%s", hostile), 0);
		s->elapsed_ms = ms[k];
	}
	r->has_merge = true;
	r->merge_base = oid(0x55);
	r->merge_commit = oid(0x66);
	r->approved = true;
	assert_non_null(r->attestation = pg_strdup("signed by key ABC"));
	assert_non_null(r->run_dir = pg_strdup("/home/pg/logs/kees/run-3"));
	assert_non_null(r->base_boot = pg_strdup(hostile));
	assert_int_equal(pg_report_add_provenance(&pv, r, "build"), 0);
	assert_int_equal(pg_provenance_add_file(r, pv, "/usr/share/pullgate/build.sh",
						"ab12", true), 0);
	assert_int_equal(pg_provenance_set(&pv->tree, "0123456789abcdef0123456789abcdef01234567"), 0);
	assert_int_equal(pg_provenance_set(&pv->toolchain, hostile), 0);
	assert_int_equal(pg_provenance_set(&pv->farm_env, "061fbd5764d1c3a1c1adf83ba8239f89: "
					   "aarch64-linux-gnu-gcc 12.2.0"), 0);
	assert_int_equal(pg_provenance_set(&pv->farm, hostile), 0);
	pv->exit_status = 0;
	assert_int_equal(pg_report_add_provenance(&pv, r, "boot"), 0);
	assert_int_equal(pg_provenance_add_file(r, pv, "tests/fakes/boot.sh", NULL, false), 0);
	assert_int_equal(pg_provenance_set(&pv->nonce, "n0nce"), 0);
	pv->exit_status = 124;
	pv->cached = true;
	assert_int_equal(pg_report_add_provenance(&pv, r, "base-boot"), 0);
	assert_true(r->simulated);
	assert_int_equal(pg_report_add_suite(r, "ext4_inode", &base, &merge, "new-failures"), 0);
	assert_int_equal(pg_report_add_suite(r, "only_base", &base, NULL, "vanished"), 0);
	assert_int_equal(pg_report_add_suite(r, "#3", NULL, &merge, "added"), 0);
	assert_int_equal(pg_report_add_suite(r, hostile, NULL, NULL, "ok"), 0);
	for (k = 0; k <= PG_SELECTED_REFUSED; k++) {
		assert_int_equal(pg_report_add_selected(&sel, r, k == PG_SELECTED_REFUSED ? hostile :
							"CONFIG_EXT4_KUNIT_TESTS", k % 2 ? NULL : "fs/ext4/inode.c",
							k % 3 ? NULL : "fs/ext4/.kunitconfig", k % 2,
							(enum pg_selected_status)k), 0);
		if (k % 2)
			assert_int_equal(pg_provenance_set(&sel->suites, k == 1 ? "ext4_inode" :
							   "a-b c.d e_f"), 0);
		if (k % 2 == 0)
			assert_int_equal(pg_provenance_set(&sel->reason, hostile), 0);
		if (k == 2)
			assert_int_equal(pg_provenance_set(&sel->depends, "EXT4_FS && KUNIT"), 0);
	}
	r->selection_paths = 12;
	r->selection_cap = 8;
	assert_int_equal(pg_provenance_set(&r->selection_note, "2 KUnit test options added"), 0);
	return r;
}

static void test_every_gate_member(void **state)
{
	pg_report *r = full_gate_report(), *p;
	size_t i;

	(void)state;
	p = round_trip(r);
	assert_int_equal(p->nstages, 5);
	for (i = 0; i < 5; i++) {
		assert_int_equal(p->stages[i].status, r->stages[i].status);
		assert_int_equal(p->stages[i].elapsed_ms, r->stages[i].elapsed_ms);
	}
	assert_true(p->has_merge);
	assert_true(p->approved);
	assert_true(p->simulated);
	assert_string_equal(p->provenance[0].farm_env, "061fbd5764d1c3a1c1adf83ba8239f89: "
			    "aarch64-linux-gnu-gcc 12.2.0");
	/* written as valid UTF-8, and the same JSON again (round_trip) */
	assert_non_null(p->provenance[0].farm);
	assert_non_null(strstr(p->provenance[0].farm, "say \"hi\" \\ back\\slash"));
	/* a build without the farm, and the boots: neither */
	assert_null(p->provenance[1].farm_env);
	assert_null(p->provenance[1].farm);
	assert_int_equal(p->provenance[1].exit_status, 124);
	assert_int_equal(p->provenance[2].exit_status, -1);
	assert_false(p->suites[2].on_base);
	assert_true(p->suites[2].on_merge);
	assert_int_equal(p->suites[0].merge.crashed, 1);
	assert_true(p->has_selection);
	assert_int_equal(p->nselected, PG_SELECTED_REFUSED + 1);
	assert_string_equal(p->selected[3].suites, "a-b c.d e_f");
	assert_null(p->selected[0].suites);
	assert_int_equal(p->selection_cap, 8);
	pg_report_free(p);

	/* a run stopped before the merge and the selection */
	r->has_merge = false;
	r->has_selection = false;
	pg_report_free(round_trip(r));
	pg_report_free(r);
}

/* A stage's seconds are milliseconds / 1000 as a real: each comes back to the millisecond. */
static void test_stage_seconds(void **state)
{
	pg_report *r = NULL, *p;
	pg_stage *s = NULL;
	uint64_t ms;

	(void)state;
	assert_int_equal(pg_report_new(&r), 0);
	assert_int_equal(pg_report_add_stage(&s, r, "build"), 0);
	for (ms = 0; ms < 200000; ms += 7) {
		r->stages[0].elapsed_ms = ms * 9973;
		p = round_trip(r);
		assert_int_equal(p->stages[0].elapsed_ms, ms * 9973);
		pg_report_free(p);
		if (ms > 1000)
			ms += ms / 3;
	}
	pg_report_free(r);
}

/* --- refusals ---------------------------------------------------------------------- */

/* A small report's JSON: a rewritten copy (error) and a foreign committer (warning). */
static char *small_json(void)
{
	pg_report *r = NULL;
	pg_commit *c = commit(1, "subsys: fix");
	pg_buf out = PG_BUF_INIT;

	assert_int_equal(pg_report_new(&r), 0);
	assert_int_equal(pg_report_add(NULL, r, PG_CHECK_REWRITTEN_UPSTREAM, PG_SEV_ERROR, c, "copy"), 0);
	assert_int_equal(pg_report_add(NULL, r, PG_CHECK_FOREIGN_COMMITTER, PG_SEV_WARNING, c,
				       "foreign"), 0);
	r->tag_commit = oid(0x22);
	assert_int_equal(pg_report_format_json(&out, r), 0);
	pg_report_free(r);
	pg_commit_free(c);
	return pg_buf_detach(&out);
}

/* text with the first occurrence of from replaced by to */
static char *replaced(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	pg_buf b = PG_BUF_INIT;

	assert_non_null(at);
	assert_int_equal(pg_buf_put(&b, text, (size_t)(at - text)), 0);
	assert_int_equal(pg_buf_puts(&b, to), 0);
	assert_int_equal(pg_buf_puts(&b, at + strlen(from)), 0);
	return pg_buf_detach(&b);
}

/* text with member key of the root replaced by value: JSON, a "string" without escapes, or a number */
static char *with_member(const char *text, const char *key, const char *value)
{
	pg_json_writer *w = NULL;
	pg_buf b = PG_BUF_INIT;
	char inner[128];

	assert_int_equal(pg_json_writer_from(&w, text, strlen(text)), 0);
	if (*value == '{' || *value == '[') {
		pg_json_put_text(w, key, value);
	} else if (*value == '"') {
		snprintf(inner, sizeof(inner), "%.*s", (int)strlen(value) - 2, value + 1);
		pg_json_put_str(w, key, inner);
	} else if (!strcmp(value, "true")) {
		pg_json_put_bool(w, key, true);
	} else {
		pg_json_put_int(w, key, strtoll(value, NULL, 10));
	}
	assert_int_equal(pg_json_write(&b, w, PG_JSON_INDENT), 0);
	pg_json_writer_free(w);
	return pg_buf_detach(&b);
}

/* text is refused with code, and a message that starts with want; nothing comes out. */
static void refused_n(char *text, size_t len, int code, const char *want)
{
	pg_report *p = (pg_report *)&p; /* not NULL: the call must clear it */

	assert_int_equal(pg_report_parse_json(&p, text, len), code);
	assert_null(p);
	if (strncmp(pg_error_last(), want, strlen(want)))
		fail_msg("got '%s', want '%s...'", pg_error_last(), want);
	free(text);
}

static void refused(char *text, const char *want)
{
	refused_n(text, strlen(text), PG_EINVALID, want);
}

static void test_refusals(void **state)
{
	char *ok = small_json(), *deep;
	pg_report *p = NULL;
	size_t i;

	(void)state;
	assert_int_equal(pg_report_parse_json(&p, ok, strlen(ok)), 0);
	pg_report_free(p);
	refused(replaced(ok, "\"schema\": 1,", "\"schema\": 99,"),
		"report JSON: schema: version 99, not 1");
	refused(replaced(ok, "\"findings\":", "\"findingz\":"), "report JSON: findings: missing");
	refused(with_member(ok, "findings", "{\"a\": 1}"),
		"report JSON: findings: an object, not an array");
	refused(replaced(ok, "\"check\": \"foreign-committer\"", "\"check\": \"foreign\""),
		"report JSON: findings[1].check: 'foreign' is not a check");
	refused(replaced(ok, "\"severity\": \"warning\"", "\"severity\": \"fatal\""),
		"report JSON: findings[1].severity: 'fatal' is not a severity");
	refused(replaced(ok, "\"severity\": \"warning\"", "\"severity\": \"off\""),
		"report JSON: findings[1].severity: 'off' is not a severity");
	refused(replaced(ok, "2222222222222222222222222222222222222222",
			 "222222222222222222222222222222222222222"),
		"report JSON: tag_commit: '222222222222222222222222222222222222222' is not a commit id");
	refused(replaced(ok, "2222222222222222222222222222222222222222",
			 "222222222222222222222222222222222222222A"),
		"report JSON: tag_commit: '222222222222222222222222222222222222222A' is not a commit id");
	refused(with_member(ok, "errors", "2"),
		"report JSON: errors: 2, but the findings and the omitted ones have 1");
	refused(with_member(ok, "warnings", "-1"), "report JSON: warnings: -1 is out of range");
	refused(with_member(ok, "verdict", "\"accept\""),
		"report JSON: verdict: 'accept' is not reject");
	refused(replaced(ok, "\"implied_by\": null", "\"implied_by\": 0"),
		"report JSON: findings[0].implied_by: 0 is not another finding's index");
	refused(replaced(ok, "\"implied_by\": null", "\"implied_by\": 2"),
		"report JSON: findings[0].implied_by: 2 is not another finding's index");
	refused(replaced(ok, "\"implied_by\": null", "\"implied_by\": null, \"implied_unlisted\": false"),
		"report JSON: findings[0].implied_unlisted: present, and not true");
	refused(with_member(ok, "summary", "5"),
		"report JSON: summary: an integer, not an object or null");
	refused(with_member(ok, "upstream_window_since", "\"2025-02-30 00:00:00 +0000\""),
		"report JSON: upstream_window_since: '2025-02-30 00:00:00 +0000' is not a date");
	refused(with_member(ok, "upstream_index", "{\"action\": \"stolen\", \"commits\": 1, \"added\": 0}"),
		"report JSON: upstream_index.action: 'stolen' is not an identity index action");
	refused(with_member(ok, "omitted", "[{\"check\": \"signoff\", \"count\": 3, \"errors\": 1, "
			    "\"warnings\": 1}]"), "report JSON: omitted[0].count: 3, but errors + warnings are 2");
	refused(with_member(ok, "omitted", "[{\"check\": \"signoff\", \"count\": 1, \"errors\": 1, "
			    "\"warnings\": 0}]"), "report JSON: omitted: 'signoff' findings omitted with 0 listed");
	refused(with_member(ok, "omitted_implied", "[{\"check\": \"signoff\", \"errors\": 1, "
			    "\"warnings\": 0}]"), "report JSON: omitted_implied[0]: more than \"omitted\"");
	refused(with_member(ok, "approved", "true"), "report JSON: approved: present in a report without stages");
	refused(with_member(ok, "stages", "[]"), "report JSON: stages: empty");
	refused(with_member(ok, "policy_sha256", "\"e3b0\""), "report JSON: policy_sha256: 'e3b0' is not a SHA-256");
	/* the evidence is absent or whole: no member missing or of another type */
	refused(with_member(ok, "transparency", "5"),
		"report JSON: transparency: an integer, not an object");
	refused(with_member(ok, "transparency", "{\"message_id\": null, \"date\": null, "
			    "\"repo\": \"r\", \"certified\": false}"),
		"report JSON: transparency.pushed_by: missing");
	refused(with_member(ok, "transparency", "{\"message_id\": 1, \"date\": null, "
			    "\"pushed_by\": \"k\", \"repo\": \"r\", \"certified\": false}"),
		"report JSON: transparency.message_id: an integer, not a string or null");
	refused(with_member(ok, "transparency", "{\"message_id\": null, \"date\": null, "
			    "\"pushed_by\": \"k\", \"repo\": \"r\", \"certified\": \"yes\"}"),
		"report JSON: transparency.certified: a string, not a boolean");
	/* a long hostile string is quoted short, its escape sequence dropped */
	refused(replaced(ok, "\"severity\": \"warning\"", "\"severity\": \"\\u001b[31m0123456789012345678901234567890123456789\""),
		"report JSON: findings[1].severity: '01234567890123456789012345678901234...' is not a severity");

	/* not a report: cut short, not JSON at all, an array, nested past the reader's depth */
	refused_n(strdup(ok), strlen(ok) / 2, PG_EINVALID, "report JSON: line ");
	refused(strdup("no JSON here"), "report JSON: line 1 column 2: ");
	refused(strdup("[1, 2]"), "report JSON: the document is an array, not an object");
	deep = calloc(1, 200001);
	assert_non_null(deep);
	for (i = 0; i < 100000; i++) {
		deep[i] = '[';
		deep[200000 - 1 - i] = ']';
	}
	refused(deep, "report JSON: line 1 column ");
	free(ok);
}

/* Over PG_REPORT_JSON_MAX nothing is read: the text lies in pages no one may read. */
static void test_too_big(void **state)
{
	size_t len = (size_t)300 << 20;
	void *text = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	pg_report *p = NULL;

	(void)state;
	assert_true(text != MAP_FAILED);
	assert_int_equal(pg_report_parse_json(&p, text, len), PG_ETOOBIG);
	assert_null(p);
	assert_non_null(strstr(pg_error_last(), "more than a report's"));
	assert_int_equal(pg_report_parse_json(&p, text, PG_REPORT_JSON_MAX + 1), PG_ETOOBIG);
	munmap(text, len);
}

/* --- real reports from the real verifier ------------------------------------------ */

typedef struct incident {
	char dir[64];
	char fx[96];
	char fpr[41];
} incident;

static int incident_setup(void **state)
{
	incident *x = calloc(1, sizeof(*x));
	const char *make[] = { "fixtures/incident.sh", x ? x->fx : NULL, NULL };
	pg_buf env = PG_BUF_INIT, path = PG_BUF_INIT;
	const char *at;

	assert_non_null(x);
	snprintf(x->dir, sizeof(x->dir), "/tmp/pg-test-report-parse-XXXXXX");
	assert_non_null(mkdtemp(x->dir));
	snprintf(x->fx, sizeof(x->fx), "%s/incident", x->dir);
	free(run_must(make));
	assert_int_equal(pg_buf_printf(&path, "%s/keys.env", x->fx), 0);
	assert_int_equal(pg_buf_read_file(&env, path.ptr), 0);
	assert_non_null(at = strstr(env.ptr, "FPR_KEES="));
	memcpy(x->fpr, at + 9, 40);
	pg_buf_release(&env);
	pg_buf_release(&path);
	*state = x;
	return 0;
}

static int incident_teardown(void **state)
{
	incident *x = *state;

	pg_remove_tree(x->dir);
	free(x);
	return 0;
}

/* pg_verify of a tag of the incident fixture, as `pullgate verify --keyring --trust` runs it. */
static pg_report *verify_tag(const incident *x, const char *tag, size_t cap)
{
	char repo[128], up[128], keyring[128], home[96];
	pg_pull_spec spec;
	pg_policy *policy = NULL;
	pg_report *r = NULL;

	snprintf(repo, sizeof(repo), "%s/kees.git", x->fx);
	snprintf(up, sizeof(up), "%s/upstream.git", x->fx);
	snprintf(keyring, sizeof(keyring), "%s/keyring.asc", x->fx);
	snprintf(home, sizeof(home), "%s/home", x->dir);
	assert_int_equal(pg_policy_new_default(&policy), 0);
	assert_non_null(policy->keyring = pg_strdup(keyring));
	assert_int_equal(pg_policy_add_signer(NULL, policy, x->fpr), 0);
	policy->max_findings_per_check = cap;
	memset(&spec, 0, sizeof(spec));
	spec.repo = repo;
	spec.tag = tag;
	spec.upstream = up;
	spec.upstream_branch = "master";
	if (pg_verify(&r, &spec, policy, home) < 0)
		fail_msg("verify %s: %s", tag, pg_error_last());
	pg_policy_free(policy);
	return r;
}

static void test_real_reports(void **state)
{
	const incident *x = *state;
	pg_report *r, *p;

	/* take two: accepted, its tag signed good by a trusted key */
	r = verify_tag(x, "hardening-v6.16-rc1-fix1-take2", 200);
	assert_int_equal(pg_report_verdict(r), PG_VERDICT_ACCEPT);
	assert_non_null(r->tag_signer);
	p = round_trip(r);
	assert_int_equal(p->tag_time, r->tag_time);
	assert_int_equal(p->tag_offset, r->tag_offset);
	assert_int_equal(p->nsignatures, 1);
	pg_report_free(p);
	pg_report_free(r);

	/* take one: 35 rewritten copies, and what the rewrites did follows from them */
	r = verify_tag(x, "hardening-v6.16-rc1-fix1", 200);
	assert_int_equal(pg_report_count_roots(r, PG_SEV_ERROR), 35);
	assert_true(pg_report_count_implied(r) > 0);
	p = round_trip(r);
	assert_int_equal(p->ncopies, r->ncopies);
	pg_report_free(p);
	pg_report_free(r);

	/* take one under a cap of 2 per check: copies and what they did counted, not listed */
	r = verify_tag(x, "hardening-v6.16-rc1-fix1", 2);
	assert_true(pg_report_omitted(r, PG_CHECK_REWRITTEN_UPSTREAM) > 0);
	assert_true(r->omitted_implied[PG_CHECK_FOREIGN_COMMITTER][PG_SEV_ERROR] +
		    r->omitted_implied[PG_CHECK_FOREIGN_COMMITTER][PG_SEV_WARNING] > 0);
	assert_int_equal(pg_report_count_roots(r, PG_SEV_ERROR), 35);
	p = round_trip(r);
	assert_int_equal(memcmp(p->omitted_implied, r->omitted_implied, sizeof(r->omitted_implied)), 0);
	pg_report_free(p);
	pg_report_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_verify_report),
		cmocka_unit_test(test_every_verify_member),
		cmocka_unit_test(test_index_actions_and_dates),
		cmocka_unit_test(test_every_gate_member),
		cmocka_unit_test(test_stage_seconds),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test_setup_teardown(test_real_reports, incident_setup, incident_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
