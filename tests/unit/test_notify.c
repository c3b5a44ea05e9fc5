/* test_notify.c - unit tests for the approval notice's message: its headers, pr-tracker-bot's body, real or SIMULATED. */
#include "tests/unit/unit.h"

#include "common/buf.h"
#include "common/error.h"
#include "server/notify.h"

/* What git request-pull writes, below a mail's headers. */
static const char pull_text[] =
	"\n"
	"Hi Linus,\n"
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

/* A request-pull mail as Kees sends it to Linus and a list, without its Date. */
static const char headers[] =
	"From: Kees Cook <kees@kernel.org>\n"
	"To: Linus Torvalds <torvalds@linux-foundation.org>\n"
	"Cc: linux-hardening@vger.kernel.org\n"
	"Subject: [GIT PULL] hardening fixes for v6.16-rc1\n"
	"Message-ID: <fix1@keescook>\n";

static const char from[] = "Linus Torvalds <torvalds@linux-foundation.org>";
static const char remote[] =
	"https://git.kernel.org/pub/scm/linux/kernel/git/kees/linux.git tags/hardening-v6.16-rc1-fix1";

/* The request mail: headers, then the fields in date (whole lines, or ""), then the request. */
static void request(pg_buf *mail, const char *hdrs, const char *date)
{
	pg_buf_clear(mail);
	assert_int_equal(pg_buf_puts(mail, hdrs), 0);
	assert_int_equal(pg_buf_puts(mail, date), 0);
	assert_int_equal(pg_buf_puts(mail, pull_text), 0);
}

/* The merge of the examples: torvalds/linux.git's master holds abab...ab, tagged 1 Jun 2025 09:00 -0700. */
static pg_notice_merge merge(void)
{
	pg_notice_merge m = { .tree_name = "torvalds/linux.git", .tree = "/srv/git/linux.git",
			      .refname = "refs/heads/master",
			      .commit_url = "https://git.kernel.org/torvalds/c/",
			      .tag_time = 1748793600, .tag_offset = -7 * 60 };

	memset(m.commit.id, 0xab, sizeof(m.commit.id));
	return m;
}

/* The notice for mail and m in *msg (emptied first); 0 or the error. */
static int compose_m(pg_buf *msg, const char *mail, bool simulated, const pg_notice_merge *m)
{
	pg_buf rcpts = PG_BUF_INIT;
	size_t n = 0;
	int err;

	pg_buf_clear(msg);
	err = pg_notify_compose(msg, &rcpts, &n, from, mail, strlen(mail), "Merged, thanks.\n", 7,
				1748700000, simulated, m);
	if (err == 0)
		assert_int_equal(n, 2);
	pg_buf_release(&rcpts);
	return err;
}

static void compose(pg_buf *msg, const char *mail, bool simulated)
{
	pg_notice_merge m = merge();

	assert_int_equal(compose_m(msg, mail, simulated, &m), 0);
}

/* The body: what follows the blank line after the headers. */
static const char *body(const pg_buf *msg)
{
	const char *b = strstr(msg->ptr, "\r\n\r\n");

	assert_non_null(b);
	return b + 4;
}

/* The body's first line. */
static const char *first_line(const pg_buf *msg)
{
	static char line[256];
	const char *b = body(msg);

	snprintf(line, sizeof(line), "%.*s", (int)strcspn(b, "\r\n"), b);
	return line;
}

/* Every line of msg ends in CRLF: no bare CR or LF, nor another control character, anywhere. */
static void assert_clean(const pg_buf *msg)
{
	size_t i;

	for (i = 0; i < msg->len; i++) {
		unsigned char c = (unsigned char)msg->ptr[i];

		if (c == '\r')
			assert_int_equal(msg->ptr[i + 1], '\n');
		else if (c == '\n')
			assert_true(i > 0 && msg->ptr[i - 1] == '\r');
		else if (c < ' ' || c == 0x7f)
			fail_msg("control character 0x%02x at %zu", c, i);
		else if (c == 0xc2 && i + 1 < msg->len && (unsigned char)msg->ptr[i + 1] >= 0x80 &&
			 (unsigned char)msg->ptr[i + 1] <= 0x9f)
			fail_msg("C1 control character at %zu", i);
	}
}

static const char pr_tracker_body[] =
	"The pull request you sent on Sun, 1 Jun 2025 09:30:00 -0700:\r\n"
	"\r\n"
	"> https://git.kernel.org/pub/scm/linux/kernel/git/kees/linux.git "
	"tags/hardening-v6.16-rc1-fix1\r\n"
	"\r\n"
	"has been merged into torvalds/linux.git:\r\n"
	"https://git.kernel.org/torvalds/c/abababababababababababababababababababab\r\n"
	"\r\n"
	"Thank you!\r\n"
	"\r\n"
	"-- \r\n"
	"Sent by pullgate, on the maintainer's behalf, once the merge was in place.\r\n";

/* pr-tracker-bot's reply, line by line: the mail's Date, its remote, the tree, the link. */
static void test_a_real_run_s_notice_is_pr_tracker_bot_s_reply(void **state)
{
	pg_buf msg = PG_BUF_INIT, mail = PG_BUF_INIT;

	(void)state;
	request(&mail, headers, "Date: Sun, 1 Jun 2025 09:30:00 -0700\n");
	compose(&msg, mail.ptr, false);
	assert_non_null(strstr(msg.ptr, "\r\nSubject: Re: [GIT PULL] hardening fixes for v6.16-rc1\r\n"));
	assert_string_equal(body(&msg), pr_tracker_body);
	assert_null(strstr(msg.ptr, "SIMULATED"));
	assert_clean(&msg);
	pg_buf_release(&msg);
	pg_buf_release(&mail);
}

static void test_a_stand_in_s_notice_says_simulated_in_subject_and_body(void **state)
{
	pg_buf msg = PG_BUF_INIT, mail = PG_BUF_INIT, want = PG_BUF_INIT;

	(void)state;
	request(&mail, headers, "Date: Sun, 1 Jun 2025 09:30:00 -0700\n");
	compose(&msg, mail.ptr, true);
	assert_non_null(strstr(msg.ptr, "\r\nSubject: Re: [SIMULATED] [GIT PULL] hardening fixes for "
			       "v6.16-rc1\r\n"));
	assert_int_equal(pg_buf_printf(&want, "SIMULATED: stand-in build and boot scripts ran in "
				       "place of pullgate's own,\r\nso nothing was really built or "
				       "booted before this approval.\r\n\r\n%s", pr_tracker_body), 0);
	assert_string_equal(body(&msg), want.ptr);
	pg_buf_release(&msg);
	pg_buf_release(&mail);
	pg_buf_release(&want);
}

/* A Date folded over lines, as mailers write a long one, and with CRLF: unfolded. */
static void test_a_folded_date_is_unfolded(void **state)
{
	pg_buf msg = PG_BUF_INIT, mail = PG_BUF_INIT;

	(void)state;
	request(&mail, headers, "Date: Sun, 1 Jun 2025\r\n\t 09:30:00\r\n -0700 (PDT)\r\n");
	compose(&msg, mail.ptr, false);
	assert_string_equal(first_line(&msg),
			    "The pull request you sent on Sun, 1 Jun 2025 09:30:00 -0700 (PDT):");
	request(&mail, headers, "Date:\n Mon, 02 Jun 2025 18:00 GMT\n");
	compose(&msg, mail.ptr, false);
	assert_string_equal(first_line(&msg),
			    "The pull request you sent on Mon, 02 Jun 2025 18:00 GMT:");
	pg_buf_release(&msg);
	pg_buf_release(&mail);
}

/* Without a Date (or one that is no date) the tag's date is said to be that; without it, none. */
static void test_a_missing_date_falls_back_to_the_tag_s(void **state)
{
	static const char *const not_dates[] = {
		"", "Date: yesterday\n", "Date: \n", "Date: Sun, 1 Jun 25 09:30:00 -0700\n",
		"Date: Sun, 1 Jun 2025 25:30:00 -0700\n", "Date: Sun, 1 Jum 2025 09:30:00 -0700\n",
		"Date: Sun, 1 Jun 2025 09:30:00\n", "Date: Sun, 1 Jun 2025 09:30:00 -0700 trailing\n",
		"Date: Sun, 1 Jun 2025 09:30:00 -0700 (a) (b)\n",
		"Date: Sun, 1 Jun 2025 09:30:00 -0700 (\xc3\xa9t\xc3\xa9)\n",
		("Date: Sun, 1 Jun 2025 09:30:00 -0700 (a very long comment that makes the date "
		 "longer than any date)\n"),
	};
	pg_notice_merge m = merge();
	pg_buf msg = PG_BUF_INIT, mail = PG_BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < PG_ARRAY_SIZE(not_dates); i++) {
		request(&mail, headers, not_dates[i]);
		compose(&msg, mail.ptr, false);
		if (strcmp(first_line(&msg), "The pull request you sent (its tag dated Sun, 01 Jun "
				      "2025 09:00:00 -0700):"))
			fail_msg("%s: %s", not_dates[i], first_line(&msg));
		/* the rest is as ever */
		assert_non_null(strstr(body(&msg), "\r\n\r\n> https://git.kernel.org/"));
	}
	m.tag_time = 0;
	request(&mail, headers, "");
	assert_int_equal(compose_m(&msg, mail.ptr, false, &m), 0);
	assert_string_equal(first_line(&msg), "The pull request you sent:");
	pg_buf_release(&msg);
	pg_buf_release(&mail);
}

/*
 * A Date, a remote or a configured link with control characters: never
 * a header of their own or a line of the body, never an escape on a
 * terminal.  A Date that is a date once they are dropped is that date.
 */
static void test_hostile_text_reaches_no_header_or_body_unclean(void **state)
{
	pg_notice_merge m = merge();
	pg_buf msg = PG_BUF_INIT, mail = PG_BUF_INIT, hostile = PG_BUF_INIT;
	const char *b;

	(void)state;
	request(&mail, headers, "Date: Sun, 1 Jun 2025 09:30:00 -0700\rBcc: victim@example.org\n");
	compose(&msg, mail.ptr, false);
	assert_string_equal(first_line(&msg), "The pull request you sent (its tag dated Sun, 01 Jun "
			    "2025 09:00:00 -0700):");
	assert_null(strstr(msg.ptr, "\r\nBcc:"));
	assert_clean(&msg);

	/* an escape sequence is taken out whole: what is left reads as the date it is */
	request(&mail, headers, "Date: Sun, 1 Jun\x1b[2J 2025 09:30:00 -0700\x07\n");
	compose(&msg, mail.ptr, false);
	assert_string_equal(first_line(&msg), "The pull request you sent on Sun, 1 Jun 2025 09:30:00 "
			    "-0700:");
	assert_clean(&msg);
	/* a lone ESC takes the character after it (an escape of its own): no date is left */
	request(&mail, headers, "Date: Sun, 1 Jun\x1b 2025 09:30:00\x7f -0700\n");
	compose(&msg, mail.ptr, false);
	assert_string_equal(first_line(&msg), "The pull request you sent (its tag dated Sun, 01 Jun "
			    "2025 09:00:00 -0700):");
	assert_clean(&msg);

	/* a link that the configuration would refuse, passed anyway */
	m.commit_url = "https://example.org/c/\r\nBcc: victim@example.org\r\n\r\n\x1b]8;;x\x07";
	request(&mail, headers, "Date: Sun, 1 Jun 2025 09:30:00 -0700\n");
	assert_int_equal(compose_m(&msg, mail.ptr, false, &m), 0);
	assert_non_null(strstr(body(&msg), "\r\nhttps://example.org/c/ Bcc: victim@example.org  "
			       "abababababababababababababababababababab\r\n\r\nThank you!\r\n"));
	assert_null(strstr(msg.ptr, "\r\nBcc:"));
	assert_clean(&msg);

	/* a remote with an escape and a bell in its URL */
	request(&mail, headers, "Date: Sun, 1 Jun 2025 09:30:00 -0700\n");
	assert_non_null(b = strstr(mail.ptr, ".git tags/"));
	assert_int_equal(pg_buf_put(&hostile, mail.ptr, (size_t)(b - mail.ptr)), 0);
	assert_int_equal(pg_buf_printf(&hostile, "\x1b]8;;https://evil.example/\x07%s", b), 0);
	m = merge();
	assert_int_equal(compose_m(&msg, hostile.ptr, false, &m), 0);
	assert_non_null(strstr(body(&msg), "\r\n> https://git.kernel.org/pub/scm/linux/kernel/git/"
			       "kees/linux.git tags/hardening-v6.16-rc1-fix1\r\n"));
	assert_clean(&msg);

	/* a C1 control (CSI as U+009B) and a byte that is no UTF-8 in the remote: none reaches a header or the body */
	pg_buf_clear(&hostile);
	assert_int_equal(pg_buf_put(&hostile, mail.ptr, (size_t)(b - mail.ptr)), 0);
	assert_int_equal(pg_buf_printf(&hostile, "\xc2\x9b" "31m\xff%s", b), 0);
	assert_int_equal(compose_m(&msg, hostile.ptr, false, &m), 0);
	assert_non_null(strstr(msg.ptr, "X-PR-Tracked-Remote: https://git.kernel.org/pub/scm/linux/"
			       "kernel/git/kees/linux31m\xef\xbf\xbd.git tags/"));
	assert_non_null(strstr(body(&msg), "kees/linux31m\xef\xbf\xbd.git tags/"));
	assert_clean(&msg);
	pg_buf_release(&msg);
	pg_buf_release(&mail);
	pg_buf_release(&hostile);
}

/* notice.tree-name, else the tree's directory name; notice.commit-url, else the id alone. */
static void test_the_tree_s_name_and_the_merge_s_link(void **state)
{
	pg_notice_merge m = merge();
	pg_buf msg = PG_BUF_INIT, mail = PG_BUF_INIT;
	const char *b;

	(void)state;
	request(&mail, headers, "Date: Sun, 1 Jun 2025 09:30:00 -0700\n");
	m.tree_name = NULL;
	m.tree = "/srv/git/linux.git//";
	m.commit_url = NULL;
	assert_int_equal(compose_m(&msg, mail.ptr, false, &m), 0);
	assert_non_null(b = strstr(body(&msg), "\r\n\r\nhas been merged into "));
	assert_string_equal(b, "\r\n\r\nhas been merged into linux.git:\r\n"
			    "abababababababababababababababababababab\r\n\r\nThank you!\r\n\r\n-- \r\n"
			    "Sent by pullgate, on the maintainer's behalf, once the merge was in "
			    "place.\r\n");
	assert_non_null(strstr(msg.ptr, "\r\nX-PR-Merge-Tree: linux.git\r\n"));

	m = merge();
	m.commit_url = "http://cgit.example.org/linux/commit/?id=";
	assert_int_equal(compose_m(&msg, mail.ptr, false, &m), 0);
	assert_non_null(strstr(body(&msg), "\r\n\r\nhas been merged into torvalds/linux.git:\r\n"
			       "http://cgit.example.org/linux/commit/?id="
			       "abababababababababababababababababababab\r\n"));
	assert_non_null(strstr(msg.ptr, "\r\nX-PR-Merge-Tree: torvalds/linux.git\r\n"));
	pg_buf_release(&msg);
	pg_buf_release(&mail);
}

/* A request that is itself a reply: "Re:" once, the mark after it. */
static void test_the_mark_follows_one_re(void **state)
{
	pg_buf msg = PG_BUF_INIT, mail = PG_BUF_INIT;

	(void)state;
	request(&mail, "From: kees@kernel.org\nCc: lkml@vger.kernel.org\nSubject: RE: [GIT PULL] v2\n",
		"");
	compose(&msg, mail.ptr, false);
	assert_non_null(strstr(msg.ptr, "\r\nSubject: RE: [GIT PULL] v2\r\n"));
	compose(&msg, mail.ptr, true);
	assert_non_null(strstr(msg.ptr, "\r\nSubject: Re: [SIMULATED] [GIT PULL] v2\r\n"));
	pg_buf_release(&msg);
	pg_buf_release(&mail);
}

/* The Message-ID header's value in a composed notice, into out. */
static void message_id(char *out, size_t n, const char *mail, const char *text, int64_t id,
		       time_t now, const char *tree_name)
{
	pg_notice_merge m = merge();
	pg_buf msg = PG_BUF_INIT, rcpts = PG_BUF_INIT;
	const char *h, *end;
	size_t nr = 0;

	m.tree_name = tree_name;
	assert_int_equal(pg_notify_compose(&msg, &rcpts, &nr, from, mail, strlen(mail), text, id,
					   now, false, &m), 0);
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
	pg_buf msg = PG_BUF_INIT, mail = PG_BUF_INIT;

	(void)state;
	request(&mail, headers, "List-Id: <linux-hardening.vger.kernel.org>\n");
	compose(&msg, mail.ptr, false);
	assert_string_equal(header(&msg, "X-PR-Tracked-List-Id"), "<linux-hardening.vger.kernel.org>");
	assert_string_equal(header(&msg, "X-PR-Tracked-Message-Id"), "<fix1@keescook>");
	assert_string_equal(header(&msg, "X-PR-Tracked-Remote"), remote);
	assert_string_equal(header(&msg, "X-PR-Tracked-Commit-Id"),
			    "89abcdef0123456789abcdef0123456789abcdef");
	assert_string_equal(header(&msg, "X-PR-Merge-Tree"), "torvalds/linux.git");
	assert_string_equal(header(&msg, "X-PR-Merge-Refname"), "refs/heads/master");
	assert_string_equal(header(&msg, "X-PR-Merge-Commit-Id"),
			    "abababababababababababababababababababab");
	/* still a reply in the thread, dated when it is composed */
	assert_string_equal(header(&msg, "In-Reply-To"), "<fix1@keescook>");
	assert_string_equal(header(&msg, "Date"), "Sat, 31 May 2025 14:00:00 +0000");
	pg_buf_release(&msg);
	pg_buf_release(&mail);
}

static void test_no_reply_to_a_mail_that_is_no_request(void **state)
{
	static const char not_pull[] = "From: Kees Cook <kees@kernel.org>\n"
				       "To: Linus Torvalds <torvalds@linux-foundation.org>\n"
				       "Subject: [GIT PULL] hardening fixes\n\nPlease pull.\n";
	pg_notice_merge m = merge();
	pg_buf msg = PG_BUF_INIT;

	(void)state;
	/* "Please pull." is a mail, but no git request-pull text: pr-tracker-bot's known mistake */
	assert_int_equal(compose_m(&msg, not_pull, false, &m), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "the request mail is not a git request-pull mail, "
			       "so it gets no reply: "));
	pg_buf_release(&msg);
}

/*
 * A notice mailed again (a restart after the relay took it, before the
 * store recorded that) has the Message-ID it had, whenever it is
 * composed and whatever a reload changed in its body: its readers see
 * one.  Another pull, request or notice has another.
 */
static void test_the_same_notice_has_the_same_message_id(void **state)
{
	pg_buf mail = PG_BUF_INIT, other = PG_BUF_INIT;
	char a[128], b[128];

	(void)state;
	request(&mail, headers, "Date: Sun, 1 Jun 2025 09:30:00 -0700\n");
	request(&other, headers, "Date: Mon, 2 Jun 2025 09:30:00 -0700\n");
	message_id(a, sizeof(a), mail.ptr, "Merged, thanks.\n", 7, 1748700000, "torvalds/linux.git");
	message_id(b, sizeof(b), mail.ptr, "Merged, thanks.\n", 7, 1748790000, "torvalds/linux.git");
	assert_string_equal(a, b);
	message_id(b, sizeof(b), mail.ptr, "Merged, thanks.\n", 7, 1748700000, NULL);
	assert_string_equal(a, b);
	message_id(b, sizeof(b), mail.ptr, "Merged, thanks.\n", 8, 1748700000, "torvalds/linux.git");
	assert_string_not_equal(a, b);
	message_id(b, sizeof(b), mail.ptr, "Merged as 1234, thanks.\n", 7, 1748700000,
		   "torvalds/linux.git");
	assert_string_not_equal(a, b);
	message_id(b, sizeof(b), other.ptr, "Merged, thanks.\n", 7, 1748700000, "torvalds/linux.git");
	assert_string_not_equal(a, b);
	pg_buf_release(&mail);
	pg_buf_release(&other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_real_run_s_notice_is_pr_tracker_bot_s_reply),
		cmocka_unit_test(test_a_stand_in_s_notice_says_simulated_in_subject_and_body),
		cmocka_unit_test(test_a_folded_date_is_unfolded),
		cmocka_unit_test(test_a_missing_date_falls_back_to_the_tag_s),
		cmocka_unit_test(test_hostile_text_reaches_no_header_or_body_unclean),
		cmocka_unit_test(test_the_tree_s_name_and_the_merge_s_link),
		cmocka_unit_test(test_the_mark_follows_one_re),
		cmocka_unit_test(test_the_same_notice_has_the_same_message_id),
		cmocka_unit_test(test_pr_tracker_headers),
		cmocka_unit_test(test_no_reply_to_a_mail_that_is_no_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
