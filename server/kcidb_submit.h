/* kcidb_submit.h - each decided run's KCIDB document POSTed to the configured receiver: an outbox, one sender thread, retries. */
#ifndef PG_SERVER_KCIDB_SUBMIT_H
#define PG_SERVER_KCIDB_SUBMIT_H

#include "server/server.h"

/* The longest token file read, in bytes: a JWT of many claims fits. */
#define PG_SUBMIT_TOKEN_MAX 8192

/*
 * Why url is no receiver kcidb.submit.url takes, or NULL when it is one:
 * https://HOST[:PORT]/..., or http:// only to a loopback host (localhost,
 * 127.0.0.0/8, [::1]), so that the token never crosses a network in
 * clear; no user before the host ('@'), printable ASCII without blanks,
 * at most 2048 bytes.
 */
const char *pg_submit_why_url(const char *url);

/*
 * Read the bearer token in the file at path into *out (malloc()ed; free
 * it with pg_free_secret): the file opened without following a symlink
 * and without blocking, a regular file of at most PG_SUBMIT_TOKEN_MAX
 * bytes, holding one line (a final newline is allowed) of printable ASCII
 * without blanks, not empty: nothing of it can end the Authorization
 * header or start another.  Errors: PG_ENOTFOUND, PG_EINVALID (a symlink,
 * no regular file, empty, more than one line, a control character or a
 * blank; the message names the path, never the token), PG_ETOOBIG, PG_EIO.
 */
int pg_submit_token_read(char **out, const char *path);

typedef struct pg_submit pg_submit;

/*
 * Start the sender thread of server s: it POSTs the KCIDB document of each
 * pull in the store's submission outbox (a run's report stored with
 * pg_store_update.kcidb puts the pull there) to kcidb.submit.url, the one
 * GET /api/pulls/ID/kcidb serves, with the configuration of the moment
 * (read at each try: a reload applies to the next).  A 2xx is sent; a
 * network error, 408, 429 or 5xx is tried again after retry-seconds,
 * doubled each time, up to attempts tries, then failed; any other status
 * is failed at once.  Each outcome is recorded on the pull (its
 * submission's state, and a decision "kcidb" when it is sent or failed)
 * and logged.  What the outbox holds at start is sent then.  With no URL
 * configured nothing is sent, and what the outbox holds is dropped.
 * PG_EUNSUPPORTED when a URL is configured and libcurl cannot be opened.
 */
int pg_submit_start(pg_submit **out, pg_server *s);

/* A run was decided (a pg_worker_opts.decided callback; ctx is the pg_submit), or the configuration changed: look at the outbox now. */
void pg_submit_wake(void *ctx, int64_t id);

/* Whether the service submits now (kcidb.submit configured): a decided run is put in the outbox only then. */
bool pg_submit_enabled(void *ctx);

/* Stop the thread: a POST under way is given up at once; the outbox keeps what was not sent. NULL-safe. */
void pg_submit_stop(pg_submit *sub);

#endif
