/* throttle.c - the table of failed log-ins by account and by address, and its doubling backoff. */
#include "server/throttle.h"
#include "common/error.h"

#include <pthread.h>

#define KEY_MAX 160
#define FORGET_MS ((uint64_t)3600 * 1000)

typedef struct entry {
	char key[KEY_MAX];       /* "user:NAME" or "addr:ADDRESS"; "" when free */
	unsigned failures;       /* in a row */
	unsigned inflight;       /* attempts begun and not ended */
	uint64_t locked_until;   /* ms; 0: not locked */
	uint64_t last;           /* the last attempt's time, for forgetting and eviction */
} entry;

struct pg_throttle {
	pg_throttle_rules rules;
	pthread_mutex_t lock;
	entry e[PG_THROTTLE_KEYS];
};

int pg_throttle_new(pg_throttle **out, const pg_throttle_rules *rules)
{
	pg_throttle *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return pg_error_oom();
	t->rules = *rules;
	pthread_mutex_init(&t->lock, NULL);
	*out = t;
	return 0;
}

void pg_throttle_free(pg_throttle *t)
{
	if (!t)
		return;
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/*
 * The entry of key, made when create is true (evicting the longest idle
 * one when full, never keep).
 */
static entry *find(pg_throttle *t, const char *kind, const char *name, bool create, uint64_t now,
		   const entry *keep)
{
	char key[KEY_MAX];
	entry *victim = NULL;
	size_t i;

	snprintf(key, sizeof(key), "%s:%s", kind, name ? name : "");
	for (i = 0; i < PG_THROTTLE_KEYS; i++) {
		entry *e = &t->e[i];

		if (e->key[0] && !strcmp(e->key, key)) {
			if (!e->inflight && now - e->last > FORGET_MS)
				memset(e, 0, sizeof(*e));
			else
				return e;
		}
		if (e == keep)
			continue;
		if (!e->key[0] ? !victim || victim->key[0] :
		    !e->inflight && (!victim || (victim->key[0] && e->last < victim->last)))
			victim = e;
	}
	if (!create || !victim)
		return NULL;
	memset(victim, 0, sizeof(*victim));
	snprintf(victim->key, sizeof(victim->key), "%s", key);
	victim->last = now;
	return victim;
}

/* How long e still waits, in ms (0: it may try), counting the attempts in flight. */
static uint64_t wait_of(const entry *e, unsigned free_failures, uint64_t now)
{
	if (!e)
		return 0;
	if (e->locked_until > now)
		return e->locked_until - now;
	/* as many in flight as would lock it: let them end first */
	if (e->failures < free_failures && e->failures + e->inflight >= free_failures)
		return 1000;
	if (e->failures >= free_failures && e->inflight)
		return 1000;
	return 0;
}

uint64_t pg_throttle_begin(pg_throttle *t, const char *account, const char *address,
			   uint64_t now_ms)
{
	entry *u, *a;
	uint64_t wu, wa;

	pthread_mutex_lock(&t->lock);
	u = find(t, "user", account, true, now_ms, NULL);
	a = find(t, "addr", address, true, now_ms, u);
	wu = wait_of(u, t->rules.account_free, now_ms);
	wa = wait_of(a, t->rules.address_free, now_ms);
	if (!wu && !wa) {
		if (u) {
			u->inflight++;
			u->last = now_ms;
		}
		if (a) {
			a->inflight++;
			a->last = now_ms;
		}
	}
	pthread_mutex_unlock(&t->lock);
	return wu > wa ? wu : wa;
}

static void ended(const pg_throttle_rules *rules, entry *e, unsigned free_failures, bool ok,
		  uint64_t now)
{
	unsigned shift;
	uint64_t delay;

	if (!e)
		return;
	if (e->inflight)
		e->inflight--;
	e->last = now;
	if (ok) {
		e->failures = 0;
		e->locked_until = 0;
		return;
	}
	if (++e->failures < free_failures)
		return;
	shift = e->failures - free_failures;
	delay = shift >= 32 ? rules->max_ms : (uint64_t)rules->base_ms << shift;
	if (delay > rules->max_ms)
		delay = rules->max_ms;
	e->locked_until = now + delay;
}

void pg_throttle_end(pg_throttle *t, const char *account, const char *address, bool ok,
		     uint64_t now_ms)
{
	pthread_mutex_lock(&t->lock);
	ended(&t->rules, find(t, "user", account, false, now_ms, NULL), t->rules.account_free, ok,
	      now_ms);
	ended(&t->rules, find(t, "addr", address, false, now_ms, NULL), t->rules.address_free, ok,
	      now_ms);
	pthread_mutex_unlock(&t->lock);
}
