/* mail.c - a pull-request mail read: the message of an mbox that is the request, its text and its fields. */
#include "verifier/mail.h"
#include "verifier/mail_internal.h"
#include "verifier/mail_lines.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sanitize.h"
#include "common/str.h"

#include <unistd.h>

#define MAX_MESSAGES 4096   /* mbox messages looked at for the request */

static bool is_from_line(const char *l, size_t n)
{
	return n >= 5 && !memcmp(l, "From ", 5);
}

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
	if (pg_mail_message_text(&text, &subject, m, mlen) == 0) {
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
	if ((err = pg_mail_unix_lines(lf, data, len)) < 0)
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

/*
 * The first header field called name (any case) of message m, appended to
 * out: its continuation lines joined by one space, whitespace runs
 * squeezed, trimmed.  1 when found, 0 when m has no such field.
 */
static int field(pg_buf *out, const char *m, size_t mlen, const char *name)
{
	cursor c = { m, m + mlen };
	const char *l;
	size_t n, fn, start = out->len;
	bool in_field = false, found = false;
	int err;

	while (next_line(&c, &l, &n) && !pg_str_is_blank(l, n, PG_STR_SPACES)) {
		if (*l == ' ' || *l == '\t') {
			/* a value that starts on the next line ("Message-ID:\n <id>") gets no blank first */
			if (in_field && ((out->len > start && (err = pg_buf_putc(out, ' ')) < 0) ||
					 (err = pg_mail_squeeze(out, l, n)) < 0))
				return err;
			continue;
		}
		if (found || !(fn = pg_mail_field_name_len(l, n)))
			break;
		in_field = equals_ci(l, fn, name);
		if (in_field) {
			found = true;
			start = out->len;
			if ((err = pg_mail_squeeze(out, l + fn + 1, n - fn - 1)) < 0)
				return err;
		}
	}
	return found;
}

/* The picked message's text and subject, and its Message-Id when msgid is not NULL (empty: none). */
static int mail_text(pg_buf *text, pg_buf *subject, pg_buf *msgid, enum picked *picked,
		     const char *data, size_t len)
{
	pg_buf lf = PG_BUF_INIT, msg = PG_BUF_INIT;
	const char *m;
	size_t mlen;
	int err;

	pg_buf_init(&lf, PG_MAIL_MAX);
	pg_buf_init(&msg, PG_MAIL_MAX);
	if (len > PG_MAIL_MAX)
		err = pg_error_set(PG_ETOOBIG, "mail exceeds %zu MiB", PG_MAIL_MAX >> 20);
	else if ((err = pick_message(&m, &mlen, picked, &lf, &msg, data, len)) == 0 &&
		 (err = pg_mail_message_text(text, subject, m, mlen)) == 0 && msgid &&
		 (err = field(msgid, m, mlen, "Message-Id")) > 0)
		err = 0;
	pg_buf_release(&lf);
	pg_buf_release(&msg);
	return err;
}

int pg_mail_text(pg_buf *text, pg_buf *subject, const char *data, size_t len)
{
	enum picked picked;

	return mail_text(text, subject, NULL, &picked, data, len);
}

int pg_mail_parse(pg_pull_request **out, const char *data, size_t len)
{
	pg_pull_request *pr = NULL;
	pg_buf text = PG_BUF_INIT, subject = PG_BUF_INIT, msgid = PG_BUF_INIT;
	enum picked picked;
	int err;

	*out = NULL;
	pg_buf_init(&text, PG_MAIL_MAX);
	pg_buf_init(&subject, PG_MAIL_MAX);
	if ((err = mail_text(&text, &subject, &msgid, &picked, data, len)) < 0)
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
	if (msgid.len && !(pr->message_id = pg_buf_detach(&msgid))) {
		err = PG_ENOMEM;
		goto done;
	}
	*out = pr;
	pr = NULL;
done:
	pg_pull_request_free(pr);
	pg_buf_release(&text);
	pg_buf_release(&subject);
	pg_buf_release(&msgid);
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
	if ((err = pg_open_regular(&fd, &size, path, PG_OPEN_STREAMS, "a mail")) < 0)
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
	const char *m;
	size_t mlen;
	enum picked picked;
	int err;

	pg_buf_init(&lf, PG_MAIL_MAX);
	pg_buf_init(&msg, PG_MAIL_MAX);
	if (len > PG_MAIL_MAX)
		err = pg_error_set(PG_ETOOBIG, "mail exceeds %zu MiB", PG_MAIL_MAX >> 20);
	else if ((err = pick_message(&m, &mlen, &picked, &lf, &msg, data, len)) == 0 &&
		 (err = field(out, m, mlen, name)) == 0)
		err = pg_error_set(PG_ENOTFOUND, "the mail has no %s header", name);
	else if (err > 0)
		err = 0;
	pg_buf_release(&lf);
	pg_buf_release(&msg);
	return err;
}

/* min to max digits at *p, their value in *v, *p past them: false when fewer. */
static bool date_number(const char **p, size_t min, size_t max, unsigned *v)
{
	size_t n;

	*v = 0;
	for (n = 0; n < max && **p >= '0' && **p <= '9'; n++, (*p)++)
		*v = *v * 10 + (unsigned)(**p - '0');
	return n >= min;
}

/* One of the three-letter names in names at *p (any case), *p past it. */
static bool date_name(const char **p, const char *names)
{
	for (; *names; names += 3)
		if (!strncasecmp(*p, names, 3)) {
			*p += 3;
			return true;
		}
	return false;
}

/* The zone of an RFC 5322 date at *p, *p past it: +hhmm, -hhmm or an obsolete name. */
static bool date_zone(const char **p)
{
	static const char *const names[] = { "UT", "GMT", "EST", "EDT", "CST", "CDT",
					     "MST", "MDT", "PST", "PDT" };
	unsigned z;
	size_t i, n;

	if (**p == '+' || **p == '-')
		return ++*p, date_number(p, 4, 4, &z) && z % 100 < 60;
	for (i = 0; i < PG_ARRAY_SIZE(names); i++) {
		n = strlen(names[i]);
		if (!strncmp(*p, names[i], n) && ((*p)[n] == ' ' || !(*p)[n])) {
			*p += n;
			return true;
		}
	}
	return false;
}

/* An RFC 5322 date-time as pg_mail_date takes one. */
static bool date_ok(const char *s)
{
	const char *p;
	unsigned day, year, h, m, sec;
	size_t n;

	for (p = s; *p; p++)
		if (*p < ' ' || *p > '~')
			return false;
	if (p - s > (ptrdiff_t)PG_MAIL_DATE_MAX)
		return false;
	p = s;
	if (date_name(&p, "MonTueWedThuFriSatSun") && *p++ != ',')
		return false;
	if (*p == ' ')
		p++;
	if (!date_number(&p, 1, 2, &day) || day < 1 || day > 31 || *p++ != ' ' ||
	    !date_name(&p, "JanFebMarAprMayJunJulAugSepOctNovDec") || *p++ != ' ' ||
	    !date_number(&p, 4, 4, &year) || *p++ != ' ' || !date_number(&p, 2, 2, &h) || h > 23 ||
	    *p++ != ':' || !date_number(&p, 2, 2, &m) || m > 59)
		return false;
	if (*p == ':' && (p++, !date_number(&p, 2, 2, &sec) || sec > 60))
		return false;
	if (*p++ != ' ' || !date_zone(&p))
		return false;
	if (!*p)
		return true;
	/* a comment may follow, "(PDT)": one, to the end */
	if (p[0] != ' ' || p[1] != '(')
		return false;
	p += 2;
	n = strlen(p);
	return n && p[n - 1] == ')' && strcspn(p, "()") == n - 1;
}

int pg_mail_header_clean(pg_buf *out, const char *data, size_t len, const char *name)
{
	pg_buf raw = PG_BUF_INIT;
	int err = pg_mail_header(&raw, data, len, name);

	if (err == PG_ENOTFOUND) {
		pg_error_clear();
		err = 0;
	} else if (err == 0) {
		err = pg_sanitize_terminal(out, raw.ptr, raw.len, PG_SANITIZE_ONELINE);
	}
	pg_buf_release(&raw);
	return err;
}

int pg_mail_date(pg_buf *out, const char *data, size_t len)
{
	pg_buf clean = PG_BUF_INIT;
	int err = pg_mail_header_clean(&clean, data, len, "Date");

	if (err == 0 && clean.len && date_ok(clean.ptr) && (err = pg_buf_put(out, clean.ptr, clean.len)) == 0)
		err = 1;
	pg_buf_release(&clean);
	return err;
}
