/* mail_mime.c - one message read: its header fields, its MIME parts, its text/plain body decoded. */
#include "verifier/mail.h"
#include "verifier/mail_internal.h"
#include "verifier/mail_lines.h"
#include "common/error.h"
#include "common/str.h"

#define MAX_MIME_DEPTH 4
#define QUOTE_MAX PG_MAIL_QUOTE_MAX

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
size_t pg_mail_field_name_len(const char *l, size_t n)
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
		if (!(name = pg_mail_field_name_len(l, n))) {
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
	enum pg_mail_charset cs;
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
	if ((err = pg_mail_unix_lines(&lf, raw.ptr, raw.len)) < 0)
		goto done;

	cs = PG_MAIL_CS_UTF8;
	if (ct_param(&param, &h->ctype, "charset") &&
	    (cs = pg_mail_charset_of(param.ptr, param.len)) == PG_MAIL_CS_UNKNOWN) {
		err = pg_error_set(PG_EUNSUPPORTED, "charset '%.*s' is not supported",
				   (int)(param.len > QUOTE_MAX ? QUOTE_MAX : param.len), param.ptr);
		goto done;
	}
	pg_buf_clear(&param);
	flowed = ct_param(&param, &h->ctype, "format") && equals_ci(param.ptr, param.len, "flowed");
	pg_buf_clear(&param);
	delsp = ct_param(&param, &h->ctype, "delsp") && equals_ci(param.ptr, param.len, "yes");
	pg_buf_clear(&raw);
	if ((err = pg_mail_put_charset(&raw, lf.ptr, lf.len, cs)) < 0)
		goto done;
	err = flowed ? unflow(text, raw.ptr, raw.len, delsp) : pg_buf_put(text, raw.ptr, raw.len);
done:
	pg_buf_release(&raw);
	pg_buf_release(&param);
	pg_buf_release(&lf);
	return err;
}

int pg_mail_message_text(pg_buf *text, pg_buf *subject, const char *m, size_t mlen)
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
