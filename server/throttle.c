/* throttle.c - the table of failed log-ins by account and by address, and its doubling backoff. */
#include "server/throttle.h"
#include "common/error.h"

#include <pthread.h>

#define KEY_MAX 160
#define FORGET_MS ((uint64_t)3600 * 1000)
#define BUCKETS (PG_THROTTLE_KEYS * 2)
#define NONE (-1)
/* how long a new key waits when every key held is one that must not be forgotten */
#define FULL_WAIT_MS 1000

typedef struct entry {
	char key[KEY_MAX];       /* "user:NAME" or "addr:ADDRESS"; "" when free */
	bool account;
	unsigned failures;       /* in a row */
	unsigned inflight;       /* attempts begun and not ended */
	uint64_t locked_until;   /* ms; 0: not locked */
	uint64_t last;           /* the last attempt's time, for forgetting and eviction */
	int next;                /* the hash chain, or the free list */
	int older, newer;        /* the keys in use, by last touch */
} entry;

/*
 * A hash of the keys finds an entry in O(1), and a list by last touch finds
 * the idlest one that may go: a flood of new keys costs each one a look-up,
 * not a walk of the table.
 */
struct pg_throttle {
	pg_throttle_rules rules;
	pthread_mutex_t lock;
	int bucket[BUCKETS];
	int oldest, newest;
	int free;
	entry e[PG_THROTTLE_KEYS];
};

int pg_throttle_new(pg_throttle **out, const pg_throttle_rules *rules)
{
	pg_throttle *t = calloc(1, sizeof(*t));
	int i;

	*out = NULL;
	if (!t)
		return pg_error_oom();
	t->rules = *rules;
	for (i = 0; i < BUCKETS; i++)
		t->bucket[i] = NONE;
	for (i = 0; i < PG_THROTTLE_KEYS; i++)
		t->e[i].next = i + 1 < PG_THROTTLE_KEYS ? i + 1 : NONE;
	t->free = 0;
	t->oldest = t->newest = NONE;
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

static unsigned hash(const char *key)
{
	uint32_t h = 2166136261u;

	for (; *key; key++)
		h = (h ^ (unsigned char)*key) * 16777619u;
	return h % BUCKETS;
}

static void unlist(pg_throttle *t, int i)
{
	entry *e = &t->e[i];

	if (e->older != NONE)
		t->e[e->older].newer = e->newer;
	else
		t->oldest = e->newer;
	if (e->newer != NONE)
		t->e[e->newer].older = e->older;
	else
		t->newest = e->older;
}

static void touch(pg_throttle *t, int i, uint64_t now)
{
	entry *e = &t->e[i];

	unlist(t, i);
	e->older = t->newest;
	e->newer = NONE;
	if (t->newest != NONE)
		t->e[t->newest].newer = i;
	else
		t->oldest = i;
	t->newest = i;
	e->last = now;
}

/* Forget entry i: off its chain and the list, onto the free list. */
static void drop(pg_throttle *t, int i)
{
	int *p = &t->bucket[hash(t->e[i].key)];

	while (*p != i)
		p = &t->e[*p].next;
	*p = t->e[i].next;
	unlist(t, i);
	memset(&t->e[i], 0, sizeof(t->e[i]));
	t->e[i].next = t->free;
	t->free = i;
}

static bool idle(const entry *e, uint64_t now)
{
	return !e->inflight && now - e->last > FORGET_MS;
}

/*
 * Whether forgetting e loses nothing an attacker wants lost: never a lock,
 * an attempt in flight, or an account's failures (there are only as many
 * accounts as the configuration names); an address's failures short of a
 * lock may go, to make room, once no lock is left to forget.
 */
static bool may_go(const entry *e, uint64_t now)
{
	if (idle(e, now))
		return true;
	if (e->inflight || e->locked_until > now)
		return false;
	return !e->account || !e->failures;
}

static int lookup(pg_throttle *t, const char *key, uint64_t now)
{
	int i;

	for (i = t->bucket[hash(key)]; i != NONE; i = t->e[i].next) {
		if (strcmp(t->e[i].key, key))
			continue;
		if (idle(&t->e[i], now)) {
			drop(t, i);
			return NONE;
		}
		return i;
	}
	return NONE;
}

/* A new entry for key, or NONE when every entry held must be kept. */
static int make(pg_throttle *t, const char *key, bool account, uint64_t now)
{
	unsigned h;
	int i;

	if (t->free == NONE) {
		for (i = t->oldest; i != NONE && !may_go(&t->e[i], now); i = t->e[i].newer)
			;
		if (i == NONE)
			return NONE;
		drop(t, i);
	}
	i = t->free;
	t->free = t->e[i].next;
	snprintf(t->e[i].key, sizeof(t->e[i].key), "%s", key);
	t->e[i].account = account;
	h = hash(t->e[i].key);
	t->e[i].next = t->bucket[h];
	t->bucket[h] = i;
	t->e[i].older = t->newest;
	t->e[i].newer = NONE;
	if (t->newest != NONE)
		t->e[t->newest].newer = i;
	else
		t->oldest = i;
	t->newest = i;
	t->e[i].last = now;
	return i;
}

static void key_of(char *out, size_t size, const char *kind, const char *name)
{
	snprintf(out, size, "%s:%s", kind, name ? name : "");
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

/* How long until some lock ends and its entry may go, for a key that found no room. */
static uint64_t full_wait(const pg_throttle *t, uint64_t now)
{
	uint64_t w = 0;
	int i;

	for (i = t->oldest; i != NONE; i = t->e[i].newer) {
		const entry *e = &t->e[i];

		if (!e->inflight && e->locked_until > now && (!e->account || !e->failures) &&
		    (!w || e->locked_until - now < w))
			w = e->locked_until - now;
	}
	return w > FULL_WAIT_MS ? w : FULL_WAIT_MS;
}

uint64_t pg_throttle_begin(pg_throttle *t, const char *account, const char *address,
			   uint64_t now_ms)
{
	char ku[KEY_MAX], ka[KEY_MAX];
	int u = NONE, a;
	uint64_t wu = 0, wa, w;

	key_of(ku, sizeof(ku), "user", account);
	key_of(ka, sizeof(ka), "addr", address);
	pthread_mutex_lock(&t->lock);
	/* a refused attempt makes no entry: only one that goes ahead is counted */
	if (account) {
		u = lookup(t, ku, now_ms);
		wu = wait_of(u == NONE ? NULL : &t->e[u], t->rules.account_free, now_ms);
	}
	a = lookup(t, ka, now_ms);
	wa = wait_of(a == NONE ? NULL : &t->e[a], t->rules.address_free, now_ms);
	w = wu > wa ? wu : wa;
	if (w)
		goto done;
	/* in flight before any entry is made, so that making one cannot evict the other */
	if (u != NONE)
		t->e[u].inflight++;
	if (a != NONE)
		t->e[a].inflight++;
	if (account && u == NONE && (u = make(t, ku, true, now_ms)) != NONE)
		t->e[u].inflight++;
	if (a == NONE && (a = make(t, ka, false, now_ms)) != NONE)
		t->e[a].inflight++;
	if ((account && u == NONE) || a == NONE) {
		/* no room without forgetting a lock: refused, as a locked key would be */
		if (u != NONE)
			t->e[u].inflight--;
		if (a != NONE)
			t->e[a].inflight--;
		w = full_wait(t, now_ms);
		goto done;
	}
	if (account)
		touch(t, u, now_ms);
	touch(t, a, now_ms);
done:
	pthread_mutex_unlock(&t->lock);
	return w;
}

static void ended(pg_throttle *t, int i, unsigned free_failures, bool ok, uint64_t now)
{
	const pg_throttle_rules *rules = &t->rules;
	entry *e;
	unsigned shift;
	uint64_t delay;

	if (i == NONE)
		return;
	e = &t->e[i];
	if (e->inflight)
		e->inflight--;
	touch(t, i, now);
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
	char ku[KEY_MAX], ka[KEY_MAX];

	key_of(ku, sizeof(ku), "user", account);
	key_of(ka, sizeof(ka), "addr", address);
	pthread_mutex_lock(&t->lock);
	if (account)
		ended(t, lookup(t, ku, now_ms), t->rules.account_free, ok, now_ms);
	ended(t, lookup(t, ka, now_ms), t->rules.address_free, ok, now_ms);
	pthread_mutex_unlock(&t->lock);
}
