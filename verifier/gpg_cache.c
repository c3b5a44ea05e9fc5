/* gpg_cache.c - verifiers kept for the next pg_gpg_new, and signatures verified ahead in a background thread. */
#include "verifier/gpg_internal.h"
#include "common/buf.h"
#include "common/error.h"
#include "verifier/pgpkeys.h"

#include <pthread.h>

/* A cache keeps this many verifiers; more are freed as before. */
#define IDLE_MAX 4

/* One signature a prefetch verifies, and then what it found. */
typedef struct memo {
	const pg_gpg_prefetch *owner;
	char *payload, *sig;
	size_t payload_len, sig_len;
	bool started, done, failed;
	pg_gpg_result result;
	struct memo *next;
} memo;

struct pg_gpg_cache {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	pg_gpg *idle[IDLE_MAX];
	size_t nidle;
	memo *memos;
	unsigned busy;        /* prefetch threads holding a verifier */
};

struct pg_gpg_prefetch {
	pg_gpg_cache *cache;
	pg_gpg_cache *own;    /* a cache made for the prefetch alone, or NULL */
	pg_gpg_cache *before; /* the caller's cache before that one was installed */
	pg_gpg_source src;
	char *tmpdir;
	pthread_t thread;
	bool closing;
};

static _Thread_local pg_gpg_cache *current_cache;

/* Leave g in its cache for the next pg_gpg_new; false when the cache is full. */
static bool keep(pg_gpg *g)
{
	pg_gpg_cache *c = g->cache;
	bool kept = false;

	if (!c || !g->ctx)
		return false;
	pthread_mutex_lock(&c->lock);
	if (c->nidle < IDLE_MAX) {
		c->idle[c->nidle++] = g;
		kept = true;
		pthread_cond_broadcast(&c->changed);
	}
	pthread_mutex_unlock(&c->lock);
	return kept;
}

void pg_gpg_free(pg_gpg *g)
{
	if (g && !keep(g))
		pg_gpg_destroy(g);
}

/* Whether kept verifier k's pgpkeys directory still names the set it imported. */
static bool pgpkeys_current(const pg_gpg *k)
{
	pg_buf now = PG_BUF_INIT;
	bool same;

	same = pg_pgpkeys_identity(&now, k->src.pgpkeys) == 0 && now.len == k->ring_id.len &&
	       !memcmp(now.ptr, k->ring_id.ptr, now.len);
	pg_buf_release(&now);
	pg_error_clear();
	return same;
}

/* Whether kept verifier k still holds what its keyring file or directory holds. */
static bool current(pg_gpg *k)
{
	struct stat st;
	pg_buf now;
	bool same;

	if (k->src.pgpkeys)
		return pgpkeys_current(k);
	if (!k->src.keyring)
		return true;
	if (stat(k->src.keyring, &st) == 0 && st.st_dev == k->ring_st.st_dev &&
	    st.st_ino == k->ring_st.st_ino && st.st_size == k->ring_st.st_size &&
	    st.st_mtim.tv_sec == k->ring_st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == k->ring_st.st_mtim.tv_nsec &&
	    st.st_ctim.tv_sec == k->ring_st.st_ctim.tv_sec &&
	    st.st_ctim.tv_nsec == k->ring_st.st_ctim.tv_nsec)
		return true;
	/* touched, perhaps changed: the bytes decide */
	pg_buf_init(&now, PG_GPG_KEYRING_MAX);
	same = pg_gpg_read_keyring(&now, &st, k->src.keyring) == 0 && now.len == k->ring.len &&
	       !memcmp(now.ptr, k->ring.ptr, now.len);
	pg_buf_release(&now);
	pg_error_clear();
	if (same)
		k->ring_st = st;
	return same;
}

/* Move a kept verifier's context into g; with the cache locked.  false: none. */
static bool adopt(pg_gpg_cache *c, pg_gpg *g)
{
	size_t i = 0;

	while (i < c->nidle) {
		pg_gpg *k = c->idle[i];

		if (!pg_gpg_source_same(&k->src, &g->src)) {
			i++;
			continue;
		}
		c->idle[i] = c->idle[--c->nidle];
		if (!current(k)) {
			pg_gpg_destroy(k);
			continue;
		}
		g->ctx = k->ctx;
		g->tmp_home = k->tmp_home;
		pg_buf_release(&g->ring);
		g->ring = k->ring;
		g->ring_st = k->ring_st;
		pg_buf_release(&g->ring_id);
		g->ring_id = k->ring_id;
		k->ctx = NULL;
		k->tmp_home = NULL;
		pg_buf_init(&k->ring, 0);
		pg_buf_init(&k->ring_id, 0);
		pg_gpg_destroy(k);
		return true;
	}
	return false;
}

/*
 * Whether a prefetch still has signatures of g's keys to verify, or holds
 * a verifier it will leave in the cache; with the cache locked.
 */
static bool prefetching(const pg_gpg_cache *c, const pg_gpg *g)
{
	const memo *m;

	if (c->busy)
		return true;
	for (m = c->memos; m; m = m->next)
		if (!m->done && pg_gpg_source_same(&m->owner->src, &g->src))
			return true;
	return false;
}

/* Give g a context: a kept one (once a prefetch is done with it), else a new one. */
static int ensure_ctx(pg_gpg *g)
{
	pg_gpg_cache *c = g->cache;
	bool adopted = false;

	if (g->ctx)
		return 0;
	if (c) {
		pthread_mutex_lock(&c->lock);
		while (prefetching(c, g))
			pthread_cond_wait(&c->changed, &c->lock);
		adopted = adopt(c, g);
		pthread_mutex_unlock(&c->lock);
	}
	return adopted ? 0 : pg_gpg_open_ctx(g);
}

int pg_gpg_open(pg_gpg **out, const pg_gpg_keys *keys, const char *tmpdir)
{
	pg_gpg_cache *c = current_cache;
	pg_gpg *g = NULL;
	bool lazy = false;
	int err;

	*out = NULL;
	if ((err = pg_gpg_shell(&g, keys, tmpdir)) < 0)
		return err;
	g->cache = c;
	if (c) {
		/* while a prefetch verifies, results may need no context at all */
		pthread_mutex_lock(&c->lock);
		lazy = prefetching(c, g) || adopt(c, g);
		pthread_mutex_unlock(&c->lock);
	}
	if (!lazy && (err = pg_gpg_open_ctx(g)) < 0) {
		g->cache = NULL;
		pg_gpg_destroy(g);
		return err;
	}
	*out = g;
	return 0;
}

int pg_gpg_new(pg_gpg **out, const char *keyring, const char *gnupg_home, const char *tmpdir)
{
	pg_gpg_keys keys = { .keyring = keyring, .gnupg_home = gnupg_home };

	return pg_gpg_open(out, &keys, tmpdir);
}

/* --- results verified in the background ------------------------------------------ */

static void memo_free(memo *m)
{
	if (!m)
		return;
	free(m->payload);
	free(m->sig);
	pg_gpg_result_release(&m->result);
	free(m);
}

/* Unlink m from c's list; with c locked. */
static void memo_unlink(pg_gpg_cache *c, memo *m)
{
	memo **pp;

	for (pp = &c->memos; *pp; pp = &(*pp)->next) {
		if (*pp == m) {
			*pp = m->next;
			return;
		}
	}
}

/*
 * The result a prefetch found for these bytes with g's keys, moved into
 * *out; false when there is none (or the background failed: the caller
 * verifies, and reports any error itself).
 */
static bool take_memo(pg_gpg_result *out, pg_gpg_cache *c, const pg_gpg *g, const char *payload,
		      size_t payload_len, const char *sig, size_t sig_len)
{
	memo *m;
	bool found = false;

	pthread_mutex_lock(&c->lock);
	for (m = c->memos; m; m = m->next)
		if (pg_gpg_source_same(&m->owner->src, &g->src) &&
		    m->payload_len == payload_len && m->sig_len == sig_len &&
		    !memcmp(m->payload, payload, payload_len) && !memcmp(m->sig, sig, sig_len))
			break;
	if (m) {
		while (!m->done)
			pthread_cond_wait(&c->changed, &c->lock);
		memo_unlink(c, m);
		if (!m->failed) {
			*out = m->result;
			memset(&m->result, 0, sizeof(m->result));
			found = true;
		}
	}
	pthread_mutex_unlock(&c->lock);
	memo_free(m);
	return found;
}

int pg_gpg_verify(pg_gpg_result *out, pg_gpg *g, const char *payload, size_t payload_len,
		  const char *sig, size_t sig_len)
{
	int err;

	memset(out, 0, sizeof(*out));
	if (g->cache && take_memo(out, g->cache, g, payload, payload_len, sig, sig_len))
		return 0;
	if ((err = ensure_ctx(g)) < 0)
		return err;
	return pg_gpg_verify_now(out, g, payload, payload_len, sig, sig_len);
}

int pg_gpg_cache_new(pg_gpg_cache **out)
{
	pg_gpg_cache *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return pg_error_oom();
	if (pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		return pg_error_set(PG_ERROR, "gpg cache: no mutex");
	}
	if (pthread_cond_init(&c->changed, NULL) != 0) {
		pthread_mutex_destroy(&c->lock);
		free(c);
		return pg_error_set(PG_ERROR, "gpg cache: no condition variable");
	}
	*out = c;
	return 0;
}

void pg_gpg_cache_free(pg_gpg_cache *c)
{
	if (!c)
		return;
	if (current_cache == c)
		current_cache = NULL;
	while (c->nidle)
		pg_gpg_destroy(c->idle[--c->nidle]);
	while (c->memos) {
		memo *m = c->memos;

		c->memos = m->next;
		memo_free(m);
	}
	pthread_cond_destroy(&c->changed);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void pg_gpg_cache_use(pg_gpg_cache *c)
{
	current_cache = c;
}

/* The prefetch thread: verify each queued signature, in order, with one verifier. */
static void *prefetch_main(void *arg)
{
	pg_gpg_prefetch *pf = arg;
	pg_gpg_cache *c = pf->cache;
	pg_gpg *g = NULL;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		memo *m;
		pg_gpg_result r;
		int err = 0;

		for (m = c->memos; m && (m->owner != pf || m->started); m = m->next)
			;
		if (!m) {
			/* nothing to do: leave the verifier for the foreground */
			if (g) {
				pthread_mutex_unlock(&c->lock);
				if (!keep(g))
					pg_gpg_destroy(g);
				pthread_mutex_lock(&c->lock);
				g = NULL;
				c->busy--;
				pthread_cond_broadcast(&c->changed);
			}
			if (pf->closing)
				break;
			pthread_cond_wait(&c->changed, &c->lock);
			continue;
		}
		m->started = true;
		if (!g)
			c->busy++;
		pthread_mutex_unlock(&c->lock);
		if (!g) {
			pg_gpg_keys keys = { pf->src.keyring, pf->src.pgpkeys, pf->src.gnupg_home };

			if ((err = pg_gpg_shell(&g, &keys, pf->tmpdir)) == 0) {
				g->cache = c;
				pthread_mutex_lock(&c->lock);
				if (!adopt(c, g)) {
					pthread_mutex_unlock(&c->lock);
					err = pg_gpg_open_ctx(g);
				} else {
					pthread_mutex_unlock(&c->lock);
				}
			}
			if (err < 0 && g) {
				g->cache = NULL;
				pg_gpg_destroy(g);
				g = NULL;
			}
			if (!g) {
				pthread_mutex_lock(&c->lock);
				c->busy--;
				pthread_cond_broadcast(&c->changed);
				pthread_mutex_unlock(&c->lock);
			}
		}
		memset(&r, 0, sizeof(r));
		if (err == 0)
			err = pg_gpg_verify_now(&r, g, m->payload, m->payload_len, m->sig, m->sig_len);
		pthread_mutex_lock(&c->lock);
		m->result = r;
		m->failed = err < 0;
		m->done = true;
		pthread_cond_broadcast(&c->changed);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static void prefetch_free(pg_gpg_prefetch *pf)
{
	if (!pf)
		return;
	if (pf->own) {
		current_cache = pf->before;
		pg_gpg_cache_free(pf->own);
	}
	pg_gpg_source_release(&pf->src);
	free(pf->tmpdir);
	free(pf);
}

int pg_gpg_prefetch_start(pg_gpg_prefetch **out, const pg_gpg_keys *keys, const char *tmpdir)
{
	pg_gpg_prefetch *pf;
	int err;

	*out = NULL;
	if (!(pf = calloc(1, sizeof(*pf))))
		return pg_error_oom();
	if ((err = pg_gpg_source_copy(&pf->src, keys, tmpdir)) < 0 ||
	    (tmpdir && !(pf->tmpdir = pg_strdup(tmpdir)) && (err = PG_ENOMEM))) {
		prefetch_free(pf);
		return err;
	}
	pf->before = current_cache;
	if (!current_cache) {
		if ((err = pg_gpg_cache_new(&pf->own)) < 0) {
			prefetch_free(pf);
			return err;
		}
		current_cache = pf->own;
	}
	pf->cache = current_cache;
	if (pthread_create(&pf->thread, NULL, prefetch_main, pf) != 0) {
		prefetch_free(pf);
		return pg_error_set(PG_ERROR, "gpg: no thread to verify in the background");
	}
	*out = pf;
	return 0;
}

int pg_gpg_prefetch_add(pg_gpg_prefetch *pf, const char *payload, size_t payload_len,
			const char *sig, size_t sig_len)
{
	pg_gpg_cache *c = pf->cache;
	memo *m = calloc(1, sizeof(*m)), **pp;

	if (!m)
		return pg_error_oom();
	m->owner = pf;
	m->payload_len = payload_len;
	m->sig_len = sig_len;
	if (!(m->payload = malloc(payload_len + 1)) || !(m->sig = malloc(sig_len + 1))) {
		memo_free(m);
		return pg_error_oom();
	}
	memcpy(m->payload, payload, payload_len);
	memcpy(m->sig, sig, sig_len);
	pthread_mutex_lock(&c->lock);
	for (pp = &c->memos; *pp; pp = &(*pp)->next)
		;
	*pp = m;
	pthread_cond_broadcast(&c->changed);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

void pg_gpg_prefetch_finish(pg_gpg_prefetch *pf)
{
	pg_gpg_cache *c;
	memo **pp;

	if (!pf)
		return;
	c = pf->cache;
	pthread_mutex_lock(&c->lock);
	pf->closing = true;
	/* what nobody asked for is not verified */
	for (pp = &c->memos; *pp; ) {
		memo *m = *pp;

		if (m->owner == pf && !m->started) {
			*pp = m->next;
			memo_free(m);
		} else {
			pp = &m->next;
		}
	}
	pthread_cond_broadcast(&c->changed);
	pthread_mutex_unlock(&c->lock);
	pthread_join(pf->thread, NULL);
	pthread_mutex_lock(&c->lock);
	for (pp = &c->memos; *pp; ) {
		memo *m = *pp;

		if (m->owner == pf) {
			*pp = m->next;
			memo_free(m);
		} else {
			pp = &m->next;
		}
	}
	pthread_mutex_unlock(&c->lock);
	prefetch_free(pf);
}

