/* report_parse.c - a report read back from the JSON report_json.c wrote, member by member. */
#include "report/report.h"
#include "common/array.h"
#include "common/error.h"
#include "common/json.h"
#include "common/sanitize.h"

#include <limits.h>

/*
 * The text comes from a child that read a hostile repository: every
 * member is checked for its type and its range, strings are kept as they
 * are, and arrays grow as their elements are read, so that memory follows
 * what parsed.  "at" is where the object being read is, for the messages
 * ("findings[3]"; "" at the root).
 */
#define AT_MAX 160

/* The identity index's actions, as verifier/verify.c names them (index_action_name). */
static const char *const index_actions[] = {
	"current", "extended", "built (new)", "built (rewritten)", "built (key)",
	"built (graph)", "built (damaged)",
};

static int bad(const char *at, const char *key, const char *fmt, ...) PG_PRINTF(3, 4);

static int bad(const char *at, const char *key, const char *fmt, ...)
{
	pg_buf msg = PG_BUF_INIT;
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = pg_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	if (err == 0)
		err = pg_error_set(PG_EINVALID, "report JSON: %s%s%s%s%s", at,
				   *at && key ? "." : "", key ? key : "", *at || key ? ": " : "",
				   msg.ptr);
	pg_buf_release(&msg);
	return err;
}

/* s for a message: its first bytes, cut at a character, made safe for a terminal. */
static const char *quoted(pg_buf *b, const char *s)
{
	size_t n = strlen(s), cut = n > 40 ? 40 : n;

	while (cut < n && cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
		cut--;
	pg_buf_clear(b);
	if (pg_sanitize_terminal(b, s, cut, PG_SANITIZE_ONELINE) < 0 ||
	    (cut < n && pg_buf_puts(b, "...") < 0))
		return "(a string)";
	return b->ptr;
}

static int bad_value(const char *at, const char *key, const char *s, const char *what)
{
	pg_buf b = PG_BUF_INIT;
	int err = bad(at, key, "'%s' is not %s", quoted(&b, s), what);

	pg_buf_release(&b);
	return err;
}

static const char *type_name(enum pg_json_type t)
{
	switch (t) {
	case PG_JSON_ABSENT: return "missing";
	case PG_JSON_NULL: return "null";
	case PG_JSON_BOOL: return "a boolean";
	case PG_JSON_INTEGER: return "an integer";
	case PG_JSON_REAL: return "a real number";
	case PG_JSON_STRING: return "a string";
	case PG_JSON_ARRAY: return "an array";
	case PG_JSON_OBJECT: return "an object";
	}
	return "unknown";
}

/* Member key of o, of type want (or null when nullable: *out NULL then). */
static int member(const pg_json **out, const pg_json *o, const char *at, const char *key,
		  enum pg_json_type want, bool nullable)
{
	const pg_json *v = pg_json_get(o, key);
	enum pg_json_type t = pg_json_type(v);

	*out = NULL;
	if (t == want) {
		*out = v;
		return 0;
	}
	if (t == PG_JSON_NULL && nullable)
		return 0;
	if (t == PG_JSON_ABSENT)
		return bad(at, key, "missing");
	return bad(at, key, "%s, not %s%s", type_name(t), type_name(want),
		   nullable ? " or null" : "");
}

/* A string member, borrowed from the document. */
static int get_str_borrowed(const char **out, const pg_json *o, const char *at, const char *key)
{
	const pg_json *v;
	int err;

	*out = NULL;
	if ((err = member(&v, o, at, key, PG_JSON_STRING, false)) == 0)
		*out = pg_json_str(v);
	return err;
}

/* A string member, copied into *out (NULL for null when nullable). */
static int get_str(char **out, const pg_json *o, const char *at, const char *key, bool nullable)
{
	const pg_json *v;
	int err;

	if ((err = member(&v, o, at, key, PG_JSON_STRING, nullable)) < 0 || !v)
		return err;
	return (*out = pg_strdup(pg_json_str(v))) ? 0 : PG_ENOMEM;
}

static int get_int(int64_t *out, const pg_json *o, const char *at, const char *key,
		   int64_t min, int64_t max)
{
	const pg_json *v;
	int err;

	if ((err = member(&v, o, at, key, PG_JSON_INTEGER, false)) < 0)
		return err;
	*out = pg_json_int(v, 0);
	if (*out < min || *out > max)
		return bad(at, key, "%lld is out of range (%lld to %lld)", (long long)*out,
			   (long long)min, (long long)max);
	return 0;
}

/* A count: an integer from 0 (the writer writes a size_t as an int64). */
static int get_size(size_t *out, const pg_json *o, const char *at, const char *key)
{
	int64_t v;
	int err;

	if ((err = get_int(&v, o, at, key, 0, INT64_MAX)) == 0)
		*out = (size_t)v;
	return err;
}

static int get_bool(bool *out, const pg_json *o, const char *at, const char *key)
{
	const pg_json *v;
	int err;

	if ((err = member(&v, o, at, key, PG_JSON_BOOL, false)) == 0)
		*out = pg_json_get_bool(o, key);
	return err;
}

/* Exactly n lower-case hex digits: what the writer writes, and nothing it would write otherwise. */
static bool lower_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return s[n] == '\0';
}

/* A commit id; *has false for null (when nullable). */
static int get_oid(pg_oid *out, bool *has, const pg_json *o, const char *at, const char *key,
		   bool nullable)
{
	const pg_json *v;
	const char *s;
	int err;

	if (has)
		*has = false;
	if ((err = member(&v, o, at, key, PG_JSON_STRING, nullable)) < 0 || !v)
		return err;
	s = pg_json_str(v);
	if (!lower_hex(s, PG_OID_HEXSZ) || pg_oid_fromhex(out, s, PG_OID_HEXSZ) < 0)
		return bad_value(at, key, s, "a commit id (40 lower-case hex digits)");
	if (has)
		*has = true;
	return 0;
}

/* The place of element i of member key of at: "findings[3]" (places nest a few deep). */
static void at_index(char *out, const char *at, const char *key, size_t i)
{
	if (snprintf(out, AT_MAX, "%s%s%s[%zu]", at, *at ? "." : "", key, i) >= AT_MAX)
		out[AT_MAX - 2] = '~';
}

/* An element of an array, where an object must be. */
static int object_at(const pg_json *v, const char *where)
{
	if (pg_json_type(v) != PG_JSON_OBJECT)
		return bad(where, NULL, "%s, not an object", type_name(pg_json_type(v)));
	return 0;
}

/* A count the writer derives from the rest: it must be what the rest gives. */
static int expect_size(const pg_json *o, const char *at, const char *key, size_t want,
		       const char *whose)
{
	size_t n;
	int err;

	if ((err = get_size(&n, o, at, key)) == 0 && n != want)
		err = bad(at, key, "%zu, but %s %zu", n, whose, want);
	return err;
}

static int check_named(enum pg_check_id *out, const pg_json *o, const char *at)
{
	const pg_json *v;
	int err;

	if ((err = member(&v, o, at, "check", PG_JSON_STRING, false)) < 0)
		return err;
	if (pg_check_from_name(out, pg_json_str(v)) < 0)
		return bad_value(at, "check", pg_json_str(v), "a check");
	return 0;
}

/* warning or error: a check turned off reports nothing. */
static int severity_named(enum pg_severity *out, const pg_json *o, const char *at)
{
	const pg_json *v;
	const char *s;
	int err;

	if ((err = member(&v, o, at, "severity", PG_JSON_STRING, false)) < 0)
		return err;
	s = pg_json_str(v);
	if (!strcmp(s, "warning"))
		*out = PG_SEV_WARNING;
	else if (!strcmp(s, "error"))
		*out = PG_SEV_ERROR;
	else
		return bad_value(at, "severity", s, "a severity");
	return 0;
}

/* --- dates ------------------------------------------------------------------------- */

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* n digits at *p into *v; p moves past them. */
static bool digits(const char **p, size_t n, int64_t *v)
{
	size_t i;

	*v = 0;
	for (i = 0; i < n; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return false;
		*v = *v * 10 + (**p - '0');
	}
	return true;
}

/* What pg_time_format(t, 0) wrote: "YYYY-MM-DD HH:MM:SS +0000", or "@T" past gmtime's range. */
static bool parse_utc(int64_t *out, const char *s)
{
	const char *p = s;
	int64_t y, mo, d, h, mi, sec;
	bool neg = false;
	size_t ny = 0;
	pg_buf again = PG_BUF_INIT;
	bool same;

	if (*p == '@') {
		char *end;

		errno = 0;
		*out = strtoll(p + 1, &end, 10);
		if (errno || end == p + 1 || *end)
			return false;
	} else {
		if ((neg = *p == '-'))
			p++;
		while (p[ny] >= '0' && p[ny] <= '9')
			ny++;
		/* eleven digits hold any year gmtime gives for a 64-bit time_t */
		if (ny < 1 || ny > 11 || !digits(&p, ny, &y) || *p++ != '-' ||
		    !digits(&p, 2, &mo) || *p++ != '-' || !digits(&p, 2, &d) || *p++ != ' ' ||
		    !digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' ||
		    !digits(&p, 2, &sec) || strcmp(p, " +0000") || mo < 1 || mo > 12 || d < 1 ||
		    d > 31)
			return false;
		*out = days_from_civil(neg ? -y : y, (unsigned)mo, (unsigned)d) * 86400 +
		       h * 3600 + mi * 60 + sec;
	}
	/* an hour 25 or a 31st of February would be written otherwise: refused */
	same = pg_time_format(&again, *out, 0) == 0 && !strcmp(again.ptr, s);
	pg_buf_release(&again);
	return same;
}

/* --- arrays of objects ---------------------------------------------------------------- */

/* Read the object o (at) into item, which is zeroed; ctx is the caller's. */
typedef int (*read_fn)(void *item, const pg_json *o, const char *at, void *ctx);

/*
 * Each object of the array member key of o, appended to the array *itemsp
 * of *n elements of size bytes, one at a time: an element is counted
 * before it is read, so that what a failed read left is freed with the
 * report.  Without itemsp, read gets item NULL.
 */
static int read_objects(void *itemsp, size_t *n, size_t *alloc, size_t size, const pg_json *o,
			const char *at, const char *key, read_fn read, void *ctx)
{
	const pg_json *a;
	char where[AT_MAX];
	size_t i, len;
	int err;

	if ((err = member(&a, o, at, key, PG_JSON_ARRAY, false)) < 0)
		return err;
	len = pg_json_len(a);
	for (i = 0; i < len; i++) {
		const pg_json *e = pg_json_at(a, i);
		char *items = NULL;

		at_index(where, at, key, i);
		if ((err = object_at(e, where)) < 0 ||
		    (itemsp && (err = pg_array_grow(itemsp, alloc, *n + 1, size)) < 0))
			return err;
		if (itemsp) {
			memcpy(&items, itemsp, sizeof(items));
			items += *n * size;
			memset(items, 0, size);
			(*n)++;
		}
		if ((err = read(items, e, where, ctx)) < 0)
			return err;
	}
	return 0;
}

/* --- the verify members ------------------------------------------------------------ */

static int read_detail(void *item, const pg_json *o, const char *at, void *ctx)
{
	pg_detail *d = item;
	int err;

	(void)ctx;
	if ((err = get_str(&d->field, o, at, "field", false)) < 0 ||
	    (err = get_str(&d->pull, o, at, "pull", true)) < 0)
		return err;
	return get_str(&d->upstream, o, at, "upstream", true);
}

static int read_finding(void *item, const pg_json *o, const char *at, void *ctx)
{
	pg_finding *f = item;
	pg_report *r = ctx;
	const pg_json *v;
	int err;

	if ((err = check_named(&f->check, o, at)) < 0 ||
	    (err = severity_named(&f->severity, o, at)) < 0 ||
	    (err = get_oid(&f->commit, &f->has_commit, o, at, "commit", true)) < 0 ||
	    (err = get_str(&f->subject, o, at, "subject", true)) < 0 ||
	    (err = get_oid(&f->upstream, &f->has_upstream, o, at, "upstream", true)) < 0 ||
	    (err = get_str(&f->message, o, at, "message", false)) < 0 ||
	    (err = read_objects(&f->details, &f->ndetails, &f->details_alloc, sizeof(*f->details),
				o, at, "details", read_detail, NULL)) < 0 ||
	    (err = member(&v, o, at, "implied_by", PG_JSON_INTEGER, true)) < 0)
		return err;
	r->kept[f->check]++;
	if (v) {
		int64_t k = pg_json_int(v, -1);

		/* checked against the findings' count once all are read */
		if (k < 0)
			return bad(at, "implied_by", "%lld is no index", (long long)k);
		f->implied_by = (size_t)k + 1;
	}
	/* written only when true */
	if (pg_json_get(o, "implied_unlisted")) {
		if (!pg_json_get_bool(o, "implied_unlisted"))
			return bad(at, "implied_unlisted", "present, and not true");
		f->implied_unlisted = true;
	}
	return 0;
}

static int read_findings(pg_report *r, const pg_json *root)
{
	char where[AT_MAX];
	size_t i, n;
	int err;

	if ((err = read_objects(&r->findings, &r->nfindings, &r->findings_alloc, sizeof(*r->findings),
				root, "", "findings", read_finding, r)) < 0)
		return err;
	n = r->nfindings;
	for (i = 0; i < n; i++) {
		size_t by = r->findings[i].implied_by;

		at_index(where, "", "findings", i);
		if (by && (by > n || by == i + 1))
			return bad(where, "implied_by", "%zu is not another finding's index", by - 1);
	}
	/* the copies the story marked: each listed rewritten-upstream finding's commit */
	for (i = 0; i < n; i++) {
		const pg_finding *f = &r->findings[i];

		if (f->check == PG_CHECK_REWRITTEN_UPSTREAM && f->has_commit && f->has_upstream &&
		    (err = pg_report_mark_copy(r, &f->commit, f->severity)) < 0)
			return err;
	}
	return 0;
}

static int read_note(void *item, const pg_json *o, const char *at, void *ctx)
{
	pg_note *x = item;
	int err;

	(void)ctx;
	if ((err = check_named(&x->check, o, at)) < 0 ||
	    (err = get_oid(&x->commit, &x->has_commit, o, at, "commit", true)) < 0 ||
	    (err = get_str(&x->subject, o, at, "subject", true)) < 0 ||
	    (err = get_oid(&x->upstream, &x->has_upstream, o, at, "upstream", true)) < 0)
		return err;
	return get_str(&x->message, o, at, "message", false);
}

static int read_signature(void *item, const pg_json *o, const char *at, void *ctx)
{
	pg_signature_info *s = item;
	const pg_json *v, *uids;
	char where[AT_MAX];
	size_t i, n, alloc = 0;
	int err;

	(void)ctx;
	if ((err = member(&v, o, at, "kind", PG_JSON_STRING, false)) < 0)
		return err;
	if (!strcmp(pg_json_str(v), "mergetag"))
		s->mergetag = true;
	else if (strcmp(pg_json_str(v), "tag"))
		return bad_value(at, "kind", pg_json_str(v), "tag or mergetag");
	if ((err = get_oid(&s->commit, &s->has_commit, o, at, "commit", true)) < 0 ||
	    (err = get_str(&s->tag, o, at, "tag", true)) < 0 ||
	    (err = get_str(&s->tagger, o, at, "tagger", true)) < 0 ||
	    (err = get_str(&s->status, o, at, "status", true)) < 0 ||
	    (err = get_str(&s->fingerprint, o, at, "fingerprint", true)) < 0 ||
	    (err = member(&uids, o, at, "uids", PG_JSON_ARRAY, false)) < 0)
		return err;
	n = pg_json_len(uids);
	for (i = 0; i < n; i++) {
		enum pg_json_type t = pg_json_type(pg_json_at(uids, i));

		at_index(where, at, "uids", i);
		if (t != PG_JSON_STRING && t != PG_JSON_NULL)
			return bad(where, NULL, "%s, not a string or null", type_name(t));
		if ((err = PG_ARRAY_GROW(s->emails, s->nemails + 1, alloc)) < 0)
			return err;
		s->emails[s->nemails] = NULL;
		if (t == PG_JSON_STRING &&
		    !(s->emails[s->nemails] = pg_strdup(pg_json_str(pg_json_at(uids, i)))))
			return PG_ENOMEM;
		s->nemails++;
	}
	return 0;
}

/* Which of the two counts per check an entry goes to. */
typedef struct omitted_ctx {
	pg_report *r;
	bool implied;  /* "omitted_implied": of the omitted ones, those that follow from a copy */
} omitted_ctx;

/* An entry of "omitted" or "omitted_implied": the writer lists a check once, when it has some. */
static int read_omitted(void *item, const pg_json *o, const char *at, void *ctx)
{
	omitted_ctx *x = ctx;
	size_t (*into)[PG_SEV_ERROR + 1] = x->implied ? x->r->omitted_implied : x->r->omitted;
	enum pg_check_id c;
	size_t e, w;
	int err;

	(void)item;
	if ((err = check_named(&c, o, at)) < 0 || (err = get_size(&e, o, at, "errors")) < 0 ||
	    (err = get_size(&w, o, at, "warnings")) < 0)
		return err;
	if (into[c][PG_SEV_ERROR] || into[c][PG_SEV_WARNING])
		return bad(at, "check", "'%s' is listed twice", pg_check_name(c));
	if (!e && !w)
		return bad(at, NULL, "no error and no warning");
	if (!x->implied && (err = expect_size(o, at, "count", e + w, "errors + warnings are")) < 0)
		return err;
	if (x->implied && !pg_check_follows_from_copy(c))
		return bad(at, "check", "'%s' never follows from a rewritten copy", pg_check_name(c));
	if (x->implied && (e > x->r->omitted[c][PG_SEV_ERROR] || w > x->r->omitted[c][PG_SEV_WARNING]))
		return bad(at, NULL, "more than \"omitted\" counts for '%s'", pg_check_name(c));
	into[c][PG_SEV_ERROR] = e;
	into[c][PG_SEV_WARNING] = w;
	return 0;
}

/* The cap: at most max_per_check findings of a check kept, and only then are more counted. */
static int check_cap(const pg_report *r)
{
	size_t c;

	for (c = 0; c < PG_CHECK__COUNT; c++) {
		const char *name = pg_check_name((enum pg_check_id)c);

		if (r->max_per_check && r->kept[c] > r->max_per_check)
			return bad("", "findings", "%zu '%s' findings, more than max_findings_per_check "
				   "(%zu)", r->kept[c], name, r->max_per_check);
		if (pg_report_omitted(r, (enum pg_check_id)c) &&
		    (!r->max_per_check || r->kept[c] != r->max_per_check))
			return bad("", "omitted", "'%s' findings omitted with %zu listed, and "
				   "max_findings_per_check %zu", name, r->kept[c], r->max_per_check);
	}
	return 0;
}

static int read_upstream(pg_report *r, const pg_json *root)
{
	const pg_json *v;
	size_t i;
	int err;

	if ((err = get_str(&r->upstream, root, "", "upstream", true)) < 0 ||
	    (err = get_str(&r->upstream_ref, root, "", "upstream_ref", true)) < 0 ||
	    (err = get_oid(&r->upstream_tip, NULL, root, "", "upstream_tip", false)) < 0 ||
	    (err = get_size(&r->ncommits, root, "", "commits")) < 0 ||
	    (err = get_size(&r->nmerges, root, "", "merges")) < 0 ||
	    (err = get_size(&r->upstream_examined, root, "", "upstream_examined")) < 0 ||
	    (err = member(&v, root, "", "upstream_window_since", PG_JSON_STRING, true)) < 0)
		return err;
	/* null stands for 0: a date that is 0 is not written */
	if (v && (!parse_utc(&r->upstream_since, pg_json_str(v)) || !r->upstream_since))
		return bad_value("", "upstream_window_since", pg_json_str(v),
				 "a date as pullgate writes it (YYYY-MM-DD HH:MM:SS +0000)");
	if ((err = member(&v, root, "", "upstream_index", PG_JSON_OBJECT, true)) < 0 || !v)
		return err;
	if ((err = get_size(&r->upstream_indexed, v, "upstream_index", "commits")) < 0 ||
	    (err = get_size(&r->upstream_index_added, v, "upstream_index", "added")) < 0 ||
	    (err = member(&v, v, "upstream_index", "action", PG_JSON_STRING, false)) < 0)
		return err;
	/* the same static strings verifier/verify.c names them by */
	for (i = 0; i < PG_ARRAY_SIZE(index_actions); i++)
		if (!strcmp(pg_json_str(v), index_actions[i]))
			r->upstream_index = index_actions[i];
	if (!r->upstream_index)
		return bad_value("upstream_index", "action", pg_json_str(v),
				 "an identity index action");
	return 0;
}

static int read_summary(pg_report *r, const pg_json *root)
{
	const pg_json *s;
	static const char at[] = "summary";
	int err;

	if ((err = member(&s, root, "", "summary", PG_JSON_OBJECT, true)) < 0 || !s)
		return err;
	r->has_summary = true;
	if ((err = get_size(&r->summary.rewritten, s, at, "rewritten")) < 0 ||
	    (err = get_size(&r->summary.rewritten_merges, s, at, "rewritten_merges")) < 0 ||
	    (err = get_size(&r->summary.dropped_mergetags, s, at, "dropped_mergetags")) < 0 ||
	    (err = get_size(&r->summary.quoted_ids, s, at, "quoted_ids_rewritten")) < 0 ||
	    (err = get_size(&r->summary.own, s, at, "should_carry")) < 0)
		return err;
	return get_size(&r->summary.reapplied, s, at, "reapplied");
}

/* --- the gate's members ------------------------------------------------------------ */

static int read_stage(void *item, const pg_json *o, const char *at, void *ctx)
{
	pg_stage *s = item;
	const pg_json *v;
	unsigned k;
	double secs;
	int err;

	(void)ctx;
	if ((err = get_str(&s->name, o, at, "name", false)) < 0 ||
	    (err = member(&v, o, at, "status", PG_JSON_STRING, false)) < 0)
		return err;
	for (k = 0; k <= PG_STAGE_WAITING; k++)
		if (!strcmp(pg_json_str(v), pg_stage_status_name((enum pg_stage_status)k)))
			break;
	if (k > PG_STAGE_WAITING)
		return bad_value(at, "status", pg_json_str(v), "a stage status");
	s->status = (enum pg_stage_status)k;
	/* milliseconds / 1000 as a real, which gives them back exactly below 2^51 */
	if ((err = member(&v, o, at, "seconds", PG_JSON_REAL, false)) < 0)
		return err;
	secs = pg_json_real(v, -1);
	if (!(secs >= 0 && secs <= 1e12))
		return bad(at, "seconds", "%g is out of range (0 to 1e12)", secs);
	s->elapsed_ms = (uint64_t)(secs * 1000 + 0.5);
	if ((err = get_str(&s->log, o, at, "log", true)) < 0)
		return err;
	return get_str(&s->summary, o, at, "summary", true);
}

static int read_file(void *item, const pg_json *o, const char *at, void *ctx)
{
	pg_prov_file *x = item;
	const pg_provenance *p = ctx;
	int err;

	if ((err = get_str(&x->path, o, at, "path", false)) < 0 ||
	    (err = get_str(&x->sha256, o, at, "sha256", true)) < 0 ||
	    (err = get_bool(&x->shipped, o, at, "shipped")) < 0)
		return err;
	/* a stand-in marks its stage simulated (pg_provenance_add_file) */
	if (!x->shipped && !p->simulated)
		return bad(at, "shipped", "false, and the provenance is not simulated");
	return 0;
}

static int read_provenance(void *item, const pg_json *o, const char *at, void *ctx)
{
	pg_provenance *p = item;
	const pg_report *r = ctx;
	const pg_json *v;
	int err;

	p->exit_status = -1;
	if ((err = get_str(&p->stage, o, at, "stage", false)) < 0 ||
	    (err = get_bool(&p->simulated, o, at, "simulated")) < 0 ||
	    (err = read_objects(&p->files, &p->nfiles, &p->files_alloc, sizeof(*p->files), o, at,
				"files", read_file, p)) < 0 ||
	    (err = get_str(&p->tree, o, at, "tree", true)) < 0 ||
	    (err = get_str(&p->toolchain, o, at, "toolchain", true)) < 0 ||
	    (err = get_str(&p->qemu, o, at, "qemu", true)) < 0 ||
	    (err = get_str(&p->config_sha256, o, at, "config_sha256", true)) < 0 ||
	    (err = get_str(&p->image_sha256, o, at, "image_sha256", true)) < 0 ||
	    (err = get_str(&p->nonce, o, at, "nonce", true)) < 0 ||
	    (err = get_str(&p->log, o, at, "log", true)) < 0 ||
	    (err = get_str(&p->farm_env, o, at, "farm_env", true)) < 0 ||
	    (err = get_str(&p->farm, o, at, "farm", true)) < 0 ||
	    (err = member(&v, o, at, "exit_status", PG_JSON_INTEGER, true)) < 0)
		return err;
	if (v) {
		int64_t x = pg_json_int(v, -1);

		if (x < 0 || x > INT_MAX)
			return bad(at, "exit_status", "%lld is out of range (0 to %d)", (long long)x,
				   INT_MAX);
		p->exit_status = (int)x;
	}
	if (p->simulated && !r->simulated)
		return bad(at, "simulated", "true, and the report is not simulated");
	return get_bool(&p->cached, o, at, "cached");
}

static int read_counts(bool *present, pg_suite_counts *c, const pg_json *o, const char *at,
		       const char *key)
{
	const pg_json *v;
	char where[AT_MAX];
	int err;

	if ((err = member(&v, o, at, key, PG_JSON_OBJECT, true)) < 0 || !(*present = v != NULL))
		return err;
	if (snprintf(where, sizeof(where), "%s.%s", at, key) >= (int)sizeof(where))
		where[sizeof(where) - 2] = '~';
	if ((err = get_size(&c->passed, v, where, "passed")) < 0 ||
	    (err = get_size(&c->failed, v, where, "failed")) < 0 ||
	    (err = get_size(&c->skipped, v, where, "skipped")) < 0)
		return err;
	return get_size(&c->crashed, v, where, "crashed");
}

static int read_suite(void *item, const pg_json *o, const char *at, void *ctx)
{
	pg_suite_result *s = item;
	int err;

	(void)ctx;
	if ((err = get_str(&s->name, o, at, "name", false)) < 0 ||
	    (err = read_counts(&s->on_base, &s->base, o, at, "base")) < 0 ||
	    (err = read_counts(&s->on_merge, &s->merge, o, at, "merge")) < 0)
		return err;
	return get_str(&s->verdict, o, at, "verdict", false);
}

/*
 * An option's suites, space-separated as the report holds them: the writer
 * splits them on spaces and cuts each at 79 bytes (the selection keeps
 * names of at most 64 of [A-Za-z0-9_.-]), so a name it writes has neither.
 */
static int read_option_suites(pg_selected *s, const pg_json *o, const char *at)
{
	const pg_json *a;
	pg_buf names = PG_BUF_INIT;
	char where[AT_MAX];
	size_t i, n;
	int err;

	if ((err = member(&a, o, at, "suites", PG_JSON_ARRAY, false)) < 0)
		return err;
	n = pg_json_len(a);
	for (i = 0; i < n && err == 0; i++) {
		const char *name = pg_json_str(pg_json_at(a, i));

		at_index(where, at, "suites", i);
		if (!name)
			err = bad(where, NULL, "%s, not a string",
				  type_name(pg_json_type(pg_json_at(a, i))));
		else if (!*name || strchr(name, ' ') || strlen(name) > 79)
			err = bad_value(where, NULL, name, "a suite name (1 to 79 bytes, no space)");
		else if (names.len)
			err = pg_buf_putc(&names, ' ');
		if (err == 0)
			err = pg_buf_puts(&names, name);
	}
	if (err == 0 && names.len && !(s->suites = pg_buf_detach(&names)))
		err = PG_ENOMEM;
	pg_buf_release(&names);
	return err;
}

static int read_option(void *item, const pg_json *o, const char *at, void *ctx)
{
	pg_selected *s = item;
	const pg_json *v;
	unsigned k;
	int err;

	(void)ctx;
	if ((err = get_str(&s->option, o, at, "option", false)) < 0 ||
	    (err = member(&v, o, at, "status", PG_JSON_STRING, false)) < 0)
		return err;
	for (k = 0; k <= PG_SELECTED_REFUSED; k++)
		if (!strcmp(pg_json_str(v), pg_selected_status_name((enum pg_selected_status)k)))
			break;
	if (k > PG_SELECTED_REFUSED)
		return bad_value(at, "status", pg_json_str(v), "a selection status");
	s->status = (enum pg_selected_status)k;
	if ((err = get_bool(&s->test, o, at, "test")) < 0 ||
	    (err = get_str(&s->path, o, at, "path", true)) < 0 ||
	    (err = get_str(&s->source, o, at, "source", true)) < 0 ||
	    (err = get_str(&s->depends, o, at, "depends", true)) < 0 ||
	    (err = get_str(&s->reason, o, at, "reason", true)) < 0)
		return err;
	return read_option_suites(s, o, at);
}

static int read_selection(pg_report *r, const pg_json *root)
{
	const pg_json *sel;
	int64_t cap;
	int err;

	if ((err = member(&sel, root, "", "selection", PG_JSON_OBJECT, true)) < 0 || !sel)
		return err;
	r->has_selection = true;
	if ((err = get_size(&r->selection_paths, sel, "selection", "paths")) < 0 ||
	    (err = get_int(&cap, sel, "selection", "cap", 0, UINT_MAX)) < 0 ||
	    (err = get_str(&r->selection_note, sel, "selection", "note", true)) < 0)
		return err;
	r->selection_cap = (unsigned)cap;
	return read_objects(&r->selected, &r->nselected, &r->selected_alloc, sizeof(*r->selected),
			    sel, "selection", "options", read_option, NULL);
}

/* The members the writer puts only in a report with stages (the gate's). */
static const char *const gate_members[] = {
	"stages", "merge_base", "merge_commit", "approved", "attestation", "simulated",
	"run_dir", "provenance", "base_boot", "suites", "selection",
};

static int read_gate(pg_report *r, const pg_json *root)
{
	bool has_base, has_merge;
	size_t i;
	int err;

	if (!pg_json_get(root, "stages")) {
		for (i = 0; i < PG_ARRAY_SIZE(gate_members); i++)
			if (pg_json_get(root, gate_members[i]))
				return bad("", gate_members[i], "present in a report without stages");
		return 0;
	}
	if ((err = read_objects(&r->stages, &r->nstages, &r->stages_alloc, sizeof(*r->stages), root,
				"", "stages", read_stage, NULL)) < 0)
		return err;
	if (!r->nstages)
		return bad("", "stages", "empty: the writer lists stages only when there are some");
	if ((err = get_oid(&r->merge_base, &has_base, root, "", "merge_base", true)) < 0 ||
	    (err = get_oid(&r->merge_commit, &has_merge, root, "", "merge_commit", true)) < 0)
		return err;
	if (has_base != has_merge)
		return bad("", has_base ? "merge_commit" : "merge_base",
			   "null, and the other is not: the writer writes both or neither");
	r->has_merge = has_base;
	if ((err = get_bool(&r->approved, root, "", "approved")) < 0 ||
	    (err = get_str(&r->attestation, root, "", "attestation", true)) < 0 ||
	    (err = get_bool(&r->simulated, root, "", "simulated")) < 0 ||
	    (err = get_str(&r->run_dir, root, "", "run_dir", true)) < 0 ||
	    (err = read_objects(&r->provenance, &r->nprovenance, &r->provenance_alloc,
				sizeof(*r->provenance), root, "", "provenance", read_provenance, r)) < 0 ||
	    (err = get_str(&r->base_boot, root, "", "base_boot", true)) < 0 ||
	    (err = read_objects(&r->suites, &r->nsuites, &r->suites_alloc, sizeof(*r->suites), root,
				"", "suites", read_suite, NULL)) < 0)
		return err;
	return read_selection(r, root);
}

/*
 * The transparency log's evidence: absent when the check found none (the
 * writer never writes null), else every member of its own type.
 */
static int read_tlog_evidence(pg_report *r, const pg_json *root)
{
	const pg_json *o;
	pg_tlog_evidence *p;
	int err;

	if (pg_json_type(pg_json_get(root, "transparency")) == PG_JSON_ABSENT)
		return 0;
	if ((err = member(&o, root, "", "transparency", PG_JSON_OBJECT, false)) < 0)
		return err;
	if (!(p = calloc(1, sizeof(*p))))
		return pg_error_oom();
	r->tlog_evidence = p;
	if ((err = get_str(&p->message_id, o, "transparency", "message_id", true)) < 0 ||
	    (err = get_str(&p->date, o, "transparency", "date", true)) < 0 ||
	    (err = get_str(&p->pushed_by, o, "transparency", "pushed_by", false)) < 0 ||
	    (err = get_str(&p->repo, o, "transparency", "repo", false)) < 0)
		return err;
	return get_bool(&p->certified, o, "transparency", "certified");
}

/* --- the whole ------------------------------------------------------------------------ */

/* What the writer derives from the rest must be what the rest gives. */
static int check_counts(const pg_report *r, const pg_json *root)
{
	const char *verdict = pg_json_get_str(root, "verdict");
	const char *want = pg_report_verdict(r) == PG_VERDICT_ACCEPT ? "accept" : "reject";
	const pg_json *s = pg_json_get(root, "summary");
	static const char *const whose = "the findings and the omitted ones have";
	pg_buf text = PG_BUF_INIT, line = PG_BUF_INIT;
	const char *said;
	int err;

	if (strcmp(verdict, want))
		return bad_value("", "verdict", verdict, want[0] == 'a' ?
				 "accept, the findings' verdict" : "reject, the findings' verdict");
	if ((err = expect_size(root, "", "errors", pg_report_count(r, PG_SEV_ERROR), whose)) < 0 ||
	    (err = expect_size(root, "", "warnings", pg_report_count(r, PG_SEV_WARNING), whose)) < 0 ||
	    !r->has_summary)
		return err;
	if ((err = expect_size(s, "summary", "commits", r->ncommits, "the report has")) < 0 ||
	    (err = expect_size(s, "summary", "merges", r->nmerges, "the report has")) < 0 ||
	    (err = expect_size(s, "summary", "root_errors", pg_report_count_roots(r, PG_SEV_ERROR),
			       whose)) < 0 ||
	    (err = expect_size(s, "summary", "root_warnings",
			       pg_report_count_roots(r, PG_SEV_WARNING), whose)) < 0 ||
	    (err = expect_size(s, "summary", "implied", pg_report_count_implied(r), whose)) < 0 ||
	    (err = get_str_borrowed(&said, s, "summary", "text")) < 0 ||
	    (err = pg_summary_format(&text, r)) < 0)
		goto done;
	if (strcmp(said, text.ptr)) {
		err = bad_value("summary", "text", said, "the sentence its counts make");
		goto done;
	}
	if ((err = get_str_borrowed(&said, s, "summary", "verdict")) < 0 ||
	    (err = pg_summary_verdict(&line, r)) < 0)
		goto done;
	if (strcmp(said, line.ptr))
		err = bad_value("summary", "verdict", said, "the findings' verdict line");
done:
	pg_buf_release(&text);
	pg_buf_release(&line);
	return err;
}

static int read_report(pg_report *r, const pg_json *root)
{
	omitted_ctx omitted = { r, false }, implied = { r, true };
	const pg_json *v;
	bool checked = false;
	int64_t n;
	int err;

	if ((err = get_int(&n, root, "", "schema", INT64_MIN, INT64_MAX)) < 0)
		return err;
	if (n != PG_REPORT_SCHEMA_VERSION)
		return bad("", "schema", "version %lld, not %d", (long long)n,
			   PG_REPORT_SCHEMA_VERSION);
	if ((err = member(&v, root, "", "tool", PG_JSON_STRING, false)) < 0 ||
	    (err = member(&v, root, "", "verdict", PG_JSON_STRING, false)) < 0 ||
	    (err = read_summary(r, root)) < 0 ||
	    (err = get_str(&r->repo, root, "", "repo", true)) < 0 ||
	    (err = get_str(&r->tag, root, "", "tag", true)) < 0 ||
	    (err = get_oid(&r->tag_object, NULL, root, "", "tag_object", false)) < 0 ||
	    (err = get_oid(&r->tag_commit, NULL, root, "", "tag_commit", false)) < 0 ||
	    (err = get_int(&r->tag_time, root, "", "tag_time", INT64_MIN, INT64_MAX)) < 0 ||
	    (err = get_int(&n, root, "", "tag_offset", INT_MIN, INT_MAX)) < 0)
		return err;
	r->tag_offset = (int)n;
	if ((err = read_upstream(r, root)) < 0 ||
	    (err = get_bool(&checked, root, "", "signatures_checked")) < 0 ||
	    (err = read_objects(&r->signatures, &r->nsignatures, &r->signatures_alloc,
				sizeof(*r->signatures), root, "", "signatures", read_signature, NULL)) < 0 ||
	    (err = read_findings(r, root)) < 0 ||
	    (err = read_objects(&r->notes, &r->nnotes, &r->notes_alloc, sizeof(*r->notes), root, "",
				"notes", read_note, NULL)) < 0 ||
	    (err = read_objects(NULL, NULL, NULL, 0, root, "", "omitted", read_omitted, &omitted)) < 0 ||
	    (err = read_objects(NULL, NULL, NULL, 0, root, "", "omitted_implied", read_omitted,
				&implied)) < 0 ||
	    (err = get_size(&r->max_per_check, root, "", "max_findings_per_check")) < 0 ||
	    (err = check_cap(r)) < 0 ||
	    (err = get_str(&r->policy_sha256, root, "", "policy_sha256", true)) < 0)
		return err;
	r->no_keyring = !checked;
	if (r->policy_sha256 && !lower_hex(r->policy_sha256, 64))
		return bad_value("", "policy_sha256", r->policy_sha256,
				 "a SHA-256 (64 lower-case hex digits)");
	if ((err = read_gate(r, root)) < 0 || (err = read_tlog_evidence(r, root)) < 0 ||
	    (err = get_str(&r->tag_signer, root, "", "tag_signer", true)) < 0)
		return err;
	return check_counts(r, root);
}

int pg_report_parse_json(pg_report **out, const char *text, size_t len)
{
	pg_json *root = NULL;
	pg_report *r = NULL;
	int err;

	*out = NULL;
	if (len > PG_REPORT_JSON_MAX)
		return pg_error_set(PG_ETOOBIG, "report JSON: %zu bytes, more than a report's %zu",
				    len, (size_t)PG_REPORT_JSON_MAX);
	if ((err = pg_json_parse(&root, text, len)) < 0)
		return err == PG_EINVALID ? pg_error_wrap(err, "report JSON") : err;
	if (pg_json_type(root) != PG_JSON_OBJECT)
		err = bad("", NULL, "the document is %s, not an object",
			  type_name(pg_json_type(root)));
	else if ((err = pg_report_new(&r)) == 0)
		err = read_report(r, root);
	pg_json_free(root);
	if (err < 0) {
		pg_report_free(r);
		return err;
	}
	*out = r;
	return 0;
}
