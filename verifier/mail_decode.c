/* mail_decode.c - a mail's encodings undone: CRLF, quoted-printable, base64, RFC 2047 words, Latin-1. */
#include "verifier/mail.h"
#include "verifier/mail_internal.h"
#include "verifier/mail_lines.h"
#include "common/error.h"
#include "common/hex.h"
#include "common/str.h"

int pg_mail_unix_lines(pg_buf *out, const char *s, size_t len)
{
	size_t i, start = 0;
	int err;

	for (i = 0; i + 1 < len; i++) {
		if (s[i] == '\r' && s[i + 1] == '\n') {
			if ((err = pg_buf_put(out, s + start, i - start)) < 0)
				return err;
			start = i + 1;
		}
	}
	return pg_buf_put(out, s + start, len - start);
}

int pg_mail_decode_qp(pg_buf *out, const char *s, size_t len)
{
	cursor c = { s, s + len };
	const char *l;
	size_t n, i;
	int err;

	while (next_line(&c, &l, &n)) {
		bool soft = false, newline = c.p > l + n && c.p[-1] == '\n';

		/* trailing blanks were added in transport; encoders write =20 */
		pg_str_rtrim(l, &n, PG_STR_BLANKS);
		if (n && l[n - 1] == '=') {
			soft = true;
			n--;
		}
		for (i = 0; i < n; i++) {
			int hi, lo;

			if (l[i] == '=' && i + 2 < n &&
			    (hi = pg_hex_digit((unsigned char)l[i + 1])) >= 0 &&
			    (lo = pg_hex_digit((unsigned char)l[i + 2])) >= 0) {
				err = pg_buf_putc(out, (char)(hi << 4 | lo));
				i += 2;
			} else {
				err = pg_buf_putc(out, l[i]);
			}
			if (err < 0)
				return err;
		}
		if (!soft && newline && (err = pg_buf_putc(out, '\n')) < 0)
			return err;
	}
	return 0;
}

static int b64val(int ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+')
		return 62;
	if (ch == '/')
		return 63;
	return -1;
}

int pg_mail_decode_base64(pg_buf *out, const char *s, size_t len)
{
	uint32_t acc = 0;
	unsigned bits = 0;
	size_t i;
	int err;

	for (i = 0; i < len; i++) {
		int v;

		if (is_ws(s[i]))
			continue;
		if (s[i] == '=')
			break;
		if ((v = b64val((unsigned char)s[i])) < 0)
			return pg_error_set(PG_EINVALID, "invalid base64 in the mail body");
		acc = (acc << 6 | (uint32_t)v) & 0xFFFFFF;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if ((err = pg_buf_putc(out, (char)(acc >> bits & 0xFF))) < 0)
				return err;
		}
	}
	return 0;
}

enum pg_mail_charset pg_mail_charset_of(const char *name, size_t n)
{
	const char *star = memchr(name, '*', n);

	if (star) /* RFC 2231 language suffix */
		n = (size_t)(star - name);
	if (!n || equals_ci(name, n, "utf-8") || equals_ci(name, n, "utf8") ||
	    equals_ci(name, n, "us-ascii") || equals_ci(name, n, "ascii"))
		return PG_MAIL_CS_UTF8;
	if (equals_ci(name, n, "iso-8859-1") || equals_ci(name, n, "iso8859-1") ||
	    equals_ci(name, n, "latin1"))
		return PG_MAIL_CS_LATIN1;
	return PG_MAIL_CS_UNKNOWN;
}

int pg_mail_put_charset(pg_buf *out, const char *s, size_t len, enum pg_mail_charset cs)
{
	size_t i;
	int err = 0;

	if (cs != PG_MAIL_CS_LATIN1)
		return pg_buf_put(out, s, len);
	for (i = 0; i < len && err == 0; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch < 0x80) {
			err = pg_buf_putc(out, (char)ch);
		} else if ((err = pg_buf_putc(out, (char)(0xC0 | ch >> 6))) == 0) {
			err = pg_buf_putc(out, (char)(0x80 | (ch & 0x3F)));
		}
	}
	return err;
}

/*
 * One RFC 2047 encoded word at s ("=?charset?Q?text?="): its length, or 0
 * when s does not start a word pullgate decodes.  Decodes into out when
 * out is given; 0 then also means it could not be decoded, and nothing
 * was appended.
 */
static size_t encoded_word(pg_buf *out, const char *s, size_t len)
{
	const char *cs, *text, *q, *end = s + len;
	pg_buf raw = PG_BUF_INIT;
	enum pg_mail_charset charset;
	char enc;
	size_t i, used;
	int err = 0;

	if (len < 8 || s[0] != '=' || s[1] != '?')
		return 0;
	cs = s + 2;
	q = memchr(cs, '?', (size_t)(end - cs));
	if (!q || q == cs || q - cs > 40 || end - q < 5 || q[2] != '?')
		return 0;
	charset = pg_mail_charset_of(cs, (size_t)(q - cs));
	enc = q[1];
	text = q + 3;
	for (q = text; q + 1 < end && !(q[0] == '?' && q[1] == '='); q++)
		if (is_ws(*q))
			return 0;
	if (q + 1 >= end || charset == PG_MAIL_CS_UNKNOWN ||
	    (enc != 'Q' && enc != 'q' && enc != 'B' && enc != 'b'))
		return 0;
	used = (size_t)(q + 2 - s);
	if (!out)
		return used;
	pg_buf_init(&raw, PG_MAIL_MAX);
	if (enc == 'B' || enc == 'b') {
		err = pg_mail_decode_base64(&raw, text, (size_t)(q - text));
	} else {
		for (i = 0; text + i < q && err == 0; i++) {
			int hi, lo;

			if (text[i] == '_') {
				err = pg_buf_putc(&raw, ' ');
			} else if (text[i] == '=' && text + i + 2 < q &&
				   (hi = pg_hex_digit((unsigned char)text[i + 1])) >= 0 &&
				   (lo = pg_hex_digit((unsigned char)text[i + 2])) >= 0) {
				err = pg_buf_putc(&raw, (char)(hi << 4 | lo));
				i += 2;
			} else {
				err = pg_buf_putc(&raw, text[i]);
			}
		}
	}
	if (err < 0 || pg_mail_put_charset(out, raw.ptr, raw.len, charset) < 0)
		used = 0;
	pg_buf_release(&raw);
	return used;
}

int pg_mail_decode_header(pg_buf *out, const char *s, size_t len)
{
	size_t pos = 0, w;
	bool after_word = false;
	int err;

	while (pos < len) {
		if (is_ws(s[pos])) {
			size_t e = pos;

			while (e < len && is_ws(s[e]))
				e++;
			/* blanks between two encoded words are not part of the text */
			if (!(after_word && encoded_word(NULL, s + e, len - e)) &&
			    (err = pg_buf_put(out, s + pos, e - pos)) < 0)
				return err;
			pos = e;
			continue;
		}
		if (s[pos] == '=' && (w = encoded_word(NULL, s + pos, len - pos)) > 0) {
			/* a word that does not decode (bad base64) is kept as written */
			if (!encoded_word(out, s + pos, len - pos) &&
			    (err = pg_buf_put(out, s + pos, w)) < 0)
				return err;
			pos += w;
			after_word = true;
			continue;
		}
		if ((err = pg_buf_putc(out, s[pos++])) < 0)
			return err;
		after_word = false;
	}
	return 0;
}

int pg_mail_squeeze(pg_buf *out, const char *s, size_t len)
{
	size_t i;
	bool space = false, any = false;
	int err;

	for (i = 0; i < len; i++) {
		if (is_ws(s[i])) {
			space = any;
			continue;
		}
		if (space && (err = pg_buf_putc(out, ' ')) < 0)
			return err;
		if ((err = pg_buf_putc(out, s[i])) < 0)
			return err;
		space = false;
		any = true;
	}
	return 0;
}
