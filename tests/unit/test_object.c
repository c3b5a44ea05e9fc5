/* test_object.c - unit tests for commit, tag and identity parsing. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "repo/object.h"

static const char merge_text[] =
	"tree 16f9d75b755ac2e271285acb0fc12f5d8bff4697\n"
	"parent cf76f678009c5a9922fdb121b216a4d5359cdd2e\n"
	"parent 45e1abf065e4b9ef92c181909d77bf4406dd1e2a\n"
	"author Linus Torvalds <torvalds@linux-foundation.org> 1748631600 -0700\n"
	"committer Linus Torvalds <torvalds@linux-foundation.org> 1748631600 -0700\n"
	"mergetag object 45e1abf065e4b9ef92c181909d77bf4406dd1e2a\n"
	" type commit\n"
	" tag drm-next-6.16\n"
	" tagger Erin Drm <erin@example.org> 1748624400 -0700\n"
	" \n"
	" drm-next-6.16 for the merge window\n"
	" -----BEGIN PGP SIGNATURE-----\n"
	" \n"
	" iHUEABYIAB0WIQQD\n"
	" -----END PGP SIGNATURE-----\n"
	"\n"
	"Merge tag 'drm-next-6.16' of git://git.kernel.org/drm\n"
	"\n"
	"Pull drm updates.\n";

static void test_ident(void **state)
{
	pg_ident id;

	(void)state;
	assert_int_equal(pg_ident_parse(&id, "Kees Cook <kees@kernel.org> 1748643652 -0700", 45), 0);
	assert_string_equal(id.name, "Kees Cook");
	assert_string_equal(id.email, "kees@kernel.org");
	assert_true(id.time == 1748643652);
	assert_int_equal(id.offset, -420);
	pg_ident_release(&id);

	/* no email, no date: kept as a name, never a crash */
	assert_int_equal(pg_ident_parse(&id, "garbage", 7), 0);
	assert_string_equal(id.name, "garbage");
	assert_string_equal(id.email, "");
	assert_true(id.time == 0);
	pg_ident_release(&id);

	/* an unterminated email */
	assert_int_equal(pg_ident_parse(&id, "A <a@b", 6), 0);
	assert_string_equal(id.email, "");
	pg_ident_release(&id);
}

static void test_time_format(void **state)
{
	pg_buf b = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_time_format(&b, 1748643652, -420), 0);
	assert_string_equal(b.ptr, "2025-05-30 15:20:52 -0700");
	pg_buf_release(&b);
}

static void test_merge_with_mergetag(void **state)
{
	pg_commit *c = NULL;
	pg_tagobj *t = NULL;
	char hex[PG_OID_HEXSZ + 1];

	(void)state;
	assert_int_equal(pg_commit_parse(&c, NULL, merge_text, strlen(merge_text)), 0);
	assert_int_equal(c->nparents, 2);
	pg_oid_tohex(hex, &c->parents[1]);
	assert_string_equal(hex, "45e1abf065e4b9ef92c181909d77bf4406dd1e2a");
	assert_int_equal(c->nheaders, 1);
	assert_string_equal(c->headers[0].name, "mergetag");
	assert_int_equal(pg_commit_count_header(c, "mergetag"), 1);
	assert_string_equal(c->subject, "Merge tag 'drm-next-6.16' of git://git.kernel.org/drm");
	assert_string_equal(c->author.name, "Linus Torvalds");

	/* the mergetag value is a whole tag object with its continuation unfolded */
	assert_int_equal(pg_tagobj_parse(&t, c->headers[0].value, c->headers[0].value_len), 0);
	assert_string_equal(t->tag, "drm-next-6.16");
	assert_string_equal(t->type, "commit");
	assert_true(t->has_tagger);
	assert_string_equal(t->tagger.email, "erin@example.org");
	assert_non_null(t->signature);
	assert_true(!strncmp(t->signature, "-----BEGIN PGP SIGNATURE-----", 29));
	assert_string_equal(t->message, "drm-next-6.16 for the merge window\n");
	/* the payload is everything before the signature */
	assert_true(t->payload_len + t->signature_len == c->headers[0].value_len);
	pg_tagobj_free(t);
	pg_commit_free(c);
}

static void test_commit_with_nul_and_garbage(void **state)
{
	static const char text[] = "tree 16f9d75b755ac2e271285acb0fc12f5d8bff4697\n"
				   "author \x1b[31mEvil\x1b[0m\n"
				   "weird header with no end";
	static const char withnul[] = "tree 16f9d75b755ac2e271285acb0fc12f5d8bff4697\n"
				      "author A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\n"
				      "sub\0ject\n";
	pg_commit *c = NULL;

	(void)state;
	assert_int_equal(pg_commit_parse(&c, NULL, text, strlen(text)), 0);
	assert_string_equal(c->author.name, "\x1b[31mEvil\x1b[0m");
	assert_string_equal(c->committer.email, "");
	assert_int_equal(c->message_len, 0);
	pg_commit_free(c);

	assert_int_equal(pg_commit_parse(&c, NULL, withnul, sizeof(withnul) - 1), 0);
	assert_int_equal(c->message_len, 9);
	assert_memory_equal(c->message, "sub\0ject\n", 9);
	pg_commit_free(c);
}

static void test_bad_tree_is_invalid(void **state)
{
	static const char text[] = "tree nothex\nauthor A <a@b> 1 +0000\n\nmsg\n";
	pg_commit *c = NULL;

	(void)state;
	assert_int_equal(pg_commit_parse(&c, NULL, text, strlen(text)), PG_EINVALID);
	assert_null(c);
}

/* What git never writes is flagged for the caller to refuse; the parse itself succeeds. */
static void test_malformed_commits(void **state)
{
#define T "tree 16f9d75b755ac2e271285acb0fc12f5d8bff4697\n"
#define P1 "parent cf76f678009c5a9922fdb121b216a4d5359cdd2e\n"
#define P2 "parent 45e1abf065e4b9ef92c181909d77bf4406dd1e2a\n"
#define A "author A <a@b> 1 +0000\n"
#define C "committer C <c@d> 1 +0000\n"
	static const struct {
		const char *text, *why;
	} cases[] = {
		{ T P1 P2 A C "\nfine\n", NULL },
		{ T P1 P1 A C "\nx\n", "parent cf76f678009c5a9922fdb121b216a4d5359cdd2e listed twice" },
		{ T P1 P2 P2 P1 A C "\nx\n",
		  "parent 45e1abf065e4b9ef92c181909d77bf4406dd1e2a listed twice" },
		{ T T P1 A C "\nx\n", "more than one tree header" },
		{ T P1 A A C "\nx\n", "more than one author header" },
		{ T P1 A C "committer Evil <e@x> 2 +0000\n\nx\n", "more than one committer header" },
		{ P1 A C "\nx\n", "no tree header" },
	};
	pg_buf many = PG_BUF_INIT;
	pg_commit *c = NULL;
	size_t i;

	(void)state;
	for (i = 0; i < PG_ARRAY_SIZE(cases); i++) {
		assert_int_equal(pg_commit_parse(&c, NULL, cases[i].text, strlen(cases[i].text)), 0);
		if (cases[i].why)
			assert_string_equal(c->malformed, cases[i].why);
		else
			assert_null(c->malformed);
		pg_commit_free(c);
	}
	/* the first author stays the author, as git reads it */
	assert_int_equal(pg_commit_parse(&c, NULL, cases[4].text, strlen(cases[4].text)), 0);
	assert_string_equal(c->author.name, "A");
	pg_commit_free(c);

	/* 10,000 copies of one parent: one problem, found in linear time */
	assert_int_equal(pg_buf_puts(&many, T), 0);
	for (i = 0; i < 10000; i++)
		assert_int_equal(pg_buf_puts(&many, P2), 0);
	assert_int_equal(pg_buf_puts(&many, A C "\nx\n"), 0);
	assert_int_equal(pg_commit_parse(&c, NULL, many.ptr, many.len), 0);
	assert_int_equal(c->nparents, 10000);
	assert_string_equal(c->malformed, "parent 45e1abf065e4b9ef92c181909d77bf4406dd1e2a listed twice");
	pg_commit_free(c);
	pg_buf_release(&many);
#undef T
#undef P1
#undef P2
#undef A
#undef C
}

static void test_tag_without_signature(void **state)
{
	static const char text[] = "object 45e1abf065e4b9ef92c181909d77bf4406dd1e2a\n"
				   "type commit\ntag v1\n\nplain message\n";
	static const char notag[] = "object 45e1abf065e4b9ef92c181909d77bf4406dd1e2a\n\nx\n";
	pg_tagobj *t = NULL;

	(void)state;
	assert_int_equal(pg_tagobj_parse(&t, text, strlen(text)), 0);
	assert_null(t->signature);
	assert_false(t->has_tagger);
	assert_string_equal(t->message, "plain message\n");
	assert_int_equal(t->payload_len, strlen(text));
	pg_tagobj_free(t);
	assert_int_equal(pg_tagobj_parse(&t, notag, strlen(notag)), PG_EINVALID);
}

static void test_oid_hex(void **state)
{
	pg_oid id;
	char hex[PG_OID_HEXSZ + 1];

	(void)state;
	assert_int_equal(pg_oid_fromhex(&id, "45E1ABF065E4B9EF92C181909D77BF4406DD1E2A", 40), 0);
	pg_oid_tohex(hex, &id);
	assert_string_equal(hex, "45e1abf065e4b9ef92c181909d77bf4406dd1e2a");
	pg_oid_toshort(hex, &id);
	assert_string_equal(hex, "45e1abf065e4");
	assert_int_equal(pg_oid_fromhex(&id, "45e1", 4), PG_EINVALID);
	assert_int_equal(pg_oid_fromhex(&id, "zz" "e1abf065e4b9ef92c181909d77bf4406dd1e2a", 40), PG_EINVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ident),
		cmocka_unit_test(test_time_format),
		cmocka_unit_test(test_merge_with_mergetag),
		cmocka_unit_test(test_commit_with_nul_and_garbage),
		cmocka_unit_test(test_bad_tree_is_invalid),
		cmocka_unit_test(test_malformed_commits),
		cmocka_unit_test(test_tag_without_signature),
		cmocka_unit_test(test_oid_hex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
