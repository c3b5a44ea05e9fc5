/* object.c - lenient parsers for commit, tag and identity text. */
#include "repo/object.h"
#include "common/array.h"
#include "common/error.h"
#include "common/hex.h"
#include "common/map.h"
#include "common/str.h"
#include "repo/trailers.h"

#include <time.h>

void pg_ident_release(pg_ident *id)
{
	free(id->name);
	free(id->email);
	memset(id, 0, sizeof(*id));
}

static char *dup_trim(const char *p, size_t len)
{
	pg_str_trim(&p, &len, PG_STR_BLANKS);
	return pg_strndup(p, len);
}

/* An identity line's parts, in place: name and email untrimmed, not cut at a NUL. */
typedef struct ident_span {
	const char *name, *email;
	size_t name_len, email_len;
	int64_t time;
	int offset;
	bool has_email;
} ident_span;

static void ident_split(ident_span *out, const char *s, size_t len)
{
	const char *lt = memchr(s, '<', len), *gt, *p, *end = s + len;
	int64_t t = 0;
	int sign = 1, tz = 0, digits = 0;

	memset(out, 0, sizeof(*out));
	gt = lt ? memchr(lt, '>', (size_t)(end - lt)) : NULL;
	if (!lt || !gt) {
		/* no email: keep the whole line as the name */
		out->name = s;
		out->name_len = len;
		return;
	}
	out->has_email = true;
	out->name = s;
	out->name_len = (size_t)(lt - s);
	out->email = lt + 1;
	out->email_len = (size_t)(gt - lt - 1);
	p = gt + 1;
	while (p < end && *p == ' ')
		p++;
	while (p < end && *p >= '0' && *p <= '9' && digits < 18) {
		t = t * 10 + (*p++ - '0');
		digits++;
	}
	while (p < end && *p == ' ')
		p++;
	if (p < end && (*p == '+' || *p == '-')) {
		sign = *p == '-' ? -1 : 1;
		p++;
		if (end - p >= 4) {
			int hh = (p[0] - '0') * 10 + (p[1] - '0');
			int mm = (p[2] - '0') * 10 + (p[3] - '0');

			if (hh >= 0 && hh < 100 && mm >= 0 && mm < 100)
				tz = sign * (hh * 60 + mm);
		}
	}
	out->time = t;
	out->offset = tz;
}

int pg_ident_parse(pg_ident *out, const char *s, size_t len)
{
	ident_span sp;

	ident_split(&sp, s, len);
	memset(out, 0, sizeof(*out));
	out->name = dup_trim(sp.name, sp.name_len);
	out->email = sp.has_email ? pg_strndup(sp.email, sp.email_len) : pg_strdup("");
	out->time = sp.time;
	out->offset = sp.offset;
	if (!out->name || !out->email) {
		pg_ident_release(out);
		return pg_error_oom();
	}
	return 0;
}

bool pg_ident_same_person(const pg_ident *a, const pg_ident *b)
{
	return !strcmp(a->name ? a->name : "", b->name ? b->name : "") &&
	       !strcasecmp(a->email ? a->email : "", b->email ? b->email : "");
}

int pg_ident_format(pg_buf *out, const pg_ident *id)
{
	return pg_buf_printf(out, "%s <%s>", id->name ? id->name : "",
			     id->email ? id->email : "");
}

/* t in the zone offset minutes east of UTC; false past gmtime's range. */
static bool local_time(struct tm *tm, int64_t t, int offset)
{
	time_t local = (time_t)(t + (int64_t)offset * 60);

	return gmtime_r(&local, tm) != NULL;
}

int pg_time_format(pg_buf *out, int64_t t, int offset)
{
	struct tm tm;
	int a = offset < 0 ? -offset : offset;

	if (!local_time(&tm, t, offset))
		return pg_buf_printf(out, "@%lld", (long long)t);
	return pg_buf_printf(out, "%04d-%02d-%02d %02d:%02d:%02d %c%02d%02d",
			     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
			     tm.tm_min, tm.tm_sec, offset < 0 ? '-' : '+', a / 60, a % 60);
}

int pg_time_format_mail(pg_buf *out, int64_t t, int offset)
{
	static const char days[] = "SunMonTueWedThuFriSat",
			  months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	struct tm tm;
	int a = offset < 0 ? -offset : offset;

	if (!local_time(&tm, t, offset))
		return pg_time_format(out, t, offset);
	return pg_buf_printf(out, "%.3s, %02d %.3s %04d %02d:%02d:%02d %c%02d%02d",
			     days + 3 * tm.tm_wday, tm.tm_mday, months + 3 * tm.tm_mon,
			     tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec,
			     offset < 0 ? '-' : '+', a / 60, a % 60);
}

/*
 * Walk "name value\n" header lines, with continuation lines starting with
 * a space, up to the blank line.  Calls fn for each header; returns the
 * offset of the message.
 */
typedef int (*header_fn)(void *ctx, const char *name, size_t nlen,
			 const char *value, size_t vlen);

static int walk_headers(const char *data, size_t len, header_fn fn, void *ctx,
			size_t *msg_off)
{
	size_t i = 0;
	int err;

	while (i < len && data[i] != '\n') {
		size_t eol, sp, vstart, vend;
		const char *nl = memchr(data + i, '\n', len - i);

		eol = nl ? (size_t)(nl - data) : len;
		/* extend over continuation lines */
		vend = eol;
		while (vend + 1 < len && data[vend] == '\n' && data[vend + 1] == ' ') {
			const char *next = memchr(data + vend + 1, '\n', len - vend - 1);

			vend = next ? (size_t)(next - data) : len;
		}
		for (sp = i; sp < eol && data[sp] != ' '; sp++)
			;
		vstart = sp < eol ? sp + 1 : eol;
		if ((err = fn(ctx, data + i, sp - i, data + vstart,
			      vend > vstart ? vend - vstart : 0)) < 0)
			return err;
		i = vend < len ? vend + 1 : len;
	}
	*msg_off = i < len ? i + 1 : len;
	return 0;
}

/* Copy a header value, removing the leading space of continuation lines. */
static char *unfold(const char *v, size_t len, size_t *outlen)
{
	char *r = malloc(len + 1);
	size_t i, j = 0;

	if (!r) {
		pg_error_oom();
		return NULL;
	}
	for (i = 0; i < len; i++) {
		r[j++] = v[i];
		if (v[i] == '\n' && i + 1 < len && v[i + 1] == ' ')
			i++;
	}
	r[j] = '\0';
	*outlen = j;
	return r;
}

static bool name_is(const char *name, size_t nlen, const char *want)
{
	return nlen == strlen(want) && !memcmp(name, want, nlen);
}

/* A commit being parsed, with the allocations of its growing arrays. */
typedef struct commit_parse {
	pg_commit *c;
	size_t parents_alloc, headers_alloc;
	bool tree;
} commit_parse;

/* Keep the first way the commit is malformed; later ones add nothing. */
static int malformed(pg_commit *c, const char *fmt, ...) PG_PRINTF(2, 3);
static int malformed(pg_commit *c, const char *fmt, ...)
{
	pg_buf b = PG_BUF_INIT;
	va_list ap;
	int err;

	if (c->malformed)
		return 0;
	va_start(ap, fmt);
	err = pg_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (err == 0 && !(c->malformed = pg_buf_detach(&b)))
		err = PG_ENOMEM;
	pg_buf_release(&b);
	return err;
}

static int commit_header(void *ctx, const char *name, size_t nlen,
			 const char *value, size_t vlen)
{
	commit_parse *cp = ctx;
	pg_commit *c = cp->c;
	pg_header *h;
	int err;

	if (name_is(name, nlen, "tree")) {
		if (cp->tree)
			return malformed(c, "more than one tree header");
		cp->tree = true;
		return pg_oid_fromhex(&c->tree, value, vlen);
	}
	if (name_is(name, nlen, "parent")) {
		if ((err = PG_ARRAY_GROW(c->parents, c->nparents + 1, cp->parents_alloc)) < 0 ||
		    (err = pg_oid_fromhex(&c->parents[c->nparents], value, vlen)) < 0)
			return err;
		c->nparents++;
		return 0;
	}
	if (name_is(name, nlen, "author") || name_is(name, nlen, "committer")) {
		pg_ident *id = name[0] == 'a' ? &c->author : &c->committer;

		if (!id->name)
			return pg_ident_parse(id, value, vlen);
		/* kept below as an extra header, as it is stored */
		if ((err = malformed(c, "more than one %.*s header", (int)nlen, name)) < 0)
			return err;
	}
	if ((err = PG_ARRAY_GROW(c->headers, c->nheaders + 1, cp->headers_alloc)) < 0)
		return err;
	h = &c->headers[c->nheaders];
	h->name = pg_strndup(name, nlen);
	h->value = unfold(value, vlen, &h->value_len);
	c->nheaders++;
	if (!h->name || !h->value)
		return PG_ENOMEM;
	return 0;
}

/*
 * A parent listed twice: libgit2 and git walk such a commit, but every
 * check would see each copy (a merge of one commit with itself, 10,000
 * times).  Linear in the parents: the ids go through a hash map.
 */
static int find_duplicate_parent(pg_commit *c)
{
	pg_map seen = PG_MAP_INIT;
	const pg_oid *dup = NULL;
	char hex[PG_OID_HEXSZ + 1];
	size_t i;
	int err = 0;

	if (c->nparents == 2 && !pg_oid_cmp(&c->parents[0], &c->parents[1]))
		dup = &c->parents[1];
	for (i = 0; c->nparents > 2 && i < c->nparents && !dup && err == 0; i++) {
		if (pg_map_get(&seen, c->parents[i].id, PG_OID_RAWSZ))
			dup = &c->parents[i];
		else
			err = pg_map_set(&seen, c->parents[i].id, PG_OID_RAWSZ, &c->parents[i]);
	}
	pg_map_release(&seen);
	if (err < 0 || !dup)
		return err;
	pg_oid_tohex(hex, dup);
	return malformed(c, "parent %s listed twice", hex);
}

/* The message's first line, untrimmed: what first_line copies trimmed. */
static const char *first_line_at(const char *msg, size_t len, size_t *n)
{
	const char *nl;

	pg_str_ltrim(&msg, &len, "\n ");
	nl = memchr(msg, '\n', len);
	*n = nl ? (size_t)(nl - msg) : len;
	return msg;
}

static char *first_line(const char *msg, size_t len)
{
	size_t n;

	msg = first_line_at(msg, len, &n);
	return dup_trim(msg, n);
}

int pg_commit_parse(pg_commit **out, const pg_oid *id, const char *data, size_t len)
{
	pg_commit *c = calloc(1, sizeof(*c));
	commit_parse cp = { c, 0, 0, false };
	size_t off = 0;
	int err;

	*out = NULL;
	if (!c)
		return pg_error_oom();
	if (id)
		c->id = *id;
	if ((err = walk_headers(data, len, commit_header, &cp, &off)) < 0 ||
	    (!cp.tree && (err = malformed(c, "no tree header")) < 0) ||
	    (err = find_duplicate_parent(c)) < 0)
		goto fail;
	if (!c->author.name && (err = pg_ident_parse(&c->author, "", 0)) < 0)
		goto fail;
	if (!c->committer.name && (err = pg_ident_parse(&c->committer, "", 0)) < 0)
		goto fail;
	c->message_len = len - off;
	/* not strndup: a hostile message may hold NULs, and we keep every byte */
	c->message = malloc(c->message_len + 1);
	if (!c->message) {
		err = pg_error_oom();
		goto fail;
	}
	memcpy(c->message, data + off, c->message_len);
	c->message[c->message_len] = '\0';
	if (!(c->subject = first_line(c->message, c->message_len))) {
		err = PG_ENOMEM;
		goto fail;
	}
	if ((err = pg_trailers_parse(&c->trailers, &c->ntrailers, &c->body_len,
				     c->message, c->message_len)) < 0)
		goto fail;
	*out = c;
	return 0;
fail:
	pg_commit_free(c);
	return err;
}

/* p[0..*n) cut at a NUL, as pg_strndup's copy of it is */
static const char *cut_nul(const char *p, size_t *n)
{
	const char *nul = memchr(p, '\0', *n);

	if (nul)
		*n = (size_t)(nul - p);
	return p;
}

/* p[0..*n) as dup_trim copies it */
static const char *trim_span(const char *p, size_t *n)
{
	pg_str_trim(&p, n, PG_STR_BLANKS);
	return cut_nul(p, n);
}

/* What pg_commit_keys_parse's walk of the headers has seen. */
typedef struct keys_parse {
	pg_commit_keys *k;
	bool tree, author;
} keys_parse;

static int keys_header(void *ctx, const char *name, size_t nlen, const char *value, size_t vlen)
{
	keys_parse *kp = ctx;
	ident_span sp;
	pg_oid id;

	/* the ids commit_header reads, checked: an error where it gives one */
	if ((name_is(name, nlen, "tree") && !kp->tree) || name_is(name, nlen, "parent")) {
		kp->tree |= name[0] == 't';
		if (vlen == PG_OID_HEXSZ && pg_hex_is(value, vlen))
			return 0;
		return pg_oid_fromhex(&id, value, vlen);
	}
	if (name_is(name, nlen, "author") && !kp->author) {
		kp->author = true;
		ident_split(&sp, value, vlen);
		kp->k->name_len = sp.name_len;
		kp->k->name = trim_span(sp.name, &kp->k->name_len);
		if (sp.has_email) {
			kp->k->email_len = sp.email_len;
			kp->k->email = cut_nul(sp.email, &kp->k->email_len);
		}
		kp->k->time = sp.time;
		kp->k->offset = sp.offset;
	}
	return 0;
}

int pg_commit_keys_parse(pg_commit_keys *out, const char *data, size_t len)
{
	keys_parse kp = { out, false, false };
	size_t off = 0;
	int err;

	memset(out, 0, sizeof(*out));
	out->name = out->email = "";
	if ((err = walk_headers(data, len, keys_header, &kp, &off)) < 0)
		return err;
	out->message = data + off;
	out->body_len = pg_trailers_body_len(out->message, len - off);
	out->subject = first_line_at(out->message, len - off, &out->subject_len);
	out->subject = trim_span(out->subject, &out->subject_len);
	return 0;
}

void pg_commit_keys_of(pg_commit_keys *out, const pg_commit *c)
{
	out->name = c->author.name;
	out->name_len = strlen(c->author.name);
	out->email = c->author.email;
	out->email_len = strlen(c->author.email);
	out->time = c->author.time;
	out->offset = c->author.offset;
	out->message = c->message;
	out->body_len = c->body_len;
	out->subject = c->subject ? c->subject : "";
	out->subject_len = strlen(out->subject);
}

void pg_commit_free(pg_commit *c)
{
	size_t i;

	if (!c)
		return;
	free(c->parents);
	pg_ident_release(&c->author);
	pg_ident_release(&c->committer);
	for (i = 0; i < c->nheaders; i++) {
		free(c->headers[i].name);
		free(c->headers[i].value);
	}
	free(c->headers);
	free(c->message);
	free(c->subject);
	pg_trailers_free(c->trailers, c->ntrailers);
	free(c->malformed);
	free(c);
}

size_t pg_commit_count_header(const pg_commit *c, const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < c->nheaders; i++)
		if (!strcmp(c->headers[i].name, name))
			n++;
	return n;
}

static int tag_header(void *ctx, const char *name, size_t nlen,
		      const char *value, size_t vlen)
{
	pg_tagobj *t = ctx;

	if (name_is(name, nlen, "object"))
		return pg_oid_fromhex(&t->object, value, vlen);
	if (name_is(name, nlen, "type") && !t->type)
		return (t->type = pg_strndup(value, vlen)) ? 0 : PG_ENOMEM;
	if (name_is(name, nlen, "tag") && !t->tag)
		return (t->tag = pg_strndup(value, vlen)) ? 0 : PG_ENOMEM;
	if (name_is(name, nlen, "tagger") && !t->has_tagger) {
		t->has_tagger = true;
		return pg_ident_parse(&t->tagger, value, vlen);
	}
	return 0;
}

static const char *find_signature(const char *msg, size_t len)
{
	static const char *const starts[] = {
		"-----BEGIN PGP SIGNATURE-----",
		"-----BEGIN PGP MESSAGE-----",
		"-----BEGIN SSH SIGNATURE-----",
		"-----BEGIN SIGNED MESSAGE-----",
	};
	size_t i = 0, k;

	/* a signature starts at the beginning of a line */
	while (i < len) {
		for (k = 0; k < PG_ARRAY_SIZE(starts); k++) {
			size_t n = strlen(starts[k]);

			if (len - i >= n && !memcmp(msg + i, starts[k], n))
				return msg + i;
		}
		{
			const char *nl = memchr(msg + i, '\n', len - i);

			if (!nl)
				break;
			i = (size_t)(nl - msg) + 1;
		}
	}
	return NULL;
}

int pg_tagobj_parse(pg_tagobj **out, const char *data, size_t len)
{
	pg_tagobj *t = calloc(1, sizeof(*t));
	const char *msg, *sig;
	size_t off = 0, mlen;
	int err;

	*out = NULL;
	if (!t)
		return pg_error_oom();
	if ((err = walk_headers(data, len, tag_header, t, &off)) < 0)
		goto fail;
	if (!t->type || !t->tag) {
		err = pg_error_set(PG_EINVALID, "tag object lacks a %s header",
				   t->type ? "tag" : "type");
		goto fail;
	}
	msg = data + off;
	mlen = len - off;
	sig = find_signature(msg, mlen);
	if (sig) {
		t->signature_len = mlen - (size_t)(sig - msg);
		t->signature = malloc(t->signature_len + 1);
		mlen = (size_t)(sig - msg);
	}
	t->payload_len = off + mlen;
	t->payload = malloc(t->payload_len + 1);
	t->message = malloc(mlen + 1);
	if (!t->payload || !t->message || (sig && !t->signature)) {
		err = pg_error_oom();
		goto fail;
	}
	memcpy(t->payload, data, t->payload_len);
	t->payload[t->payload_len] = '\0';
	memcpy(t->message, msg, mlen);
	t->message[mlen] = '\0';
	t->message_len = mlen;
	if (sig) {
		memcpy(t->signature, sig, t->signature_len);
		t->signature[t->signature_len] = '\0';
	}
	*out = t;
	return 0;
fail:
	pg_tagobj_free(t);
	return err;
}

void pg_tagobj_free(pg_tagobj *t)
{
	if (!t)
		return;
	free(t->type);
	free(t->tag);
	pg_ident_release(&t->tagger);
	free(t->message);
	free(t->signature);
	free(t->payload);
	free(t);
}
