/* events.h - live progress per job: a bounded ring of lines that SSE readers wait on. */
#ifndef PG_SERVER_EVENTS_H
#define PG_SERVER_EVENTS_H

#include "common/buf.h"
#include "common/progress.h"

/*
 * The worker posts one event per progress line and per state change; the
 * events stream of a job (server-sent events) reads them by sequence
 * number.  Only the last PG_EVENTS_PER_JOB events of the last
 * PG_EVENTS_JOBS jobs are kept: a reader that falls behind skips ahead.
 * The progress text comes from builds and boots: it is data to escape.
 */
#define PG_EVENTS_PER_JOB 256
#define PG_EVENTS_JOBS 32
#define PG_EVENTS_LINE_MAX 512

typedef struct pg_events pg_events;

int pg_events_new(pg_events **out);
void pg_events_free(pg_events *ev);

/* kind: "progress" or "state"; stage may be NULL. Lines are cut at PG_EVENTS_LINE_MAX. */
void pg_events_post(pg_events *ev, int64_t job, const char *kind, const char *stage,
		    const char *text);

/*
 * A progress event with its numbers (common/progress.h): the stream's JSON
 * then carries "done", "total" (0: unknown), "elapsed_ms", "eta_s" (-1:
 * unknown) and "transient" (a status the next one replaces), which the
 * dashboard draws as a bar.
 */
void pg_events_post_progress(pg_events *ev, int64_t job, const pg_progress *p);

/*
 * Append, as server-sent events ("id: N\nevent: KIND\ndata: JSON\n\n"),
 * the job's events after sequence *seq, waiting up to timeout_ms for one to
 * come; *seq moves past them.  Returns how many were appended (0 on timeout
 * or after pg_events_close).
 */
int pg_events_read(pg_events *ev, pg_buf *out, int64_t job, uint64_t *seq, unsigned timeout_ms);

/*
 * The merge window's generation: it moves with every state event and
 * with pg_events_queue_changed (a hold, a move, a conflict found at
 * entry), so that a reader of the whole queue knows when to look again.
 */
void pg_events_queue_changed(pg_events *ev);
uint64_t pg_events_queue_generation(pg_events *ev);

/*
 * Wait up to timeout_ms for the generation to pass *gen: 1 with *gen the
 * current one, 0 on timeout or after pg_events_close.
 */
int pg_events_queue_wait(pg_events *ev, uint64_t *gen, unsigned timeout_ms);

/* Wake every reader and make them return at once from now on. */
void pg_events_close(pg_events *ev);
bool pg_events_closed(pg_events *ev);

#endif
