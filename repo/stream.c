/* stream.c - libgit2's network socket, replaced: connects, reads and writes that honour a deadline and a cancel flag. */
#include "repo/internal.h"
#include "common/error.h"

#include <fcntl.h>
#include <git2/sys/stream.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* How often a wait looks at the cancel flag. */
#define SLICE_MS 100

/*
 * libgit2 1.5 has no network timeout (GIT_OPT_SET_SERVER_TIMEOUT came in
 * 1.7), and its transports read with a plain blocking recv(): a server
 * that accepts and never answers holds a fetch for ever.  Its socket
 * stream can be replaced (git_stream_register), and its TLS streams are
 * made on top of the registered one, so git://, http:// and https:// all
 * come through here, where every wait is a poll() in slices that looks at
 * the thread's fetch limits between them.
 *
 * The layout up to s is that of libgit2 1.5's own socket stream, which its
 * ssh transport reads the socket from; libssh2 then reads the socket
 * itself, so over ssh only the connect is bounded.
 */
typedef struct pg_stream {
	git_stream parent;
	char *host;
	char *port;
	int s;
} pg_stream;

/* The limits of the fetch this thread runs (zero: none). */
static _Thread_local struct {
	uint64_t deadline;                     /* ms on the monotonic clock; 0: none */
	const volatile sig_atomic_t *cancel;
	bool timed_out, cancelled;
} guard;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int pg_git_fetch_check(void)
{
	if (guard.cancel && *guard.cancel) {
		guard.cancelled = true;
		git_error_set_str(GIT_ERROR_NET, "cancelled");
		return -1;
	}
	if (guard.deadline && now_ms() >= guard.deadline) {
		guard.timed_out = true;
		git_error_set_str(GIT_ERROR_NET, "timed out");
		return -1;
	}
	return 0;
}

void pg_git_fetch_begin(unsigned timeout_s, const volatile sig_atomic_t *cancel)
{
	guard.deadline = timeout_s ? now_ms() + (uint64_t)timeout_s * 1000 : 0;
	guard.cancel = cancel;
	guard.timed_out = guard.cancelled = false;
}

int pg_git_fetch_end(bool *timed_out, bool *cancelled)
{
	*timed_out = guard.timed_out;
	*cancelled = guard.cancelled;
	memset(&guard, 0, sizeof(guard));
	return 0;
}

/* Wait until fd is ready for events, in slices; -1 (libgit2's error set) on the limits. */
static int wait_fd(int fd, short events)
{
	for (;;) {
		struct pollfd p = { fd, events, 0 };
		int n;

		if (pg_git_fetch_check() < 0)
			return -1;
		n = poll(&p, 1, SLICE_MS);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR) {
			git_error_set(GIT_ERROR_OS, "poll: %s", strerror(errno));
			return -1;
		}
	}
}

/* Connect to one address without blocking past the limits. */
static int connect_one(const struct addrinfo *ai)
{
	int s = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
		       ai->ai_protocol);
	int e = 0;
	socklen_t len = sizeof(e);

	if (s < 0)
		return -1;
	if (connect(s, ai->ai_addr, ai->ai_addrlen) < 0 &&
	    (errno != EINPROGRESS || wait_fd(s, POLLOUT) < 0 ||
	     getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &len) < 0 || e != 0)) {
		close(s);
		return -1;
	}
	/* blocking again, for whoever reads it directly (libssh2); our reads poll first */
	fcntl(s, F_SETFL, fcntl(s, F_GETFL) & ~O_NONBLOCK);
	return s;
}

static int stream_connect(git_stream *stream)
{
	pg_stream *st = (pg_stream *)stream;
	struct addrinfo hints, *info = NULL, *ai;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_family = AF_UNSPEC;
	if ((rc = getaddrinfo(st->host, st->port, &hints, &info)) != 0) {
		git_error_set(GIT_ERROR_NET, "failed to resolve address for %s: %s", st->host,
			      gai_strerror(rc));
		return -1;
	}
	for (ai = info; ai && st->s < 0; ai = ai->ai_next)
		if ((st->s = connect_one(ai)) < 0 && (guard.timed_out || guard.cancelled))
			break;
	freeaddrinfo(info);
	if (st->s < 0) {
		if (!guard.timed_out && !guard.cancelled)
			git_error_set(GIT_ERROR_NET, "failed to connect to %s", st->host);
		return -1;
	}
	return 0;
}

static ssize_t stream_read(git_stream *stream, void *data, size_t len)
{
	pg_stream *st = (pg_stream *)stream;

	for (;;) {
		ssize_t n;

		if (wait_fd(st->s, POLLIN) < 0)
			return -1;
		if ((n = recv(st->s, data, len, MSG_DONTWAIT)) >= 0)
			return n;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			git_error_set(GIT_ERROR_NET, "error receiving socket data: %s", strerror(errno));
			return -1;
		}
	}
}

static ssize_t stream_write(git_stream *stream, const char *data, size_t len, int flags)
{
	pg_stream *st = (pg_stream *)stream;

	for (;;) {
		ssize_t n;

		if (wait_fd(st->s, POLLOUT) < 0)
			return -1;
		if ((n = send(st->s, data, len, flags | MSG_DONTWAIT | MSG_NOSIGNAL)) >= 0)
			return n;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
			git_error_set(GIT_ERROR_NET, "error sending data: %s", strerror(errno));
			return -1;
		}
	}
}

static int stream_close(git_stream *stream)
{
	pg_stream *st = (pg_stream *)stream;
	int rc = st->s >= 0 ? close(st->s) : 0;

	st->s = -1;
	return rc;
}

static void stream_free(git_stream *stream)
{
	pg_stream *st = (pg_stream *)stream;

	if (st->s >= 0)
		close(st->s);
	free(st->host);
	free(st->port);
	free(st);
}

static int stream_new(git_stream **out, const char *host, const char *port)
{
	pg_stream *st = calloc(1, sizeof(*st));

	*out = NULL;
	if (!st || !(st->host = pg_strdup(host)) || !(st->port = pg_strdup(port ? port : ""))) {
		if (st)
			free(st->host);
		free(st);
		git_error_set_oom();
		return -1;
	}
	st->s = -1;
	st->parent.version = GIT_STREAM_VERSION;
	st->parent.connect = stream_connect;
	st->parent.read = stream_read;
	st->parent.write = stream_write;
	st->parent.close = stream_close;
	st->parent.free = stream_free;
	*out = &st->parent;
	return 0;
}

static int registered;

static void register_stream(void)
{
	git_stream_registration reg = { GIT_STREAM_VERSION, stream_new, NULL };

	registered = git_stream_register(GIT_STREAM_STANDARD, &reg);
}

int pg_git_stream_register(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, register_stream);
	return registered < 0 ? pg_git_fail(registered, "registering the network stream") : 0;
}
