/* test_mail.c - unit tests for pull-request mail decoding and request-pull parsing. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "verifier/mail.h"

/* What `git request-pull` printed for take two of the incident fixture. */
static const char REQUEST[] =
	"The following changes since commit b5562f9c8d72db9a9d93d7df6daa43ea90272925:\n"
	"\n"
	"  Merge tag 'drm-next-6.16' of git://git.kernel.org/pub/scm/linux/kernel/git/drm/drm"
	" (2025-05-30 12:00:00 -0700)\n"
	"\n"
	"are available in the Git repository at:\n"
	"\n"
	"  /tmp/fx/kees.git tags/hardening-v6.16-rc1-fix1-take2\n"
	"\n"
	"for you to fetch changes up to 544bbb511a995040dd5b32148a5e648cbaedb43a:\n"
	"\n"
	"  randstruct: gcc-plugin: Fix attribute addition (2025-05-30 16:40:00 -0700)\n"
	"\n"
	"----------------------------------------------------------------\n"
	"hardening fixes for v6.16-rc1\n"
	"\n"
	"- randstruct: gcc-plugin: Fix attribute addition with GCC 15\n"
	"\n"
	"- wifi: iwlwifi: mld: Work around Clang loop unrolling bug\n"
	"\n"
	"----------------------------------------------------------------\n"
	"Kees Cook (2):\n"
	"      wifi: iwlwifi: mld: Work around Clang loop unrolling bug\n"
	"      randstruct: gcc-plugin: Fix attribute addition\n"
	"\n"
	"Linus Torvalds (1):\n"
	"      Merge tag 'hardening-v6.16-rc1' of git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux\n"
	"\n"
	" drivers/net/wireless/intel/iwlwifi/mld/d3.c   | 1 +\n"
	" scripts/gcc-plugins/randomize_layout_plugin.c | 1 +\n"
	" 2 files changed, 2 insertions(+)\n";

static pg_pull_request *parse_ok(const char *text)
{
	pg_pull_request *pr = NULL;
	int err = pg_mail_parse_body(&pr, text, strlen(text));

	if (err < 0)
		fail_msg("parse failed: %s", pg_error_last());
	assert_non_null(pr);
	return pr;
}

/* Parse must fail with code, and the message must contain want. */
static void parse_fails(const char *data, size_t len, int code, const char *want)
{
	pg_pull_request *pr = NULL;
	int err = pg_mail_parse(&pr, data, len);

	assert_int_equal(err, code);
	assert_null(pr);
	if (!strstr(pg_error_last(), want))
		fail_msg("message '%s' lacks '%s'", pg_error_last(), want);
}

static char *replace(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	pg_buf b = PG_BUF_INIT;

	assert_non_null(at);
	assert_int_equal(pg_buf_put(&b, s, (size_t)(at - s)), 0);
	assert_int_equal(pg_buf_puts(&b, to), 0);
	assert_int_equal(pg_buf_puts(&b, at + strlen(from)), 0);
	return pg_buf_detach(&b);
}

static char *hex(const pg_oid *id)
{
	static char out[PG_OID_HEXSZ + 1];

	pg_oid_tohex(out, id);
	return out;
}

static void test_request_pull_text(void **state)
{
	pg_pull_request *pr = parse_ok(REQUEST);

	(void)state;
	assert_string_equal(hex(&pr->base), "b5562f9c8d72db9a9d93d7df6daa43ea90272925");
	assert_string_equal(pr->base_line, "Merge tag 'drm-next-6.16' of git://git.kernel.org/pub/"
			    "scm/linux/kernel/git/drm/drm (2025-05-30 12:00:00 -0700)");
	assert_string_equal(pr->url, "/tmp/fx/kees.git");
	assert_string_equal(pr->ref, "tags/hardening-v6.16-rc1-fix1-take2");
	assert_string_equal(hex(&pr->head), "544bbb511a995040dd5b32148a5e648cbaedb43a");
	assert_string_equal(pr->head_line,
			    "randstruct: gcc-plugin: Fix attribute addition (2025-05-30 16:40:00 -0700)");
	assert_string_equal(pr->message, "hardening fixes for v6.16-rc1\n\n"
			    "- randstruct: gcc-plugin: Fix attribute addition with GCC 15\n\n"
			    "- wifi: iwlwifi: mld: Work around Clang loop unrolling bug");
	assert_int_equal(pr->nshortlog, 3);
	assert_string_equal(pr->shortlog[0].author, "Kees Cook");
	assert_string_equal(pr->shortlog[0].subject,
			    "wifi: iwlwifi: mld: Work around Clang loop unrolling bug");
	assert_string_equal(pr->shortlog[2].author, "Linus Torvalds");
	assert_string_equal(pr->shortlog[2].subject, "Merge tag 'hardening-v6.16-rc1' of "
			    "git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux");
	assert_int_equal(pr->nfiles, 2);
	assert_string_equal(pr->files[0].path, "drivers/net/wireless/intel/iwlwifi/mld/d3.c");
	assert_null(pr->files[0].old_path);
	assert_false(pr->files[0].elided);
	assert_string_equal(pr->files[1].path, "scripts/gcc-plugins/randomize_layout_plugin.c");
	assert_int_equal(pr->files_changed, 2);
	assert_false(pr->files_elided);
	assert_null(pr->subject);
	pg_pull_request_free(pr);
}

static void test_prose_and_signature_are_skipped(void **state)
{
	pg_buf b = PG_BUF_INIT;
	pg_pull_request *pr;

	(void)state;
	assert_int_equal(pg_buf_printf(&b, "Hi Linus,\n\nPlease pull.\n\n%s\n-- \nKees Cook\n"
				       "diff --git a/x b/x\n", REQUEST), 0);
	pr = parse_ok(b.ptr);
	assert_int_equal(pr->nshortlog, 3);
	assert_int_equal(pr->nfiles, 2);
	pg_pull_request_free(pr);
	pg_buf_release(&b);
}

static void test_without_tag_message(void **state)
{
	const char *start = strstr(REQUEST, "hardening fixes for v6.16-rc1\n");
	const char *end = strstr(REQUEST, "Kees Cook (2):");
	pg_buf b = PG_BUF_INIT;
	pg_pull_request *pr;

	(void)state;
	/* as for a branch: one dashes line, then the shortlog */
	assert_int_equal(pg_buf_put(&b, REQUEST, (size_t)(start - REQUEST)), 0);
	assert_int_equal(pg_buf_puts(&b, end), 0);
	pr = parse_ok(b.ptr);
	assert_null(pr->message);
	assert_int_equal(pr->nshortlog, 3);
	pg_pull_request_free(pr);
	pg_buf_release(&b);
}

static void test_branch_description(void **state)
{
	char *text = replace(REQUEST, "hardening fixes for v6.16-rc1\n",
			     "(from the branch description for fixes local branch)\n\nfixes\n");
	pg_pull_request *pr = parse_ok(text);

	(void)state;
	assert_non_null(strstr(pr->message, "branch description"));
	pg_pull_request_free(pr);
	free(text);
}

static void test_ref_variants(void **state)
{
	static const struct {
		const char *line, *url, *ref;
	} cases[] = {
		{ "  /tmp/fx/kees.git hardening-v6.16-rc1-fix1-take2\n", "/tmp/fx/kees.git",
		  "hardening-v6.16-rc1-fix1-take2" },
		{ "  https://git.kernel.org/pub/scm/linux/kernel/git/kees/linux.git for-linus\n",
		  "https://git.kernel.org/pub/scm/linux/kernel/git/kees/linux.git", "for-linus" },
		{ "  /tmp/fx/kees.git \n", "/tmp/fx/kees.git", NULL },
		{ "  /tmp/fx/kees.git\n", "/tmp/fx/kees.git", NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < PG_ARRAY_SIZE(cases); i++) {
		char *text = replace(REQUEST, "  /tmp/fx/kees.git tags/hardening-v6.16-rc1-fix1-take2\n",
				     cases[i].line);
		pg_pull_request *pr = parse_ok(text);

		assert_string_equal(pr->url, cases[i].url);
		if (cases[i].ref)
			assert_string_equal(pr->ref, cases[i].ref);
		else
			assert_null(pr->ref);
		pg_pull_request_free(pr);
		free(text);
	}
}

static void test_diffstat_names(void **state)
{
	static const char STAT[] =
		" drivers/net/wireless/intel/iwlwifi/mld/d3.c   | 1 +\n"
		" scripts/gcc-plugins/randomize_layout_plugin.c | 1 +\n"
		" 2 files changed, 2 insertions(+)\n";
	char *text = replace(REQUEST, STAT,
			     " lib/{old => new}/file.c                   |  0\n"
			     " Makefile.old => Makefile                  |  2 +-\n"
			     " fs/{ => sub}/x.c                          |  1 +\n"
			     " .../bindings/net/wireless/very-long-name.yaml | 10 ++++++----\n"
			     " \"odd\\tname\\303\\251.c\"                   |  1 -\n"
			     " firmware/blob.bin                         | Bin 0 -> 1234 bytes\n"
			     " odd}/{a => b}/c                           |  0\n"
			     " 7 files changed, 7 insertions(+), 6 deletions(-)\n"
			     " rename lib/{old => new}/file.c (100%)\n"
			     " create mode 100644 firmware/blob.bin\n");
	pg_pull_request *pr = parse_ok(text);

	(void)state;
	assert_int_equal(pr->nfiles, 7);
	assert_string_equal(pr->files[0].path, "lib/new/file.c");
	assert_string_equal(pr->files[0].old_path, "lib/old/file.c");
	assert_string_equal(pr->files[1].path, "Makefile");
	assert_string_equal(pr->files[1].old_path, "Makefile.old");
	assert_string_equal(pr->files[2].path, "fs/sub/x.c");
	assert_string_equal(pr->files[2].old_path, "fs/x.c");
	assert_true(pr->files[3].elided);
	assert_string_equal(pr->files[3].path, "/bindings/net/wireless/very-long-name.yaml");
	assert_string_equal(pr->files[4].path, "odd\tname\xc3\xa9.c");
	assert_string_equal(pr->files[5].path, "firmware/blob.bin");
	assert_string_equal(pr->files[6].path, "odd}/b/c");
	assert_string_equal(pr->files[6].old_path, "odd}/a/c");
	assert_int_equal(pr->files_changed, 7);
	pg_pull_request_free(pr);
	free(text);

	/* renames git cut inside the braces, as U-Boot's real request-pulls have them */
	text = replace(REQUEST, STAT,
		       " ...k_defconfig => mt8395_genio_1200_evk_defconfig} |    2 +-\n"
		       " .../mach => include/dm/platform_data}/atmel_serial.h   |  2 +-\n"
		       " 2 files changed, 2 insertions(+), 2 deletions(-)\n");
	pr = parse_ok(text);
	assert_int_equal(pr->nfiles, 2);
	assert_true(pr->files[0].elided);
	assert_string_equal(pr->files[0].old_path, "k_defconfig");
	assert_string_equal(pr->files[0].path, "mt8395_genio_1200_evk_defconfig");
	assert_true(pr->files[1].elided);
	assert_string_equal(pr->files[1].old_path, "/mach/atmel_serial.h");
	assert_string_equal(pr->files[1].path, "include/dm/platform_data/atmel_serial.h");
	pg_pull_request_free(pr);
	free(text);

	/* one file, and a list that git cut short */
	text = replace(REQUEST, STAT, " a.c | 1 +\n ...\n 1 file changed, 1 insertion(+)\n");
	pr = parse_ok(text);
	assert_int_equal(pr->nfiles, 1);
	assert_true(pr->files_elided);
	pg_pull_request_free(pr);
	free(text);
}

static void test_shortlog_wrapped_by_mailer(void **state)
{
	char *text = replace(REQUEST, "      randstruct: gcc-plugin: Fix attribute addition\n",
			     "      randstruct: gcc-plugin: Fix\nattribute   addition\n");
	pg_pull_request *pr = parse_ok(text);

	(void)state;
	assert_int_equal(pr->nshortlog, 3);
	assert_string_equal(pr->shortlog[1].subject, "randstruct: gcc-plugin: Fix attribute addition");
	pg_pull_request_free(pr);
	free(text);
}

static void test_inconsistent_counts(void **state)
{
	char *text = replace(REQUEST, "Kees Cook (2):", "Kees Cook (3):");

	(void)state;
	parse_fails(text, strlen(text), PG_EINVALID,
		    "the shortlog says 'Kees Cook' has 3 commits but lists 2");
	free(text);
	text = replace(REQUEST, " 2 files changed", " 3 files changed");
	parse_fails(text, strlen(text), PG_EINVALID, "the diffstat lists 2 files but says 3 changed");
	free(text);
}

static void test_bad_ids(void **state)
{
	char *text = replace(REQUEST, "b5562f9c8d72db9a9d93d7df6daa43ea90272925:", "b5562f9c:");

	(void)state;
	parse_fails(text, strlen(text), PG_EINVALID, "the base commit: 'b5562f9c' is not a full object id");
	free(text);
	text = replace(REQUEST, "544bbb511a995040dd5b32148a5e648cbaedb43a:",
		       "544bbb511a995040dd5b32148a5e648cbaedb43g:");
	parse_fails(text, strlen(text), PG_EINVALID, "the head commit: ");
	free(text);
}

/* Every prefix of the text: a clear error until the diffstat summary is in. */
static void test_every_truncation(void **state)
{
	const char *summary = strstr(REQUEST, " 2 files changed");
	size_t len, full = strlen(REQUEST), need = (size_t)(summary - REQUEST) + 16;

	(void)state;
	for (len = 0; len < full; len++) {
		pg_pull_request *pr = NULL;
		int err = pg_mail_parse(&pr, REQUEST, len);

		if (len < need) {
			if (err != PG_EINVALID)
				fail_msg("prefix of %zu bytes: got %d", len, err);
			assert_null(pr);
			assert_true(strlen(pg_error_last()) > 0);
		} else {
			assert_int_equal(err, 0);
		}
		pg_pull_request_free(pr);
	}
}

static void test_not_a_request(void **state)
{
	static const char bin[] = "\x7f" "ELF\x02\x01\x01\0\0\0";

	(void)state;
	parse_fails("", 0, PG_EINVALID, "not a git request-pull mail");
	parse_fails("Subject: hello\n\nJust a note.\n", 29, PG_EINVALID,
		    "not a git request-pull mail: no 'The following changes since commit <id>:' line");
	parse_fails(bin, sizeof(bin) - 1, PG_EINVALID, "contains NUL bytes");
}

static void test_qp(void **state)
{
	pg_buf b = PG_BUF_INIT;
	const char *in = "a=3Db =C3=A9=\nsoft  \ntrailing=20\n=ZZ bad =\n";

	(void)state;
	assert_int_equal(pg_mail_decode_qp(&b, in, strlen(in)), 0);
	assert_string_equal(b.ptr, "a=b \xc3\xa9soft\ntrailing \n=ZZ bad ");
	pg_buf_release(&b);
}

static void test_base64(void **state)
{
	pg_buf b = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_mail_decode_base64(&b, "aGVs\nbG8g\r\nd29y bGQ=\n", 21), 0);
	assert_string_equal(b.ptr, "hello world");
	pg_buf_clear(&b);
	assert_int_equal(pg_mail_decode_base64(&b, "aGVsbG8", 7), 0);
	assert_string_equal(b.ptr, "hello");
	assert_int_equal(pg_mail_decode_base64(&b, "aGV*bG8", 7), PG_EINVALID);
	pg_buf_release(&b);
}

static void test_encoded_words(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "=?utf-8?q?=5BGIT_PULL=5D_hardening?=", "[GIT PULL] hardening" },
		{ "=?UTF-8?B?W0dJVCBQVUxMXQ==?= fixes", "[GIT PULL] fixes" },
		{ "=?utf-8?q?a?= =?utf-8?q?b?=", "ab" },
		{ "=?iso-8859-1?q?Gr=FC=DFe?=", "Gr\xc3\xbc\xc3\x9f" "e" },
		{ "=?koi8-r?q?x?= plain", "=?koi8-r?q?x?= plain" },
		{ "=?utf-8?q?unterminated", "=?utf-8?q?unterminated" },
		{ "=?utf-8?b?!!!!?=", "=?utf-8?b?!!!!?=" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < PG_ARRAY_SIZE(cases); i++) {
		pg_buf b = PG_BUF_INIT;

		assert_int_equal(pg_mail_decode_header(&b, cases[i].in, strlen(cases[i].in)), 0);
		assert_string_equal(b.ptr, cases[i].want);
		pg_buf_release(&b);
	}
}

/* Build a mail: headers, a blank line, body. */
static char *mail(const char *headers, const char *body)
{
	pg_buf b = PG_BUF_INIT;

	assert_int_equal(pg_buf_printf(&b, "%s\n%s", headers, body), 0);
	return pg_buf_detach(&b);
}

static void test_mail_headers_and_crlf(void **state)
{
	pg_buf crlf = PG_BUF_INIT;
	char *m = mail("From: Kees Cook <kees@kernel.org>\n"
		       "Subject: [GIT PULL] hardening\n fixes for\tv6.16-rc1\n"
		       "Content-Type: text/plain; charset=\"us-ascii\"\n", REQUEST);
	pg_pull_request *pr = NULL;
	size_t i;

	(void)state;
	for (i = 0; m[i]; i++) {
		if (m[i] == '\n')
			assert_int_equal(pg_buf_putc(&crlf, '\r'), 0);
		assert_int_equal(pg_buf_putc(&crlf, m[i]), 0);
	}
	assert_int_equal(pg_mail_parse(&pr, crlf.ptr, crlf.len), 0);
	assert_string_equal(pr->subject, "[GIT PULL] hardening fixes for v6.16-rc1");
	assert_true(pr->git_pull);
	assert_string_equal(pr->ref, "tags/hardening-v6.16-rc1-fix1-take2");
	assert_int_equal(pr->nshortlog, 3);
	assert_int_equal(pr->nfiles, 2);
	pg_pull_request_free(pr);
	pg_buf_release(&crlf);
	free(m);
}

static void test_quoted_printable_mail(void **state)
{
	pg_buf qp = PG_BUF_INIT, hdr = PG_BUF_INIT;
	pg_pull_request *pr = NULL;
	size_t i, col = 0;

	(void)state;
	/* encode by hand: '=' escaped, a soft break every 30 columns */
	for (i = 0; REQUEST[i]; i++) {
		if (REQUEST[i] == '\n') {
			assert_int_equal(pg_buf_putc(&qp, '\n'), 0);
			col = 0;
			continue;
		}
		if (col >= 30) {
			assert_int_equal(pg_buf_puts(&qp, "=\n"), 0);
			col = 0;
		}
		assert_int_equal(REQUEST[i] == '=' ? pg_buf_puts(&qp, "=3D") :
				 pg_buf_putc(&qp, REQUEST[i]), 0);
		col++;
	}
	assert_int_equal(pg_buf_puts(&hdr, "Subject: Re: something\nContent-Type: text/plain; "
				     "charset=utf-8\nContent-Transfer-Encoding: Quoted-Printable\n\n"), 0);
	assert_int_equal(pg_buf_put(&hdr, qp.ptr, qp.len), 0);
	assert_int_equal(pg_mail_parse(&pr, hdr.ptr, hdr.len), 0);
	assert_false(pr->git_pull);
	assert_string_equal(pr->shortlog[2].subject, "Merge tag 'hardening-v6.16-rc1' of "
			    "git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux");
	assert_string_equal(hex(&pr->head), "544bbb511a995040dd5b32148a5e648cbaedb43a");
	pg_pull_request_free(pr);
	pg_buf_release(&qp);
	pg_buf_release(&hdr);
}

static char *b64(const char *s)
{
	static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	pg_buf b = PG_BUF_INIT;
	size_t i, n = strlen(s);

	for (i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)s[i] << 16;

		if (i + 1 < n)
			v |= (unsigned char)s[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)s[i + 2];
		pg_buf_putc(&b, t[v >> 18 & 63]);
		pg_buf_putc(&b, t[v >> 12 & 63]);
		pg_buf_putc(&b, i + 1 < n ? t[v >> 6 & 63] : '=');
		pg_buf_putc(&b, i + 2 < n ? t[v & 63] : '=');
		if (i % 57 == 54)
			pg_buf_putc(&b, '\n');
	}
	return pg_buf_detach(&b);
}

static void test_multipart(void **state)
{
	char *enc = b64(REQUEST);
	pg_buf m = PG_BUF_INIT;
	pg_pull_request *pr = NULL;

	(void)state;
	/* PGP/MIME: multipart/signed inside multipart/mixed, an HTML part first */
	assert_int_equal(pg_buf_printf(&m,
		"Subject: [GIT PULL v2] x\nMIME-Version: 1.0\n"
		"Content-Type: multipart/mixed;\n\tboundary=\"outer\"\n\npreamble\n"
		"--outer\nContent-Type: text/html\n\n<p>The following changes since commit</p>\n"
		"--outer\nContent-Type: multipart/signed; boundary=inner; protocol=\"application/pgp-signature\"\n\n"
		"--inner\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: base64\n\n"
		"%s\n--inner\nContent-Type: application/pgp-signature\n\n-----BEGIN PGP SIGNATURE-----\n"
		"--inner--\n--outer--\nepilogue\n", enc), 0);
	assert_int_equal(pg_mail_parse(&pr, m.ptr, m.len), 0);
	assert_true(pr->git_pull);
	assert_int_equal(pr->nshortlog, 3);
	pg_pull_request_free(pr);
	pg_buf_release(&m);

	assert_int_equal(pg_buf_puts(&m, "Content-Type: multipart/mixed\n\n--x\n\nhi\n--x--\n"), 0);
	parse_fails(m.ptr, m.len, PG_EINVALID, "multipart mail without a boundary");
	pg_buf_clear(&m);
	assert_int_equal(pg_buf_puts(&m, "Content-Type: multipart/mixed; boundary=x\n\n"
				     "--x\nContent-Type: image/png\n\nPNG\n--x--\n"), 0);
	parse_fails(m.ptr, m.len, PG_EUNSUPPORTED, "no text/plain part in the multipart mail");
	pg_buf_release(&m);
	free(enc);
}

static void test_deep_multipart(void **state)
{
	pg_buf m = PG_BUF_INIT;
	int i;

	(void)state;
	for (i = 0; i < 8; i++)
		assert_int_equal(pg_buf_printf(&m, "Content-Type: multipart/mixed; boundary=b%d\n\n"
					       "--b%d\n", i, i), 0);
	assert_int_equal(pg_buf_puts(&m, "\nbody\n"), 0);
	parse_fails(m.ptr, m.len, PG_EUNSUPPORTED, "MIME parts nested deeper than");
	pg_buf_release(&m);
}

static void test_charsets_and_encodings(void **state)
{
	char *m;
	pg_pull_request *pr = NULL;

	(void)state;
	m = mail("Content-Type: text/plain; charset=koi8-r\n", REQUEST);
	parse_fails(m, strlen(m), PG_EUNSUPPORTED, "charset 'koi8-r' is not supported");
	free(m);
	m = mail("Content-Transfer-Encoding: x-uuencode\n", REQUEST);
	parse_fails(m, strlen(m), PG_EUNSUPPORTED, "Content-Transfer-Encoding 'x-uuencode' is not supported");
	free(m);
	m = mail("Content-Type: text/html; charset=utf-8\n", REQUEST);
	parse_fails(m, strlen(m), PG_EUNSUPPORTED, "the mail is text/html, not text/plain");
	free(m);
	m = mail("Content-Transfer-Encoding: base64\n", "not*base64\n");
	parse_fails(m, strlen(m), PG_EINVALID, "invalid base64");
	free(m);

	/* ISO-8859-1 is converted to UTF-8 */
	m = replace(REQUEST, "Kees Cook (2):", "K\xe9\x65s Cook (2):");
	{
		char *l1 = mail("Content-Type: text/plain; charset=ISO-8859-1\n", m);

		assert_int_equal(pg_mail_parse(&pr, l1, strlen(l1)), 0);
		assert_string_equal(pr->shortlog[0].author, "K\xc3\xa9\x65s Cook");
		pg_pull_request_free(pr);
		free(l1);
	}
	free(m);
}

static void test_format_flowed(void **state)
{
	pg_buf body = PG_BUF_INIT;
	char *wrapped = replace(REQUEST, "      randstruct: gcc-plugin: Fix attribute addition\n",
				"      randstruct: gcc-plugin: Fix \nattribute addition\n");
	char *m;
	pg_pull_request *pr = NULL;
	const char *p;

	(void)state;
	/* a sender stuffs a space before lines that start with one */
	for (p = wrapped; *p; p++) {
		if ((p == wrapped || p[-1] == '\n') && *p == ' ')
			assert_int_equal(pg_buf_putc(&body, ' '), 0);
		assert_int_equal(pg_buf_putc(&body, *p), 0);
	}
	m = mail("Content-Type: text/plain; charset=utf-8; format=flowed\n", body.ptr);
	assert_int_equal(pg_mail_parse(&pr, m, strlen(m)), 0);
	assert_string_equal(pr->shortlog[1].subject, "randstruct: gcc-plugin: Fix attribute addition");
	assert_string_equal(pr->files[0].path, "drivers/net/wireless/intel/iwlwifi/mld/d3.c");
	pg_pull_request_free(pr);
	pg_buf_release(&body);
	free(wrapped);
	free(m);
}

static void test_mbox(void **state)
{
	pg_buf m = PG_BUF_INIT, subject = PG_BUF_INIT, text = PG_BUF_INIT;
	pg_pull_request *pr = NULL;

	(void)state;
	assert_int_equal(pg_buf_printf(&m,
		"From a@b Sat May 31 08:00:00 2025\nSubject: [PATCH] x\n\n"
		">From here on, a patch.\n\n"
		"From a@b Sat May 31 09:00:00 2025\nSubject: Re: [GIT PULL] old\n\n> quoted\n\n"
		"From a@b Sat May 31 10:00:00 2025\nSubject: =?utf-8?q?=5BGIT_PULL=5D?= fixes\n\n"
		"%s\n"
		"From a@b Sat May 31 11:00:00 2025\nSubject: [GIT PULL] later\n\nnope\n", REQUEST), 0);
	assert_int_equal(pg_mail_parse(&pr, m.ptr, m.len), 0);
	assert_string_equal(pr->subject, "[GIT PULL] fixes");
	assert_int_equal(pr->nshortlog, 3);
	pg_pull_request_free(pr);

	/* no [GIT PULL] anywhere: the first message, with mboxrd quoting undone */
	pg_buf_clear(&m);
	assert_int_equal(pg_buf_puts(&m, "From a@b x\nSubject: one\n\n>From me\n>>From you\n\n"
				     "From a@b y\nSubject: two\n\nsecond\n"), 0);
	assert_int_equal(pg_mail_text(&text, &subject, m.ptr, m.len), 0);
	assert_string_equal(subject.ptr, "one");
	assert_string_equal(text.ptr, "From me\n>From you\n\n");
	pg_buf_release(&m);
	pg_buf_release(&subject);
	pg_buf_release(&text);
}

/*
 * A thread as b4 mbox writes it: the request is the message whose text is
 * a request-pull, not a reply or forward carrying it, and of two requests
 * the later version; with none, one line says where b4 am put it.
 */
static void test_mbox_thread(void **state)
{
	pg_buf m = PG_BUF_INIT;
	pg_pull_request *pr = NULL;

	(void)state;
	assert_int_equal(pg_buf_printf(&m,
		"From a@b x\nSubject: Re: [GIT PULL] fixes\n\n%s\n"
		"From a@b x\nSubject: Fwd: [GIT PULL] fixes\n\n%s\n"
		"From a@b x\nSubject: [PATCH 0/3] no pull at all\n\nhello\n\n"
		"From a@b x\nSubject: [PULL] fixes\n\n%s\n"
		"From a@b x\nSubject: [GIT PULL v3] fixes\n\n%s\n"
		"From a@b x\nSubject: [GIT PULL v2] fixes\n\n%s\n"
		"From a@b x\nSubject: AW: [GIT PULL v3] fixes\n\n%s\n",
		REQUEST, REQUEST, REQUEST, REQUEST, REQUEST, REQUEST), 0);
	assert_int_equal(pg_mail_parse(&pr, m.ptr, m.len), 0);
	assert_string_equal(pr->subject, "[GIT PULL v3] fixes");
	pg_pull_request_free(pr);

	/* a pull request's subject is not needed when the text is one */
	pg_buf_clear(&m);
	assert_int_equal(pg_buf_printf(&m, "From a@b x\nSubject: [GIT PULL] empty\n\nnothing\n\n"
				     "From a@b x\nSubject: [PATCH 0/2] fixes\n\n%s\n", REQUEST), 0);
	assert_int_equal(pg_mail_parse(&pr, m.ptr, m.len), 0);
	assert_string_equal(pr->subject, "[PATCH 0/2] fixes");
	pg_pull_request_free(pr);

	pg_buf_clear(&m);
	assert_int_equal(pg_buf_puts(&m, "From a@b x\nSubject: [PATCH 1/2] a\n\npatch\n\n"
				     "From a@b x\nSubject: [PATCH 2/2] b\n\npatch\n"), 0);
	parse_fails(m.ptr, m.len, PG_EINVALID, "no message of the mbox is a git request-pull mail "
		    "(b4 am writes a pull request's cover letter to the .cover file beside the .mbx "
		    "of its patches)");
	pg_buf_release(&m);
}

/*
 * The request's Message-Id, as written (folded lines joined), and the
 * link to its thread: of an mbox, the request's, not another message's.
 */
static void test_message_id_and_link(void **state)
{
	char *m = mail("From: Kees Cook <kees@kernel.org>\nMessage-ID:\n <20250601.fix1@keescook>\n"
		       "Subject: [GIT PULL] fixes\n", REQUEST);
	pg_pull_request *pr = NULL;
	pg_buf mbox = PG_BUF_INIT, link = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_mail_parse(&pr, m, strlen(m)), 0);
	assert_string_equal(pr->message_id, "<20250601.fix1@keescook>");
	pg_pull_request_free(pr);
	assert_int_equal(pg_mail_thread_link(&link, NULL, m, strlen(m)), 1);
	assert_string_equal(link.ptr, "https://lore.kernel.org/r/20250601.fix1@keescook");

	assert_int_equal(pg_buf_printf(&mbox,
		"From a@b x\nMessage-Id: <patch@b>\nSubject: [PATCH] x\n\npatch\n\n"
		"From a@b x\nMessage-Id: <pull@b>\nSubject: [GIT PULL] fixes\n\n%s\n"
		"From a@b x\nMessage-Id: <reply@b>\nSubject: Re: [GIT PULL] fixes\n\nthanks\n",
		REQUEST), 0);
	assert_int_equal(pg_mail_parse(&pr, mbox.ptr, mbox.len), 0);
	assert_string_equal(pr->message_id, "<pull@b>");
	pg_pull_request_free(pr);
	pg_buf_clear(&link);
	assert_int_equal(pg_mail_thread_link(&link, "https://lists.example/", mbox.ptr, mbox.len), 1);
	assert_string_equal(link.ptr, "https://lists.example/pull@b");

	/* a bare request-pull text has no Message-Id, and no link */
	assert_int_equal(pg_mail_parse(&pr, REQUEST, strlen(REQUEST)), 0);
	assert_null(pr->message_id);
	pg_pull_request_free(pr);
	pg_buf_clear(&link);
	assert_int_equal(pg_mail_thread_link(&link, NULL, REQUEST, strlen(REQUEST)), 0);
	assert_int_equal(link.len, 0);
	pg_buf_release(&mbox);
	pg_buf_release(&link);
	free(m);
}

/* A Message-Id is percent-encoded as public-inbox encodes one; one that is not a msg-id gives no link. */
static void test_link_encoding_and_refusals(void **state)
{
	static const char *const bad[] = {
		"20250601.fix1@keescook", "<>", "<@b>", "<a@>", "<ab>", "<a b@c>", "<a\t@b>",
		"<a\r@b>", "<a\n@b>", "<a@b>\nSigned-off-by: x <x@y>", "<a@b><c@d>", "<<a@b>>",
		"<a\001@b>", "<a\177@b>", "<\303\251@b>", "", " <a@b>",
	};
	pg_buf link = PG_BUF_INIT, big = PG_BUF_INIT;
	size_t i;

	(void)state;
	assert_int_equal(pg_mail_link(&link, NULL, "<a/b?c#d%e\"f[g]\\h^i`j{k|l}@x.y>"), 1);
	assert_string_equal(link.ptr, "https://lore.kernel.org/r/"
			    "a%2Fb%3Fc%23d%25e%22f%5Bg%5D%5Ch%5Ei%60j%7Bk%7Cl%7D@x.y");
	pg_buf_clear(&link);
	assert_int_equal(pg_mail_link(&link, "", "<x+y=z!$&'()*,;:~-_.@host>"), 1);
	assert_string_equal(link.ptr, "x+y=z!$&'()*,;:~-_.@host");
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		pg_buf_clear(&link);
		assert_int_equal(pg_mail_link(&link, NULL, bad[i]), 0);
		assert_int_equal(link.len, 0);
		/* nor is it a bare id (for KCIDB's message_id) */
		assert_int_equal(pg_mail_msgid(&link, bad[i]), 0);
		assert_int_equal(link.len, 0);
	}
	/* the bare id: the brackets off, nothing encoded */
	assert_int_equal(pg_mail_msgid(&link, "<a/b%c@x.y>"), 1);
	assert_string_equal(link.ptr, "a/b%c@x.y");
	pg_buf_clear(&link);
	assert_int_equal(pg_mail_link(&link, NULL, NULL), 0);
	/* as long as a mail's line may be, then one byte longer */
	assert_int_equal(pg_buf_putc(&big, '<'), 0);
	for (i = 0; i < PG_MAIL_MSGID_MAX - 4; i++)
		assert_int_equal(pg_buf_putc(&big, 'a'), 0);
	assert_int_equal(pg_buf_puts(&big, "@b>"), 0);
	assert_int_equal(big.len, PG_MAIL_MSGID_MAX);
	assert_int_equal(pg_mail_link(&link, "", big.ptr), 1);
	assert_int_equal(link.len, PG_MAIL_MSGID_MAX - 2);
	pg_buf_clear(&big);
	pg_buf_clear(&link);
	assert_int_equal(pg_buf_putc(&big, '<'), 0);
	for (i = 0; i < PG_MAIL_MSGID_MAX - 3; i++)
		assert_int_equal(pg_buf_putc(&big, 'a'), 0);
	assert_int_equal(pg_buf_puts(&big, "@b>"), 0);
	assert_int_equal(pg_mail_link(&link, NULL, big.ptr), 0);
	assert_int_equal(link.len, 0);
	pg_buf_release(&link);
	pg_buf_release(&big);
}

static void test_size_cap(void **state)
{
	size_t len = PG_MAIL_MAX + 1;
	char *big = malloc(len);

	(void)state;
	assert_non_null(big);
	memset(big, 'x', len);
	parse_fails(big, len, PG_ETOOBIG, "mail exceeds 4 MiB");
	free(big);
}

static void test_too_many_entries(void **state)
{
	pg_buf b = PG_BUF_INIT;
	char *text;
	size_t i;

	(void)state;
	pg_buf_init(&b, PG_MAIL_MAX);
	assert_int_equal(pg_buf_printf(&b, "A (%d):\n", PG_MAIL_MAX_ENTRIES + 1), 0);
	for (i = 0; i <= PG_MAIL_MAX_ENTRIES; i++)
		assert_int_equal(pg_buf_puts(&b, " x\n"), 0);
	text = replace(REQUEST, "Linus Torvalds (1):\n      Merge tag 'hardening-v6.16-rc1' of "
		       "git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux\n", b.ptr);
	parse_fails(text, strlen(text), PG_ETOOBIG, "the shortlog exceeds 65536 commits");
	free(text);
	pg_buf_release(&b);
}

/* Random bytes and random damage to a good mail: an answer, never a crash. */
static void test_garbage_never_crashes(void **state)
{
	uint64_t seed = 0x9E3779B97F4A7C15ull;
	char *good = mail("Subject: [GIT PULL] x\nContent-Type: multipart/mixed; boundary=q\n",
			  "--q\nContent-Transfer-Encoding: quoted-printable\n\n");
	pg_buf base = PG_BUF_INIT;
	size_t round, i;

	(void)state;
	assert_int_equal(pg_buf_puts(&base, good), 0);
	assert_int_equal(pg_buf_puts(&base, REQUEST), 0);
	assert_int_equal(pg_buf_puts(&base, "--q--\n"), 0);
	for (round = 0; round < 3000; round++) {
		pg_buf m = PG_BUF_INIT;
		pg_pull_request *pr = NULL;
		int err;

		if (round % 2) {
			size_t n = (size_t)(seed >> 33) % 600;

			for (i = 0; i < n; i++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				pg_buf_putc(&m, "=?\n-: |()0a \r>From{}\"\\"[(seed >> 40) % 23]);
				if ((seed >> 20) % 7 == 0)
					pg_buf_putc(&m, (char)(seed >> 48));
			}
		} else {
			pg_buf_put(&m, base.ptr, base.len);
			for (i = 0; i < 4; i++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				m.ptr[(seed >> 33) % m.len] = (char)(seed >> 52);
			}
			pg_buf_truncate(&m, (size_t)(seed >> 20) % (m.len + 1));
		}
		err = pg_mail_parse(&pr, m.ptr, m.len);
		assert_true(err == 0 || err == PG_EINVALID || err == PG_EUNSUPPORTED);
		assert_true((err == 0) == (pr != NULL));
		pg_pull_request_free(pr);
		pg_buf_release(&m);
	}
	pg_buf_release(&base);
	free(good);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_pull_text),
		cmocka_unit_test(test_prose_and_signature_are_skipped),
		cmocka_unit_test(test_without_tag_message),
		cmocka_unit_test(test_branch_description),
		cmocka_unit_test(test_ref_variants),
		cmocka_unit_test(test_diffstat_names),
		cmocka_unit_test(test_shortlog_wrapped_by_mailer),
		cmocka_unit_test(test_inconsistent_counts),
		cmocka_unit_test(test_bad_ids),
		cmocka_unit_test(test_every_truncation),
		cmocka_unit_test(test_not_a_request),
		cmocka_unit_test(test_qp),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_encoded_words),
		cmocka_unit_test(test_mail_headers_and_crlf),
		cmocka_unit_test(test_quoted_printable_mail),
		cmocka_unit_test(test_multipart),
		cmocka_unit_test(test_deep_multipart),
		cmocka_unit_test(test_charsets_and_encodings),
		cmocka_unit_test(test_format_flowed),
		cmocka_unit_test(test_mbox),
		cmocka_unit_test(test_mbox_thread),
		cmocka_unit_test(test_message_id_and_link),
		cmocka_unit_test(test_link_encoding_and_refusals),
		cmocka_unit_test(test_size_cap),
		cmocka_unit_test(test_too_many_entries),
		cmocka_unit_test(test_garbage_never_crashes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
