/* server.h - pullgate serve: the HTTP service, its store and its worker, started and stopped as one. */
#ifndef PG_SERVER_H
#define PG_SERVER_H

#include "server/config.h"
#include "server/worker.h"

typedef struct pg_server pg_server;

typedef struct pg_server_opts {
	const pg_config *config;   /* borrowed; outlives the server */
	const char *home;          /* $PULLGATE_HOME: caches, trees, logs; the default state dir */
	const char *datadir;       /* where scripts/kernel/ lives */
	pg_log_fn log;             /* one line per event worth logging; may be NULL */
	void *log_ctx;
} pg_server_opts;

/* Every field zero: pg_server_opts o = PG_SERVER_OPTS_INIT; */
#define PG_SERVER_OPTS_INIT { 0 }

/*
 * Open the store (state/pullgate.db), put interrupted jobs back in the
 * queue, load the policy, read or create the hook secrets
 * (state/hook-secret, mode 0600, when the configuration has none), start
 * the worker and listen.  Everything runs on threads of its own; the
 * caller waits for a signal and calls pg_server_stop.  Errors: PG_EIO
 * (cannot listen or open the store), PG_EINVALID (a bad policy).
 */
int pg_server_start(pg_server **out, const pg_server_opts *opts);

/* "http://ADDRESS:PORT/" with the port actually bound (for port 0). Borrowed. */
const char *pg_server_url(const pg_server *s);

/* How many interrupted jobs were put back in the queue at start. */
size_t pg_server_requeued(const pg_server *s);

/*
 * SIGHUP: use configuration c, and the policy it names (loaded now), for
 * every request and every job that starts from now on; the mail notice
 * and the KCIDB submissions (kcidb.submit, its token file read again) too.  Keys only a restart applies (listen, state, pipeline.stages,
 * pipeline.verify-workers, session.hours) keep their running values, and
 * their names are appended to restart ("a, b").  On 0 the server owns c.
 * On error (the policy does not load: PG_EINVALID "FILE:LINE:COL: ...";
 * a hook secret that cannot be read; PG_EUNSUPPORTED, kcidb.submit
 * configured and libcurl not loadable) nothing changed and c is still the
 * caller's.  Call it from one thread at a time.
 */
int pg_server_reload(pg_server *s, pg_config *c, pg_buf *restart);

/* Stop listening, end event streams, stop the worker (running jobs stay queued), close the store. */
void pg_server_stop(pg_server *s);

#endif
