/* test_notify.c - unit tests for the approval notice's message: its subject and body, real or SIMULATED. */
#include "tests/unit/unit.h"

#include "common/buf.h"
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
					   "Merged, thanks.\n", 7, 1748700000, simulated), 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_real_run_s_notice_is_a_plain_reply),
		cmocka_unit_test(test_a_stand_in_s_notice_says_simulated_in_subject_and_body),
		cmocka_unit_test(test_the_mark_follows_one_re),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
