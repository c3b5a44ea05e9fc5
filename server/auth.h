/* auth.h - hook signatures (HMAC-SHA256), password hashes (PBKDF2), sessions and CSRF tokens. */
#ifndef PG_SERVER_AUTH_H
#define PG_SERVER_AUTH_H

#include "common/buf.h"

#include <time.h>

/* OpenSSL (libcrypto) is wrapped here and nowhere else in server/. */

/* Append the lower-case hex HMAC-SHA256 of data under secret. */
int pg_auth_hmac_hex(pg_buf *out, const char *secret, const void *data, size_t len);

/*
 * Check a hook signature header, "sha256=<64 hex digits>", against the
 * HMAC-SHA256 under secret of "TIMESTAMP.BODY": the X-Pullgate-Timestamp
 * header's text, a full stop, and the raw body.  0 when it matches,
 * PG_EINVALID when it is malformed or does not (compared in constant
 * time).  A NULL header or timestamp is PG_EINVALID.  Whether the
 * timestamp is recent is the caller's to check, once it is authentic.
 */
int pg_auth_hook_verify(const char *secret, const char *header, const char *timestamp,
			const void *body, size_t len);

/* Constant-time equality of two NUL-terminated strings (length leaks, contents do not). */
bool pg_auth_equal(const char *a, const char *b);

/*
 * Hash a password: "pbkdf2-sha256$ITERATIONS$SALTHEX$HASHHEX", a fresh
 * 16-byte salt, PG_AUTH_PBKDF2_ITERATIONS rounds (0 iterations: that).
 */
#define PG_AUTH_PBKDF2_ITERATIONS 200000
int pg_auth_password_hash(pg_buf *out, const char *password, unsigned iterations);

/* 0 when password matches hash, PG_EINVALID when not or when hash is malformed. */
int pg_auth_password_check(const char *hash, const char *password);

/*
 * The in-memory session table: a session id (32 random bytes, hex) is the
 * cookie; each session carries its own CSRF token, which every mutating
 * request must echo in X-CSRF-Token.  Sessions end after max_age seconds;
 * a server restart ends them all.
 */
typedef struct pg_sessions pg_sessions;

#define PG_SESSIONS_MAX 256

int pg_sessions_new(pg_sessions **out, unsigned max_age);
void pg_sessions_free(pg_sessions *s);

/* Start a session for user: its id and CSRF token are appended to id and csrf. */
int pg_sessions_create(pg_sessions *s, pg_buf *id, pg_buf *csrf, const char *user, time_t now);

/*
 * Look a session up by id: 0 and user (and csrf, if not NULL) appended;
 * PG_ENOTFOUND for an unknown or expired id.
 */
int pg_sessions_find(pg_sessions *s, pg_buf *user, pg_buf *csrf, const char *id, time_t now);

/* End a session; unknown ids are ignored. */
void pg_sessions_end(pg_sessions *s, const char *id);

#endif
