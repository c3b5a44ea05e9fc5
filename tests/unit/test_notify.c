/* test_notify.c - unit tests for the approval notice's message: its subject and body, real or SIMULATED. */
#include "tests/unit/unit.h"

#include "common/buf.h"
#include "common/error.h"
#include "server/notify.h"

static const char request[] =
	"From: Kees Cook <kees@kernel.org>\n"
	"To: Linus Torvalds <torvalds@linux-foundation.org>\n"
	"Cc: linux-hardening@vger.kernel.org\n"
	"Subject: [GIT PULL] hardening fixes for v6.16-rc1\n"
	"Message-ID: <fix1@keescook>\n"
	"\n"
	"Please pull.\n";

static const char from[] = "Linus Torvalds <torvalds@linux-foundation.org>";

/* The notice for the request (or for mail), its headers and body in *msg. */
static void compose(pg_buf *msg, const char *mail, bool simulated)
{
	pg_buf rcpts = PG_BUF_INIT;
	size_t n = 0;

	assert_int_equal(pg_notify_compose(msg, &rcpts, &n, from, mail, strlen(mail),
					   "Merged, thanks.\n", 7, 1748700000, simulated, NULL), 0);
	assert_int_equal(n, 2);
	pg_buf_release(&rcpts);
}

/* The body: what follows the blank line after the headers. */
static const char *body(const pg_buf *msg)
{
	const char *b = strstr(msg->ptr, "\r\n\r\n");

	assert_non_null(b);
	return b + 4;
}

static void test_a_real_run_s_notice_is_a_plain_reply(void **state)
{
	pg_buf msg = PG_BUF_INIT;

	(void)state;
	compose(&msg, request, false);
	assert_non_null(strstr(msg.ptr, "\r\nSubject: Re: [GIT PULL] hardening fixes for v6.16-rc1\r\n"));
	assert_string_equal(body(&msg), "Merged, thanks.\r\n");
	assert_null(strstr(msg.ptr, "SIMULATED"));
	pg_buf_release(&msg);
}

static void test_a_stand_in_s_notice_says_simulated_in_subject_and_body(void **state)
{
	pg_buf msg = PG_BUF_INIT;

	(void)state;
	compose(&msg, request, true);
	assert_non_null(strstr(msg.ptr, "\r\nSubject: Re: [SIMULATED] [GIT PULL] hardening fixes for "
			       "v6.16-rc1\r\n"));
	assert_string_equal(body(&msg), "SIMULATED: stand-in build and boot scripts ran in place of "
			    "pullgate's own,\r\nso nothing was really built or booted before this "
			    "approval.\r\n\r\nMerged, thanks.\r\n");
	pg_buf_release(&msg);
}

/* A request that is itself a reply: "Re:" once, the mark after it. */
static void test_the_mark_follows_one_re(void **state)
{
	pg_buf msg = PG_BUF_INIT, mail = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_buf_puts(&mail, "From: kees@kernel.org\nCc: lkml@vger.kernel.org\n"
				     "Subject: RE: [GIT PULL] v2\n\nx\n"), 0);
	compose(&msg, mail.ptr, false);
	assert_non_null(strstr(msg.ptr, "\r\nSubject: RE: [GIT PULL] v2\r\n"));
	pg_buf_clear(&msg);
	compose(&msg, mail.ptr, true);
	assert_non_null(strstr(msg.ptr, "\r\nSubject: Re: [SIMULATED] [GIT PULL] v2\r\n"));
	pg_buf_release(&msg);
	pg_buf_release(&mail);
}

/* The Message-ID header's value in a composed notice, into out. */
static void message_id(char *out, size_t n, const char *mail, const char *text, int64_t id,
		       time_t now)
{
	pg_buf msg = PG_BUF_INIT, rcpts = PG_BUF_INIT;
	const char *h, *end;
	size_t nr = 0;

	assert_int_equal(pg_notify_compose(&msg, &rcpts, &nr, from, mail, strlen(mail), text, id,
					   now, false, NULL), 0);
	assert_non_null(h = strstr(msg.ptr, "\r\nMessage-ID: <pullgate."));
	h += strlen("\r\nMessage-ID: ");
	assert_non_null(end = strstr(h, "\r\n"));
	assert_true((size_t)(end - h) < n);
	memcpy(out, h, (size_t)(end - h));
	out[end - h] = '\0';
	assert_non_null(strstr(out, "@linux-foundation.org>"));
	pg_buf_release(&msg);
	pg_buf_release(&rcpts);
}

/*
 * A notice mailed again (a restart after the relay took it, before the
 * store recorded that) has the Message-ID it had: its readers see one.
 * Another pull, request or text has another.
 */
/* A request-pull mail as git writes it, on a list. */
static const char pull_mail[] =
	"From: Kees Cook <kees@kernel.org>\n"
	"To: Linus Torvalds <torvalds@linux-foundation.org>\n"
	"Subject: [GIT PULL] hardening fixes for v6.16-rc1\n"
	"Message-ID: <fix1@keescook>\n"
	"List-Id: <linux-hardening.vger.kernel.org>\n"
	"\n"
	"The following changes since commit 0123456789abcdef0123456789abcdef01234567:\n"
	"\n"
	"  lib: base (2025-05-26 10:00:00 -0700)\n"
	"\n"
	"are available in the Git repository at:\n"
	"\n"
	"  https://git.kernel.org/pub/scm/linux/kernel/git/kees/linux.git tags/hardening-v6.16-rc1-fix1\n"
	"\n"
	"for you to fetch changes up to 89abcdef0123456789abcdef0123456789abcdef:\n"
	"\n"
	"  lib: fix (2025-05-27 10:00:00 -0700)\n"
	"\n"
	"----------------------------------------------------------------\n"
	"hardening fixes\n"
	"\n"
	"----------------------------------------------------------------\n"
	"Kees Cook (1):\n"
	"      lib: fix\n"
	"\n"
	" lib/x.c | 2 +-\n"
	" 1 file changed, 1 insertion(+), 1 deletion(-)\n";

/* The value of header name in msg's headers, or NULL. */
static char *header(const pg_buf *msg, const char *name)
{
	static char value[512];
	const char *end = strstr(msg->ptr, "\r\n\r\n"), *h = msg->ptr;
	size_t n = strlen(name);

	for (; h && h < end; h = strstr(h, "\r\n") ? strstr(h, "\r\n") + 2 : NULL) {
		const char *eol = strstr(h, "\r\n");

		if (!strncmp(h, name, n) && h[n] == ':' && h[n + 1] == ' ') {
			snprintf(value, sizeof(value), "%.*s", (int)(eol - h - n - 2), h + n + 2);
			return value;
		}
	}
	return NULL;
}

static void test_pr_tracker_headers(void **state)
{
	pg_notice_merge m = { "torvalds/linux.git", "refs/heads/master", { { 0 } } };
	pg_buf msg = PG_BUF_INIT, rcpts = PG_BUF_INIT;
	size_t nr = 0;

	(void)state;
	memset(m.commit.id, 0xab, sizeof(m.commit.id));
	assert_int_equal(pg_notify_compose(&msg, &rcpts, &nr, from, pull_mail, strlen(pull_mail),
					   "Merged.\n", 3, 1748700000, false, &m), 0);
	assert_string_equal(header(&msg, "X-PR-Tracked-List-Id"), "<linux-hardening.vger.kernel.org>");
	assert_string_equal(header(&msg, "X-PR-Tracked-Message-Id"), "<fix1@keescook>");
	assert_string_equal(header(&msg, "X-PR-Tracked-Remote"),
			    "https://git.kernel.org/pub/scm/linux/kernel/git/kees/linux.git "
			    "tags/hardening-v6.16-rc1-fix1");
	assert_string_equal(header(&msg, "X-PR-Tracked-Commit-Id"),
			    "89abcdef0123456789abcdef0123456789abcdef");
	assert_string_equal(header(&msg, "X-PR-Merge-Tree"), "torvalds/linux.git");
	assert_string_equal(header(&msg, "X-PR-Merge-Refname"), "refs/heads/master");
	assert_string_equal(header(&msg, "X-PR-Merge-Commit-Id"),
			    "abababababababababababababababababababab");
	/* still a reply in the thread */
	assert_string_equal(header(&msg, "In-Reply-To"), "<fix1@keescook>");
	pg_buf_release(&msg);
	pg_buf_release(&rcpts);
}

static void test_no_reply_to_a_mail_that_is_no_request(void **state)
{
	pg_notice_merge m = { "torvalds/linux.git", "refs/heads/master", { { 0 } } };
	pg_buf msg = PG_BUF_INIT, rcpts = PG_BUF_INIT;
	size_t nr = 0;

	(void)state;
	/* "Please pull." is a mail, but no git request-pull text: pr-tracker-bot's known mistake */
	assert_int_equal(pg_notify_compose(&msg, &rcpts, &nr, from, request, strlen(request),
					   "Merged.\n", 3, 1748700000, false, &m), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "the request mail is not a git request-pull mail, "
			       "so it gets no reply: "));
	pg_buf_release(&msg);
	pg_buf_release(&rcpts);
}

static void test_the_same_notice_has_the_same_message_id(void **state)
{
	char a[128], b[128];

	(void)state;
	message_id(a, sizeof(a), request, "Merged, thanks.\n", 7, 1748700000);
	message_id(b, sizeof(b), request, "Merged, thanks.\n", 7, 1748790000);
	assert_string_equal(a, b);
	message_id(b, sizeof(b), request, "Merged, thanks.\n", 8, 1748700000);
	assert_string_not_equal(a, b);
	message_id(b, sizeof(b), request, "Merged as 1234, thanks.\n", 7, 1748700000);
	assert_string_not_equal(a, b);
	message_id(b, sizeof(b), "From: kees@kernel.org\n\nx\n", "Merged, thanks.\n", 7,
		   1748700000);
	assert_string_not_equal(a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_real_run_s_notice_is_a_plain_reply),
		cmocka_unit_test(test_a_stand_in_s_notice_says_simulated_in_subject_and_body),
		cmocka_unit_test(test_the_mark_follows_one_re),
		cmocka_unit_test(test_the_same_notice_has_the_same_message_id),
		cmocka_unit_test(test_pr_tracker_headers),
		cmocka_unit_test(test_no_reply_to_a_mail_that_is_no_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
