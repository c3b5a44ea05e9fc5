/* http_client.h - one HTTP POST to a configured receiver, through libcurl (opened when first used). */
#ifndef PG_SERVER_HTTP_CLIENT_H
#define PG_SERVER_HTTP_CLIENT_H

#include "common/buf.h"

#include <signal.h>

/* Bytes of a receiver's answer kept (for the log and the pull's state); the rest is read and dropped. */
#define PG_HTTP_REPLY_KEPT 1024
/* Bytes of an answer read at most: past them the answer is given up. */
#define PG_HTTP_REPLY_MAX ((size_t)64 << 10)

typedef struct pg_http_post {
	const char *url;           /* http:// or https:// only; no redirect is followed */
	const char *bearer;        /* sent as "Authorization: Bearer BEARER"; printable ASCII
				      without blanks (the caller checked), never logged */
	const char *content_type;  /* "application/json" */
	const char *body;
	size_t len;
	unsigned timeout_s;        /* for the whole exchange, connection included */
	volatile sig_atomic_t *cancel; /* may be NULL: set, the exchange is given up at once */
} pg_http_post;

/* Every field zero: pg_http_post p = PG_HTTP_POST_INIT; */
#define PG_HTTP_POST_INIT { 0 }

/*
 * Whether libcurl can be used: opened (libcurl.so.4) the first time, the
 * same answer after.  PG_EUNSUPPORTED naming what is missing.
 */
int pg_http_client_ready(void);

/*
 * POST p->body to p->url.  0 when an answer came, whatever its status:
 * *status is the HTTP status, status_line its line without "HTTP/x "
 * ("401 Unauthorized"; "401" when the protocol has no reason phrase),
 * reply the first PG_HTTP_REPLY_KEPT bytes of its body.  Errors: PG_EIO
 * with the network's reason (no connection, a timeout, TLS), PG_ECANCELLED,
 * PG_EUNSUPPORTED (no libcurl), PG_ENOMEM.
 */
int pg_http_client_post(unsigned *status, pg_buf *status_line, pg_buf *reply,
			const pg_http_post *p);

#endif
