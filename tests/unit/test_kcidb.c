/* test_kcidb.c - unit tests for the KCIDB document a gate run's report makes. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "common/fs.h"
#include "pipeline/kcidb.h"

#include <ctype.h>
#include <jansson.h>
#include <unistd.h>

/* A console: one suite with a pass, a failure, a skip and a case whose result never came. */
static const char console_text[] =
	"[    1.000000] KTAP version 1\n"
	"[    1.000001] 1..1\n"
	"[    1.000002]     KTAP version 1\n"
	"[    1.000003]     # Subtest: flex\n"
	"[    1.000004]     1..5\n"
	"[    1.000005]     ok 1 zeroes\n"
	"[    1.000006]     not ok 2 sizes\n"
	"[    1.000007]     ok 3 randstruct # SKIP needs RANDSTRUCT_FULL\n"
	"[    1.000008]     ok 4 a.b c\n"
	"[    1.000009]     ok 5 a_b_c\n"
	"[    1.000010] not ok 1 flex\n";

typedef struct fixture {
	char dir[32];
	char console[64];
	pg_report *r;
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/pg-kcidb-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->console, sizeof(f->console), "%s/boot.log", f->dir);
	assert_int_equal(pg_write_file_atomic(f->console, console_text, strlen(console_text)), 0);
	assert_int_equal(pg_report_new(&f->r), 0);
	f->r->tag = pg_strdup("refs/tags/fix-1");
	assert_int_equal(pg_oid_fromhex(&f->r->tag_object,
					 "1111111111111111111111111111111111111111", 40), 0);
	assert_int_equal(pg_oid_fromhex(&f->r->tag_commit,
					 "2222222222222222222222222222222222222222", 40), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	pg_report_free(f->r);
	unlink(f->console);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Add the stages a full run has: merge, build and boot, with the boot's console. */
static void full_run(fixture *f, enum pg_stage_status build, enum pg_stage_status boot)
{
	pg_stage *st;
	pg_provenance *p;

	f->r->has_merge = true;
	assert_int_equal(pg_oid_fromhex(&f->r->merge_base,
					 "3333333333333333333333333333333333333333", 40), 0);
	assert_int_equal(pg_report_add_stage(&st, f->r, "verify"), 0);
	assert_int_equal(pg_report_add_stage(&st, f->r, "merge"), 0);
	assert_int_equal(pg_report_add_stage(&st, f->r, "build"), 0);
	assert_int_equal(pg_stage_set(st, build, "/logs/a b/build.log", "built"), 0);
	st->elapsed_ms = 1500;
	assert_int_equal(pg_report_add_stage(&st, f->r, "boot"), 0);
	assert_int_equal(pg_stage_set(st, boot, NULL, "booted"), 0);
	assert_int_equal(pg_report_add_provenance(&p, f->r, "boot"), 0);
	assert_int_equal(pg_provenance_set(&p->log, f->console), 0);
}

static json_t *format(const pg_report *r, const pg_kcidb_opts *o)
{
	pg_buf out = PG_BUF_INIT;
	json_error_t e;
	json_t *doc;

	assert_int_equal(pg_kcidb_format(&out, r, o), 0);
	doc = json_loadb(out.ptr, out.len, JSON_REJECT_DUPLICATES, &e);
	pg_buf_release(&out);
	assert_non_null(doc);
	return doc;
}

static const char *str(json_t *v, const char *path)
{
	json_t *at = v;
	char key[64];
	const char *p = path;

	while (*p && at) {
		size_t n = strcspn(p, ".");

		snprintf(key, sizeof(key), "%.*s", (int)n, p);
		at = isdigit((unsigned char)key[0]) ? json_array_get(at, (size_t)strtoul(key, NULL, 10)) :
		     json_object_get(at, key);
		p += n + (p[n] == '.');
	}
	return at ? json_string_value(at) : NULL;
}

static void test_origin(void **state)
{
	(void)state;
	assert_true(pg_kcidb_origin_valid("pullgate"));
	assert_true(pg_kcidb_origin_valid("my_ci_2"));
	assert_false(pg_kcidb_origin_valid(""));
	assert_false(pg_kcidb_origin_valid(NULL));
	assert_false(pg_kcidb_origin_valid("Pullgate"));
	assert_false(pg_kcidb_origin_valid("pull-gate"));
	assert_false(pg_kcidb_origin_valid("pull:gate"));
	assert_true(pg_kcidb_origin_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
	assert_false(pg_kcidb_origin_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}

static void test_bad_origin_is_refused(void **state)
{
	fixture *f = *state;
	pg_kcidb_opts o = { .origin = "Bad Origin" };
	pg_buf out = PG_BUF_INIT;

	assert_int_equal(pg_kcidb_format(&out, f->r, &o), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "'Bad Origin' is no KCIDB origin"));
	assert_int_equal(out.len, 0);
	pg_buf_release(&out);
	pg_error_clear();
}

/* Verify alone: the checkout, no validity claimed, nothing built. */
static void test_verify_only(void **state)
{
	fixture *f = *state;
	pg_kcidb_opts o = { .repo_url = "/srv/git/kees.git", .subject = "[GIT PULL] fix" };
	json_t *doc = format(f->r, &o);

	assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "version"),
							     "major")), 5);
	assert_string_equal(str(doc, "checkouts.0.id"),
			    "pullgate:1111111111111111111111111111111111111111");
	assert_string_equal(str(doc, "checkouts.0.git_commit_hash"),
			    "2222222222222222222222222222222222222222");
	assert_string_equal(str(doc, "checkouts.0.git_commit_name"), "fix-1");
	assert_string_equal(str(doc, "checkouts.0.comment"), "[GIT PULL] fix");
	/* a path is no URL KCIDB takes */
	assert_null(json_object_get(json_array_get(json_object_get(doc, "checkouts"), 0),
				    "git_repository_url"));
	assert_null(json_object_get(json_array_get(json_object_get(doc, "checkouts"), 0), "valid"));
	assert_null(json_object_get(doc, "builds"));
	assert_null(json_object_get(doc, "tests"));
	json_decref(doc);
}

static void test_full_run(void **state)
{
	fixture *f = *state;
	pg_kcidb_opts o = { .origin = "ci", .repo_url = "https://git.kernel.org/x/linux.git",
			    .branch = "master" };
	json_t *doc, *tests;

	full_run(f, PG_STAGE_PASSED, PG_STAGE_FAILED);
	doc = format(f->r, &o);
	assert_string_equal(str(doc, "checkouts.0.git_repository_url"),
			    "https://git.kernel.org/x/linux.git");
	assert_string_equal(str(doc, "checkouts.0.misc.integration_branch"), "master");
	assert_string_equal(str(doc, "builds.0.id"),
			    "ci:1111111111111111111111111111111111111111-on-"
			    "3333333333333333333333333333333333333333:arm64");
	assert_string_equal(str(doc, "builds.0.status"), "PASS");
	/* the log's path as a file: URL, its space encoded */
	assert_string_equal(str(doc, "builds.0.log_url"), "file:///logs/a%20b/build.log");
	tests = json_object_get(doc, "tests");
	assert_int_equal(json_array_size(tests), 6);
	assert_string_equal(str(doc, "tests.0.path"), "boot");
	assert_string_equal(str(doc, "tests.0.status"), "FAIL");
	assert_string_equal(str(doc, "tests.1.path"), "flex.zeroes");
	assert_string_equal(str(doc, "tests.1.status"), "PASS");
	assert_string_equal(str(doc, "tests.2.status"), "FAIL");
	assert_string_equal(str(doc, "tests.3.path"), "flex.randstruct");
	assert_string_equal(str(doc, "tests.3.status"), "SKIP");
	assert_string_equal(str(doc, "tests.3.comment"), "needs RANDSTRUCT_FULL");
	/* a name outside the path's characters is reduced, its dot too, and kept in misc */
	assert_string_equal(str(doc, "tests.4.path"), "flex.a_b_c");
	assert_string_equal(str(doc, "tests.4.misc.ktap_path"), "flex.a.b c");
	/* a real a_b_c reduces to the same path: it still gets an id of its own */
	assert_string_equal(str(doc, "tests.5.path"), "flex.a_b_c");
	assert_string_not_equal(str(doc, "tests.4.id"), str(doc, "tests.5.id"));
	json_decref(doc);
}

/* A build that failed: no tests, whatever the boot stage says. */
static void test_failed_build(void **state)
{
	fixture *f = *state;
	pg_kcidb_opts o = { 0 };
	json_t *doc;

	full_run(f, PG_STAGE_FAILED, PG_STAGE_SKIPPED);
	doc = format(f->r, &o);
	assert_string_equal(str(doc, "builds.0.status"), "FAIL");
	assert_null(json_object_get(doc, "tests"));
	json_decref(doc);
}

/* A console that is gone: the boot's own test, no cases. */
static void test_missing_console(void **state)
{
	fixture *f = *state;
	pg_kcidb_opts o = { 0 };
	json_t *doc;

	full_run(f, PG_STAGE_PASSED, PG_STAGE_PASSED);
	unlink(f->console);
	doc = format(f->r, &o);
	assert_int_equal(json_array_size(json_object_get(doc, "tests")), 1);
	assert_string_equal(str(doc, "tests.0.status"), "PASS");
	json_decref(doc);
}

static json_t *boot_misc(json_t *doc)
{
	return json_object_get(json_array_get(json_object_get(doc, "tests"), 0), "misc");
}

/*
 * A console the caller read (the service, which trusts no path of the
 * report): its text, not the provenance log's file; none, the boot alone;
 * a cut one says so in the boot's misc.
 */
static void test_given_console(void **state)
{
	fixture *f = *state;
	static const char part[] = "[    1.000000] KTAP version 1\n[    1.000001] 1..1\n"
				   "[    1.000002] ok 1 alone\n";
	pg_kcidb_opts o = { .console_given = true };
	json_t *doc;

	full_run(f, PG_STAGE_PASSED, PG_STAGE_PASSED);
	doc = format(f->r, &o);
	assert_int_equal(json_array_size(json_object_get(doc, "tests")), 1);
	assert_null(json_object_get(boot_misc(doc), "console_cut"));
	json_decref(doc);
	o.console = part;
	o.console_len = strlen(part);
	o.console_cut = true;
	doc = format(f->r, &o);
	assert_int_equal(json_array_size(json_object_get(doc, "tests")), 2);
	assert_string_equal(str(doc, "tests.1.path"), "alone");
	assert_true(json_is_true(json_object_get(boot_misc(doc), "console_cut")));
	json_decref(doc);
}

static int checkout_id(pg_buf *out, const pg_report *r, const char *origin)
{
	return pg_kcidb_checkout_id(out, origin, &r->tag_object, r->has_merge ? &r->merge_base : NULL);
}

/* The checkout's id alone: what the document's checkout carries, before and after a merge. */
static void test_checkout_id(void **state)
{
	fixture *f = *state;
	pg_kcidb_opts o = { .origin = "my_ci" };
	pg_buf id = PG_BUF_INIT;
	json_t *doc;

	assert_int_equal(checkout_id(&id, f->r, NULL), 0);
	assert_string_equal(id.ptr, "pullgate:1111111111111111111111111111111111111111");
	pg_buf_clear(&id);
	full_run(f, PG_STAGE_PASSED, PG_STAGE_PASSED);
	assert_int_equal(checkout_id(&id, f->r, "my_ci"), 0);
	assert_string_equal(id.ptr, "my_ci:1111111111111111111111111111111111111111-on-"
			    "3333333333333333333333333333333333333333");
	doc = format(f->r, &o);
	assert_string_equal(str(doc, "checkouts.0.id"), id.ptr);
	assert_string_equal(str(doc, "builds.0.checkout_id"), id.ptr);
	json_decref(doc);
	/* appended, as a pg_buf function does; a bad origin appends nothing */
	assert_int_equal(checkout_id(&id, f->r, "My CI"), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "'My CI' is no KCIDB origin"));
	pg_error_clear();
	assert_int_equal(checkout_id(&id, f->r, ""), PG_EINVALID);
	pg_error_clear();
	assert_int_equal(id.len, strlen("my_ci:") + 40 + strlen("-on-") + 40);
	pg_buf_release(&id);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_origin),
		cmocka_unit_test_setup_teardown(test_bad_origin_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_verify_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_build, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_console, setup, teardown),
		cmocka_unit_test_setup_teardown(test_given_console, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checkout_id, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
