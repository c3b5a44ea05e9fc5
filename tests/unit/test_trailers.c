/* test_trailers.c - unit tests for finding the trailer block. */
#include "tests/unit/unit.h"

#include "repo/trailers.h"

typedef struct parsed {
	pg_trailer *t;
	size_t n;
	size_t body_len;
} parsed;

static parsed parse(const char *msg)
{
	parsed p;

	assert_int_equal(pg_trailers_parse(&p.t, &p.n, &p.body_len, msg, strlen(msg)), 0);
	assert_int_equal(pg_trailers_body_len(msg, strlen(msg)), p.body_len);
	return p;
}

static void test_kernel_trailers(void **state)
{
	const char *msg = "overflow: Introduce __DEFINE_FLEX\n\nBody text.\n\n"
			  "Link: https://lore.kernel.org/r/1\n"
			  "Fixes: 47e36ed78406 (\"overflow: Fix direct struct member\")\n"
			  "Signed-off-by: Kees Cook <kees@kernel.org>\n";
	parsed p = parse(msg);

	(void)state;
	assert_int_equal(p.n, 3);
	assert_string_equal(p.t[0].key, "Link");
	assert_string_equal(p.t[1].value, "47e36ed78406 (\"overflow: Fix direct struct member\")");
	assert_string_equal(p.t[2].line, "Signed-off-by: Kees Cook <kees@kernel.org>");
	assert_int_equal(p.body_len, strlen("overflow: Introduce __DEFINE_FLEX\n\nBody text."));
	pg_trailers_free(p.t, p.n);
}

static void test_subject_only_has_no_trailers(void **state)
{
	parsed p = parse("Fixes: a subject that looks like a trailer\n");

	(void)state;
	assert_int_equal(p.n, 0);
	assert_int_equal(p.body_len, strlen("Fixes: a subject that looks like a trailer"));
}

static void test_prose_paragraph_is_not_a_block(void **state)
{
	parsed p = parse("subject\n\nThis is prose: it has a colon.\nAnd more text.\n");

	(void)state;
	assert_int_equal(p.n, 0);
}

static void test_cherry_pick_note_and_continuation(void **state)
{
	const char *msg = "net: add helper\n\nText.\n\n"
			  "Signed-off-by: A <a@example.org>\n"
			  "Link: https://example.org/a\n"
			  "  /continued\n"
			  "(cherry picked from commit db813ed34e4d4a08c86124cbcbf8c35120d91333)\n";
	parsed p = parse(msg);

	(void)state;
	assert_int_equal(p.n, 3);
	assert_string_equal(p.t[1].value, "https://example.org/a /continued");
	assert_string_equal(p.t[1].line, "Link: https://example.org/a\n  /continued");
	assert_string_equal(p.t[2].key, "(cherry picked from commit");
	assert_string_equal(p.t[2].value, "db813ed34e4d4a08c86124cbcbf8c35120d91333");
	pg_trailers_free(p.t, p.n);
}

static void test_mixed_block_with_signoff(void **state)
{
	/* git accepts a block where a quarter are trailers and one is a sign-off */
	const char *msg = "subject\n\nbody\n\n"
			  "[kees: tweaked the commit log]\n"
			  "Signed-off-by: Kees Cook <kees@kernel.org>\n";
	parsed p = parse(msg);

	(void)state;
	assert_int_equal(p.n, 1);
	assert_string_equal(p.t[0].key, "Signed-off-by");
	pg_trailers_free(p.t, p.n);
}

static void test_url_is_not_a_trailer(void **state)
{
	parsed p = parse("subject\n\nhttps://example.org/x\n");

	(void)state;
	assert_int_equal(p.n, 0);
}

static void test_trailer_equal(void **state)
{
	parsed a = parse("s\n\nreviewed-by: X <x@y>\n"), b = parse("s\n\nReviewed-by:   X <x@y>  \n");

	(void)state;
	assert_int_equal(a.n, 1);
	assert_int_equal(b.n, 1);
	assert_true(pg_trailer_equal(&a.t[0], &b.t[0]));
	pg_trailers_free(a.t, a.n);
	pg_trailers_free(b.t, b.n);
}

static void test_crlf_and_trailing_blank_lines(void **state)
{
	parsed p = parse("subject\r\n\r\nSigned-off-by: A <a@b>\r\n\r\n\r\n");

	(void)state;
	assert_int_equal(p.n, 1);
	assert_string_equal(p.t[0].value, "A <a@b>");
	assert_int_equal(p.body_len, strlen("subject"));
	pg_trailers_free(p.t, p.n);
}

/*
 * The body's length as pg_trailers_parse found it before it looked for the
 * block from the message's end (the lines of the whole message, the last
 * paragraph from the first of them): the reference the messages below are
 * checked against.
 */
static bool ref_token(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		char c = p[i];

		if (c == ':')
			return i && (i + 1 == len || p[i + 1] == ' ' || p[i + 1] == '\t');
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '-'))
			return false;
	}
	return false;
}

static size_t ref_body_len(const char *msg, size_t len)
{
	const char *p[64], *stop;
	size_t n[64], nlines = 0, start, i, trailers = 0, others = 0, b;
	bool strong = false;

	while (len && strchr("\n \t\r", msg[len - 1]))
		len--;
	for (stop = msg + len, p[0] = msg; p[nlines] < stop; nlines++) {
		const char *nl = memchr(p[nlines], '\n', (size_t)(stop - p[nlines]));

		assert_true(nlines < 63);
		nl = nl ? nl : stop;
		n[nlines] = (size_t)(nl - p[nlines]);
		if (n[nlines] && p[nlines][n[nlines] - 1] == '\r')
			n[nlines]--;
		p[nlines + 1] = nl + 1;
	}
	for (start = nlines; start > 0 && strspn(p[start - 1], " \t\r") < n[start - 1]; start--)
		;
	if (start == 0 || start == nlines || strchr(" \t", p[start][0]))
		return len;
	for (i = start; i < nlines; i++) {
		bool cherry = n[i] > 27 && !memcmp(p[i], "(cherry picked from commit ", 27);

		if (n[i] && strchr(" \t", p[i][0]))
			continue;
		if (cherry || ref_token(p[i], n[i])) {
			trailers++;
			strong |= cherry || !strncasecmp(p[i], "Signed-off-by:", 14);
		} else {
			others++;
		}
	}
	if (!trailers || (others && !(strong && trailers * 3 >= others)))
		return len;
	for (b = (size_t)(p[start] - msg); b && strchr("\n \t\r", msg[b - 1]); b--)
		;
	return b;
}

/* Messages of lines drawn from a few kinds: the body's length is the reference's. */
static void test_body_len_of_drawn_messages(void **state)
{
	static const char *const lines[] = {
		"", " ", "\t", "\r", "subject", "prose: with a colon", "Signed-off-by: A <a@b>",
		"Link: https://example.org/x", "  continued", "\tcontinued",
		"(cherry picked from commit 0123456789abcdef)", "Fixes:", "no-colon", "Acked-by: B\r",
	};
	char msg[512];
	unsigned seed = 14;
	size_t k, i, n, len;

	(void)state;
	for (k = 0; k < 20000; k++) {
		pg_trailer *t = NULL;
		size_t nt = 0, body = 0;

		len = 0;
		seed = seed * 1103515245u + 12345u;
		n = 1 + (seed >> 16) % 9;
		for (i = 0; i < n; i++) {
			const char *l;

			seed = seed * 1103515245u + 12345u;
			l = lines[(seed >> 16) % PG_ARRAY_SIZE(lines)];
			len += (size_t)snprintf(msg + len, sizeof(msg) - len, "%s%s", l,
						((seed >> 8) & 7) ? "\n" : "");
		}
		assert_int_equal(pg_trailers_body_len(msg, len), ref_body_len(msg, len));
		assert_int_equal(pg_trailers_parse(&t, &nt, &body, msg, len), 0);
		assert_int_equal(body, ref_body_len(msg, len));
		pg_trailers_free(t, nt);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_trailers),
		cmocka_unit_test(test_subject_only_has_no_trailers),
		cmocka_unit_test(test_prose_paragraph_is_not_a_block),
		cmocka_unit_test(test_cherry_pick_note_and_continuation),
		cmocka_unit_test(test_mixed_block_with_signoff),
		cmocka_unit_test(test_url_is_not_a_trailer),
		cmocka_unit_test(test_trailer_equal),
		cmocka_unit_test(test_crlf_and_trailing_blank_lines),
		cmocka_unit_test(test_body_len_of_drawn_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
