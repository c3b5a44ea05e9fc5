/* mail.c - decode a pull-request mail: mbox, RFC 822 headers, MIME, quoted-printable, base64. */
#include "verifier/mail.h"
#include "verifier/mail_lines.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/hex.h"

#include <sys/stat.h>
#include <unistd.h>

#define MAX_MESSAGES 4096   /* mbox messages looked at for the request */
#define MAX_MIME_DEPTH 4
#define QUOTE_MAX PG_MAIL_QUOTE_MAX

static bool equals_ci(const char *l, size_t n, const char *word)
{
	return strlen(word) == n && !strncasecmp(l, word, n);
}

/* "\r\n" becomes "\n"; a lone CR stays. */
static int unix_lines(pg_buf *out, const char *s, size_t len)
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

/* ---- decoders ----------------------------------------------------------- */

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

enum charset { CS_UTF8, CS_LATIN1, CS_UNKNOWN };

static enum charset charset_of(const char *name, size_t n)
{
	const char *star = memchr(name, '*', n);

	if (star) /* RFC 2231 language suffix */
		n = (size_t)(star - name);
	if (!n || equals_ci(name, n, "utf-8") || equals_ci(name, n, "utf8") ||
	    equals_ci(name, n, "us-ascii") || equals_ci(name, n, "ascii"))
		return CS_UTF8;
	if (equals_ci(name, n, "iso-8859-1") || equals_ci(name, n, "iso8859-1") ||
	    equals_ci(name, n, "latin1"))
		return CS_LATIN1;
	return CS_UNKNOWN;
}

static int put_charset(pg_buf *out, const char *s, size_t len, enum charset cs)
{
	size_t i;
	int err = 0;

	if (cs != CS_LATIN1)
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
	enum charset charset;
	char enc;
	size_t i, used;
	int err = 0;

	if (len < 8 || s[0] != '=' || s[1] != '?')
		return 0;
	cs = s + 2;
	q = memchr(cs, '?', (size_t)(end - cs));
	if (!q || q == cs || q - cs > 40 || end - q < 5 || q[2] != '?')
		return 0;
	charset = charset_of(cs, (size_t)(q - cs));
	enc = q[1];
	text = q + 3;
	for (q = text; q + 1 < end && !(q[0] == '?' && q[1] == '='); q++)
		if (is_ws(*q))
			return 0;
	if (q + 1 >= end || charset == CS_UNKNOWN ||
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
	if (err < 0 || put_charset(out, raw.ptr, raw.len, charset) < 0)
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

/* ---- headers and MIME --------------------------------------------------- */

typedef struct headers {
	pg_buf subject, ctype, cte;
	bool seen_subject, seen_ctype, seen_cte;
} headers;

static void headers_init(headers *h)
{
	memset(h, 0, sizeof(*h));
	pg_buf_init(&h->subject, PG_MAIL_MAX);
	pg_buf_init(&h->ctype, PG_MAIL_MAX);
	pg_buf_init(&h->cte, PG_MAIL_MAX);
}

static void headers_release(headers *h)
{
	pg_buf_release(&h->subject);
	pg_buf_release(&h->ctype);
	pg_buf_release(&h->cte);
}

/* A field name: printable ASCII without blanks or ':' (RFC 5322). */
static size_t field_name_len(const char *l, size_t n)
{
	size_t i;

	for (i = 0; i < n && l[i] != ':'; i++)
		if ((unsigned char)l[i] <= ' ' || (unsigned char)l[i] > '~')
			return 0;
	return i < n && i > 0 ? i : 0;
}

/*
 * Read the header block at the start of s.  *body is where the body
 * starts: after the blank line, or at the first line that is neither a
 * field nor a continuation.  *is_mail is false when s does not start with
 * a header field at all (a bare body).
 */
static int parse_headers(headers *h, bool *is_mail, size_t *body, const char *s, size_t len)
{
	cursor c = { s, s + len };
	pg_buf *cur = NULL;
	const char *l;
	size_t n, name;
	int err = 0;

	*is_mail = false;
	*body = 0;
	for (;;) {
		cursor before = c;

		if (!next_line(&c, &l, &n)) {
			*body = len;
			return 0;
		}
		if (n == 0 || pg_str_is_blank(l, n, PG_STR_SPACES)) {
			*body = (size_t)(c.p - s);
			return 0;
		}
		if ((*l == ' ' || *l == '\t') && *is_mail) {
			if (cur && ((err = pg_buf_putc(cur, ' ')) < 0 ||
				    (err = pg_buf_put(cur, l, n)) < 0))
				return err;
			continue;
		}
		if (!(name = field_name_len(l, n))) {
			*body = (size_t)(before.p - s);
			return 0;
		}
		*is_mail = true;
		cur = NULL;
		if (equals_ci(l, name, "subject") && !h->seen_subject)
			cur = &h->subject, h->seen_subject = true;
		else if (equals_ci(l, name, "content-type") && !h->seen_ctype)
			cur = &h->ctype, h->seen_ctype = true;
		else if (equals_ci(l, name, "content-transfer-encoding") && !h->seen_cte)
			cur = &h->cte, h->seen_cte = true;
		if (cur && (err = pg_buf_put(cur, l + name + 1, n - name - 1)) < 0)
			return err;
	}
}

/* The media type ("text/plain") of a Content-Type value, trimmed. */
static void media_type(const char **t, size_t *tn, const pg_buf *ctype)
{
	const char *semi = memchr(ctype->ptr, ';', ctype->len);

	*t = ctype->ptr;
	*tn = semi ? (size_t)(semi - ctype->ptr) : ctype->len;
	pg_str_trim(t, tn, PG_STR_SPACES);
}

/* A parameter of a Content-Type value (quoted or not); false when absent. */
static bool ct_param(pg_buf *out, const pg_buf *ctype, const char *name)
{
	const char *p = memchr(ctype->ptr, ';', ctype->len), *end = ctype->ptr + ctype->len;

	while (p && p < end) {
		const char *attr;
		size_t an;
		bool match;

		p++;
		while (p < end && is_ws(*p))
			p++;
		attr = p;
		while (p < end && *p != '=' && *p != ';')
			p++;
		an = (size_t)(p - attr);
		pg_str_trim(&attr, &an, PG_STR_SPACES);
		match = equals_ci(attr, an, name);
		if (p >= end || *p == ';')
			continue;
		p++;
		while (p < end && is_ws(*p))
			p++;
		if (p < end && *p == '"') {
			for (p++; p < end && *p != '"'; p++) {
				if (*p == '\\' && p + 1 < end)
					p++;
				if (match && pg_buf_putc(out, *p) < 0)
					return false;
			}
			if (p < end)
				p++;
		} else {
			const char *v = p;

			while (p < end && *p != ';' && !is_ws(*p))
				p++;
			if (match && pg_buf_put(out, v, (size_t)(p - v)) < 0)
				return false;
		}
		if (match)
			return true;
		p = memchr(p, ';', (size_t)(end - p));
	}
	return false;
}

/* RFC 3676: undo space-stuffing and join soft line breaks. */
static int unflow(pg_buf *out, const char *s, size_t len, bool delsp)
{
	cursor c = { s, s + len };
	const char *l;
	size_t n;
	int err;

	while (next_line(&c, &l, &n)) {
		bool soft;

		if (n == 3 && !memcmp(l, "-- ", 3)) {
			soft = false;
		} else {
			if (n && *l == ' ')
				l++, n--;
			soft = n && l[n - 1] == ' ';
			if (soft && delsp)
				n--;
		}
		if ((err = pg_buf_put(out, l, n)) < 0)
			return err;
		if (!soft && (err = pg_buf_putc(out, '\n')) < 0)
			return err;
	}
	return 0;
}

static int decode_entity(pg_buf *text, const headers *h, const char *body, size_t len, int depth);

/* Whether a part is one to read: text/plain, or no Content-Type at all. */
static bool is_text_plain(const headers *h)
{
	const char *t;
	size_t tn;

	media_type(&t, &tn, &h->ctype);
	return !tn || equals_ci(t, tn, "text/plain");
}

/*
 * The first text/plain part of a multipart body, looking into nested
 * multiparts (PGP/MIME signed mail is multipart/signed).  Returns 1 when
 * there is none.
 */
static int decode_multipart(pg_buf *text, const headers *h, const char *body, size_t len,
			    int depth)
{
	pg_buf boundary = PG_BUF_INIT;
	cursor c = { body, body + len };
	const char *l, *part = NULL;
	size_t n;
	int err = 1;

	if (depth >= MAX_MIME_DEPTH) {
		err = pg_error_set(PG_EUNSUPPORTED, "MIME parts nested deeper than %d", MAX_MIME_DEPTH);
		goto done;
	}
	if (!ct_param(&boundary, &h->ctype, "boundary") || !boundary.len) {
		err = pg_error_set(PG_EINVALID, "multipart mail without a boundary");
		goto done;
	}
	while (err == 1) {
		const char *start = c.p;
		bool more = next_line(&c, &l, &n), delim = false, close = false;

		if (more && n >= boundary.len + 2 && l[0] == '-' && l[1] == '-' &&
		    !memcmp(l + 2, boundary.ptr, boundary.len)) {
			const char *rest = l + 2 + boundary.len;
			size_t rn = n - 2 - boundary.len;

			close = rn >= 2 && rest[0] == '-' && rest[1] == '-';
			if (close)
				rest += 2, rn -= 2;
			delim = pg_str_is_blank(rest, rn, PG_STR_SPACES);
		}
		if (more && !delim)
			continue;
		if (part) {
			/* the newline before a delimiter belongs to the delimiter */
			const char *pend = start > part && start[-1] == '\n' ? start - 1 : start;
			size_t plen = (size_t)(pend - part), off;
			headers ph;
			bool is_mail;
			const char *t;
			size_t tn;

			headers_init(&ph);
			err = parse_headers(&ph, &is_mail, &off, part, plen);
			media_type(&t, &tn, &ph.ctype);
			if (err == 0 && is_text_plain(&ph))
				err = decode_entity(text, &ph, part + off, plen - off, depth + 1);
			else if (err == 0 && starts_ci(t, tn, "multipart/"))
				err = decode_multipart(text, &ph, part + off, plen - off, depth + 1);
			else if (err == 0)
				err = 1;
			headers_release(&ph);
		}
		if (!more || close)
			break;
		part = c.p;
	}
done:
	pg_buf_release(&boundary);
	return err;
}

static int decode_entity(pg_buf *text, const headers *h, const char *body, size_t len, int depth)
{
	pg_buf raw = PG_BUF_INIT, param = PG_BUF_INIT, lf = PG_BUF_INIT;
	const char *t, *cte = h->cte.ptr;
	size_t tn, cten = h->cte.len;
	enum charset cs;
	bool flowed, delsp;
	int err;

	pg_buf_init(&raw, PG_MAIL_MAX);
	pg_buf_init(&lf, PG_MAIL_MAX);
	media_type(&t, &tn, &h->ctype);
	if (starts_ci(t, tn, "multipart/")) {
		if ((err = decode_multipart(text, h, body, len, depth)) == 1)
			err = pg_error_set(PG_EUNSUPPORTED, "no text/plain part in the multipart mail");
		goto done;
	}
	if (tn && !equals_ci(t, tn, "text/plain")) {
		err = pg_error_set(PG_EUNSUPPORTED, "the mail is %.*s, not text/plain",
				   (int)(tn > QUOTE_MAX ? QUOTE_MAX : tn), t);
		goto done;
	}
	pg_str_trim(&cte, &cten, PG_STR_SPACES);
	if (!cten || equals_ci(cte, cten, "7bit") || equals_ci(cte, cten, "8bit") ||
	    equals_ci(cte, cten, "binary"))
		err = pg_buf_put(&raw, body, len);
	else if (equals_ci(cte, cten, "quoted-printable"))
		err = pg_mail_decode_qp(&raw, body, len);
	else if (equals_ci(cte, cten, "base64"))
		err = pg_mail_decode_base64(&raw, body, len);
	else
		err = pg_error_set(PG_EUNSUPPORTED, "Content-Transfer-Encoding '%.*s' is not supported",
				   (int)(cten > QUOTE_MAX ? QUOTE_MAX : cten), cte);
	if (err < 0)
		goto done;
	if ((err = unix_lines(&lf, raw.ptr, raw.len)) < 0)
		goto done;

	cs = CS_UTF8;
	if (ct_param(&param, &h->ctype, "charset") &&
	    (cs = charset_of(param.ptr, param.len)) == CS_UNKNOWN) {
		err = pg_error_set(PG_EUNSUPPORTED, "charset '%.*s' is not supported",
				   (int)(param.len > QUOTE_MAX ? QUOTE_MAX : param.len), param.ptr);
		goto done;
	}
	pg_buf_clear(&param);
	flowed = ct_param(&param, &h->ctype, "format") && equals_ci(param.ptr, param.len, "flowed");
	pg_buf_clear(&param);
	delsp = ct_param(&param, &h->ctype, "delsp") && equals_ci(param.ptr, param.len, "yes");
	pg_buf_clear(&raw);
	if ((err = put_charset(&raw, lf.ptr, lf.len, cs)) < 0)
		goto done;
	err = flowed ? unflow(text, raw.ptr, raw.len, delsp) : pg_buf_put(text, raw.ptr, raw.len);
done:
	pg_buf_release(&raw);
	pg_buf_release(&param);
	pg_buf_release(&lf);
	return err;
}

/* ---- mbox --------------------------------------------------------------- */

static bool is_from_line(const char *l, size_t n)
{
	return n >= 5 && !memcmp(l, "From ", 5);
}

static int message_text(pg_buf *text, pg_buf *subject, const char *m, size_t mlen);

/* A reply or a forward: "Re:", "Fwd:" and the prefixes mail readers write in other languages. */
static bool is_reply(const char *s)
{
	static const char *const prefixes[] = { "re:", "fwd:", "fw:", "aw:", "sv:", "wg:",
						"antw:", "odp:", "vs:", "tr:" };
	size_t i;

	for (i = 0; i < PG_ARRAY_SIZE(prefixes); i++)
		if (!strncasecmp(s, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* The N of a "vN" word in the subject's first [...] ("[GIT PULL v2]"), else 1. */
static unsigned subject_version(const char *s)
{
	const char *open = strchr(s, '['), *close = open ? strchr(open, ']') : NULL, *p;
	unsigned v = 0;

	if (!close)
		return 1;
	for (p = open + 1; p + 1 < close; p++)
		if ((p[0] == 'v' || p[0] == 'V') && (p[-1] == ' ' || p[-1] == '[') &&
		    p[1] >= '0' && p[1] <= '9') {
			for (p++; p < close && *p >= '0' && *p <= '9' && v < 100000; p++)
				v = v * 10 + (unsigned)(*p - '0');
			return v ? v : 1;
		}
	return 1;
}

/*
 * How well one message of an mbox fits as the pull request: its text
 * parses as `git request-pull` output (8), its subject marks a pull
 * request ("[GIT PULL", "[PULL", "pull-request") (2), and it is neither a
 * reply nor a forward (1); among equals, the higher "vN".  A reply that
 * quotes the request, a forward of it or the pr-tracker-bot's answer thus
 * loses to the request itself, and a resend (v2) in the same thread to
 * nothing.  *request says whether its text is a request-pull.
 */
static unsigned long message_score(bool *request, const char *m, size_t mlen)
{
	pg_buf text = PG_BUF_INIT, subject = PG_BUF_INIT;
	pg_pull_request *pr = NULL;
	unsigned long score = 0;

	*request = false;
	pg_buf_init(&text, PG_MAIL_MAX);
	pg_buf_init(&subject, PG_MAIL_MAX);
	if (message_text(&text, &subject, m, mlen) == 0) {
		if (pg_mail_parse_body(&pr, text.ptr, text.len) == 0) {
			*request = true;
			score += 8;
		}
		if (strcasestr(subject.ptr, "[GIT PULL") || strcasestr(subject.ptr, "[PULL") ||
		    strcasestr(subject.ptr, "pull-request"))
			score += 2;
		if (subject.len && !is_reply(subject.ptr))
			score += 1;
		score = score * 1000000 + subject_version(subject.ptr);
	}
	pg_error_clear();
	pg_pull_request_free(pr);
	pg_buf_release(&text);
	pg_buf_release(&subject);
	return score;
}

/*
 * Pick the message of an mbox (message_score): messages start at "From "
 * lines at the top or after a blank line; the first of the best wins.
 * The mboxrd ">From " quoting is undone.  *request: whether the one picked
 * is a request-pull.  Past MAX_MESSAGES messages without a request-pull
 * among them, the search stops and says so (PG_ETOOBIG): the mail may be
 * further on, so "not a request-pull mail" would be a guess.
 */
static int mbox_pick(pg_buf *msg, bool *request, const char *s, size_t len)
{
	cursor c = { s, s + len };
	const char *l, *nl, *start = s, *best = NULL, *best_end = NULL;
	size_t n, count = 0;
	unsigned long best_score = 0;
	bool prev_blank = true, first = true;

	*request = false;
	for (;;) {
		const char *at = c.p;
		bool more = next_line(&c, &l, &n);

		if (!more || (prev_blank && is_from_line(l, n) && at > start)) {
			const char *hs = start;
			unsigned long score;
			bool req;

			/* the "From " line itself is not a header */
			if (is_from_line(hs, (size_t)(at - hs)))
				hs = (nl = memchr(hs, '\n', (size_t)(at - hs))) ? nl + 1 : at;
			score = message_score(&req, hs, (size_t)(at - hs));
			if (first || score > best_score) {
				best_score = score;
				best = start;
				best_end = at;
				*request = req;
				first = false;
			}
			start = at;
			if (!more)
				break;
			if (++count >= MAX_MESSAGES) {
				if (*request)
					break;
				return pg_error_set(PG_ETOOBIG, "the mbox holds more than %d messages and "
						    "none of the first %d is a [GIT PULL] mail: the "
						    "search stops there", MAX_MESSAGES, MAX_MESSAGES);
			}
		}
		prev_blank = pg_str_is_blank(l, n, PG_STR_SPACES);
	}
	c.p = best;
	c.end = best_end;
	while (next_line(&c, &l, &n)) {
		size_t k = 0;
		int err;

		while (k < n && l[k] == '>')
			k++;
		if (k && n - k >= 5 && !memcmp(l + k, "From ", 5))
			l++, n--;
		if ((err = pg_buf_put(msg, l, n)) < 0 || (err = pg_buf_putc(msg, '\n')) < 0)
			return err;
	}
	return 0;
}

/* What pick_message found. */
enum picked {
	PICKED_MAIL,        /* a mail or a bare text, as it was */
	PICKED_REQUEST,     /* an mbox's request-pull message */
	PICKED_NO_REQUEST,  /* an mbox none of whose messages is a request-pull */
};

/*
 * The message of data that a mail reader would take: data itself with
 * unix line ends (in lf), or the one of an mbox mbox_pick chooses (in
 * msg), without its "From " line.
 */
static int pick_message(const char **m, size_t *mlen, enum picked *picked, pg_buf *lf,
			pg_buf *msg, const char *data, size_t len)
{
	const char *nl;
	bool request;
	int err;

	*picked = PICKED_MAIL;
	if ((err = unix_lines(lf, data, len)) < 0)
		return err;
	*m = lf->ptr;
	*mlen = lf->len;
	if (is_from_line(*m, *mlen)) {
		if ((err = mbox_pick(msg, &request, *m, *mlen)) < 0)
			return err;
		*picked = request ? PICKED_REQUEST : PICKED_NO_REQUEST;
		/* the "From " line itself is not a header */
		nl = memchr(msg->ptr, '\n', msg->len);
		*m = nl ? nl + 1 : msg->ptr + msg->len;
		*mlen = (size_t)(msg->ptr + msg->len - *m);
	}
	return 0;
}

/* The decoded text/plain body and the Subject of one message (headers, or a bare text). */
static int message_text(pg_buf *text, pg_buf *subject, const char *m, size_t mlen)
{
	pg_buf decoded = PG_BUF_INIT;
	headers h;
	size_t body;
	bool is_mail;
	int err;

	headers_init(&h);
	if ((err = parse_headers(&h, &is_mail, &body, m, mlen)) < 0)
		goto done;
	if (is_mail)
		err = decode_entity(text, &h, m + body, mlen - body, 0);
	else
		err = pg_buf_put(text, m, mlen);
	if (err < 0)
		goto done;
	if (memchr(text->ptr, '\0', text->len)) {
		err = pg_error_set(PG_EINVALID, "the mail's text contains NUL bytes: binary data, "
				   "not a mail");
		goto done;
	}
	if (subject && h.seen_subject &&
	    (err = pg_mail_decode_header(&decoded, h.subject.ptr, h.subject.len)) == 0)
		err = pg_mail_squeeze(subject, decoded.ptr, decoded.len);
done:
	headers_release(&h);
	pg_buf_release(&decoded);
	return err;
}

static int mail_text(pg_buf *text, pg_buf *subject, enum picked *picked, const char *data,
		     size_t len)
{
	pg_buf lf = PG_BUF_INIT, msg = PG_BUF_INIT;
	const char *m;
	size_t mlen;
	int err;

	pg_buf_init(&lf, PG_MAIL_MAX);
	pg_buf_init(&msg, PG_MAIL_MAX);
	if (len > PG_MAIL_MAX)
		err = pg_error_set(PG_ETOOBIG, "mail exceeds %zu MiB", PG_MAIL_MAX >> 20);
	else if ((err = pick_message(&m, &mlen, picked, &lf, &msg, data, len)) == 0)
		err = message_text(text, subject, m, mlen);
	pg_buf_release(&lf);
	pg_buf_release(&msg);
	return err;
}

int pg_mail_text(pg_buf *text, pg_buf *subject, const char *data, size_t len)
{
	enum picked picked;

	return mail_text(text, subject, &picked, data, len);
}

int pg_mail_parse(pg_pull_request **out, const char *data, size_t len)
{
	pg_pull_request *pr = NULL;
	pg_buf text = PG_BUF_INIT, subject = PG_BUF_INIT;
	enum picked picked;
	int err;

	*out = NULL;
	pg_buf_init(&text, PG_MAIL_MAX);
	pg_buf_init(&subject, PG_MAIL_MAX);
	if ((err = mail_text(&text, &subject, &picked, data, len)) < 0)
		goto done;
	if (picked == PICKED_NO_REQUEST) {
		/* say so, rather than why its first message is not one */
		err = pg_error_set(PG_EINVALID, "no message of the mbox is a git request-pull mail "
				   "(b4 am writes a pull request's cover letter to the .cover file "
				   "beside the .mbx of its patches)");
		goto done;
	}
	if ((err = pg_mail_parse_body(&pr, text.ptr, text.len)) < 0)
		goto done;
	if (subject.len) {
		pr->git_pull = strcasestr(subject.ptr, "[GIT PULL") != NULL;
		if (!(pr->subject = pg_buf_detach(&subject))) {
			err = PG_ENOMEM;
			goto done;
		}
	}
	*out = pr;
	pr = NULL;
done:
	pg_pull_request_free(pr);
	pg_buf_release(&text);
	pg_buf_release(&subject);
	return err;
}

int pg_mail_read(pg_pull_request **out, const char *path)
{
	pg_buf data = PG_BUF_INIT;
	off_t size;
	FILE *f = NULL;
	int fd, err;

	*out = NULL;
	pg_buf_init(&data, PG_MAIL_MAX);
	/* a mail may come on a pipe (read to the cap); a FIFO nobody writes must not hang the open */
	if ((err = pg_open_regular(&fd, &size, path, "a mail", true)) < 0)
		goto done;
	if (!(f = fdopen(fd, "rb"))) {
		close(fd);
		err = pg_error_set(PG_EIO, "cannot open: %s", strerror(errno));
		goto done;
	}
	if ((uintmax_t)size > PG_MAIL_MAX) {
		err = pg_error_set(PG_ETOOBIG, "mail exceeds %zu MiB", PG_MAIL_MAX >> 20);
		goto done;
	}
	if ((err = pg_buf_read_stream(&data, f, "mail")) < 0) {
		if (err == PG_ETOOBIG)
			err = pg_error_set(PG_ETOOBIG, "mail exceeds %zu MiB", PG_MAIL_MAX >> 20);
		goto done;
	}
	err = pg_mail_parse(out, data.ptr, data.len);
done:
	if (f)
		fclose(f);
	pg_buf_release(&data);
	return err;
}

int pg_mail_header(pg_buf *out, const char *data, size_t len, const char *name)
{
	pg_buf lf = PG_BUF_INIT, msg = PG_BUF_INIT;
	cursor c;
	const char *m, *l;
	size_t mlen, n, fn;
	bool in_field = false, found = false;
	enum picked picked;
	int err;

	pg_buf_init(&lf, PG_MAIL_MAX);
	pg_buf_init(&msg, PG_MAIL_MAX);
	if (len > PG_MAIL_MAX) {
		err = pg_error_set(PG_ETOOBIG, "mail exceeds %zu MiB", PG_MAIL_MAX >> 20);
		goto done;
	}
	if ((err = pick_message(&m, &mlen, &picked, &lf, &msg, data, len)) < 0)
		goto done;
	/* the first field called name, its continuation lines joined by one space */
	c.p = m;
	c.end = m + mlen;
	while (next_line(&c, &l, &n) && !pg_str_is_blank(l, n, PG_STR_SPACES)) {
		if (*l == ' ' || *l == '\t') {
			if (in_field && ((err = pg_buf_putc(out, ' ')) < 0 ||
					 (err = pg_mail_squeeze(out, l, n)) < 0))
				goto done;
			continue;
		}
		if (found || !(fn = field_name_len(l, n)))
			break;
		in_field = equals_ci(l, fn, name);
		if (in_field) {
			found = true;
			if ((err = pg_mail_squeeze(out, l + fn + 1, n - fn - 1)) < 0)
				goto done;
		}
	}
	if (!found)
		err = pg_error_set(PG_ENOTFOUND, "the mail has no %s header", name);
done:
	pg_buf_release(&lf);
	pg_buf_release(&msg);
	return err;
}
