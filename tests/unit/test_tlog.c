/* test_tlog.c - unit tests for transparency-log push records, repository paths and push certificates. */
#include "tests/unit/unit.h"

#include "common/buf.h"
#include "common/error.h"
#include "verifier/tlog.h"

#define OLD "29000644713a1a7ecea7871b433cf83f2740da90"
#define NEW "fe6ba5369e98005e5f0d76442447a966aa70d0dc"
#define BOUND "===============9216280479104659071=="

/* The layout of korg's annotated sample record, one ref pushed, the log inline. */
static const char PLAIN[] =
	"Content-Type: text/plain; charset=\"us-ascii\"\n"
	"MIME-Version: 1.0\n"
	"Content-Transfer-Encoding: 7bit\n"
	"From: Gitolite <devnull@kernel.org>\n"
	"Subject: post-receive: pub/scm/linux/kernel/git/mricon/hook-test\n"
	"Date: Sun, 01 Nov 2020 14:30:04 -0000\n"
	"Message-Id: <160424100444.28613.2392504408513983803@gitolite.kernel.org>\n"
	"\n"
	"---\n"
	"service: git-receive-pack\n"
	"repo: pub/scm/linux/kernel/git/mricon/hook-test\n"
	"user: mricon\n"
	"changes:\n"
	"  - ref: refs/heads/main\n"
	"    old: " OLD "\n"
	"    new: " NEW "\n"
	"    log: |\n"
	"         " NEW " Another push to test transparency log\n";

static const char CERT[] =
	"certificate version 0.1\n"
	"pusher Kees Cook <kees@kernel.org> 1748793600 -0700\n"
	"pushee git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux.git\n"
	"nonce 1748793600-abcdef\n"
	"\n"
	OLD " " NEW " refs/tags/hardening-v6.16-rc1\n"
	"-----BEGIN PGP SIGNATURE-----\n"
	"\n"
	"iHUEABYKAB0WIQ==\n"
	"-----END PGP SIGNATURE-----\n";

/* multipart: the body, the certificate, the log attached by name. */
static const char MULTI[] =
	"Content-Type: multipart/mixed; boundary=\"" BOUND "\"\n"
	"MIME-Version: 1.0\n"
	"Date: Sun, 01 Jun 2025 16:00:00 -0000\n"
	"Message-Id: <1.2.3@gitolite.kernel.org>\n"
	"\n"
	"--" BOUND "\n"
	"Content-Type: text/plain; charset=\"us-ascii\"\n"
	"MIME-Version: 1.0\n"
	"Content-Transfer-Encoding: 7bit\n"
	"\n"
	"---\n"
	"service: git-receive-pack\n"
	"repo: pub/scm/linux/kernel/git/kees/linux\n"
	"user: kees\n"
	"git_push_cert_status: G\n"
	"changes:\n"
	"  - ref: refs/tags/hardening-v6.16-rc1\n"
	"    old: 0000000000000000000000000000000000000000\n"
	"    new: " NEW "\n"
	"    log: hardening.log\n"
	"\n"
	"--" BOUND "\n"
	"Content-Type: text/plain; charset=\"us-ascii\"\n"
	"MIME-Version: 1.0\n"
	"Content-Transfer-Encoding: 7bit\n"
	"Content-Disposition: attachment; filename=\"git-push-certificate.txt\"\n"
	"\n"
	"%s"
	"\n"
	"--" BOUND "\n"
	"Content-Type: text/plain; charset=\"us-ascii\"\n"
	"Content-Transfer-Encoding: base64\n"
	"Content-Disposition: attachment; filename=\"hardening.log\"\n"
	"\n"
	/* "one\ntwo\nthree\n" */
	"b25lCnR3bwp0aHJlZQo=\n"
	"--" BOUND "--\n";

static pg_tlog_record *parse_ok(const char *text)
{
	pg_tlog_record *r = NULL;

	if (pg_tlog_record_parse(&r, text, strlen(text)) < 0)
		fail_msg("unexpected error: %s", pg_error_last());
	assert_non_null(r);
	return r;
}

static void parse_fails(const char *text, int code, const char *want)
{
	pg_tlog_record *r = NULL;

	assert_int_equal(pg_tlog_record_parse(&r, text, strlen(text)), code);
	assert_null(r);
	if (!strstr(pg_error_last(), want))
		fail_msg("'%s' does not say '%s'", pg_error_last(), want);
}

static void test_plain_record(void **state)
{
	pg_tlog_record *r;
	const pg_tlog_change *c;
	char hex[PG_OID_HEXSZ + 1];

	(void)state;
	r = parse_ok(PLAIN);
	assert_string_equal(r->message_id,
			    "<160424100444.28613.2392504408513983803@gitolite.kernel.org>");
	assert_string_equal(r->date, "Sun, 01 Nov 2020 14:30:04 -0000");
	assert_string_equal(r->service, "git-receive-pack");
	assert_string_equal(r->repo, "pub/scm/linux/kernel/git/mricon/hook-test");
	assert_string_equal(r->user, "mricon");
	assert_null(r->cert_status);
	assert_null(r->cert);
	assert_int_equal(r->nchanges, 1);
	assert_null(pg_tlog_record_change(r, "refs/heads/master"));
	c = pg_tlog_record_change(r, "refs/heads/main");
	assert_non_null(c);
	pg_oid_tohex(hex, &c->old_id);
	assert_string_equal(hex, OLD);
	pg_oid_tohex(hex, &c->new_id);
	assert_string_equal(hex, NEW);
	assert_null(c->log_file);
	assert_int_equal(c->log_lines, 1);
	pg_tlog_record_free(r);
}

static void test_multipart_record(void **state)
{
	pg_buf text = PG_BUF_INIT;
	pg_tlog_record *r;
	const pg_tlog_change *c;

	(void)state;
	assert_int_equal(pg_buf_printf(&text, MULTI, CERT), 0);
	r = parse_ok(text.ptr);
	assert_string_equal(r->message_id, "<1.2.3@gitolite.kernel.org>");
	assert_string_equal(r->cert_status, "G");
	assert_non_null(r->cert);
	assert_int_equal(strncmp(r->cert, CERT, strlen(CERT)), 0);
	c = pg_tlog_record_change(r, "refs/tags/hardening-v6.16-rc1");
	assert_non_null(c);
	assert_true(pg_oid_is_zero(&c->old_id));
	assert_string_equal(c->log_file, "hardening.log");
	assert_int_equal(c->log_lines, 3);
	assert_false(c->log_unread);
	pg_tlog_record_free(r);
	pg_buf_release(&text);
}

static void test_push_cert(void **state)
{
	pg_push_cert cert;
	char hex[PG_OID_HEXSZ + 1];
	pg_buf bad = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_push_cert_parse(&cert, CERT, strlen(CERT)), 0);
	assert_string_equal(cert.pusher, "Kees Cook <kees@kernel.org> 1748793600 -0700");
	assert_string_equal(cert.pushee,
			    "git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux.git");
	assert_string_equal(cert.nonce, "1748793600-abcdef");
	assert_int_equal(cert.ncmds, 1);
	assert_string_equal(cert.cmds[0].ref, "refs/tags/hardening-v6.16-rc1");
	pg_oid_tohex(hex, &cert.cmds[0].new_id);
	assert_string_equal(hex, NEW);
	assert_int_equal(cert.payload_len, strstr(CERT, "-----BEGIN") - CERT);
	assert_int_equal(strncmp(cert.sig, "-----BEGIN PGP SIGNATURE-----", 29), 0);
	pg_push_cert_release(&cert);

	assert_int_equal(pg_push_cert_parse(&cert, "certificate version 0.2\n", 24), PG_EINVALID);
	assert_int_equal(pg_buf_puts(&bad, "certificate version 0.1\npusher x\n\n" OLD " " NEW
				     " refs/tags/x\n"), 0);
	assert_int_equal(pg_push_cert_parse(&cert, bad.ptr, bad.len), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "no signature"));
	pg_buf_clear(&bad);
	assert_int_equal(pg_buf_puts(&bad, "certificate version 0.1\npusher x\n\n" OLD " zz "
				     "refs/tags/x\n-----BEGIN PGP SIGNATURE-----\n"), 0);
	assert_int_equal(pg_push_cert_parse(&cert, bad.ptr, bad.len), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "OLD NEW REF"));
	pg_buf_clear(&bad);
	assert_int_equal(pg_buf_puts(&bad, "certificate version 0.1\npusher x\npusher y\n\n"), 0);
	assert_int_equal(pg_push_cert_parse(&cert, bad.ptr, bad.len), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "repeats 'pusher'"));
	pg_buf_release(&bad);
}

static void test_repo_paths(void **state)
{
	pg_buf b = PG_BUF_INIT;
	const char *korg = "pub/scm/linux/kernel/git/kees/linux";

	(void)state;
	assert_int_equal(pg_tlog_repo_path(&b, "https://git.kernel.org/" "pub/scm/linux/kernel/git"
					   "/kees/linux.git/"), 0);
	assert_string_equal(b.ptr, korg);
	pg_buf_clear(&b);
	assert_int_equal(pg_tlog_repo_path(&b, "gitolite@gitolite.kernel.org:pub/scm/x.git"), 0);
	assert_string_equal(b.ptr, "pub/scm/x");
	pg_buf_release(&b);

	assert_true(pg_tlog_repo_matches(korg, "git://git.kernel.org/pub/scm/linux/kernel/git/"
					 "kees/linux.git"));
	assert_true(pg_tlog_repo_matches(korg, "/srv/mirror/pub/scm/linux/kernel/git/kees/linux"));
	assert_true(pg_tlog_repo_matches(korg, korg));
	/* a path that only ends in the same letters, or another tree */
	assert_false(pg_tlog_repo_matches(korg, "/srv/xpub/scm/linux/kernel/git/kees/linux"));
	assert_false(pg_tlog_repo_matches(korg, "git://git.kernel.org/pub/scm/linux/kernel/git/"
					  "kees/linux-next.git"));
	/* one component is too little to name a repository */
	assert_false(pg_tlog_repo_matches("linux", "git://git.kernel.org/torvalds/linux.git"));
}

/* Hostile records: each a clear PG_EINVALID or PG_ETOOBIG, never a crash. */
static void test_hostile_records(void **state)
{
	pg_buf big = PG_BUF_INIT;
	pg_tlog_record *r = NULL;
	size_t i;

	(void)state;
	parse_fails("Message-Id: <a@b>\n\n---\n- a list\n", PG_EINVALID, "not a YAML mapping");
	parse_fails("Message-Id: <a@b>\n\n---\nrepo: x/y\nuser: u\n", PG_EINVALID,
		    "no list of changes");
	parse_fails("\n---\nrepo: x/y\nchanges: [{ref: refs/heads/a, old: " OLD ", new: " NEW
		    "}]\n", PG_EINVALID, "no 'user'");
	parse_fails("\n---\nrepo: x/y\nuser: [u]\nchanges: []\n", PG_EINVALID,
		    "'user' at 4:7 is not a string");
	parse_fails("\n---\nrepo: x/y\nuser: u\nchanges: [{ref: 'refs/heads/a..b', old: " OLD
		    ", new: " NEW "}]\n", PG_EINVALID, "changes[0].ref is not a ref name");
	parse_fails("\n---\nrepo: x/y\nuser: u\nchanges: [{ref: refs/heads/a, old: 123, new: " NEW
		    "}]\n", PG_EINVALID, "changes[0].old is not an object id");
	parse_fails("\n---\nrepo: x/y\nuser: u\nchanges: [ref]\n", PG_EINVALID,
		    "changes[0] is not a mapping");
	parse_fails("\n---\nrepo: &a x/y\nuser: *a\n", PG_EINVALID, "anchors and aliases");
	parse_fails("\n---\n{{{{\n", PG_EINVALID, "the YAML body at");
	parse_fails("Content-Type: multipart/mixed\n\n--x\n", PG_EINVALID, "without a boundary");
	parse_fails("Content-Type: multipart/mixed; boundary=x\n\n--x\nbody\n", PG_EINVALID,
		    "never closed by its boundary");
	parse_fails("Content-Type: multipart/mixed; boundary=\"x\n\n--x\n", PG_EINVALID,
		    "never closed");
	assert_int_equal(pg_tlog_record_parse(&r, "a\0b", 3), PG_EINVALID);
	assert_null(r);

	/* too many parts, too many changes, too big a record */
	assert_int_equal(pg_buf_puts(&big, "Content-Type: multipart/mixed; boundary=x\n\n"), 0);
	for (i = 0; i < PG_TLOG_MAX_PARTS + 2; i++)
		assert_int_equal(pg_buf_puts(&big, "--x\n\nrepo: a/b\n"), 0);
	assert_int_equal(pg_buf_puts(&big, "--x--\n"), 0);
	parse_fails(big.ptr, PG_ETOOBIG, "MIME parts");
	pg_buf_clear(&big);
	assert_int_equal(pg_buf_puts(&big, "\n---\nrepo: a/b\nuser: u\nchanges:\n"), 0);
	for (i = 0; i < PG_TLOG_MAX_CHANGES + 1; i++)
		assert_int_equal(pg_buf_puts(&big, "- {ref: refs/heads/a, old: " OLD ", new: " NEW
					     "}\n"), 0);
	parse_fails(big.ptr, PG_ETOOBIG, "changes: at most");
	assert_int_equal(pg_tlog_record_parse(&r, big.ptr, PG_TLOG_RECORD_MAX + 1), PG_ETOOBIG);
	assert_null(r);
	pg_buf_release(&big);
}

/* Every prefix of a good record, cut anywhere, parses or fails cleanly (malformed, or MIME not read). */
static void test_cut_records(void **state)
{
	pg_buf text = PG_BUF_INIT;
	pg_tlog_record *r;
	size_t n;
	int err;

	(void)state;
	assert_int_equal(pg_buf_printf(&text, MULTI, CERT), 0);
	for (n = 0; n < text.len; n += 7) {
		r = NULL;
		err = pg_tlog_record_parse(&r, text.ptr, n);
		if (err != 0 && err != PG_EINVALID && err != PG_EUNSUPPORTED)
			fail_msg("cut at %zu: %d %s", n, err, pg_error_last());
		assert_true((err == 0) == (r != NULL));
		pg_tlog_record_free(r);
	}
	pg_buf_release(&text);
}

/* A cursor written and read back; every way one can be damaged is refused. */
static void test_cursor(void **state)
{
	pg_tlog_cursor c = { NULL, 0 }, back;
	pg_buf text = PG_BUF_INIT;
	const char *good = "pullgate-tlog-cursor 1 2\n000000 " OLD "\n000001 " NEW "\n";

	(void)state;
	assert_int_equal(pg_tlog_cursor_parse(&c, good, strlen(good)), 0);
	assert_int_equal(c.nepochs, 2);
	assert_int_equal(pg_tlog_cursor_format(&text, &c), 0);
	assert_string_equal(text.ptr, good);
	assert_int_equal(pg_tlog_cursor_parse(&back, text.ptr, text.len), 0);
	assert_int_equal(back.nepochs, 2);
	assert_memory_equal(back.tips, c.tips, 2 * sizeof(pg_oid));
	pg_tlog_cursor_release(&back);
	pg_tlog_cursor_release(&c);
	assert_null(c.tips);
	/* none read yet */
	assert_int_equal(pg_tlog_cursor_parse(&c, "pullgate-tlog-cursor 1 0\n", 25), 0);
	assert_int_equal(c.nepochs, 0);
	pg_tlog_cursor_release(&c);
#define BAD(s, what) \
	do { \
		assert_int_equal(pg_tlog_cursor_parse(&c, s, strlen(s)), PG_EINVALID); \
		assert_null(c.tips); \
		assert_non_null(strstr(pg_error_last(), what)); \
	} while (0)
	BAD("", "does not start with");
	BAD("pullgate-tlog-cursor 2 1\n000000 " OLD "\n", "does not start with");
	BAD("pullgate-tlog-cursor 1 \n", "count of epochs");
	BAD("pullgate-tlog-cursor 1 1001\n", "count of epochs");
	BAD("pullgate-tlog-cursor 1 99999999999999999999999\n", "count of epochs");
	BAD("pullgate-tlog-cursor 1 2\n000000 " OLD "\n", "bytes of epochs");
	BAD("pullgate-tlog-cursor 1 1\n000000 " OLD "\nx", "bytes of epochs");
	BAD("pullgate-tlog-cursor 1 1\n000001 " OLD "\n", "line of epoch 0");
	BAD("pullgate-tlog-cursor 1 1\n00000a " OLD "\n", "line of epoch 0");
	BAD("pullgate-tlog-cursor 1 1\n000000 zz000644713a1a7ecea7871b433cf83f2740da90\n",
	    "line of epoch 0");
	BAD("pullgate-tlog-cursor 1 2\n000000 " OLD "\n000001 " NEW "|", "line of epoch 1");
#undef BAD
	pg_buf_release(&text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_record),
		cmocka_unit_test(test_multipart_record),
		cmocka_unit_test(test_push_cert),
		cmocka_unit_test(test_repo_paths),
		cmocka_unit_test(test_hostile_records),
		cmocka_unit_test(test_cut_records),
		cmocka_unit_test(test_cursor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
