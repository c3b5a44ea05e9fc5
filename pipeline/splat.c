/* splat.c - kernel splats (Oops, WARN, BUG, panic, ...) found in console lines, with their first lines. */
#include "pipeline/splat.h"
#include "common/array.h"
#include "common/error.h"
#include "common/hex.h"
#include "common/sanitize.h"

/* A splat's lines are cut here: the head of a line says what it is. */
#define LINE_KEPT 256

static bool starts(const char *s, size_t n, const char *prefix)
{
	return n >= strlen(prefix) && !memcmp(s, prefix, strlen(prefix));
}

static bool contains(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

/* lockdep's and RCU-lockdep's headers: WARNING: without "CPU:", each one a locking bug */
static bool lockdep_header(const char *s, size_t n)
{
	static const char *const heads[] = {
		"WARNING: possible ",            /* circular, recursive, irq lock inversion */
		"WARNING: inconsistent lock state",
		"WARNING: bad unlock balance",
		"WARNING: held lock freed",
		"WARNING: lock held ",
		"WARNING: suspicious RCU usage",
		"WARNING: bad contention",
		"WARNING: Nested lock was not taken",
		"WARNING: chain_key collision",
		"WARNING: locking correctness",
	};
	size_t i;

	for (i = 0; i < PG_ARRAY_SIZE(heads); i++)
		if (starts(s, n, heads[i]))
			return true;
	return false;
}

static int splat_kind(const char *s, size_t n)
{
	/* "Kernel panic - not syncing: ...", however another CPU's output cut into it */
	if (starts(s, n, "Kernel panic"))
		return PG_SPLAT_PANIC;
	if (starts(s, n, "WARNING: CPU:") || starts(s, n, "WARNING: at "))
		return PG_SPLAT_WARN;
	if (lockdep_header(s, n))
		return PG_SPLAT_LOCKDEP;
	/* "BUG kmalloc-64 (Not tainted): Poison overwritten": SLUB's debug checks */
	if (starts(s, n, "kernel BUG at ") || starts(s, n, "Kernel BUG at ") ||
	    starts(s, n, "BUG: ") || (starts(s, n, "BUG ") && contains(s, n, "): ")) ||
	    contains(s, n, "BUG: soft lockup") || contains(s, n, "BUG: workqueue lockup") ||
	    contains(s, n, "Watchdog detected hard LOCKUP"))
		return PG_SPLAT_BUG;
	if (starts(s, n, "kmemleak: ") && contains(s, n, "new suspected memory leak"))
		return PG_SPLAT_LEAK;
	if (starts(s, n, "Out of memory") || contains(s, n, ": page allocation failure: order:"))
		return PG_SPLAT_OOM;
	if (starts(s, n, "Unable to handle kernel ") || starts(s, n, "Internal error: ") ||
	    starts(s, n, "Oops: ") || starts(s, n, "Oops - ") ||
	    starts(s, n, "general protection fault"))
		return PG_SPLAT_OOPS;
	if (starts(s, n, "UBSAN: "))
		return PG_SPLAT_UBSAN;
	if (starts(s, n, "INFO: task ") && contains(s, n, "blocked for more than"))
		return PG_SPLAT_HUNG;
	if (contains(s, n, "rcu: INFO: ") && contains(s, n, "stall"))
		return PG_SPLAT_STALL;
	if (starts(s, n, "rcu: INFO: ") || (starts(s, n, "INFO: ") && contains(s, n, "stall")))
		return PG_SPLAT_STALL;
	return -1;
}

const char *pg_splat_kind_name(enum pg_splat_kind k)
{
	switch (k) {
	case PG_SPLAT_OOPS: return "oops";
	case PG_SPLAT_WARN: return "warn";
	case PG_SPLAT_BUG: return "bug";
	case PG_SPLAT_PANIC: return "panic";
	case PG_SPLAT_UBSAN: return "ubsan";
	case PG_SPLAT_HUNG: return "hung";
	case PG_SPLAT_STALL: return "stall";
	case PG_SPLAT_LOCKDEP: return "lockdep";
	case PG_SPLAT_LEAK: return "leak";
	case PG_SPLAT_OOM: return "oom";
	}
	return "unknown";
}

static bool is_hex(char c)
{
	return pg_hex_digit((unsigned char)c) >= 0;
}

/* A source line number: digits right after "x.c:", "x.h:", "x.S:" or "x.rs:". */
static bool after_source(const char *line, size_t at)
{
	static const char *const ext[] = { ".c:", ".h:", ".S:", ".rs:" };
	size_t i, n;

	for (i = 0; i < PG_ARRAY_SIZE(ext); i++) {
		n = strlen(ext[i]);
		if (at >= n && !memcmp(line + at - n, ext[i], n))
			return true;
	}
	return false;
}

int pg_splat_key(pg_buf *out, const pg_splat *s)
{
	const char *t = s->text;
	size_t len = strcspn(t, "\n"), i = 0;
	int err = pg_buf_printf(out, "%s ", pg_splat_kind_name(s->kind));

	while (err == 0 && i < len) {
		size_t j = i;

		if (t[i] == '0' && i + 1 < len && (t[i + 1] == 'x' || t[i + 1] == 'X')) {
			for (j = i + 2; j < len && is_hex(t[j]); j++)
				;
			err = pg_buf_puts(out, "0x#");
		} else if (is_hex(t[i]) && (i == 0 || !is_hex(t[i - 1]))) {
			bool digit = false;

			/* a word of hex digits: a number when it has a digit and is long or all digits */
			for (j = i; j < len && is_hex(t[j]); j++)
				digit = digit || (t[j] >= '0' && t[j] <= '9');
			if (digit && (j - i >= 8 || strspn(t + i, "0123456789") >= j - i) &&
			    (j == len || !((t[j] >= 'g' && t[j] <= 'z') || (t[j] >= 'G' && t[j] <= 'Z') ||
					   t[j] == '_')) &&
			    !after_source(t, i))
				err = pg_buf_putc(out, '#');
			else
				err = pg_buf_put(out, t + i, j - i);
		} else {
			err = pg_buf_putc(out, t[i]);
			j = i + 1;
		}
		i = j;
	}
	return err;
}

void pg_splat_scan_init(pg_splat_scan *s)
{
	memset(s, 0, sizeof(*s));
	s->open = -1;
}

void pg_splat_free_all(pg_splat *splats, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(splats[i].text);
	free(splats);
}

void pg_splat_scan_release(pg_splat_scan *s)
{
	pg_splat_free_all(s->splats, s->nsplats);
	pg_splat_scan_init(s);
}

/* Add a line to a splat's text (the first one too), as valid UTF-8. */
static int add_line(pg_splat *sp, const char *line, size_t len)
{
	pg_buf b = PG_BUF_INIT;
	int err = 0;

	if (sp->text && (err = pg_buf_puts(&b, sp->text)) == 0)
		err = pg_buf_putc(&b, '\n');
	if (err == 0)
		err = pg_sanitize_utf8(&b, line, len > LINE_KEPT ? LINE_KEPT : len);
	if (err < 0) {
		pg_buf_release(&b);
		return err;
	}
	free(sp->text);
	sp->text = pg_buf_detach(&b);
	return sp->text ? 0 : PG_ENOMEM;
}

/* A line of the open splat, if there is one and it takes more. */
static int continue_open(pg_splat_scan *s, const char *line, size_t len)
{
	if (s->open < 0)
		return 0;
	if (starts(line, len, "---[ end ") || s->open_lines >= PG_SPLAT_LINES || !len) {
		s->open = -1;
		return 0;
	}
	s->open_lines++;
	return add_line(&s->splats[s->open], line, len);
}

int pg_splat_scan_line(pg_splat_scan *s, const char *line, size_t len, double ts, size_t lineno)
{
	int kind = splat_kind(line, len), err;
	pg_splat *p;

	if (kind < 0)
		return continue_open(s, line, len);
	if (kind == PG_SPLAT_OOPS && s->open >= 0 && s->splats[s->open].kind == PG_SPLAT_OOPS &&
	    starts(line, len, "Internal error: ")) {
		if (s->open_lines >= PG_SPLAT_LINES)
			return 0;
		s->open_lines++;
		return add_line(&s->splats[s->open], line, len);
	}
	if (s->nsplats >= PG_SPLAT_MAX) {
		s->truncated = true;
		s->open = -1;
		return 0;
	}
	if ((err = PG_ARRAY_GROW(s->splats, s->nsplats + 1, s->alloc)) < 0)
		return err;
	p = &s->splats[s->nsplats];
	memset(p, 0, sizeof(*p));
	p->kind = (enum pg_splat_kind)kind;
	p->time = ts;
	p->line = lineno;
	if ((err = add_line(p, line, len)) < 0)
		return err;
	s->open = (long)s->nsplats++;
	s->open_lines = 1;
	return 0;
}
