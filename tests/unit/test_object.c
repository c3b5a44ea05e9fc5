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

/* What pg_commit_keys_parse reads of text[0..len) is what pg_commit_parse does, or both fail. */
static void keys_agree(const char *text, size_t len)
{
	pg_commit *c = NULL;
	pg_commit_keys k, want;
	int err = pg_commit_parse(&c, NULL, text, len);

	pg_error_clear();
	assert_int_equal(pg_commit_keys_parse(&k, text, len), err);
	if (err < 0)
		return;
	pg_commit_keys_of(&want, c);
	assert_int_equal(k.name_len, want.name_len);
	assert_memory_equal(k.name, want.name, k.name_len);
	assert_int_equal(k.email_len, want.email_len);
	assert_memory_equal(k.email, want.email, k.email_len);
	assert_int_equal(k.time, want.time);
	assert_int_equal(k.offset, want.offset);
	assert_int_equal(k.body_len, want.body_len);
	assert_int_equal((size_t)(k.message - text), len - c->message_len);
	assert_int_equal(k.subject_len, want.subject_len);
	assert_memory_equal(k.subject, want.subject, k.subject_len);
	pg_commit_free(c);
}

/* A piece of a commit's text, NULs and all. */
typedef struct piece {
	const char *p;
	size_t n;
} piece;

#define PIECE(s) { s, sizeof(s) - 1 }

/* Commits of headers and messages drawn from odd pieces: the keys read alone are the parse's. */
static void test_keys_read_alone_are_the_parse_s(void **state)
{
	static const piece heads[] = {
		PIECE("tree 16f9d75b755ac2e271285acb0fc12f5d8bff4697\n"),
		PIECE("tree 16F9D75B755AC2E271285ACB0FC12F5D8BFF4697\n"),
		PIECE("tree nothex\n"),
		PIECE("parent cf76f678009c5a9922fdb121b216a4d5359cdd2e\n"),
		PIECE("parent cf76f678009c5a9922fdb121b216a4d5359cdd2\n"),
		PIECE("author Linus Torvalds <torvalds@linux-foundation.org> 1748631600 -0700\n"),
		PIECE("author  \t Pad Ded \t <  spaced@example.org > 17 +0530\n"),
		PIECE("author No Email 1234 +0000\n"),
		PIECE("author Half <open 1234 +0000\n"),
		PIECE("author Nul\0Name <nul\0mail@b> 99 -1200\n"),
		PIECE("author Folded <f@b> 5\n +0100\n"),
		PIECE("author Crlf <c@b> 1234567890 +0530\r\n"),
		PIECE("author <> 0 +0000\n"),
		PIECE("committer C O Mitter <c@example.org> 1 +0000\n"),
		PIECE("mergetag object 45e1abf065e4b9ef92c181909d77bf4406dd1e2a\n type commit\n \n sig\n"),
		PIECE("encoding ISO-8859-1\n"),
		PIECE("weird\n"),
	};
	static const piece bodies[] = {
		PIECE(""),
		PIECE("\n"),
		PIECE("\nsubject\n"),
		PIECE("\n\n \n  spaced subject \t\nbody\n"),
		PIECE("\nsub\0ject\n\nSigned-off-by: A <a@b>\n"),
		PIECE("\nfs: fix 0123456789ab\n\nCommit deadbeefcafe broke it.\n\n"
		      "Fixes: 0123456789ab (\"x\")\nSigned-off-by: A <a@b>\n"),
		PIECE("\r\nsubject with CR\r\n\r\nSigned-off-by: Crlf <c@b>\r\n"),
		PIECE("\nonly\n\nprose: here\nmore\n\n\n"),
	};
	char text[1024], *copy;
	unsigned seed = 32;
	size_t k, i, n, len;
	const piece *h;

	(void)state;
	for (k = 0; k < 20000; k++) {
		len = 0;
		seed = seed * 1103515245u + 12345u;
		n = (seed >> 16) % 6;
		for (i = 0; i <= n; i++) {
			seed = seed * 1103515245u + 12345u;
			h = &heads[i == 0 && (seed & 3) ? 0 : (seed >> 16) % PG_ARRAY_SIZE(heads)];
			memcpy(text + len, h->p, h->n);
			len += h->n;
		}
		seed = seed * 1103515245u + 12345u;
		h = &bodies[(seed >> 16) % PG_ARRAY_SIZE(bodies)];
		memcpy(text + len, h->p, h->n);
		len += h->n;
		/* exactly len bytes, no NUL after: a read past the end is one ASan sees */
		copy = malloc(len);
		assert_non_null(copy);
		memcpy(copy, text, len);
		keys_agree(copy, len);
		free(copy);
	}
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
		cmocka_unit_test(test_keys_read_alone_are_the_parse_s),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
