/* test_check_signature.c - unit tests for tag-signature and mergetag-signature over built pulls. */
#include "tests/unit/unit.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "tests/unit/gpg_vectors.h"
#include "verifier/pull.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#define PARENT1 "3333333333333333333333333333333333333333"
#define MERGED "1111111111111111111111111111111111111111" /* what the vectors tag */

/* A pull with no repository: the signature check needs none. */
typedef struct fixture {
	char dir[64];
	char keyring[128];
	pg_policy *policy;
	pg_report *report;
	pg_pull pull;
	pg_commit *merge;
} fixture;

static int setup(void **state)
{
	fixture *fx = calloc(1, sizeof(*fx));
	const char *t = getenv("TMPDIR");

	assert_non_null(fx);
	snprintf(fx->dir, sizeof(fx->dir), "%s/pg-sig.XXXXXX", t && *t && strlen(t) < 32 ? t : "/tmp");
	assert_non_null(mkdtemp(fx->dir));
	snprintf(fx->keyring, sizeof(fx->keyring), "%s/keyring.asc", fx->dir);
	assert_int_equal(pg_write_file_atomic(fx->keyring, KEYRING, strlen(KEYRING)), 0);
	assert_int_equal(pg_policy_new_default(&fx->policy), 0);
	assert_non_null(fx->policy->keyring = pg_strdup(fx->keyring));
	assert_int_equal(pg_report_new(&fx->report), 0);
	assert_non_null(fx->report->tag = pg_strdup("refs/tags/v1"));
	fx->pull.policy = fx->policy;
	fx->pull.report = fx->report;
	fx->pull.repo_location = "git://git.example.org/gina/linux.git";
	fx->pull.home = fx->dir;
	*state = fx;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static int teardown(void **state)
{
	fixture *fx = *state;

	pg_tagobj_free(fx->pull.tag);
	free(fx->pull.commits);
	pg_commit_free(fx->merge);
	pg_report_free(fx->report);
	pg_policy_free(fx->policy);
	nftw(fx->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

/* The pulled tag: payload and signature as git stores them, one after the other. */
static void set_tag(fixture *fx, const char *payload, const char *sig)
{
	pg_buf b = PG_BUF_INIT;

	assert_int_equal(pg_buf_puts(&b, payload), 0);
	if (sig)
		assert_int_equal(pg_buf_puts(&b, sig), 0);
	pg_tagobj_free(fx->pull.tag);
	fx->pull.tag = NULL;
	assert_int_equal(pg_tagobj_parse(&fx->pull.tag, b.ptr, b.len), 0);
	pg_buf_release(&b);
}

static pg_signer *trust(fixture *fx, const char *fpr)
{
	pg_policy *p = fx->policy;
	pg_signer *s;

	p->signers = realloc(p->signers, (p->nsigners + 1) * sizeof(*p->signers));
	assert_non_null(p->signers);
	s = &p->signers[p->nsigners++];
	memset(s, 0, sizeof(*s));
	assert_non_null(s->fingerprint = pg_strdup(fpr));
	return s;
}

/* A pull of one merge whose mergetag header holds text (folded as git does). */
static void set_merge(fixture *fx, const char *second_parent, const char *text)
{
	pg_buf c = PG_BUF_INIT;
	const char *p;

	assert_int_equal(pg_buf_printf(&c, "tree 2222222222222222222222222222222222222222\n"
				       "parent " PARENT1 "\nparent %s\n"
				       "author Gina Good <gina@example.org> 1700000000 +0000\n"
				       "committer Gina Good <gina@example.org> 1700000000 +0000\n"
				       "mergetag", second_parent), 0);
	for (p = text; *p; ) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		assert_int_equal(pg_buf_putc(&c, ' '), 0);
		assert_int_equal(pg_buf_put(&c, p, n), 0);
		assert_int_equal(pg_buf_putc(&c, '\n'), 0);
		p += n + (nl ? 1 : 0);
	}
	assert_int_equal(pg_buf_puts(&c, "\nMerge tag 'sub-1'\n"), 0);
	pg_commit_free(fx->merge);
	assert_int_equal(pg_commit_parse(&fx->merge, NULL, c.ptr, c.len), 0);
	free(fx->pull.commits);
	assert_non_null(fx->pull.commits = calloc(1, sizeof(*fx->pull.commits)));
	fx->pull.commits[0] = fx->merge;
	fx->pull.ncommits = 1;
	pg_buf_release(&c);
}

static char *concat(const char *a, const char *b)
{
	pg_buf buf = PG_BUF_INIT;

	assert_int_equal(pg_buf_puts(&buf, a), 0);
	assert_int_equal(pg_buf_puts(&buf, b), 0);
	return pg_buf_detach(&buf);
}

/* Run the check on a fresh report. */
static void check(fixture *fx)
{
	pg_report_free(fx->report);
	assert_int_equal(pg_report_new(&fx->report), 0);
	assert_non_null(fx->report->tag = pg_strdup("refs/tags/v1"));
	fx->pull.report = fx->report;
	assert_int_equal(pg_check_signature(&fx->pull), 0);
}

/* The message of the one finding of check id; fails when there is not exactly one. */
static const char *only_message(const fixture *fx, enum pg_check_id id)
{
	const char *m = NULL;
	size_t i;

	for (i = 0; i < fx->report->nfindings; i++) {
		if (fx->report->findings[i].check != id)
			continue;
		assert_null(m);
		m = fx->report->findings[i].message;
	}
	assert_non_null(m);
	return m;
}

static const char *detail(const pg_finding *f, const char *field)
{
	size_t i;

	for (i = 0; i < f->ndetails; i++)
		if (!strcmp(f->details[i].field, field))
			return f->details[i].pull;
	return NULL;
}

/* The long key id of a fingerprint, as the messages give it. */
#define KEYID(fpr) ((fpr) + 24)

static void test_trusted_good_tag(void **state)
{
	fixture *fx = *state;
	const pg_signature_info *s;
	char tmp[128];

	set_tag(fx, TAG_V1, SIG_GINA);
	trust(fx, FPR_GINA);
	check(fx);
	assert_int_equal(fx->report->nfindings, 0);
	assert_int_equal(fx->report->nsignatures, 1);
	s = &fx->report->signatures[0];
	assert_false(s->mergetag);
	assert_false(s->has_commit);
	assert_string_equal(s->tag, "v1");
	assert_string_equal(s->tagger, "Gina Good <gina@example.org>");
	assert_string_equal(s->status, "good");
	assert_string_equal(s->fingerprint, FPR_GINA);
	assert_int_equal(s->nemails, 2);
	/* the private GNUPGHOME went into home/tmp, and is gone */
	snprintf(tmp, sizeof(tmp), "%s/tmp", fx->dir);
	assert_int_equal(rmdir(tmp), 0);
}

static void test_untrusted(void **state)
{
	fixture *fx = *state;
	char want[200];

	set_tag(fx, TAG_V1, SIG_GINA);
	check(fx);
	snprintf(want, sizeof(want), "tag 'v1' is signed by key %s, which the policy does not "
		 "trust", KEYID(FPR_GINA));
	assert_string_equal(only_message(fx, PG_CHECK_TAG_SIGNATURE), want);
	assert_int_equal(fx->report->findings[0].severity, PG_SEV_ERROR);
	assert_string_equal(detail(&fx->report->findings[0], "key"), FPR_GINA);
	/* both uids, in the key's order (the newest self-signature's first) */
	assert_int_equal(strlen(detail(&fx->report->findings[0], "key uids")),
			 strlen("gina@example.org, gina@kernel.example"));
	assert_non_null(strstr(detail(&fx->report->findings[0], "key uids"), "gina@example.org"));
	assert_non_null(strstr(detail(&fx->report->findings[0], "key uids"), "gina@kernel.example"));
	/* another key's entry does not help */
	trust(fx, FPR_OLGA);
	check(fx);
	assert_string_equal(only_message(fx, PG_CHECK_TAG_SIGNATURE), want);
}

static void test_signer_patterns(void **state)
{
	fixture *fx = *state;
	pg_signer *s;
	char want[200];

	set_tag(fx, TAG_V1, SIG_GINA);
	s = trust(fx, FPR_GINA);
	assert_int_equal(pg_policy_list_add(&s->repositories, &s->nrepositories,
					    "git://git.example.org/other/*"), 0);
	check(fx);
	snprintf(want, sizeof(want), "key %s may not sign tag 'v1': the repository matches none "
		 "of its repository patterns", KEYID(FPR_GINA));
	assert_string_equal(only_message(fx, PG_CHECK_TAG_SIGNATURE), want);
	assert_string_equal(detail(&fx->report->findings[0], "trusted for repositories"),
			    "git://git.example.org/other/*");

	/* fetched from a mirror: the URL it stands for (repo_name) matches too */
	fx->pull.repo_location = "/srv/mirrors/other.git";
	fx->pull.repo_name = "git://git.example.org/other/linux.git";
	check(fx);
	assert_int_equal(fx->report->nfindings, 0);
	fx->pull.repo_name = NULL;
	check(fx);
	assert_int_equal(fx->report->nfindings, 1);
	fx->pull.repo_location = "git://git.example.org/gina/linux.git";

	assert_int_equal(pg_policy_list_add(&s->repositories, &s->nrepositories,
					    "git://git.example.org/gina/*"), 0);
	assert_int_equal(pg_policy_list_add(&s->tags, &s->ntags, "v2*"), 0);
	check(fx);
	snprintf(want, sizeof(want), "key %s may not sign tag 'v1': the tag matches none of its "
		 "tag patterns", KEYID(FPR_GINA));
	assert_string_equal(only_message(fx, PG_CHECK_TAG_SIGNATURE), want);

	assert_int_equal(pg_policy_list_add(&s->tags, &s->ntags, "v[0-9]"), 0);
	assert_int_equal(pg_policy_list_add(&s->identities, &s->nidentities,
					    "gina@kernel.example"), 0);
	check(fx);
	snprintf(want, sizeof(want), "key %s may not sign tag 'v1': the tagger is none of its "
		 "identities", KEYID(FPR_GINA));
	assert_string_equal(only_message(fx, PG_CHECK_TAG_SIGNATURE), want);

	assert_int_equal(pg_policy_list_add(&s->identities, &s->nidentities,
					    "GINA@example.org"), 0);
	check(fx);
	assert_int_equal(fx->report->nfindings, 0);
}

static void test_tagger_not_on_the_key(void **state)
{
	fixture *fx = *state;
	char want[200];

	set_tag(fx, TAG_V1_MALLORY, SIG_GINA_MALLORY);
	trust(fx, FPR_GINA);
	check(fx);
	snprintf(want, sizeof(want), "the tagger of tag 'v1' is not among the user ids of key %s",
		 KEYID(FPR_GINA));
	assert_string_equal(only_message(fx, PG_CHECK_TAG_SIGNATURE), want);
	assert_string_equal(detail(&fx->report->findings[0], "tagger"),
			    "Gina Good <mallory@example.org>");
}

static void test_tag_without_a_signature(void **state)
{
	fixture *fx = *state;
	char *ssh;

	trust(fx, FPR_GINA);
	set_tag(fx, TAG_V1, NULL);
	check(fx);
	assert_string_equal(only_message(fx, PG_CHECK_TAG_SIGNATURE), "tag 'v1' is not signed");
	assert_int_equal(fx->report->nsignatures, 0);

	ssh = concat(TAG_V1, "-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----\n");
	set_tag(fx, ssh, NULL);
	check(fx);
	assert_string_equal(only_message(fx, PG_CHECK_TAG_SIGNATURE),
			    "tag 'v1' carries an SSH signature: pullgate verifies OpenPGP "
			    "signatures only");
	free(ssh);

	pg_tagobj_free(fx->pull.tag);
	fx->pull.tag = NULL;
	check(fx);
	assert_string_equal(only_message(fx, PG_CHECK_TAG_SIGNATURE),
			    "'v1' is a lightweight tag: no tagger and no signature");
}

static void test_huge_signature_is_refused(void **state)
{
	fixture *fx = *state;
	pg_buf big = PG_BUF_INIT;
	size_t i;

	assert_int_equal(pg_buf_puts(&big, TAG_V1), 0);
	assert_int_equal(pg_buf_puts(&big, "-----BEGIN PGP SIGNATURE-----\n\n"), 0);
	for (i = 0; i < 2000; i++)
		assert_int_equal(pg_buf_puts(&big, "QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB\n"), 0);
	assert_int_equal(pg_buf_puts(&big, "-----END PGP SIGNATURE-----\n"), 0);
	set_tag(fx, big.ptr, NULL);
	check(fx);
	assert_non_null(strstr(only_message(fx, PG_CHECK_TAG_SIGNATURE), "bytes: refused"));
	pg_buf_release(&big);
}

static void test_renamed_tag_and_no_tagger(void **state)
{
	fixture *fx = *state;
	static const char notagger[] =
		"object " MERGED "\ntype commit\ntag v1\n\nno tagger at all\n";

	set_tag(fx, TAG_V1, SIG_GINA);
	trust(fx, FPR_GINA);
	pg_report_free(fx->report);
	assert_int_equal(pg_report_new(&fx->report), 0);
	assert_non_null(fx->report->tag = pg_strdup("refs/tags/v1-final"));
	fx->pull.report = fx->report;
	assert_int_equal(pg_check_signature(&fx->pull), 0);
	assert_string_equal(only_message(fx, PG_CHECK_TAG_SIGNATURE),
			    "tag 'v1-final' calls itself 'v1' in its tag header: renamed or moved "
			    "on the server");
	assert_string_equal(detail(&fx->report->findings[0], "ref"), "refs/tags/v1-final");

	set_tag(fx, notagger, NULL);
	check(fx);
	assert_int_equal(fx->report->nfindings, 2);
	assert_string_equal(fx->report->findings[0].message, "tag 'v1' has no tagger");
	assert_string_equal(fx->report->findings[1].message, "tag 'v1' is not signed");
}

static void test_no_keyring_and_severity(void **state)
{
	fixture *fx = *state;
	char tmp[128];

	set_tag(fx, TAG_V1, SIG_GINA);
	trust(fx, FPR_GINA);
	free(fx->policy->keyring);
	fx->policy->keyring = NULL;
	check(fx);
	assert_string_equal(only_message(fx, PG_CHECK_TAG_SIGNATURE),
			    "no keyring configured: cannot verify the signature of tag 'v1'");

	/* a check turned off does not even run gpg */
	assert_non_null(fx->policy->keyring = pg_strdup(fx->keyring));
	fx->policy->severity[PG_CHECK_TAG_SIGNATURE] = PG_SEV_OFF;
	check(fx);
	assert_int_equal(fx->report->nfindings + fx->report->nsignatures, 0);
	snprintf(tmp, sizeof(tmp), "%s/tmp", fx->dir);
	assert_int_equal(access(tmp, F_OK), -1);

	fx->policy->severity[PG_CHECK_TAG_SIGNATURE] = PG_SEV_WARNING;
	set_tag(fx, TAG_V1, SIG_REX);
	trust(fx, FPR_REX);
	check(fx);
	assert_int_equal(fx->report->nfindings, 1);
	assert_int_equal(fx->report->findings[0].severity, PG_SEV_WARNING);
}

static void test_unreadable_keyring_is_an_error(void **state)
{
	fixture *fx = *state;

	set_tag(fx, TAG_V1, SIG_GINA);
	free(fx->policy->keyring);
	assert_non_null(fx->policy->keyring = pg_strdup("/nonexistent/keyring.asc"));
	assert_int_equal(pg_check_signature(&fx->pull), PG_ENOTFOUND);
	assert_non_null(strstr(pg_error_last(), "/nonexistent/keyring.asc"));
}

static void test_good_mergetag(void **state)
{
	fixture *fx = *state;
	char *text = concat(TAG_SUB, SIG_GINA_SUB);
	const pg_signature_info *s;

	set_tag(fx, TAG_V1, SIG_GINA);
	trust(fx, FPR_GINA);
	set_merge(fx, MERGED, text);
	check(fx);
	assert_int_equal(fx->report->nfindings, 0);
	assert_int_equal(fx->report->nsignatures, 2);
	s = &fx->report->signatures[1];
	assert_true(s->mergetag);
	assert_true(s->has_commit);
	assert_int_equal(pg_oid_cmp(&s->commit, &fx->merge->id), 0);
	assert_string_equal(s->tag, "sub-1");
	/* the tagger uses the key's second uid */
	assert_string_equal(s->tagger, "Gina Good <gina@kernel.example>");
	assert_string_equal(s->status, "good");
	free(text);
}

static void test_bad_mergetags(void **state)
{
	fixture *fx = *state;
	char *text = concat(TAG_SUB, SIG_GINA_SUB), *uma = concat(TAG_SUB_UMA, SIG_UMA_SUB);
	char want[200];
	const pg_finding *f;

	set_tag(fx, TAG_V1, SIG_GINA);
	trust(fx, FPR_GINA);

	/* a good mergetag copied onto a merge of something else */
	set_merge(fx, "4444444444444444444444444444444444444444", text);
	check(fx);
	assert_string_equal(only_message(fx, PG_CHECK_MERGETAG_SIGNATURE),
			    "mergetag 'sub-1' tags 111111111111, which this merge did not merge");
	f = &fx->report->findings[0];
	assert_true(f->has_commit);
	assert_string_equal(f->subject, "Merge tag 'sub-1'");

	set_merge(fx, MERGED, uma);
	check(fx);
	snprintf(want, sizeof(want), "mergetag 'sub-1' is signed by key %s, which is not in "
		 "the keyring", KEYID(FPR_UMA));
	assert_string_equal(only_message(fx, PG_CHECK_MERGETAG_SIGNATURE), want);
	assert_string_equal(fx->report->signatures[1].status, "no-key");

	set_merge(fx, MERGED, TAG_SUB);
	check(fx);
	assert_string_equal(only_message(fx, PG_CHECK_MERGETAG_SIGNATURE),
			    "mergetag 'sub-1' is not signed");

	set_merge(fx, MERGED, "garbage without headers");
	check(fx);
	assert_non_null(strstr(only_message(fx, PG_CHECK_MERGETAG_SIGNATURE),
			       "a mergetag of this merge cannot be parsed: "));

	/* off means off, whatever the mergetags hold */
	fx->policy->severity[PG_CHECK_MERGETAG_SIGNATURE] = PG_SEV_OFF;
	set_merge(fx, "4444444444444444444444444444444444444444", uma);
	check(fx);
	assert_int_equal(fx->report->nfindings, 0);
	assert_int_equal(fx->report->nsignatures, 1);
	free(text);
	free(uma);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_trusted_good_tag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_untrusted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_signer_patterns, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tagger_not_on_the_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tag_without_a_signature, setup, teardown),
		cmocka_unit_test_setup_teardown(test_huge_signature_is_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_renamed_tag_and_no_tagger, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_keyring_and_severity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_keyring_is_an_error, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_good_mergetag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_mergetags, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
