/* smtp.h - a small SMTP client (RFC 5321): one message to a relay, every reply checked. */
#ifndef PG_SERVER_SMTP_H
#define PG_SERVER_SMTP_H

#include "common/buf.h"

#include <signal.h>

typedef struct pg_smtp_opts {
	const char *host;        /* the relay: a name or an address */
	unsigned port;
	const char *helo;        /* the name pullgate gives in EHLO; NULL: "localhost" */
	unsigned timeout_s;      /* to connect and for each reply */
	volatile sig_atomic_t *cancel; /* may be NULL: set, the session is given up */
} pg_smtp_opts;

/* Every field zero: pg_smtp_opts o = PG_SMTP_OPTS_INIT; then the relay and its port. */
#define PG_SMTP_OPTS_INIT { 0 }

/* A bare local@domain of printable ASCII, with nothing SMTP or a header would read as syntax. */
bool pg_smtp_address_ok(const char *address);

/*
 * Send msg (the header and body, lines ending in "\n" or "\r\n", each at
 * most 998 bytes) from the envelope sender from to rcpts[0..n): EHLO (HELO
 * when the relay does not know EHLO), MAIL FROM, one RCPT TO each, DATA
 * with dot-stuffing, QUIT.  A recipient after the first that the relay
 * refuses is skipped and named in *refused (may be NULL); when the first
 * is refused the message is not sent.  Addresses are the bare
 * local@domain.  Errors: PG_EIO naming the step and the relay's reply
 * ("RCPT TO <a@b>: 550 no such user") or the network error; PG_EINVALID
 * for an address or a line SMTP cannot carry; PG_ECANCELLED.
 */
int pg_smtp_send(const pg_smtp_opts *o, const char *from, const char *const *rcpts, size_t n,
		 const char *msg, size_t len, pg_buf *refused);

#endif
