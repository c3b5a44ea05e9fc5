/* test_attest.c - unit tests for the attestation's statement, the note's layout and its plan (pipeline/attest.c). */
#include "tests/unit/unit.h"

#include "common/digest.h"
#include "common/error.h"
#include "common/json.h"
#include "pipeline/attest.h"

#define MERGE "1111111111111111111111111111111111111111"
#define BASE "2222222222222222222222222222222222222222"
#define TREE "5555555555555555555555555555555555555555"
#define POLICY "6666666666666666666666666666666666666666666666666666666666666666"

static const char report[] =
	"{\"schema\": 1, \"verdict\": \"accept\", \"errors\": 0, \"warnings\": 2,\n"
	" \"repo\": \"git://example.org/x.git\", \"tag\": \"refs/tags/v1\",\n"
	" \"tag_object\": \"3333333333333333333333333333333333333333\",\n"
	" \"tag_commit\": \"4444444444444444444444444444444444444444\",\n"
	" \"merge_base\": \"" BASE "\", \"merge_commit\": \"" MERGE "\",\n"
	" \"approved\": true, \"simulated\": false, \"tag_signer\": \"ABCD\",\n"
	" \"policy_sha256\": \"" POLICY "\",\n"
	" \"provenance\": [\n"
	"  {\"stage\": \"build\", \"toolchain\": \"gcc 14\", \"config_sha256\": \"c0\",\n"
	"   \"farm_env\": \"061fbd5764d1c3a1c1adf83ba8239f89: gcc 14\",\n"
	"   \"image_sha256\": \"i0\"},\n"
	"  {\"stage\": \"boot\", \"qemu\": \"QEMU 9\", \"image_sha256\": \"i0\"}],\n"
	" \"suites\": [{\"name\": \"ext4_inode_test\", \"verdict\": \"added\", \"base\": null,\n"
	"   \"merge\": {\"passed\": 3, \"failed\": 0, \"skipped\": 1, \"crashed\": 0}}]}\n";

static void test_statement(void **state)
{
	pg_buf out = PG_BUF_INIT;
	pg_json *v = NULL;
	const pg_json *s;
	char sha[PG_SHA256_HEXSZ + 1];
	int64_t n = 0;
	pg_oid tree;

	(void)state;
	assert_int_equal(pg_oid_fromhex(&tree, TREE, PG_OID_HEXSZ), 0);
	assert_int_equal(pg_attest_statement(&out, report, strlen(report), "/r/report.json", &tree,
					     "gate", 86400), 0);
	assert_true(out.len > 0 && out.ptr[out.len - 1] == '\n');
	assert_int_equal(pg_json_parse(&v, out.ptr, out.len), 0);
	assert_string_equal(pg_json_get_str(v, "type"), PG_ATTEST_TYPE);
	assert_int_equal(pg_json_get_int(v, "version", &n), 0);
	assert_int_equal(n, PG_ATTEST_VERSION);
	assert_string_equal(pg_json_get_str(v, "time"), "1970-01-02T00:00:00Z");
	assert_string_equal(pg_json_get_str(v, "merge_commit"), MERGE);
	assert_string_equal(pg_json_get_str(v, "base_commit"), BASE);
	assert_string_equal(pg_json_get_str(v, "merge_tree"), TREE);
	assert_string_equal(pg_json_get_str(v, "policy_sha256"), POLICY);
	assert_string_equal(pg_json_get_str(v, "tag_object"), "3333333333333333333333333333333333333333");
	assert_string_equal(pg_json_get_str(v, "repository"), "git://example.org/x.git");
	assert_string_equal(pg_json_get_str(v, "signer"), "ABCD");
	assert_string_equal(pg_json_get_str(pg_json_get(v, "verify"), "verdict"), "accept");
	assert_int_equal(pg_json_get_int(pg_json_get(v, "verify"), "warnings", &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(pg_json_get_str(v, "toolchain"), "gcc 14");
	assert_string_equal(pg_json_get_str(v, "qemu"), "QEMU 9");
	assert_string_equal(pg_json_get_str(v, "config_sha256"), "c0");
	assert_string_equal(pg_json_get_str(v, "farm_env"), "061fbd5764d1c3a1c1adf83ba8239f89: gcc 14");
	assert_false(pg_json_get_bool(v, "simulated"));
	s = pg_json_at(pg_json_get(v, "suites"), 0);
	assert_string_equal(pg_json_get_str(s, "name"), "ext4_inode_test");
	assert_null(pg_json_get_str(s, "base"));
	assert_non_null(pg_json_get(s, "base"));
	assert_int_equal(pg_json_get_int(pg_json_get(s, "merge"), "skipped", &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(pg_sha256_hex(sha, report, strlen(report)), 0);
	assert_string_equal(pg_json_get_str(pg_json_get(v, "report"), "sha256"), sha);
	assert_string_equal(pg_json_get_str(pg_json_get(v, "report"), "path"), "/r/report.json");
	pg_json_free(v);
	pg_buf_release(&out);
}

/* The statement's keys, in order, each a line at the top level's indent. */
static void top_keys(pg_buf *keys, const char *statement)
{
	const char *p = statement, *q;

	pg_buf_clear(keys);
	while ((p = strstr(p, "\n  \"")) != NULL) {
		p += 4;
		assert_non_null(q = strchr(p, '"'));
		assert_int_equal(pg_buf_printf(keys, "%s%.*s", keys->len ? " " : "", (int)(q - p),
					       p), 0);
	}
}

/*
 * A build without the farm, its report without farm_env or with a null
 * (as report_json.c writes it): the statement has no farm_env at all, not
 * a null, so that it is byte for byte a statement of before the key.
 */
static void test_statement_without_farm(void **state)
{
	static const char *const values[] = { NULL, "null" };
	const char *at = strstr(report, "\"farm_env\": ");
	pg_buf out = PG_BUF_INIT, nofarm = PG_BUF_INIT, keys = PG_BUF_INIT;
	pg_json *v = NULL;
	pg_oid tree;
	size_t i;

	(void)state;
	assert_non_null(at);
	assert_int_equal(pg_oid_fromhex(&tree, TREE, PG_OID_HEXSZ), 0);
	for (i = 0; i < PG_ARRAY_SIZE(values); i++) {
		pg_buf_clear(&nofarm);
		pg_buf_clear(&out);
		assert_int_equal(pg_buf_put(&nofarm, report, (size_t)(at - report)), 0);
		if (values[i])
			assert_int_equal(pg_buf_printf(&nofarm, "\"farm_env\": %s,", values[i]), 0);
		assert_int_equal(pg_buf_puts(&nofarm, strchr(at, '\n')), 0);
		assert_int_equal(pg_attest_statement(&out, nofarm.ptr, nofarm.len, "r", &tree, "gate",
						     0), 0);
		assert_int_equal(pg_json_parse(&v, out.ptr, out.len), 0);
		assert_null(pg_json_get(v, "farm_env"));
		assert_null(strstr(out.ptr, "farm_env"));
		assert_string_equal(pg_json_get_str(v, "toolchain"), "gcc 14");
		pg_json_free(v);
		v = NULL;
		/* the keys of a statement before farm_env, in their order */
		top_keys(&keys, out.ptr);
		assert_string_equal(keys.ptr, "type version tool time approved_by repository tag "
				    "tag_object tag_commit signer merge_commit merge_tree base_commit "
				    "policy_sha256 toolchain qemu config_sha256 image_sha256 "
				    "booted_image_sha256 simulated verify suites report");
	}

	/* with the farm, the key is there, after the toolchain */
	pg_buf_clear(&out);
	assert_int_equal(pg_attest_statement(&out, report, strlen(report), "r", &tree, "gate", 0), 0);
	top_keys(&keys, out.ptr);
	assert_non_null(strstr(keys.ptr, " toolchain farm_env qemu "));
	pg_buf_release(&keys);
	pg_buf_release(&nofarm);
	pg_buf_release(&out);
}

static void test_statement_refuses(void **state)
{
	pg_buf out = PG_BUF_INIT, nopolicy = PG_BUF_INIT;
	static const char nomerge[] = "{\"verdict\": \"accept\", \"merge_commit\": null}";
	const char *at = strstr(report, "\"policy_sha256\"");
	pg_oid tree;

	(void)state;
	assert_int_equal(pg_oid_fromhex(&tree, TREE, PG_OID_HEXSZ), 0);
	assert_int_equal(pg_attest_statement(&out, nomerge, strlen(nomerge), "r", &tree, "gate", 0),
			 PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "names no tested merge"));
	assert_int_equal(pg_attest_statement(&out, "{", 1, "r", &tree, "gate", 0), PG_EINVALID);
	/* a report of before the policy's digest was recorded binds no policy: no statement */
	assert_non_null(at);
	assert_int_equal(pg_buf_put(&nopolicy, report, (size_t)(at - report)), 0);
	assert_int_equal(pg_buf_puts(&nopolicy, strchr(at, '\n') + 1), 0);
	assert_int_equal(pg_attest_statement(&out, nopolicy.ptr, nopolicy.len, "r", &tree, "gate", 0),
			 PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "names no policy_sha256"));
	pg_buf_release(&nopolicy);
	assert_int_equal(out.len, 0);
	pg_buf_release(&out);
}

static void test_split(void **state)
{
	static const char note[] = "{\n  \"a\": \"-----BEGIN PGP SIGNATURE-----\"\n}\n"
				   "-----BEGIN PGP SIGNATURE-----\n\nabc\n-----END PGP SIGNATURE-----\n";
	static const char nosig[] = "{\n}\n";
	static const char onlysig[] = "-----BEGIN PGP SIGNATURE-----\nabc\n";
	static const char notaline[] = "{}\n-----BEGIN PGP SIGNATURE----- \nabc\n";
	size_t n = 0;

	(void)state;
	assert_int_equal(pg_attest_split(&n, note, strlen(note)), 0);
	assert_int_equal(n, strlen("{\n  \"a\": \"-----BEGIN PGP SIGNATURE-----\"\n}\n"));
	assert_int_equal(pg_attest_split(&n, nosig, strlen(nosig)), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "no OpenPGP signature block"));
	assert_int_equal(pg_attest_split(&n, onlysig, strlen(onlysig)), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "nothing before the signature"));
	assert_int_equal(pg_attest_split(&n, notaline, strlen(notaline)), PG_EINVALID);
	assert_int_equal(pg_attest_split(&n, "", 0), PG_EINVALID);
}

#define STMT "{\n  \"a\": 1\n}\n"
#define ARMOR "-----BEGIN PGP SIGNATURE-----\n\niHUEABYKAB0WIQ+/=\n=abcd\n-----END PGP SIGNATURE-----\n"

/* The note as written, byte for byte: anything else is refused, saying what. */
static void test_split_strict(void **state)
{
	static const struct {
		const char *note;
		size_t len;     /* 0: strlen */
		const char *why;
	} bad[] = {
		{ STMT ARMOR "trailing text\n", 0, "14 bytes after the signature's END line" },
		{ STMT ARMOR "\n", 0, "1 bytes after the signature's END line" },
		{ STMT ARMOR ARMOR, 0, "a second signature block after the first" },
		{ STMT "-----BEGIN PGP SIGNATURE-----\n\nabc\n" ARMOR, 0,
		  "a second signature block inside the first" },
		{ STMT ARMOR "\0hidden\n", sizeof(STMT ARMOR "\0hidden\n") - 1,
		  "a NUL byte at offset 96" },
		{ STMT "-----BEGIN PGP SIGNATURE-----\nComment: hi\n\nabc\n"
		  "-----END PGP SIGNATURE-----\n", 0, "armor headers" },
		{ STMT "-----BEGIN PGP SIGNATURE-----\n\nabc\nnot radix 64\n"
		  "-----END PGP SIGNATURE-----\n", 0, "line 4 of the signature block is not radix-64" },
		{ STMT "-----BEGIN PGP SIGNATURE-----\n\nabc\n", 0, "has no END line" },
		{ STMT "-----BEGIN PGP SIGNATURE-----\n\nabc\n-----END PGP SIGNATURE-----", 0,
		  "the END line has no newline" },
		{ STMT "\n" ARMOR, 0, "not one JSON object" },
		{ STMT "text\n" ARMOR, 0, "not one JSON object" },
		{ "x" STMT ARMOR, 0, "not one JSON object" },
	};
	size_t i, n = 0;

	(void)state;
	assert_int_equal(pg_attest_split(&n, STMT ARMOR, strlen(STMT ARMOR)), 0);
	assert_int_equal(n, strlen(STMT));
	for (i = 0; i < PG_ARRAY_SIZE(bad); i++) {
		size_t len = bad[i].len ? bad[i].len : strlen(bad[i].note);

		if (pg_attest_split(&n, bad[i].note, len) != PG_EINVALID)
			fail_msg("bad[%zu] was not refused", i);
		if (!strstr(pg_error_last(), bad[i].why))
			fail_msg("bad[%zu]: '%s' does not say '%s'", i, pg_error_last(), bad[i].why);
	}
}

/* What the report says of the attestation before it is signed, and where the key is looked for. */
static void test_plan(void **state)
{
	pg_report *r = NULL;
	pg_buf home = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_report_new(&r), 0);
	/* no key: nothing to sign, and the report says why */
	assert_int_equal(pg_attest_plan(&home, r, NULL, NULL, "/home/pg"), 0);
	assert_non_null(strstr(r->attestation, "none: no attestation key is configured"));
	assert_int_equal(home.len, 0);
	/* a key without a home of its own: home/gnupg */
	assert_int_equal(pg_attest_plan(&home, r, MERGE, NULL, "/home/pg"), 1);
	assert_string_equal(home.ptr, "/home/pg/gnupg");
	assert_string_equal(r->attestation, "signed by key " MERGE " in " PG_ATTEST_NOTES_REF);
	pg_buf_clear(&home);
	assert_int_equal(pg_attest_plan(&home, r, MERGE, "/etc/pg/gnupg", "/home/pg"), 1);
	assert_string_equal(home.ptr, "/etc/pg/gnupg");
	pg_buf_release(&home);
	pg_report_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_statement),
		cmocka_unit_test(test_statement_without_farm),
		cmocka_unit_test(test_statement_refuses),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_split_strict),
		cmocka_unit_test(test_plan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
