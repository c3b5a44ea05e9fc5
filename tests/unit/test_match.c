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

/* What filter-repo counts as a quoted id: a whole word of 7 or more lower-case hex digits. */
static void test_quoted_id_next(void **state)
{
	static const char text[] = "This reverts commit 1234567abc. See deadbee, cafe, "
				   "0123456789abcdefX, _abcdef12, ABCDEF1234, abcdef1_, "
				   "id=fedcba9876543210 and 20250101.";
	size_t at = 0, start, n, found = 0;
	const char *want[] = { "1234567abc", "deadbee", "fedcba9876543210", "20250101" };

	(void)state;
	while (pg_quoted_id_next(text, strlen(text), at, &start, &n)) {
		assert_true(found < PG_ARRAY_SIZE(want));
		assert_int_equal(n, strlen(want[found]));
		assert_memory_equal(text + start, want[found], n);
		found++;
		at = start + n;
	}
	assert_int_equal(found, PG_ARRAY_SIZE(want));
	assert_int_equal(pg_quoted_id_next("abcdef", 6, 0, &start, &n), 0);
	assert_int_equal(pg_quoted_id_next("", 0, 0, &start, &n), 0);

	assert_true(pg_text_equal_but_ids("revert 1234567 now", 18, "revert abcdef0123 now", 21));
	assert_false(pg_text_equal_but_ids("revert 1234567 now", 18, "revert 1234567 no", 17));
	/* a word that is not an id must stay the same */
	assert_false(pg_text_equal_but_ids("a 1234567", 9, "a 123456g", 9));
	assert_false(pg_text_equal_but_ids("a 1234567", 9, "a", 1));
}

/*
 * git-filter-repo rewrites the ids it knows in the messages it copies: the
 * copy of a revert names the copy of what it reverts, and a Fixes: the copy
 * of what it fixes.  The identity holds; the delta names each changed id.
 */
static void test_identity_and_delta_across_rewritten_ids(void **state)
{
	pg_commit *orig = commit(TREE_A, P1, linus_at, "",
				 "Revert \"net: x\"\n\nThis reverts commit "
				 "1111111aaaaaaa2222222bbbbbbb3333333ccccc.\n"
				 "Commit 4444444dddd (\"net: y\") broke it.\n\n"
				 "Fixes: 4444444dddd (\"net: y\")\nSigned-off-by: A <a@b>\n");
	pg_commit *copy = commit(TREE_A, P3, "Kees Cook <kees@kernel.org> 1748700000 -0700", "",
				 "Revert \"net: x\"\n\nThis reverts commit "
				 "9999999eeeeeee8888888fffffff7777777aaaaa.\n"
				 "Commit 5555555bbbb (\"net: y\") broke it.\n\n"
				 "Fixes: 5555555bbbb (\"net: y\")\nSigned-off-by: A <a@b>\n"
				 "Reviewed-by: R <r@r>\n");
	pg_commit *other = commit(TREE_A, P1, linus_at, "",
				  "Revert \"net: z\"\n\nThis reverts commit "
				  "1111111aaaaaaa2222222bbbbbbb3333333ccccc.\n");
	pg_commit_delta d;

	(void)state;
	assert_true(pg_identity_equal(copy, orig));
	assert_true(pg_identity_hash(copy) == pg_identity_hash(orig));
	assert_false(pg_identity_equal(other, orig));
	assert_int_equal(pg_commit_delta_compute(&d, copy, orig), 0);
	assert_true(d.body);
	/* the Fixes: is the same trailer with another id: neither added nor removed */
	assert_int_equal(d.ntrailers_added, 1);
	assert_string_equal(d.trailers_added[0]->line, "Reviewed-by: R <r@r>");
	assert_int_equal(d.ntrailers_removed, 0);
	/* each changed id once, in order: the body's two (one repeats in the Fixes:) */
	assert_int_equal(d.nquoted, 2);
	assert_memory_equal(d.quoted[0].pull, "9999999eeeeeee8888888fffffff7777777aaaaa", 40);
	assert_int_equal(d.quoted[0].upstream_len, 40);
	assert_memory_equal(d.quoted[0].upstream, "1111111aaaaaaa2222222bbbbbbb3333333ccccc", 40);
	assert_int_equal(d.quoted[1].pull_len, 11);
	assert_memory_equal(d.quoted[1].pull, "5555555bbbb", 11);
	assert_memory_equal(d.quoted[1].upstream, "4444444dddd", 11);
	pg_commit_delta_release(&d);
	pg_commit_free(orig);
	pg_commit_free(copy);
	pg_commit_free(other);
}

/*
 * The story: two copies (one a merge that lost its mergetag), one commit of
 * the pull's own; a foreign committer on a copy follows from it, a missing
 * sign-off on the pull's own commit does not, and an error under a copy
 * reported as a warning stays a root cause.
 */
static void test_story(void **state)
{
	pg_commit *orig_merge = commit(TREE_A, P1 " " P2, linus_at, MERGETAG, msg);
	pg_commit *copy_merge = commit(TREE_A, P3 " " P2, linus_at, "", msg);
	pg_commit *orig = commit(TREE_A, P1, linus_at, "", "net: x\n");
	pg_commit *copy = commit(TREE_B, P3, linus_at, "", "net: x\n");
	pg_commit *own = commit(TREE_B, P3, "Kees Cook <kees@kernel.org> 1748700000 -0700", "", "mine\n");
	pg_commit *commits[3];
	const pg_commit *original[3];
	pg_policy *policy = NULL;
	pg_pull p;
	pg_buf text = PG_BUF_INIT;
	pg_finding *f;

	(void)state;
	copy_merge->id.id[0] = 1;
	copy->id.id[0] = 2;
	own->id.id[0] = 3;
	commits[0] = copy;
	commits[1] = copy_merge;
	commits[2] = own;
	original[0] = orig;
	original[1] = orig_merge;
	original[2] = NULL;
	memset(&p, 0, sizeof(p));
	assert_int_equal(pg_policy_new_default(&policy), 0);
	p.policy = policy;
	assert_int_equal(pg_report_new(&p.report), 0);
	p.commits = commits;
	p.ncommits = 3;
	p.original = original;
	p.report->ncommits = 3;
	p.report->nmerges = 1;

	assert_int_equal(pg_report_add(NULL, p.report, PG_CHECK_REWRITTEN_UPSTREAM, PG_SEV_ERROR,
				       copy, "rewritten copy"), 0);
	p.report->findings[0].has_upstream = true;
	assert_int_equal(pg_report_add(NULL, p.report, PG_CHECK_REWRITTEN_UPSTREAM, PG_SEV_WARNING,
				       copy_merge, "rewritten copy"), 0);
	p.report->findings[1].has_upstream = true;
	assert_int_equal(pg_report_add(NULL, p.report, PG_CHECK_FOREIGN_COMMITTER, PG_SEV_ERROR,
				       copy, "committed by Linus"), 0);
	assert_int_equal(pg_report_add(NULL, p.report, PG_CHECK_FOREIGN_COMMITTER, PG_SEV_ERROR,
				       copy_merge, "committed by Linus"), 0);
	assert_int_equal(pg_report_add(NULL, p.report, PG_CHECK_BACK_MERGE, PG_SEV_WARNING,
				       copy_merge, "merges upstream"), 0);
	assert_int_equal(pg_report_add(&f, p.report, PG_CHECK_SIGNOFF, PG_SEV_ERROR, own,
				       "no Signed-off-by"), 0);

	assert_int_equal(pg_pull_story(&p), 0);
	assert_true(p.report->has_summary);
	assert_int_equal(p.report->summary.rewritten, 2);
	assert_int_equal(p.report->summary.rewritten_merges, 1);
	assert_int_equal(p.report->summary.dropped_mergetags, 1);
	assert_int_equal(p.report->summary.own, 1);
	assert_int_equal(p.report->findings[2].implied_by, 1);  /* under the copy's finding */
	assert_int_equal(p.report->findings[3].implied_by, 0);  /* an error under a warning */
	assert_int_equal(p.report->findings[4].implied_by, 2);
	assert_int_equal(p.report->findings[5].implied_by, 0);  /* the pull's own commit */
	assert_int_equal(pg_report_count_roots(p.report, PG_SEV_ERROR), 3);
	assert_int_equal(pg_report_count_roots(p.report, PG_SEV_WARNING), 1);
	assert_int_equal(pg_report_count_implied(p.report), 2);
	assert_int_equal(pg_report_verdict(p.report), PG_VERDICT_REJECT);

	assert_int_equal(pg_summary_format(&text, p.report), 0);
	assert_string_equal(text.ptr, "the pull re-creates 2 upstream commits under new ids (1 merge, "
			    "1 signed tag dropped): without them it should carry 1 commit");
	pg_buf_clear(&text);
	assert_int_equal(pg_report_format_text(&text, p.report), 0);
	assert_non_null(strstr(text.ptr, "summary:  the pull re-creates 2 upstream commits"));
	assert_true(strstr(text.ptr, "summary:") == text.ptr);
	assert_non_null(strstr(text.ptr, "\n    also: warning back-merge: merges upstream\n"));
	assert_non_null(strstr(text.ptr, "\nverdict: reject (3 errors, 1 warning; 2 more findings "
				      "follow from them)\n"));
	assert_non_null(strstr(text.ptr, ", 3 commits (1 merge)\n"));

	pg_buf_release(&text);
	pg_report_free(p.report);
	pg_policy_free(policy);
	pg_commit_free(orig_merge);
	pg_commit_free(copy_merge);
	pg_commit_free(orig);
	pg_commit_free(copy);
	pg_commit_free(own);
}

/* A date rewrite keeps the fallback's key (author and subject) and changes the identity. */
static void test_author_subject_survives_a_new_date(void **state)
{
	pg_commit *orig = commit(TREE_A, P1, linus_at, "", "net: x\n\nWhy.\n");
	pg_commit *redated = NULL, *other = commit(TREE_A, P1, linus_at, "", "net: y\n\nWhy.\n");
	static const char text[] = "tree " TREE_B "\nparent " P3 "\n"
		"author " LINUS " 1750000000 +0200\n"
		"committer Kees Cook <kees@kernel.org> 1750000000 +0200\n\nnet: x\n\nWhy.\n";
	pg_commit_delta d;

	(void)state;
	assert_int_equal(pg_commit_parse(&redated, NULL, text, strlen(text)), 0);
	assert_false(pg_identity_equal(orig, redated));
	assert_true(pg_author_subject_hash(orig) == pg_author_subject_hash(redated));
	assert_true(pg_author_subject_equal(orig, redated));
	assert_false(pg_author_subject_hash(orig) == pg_author_subject_hash(other));
	assert_false(pg_author_subject_equal(orig, other));
	/* the two keys differ even for one commit: they never share an index */
	assert_false(pg_author_subject_hash(orig) == pg_identity_hash(orig));

	assert_int_equal(pg_commit_delta_compute(&d, redated, orig), 0);
	assert_true(d.author_date);
	assert_true(d.author);
	assert_false(d.message);
	pg_commit_delta_release(&d);
	assert_int_equal(pg_commit_delta_compute(&d, other, orig), 0);
	assert_false(d.author_date);
	assert_true(d.message);
	pg_commit_delta_release(&d);
	pg_commit_free(orig);
	pg_commit_free(redated);
	pg_commit_free(other);
}

static void expect_label(const char *text, const char *id)
{
	pg_backport_label l;

	assert_int_equal(pg_backport_label_next(&l, text, strlen(text), 0), 1);
	assert_int_equal(l.id_len, strlen(id));
	assert_memory_equal(text + l.id, id, l.id_len);
	assert_true(l.line + l.line_len <= strlen(text));
}

static void expect_none(const char *text)
{
	pg_backport_label l;

	assert_int_equal(pg_backport_label_next(&l, text, strlen(text), 0), 0);
}

static void test_backport_label(void **state)
{
	pg_backport_label l;
	static const char two[] = "commit " P1 " upstream.\n\nx\n\n(cherry picked from commit 1234567)\n";

	(void)state;
	expect_label("net: x\n\n(cherry picked from commit " P1 ")\n", P1);
	expect_label("net: x\n\ncommit " P2 " upstream.\n\nWhy.\n", P2);
	expect_label("net: x\n\n[ Upstream commit 3e947443 ]\n\nWhy.\n", "3e947443");
	expect_label("net: x\n\nBackported-from: abcdef0\n", "abcdef0");
	expect_label("net: x\n\nBackported-from: abcdef0 (\"net: x\")\n", "abcdef0");
	/* each one in turn, and the line it is on */
	assert_int_equal(pg_backport_label_next(&l, two, strlen(two), 0), 1);
	assert_int_equal(l.line, 0);
	assert_int_equal(l.line_len, strlen("commit " P1 " upstream."));
	assert_int_equal(pg_backport_label_next(&l, two, strlen(two), l.line + l.line_len), 1);
	assert_memory_equal(two + l.id, "1234567)", 8);
	assert_int_equal(l.id_len, 7);
	assert_int_equal(pg_backport_label_next(&l, two, strlen(two), l.line + l.line_len), 0);

	/* ids quoted in prose, too short, not hex or not alone are no label */
	expect_none("Commit 1234567 (\"x\") broke it.\n");
	expect_none("(cherry picked from commit 123456)");
	expect_none("(cherry picked from commit 123456g)");
	expect_none("commit 1234567 upstream, reworked\n");
	expect_none("Backported-from: 1234567x\n");
}

/* A labelled backport is the pull's own in the story: no copy to count, nothing to remove. */
static void test_story_labelled_backport(void **state)
{
	pg_commit *orig = commit(TREE_A, P1, linus_at, "", "net: x\n");
	pg_commit *pick = commit(TREE_B, P3, "Kees Cook <kees@kernel.org> 1748700000 -0700", "",
				 "net: x\n\n(cherry picked from commit " P1 ")\n");
	pg_commit *commits[1] = { pick };
	const pg_commit *original[1] = { orig };
	bool labelled[1] = { true };
	pg_policy *policy = NULL;
	pg_buf text = PG_BUF_INIT;
	pg_pull p;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(pg_policy_new_default(&policy), 0);
	assert_int_equal(pg_report_new(&p.report), 0);
	p.policy = policy;
	p.commits = commits;
	p.ncommits = 1;
	p.original = original;
	p.labelled = labelled;
	p.report->ncommits = 1;
	assert_int_equal(pg_pull_severity(&p, PG_CHECK_LABELLED_BACKPORT), PG_SEV_OFF);
	assert_int_equal(pg_pull_story(&p), 0);
	assert_int_equal(p.report->summary.rewritten, 0);
	assert_int_equal(p.report->summary.own, 1);
	assert_int_equal(pg_summary_format(&text, p.report), 0);
	assert_string_equal(text.ptr, "the pull carries 1 commit (0 merges) and re-creates no "
			    "upstream commit");
	pg_buf_release(&text);
	pg_report_free(p.report);
	pg_policy_free(policy);
	pg_commit_free(orig);
	pg_commit_free(pick);
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
		cmocka_unit_test(test_quoted_id_next),
		cmocka_unit_test(test_identity_and_delta_across_rewritten_ids),
		cmocka_unit_test(test_story),
		cmocka_unit_test(test_delta_lost_mergetag),
		cmocka_unit_test(test_delta_rebase_and_trailers),
		cmocka_unit_test(test_delta_only_date),
		cmocka_unit_test(test_delta_changed_and_duplicate_trailers),
		cmocka_unit_test(test_split_location),
		cmocka_unit_test(test_author_subject_survives_a_new_date),
		cmocka_unit_test(test_backport_label),
		cmocka_unit_test(test_story_labelled_backport),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
