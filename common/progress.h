/* progress.h - what a long step is doing, as data a caller renders: a terminal line, a dashboard bar. */
#ifndef PG_PROGRESS_H
#define PG_PROGRESS_H

#include "common/buf.h"
#include "common/compat.h"

/*
 * One progress event.  Library code never prints: it hands these to the
 * caller's pg_progress_fn, and the caller (cli/, the service's event
 * stream) decides how to show them.  Strings are borrowed for the call.
 */
typedef struct pg_progress {
	const char *stage;   /* "verify", "fetch", "merge", "build", "boot"... */
	const char *line;    /* what happens, one line (always set) */
	/*
	 * A status that the next one replaces (objects received, objects
	 * built, seconds booted): a terminal redraws it in place.  false: an
	 * event of its own ("starting", "passed") that stays.
	 */
	bool transient;
	uint64_t done;       /* units done (objects...) */
	uint64_t total;      /* units expected; 0: unknown */
	const char *unit;    /* "objects", or NULL */
	uint64_t bytes;      /* bytes received (a fetch), or 0 */
	uint64_t elapsed_ms; /* since the step began */
} pg_progress;

typedef void (*pg_progress_fn)(void *ctx, const pg_progress *p);

/*
 * The estimated seconds left from done of total in elapsed_ms, at the rate
 * so far; -1 when it cannot be told (no total, nothing done yet, or more
 * done than expected).
 */
int64_t pg_progress_eta_s(const pg_progress *p);

/*
 * The status as one line, without the stage: "1200/5000 objects (24%),
 * 45 s, about 2 min 20 s left", "3456 objects, 12.3 MiB", or p->line
 * when there are no numbers.
 */
int pg_progress_format(pg_buf *out, const pg_progress *p);

/* Milliseconds of CLOCK_MONOTONIC, for elapsed_ms. */
uint64_t pg_progress_now_ms(void);

#endif
