/* test_merge_msg.c - unit tests for the merge message: its shape, and the Link: trailer naming the pull mail. */
#include "tests/unit/unit.h"

#include "pipeline/tree.h"
#include "repo/trailers.h"

static const char TAG[] =
	"object 544bbb511a995040dd5b32148a5e648cbaedb43a\n"
	"type commit\n"
	"tag hardening-v6.16-rc1-fix1-take2\n"
	"tagger Kees Cook <kees@kernel.org> 1748793600 -0700\n"
	"\n"
	"hardening fixes for v6.16-rc1\n"
	"\n"
	"- randstruct: gcc-plugin: Fix attribute addition with GCC 15\n";

static const char *const SUBJECTS[] = {
	"randstruct: gcc-plugin: Fix attribute addition",
	"wifi: iwlwifi: mld: Work around Clang loop unrolling bug",
};

static const char WITHOUT_LINK[] =
	"Merge tag 'hardening-v6.16-rc1-fix1-take2' of git://git.kernel.org/kees\n"
	"\n"
	"Pull hardening fixes for v6.16-rc1 from Kees Cook:\n"
	"\n"
	" - randstruct: gcc-plugin: Fix attribute addition with GCC 15\n"
	"\n"
	"* tag 'hardening-v6.16-rc1-fix1-take2' of git://git.kernel.org/kees:\n"
	"  randstruct: gcc-plugin: Fix attribute addition\n"
	"  wifi: iwlwifi: mld: Work around Clang loop unrolling bug\n";

/* The message of the fixture's tag and subjects, for the pull mail message_id (NULL: none). */
static char *message(const char *message_id, size_t nsubjects)
{
	pg_merge_opts o = PG_MERGE_OPTS_INIT;
	const char *subjects[60];
	pg_tagobj *tag = NULL;
	pg_buf out = PG_BUF_INIT;
	size_t i;

	for (i = 0; i < nsubjects && i < 60; i++)
		subjects[i] = SUBJECTS[i % 2];
	o.tag_name = "hardening-v6.16-rc1-fix1-take2";
	o.url = "git://git.kernel.org/kees";
	o.message_id = message_id;
	assert_int_equal(pg_tagobj_parse(&tag, TAG, strlen(TAG)), 0);
	assert_int_equal(pg_merge_message(&out, &o, tag, subjects, nsubjects), 0);
	pg_tagobj_free(tag);
	return pg_buf_detach(&out);
}

static void test_without_mail_no_link(void **state)
{
	char *msg = message(NULL, 2);

	(void)state;
	assert_string_equal(msg, WITHOUT_LINK);
	free(msg);
}

/* After the shortlog, a paragraph of its own: the trailer block git and the kernel's tools read. */
static void test_link_is_the_last_paragraph(void **state)
{
	char *msg = message("<202506010930.fix1@keescook>", 2);
	size_t n = strlen(WITHOUT_LINK), ntrailers = 0, body_len = 0;
	pg_trailer *t = NULL;

	(void)state;
	assert_memory_equal(msg, WITHOUT_LINK, n);
	assert_string_equal(msg + n, "\nLink: https://lore.kernel.org/r/202506010930.fix1@keescook\n");
	assert_int_equal(pg_trailers_parse(&t, &ntrailers, &body_len, msg, strlen(msg)), 0);
	assert_int_equal(ntrailers, 1);
	assert_string_equal(t[0].key, "Link");
	assert_string_equal(t[0].value, "https://lore.kernel.org/r/202506010930.fix1@keescook");
	assert_int_equal(body_len, n - 1);
	pg_trailers_free(t, ntrailers);
	free(msg);
}

/* A shortlog cut short ends in "...", and the Link still comes after it. */
static void test_link_after_a_long_shortlog(void **state)
{
	char *msg = message("<a/b@c>", 51);
	const char *tail = "  ...\n\nLink: https://lore.kernel.org/r/a%2Fb@c\n";

	(void)state;
	assert_true(strlen(msg) > strlen(tail));
	assert_string_equal(msg + strlen(msg) - strlen(tail), tail);
	free(msg);
}

/*
 * A Message-Id anyone can write: none of these adds a line, or anything
 * else, to the message: it is the message without a mail.
 */
static void test_hostile_ids_add_nothing(void **state)
{
	static const char *const hostile[] = {
		"<a@b>\nSigned-off-by: Linus Torvalds <torvalds@linux-foundation.org>",
		"<a\n@b>", "<a\r@b>", "<a\rSigned-off-by: x@y>", "<a b@c>", "<a\t@b>", "<a\v@b>",
		"<a\f@b>", "<a\033[2J@b>", "<a\177@b>", "<\342\200\256@b>", "<a@b><c@d>",
		"<a@b> <c@d>", "<<a@b>>", "a@b", "<a@b", "a@b>", "<ab>", "<@b>", "<a@>", "<>", "",
		"\n", "<a@b>\n\nLink: https://evil.example/",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(hostile) / sizeof(*hostile); i++) {
		char *msg = message(hostile[i], 2);

		if (strcmp(msg, WITHOUT_LINK))
			fail_msg("Message-Id %zu changed the message:\n%s", i, msg);
		free(msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_without_mail_no_link),
		cmocka_unit_test(test_link_is_the_last_paragraph),
		cmocka_unit_test(test_link_after_a_long_shortlog),
		cmocka_unit_test(test_hostile_ids_add_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
