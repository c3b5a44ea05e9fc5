/* conns.h - every open HTTP connection, its request's deadline and its address's share (private to server/). */
#ifndef PG_SERVER_CONNS_H
#define PG_SERVER_CONNS_H

#include "common/compat.h"

#include <sys/socket.h>

/*
 * The listener tells this table when a connection opens, where its request
 * is (headers, body, answered) and when it closes; a thread of the table's
 * own cuts every connection whose request is not in by its deadline.  The
 * deadlines are absolute: bytes trickling in do not extend them, as they
 * extend an idle timeout.  A connection is cut with shutdown(2), so that the
 * thread that reads it sees the end of its stream and closes it as usual;
 * one that never sent a whole request is answered 408 first.  The table
 * knows nothing of libmicrohttpd: a connection is a socket and an address.
 *
 * Loopback clients are not held to the per-address share: behind a reverse
 * proxy every client is loopback, and on the machine itself a client is
 * the maintainer or its tools.
 */
typedef struct pg_conns pg_conns;
typedef struct pg_conn pg_conn;

typedef struct pg_conns_limits {
	unsigned per_address;   /* open connections from one non-loopback address; 0: any */
	unsigned header_ms;     /* from accept (or the last answer) to the end of the headers */
	unsigned body_ms;       /* from the end of the headers to the end of the body */
	unsigned streams;       /* streams open at once; 0: any */
	unsigned streams_per_address; /* from one non-loopback address; 0: any */
} pg_conns_limits;

/* The table and its reaper thread. */
int pg_conns_new(pg_conns **out, const pg_conns_limits *limits);
/* Stops the reaper; every connection must have been closed (pg_conns_close) before. */
void pg_conns_free(pg_conns *c);

/*
 * A connection was accepted on socket fd from addr.  Returns its entry,
 * or NULL when out of memory (the caller closes the connection).  Past its
 * address's share the connection is answered 503 and shut down at once,
 * and still has an entry until pg_conns_close.
 */
pg_conn *pg_conns_open(pg_conns *c, int fd, const struct sockaddr *addr, socklen_t len);

/* The headers are in and a body follows: its own deadline starts. */
void pg_conns_body(pg_conns *c, pg_conn *k);
/* The request is in: no deadline while it is answered (streams last). */
void pg_conns_answering(pg_conns *c, pg_conn *k);
/* The answer went out: the next request on the connection gets header_ms. */
void pg_conns_answered(pg_conns *c, pg_conn *k);

/*
 * An answer that lasts (a stream while a job runs) is about to start on k:
 * true when it may, within the streams' share of all connections and its
 * address's share of that (loopback exempt, as above); it then counts until
 * its request ends (pg_conns_answered) or the connection closes.  Streams
 * are capped apart from other answers because nothing else holds a
 * connection for long: without a cap, readers nobody logged in for could
 * take every connection and leave none for the hooks.
 */
bool pg_conns_stream(pg_conns *c, pg_conn *k);

/* The connection is closing: forget it (before its socket is closed). */
void pg_conns_close(pg_conns *c, pg_conn *k);

/* Whether addr is a loopback address (127/8, ::1, ::ffff:127/104). */
bool pg_conns_is_loopback(const struct sockaddr *addr, socklen_t len);

/* Counters for /metrics: requests cut at their deadline, connections refused. */
typedef struct pg_conns_stats {
	uint64_t timeouts;
	uint64_t refused;
	uint64_t streams_refused;
	size_t open;
	size_t streams;
} pg_conns_stats;

void pg_conns_get_stats(pg_conns *c, pg_conns_stats *out);

#endif
