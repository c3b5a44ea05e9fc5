/* ktap.c - KTAP/KUnit console log parser: nested results, crashes, boot time (splats: splat.c). */
#include "pipeline/ktap.h"
#include "common/array.h"
#include "common/error.h"
#include "common/sanitize.h"
#include "common/str.h"

#include <ctype.h>
#include <limits.h>

#define NAME_MAX_LEN 256

/* An open block of subtests at one indentation level. */
struct frame {
	long node;          /* the test that owns the block; -1 for the root */
	long plan;          /* "1..N", or -1 */
	size_t nresults;    /* results (and crashed sub-blocks) seen */
	size_t nbad;        /* of those, failed or crashed */
	bool named;         /* "# Subtest:" seen */
	bool last_crashed;  /* the latest entry was a crashed sub-block */
};

struct parser {
	pg_boot_result *r;
	struct frame frames[PG_KTAP_MAX_DEPTH + 1];
	int top;            /* deepest open level; level 0 is always open */
	size_t alloc_tests;
	size_t lineno;
	double ts;          /* timestamp of the current line, or -1 */
	double last_ts, marker_ts, poweroff_ts;
	pg_splat_scan splats;
	/* KUnit's why of the next result, from a "... FAILED at" line on */
	pg_buf diag, diag_line;
	unsigned diag_lines;
	size_t diag_total;  /* bytes of diagnostics kept, for PG_KTAP_DIAG_TOTAL */
};

/* ---- small helpers ----------------------------------------------------- */

static bool starts(const char *s, size_t n, const char *prefix)
{
	return n >= strlen(prefix) && !memcmp(s, prefix, strlen(prefix));
}

static bool contains(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

/* A copy of s[0..n) as valid UTF-8, cut at max bytes; NULL on OOM. */
static char *clean_dup(const char *s, size_t n, size_t max)
{
	pg_buf b = PG_BUF_INIT;

	if (n > max)
		n = max;
	if (pg_sanitize_utf8(&b, s, n) < 0) {
		pg_buf_release(&b);
		return NULL;
	}
	return pg_buf_detach(&b);
}

/* Parse decimal digits at *s; false when there are none. Saturates. */
static bool parse_ulong(const char **s, size_t *n, unsigned long *v)
{
	size_t i = 0;

	*v = 0;
	while (i < *n && (*s)[i] >= '0' && (*s)[i] <= '9') {
		unsigned d = (unsigned)((*s)[i] - '0');

		*v = *v > (ULONG_MAX - d) / 10 ? ULONG_MAX : *v * 10 + d;
		i++;
	}
	if (!i)
		return false;
	*s += i;
	*n -= i;
	return true;
}

/*
 * Remove console prefixes: a syslog level "<6>", a timestamp
 * "[    1.234567]" and a caller id "[    T1]", each followed by at most one
 * space (the rest of the indentation belongs to the message).
 */
static void strip_prefix(const char **s, size_t *n, double *ts)
{
	const char *p = *s;
	size_t m = *n, i;
	int round;

	*ts = -1;
	if (m >= 3 && p[0] == '<' && p[1] >= '0' && p[1] <= '9') {
		for (i = 1; i < m && i < 5 && p[i] >= '0' && p[i] <= '9'; i++)
			;
		if (i < m && p[i] == '>') {
			p += i + 1;
			m -= i + 1;
		}
	}
	for (round = 0; round < 2 && m && p[0] == '['; round++) {
		const char *q = p + 1;
		size_t k = m - 1;
		unsigned long secs = 0, frac = 0, scale = 1;
		bool is_ts = false;

		while (k && *q == ' ') {
			q++;
			k--;
		}
		if (k && (*q == 'T' || *q == 'C')) {
			q++;
			k--;
			if (!parse_ulong(&q, &k, &secs))
				break;
		} else {
			if (!parse_ulong(&q, &k, &secs) || !k || *q != '.')
				break;
			q++;
			k--;
			for (i = 0; i < k && q[i] >= '0' && q[i] <= '9' && i < 9; i++) {
				frac = frac * 10 + (unsigned long)(q[i] - '0');
				scale *= 10;
			}
			if (!i)
				break;
			while (i < k && q[i] >= '0' && q[i] <= '9')
				i++;
			q += i;
			k -= i;
			is_ts = true;
		}
		if (!k || *q != ']')
			break;
		q++;
		k--;
		if (k && *q == ' ') {
			q++;
			k--;
		}
		if (is_ts)
			*ts = (double)secs + (double)frac / (double)scale;
		p = q;
		m = k;
	}
	*s = p;
	*n = m;
}

/* ---- tests ------------------------------------------------------------- */

static long add_test(struct parser *ps, const char *name, size_t nlen, long parent,
		     unsigned depth, enum pg_ktap_status st, const char *reason,
		     size_t rlen)
{
	pg_boot_result *r = ps->r;
	pg_ktap_test *t;

	if (r->ntests >= PG_KTAP_MAX_TESTS) {
		r->truncated = true;
		r->dropped++;
		return -1;
	}
	if (PG_ARRAY_GROW(r->tests, r->ntests + 1, ps->alloc_tests) < 0)
		return PG_ENOMEM;
	t = &r->tests[r->ntests];
	memset(t, 0, sizeof(*t));
	t->name = clean_dup(name, nlen, NAME_MAX_LEN);
	t->reason = reason ? clean_dup(reason, rlen, NAME_MAX_LEN) : NULL;
	if (!t->name || (reason && !t->reason)) {
		free(t->name);
		free(t->reason);
		return pg_error_oom();
	}
	t->parent = parent;
	t->depth = depth;
	t->status = st;
	t->line = ps->lineno;
	return (long)r->ntests++;
}

static void count(pg_boot_result *r, enum pg_ktap_status st)
{
	switch (st) {
	case PG_KTAP_PASS: r->passed++; break;
	case PG_KTAP_FAIL: r->failed++; break;
	case PG_KTAP_SKIP: r->skipped++; break;
	case PG_KTAP_CRASHED: r->crashed++; break;
	}
}

/* Synthetic crashed entries "#first".."#last" under the block at level. */
static int add_missing(struct parser *ps, int level, size_t first, size_t last,
		       const char *why)
{
	size_t k;
	char name[32];
	long err;

	for (k = first; k <= last; k++) {
		ps->r->crashed++;
		snprintf(name, sizeof(name), "#%zu", k);
		err = add_test(ps, name, strlen(name), ps->frames[level].node,
			       (unsigned)level, PG_KTAP_CRASHED, why, strlen(why));
		if (err == PG_ENOMEM)
			return (int)err;
	}
	return 0;
}

/* Open a block at level, creating the owning test, and any levels between. */
static int open_frame(struct parser *ps, int level)
{
	while (ps->top < level) {
		int l = ps->top + 1;
		struct frame *f = &ps->frames[l];
		long node;

		/* the owner sits one level up; its name comes later */
		node = add_test(ps, "", 0, ps->frames[l - 1].node, (unsigned)(l - 1),
				PG_KTAP_CRASHED, NULL, 0);
		if (node == PG_ENOMEM)
			return PG_ENOMEM;
		if (node >= 0)
			ps->r->tests[node].has_subtests = true;
		memset(f, 0, sizeof(*f));
		f->node = node;
		f->plan = -1;
		ps->top = l;
	}
	return 0;
}

/*
 * The block at the deepest level ended without its owner's result: the
 * owner crashed, and so did each planned test that never reported (or,
 * with no plan, the one that was running).
 */
static int crash_close_top(struct parser *ps, const char *why)
{
	int l = ps->top;
	struct frame *f = &ps->frames[l];
	struct frame *up = &ps->frames[l - 1];
	bool unclosed = false;
	int err = 0;

	if (f->plan >= 0 && f->nresults < (size_t)f->plan)
		err = add_missing(ps, l, f->nresults + 1, (size_t)f->plan, why);
	else if (!f->last_crashed && f->plan < 0)
		err = add_missing(ps, l, f->nresults + 1, f->nresults + 1, why);
	else if (!f->last_crashed)
		unclosed = true;   /* all reported, but the block never closed */
	if (err < 0)
		return err;
	if (unclosed)
		ps->r->crashed++;  /* the owner's crash, whatever its children did */
	if (f->node >= 0) {
		pg_ktap_test *t = &ps->r->tests[f->node];

		t->status = PG_KTAP_CRASHED;
		t->own_failure |= unclosed;
		if (!t->reason && !(t->reason = pg_strdup(why)))
			return PG_ENOMEM;
	}
	up->nresults++;
	up->nbad++;
	up->last_crashed = true;
	ps->top = l - 1;
	return 0;
}

static int close_deeper(struct parser *ps, int keep, const char *why)
{
	int err;

	while (ps->top > keep)
		if ((err = crash_close_top(ps, why)) < 0)
			return err;
	return 0;
}

/* "KTAP version 1", "TAP version 14" or "# Subtest: name" at level. */
static int block_start(struct parser *ps, int level, const char *name, size_t nlen)
{
	struct frame *f;
	int err;

	if (level == 0) {
		ps->r->saw_ktap = true;
		return 0;
	}
	if (level > PG_KTAP_MAX_DEPTH) {
		ps->r->truncated = true;
		return 0;
	}
	if ((err = close_deeper(ps, level, "no result: a new block began")) < 0)
		return err;
	if (ps->top == level) {
		f = &ps->frames[level];
		/* a second header of the same block, or the start of a new one */
		if (f->nresults || (name && f->named)) {
			if ((err = crash_close_top(ps, "no result: a new block began")) < 0)
				return err;
		}
	}
	if ((err = open_frame(ps, level)) < 0)
		return err;
	ps->r->saw_ktap = true;
	f = &ps->frames[level];
	if (name) {
		f->named = true;
		if (f->node >= 0) {
			pg_ktap_test *t = &ps->r->tests[f->node];
			char *n = clean_dup(name, nlen, NAME_MAX_LEN);

			if (!n)
				return PG_ENOMEM;
			free(t->name);
			t->name = n;
		}
	}
	return 0;
}

static int plan_line(struct parser *ps, int level, unsigned long n)
{
	int err;

	if (level > PG_KTAP_MAX_DEPTH)
		return 0;
	if (level > ps->top && (err = open_frame(ps, level)) < 0)
		return err;
	if (level < ps->top && (err = close_deeper(ps, level, "no result: a new plan began")) < 0)
		return err;
	ps->frames[level].plan = n > PG_KTAP_MAX_TESTS ? PG_KTAP_MAX_TESTS : (long)n;
	if (level == 0)
		ps->r->plans++;
	return 0;
}

/* "ok 3 name # SKIP why" or "not ok 3 - name" at level. */
static int result_line(struct parser *ps, int level, bool ok, const char *s, size_t n)
{
	const char *name, *reason = NULL;
	size_t nlen, rlen = 0, i;
	enum pg_ktap_status st = ok ? PG_KTAP_PASS : PG_KTAP_FAIL;
	struct frame *f;
	long node;
	int err;

	if (level > PG_KTAP_MAX_DEPTH - 1) {
		ps->r->truncated = true;
		ps->r->dropped++;
		return 0;
	}
	/* directive: the first " #" (KTAP allows '#' in names only escaped) */
	for (i = 0; i + 1 < n; i++)
		if (s[i] == ' ' && s[i + 1] == '#')
			break;
	name = s;
	nlen = i + 1 < n ? i : n;
	if (nlen < n) {
		const char *d = s + nlen + 2;
		size_t dn = n - nlen - 2;

		pg_str_trim_line(&d, &dn);
		/* a "not ok" stays a failure whatever its directive says (KUnit skips
		 * with "ok ... # SKIP"): the judge fails closed */
		if (dn >= 4 && (!strncasecmp(d, "SKIP", 4) || !strncasecmp(d, "TODO", 4))) {
			st = ok ? PG_KTAP_SKIP : PG_KTAP_FAIL;
			reason = d + 4;
			rlen = dn - 4;
			pg_str_trim_line(&reason, &rlen);
		}
	}
	if (nlen >= 2 && name[0] == '-' && name[1] == ' ') {
		name += 2;
		nlen -= 2;
	}
	pg_str_trim_line(&name, &nlen);
	ps->r->saw_ktap = true;

	if ((err = close_deeper(ps, level + 1, "no result: its parent reported first")) < 0)
		return err;
	if (ps->top == level + 1) {
		/* the result of the test that owned the block below */
		f = &ps->frames[level + 1];
		node = f->node;
		if (f->plan >= 0 && f->nresults < (size_t)f->plan) {
			err = add_missing(ps, level + 1, f->nresults + 1, (size_t)f->plan,
					  "no result: missing from the plan");
			if (err < 0)
				return err;
			f->nbad++;
		}
		if (node >= 0) {
			pg_ktap_test *t = &ps->r->tests[node];
			char *nm = clean_dup(name, nlen, NAME_MAX_LEN);

			if (!nm)
				return PG_ENOMEM;
			if (!f->named || !t->name[0]) {
				free(t->name);
				t->name = nm;
			} else {
				free(nm);
			}
			t->status = st;
			t->line = ps->lineno;
			free(t->reason);
			t->reason = reason ? clean_dup(reason, rlen, NAME_MAX_LEN) : NULL;
			if (reason && !t->reason)
				return PG_ENOMEM;
		}
		/* an empty block counts as a test; a failure no child explains too */
		if (!f->nbad && (!f->nresults || st == PG_KTAP_FAIL))
			count(ps->r, st);
		ps->top = level;
		if (st == PG_KTAP_FAIL || f->nbad)
			ps->frames[level].nbad++;
	} else {
		if (level > ps->top && (err = open_frame(ps, level)) < 0)
			return err;
		node = add_test(ps, name, nlen, ps->frames[level].node, (unsigned)level,
				st, reason, rlen);
		if (node == PG_ENOMEM)
			return PG_ENOMEM;
		count(ps->r, st);
		if (st == PG_KTAP_FAIL)
			ps->frames[level].nbad++;
	}
	/* a result ends what was said before it: a failure keeps it as its why */
	if (node >= 0 && st == PG_KTAP_FAIL && ps->diag.len && !ps->r->tests[node].diagnostic &&
	    ps->diag_total + ps->diag.len <= PG_KTAP_DIAG_TOTAL) {
		if (!(ps->r->tests[node].diagnostic = pg_strdup(ps->diag.ptr)))
			return PG_ENOMEM;
		ps->diag_total += ps->diag.len;
	}
	pg_buf_clear(&ps->diag);
	ps->diag_lines = 0;
	ps->frames[level].nresults++;
	ps->frames[level].last_crashed = false;
	return 0;
}

/* ---- lines ------------------------------------------------------------- */

/* The longest start of valid UTF-8 s[0..n) of at most max bytes that ends on a character. */
static size_t utf8_cut(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	while (max && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return max;
}

static bool block_start_line(const char *t, size_t n)
{
	return starts(t, n, "KTAP version ") || starts(t, n, "TAP version ") ||
	       starts(t, n, "# Subtest: ");
}

/*
 * KUnit says why a case failed before its result: "# case: EXPECTATION
 * FAILED at lib/x.c:42", then "Expected a == b, but" and the values.
 * Kept from that line on (a new one starts afresh), within bounds, for
 * the next result; a new block forgets it.
 */
static int diag_line(struct parser *ps, const char *t, size_t n)
{
	bool failed_at = contains(t, n, "EXPECTATION FAILED at ") ||
			 contains(t, n, "ASSERTION FAILED at ");
	size_t room;

	if (failed_at || block_start_line(t, n)) {
		pg_buf_clear(&ps->diag);
		ps->diag_lines = 0;
	}
	/* results are read as results (and end it), plans and block starts are no why */
	if (!failed_at && (!ps->diag_lines || block_start_line(t, n) || starts(t, n, "ok ") ||
			   starts(t, n, "not ok ") || starts(t, n, "1..")))
		return 0;
	if (ps->diag_lines >= PG_KTAP_DIAG_LINES || ps->diag.len + 2 >= PG_KTAP_DIAG_MAX)
		return 0;
	/* sanitized first (an invalid byte becomes three), then cut to what is left */
	pg_buf_clear(&ps->diag_line);
	if (pg_sanitize_terminal(&ps->diag_line, t, n < PG_KTAP_DIAG_MAX ? n : PG_KTAP_DIAG_MAX,
				 PG_SANITIZE_ONELINE) < 0)
		return PG_ENOMEM;
	room = PG_KTAP_DIAG_MAX - 1 - ps->diag.len - (ps->diag.len ? 1 : 0);
	n = utf8_cut(ps->diag_line.ptr, ps->diag_line.len, room);
	if ((ps->diag.len && pg_buf_putc(&ps->diag, '\n') < 0) ||
	    pg_buf_put(&ps->diag, ps->diag_line.ptr, n) < 0)
		return PG_ENOMEM;
	ps->diag_lines++;
	return 0;
}

/*
 * The init's marker, "pullgate-init: done nonce=N": N is the nonce the
 * boot script put on the kernel command line, so that only this boot's
 * console carries it.  The first marker's nonce is kept; a later marker
 * with another one (or none) means the log holds more than one boot.
 */
static int marker_line(struct parser *ps, const char *s, size_t n)
{
	const char *m = memmem(s, n, PG_KTAP_MARKER, strlen(PG_KTAP_MARKER));
	const char *p = m + strlen(PG_KTAP_MARKER), *end = s + n, *nonce = NULL;
	size_t len = 0;
	pg_boot_result *r = ps->r;

	if ((size_t)(end - p) > strlen(PG_KTAP_NONCE) &&
	    !memcmp(p, PG_KTAP_NONCE, strlen(PG_KTAP_NONCE))) {
		nonce = p + strlen(PG_KTAP_NONCE);
		while (nonce + len < end && len <= PG_KTAP_NONCE_MAX &&
		       ((nonce[len] >= '0' && nonce[len] <= '9') ||
			(nonce[len] >= 'a' && nonce[len] <= 'z') ||
			(nonce[len] >= 'A' && nonce[len] <= 'Z')))
			len++;
		if (!len || len > PG_KTAP_NONCE_MAX)
			nonce = NULL;
	}
	if (!r->saw_marker) {
		r->saw_marker = true;
		r->marker_line = ps->lineno;
		if (nonce && !(r->marker_nonce = pg_strndup(nonce, len)))
			return PG_ENOMEM;
		return 0;
	}
	if (!nonce != !r->marker_nonce ||
	    (nonce && (strlen(r->marker_nonce) != len || memcmp(r->marker_nonce, nonce, len))))
		r->markers_differ = true;
	return 0;
}

static int read_line(struct parser *ps, const char *s, size_t n, const char **read)
{
	size_t indent = 0, k, len;
	int level, err;
	const char *t, *line;
	unsigned long num;

	if (n > PG_KTAP_MAX_LINE) {
		n = PG_KTAP_MAX_LINE;
		ps->r->truncated = true;
	}
	while (n && (s[n - 1] == '\r' || s[n - 1] == '\n'))
		n--;
	strip_prefix(&s, &n, &ps->ts);
	if (ps->ts >= 0)
		ps->last_ts = ps->ts;

	if (contains(s, n, PG_KTAP_MARKER)) {
		if ((err = marker_line(ps, s, n)) < 0)
			return err;
		if (ps->ts >= 0 && ps->marker_ts < 0)
			ps->marker_ts = ps->ts;
	}
	if (contains(s, n, "reboot: Power down")) {
		ps->r->powered_off = true;
		ps->r->poweroff_line = ps->lineno;
		if (ps->ts >= 0 && ps->poweroff_ts < 0)
			ps->poweroff_ts = ps->ts;
	}
	line = s;
	len = n;
	pg_str_trim_line(&line, &len);
	if ((err = pg_splat_scan_line(&ps->splats, line, len, ps->ts, ps->lineno)) < 0)
		return err;

	for (k = 0; k < n && (s[k] == ' ' || s[k] == '\t'); k++)
		indent += s[k] == '\t' ? 4 : 1;
	level = (int)(indent / 4);
	t = s + k;
	n -= k;
	pg_str_rtrim(t, &n, PG_STR_BLANKS);
	if ((err = diag_line(ps, t, n)) < 0)
		return err;
	if (level > PG_KTAP_MAX_DEPTH) {
		if (starts(t, n, "ok ") || starts(t, n, "not ok ")) {
			ps->r->truncated = true;
			ps->r->dropped++;
			*read = t;
		}
		return 0;
	}

	if (starts(t, n, "KTAP version ") || starts(t, n, "TAP version "))
		return block_start(ps, level, NULL, 0);
	if (starts(t, n, "# Subtest: ")) {
		const char *nm = t + 11;
		size_t nl = n - 11;

		pg_str_trim_line(&nm, &nl);
		return block_start(ps, level, nm, nl);
	}
	if (starts(t, n, "1..")) {
		const char *p = t + 3;
		size_t m = n - 3;

		if (parse_ulong(&p, &m, &num) && (m == 0 || p[0] == ' '))
			return plan_line(ps, level, num);
		return 0;
	}
	if (starts(t, n, "ok ") || starts(t, n, "not ok ")) {
		bool ok = t[0] == 'o';
		const char *p = t + (ok ? 3 : 7);
		size_t m = n - (ok ? 3 : 7);

		if (!parse_ulong(&p, &m, &num))
			return 0;
		if (m && p[0] != ' ')
			return 0;
		pg_str_trim_line(&p, &m);
		*read = t;
		return result_line(ps, level, ok, p, m);
	}
	return 0;
}

/*
 * A line, and the "not ok" in it that no result accounts for: every one
 * but the one that starts a result line read (read: its start, or NULL).
 */
static int parse_line(struct parser *ps, const char *s, size_t n)
{
	const char *read = NULL, *p = s, *end, *hit;
	int err = read_line(ps, s, n, &read);

	end = s + (n > PG_KTAP_MAX_LINE ? PG_KTAP_MAX_LINE : n);
	while (err == 0 && (hit = memmem(p, (size_t)(end - p), "not ok", 6))) {
		/* a word of its own: "cannot ok" is not one */
		bool word = hit == s || !(isalnum((unsigned char)hit[-1]) || hit[-1] == '_');

		if (hit != read && word) {
			if (!ps->r->stray++)
				ps->r->stray_line = ps->lineno;
			break;
		}
		p = hit + 6;
	}
	return err;
}

static int build_paths(pg_boot_result *r)
{
	size_t i;

	for (i = 0; i < r->ntests; i++) {
		pg_buf b = PG_BUF_INIT;
		const char *parts[PG_KTAP_MAX_DEPTH + 2];
		size_t np = 0;
		long at = (long)i;
		int err = 0;

		while (at >= 0 && np < PG_ARRAY_SIZE(parts)) {
			parts[np++] = r->tests[at].name[0] ? r->tests[at].name : "?";
			at = r->tests[at].parent;
			/* parents are always created before their children */
			if (at >= (long)i)
				break;
		}
		while (np && err == 0) {
			err = pg_buf_puts(&b, parts[--np]);
			if (np && err == 0)
				err = pg_buf_putc(&b, '.');
		}
		if (err < 0) {
			pg_buf_release(&b);
			return err;
		}
		if (!(r->tests[i].path = pg_buf_detach(&b)))
			return PG_ENOMEM;
	}
	return 0;
}

static bool bad(const pg_ktap_test *t)
{
	return t->status == PG_KTAP_FAIL || t->status == PG_KTAP_CRASHED;
}

/*
 * A failure is a test's own when no test below it failed or crashed (or,
 * set by the parser, its block never closed).  Children come after their
 * parents, so one walk from the end sees every child before its parent.
 */
static int mark_own_failures(pg_boot_result *r)
{
	bool *bad_below = r->ntests ? calloc(r->ntests, sizeof(*bad_below)) : NULL;
	size_t i;

	if (r->ntests && !bad_below)
		return PG_ENOMEM;
	for (i = r->ntests; i-- > 0;) {
		pg_ktap_test *t = &r->tests[i];

		t->own_failure |= bad(t) && !bad_below[i];
		if ((bad(t) || bad_below[i]) && t->parent >= 0 && (size_t)t->parent < i)
			bad_below[t->parent] = true;
	}
	free(bad_below);
	return 0;
}

int pg_ktap_parse(pg_boot_result **out, const char *log, size_t len)
{
	struct parser ps;
	const char *p = log, *end = log + len;
	int err = 0;

	if (!out)
		return pg_error_set(PG_EINVALID, "no place for the result");
	*out = NULL;
	memset(&ps, 0, sizeof(ps));
	if (!(ps.r = calloc(1, sizeof(*ps.r))))
		return pg_error_oom();
	ps.diag = (pg_buf)PG_BUF_INIT;
	ps.diag_line = (pg_buf)PG_BUF_INIT;
	ps.frames[0].node = -1;
	ps.frames[0].plan = -1;
	ps.last_ts = ps.marker_ts = ps.poweroff_ts = -1;
	pg_splat_scan_init(&ps.splats);

	while (log && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		ps.lineno++;
		if ((err = parse_line(&ps, p, n)) < 0)
			goto done;
		p += n + (nl ? 1 : 0);
	}
	ps.lineno++;
	if ((err = close_deeper(&ps, 0, "no result: the log ended")) < 0)
		goto done;
	ps.r->plan = ps.frames[0].plan;
	ps.r->top_results = ps.frames[0].nresults;
	if (ps.frames[0].plan >= 0 && ps.frames[0].nresults < (size_t)ps.frames[0].plan &&
	    (err = add_missing(&ps, 0, ps.frames[0].nresults + 1, (size_t)ps.frames[0].plan,
			       "no result: the log ended")) < 0)
		goto done;
	if ((err = build_paths(ps.r)) < 0 || (err = mark_own_failures(ps.r)) < 0)
		goto done;
	ps.r->boot_time = ps.marker_ts >= 0 ? ps.marker_ts :
			  ps.poweroff_ts >= 0 ? ps.poweroff_ts : ps.last_ts;
	ps.r->splats = ps.splats.splats;
	ps.r->nsplats = ps.splats.nsplats;
	ps.r->truncated |= ps.splats.truncated;
	pg_splat_scan_init(&ps.splats);
	*out = ps.r;
	ps.r = NULL;
done:
	if (err < 0)
		err = pg_error_oom();
	pg_splat_scan_release(&ps.splats);
	pg_buf_release(&ps.diag);
	pg_buf_release(&ps.diag_line);
	pg_boot_result_free(ps.r);
	return err;
}

void pg_boot_result_free(pg_boot_result *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->ntests; i++) {
		free(r->tests[i].name);
		free(r->tests[i].path);
		free(r->tests[i].reason);
		free(r->tests[i].diagnostic);
	}
	free(r->tests);
	pg_splat_free_all(r->splats, r->nsplats);
	free(r->marker_nonce);
	free(r);
}

/* One gap: a line in why, if given, and one more in the count. */
static int PG_PRINTF(3, 4) gap(pg_buf *why, int *n, const char *fmt, ...)
{
	va_list ap;
	int err = 0;

	(*n)++;
	if (!why)
		return 0;
	va_start(ap, fmt);
	err = pg_buf_vprintf(why, fmt, ap);
	va_end(ap);
	return err < 0 ? err : pg_buf_putc(why, '\n');
}

int pg_boot_evidence_gaps(pg_buf *why, const pg_boot_result *r, const char *nonce)
{
	int n = 0, err = 0;

	if (!r->saw_ktap)
		err = gap(why, &n, "the console shows no KTAP output");
	else if (r->plan < 0)
		err = gap(why, &n, "KTAP printed no plan (1..N) at the top level");
	else if (r->plans > 1)
		err = gap(why, &n, "the console holds %zu KTAP runs, not one", r->plans);
	else if (r->top_results < (size_t)r->plan)
		err = gap(why, &n, "the KTAP plan announced %ld result%s and %zu arrived", r->plan,
			  r->plan == 1 ? "" : "s", r->top_results);
	else if (r->top_results > (size_t)r->plan)
		err = gap(why, &n, "%zu results arrived for a KTAP plan of %ld", r->top_results,
			  r->plan);
	if (err == 0 && !r->passed)
		err = gap(why, &n, "no test passed");
	if (err == 0 && !r->saw_marker)
		err = gap(why, &n, "the init's marker (%s) never appeared", PG_KTAP_MARKER);
	else if (err == 0 && nonce && !r->marker_nonce)
		err = gap(why, &n, "the init's marker carries no nonce: it is not this boot's");
	else if (err == 0 && nonce && strcmp(r->marker_nonce, nonce))
		err = gap(why, &n, "the init's marker carries nonce %s, not this boot's %s",
			  r->marker_nonce, nonce);
	if (err == 0 && r->saw_marker && r->markers_differ)
		err = gap(why, &n, "the init's markers carry different nonces: more than one boot");
	if (err == 0 && (!r->powered_off || r->poweroff_line < r->marker_line))
		err = gap(why, &n, "the kernel did not power off after the init's marker");
	return err < 0 ? err : n;
}

/* Call fn, if any, with one problem; count it. */
static int problem(int *n, pg_ktap_problem_fn fn, void *ctx, enum pg_ktap_problem_kind kind,
		   const char *text, const pg_ktap_test *test, const pg_splat *splat)
{
	pg_ktap_problem p = { kind, text, test, splat };

	(*n)++;
	return fn ? fn(ctx, &p) : 0;
}

/* The failures no test result shows, one line each, into why. */
static int unjudged(pg_buf *why, const pg_boot_result *r, size_t own)
{
	int err = 0;

	if (r->dropped)
		err = pg_buf_printf(why, "%zu test result%s past the parser's caps (%d tests, %d "
				    "levels) %s not judged\n", r->dropped, r->dropped == 1 ? "" : "s",
				    PG_KTAP_MAX_TESTS, PG_KTAP_MAX_DEPTH,
				    r->dropped == 1 ? "is" : "are");
	if (err == 0 && r->stray)
		err = pg_buf_printf(why, "line %zu holds a \"not ok\" that is no result the parser "
				    "could read (%zu such line%s)\n", r->stray_line, r->stray,
				    r->stray == 1 ? "" : "s");
	if (err == 0 && !r->dropped && r->failed + r->crashed != own)
		err = pg_buf_printf(why, "the console counts %zu failed and %zu crashed tests, and "
				    "%zu are named\n", r->failed, r->crashed, own);
	return err;
}

int pg_ktap_problems(const pg_boot_result *r, const char *nonce, pg_ktap_problem_fn fn,
		     void *ctx)
{
	pg_buf gaps = PG_BUF_INIT, lost = PG_BUF_INIT;
	size_t i, own = 0;
	char *p, *nl;
	int n = 0, err;

	err = pg_boot_evidence_gaps(&gaps, r, nonce);
	for (p = gaps.ptr; err >= 0 && p && (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = '\0';
		err = problem(&n, fn, ctx, PG_KTAP_GAP, p, NULL, NULL);
	}
	for (i = 0; i < r->ntests && err >= 0; i++)
		if (r->tests[i].own_failure) {
			own++;
			err = problem(&n, fn, ctx, PG_KTAP_FAILURE, NULL, &r->tests[i], NULL);
		}
	if (err >= 0)
		err = unjudged(&lost, r, own);
	for (p = lost.ptr; err >= 0 && p && (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = '\0';
		err = problem(&n, fn, ctx, PG_KTAP_UNJUDGED, p, NULL, NULL);
	}
	for (i = 0; i < r->nsplats && err >= 0; i++)
		err = problem(&n, fn, ctx, PG_KTAP_SPLAT, NULL, NULL, &r->splats[i]);
	pg_buf_release(&gaps);
	pg_buf_release(&lost);
	return err < 0 ? err : n;
}

bool pg_boot_result_ok(const pg_boot_result *r)
{
	return r && pg_ktap_problems(r, NULL, NULL, NULL) == 0;
}

/* The top-level test above tests[i]; parents always come before their children. */
static size_t top_of(const pg_boot_result *r, size_t i)
{
	while (r->tests[i].parent >= 0 && (size_t)r->tests[i].parent < i)
		i = (size_t)r->tests[i].parent;
	return i;
}

static void add_count(pg_ktap_suite *s, enum pg_ktap_status st)
{
	switch (st) {
	case PG_KTAP_PASS: s->passed++; break;
	case PG_KTAP_FAIL: s->failed++; break;
	case PG_KTAP_SKIP: s->skipped++; break;
	case PG_KTAP_CRASHED: s->crashed++; break;
	}
}

int pg_ktap_suites(pg_ktap_suite **out, size_t *n, const pg_boot_result *r)
{
	pg_ktap_suite *suites = NULL;
	size_t *slot = NULL, *below = NULL, i, alloc = 0, k = 0;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (!r->ntests)
		return 0;
	/* per test: its suite's slot and how many tests are below it */
	if (!(slot = calloc(r->ntests, sizeof(*slot))) || !(below = calloc(r->ntests, sizeof(*below)))) {
		err = pg_error_oom();
		goto done;
	}
	for (i = 0; i < r->ntests; i++) {
		long p;

		if (r->tests[i].depth == 0 && r->tests[i].parent < 0) {
			if ((err = PG_ARRAY_GROW(suites, k + 1, alloc)) < 0)
				goto done;
			memset(&suites[k], 0, sizeof(suites[k]));
			suites[k].name = r->tests[i].name;
			suites[k].test = i;
			slot[i] = k++;
		}
		for (p = r->tests[i].parent; p >= 0 && (size_t)p < i; p = r->tests[p].parent)
			below[p]++;
	}
	for (i = 0; i < r->ntests; i++) {
		const pg_ktap_test *t = &r->tests[i];
		size_t top = top_of(r, i);

		if (r->tests[top].depth != 0 || r->tests[top].parent >= 0)
			continue;
		/* as the parser counts: leaves, empty blocks, and own failures */
		if (!t->has_subtests || !below[i] || t->own_failure)
			add_count(&suites[slot[top]], t->status);
	}
	*out = suites;
	*n = k;
	suites = NULL;
done:
	free(suites);
	free(slot);
	free(below);
	return err;
}

const char *pg_ktap_status_name(enum pg_ktap_status s)
{
	switch (s) {
	case PG_KTAP_PASS: return "pass";
	case PG_KTAP_FAIL: return "fail";
	case PG_KTAP_SKIP: return "skip";
	case PG_KTAP_CRASHED: return "crashed";
	}
	return "unknown";
}
