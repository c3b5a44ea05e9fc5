/* test_match.c - unit tests for commit identity and the copy/original delta. */
#include "tests/unit/unit.h"

#include "common/buf.h"
#include "verifier/match.h"
#include "verifier/pull.h"
#include "verifier/verify.h"

#define TREE_A "16f9d75b755ac2e271285acb0fc12f5d8bff4697"
#define TREE_B "923eff9636bb89b78d060a1cb2ff6c89de517d50"
#define P1 "cf76f678009c5a9922fdb121b216a4d5359cdd2e"
#define P2 "45e1abf065e4b9ef92c181909d77bf4406dd1e2a"
#define P3 "3e9474436a769fc349f8fc4ed44f37cb934aca7a"
#define LINUS "Linus Torvalds <torvalds@linux-foundation.org>"
#define MERGETAG "mergetag object " P2 "\n type commit\n tag net-6.16\n" \
	" tagger Alice Netdev <alice@example.org> 1748365200 -0700\n \n net\n"

/* Build a commit from its parts; parents is "P1 P2" etc. */
static pg_commit *commit(const char *tree, const char *parents, const char *committer_line,
			 const char *extra, const char *msg)
{
	pg_buf b = PG_BUF_INIT;
	pg_commit *c = NULL;
	const char *p = parents;

	pg_buf_printf(&b, "tree %s\n", tree);
	while (p && *p) {
		pg_buf_printf(&b, "parent %.40s\n", p);
		p += 40;
		while (*p == ' ')
			p++;
	}
	pg_buf_printf(&b, "author " LINUS " 1748631600 -0700\n");
	pg_buf_printf(&b, "committer %s\n%s\n%s", committer_line, extra, msg);
	assert_int_equal(pg_commit_parse(&c, NULL, b.ptr, b.len), 0);
	pg_buf_release(&b);
	return c;
}

static const char *const linus_at = LINUS " 1748631600 -0700";
static const char *const msg = "Merge tag 'net-6.16'\n\nPull net.\n";

static void test_identity_ignores_trailers_and_committer(void **state)
{
	pg_commit *a = commit(TREE_A, P1 " " P2, linus_at, MERGETAG, msg);
	pg_commit *b = commit(TREE_A, P3 " " P2, "Kees Cook <kees@kernel.org> 1748700000 -0700", "",
			      "Merge tag 'net-6.16'\n\nPull net.\n\nReviewed-by: K <k@k>\n");
	pg_commit *c = commit(TREE_A, P1 " " P2, linus_at, "", "Merge tag 'net-6.16'\n\nPull net!\n");

	(void)state;
	assert_true(pg_identity_hash(a) == pg_identity_hash(b));
	assert_true(pg_identity_equal(a, b));
	/* a different body is a different commit */
	assert_false(pg_identity_equal(a, c));
	assert_false(pg_identity_hash(a) == pg_identity_hash(c));
	pg_commit_free(a);
	pg_commit_free(b);
	pg_commit_free(c);
}

static void test_delta_lost_mergetag(void **state)
{
	pg_commit *orig = commit(TREE_A, P1 " " P2, linus_at, MERGETAG, msg);
	pg_commit *copy = commit(TREE_A, P1 " " P2, linus_at, "", msg);
	pg_commit_delta d;

	(void)state;
	assert_int_equal(pg_commit_delta_compute(&d, copy, orig), 0);
	assert_false(d.parents);
	assert_false(d.tree);
	assert_false(d.committer);
	assert_false(d.committer_date);
	assert_int_equal(d.ntrailers_added + d.ntrailers_removed, 0);
	assert_int_equal(d.nheaders, 1);
	assert_int_equal(d.headers[0].kind, PG_HEADER_REMOVED);
	assert_string_equal(d.headers[0].name, "mergetag");
	assert_null(d.headers[0].pull);
	assert_non_null(d.headers[0].upstream);
	pg_commit_delta_release(&d);
	pg_commit_free(orig);
	pg_commit_free(copy);
}

static void test_delta_rebase_and_trailers(void **state)
{
	pg_commit *orig = commit(TREE_A, P1, linus_at, "",
				 "net: x\n\nBody.\n\nSigned-off-by: A <a@b>\nLink: L1\n");
	pg_commit *copy = commit(TREE_B, P3, "Kees Cook <kees@kernel.org> 1748700000 +0000",
				 "encoding ISO-8859-1\n",
				 "net: x\n\nBody.\n\nSigned-off-by: A <a@b>\nReviewed-by: R <r@r>\n");
	pg_commit_delta d;

	(void)state;
	assert_int_equal(pg_commit_delta_compute(&d, copy, orig), 0);
	assert_true(d.parents);
	assert_true(d.tree);
	assert_true(d.committer);
	assert_true(d.committer_date);
	assert_false(d.author);
	assert_false(d.body);
	assert_int_equal(d.ntrailers_added, 1);
	assert_string_equal(d.trailers_added[0]->line, "Reviewed-by: R <r@r>");
	assert_int_equal(d.ntrailers_removed, 1);
	assert_string_equal(d.trailers_removed[0]->line, "Link: L1");
	assert_int_equal(d.nheaders, 1);
	assert_int_equal(d.headers[0].kind, PG_HEADER_ADDED);
	assert_string_equal(d.headers[0].name, "encoding");
	pg_commit_delta_release(&d);
	pg_commit_free(orig);
	pg_commit_free(copy);
}

static void test_delta_only_date(void **state)
{
	pg_commit *orig = commit(TREE_A, P1, linus_at, "", "x\n");
	pg_commit *copy = commit(TREE_A, P1, LINUS " 1748682000 -0700", "", "x\n");
	pg_commit_delta d;

	(void)state;
	assert_int_equal(pg_commit_delta_compute(&d, copy, orig), 0);
	assert_true(d.committer_date);
	assert_false(d.committer || d.parents || d.tree);
	assert_int_equal(d.nheaders, 0);
	pg_commit_delta_release(&d);
	pg_commit_free(orig);
	pg_commit_free(copy);
}

static void test_delta_changed_and_duplicate_trailers(void **state)
{
	/* a changed gpgsig, and a trailer that appears twice on one side only */
	pg_commit *orig = commit(TREE_A, P1, linus_at, "gpgsig AAA\n",
				 "x\n\nAcked-by: A <a@b>\n");
	pg_commit *copy = commit(TREE_A, P1, linus_at, "gpgsig BBB\n",
				 "x\n\nAcked-by: A <a@b>\nAcked-by: A <a@b>\n");
	pg_commit_delta d;

	(void)state;
	assert_int_equal(pg_commit_delta_compute(&d, copy, orig), 0);
	assert_int_equal(d.nheaders, 1);
	assert_int_equal(d.headers[0].kind, PG_HEADER_CHANGED);
	assert_int_equal(d.ntrailers_added, 1);
	assert_int_equal(d.ntrailers_removed, 0);
	pg_commit_delta_release(&d);
	pg_commit_free(orig);
	pg_commit_free(copy);
}

static void test_count_described(void **state)
{
	const char *tag = "hardening fixes\n\n"
			  "- randstruct: gcc-plugin: Fix attribute addition with GCC 15\n\n"
			  "- ubsan: integer-overflow: depend on BROKEN\n"
			  "  - a nested note\n"
			  " * overflow: Introduce __DEFINE_FLEX\n"
			  "-not a bullet\n"
			  "--- neither\n";

	(void)state;
	assert_int_equal(pg_count_described(tag, strlen(tag)), 3);
	assert_int_equal(pg_count_described("", 0), 0);
}

static void test_split_location(void **state)
{
	static const struct {
		const char *arg, *repo, *branch;
	} cases[] = {
		{ "/srv/linux.git:master", "/srv/linux.git", "master" },
		{ "/srv/linux.git", "/srv/linux.git", NULL },
		{ "https://git.kernel.org/torvalds/linux.git:master",
		  "https://git.kernel.org/torvalds/linux.git", "master" },
		{ "https://git.kernel.org/torvalds/linux.git",
		  "https://git.kernel.org/torvalds/linux.git", NULL },
		{ "git@host:linux", "git@host:linux", NULL },
		{ "git@host:pub/linux.git:for-next", "git@host:pub/linux.git", "for-next" },
		{ "./up:", "./up:", NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < PG_ARRAY_SIZE(cases); i++) {
		char *repo = NULL, *branch = NULL;

		assert_int_equal(pg_split_location(&repo, &branch, cases[i].arg), 0);
		assert_string_equal(repo, cases[i].repo);
		if (cases[i].branch)
			assert_string_equal(branch, cases[i].branch);
		else
			assert_null(branch);
		free(repo);
		free(branch);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity_ignores_trailers_and_committer),
		cmocka_unit_test(test_delta_lost_mergetag),
		cmocka_unit_test(test_delta_rebase_and_trailers),
		cmocka_unit_test(test_delta_only_date),
		cmocka_unit_test(test_delta_changed_and_duplicate_trailers),
		cmocka_unit_test(test_count_described),
		cmocka_unit_test(test_split_location),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
