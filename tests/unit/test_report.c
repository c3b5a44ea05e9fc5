/* test_report.c - unit tests for building a report: findings, the per-check cap and its counts, the farm in the text. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "common/json.h"
#include "report/report.h"

static pg_commit *commit(const char *subject)
{
	static const char head[] = "tree 16f9d75b755ac2e271285acb0fc12f5d8bff4697\n"
				   "author A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\n";
	pg_buf text = PG_BUF_INIT;
	pg_commit *c = NULL;

	assert_int_equal(pg_buf_printf(&text, "%s%s\n", head, subject), 0);
	assert_int_equal(pg_commit_parse(&c, NULL, text.ptr, text.len), 0);
	pg_buf_release(&text);
	return c;
}

/*
 * Findings past the cap that follow from a rewritten copy are no root
 * causes: the verdict line counts the copies, not what each rewrite did.
 */
static void test_cap_keeps_root_causes(void **state)
{
	pg_report *r = NULL;
	pg_commit *c[6];
	pg_buf out = PG_BUF_INIT;
	size_t i;

	(void)state;
	assert_int_equal(pg_report_new(&r), 0);
	r->max_per_check = 2;
	for (i = 0; i < 6; i++) {
		c[i] = commit("subsys: a copy");
		memset(&c[i]->id, 0, sizeof(c[i]->id));
		c[i]->id.id[0] = (unsigned char)(i + 1);
	}
	/* five copies, the first two listed; the sixth commit is the pull's own */
	for (i = 0; i < 5; i++) {
		assert_int_equal(pg_report_mark_copy(r, &c[i]->id, PG_SEV_ERROR), 0);
		assert_int_equal(pg_report_add(NULL, r, PG_CHECK_REWRITTEN_UPSTREAM, PG_SEV_ERROR, c[i],
					       "copy %zu", i), 0);
	}
	assert_int_equal(pg_report_mark_copy(r, &c[1]->id, PG_SEV_ERROR), 0); /* again: no-op */
	assert_int_equal(r->ncopies, 5);
	assert_int_equal(pg_report_copy_severity(r, &c[4]->id), PG_SEV_ERROR + 1);
	assert_int_equal(pg_report_copy_severity(r, &c[5]->id), 0);
	/* what each rewrite did, past the cap from the third on; and one on the pull's own commit */
	for (i = 0; i < 6; i++)
		assert_int_equal(pg_report_add(NULL, r, PG_CHECK_FOREIGN_COMMITTER, PG_SEV_WARNING,
					       c[i], "foreign %zu", i), 0);
	/* a check that does not follow from a copy stays a root cause past the cap */
	for (i = 0; i < 3; i++)
		assert_int_equal(pg_report_add(NULL, r, PG_CHECK_RANGE_SIZE, PG_SEV_WARNING, c[i],
					       "size"), 0);
	assert_int_equal(r->omitted_implied[PG_CHECK_FOREIGN_COMMITTER][PG_SEV_WARNING], 3);
	assert_int_equal(r->omitted_implied[PG_CHECK_RANGE_SIZE][PG_SEV_WARNING], 0);
	assert_int_equal(pg_report_count(r, PG_SEV_ERROR), 5);
	assert_int_equal(pg_report_count_roots(r, PG_SEV_ERROR), 5);
	/* the kept foreign-committer findings are linked by the story; the pull's own stays */
	r->findings[2].implied_by = 1;
	r->findings[3].implied_by = 2;
	assert_int_equal(pg_report_count(r, PG_SEV_WARNING), 9);
	/* roots: 1 range-size omitted + 2 kept range-size + the own commit's omitted foreign one */
	assert_int_equal(pg_report_count_roots(r, PG_SEV_WARNING), 4);
	assert_int_equal(pg_report_count_implied(r), 5);
	assert_int_equal(pg_report_format_text(&out, r), 0);
	assert_non_null(strstr(out.ptr, "verdict: reject (5 errors, 4 warnings; 5 more findings "
				      "follow from them)"));
	pg_buf_release(&out);
	pg_report_free(r);
	for (i = 0; i < 6; i++)
		pg_commit_free(c[i]);
}

static void test_add_and_count(void **state)
{
	pg_report *r = NULL;
	pg_finding *f = NULL;
	pg_commit *c = commit("subsys: a change");

	(void)state;
	assert_int_equal(pg_report_new(&r), 0);
	assert_int_equal(pg_report_add(&f, r, PG_CHECK_SIGNOFF, PG_SEV_ERROR, c, "no %s", "sign-off"),
			 0);
	assert_non_null(f);
	assert_string_equal(f->message, "no sign-off");
	assert_string_equal(f->subject, "subsys: a change");
	assert_int_equal(pg_finding_detail(f, "committer", "A <a@b>", NULL), 0);
	assert_int_equal(pg_report_add(&f, r, PG_CHECK_BACK_MERGE, PG_SEV_OFF, c, "off"), 0);
	assert_null(f);
	assert_int_equal(pg_report_add(NULL, r, PG_CHECK_BACK_MERGE, PG_SEV_WARNING, NULL, "w"), 0);
	assert_int_equal(r->nfindings, 2);
	assert_int_equal(pg_report_count(r, PG_SEV_ERROR), 1);
	assert_int_equal(pg_report_count(r, PG_SEV_WARNING), 1);
	assert_int_equal(pg_report_verdict(r), PG_VERDICT_REJECT);
	pg_report_free(r);
	pg_commit_free(c);
}

/* Past max_per_check a check's findings are counted, not kept; the verdict still sees them. */
static void test_cap_per_check(void **state)
{
	pg_report *r = NULL;
	pg_finding *f = NULL;
	pg_buf out = PG_BUF_INIT;
	pg_json *doc = NULL;
	const pg_json *omitted;
	size_t i;

	(void)state;
	assert_int_equal(pg_report_new(&r), 0);
	r->max_per_check = 3;
	for (i = 0; i < 100000; i++)
		assert_int_equal(pg_report_add(&f, r, PG_CHECK_FOREIGN_COMMITTER, PG_SEV_WARNING,
					       NULL, "finding %zu", i), 0);
	assert_null(f);
	assert_int_equal(pg_report_add(&f, r, PG_CHECK_SIGNOFF, PG_SEV_ERROR, NULL, "kept"), 0);
	assert_non_null(f);
	assert_int_equal(pg_finding_detail(f, "x", "y", NULL), 0);
	assert_int_equal(r->nfindings, 4);
	assert_int_equal(pg_report_count_check(r, PG_CHECK_FOREIGN_COMMITTER), 3);
	assert_int_equal(pg_report_omitted(r, PG_CHECK_FOREIGN_COMMITTER), 99997);
	assert_int_equal(pg_report_omitted(r, PG_CHECK_SIGNOFF), 0);
	assert_int_equal(pg_report_count(r, PG_SEV_WARNING), 100000);

	/* an error past the cap of warnings still rejects the pull */
	assert_int_equal(pg_report_add(NULL, r, PG_CHECK_SIGNOFF, PG_SEV_ERROR, NULL, "2"), 0);
	assert_int_equal(pg_report_add(NULL, r, PG_CHECK_SIGNOFF, PG_SEV_ERROR, NULL, "3"), 0);
	assert_int_equal(pg_report_add(NULL, r, PG_CHECK_SIGNOFF, PG_SEV_ERROR, NULL, "4"), 0);
	assert_int_equal(pg_report_count(r, PG_SEV_ERROR), 4);
	assert_int_equal(pg_report_omitted(r, PG_CHECK_SIGNOFF), 1);

	assert_int_equal(pg_report_format_text(&out, r), 0);
	assert_non_null(strstr(out.ptr, "... and 99997 more foreign-committer findings (0 errors, "
				      "99997 warnings): the policy lists 3 per check\n"));
	assert_non_null(strstr(out.ptr, "... and 1 more signoff finding (1 error, 0 warnings)"));
	assert_non_null(strstr(out.ptr, "verdict: reject (4 errors, 100000 warnings)"));
	assert_true(out.len < 4096);

	pg_buf_clear(&out);
	assert_int_equal(pg_report_format_json(&out, r), 0);
	assert_int_equal(pg_json_parse(&doc, out.ptr, out.len), 0);
	omitted = pg_json_get(doc, "omitted");
	assert_int_equal(pg_json_len(omitted), 2);
	assert_string_equal(pg_json_get_str(pg_json_at(omitted, 0), "check"), "foreign-committer");
	assert_string_equal(pg_json_get_str(pg_json_at(omitted, 1), "check"), "signoff");
	assert_int_equal(pg_json_len(pg_json_get(doc, "findings")), 6);
	assert_non_null(strstr(out.ptr, "\"count\": 99997"));
	assert_non_null(strstr(out.ptr, "\"max_findings_per_check\": 3"));
	pg_json_free(doc);
	pg_buf_release(&out);
	pg_report_free(r);
}

/* Without a cap (a report not made by pg_verify) every finding is kept. */
static void test_no_cap(void **state)
{
	pg_report *r = NULL;
	pg_buf out = PG_BUF_INIT;
	size_t i;

	(void)state;
	assert_int_equal(pg_report_new(&r), 0);
	for (i = 0; i < 1000; i++)
		assert_int_equal(pg_report_add(NULL, r, PG_CHECK_BUILD_ERROR, PG_SEV_ERROR, NULL,
					       "e"), 0);
	assert_int_equal(r->nfindings, 1000);
	assert_int_equal(pg_report_omitted(r, PG_CHECK_BUILD_ERROR), 0);
	assert_int_equal(pg_report_format_json(&out, r), 0);
	assert_non_null(strstr(out.ptr, "\"omitted\": []"));
	pg_buf_release(&out);
	pg_report_free(r);
}

/* The build's farm in the text report: two facts when it was used, none when not; a long farm cut. */
static void test_farm_facts(void **state)
{
	pg_report *r = NULL;
	pg_stage *st = NULL;
	pg_provenance *p = NULL;
	pg_buf out = PG_BUF_INIT, farm = PG_BUF_INIT;
	const char *at;

	(void)state;
	assert_int_equal(pg_report_new(&r), 0);
	assert_int_equal(pg_report_add_stage(&st, r, "build"), 0);
	assert_int_equal(pg_report_add_provenance(&p, r, "build"), 0);
	assert_int_equal(pg_provenance_set(&p->farm_env, "061fbd5764d1c3a1c1adf83ba8239f89: gcc 12"),
			 0);
	while (farm.len < 3000)
		assert_int_equal(pg_buf_puts(&farm, "build2 compiled 1 objects; "), 0);
	assert_int_equal(pg_provenance_set(&p->farm, farm.ptr), 0);
	assert_int_equal(pg_report_add_provenance(&p, r, "boot"), 0);
	assert_int_equal(pg_report_format_text(&out, r), 0);
	assert_non_null(strstr(out.ptr, "\n           icecc environment: "
				"061fbd5764d1c3a1c1adf83ba8239f89: gcc 12\n"));
	assert_non_null(at = strstr(out.ptr, "\n           farm: build2 compiled 1 objects; "));
	/* cut at 2000 bytes, with an ellipsis: longer than another fact, not without end */
	at += strlen("\n           farm: ");
	assert_int_equal(strcspn(at, "\n"), 2000 + strlen("\xE2\x80\xA6"));
	/* once each: the boot's provenance has none */
	assert_null(strstr(strstr(out.ptr, "icecc environment") + 1, "icecc environment"));
	assert_null(strstr(at, "farm: "));
	pg_buf_release(&out);
	pg_buf_release(&farm);
	pg_report_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_and_count),
		cmocka_unit_test(test_cap_per_check),
		cmocka_unit_test(test_cap_keeps_root_causes),
		cmocka_unit_test(test_no_cap),
		cmocka_unit_test(test_farm_facts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
