/* throttle.h - failed log-ins slow down their account and their address, with a backoff that doubles. */
#ifndef PG_SERVER_THROTTLE_H
#define PG_SERVER_THROTTLE_H

#include "common/compat.h"

/*
 * Each account name and each client address has a count of failed
 * log-ins.  Past `free` failures in a row, the key is locked for `base_ms`,
 * then twice that after the next failure, and so on up to `max_ms`; a
 * success clears it, and so does an hour without a failure.  While a key
 * is locked, or while as many attempts are in flight as would lock it, an
 * attempt is refused before the password is looked at: a refusal costs a
 * table look-up, not a PBKDF2, and makes no entry.
 *
 * Only configured accounts have an entry of their own: a name no account
 * has is throttled by its address alone, so that junk names cannot fill
 * the table, and each address holds one entry whatever names it sends.
 * The table holds PG_THROTTLE_KEYS keys; when it is full the one idle
 * longest is forgotten, but never a locked key, one in flight or an
 * account's failures: when only such keys are left, a new key is refused
 * as a locked one would be, until a lock ends.
 */
#define PG_THROTTLE_KEYS 4096

typedef struct pg_throttle_rules {
	unsigned account_free;   /* failures of one account before it is slowed */
	unsigned address_free;   /* failures from one address, over all accounts */
	unsigned base_ms;
	unsigned max_ms;
} pg_throttle_rules;

#define PG_THROTTLE_RULES_INIT { 5, 20, 1000, 15 * 60 * 1000 }

typedef struct pg_throttle pg_throttle;

int pg_throttle_new(pg_throttle **out, const pg_throttle_rules *rules);
void pg_throttle_free(pg_throttle *t);

/*
 * Before checking a password: 0 when the attempt may go ahead (it is then
 * in flight until pg_throttle_end), else how many milliseconds to wait.
 * account is the configured account's name, or NULL when no account has
 * the name given.  now_ms is any monotonic clock in milliseconds.
 */
uint64_t pg_throttle_begin(pg_throttle *t, const char *account, const char *address,
			   uint64_t now_ms);

/* After it (with the same account and address): whether the password was right. */
void pg_throttle_end(pg_throttle *t, const char *account, const char *address, bool ok,
		     uint64_t now_ms);

#endif
