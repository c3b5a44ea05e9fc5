/* splat.h - kernel splats on a console: Oops, WARN, BUG, panic, UBSAN, hung tasks, RCU stalls. */
#ifndef PG_SPLAT_H
#define PG_SPLAT_H

#include "common/buf.h"

#define PG_SPLAT_MAX 64     /* splats kept of one console; past it the scan is truncated */
#define PG_SPLAT_LINES 8    /* lines kept of each splat */

enum pg_splat_kind {
	PG_SPLAT_OOPS,   /* Oops, "Unable to handle kernel ...", GPF */
	PG_SPLAT_WARN,   /* WARNING: CPU: ... */
	PG_SPLAT_BUG,    /* kernel BUG at, BUG: ... (KASAN, lockups, sleeping in atomic),
			    BUG <slab> (...): (SLUB debug), hard LOCKUP */
	PG_SPLAT_PANIC,  /* Kernel panic - not syncing */
	PG_SPLAT_UBSAN,  /* UBSAN: ... */
	PG_SPLAT_HUNG,   /* INFO: task ... blocked for more than */
	PG_SPLAT_STALL,  /* RCU stall */
	PG_SPLAT_LOCKDEP,/* WARNING: possible circular locking dependency detected, ... */
	PG_SPLAT_LEAK,   /* kmemleak: N new suspected memory leaks */
	PG_SPLAT_OOM     /* Out of memory: Killed process ..., page allocation failure */
};

typedef struct pg_splat {
	enum pg_splat_kind kind;
	char *text;       /* its first PG_SPLAT_LINES lines, prefixes removed, valid UTF-8 */
	double time;      /* console timestamp in seconds, or -1 */
	size_t line;
} pg_splat;

const char *pg_splat_kind_name(enum pg_splat_kind k);     /* "oops", ... */

/*
 * What stays the same when a kernel shows the same splat again, to tell a
 * splat the base shows too from a new one: the kind and the first line
 * with the numbers of the moment made '#' (CPU, PID, task ids, addresses,
 * offsets, hex values), only source line numbers ("file.c:123") kept.
 * Appended to out.
 */
int pg_splat_key(pg_buf *out, const pg_splat *s);

/* Free splats[0..n) (their texts) and the array. */
void pg_splat_free_all(pg_splat *splats, size_t n);

/*
 * A scan reads a console line by line and keeps its splats: a splat starts
 * at a line that names its kind and takes the lines after it, up to
 * PG_SPLAT_LINES, an empty line or "---[ end ".  arm64 prints "Unable to
 * handle kernel ..." and then "Internal error: Oops": the two are one splat.
 * The splats stay the scan's until the caller takes the array (and sets
 * splats to NULL and nsplats to 0).
 */
typedef struct pg_splat_scan {
	pg_splat *splats;
	size_t nsplats, alloc;
	bool truncated;       /* a splat past PG_SPLAT_MAX was dropped */
	long open;            /* the splat still taking lines, or -1 */
	int open_lines;       /* lines it has */
} pg_splat_scan;

void pg_splat_scan_init(pg_splat_scan *s);
void pg_splat_scan_release(pg_splat_scan *s);

/*
 * Read one console line, line[0..len), without its console prefix and the
 * blanks around it; ts is its timestamp (or -1) and lineno its 1-based
 * number.  Fails only with PG_ENOMEM.
 */
int pg_splat_scan_line(pg_splat_scan *s, const char *line, size_t len, double ts, size_t lineno);

#endif
