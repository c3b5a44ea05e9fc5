/* http.c - libmicrohttpd glue: routing, capped bodies, security headers, streamed responses. */
#include "server/web.h"
#include "common/dl.h"
#include "common/error.h"
#include "common/json.h"
#include "common/testpoint.h"
#include "server/clock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#define SMALL_BODY 4096

/*
 * libmicrohttpd is opened when a server starts, not linked.  With the TLS
 * stack it brings (GnuTLS and eight more libraries, whose constructors run
 * as they load) it added 4.6 ms to the start of every pullgate command, a
 * verify that never serves included: an empty program linked with this
 * program's libraries starts in 13.3 ms, without libmicrohttpd in 8.7 ms
 * (perf stat -r 50).  The soname is the one the headers were built for.
 */
#define MHD_SONAME "libmicrohttpd.so.12"
#define MHD_FUNCTIONS(X) X(start_daemon) X(stop_daemon) X(get_daemon_info) \
	X(get_connection_info) X(lookup_connection_value) X(create_response_from_buffer) \
	X(create_response_from_callback) X(add_response_header) X(queue_response) \
	X(destroy_response)

static struct {
#define MHD_MEMBER(f) __typeof__(MHD_##f) *f;
	MHD_FUNCTIONS(MHD_MEMBER)
#undef MHD_MEMBER
} mhd;
static pthread_once_t mhd_once = PTHREAD_ONCE_INIT;
static char mhd_missing[512];   /* why it could not be opened; empty once it is */

static void mhd_open(void)
{
#define MHD_SYMBOL(f) { "MHD_" #f, (void **)&mhd.f },
	static const pg_dl_symbol syms[] = { MHD_FUNCTIONS(MHD_SYMBOL) };
#undef MHD_SYMBOL

	pg_dl_open(MHD_SONAME, syms, PG_ARRAY_SIZE(syms), mhd_missing, sizeof(mhd_missing));
}

/* libmicrohttpd's functions in mhd, or why not (the library stays open for good). */
static int mhd_load(void)
{
	pthread_once(&mhd_once, mhd_open);
	if (*mhd_missing)
		return pg_error_set(PG_ENOTFOUND, "cannot serve without libmicrohttpd (Debian's "
				    "libmicrohttpd12): %s", mhd_missing);
	return 0;
}

typedef int (*handler_fn)(pg_req *rq, pg_resp *rs);

/* Routes: '#' is a pull id, a trailing '*' matches the rest of the path. */
static const struct route {
	const char *method;
	const char *pattern;
	handler_fn fn;
	int body;            /* 0: none, 1: small JSON, 2: a hook (config's max-body) */
} routes[] = {
	{ "GET", "/", pg_page_queue, 0 },
	{ "GET", "/pulls/#", pg_page_pull, 0 },
	{ "GET", "/login", pg_page_login, 0 },
	{ "GET", "/static/*", pg_page_asset, 0 },
	{ "GET", "/healthz", pg_page_healthz, 0 },
	{ "GET", "/metrics", pg_page_metrics, 0 },
	{ "POST", "/hooks/push", pg_hook_push, 2 },
	{ "POST", "/hooks/pull-request", pg_hook_pull_request, 2 },
	{ "GET", "/api/pulls", pg_api_list, 0 },
	{ "GET", "/api/pulls/#", pg_api_pull, 0 },
	{ "GET", "/api/pulls/#/log", pg_api_log, 0 },
	{ "GET", "/api/pulls/#/kcidb", pg_api_kcidb, 0 },
	{ "GET", "/api/pulls/#/events", pg_api_events, 0 },
	{ "POST", "/api/pulls/#/approve", pg_api_approve, 1 },
	{ "POST", "/api/pulls/#/reject", pg_api_reject, 1 },
	{ "POST", "/api/pulls/#/cancel", pg_api_cancel, 1 },
	{ "GET", "/api/queue", pg_api_queue, 0 },
	{ "GET", "/api/queue/events", pg_api_queue_events, 0 },
	{ "GET", "/api/pulls/#/through", pg_api_through, 0 },
	{ "POST", "/api/pulls/#/approve-through", pg_api_approve_through, 1 },
	{ "POST", "/api/pulls/#/hold", pg_api_hold, 1 },
	{ "POST", "/api/pulls/#/release", pg_api_release, 1 },
	{ "POST", "/api/pulls/#/up", pg_api_up, 1 },
	{ "POST", "/api/pulls/#/down", pg_api_down, 1 },
	{ "POST", "/api/login", pg_api_login, 1 },
	{ "POST", "/api/logout", pg_api_logout, 1 },
	{ "GET", "/api/session", pg_api_session, 0 },
};

/* Per-request state kept by MHD between calls of the access handler. */
typedef struct conn_state {
	pg_req rq;
	const struct route *route;
	char *path;
	char allow[64];
} conn_state;

static bool match(const char *pattern, const char *path, int64_t *id, const char **rest)
{
	while (*pattern) {
		if (*pattern == '*') {
			*rest = path;
			return *path != '\0';
		}
		if (*pattern == '#') {
			char *end;
			long long v;

			if (*path < '1' || *path > '9' || strspn(path, "0123456789") > 15)
				return false;
			v = strtoll(path, &end, 10);
			*id = v;
			path = end;
			pattern++;
			continue;
		}
		if (*pattern++ != *path++)
			return false;
	}
	return *path == '\0';
}

/* The route for method and path; NULL with allow filled when only the method is wrong. */
static const struct route *find_route(conn_state *cs, const char *method, const char *path)
{
	size_t i;
	int64_t id = 0;
	const char *rest = NULL;

	cs->allow[0] = '\0';
	for (i = 0; i < PG_ARRAY_SIZE(routes); i++) {
		if (!match(routes[i].pattern, path, &id, &rest))
			continue;
		if (!strcmp(routes[i].method, method)) {
			cs->rq.id = id;
			cs->rq.rest = rest;
			return &routes[i];
		}
		if (!strstr(cs->allow, routes[i].method)) {
			size_t n = strlen(cs->allow);

			snprintf(cs->allow + n, sizeof(cs->allow) - n, "%s%s", n ? ", " : "",
				 routes[i].method);
		}
	}
	return NULL;
}

const char *pg_req_header(const pg_req *rq, const char *name)
{
	return mhd.lookup_connection_value(rq->conn, MHD_HEADER_KIND, name);
}

const char *pg_req_arg(const pg_req *rq, const char *name)
{
	return mhd.lookup_connection_value(rq->conn, MHD_GET_ARGUMENT_KIND, name);
}

void pg_req_address(const pg_req *rq, char *out, size_t cap)
{
	const union MHD_ConnectionInfo *ci =
		mhd.get_connection_info(rq->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *a = ci ? ci->client_addr : NULL;

	*out = '\0';
	if (a && a->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)a)->sin_addr, out,
			  (socklen_t)cap);
	else if (a && a->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)a)->sin6_addr, out,
			  (socklen_t)cap);
}

int pg_req_count(size_t *out, const char *s, size_t max)
{
	char *end;
	unsigned long long v;

	if (!s)
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || *s == '+' || v > max)
		return -1;
	*out = (size_t)v;
	return 0;
}

const char *pg_req_cookie(const pg_req *rq, const char *name)
{
	return mhd.lookup_connection_value(rq->conn, MHD_COOKIE_KIND, name);
}

int pg_req_session(const pg_req *rq, pg_buf *user, pg_buf *csrf)
{
	const char *id = pg_req_cookie(rq, "pg_session");

	if (!id)
		return pg_error_set(PG_ENOTFOUND, "no session");
	return pg_sessions_find(rq->srv->sessions, user, csrf, id, time(NULL));
}

int pg_req_stream(const pg_req *rq, pg_resp *rs, uint64_t *until)
{
	pg_buf user = PG_BUF_INIT;
	bool maintainer = pg_req_session(rq, &user, NULL) == 0;

	pg_buf_release(&user);
	pg_error_clear();
	*until = pg_test_clock_ms(pg_now_ms()) + rq->srv->config->limits.stream_seconds * 1000ull;
	if (maintainer || pg_conns_stream(rq->srv->conns, rq->k))
		return 0;
	pg_resp_header(rs, "Retry-After", "10");
	pg_resp_error(rs, 503, "too many streams at once (limits.streams, "
		      "limits.streams-per-address): try again later");
	return 1;
}

int pg_req_require_maintainer(const pg_req *rq, pg_resp *rs, pg_buf *user)
{
	pg_buf csrf = PG_BUF_INIT, expect = PG_BUF_INIT;
	const char *token = pg_req_header(rq, "X-CSRF-Token");
	const char *origin = pg_req_header(rq, "Origin");
	const char *host = pg_req_header(rq, "Host");
	int rc = 1;

	if (pg_req_session(rq, user, &csrf) < 0) {
		pg_resp_error(rs, 401, "log in as a maintainer first");
		goto done;
	}
	if (!token || !pg_auth_equal(token, csrf.ptr)) {
		pg_resp_error(rs, 403, "the X-CSRF-Token header is missing or wrong");
		goto done;
	}
	if (origin && (!host || pg_buf_printf(&expect, "http://%s", host) < 0 ||
		       (strcmp(origin, expect.ptr) &&
			(strncmp(origin, "https://", 8) || strcmp(origin + 8, host))))) {
		pg_resp_error(rs, 403, "cross-origin request refused");
		goto done;
	}
	rc = 0;
done:
	pg_buf_release_secret(&csrf);
	pg_buf_release(&expect);
	return rc;
}

int pg_resp_header(pg_resp *rs, const char *name, const char *value)
{
	if (rs->nheaders == PG_RESP_MAX_HEADERS)
		return pg_error_set(PG_ETOOBIG, "too many response headers");
	if (!(rs->headers[rs->nheaders][0] = pg_strdup(name)) ||
	    !(rs->headers[rs->nheaders][1] = pg_strdup(value))) {
		free(rs->headers[rs->nheaders][0]);
		rs->headers[rs->nheaders][0] = NULL;
		return PG_ENOMEM;
	}
	rs->nheaders++;
	return 0;
}

int pg_resp_text(pg_resp *rs, unsigned status, const char *type, const char *text, size_t len)
{
	rs->status = status;
	rs->type = type;
	pg_buf_clear(&rs->body);
	return pg_buf_put(&rs->body, text, len);
}

int pg_resp_error(pg_resp *rs, unsigned status, const char *fmt, ...)
{
	pg_buf msg = PG_BUF_INIT;
	pg_json_writer *w = NULL;
	va_list ap;

	va_start(ap, fmt);
	pg_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	rs->status = status;
	rs->type = "application/json";
	pg_buf_clear(&rs->body);
	/*
	 * Messages are ours, but may quote request data: the writer escapes it.
	 * Out of memory the status alone answers.
	 */
	if (pg_json_writer_new(&w) == 0) {
		pg_json_put_str(w, "error", msg.ptr);
		pg_json_put_int(w, "status", status);
		if (pg_json_write(&rs->body, w, PG_JSON_COMPACT) == 0)
			pg_buf_putc(&rs->body, '\n');
	}
	pg_json_writer_free(w);
	pg_buf_release(&msg);
	return 0;
}

void pg_server_count_reject(pg_server *s, bool mail, enum pg_hook_reject why)
{
	pthread_mutex_lock(&s->metrics_lock);
	s->hook_rejects[mail][why]++;
	pthread_mutex_unlock(&s->metrics_lock);
}

void pg_server_log(pg_server *s, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!s->log)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	s->log(s->log_ctx, line);
}

static void resp_release(pg_resp *rs)
{
	size_t i;

	pg_buf_release(&rs->body);
	for (i = 0; i < rs->nheaders; i++) {
		free(rs->headers[i][0]);
		free(rs->headers[i][1]);
	}
	if (rs->stream_free && rs->stream_ctx)
		rs->stream_free(rs->stream_ctx);
}

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	pg_resp *rs = cls;
	ssize_t n = rs->stream(rs->stream_ctx, pos, buf, max);

	return n == PG_STREAM_END ? MHD_CONTENT_READER_END_OF_STREAM : n;
}

static void stream_done(void *cls)
{
	pg_resp *rs = cls;

	resp_release(rs);
	free(rs);
}

static enum MHD_Result respond(struct MHD_Connection *conn, pg_resp *rs, const char *path)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	pg_resp *owned = NULL;
	size_t i;
	bool api = strncmp(path, "/static/", 8) != 0;

	if (rs->stream) {
		/* the response outlives this call: move it to the heap for the reader */
		if (!(owned = malloc(sizeof(*owned))))
			return MHD_NO;
		*owned = *rs;
		memset(rs, 0, sizeof(*rs));
		pg_buf_init(&rs->body, 0);
		r = mhd.create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_reader, owned,
						      stream_done);
		if (!r) {
			stream_done(owned);
			return MHD_NO;
		}
		rs = owned;
	} else {
		r = mhd.create_response_from_buffer(rs->body.len, rs->body.ptr, MHD_RESPMEM_MUST_COPY);
		if (!r)
			return MHD_NO;
	}
	mhd.add_response_header(r, "Content-Type", rs->type ? rs->type : "application/json");
	mhd.add_response_header(r, "X-Content-Type-Options", "nosniff");
	mhd.add_response_header(r, "Content-Security-Policy",
				"default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; "
				"base-uri 'none'; form-action 'self'");
	mhd.add_response_header(r, "X-Frame-Options", "DENY");
	mhd.add_response_header(r, "Referrer-Policy", "no-referrer");
	mhd.add_response_header(r, "Cache-Control", api ? "no-store" : "max-age=300");
	for (i = 0; i < rs->nheaders; i++)
		mhd.add_response_header(r, rs->headers[i][0], rs->headers[i][1]);
	ret = mhd.queue_response(conn, rs->status ? rs->status : 200, r);
	mhd.destroy_response(r);
	return ret;
}

static size_t body_cap(const pg_server *s, const struct route *rt)
{
	return rt->body == 2 ? s->config->max_body : rt->body == 1 ? SMALL_BODY : 0;
}

static enum MHD_Result refuse(struct MHD_Connection *conn, conn_state *cs, unsigned status,
			      const char *fmt, ...) PG_PRINTF(4, 5);
static enum MHD_Result refuse(struct MHD_Connection *conn, conn_state *cs, unsigned status,
			      const char *fmt, ...)
{
	pg_resp rs;
	pg_buf msg = PG_BUF_INIT;
	enum MHD_Result ret;
	va_list ap;

	pg_conns_answering(cs->rq.srv->conns, cs->rq.k);
	memset(&rs, 0, sizeof(rs));
	pg_buf_init(&rs.body, 0);
	va_start(ap, fmt);
	pg_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	pg_resp_error(&rs, status, "%s", msg.ptr);
	if (status == 405)
		pg_resp_header(&rs, "Allow", cs->allow);
	ret = respond(conn, &rs, cs->path ? cs->path : "");
	resp_release(&rs);
	pg_buf_release(&msg);
	return ret;
}

/*
 * The name of a Host header ("name", "name:port", "[v6]" or "[v6]:port")
 * in out, without brackets, port or a final dot; false when it is malformed.
 */
static bool host_name(char *out, size_t cap, const char *h)
{
	const char *colon, *end, *port;
	size_t n;

	if (*h == '[') {
		if (!(end = strchr(h, ']')))
			return false;
		port = *++end == ':' ? end + 1 : end;
		n = (size_t)(end - h) - 2;
		h++;
		if (*end && *end != ':')
			return false;
	} else {
		colon = strchr(h, ':');
		if (colon && strrchr(h, ':') != colon)
			return false; /* an IPv6 address wants brackets */
		port = colon ? colon + 1 : h + strlen(h);
		n = colon ? (size_t)(colon - h) : strlen(h);
	}
	if (strspn(port, "0123456789") != strlen(port) || !n || n >= cap)
		return false;
	memcpy(out, h, n);
	if (n > 1 && out[n - 1] == '.')
		n--;
	out[n] = '\0';
	return true;
}

static bool ip_literal(const char *s)
{
	unsigned char a[sizeof(struct in6_addr)];

	return inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1;
}

/*
 * A request must name this service in its Host header: the listen
 * address, or one of the configured names (by default the loopback ones).
 * A page whose name an attacker rebinds to this address (DNS rebinding)
 * carries the attacker's name and is refused.  A service listening on
 * every address cannot know which of its addresses a client used: any IP
 * address is taken then, as no DNS name is involved.
 */
static bool host_allowed(const pg_server *s, const char *header, bool *malformed)
{
	static const char *const defaults[] = { PG_CONFIG_HOSTS };
	const pg_config *c = s->config;
	const char *const *names = c->nhosts ? (const char *const *)c->hosts : defaults;
	size_t n = c->nhosts ? c->nhosts : PG_ARRAY_SIZE(defaults), i;
	char name[256];

	*malformed = !header || !host_name(name, sizeof(name), header);
	if (*malformed)
		return false;
	if (!strcasecmp(name, c->address) ||
	    ((!strcmp(c->address, "0.0.0.0") || !strcmp(c->address, "::")) && ip_literal(name)))
		return true;
	for (i = 0; i < n; i++)
		if (!strcasecmp(name, names[i]))
			return true;
	return false;
}

static enum MHD_Result dispatch(struct MHD_Connection *conn, conn_state *cs)
{
	pg_server *s = cs->rq.srv;
	pg_resp rs;
	enum MHD_Result ret;
	int err;

	pg_conns_answering(s->conns, cs->rq.k);
	if (cs->rq.too_big) {
		if (cs->route->body == 2)
			pg_server_count_reject(s, cs->rq.hook_mail, PG_REJECT_SIZE);
		return refuse(conn, cs, 413, "the body is larger than %zu bytes",
			      body_cap(s, cs->route));
	}
	memset(&rs, 0, sizeof(rs));
	pg_buf_init(&rs.body, 0);
	rs.status = 200;
	pg_error_clear();
	if ((err = cs->route->fn(&cs->rq, &rs)) < 0) {
		pg_server_log(s, "%s %s: %s", cs->rq.method, cs->path, pg_error_last());
		/* short of memory, or the store's lock held too long: a moment later may do */
		pg_resp_error(&rs, err == PG_ENOMEM || err == PG_ETIMEOUT ? 503 : 500, "%s",
			      pg_error_last());
		if (rs.status == 503)
			pg_resp_header(&rs, "Retry-After", "10");
	}
	if (rs.status >= 500) {
		pthread_mutex_lock(&s->metrics_lock);
		s->http_errors++;
		pthread_mutex_unlock(&s->metrics_lock);
	}
	ret = respond(conn, &rs, cs->path);
	resp_release(&rs);
	return ret;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *conn, const char *url,
				      const char *method, const char *version,
				      const char *upload, size_t *upload_size, void **con_cls)
{
	pg_server *s = cls;
	conn_state *cs = *con_cls;

	(void)version;
	if (!cs) {
		const union MHD_ConnectionInfo *ci;
		const char *len;
		bool malformed;

		if (!(cs = calloc(1, sizeof(*cs))))
			return MHD_NO;
		*con_cls = cs;
		cs->rq.srv = s;
		cs->rq.conn = conn;
		cs->rq.method = method;
		ci = mhd.get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
		cs->rq.k = ci ? ci->socket_context : NULL;
		pg_conns_body(s->conns, cs->rq.k);
		pg_buf_init(&cs->rq.body, 1);
		if (!(cs->path = pg_strdup(url)))
			return MHD_NO;
		cs->rq.path = cs->path;
		pthread_mutex_lock(&s->metrics_lock);
		s->http_requests++;
		pthread_mutex_unlock(&s->metrics_lock);
		if (!host_allowed(s, pg_req_header(&cs->rq, "Host"), &malformed)) {
			pthread_mutex_lock(&s->metrics_lock);
			s->http_misdirected++;
			pthread_mutex_unlock(&s->metrics_lock);
			if (malformed)
				return refuse(conn, cs, 400, "the request wants a Host header naming "
					      "this service");
			return refuse(conn, cs, 421, "this service does not answer to that Host "
				      "name (listen.hosts in its configuration)");
		}
		if (!(cs->route = find_route(cs, method, url))) {
			if (cs->allow[0])
				return refuse(conn, cs, 405, "%s is not allowed here", method);
			return refuse(conn, cs, 404, "no such path");
		}
		cs->rq.hook_mail = cs->route->fn == pg_hook_pull_request;
		pg_buf_init(&cs->rq.body, body_cap(s, cs->route) ? body_cap(s, cs->route) : 1);
		/* refuse a declared oversize body before reading any of it */
		len = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
		if (len && strtoull(len, NULL, 10) > body_cap(s, cs->route) &&
		    (cs->route->body || strtoull(len, NULL, 10) > 0)) {
			cs->rq.too_big = true;
			return dispatch(conn, cs);
		}
		return MHD_YES;
	}
	if (*upload_size) {
		if (!cs->rq.too_big && (!cs->route->body ||
					pg_buf_put(&cs->rq.body, upload, *upload_size) < 0)) {
			cs->rq.too_big = true;
			pg_buf_release(&cs->rq.body);
		}
		*upload_size = 0;
		return MHD_YES;
	}
	return dispatch(conn, cs);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	pg_server *s = cls;
	conn_state *cs = *con_cls;

	(void)conn;
	(void)toe;
	if (!cs)
		return;
	pg_conns_answered(s->conns, cs->rq.k);
	pg_buf_release(&cs->rq.body);
	free(cs->path);
	free(cs);
	*con_cls = NULL;
}

/* Each connection from accept to close, for its deadlines and its address's share. */
static void notify_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			      enum MHD_ConnectionNotificationCode code)
{
	pg_server *s = cls;
	const union MHD_ConnectionInfo *fd, *addr;

	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		pg_conns_close(s->conns, *socket_context);
		*socket_context = NULL;
		return;
	}
	fd = mhd.get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	addr = mhd.get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	*socket_context = NULL;
	if (fd && addr && addr->client_addr)
		*socket_context = pg_conns_open(s->conns, fd->connect_fd, addr->client_addr,
						addr->client_addr->sa_family == AF_INET6 ?
						sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
	if (!*socket_context && fd)
		shutdown(fd->connect_fd, SHUT_RDWR); /* untracked: not served */
}

/* Room for every connection the limit lets in, and the store, logs and children. */
static void raise_fd_limit(unsigned connections)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)connections + 256;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

#define MHD_LOG_BURST 10      /* libmicrohttpd lines logged per window */
#define MHD_LOG_WINDOW 60     /* seconds */

/*
 * libmicrohttpd's own messages, mostly about clients that went away: a
 * flood of slow or broken clients must not flood the log, so at most a
 * burst per window is logged, and how many were not.
 */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	pg_server *s = cls;
	char line[512];
	time_t now = time(NULL);
	uint64_t dropped = 0;
	bool say;
	size_t n;

	pthread_mutex_lock(&s->metrics_lock);
	if (now - s->mhd_log_window >= MHD_LOG_WINDOW) {
		dropped = s->mhd_log_dropped;
		s->mhd_log_window = now;
		s->mhd_log_count = 0;
		s->mhd_log_dropped = 0;
	}
	say = s->mhd_log_count++ < MHD_LOG_BURST;
	s->mhd_log_dropped += !say;
	pthread_mutex_unlock(&s->metrics_lock);
	if (dropped)
		pg_server_log(s, "(%llu more messages of libmicrohttpd were not logged)",
			      (unsigned long long)dropped);
	if (!say)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	if (s->log)
		s->log(s->log_ctx, line);
}

int pg_http_start(pg_server *s)
{
	struct sockaddr_in a4;
	struct sockaddr_in6 a6;
	const struct sockaddr *addr;
	const union MHD_DaemonInfo *info;
	const pg_config_limits *lim = &s->config->limits;
	pg_conns_limits cl;
	/* a thread per connection, polled (not select: past 1024 descriptors) */
	unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_ERROR_LOG;
	bool v6 = strchr(s->config->address, ':') != NULL;
	struct MHD_Daemon *d;
	int err;

	if ((err = mhd_load()) < 0)
		return err;
	memset(&a4, 0, sizeof(a4));
	memset(&a6, 0, sizeof(a6));
	if (v6) {
		a6.sin6_family = AF_INET6;
		a6.sin6_port = htons((uint16_t)s->config->port);
		if (inet_pton(AF_INET6, s->config->address, &a6.sin6_addr) != 1)
			return pg_error_set(PG_EINVALID, "'%s' is not an IP address", s->config->address);
		addr = (const struct sockaddr *)&a6;
		flags |= MHD_USE_IPv6;
	} else {
		a4.sin_family = AF_INET;
		a4.sin_port = htons((uint16_t)s->config->port);
		if (inet_pton(AF_INET, s->config->address, &a4.sin_addr) != 1)
			return pg_error_set(PG_EINVALID, "'%s' is not an IP address", s->config->address);
		addr = (const struct sockaddr *)&a4;
	}
	cl.per_address = lim->per_address;
	cl.header_ms = lim->header_timeout * 1000u;
	cl.body_ms = lim->body_timeout * 1000u;
	/* streams never take more than half the connections: the rest stay for hooks and pages */
	cl.streams = lim->streams < lim->connections / 2 ? lim->streams : lim->connections / 2;
	cl.streams_per_address = lim->streams_per_address;
	if ((err = pg_conns_new(&s->conns, &cl)) < 0)
		return err;
	raise_fd_limit(lim->connections);
	d = mhd.start_daemon(flags, (uint16_t)s->config->port, NULL, NULL, access_handler, s,
			     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
			     MHD_OPTION_SOCK_ADDR, addr,
			     MHD_OPTION_NOTIFY_COMPLETED, completed, s,
			     MHD_OPTION_NOTIFY_CONNECTION, notify_connection, s,
			     MHD_OPTION_CONNECTION_LIMIT, lim->connections,
			     /* a client that stops reading its answer */
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
			     MHD_OPTION_END);
	if (!d)
		return pg_error_set(PG_EIO, "cannot listen on %s port %u (in use, or not an "
				    "address of this machine)", s->config->address, s->config->port);
	info = mhd.get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	snprintf(s->url, sizeof(s->url), v6 ? "http://[%s]:%u/" : "http://%s:%u/",
		 s->config->address, info ? (unsigned)info->port : s->config->port);
	s->mhd = d;
	return 0;
}

void pg_http_stop(pg_server *s)
{
	if (s->mhd)
		mhd.stop_daemon(s->mhd);
	s->mhd = NULL;
	pg_conns_free(s->conns);
	s->conns = NULL;
}
