/* conns.c - the open connections: absolute request deadlines cut by a reaper thread, and per-address shares. */
#include "server/conns.h"
#include "common/error.h"
#include "server/clock.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define REAP_EVERY_MS 100

enum phase {
	HEADERS,   /* waiting for a request's line and headers */
	BODY,      /* the headers are in, the body is coming */
	ANSWERING, /* the request is in: no deadline */
};

struct pg_conn {
	pg_conn *prev, *next;
	int fd;
	enum phase phase;
	uint64_t deadline;        /* ms on the monotonic clock; 0: none */
	bool answered_one;        /* a request on it was answered already */
	bool loopback;
	bool stream;              /* counted among the streams */
	unsigned char addr[16];   /* the address's bytes, to count its share */
	size_t addr_len;
};

struct pg_conns {
	pg_conns_limits limits;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t reaper;
	bool reaper_running, stopping;
	pg_conn *head;
	pg_conns_stats stats;
};

/* An answer written straight to the socket: the HTTP thread has not written, and will not. */
static void say(int fd, unsigned status, const char *reason, const char *msg)
{
	char out[512];
	char body[256];
	int n, m;

	m = snprintf(body, sizeof(body), "{\"error\": \"%s\", \"status\": %u}\n", msg, status);
	n = snprintf(out, sizeof(out), "HTTP/1.1 %u %s\r\nConnection: close\r\n"
		     "Content-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s", status,
		     reason, m, status == 503 ? "Retry-After: 10\r\n" : "", body);
	if (n > 0 && (size_t)n < sizeof(out) && send(fd, out, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		errno = 0; /* the client went away: nothing to tell it */
}

static void *reap(void *p)
{
	pg_conns *c = p;
	char msg[128];

	pthread_mutex_lock(&c->lock);
	while (!c->stopping) {
		struct timespec until;
		uint64_t now = pg_now_ms();
		pg_conn *k;

		for (k = c->head; k; k = k->next) {
			if (!k->deadline || now < k->deadline)
				continue;
			/* a request that was never whole is told why; an idle keep-alive is just closed */
			if (k->phase == BODY || (k->phase == HEADERS && !k->answered_one)) {
				snprintf(msg, sizeof(msg), "the request was not received within %u s",
					 (k->phase == BODY ? c->limits.body_ms : c->limits.header_ms) / 1000);
				if (k->phase == HEADERS)
					say(k->fd, 408, "Request Timeout", msg);
				c->stats.timeouts++;
			}
			shutdown(k->fd, SHUT_RDWR);
			k->deadline = 0;
		}
		pg_monotonic_after(&until, REAP_EVERY_MS);
		pthread_cond_timedwait(&c->cond, &c->lock, &until);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

int pg_conns_new(pg_conns **out, const pg_conns_limits *limits)
{
	pg_conns *c = calloc(1, sizeof(*c));
	pthread_condattr_t attr;

	*out = NULL;
	if (!c)
		return pg_error_oom();
	c->limits = *limits;
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (pthread_create(&c->reaper, NULL, reap, c) != 0) {
		pg_conns_free(c);
		return pg_error_set(PG_EIO, "cannot start the connection reaper");
	}
	c->reaper_running = true;
	*out = c;
	return 0;
}

void pg_conns_free(pg_conns *c)
{
	if (!c)
		return;
	if (c->reaper_running) {
		pthread_mutex_lock(&c->lock);
		c->stopping = true;
		pthread_cond_broadcast(&c->cond);
		pthread_mutex_unlock(&c->lock);
		pthread_join(c->reaper, NULL);
	}
	while (c->head)
		pg_conns_close(c, c->head);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

bool pg_conns_is_loopback(const struct sockaddr *addr, socklen_t len)
{
	if (addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)(const void *)addr;

		return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	if (addr->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)(const void *)addr;

		return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr) ||
		       (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) && a->sin6_addr.s6_addr[12] == 127);
	}
	return false;
}

/* The address's bytes, without the port. */
static void addr_key(pg_conn *k, const struct sockaddr *addr, socklen_t len)
{
	if (addr->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
		memcpy(k->addr, &((const struct sockaddr_in *)(const void *)addr)->sin_addr, 4);
		k->addr_len = 4;
	} else if (addr->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
		memcpy(k->addr, &((const struct sockaddr_in6 *)(const void *)addr)->sin6_addr, 16);
		k->addr_len = 16;
	}
}

pg_conn *pg_conns_open(pg_conns *c, int fd, const struct sockaddr *addr, socklen_t len)
{
	pg_conn *k = calloc(1, sizeof(*k)), *o;
	unsigned same = 0;

	if (!k)
		return NULL;
	k->fd = fd;
	k->phase = HEADERS;
	k->loopback = pg_conns_is_loopback(addr, len);
	addr_key(k, addr, len);
	pthread_mutex_lock(&c->lock);
	k->deadline = c->limits.header_ms ? pg_now_ms() + c->limits.header_ms : 0;
	for (o = c->head; o && !k->loopback && c->limits.per_address; o = o->next)
		same += o->addr_len == k->addr_len && !memcmp(o->addr, k->addr, k->addr_len);
	k->next = c->head;
	if (c->head)
		c->head->prev = k;
	c->head = k;
	c->stats.open++;
	if (!k->loopback && c->limits.per_address && same >= c->limits.per_address) {
		/* over its address's share: refused at once, counted until it closes */
		say(fd, 503, "Service Unavailable", "too many connections from this address");
		shutdown(fd, SHUT_RDWR);
		k->deadline = 0;
		c->stats.refused++;
	}
	pthread_mutex_unlock(&c->lock);
	return k;
}

static void unstream(pg_conns *c, pg_conn *k)
{
	if (k->stream)
		c->stats.streams--;
	k->stream = false;
}

static void set_phase(pg_conns *c, pg_conn *k, enum phase phase, unsigned ms)
{
	if (!k)
		return;
	pthread_mutex_lock(&c->lock);
	if (phase == HEADERS)
		unstream(c, k);
	k->phase = phase;
	k->deadline = ms ? pg_now_ms() + ms : 0;
	if (phase == HEADERS)
		k->answered_one = true;
	pthread_mutex_unlock(&c->lock);
}

void pg_conns_body(pg_conns *c, pg_conn *k)
{
	set_phase(c, k, BODY, c->limits.body_ms);
}

void pg_conns_answering(pg_conns *c, pg_conn *k)
{
	set_phase(c, k, ANSWERING, 0);
}

void pg_conns_answered(pg_conns *c, pg_conn *k)
{
	set_phase(c, k, HEADERS, c->limits.header_ms);
}

bool pg_conns_stream(pg_conns *c, pg_conn *k)
{
	unsigned same = 0;
	bool ok;
	pg_conn *o;

	if (!k)
		return true; /* untracked: shut down already */
	pthread_mutex_lock(&c->lock);
	for (o = c->head; o && !k->loopback && c->limits.streams_per_address; o = o->next)
		same += o->stream && o->addr_len == k->addr_len &&
			!memcmp(o->addr, k->addr, k->addr_len);
	ok = k->stream || ((!c->limits.streams || c->stats.streams < c->limits.streams) &&
			   (k->loopback || !c->limits.streams_per_address ||
			    same < c->limits.streams_per_address));
	if (ok && !k->stream) {
		k->stream = true;
		c->stats.streams++;
	}
	if (!ok)
		c->stats.streams_refused++;
	pthread_mutex_unlock(&c->lock);
	return ok;
}

void pg_conns_close(pg_conns *c, pg_conn *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&c->lock);
	unstream(c, k);
	if (k->prev)
		k->prev->next = k->next;
	else
		c->head = k->next;
	if (k->next)
		k->next->prev = k->prev;
	c->stats.open--;
	pthread_mutex_unlock(&c->lock);
	free(k);
}

void pg_conns_get_stats(pg_conns *c, pg_conns_stats *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->stats;
	pthread_mutex_unlock(&c->lock);
}
