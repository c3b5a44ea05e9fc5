/* web.h - what the request handlers share: the server state, requests, responses (private to server/). */
#ifndef PG_SERVER_WEB_H
#define PG_SERVER_WEB_H

#include "common/buf.h"
#include "policies/policy.h"
#include "server/auth.h"
#include "server/config.h"
#include "server/conns.h"
#include "server/events.h"
#include "server/hooks.h"
#include "server/job.h"
#include "server/notify.h"
#include "server/server.h"
#include "server/throttle.h"
#include "server/store.h"
#include "server/worker.h"

#include <pthread.h>

/* Why a hook was refused, for /metrics. */
enum pg_hook_reject {
	PG_REJECT_SIGNATURE,
	PG_REJECT_DELIVERY,
	PG_REJECT_SIZE,
	PG_REJECT_CONTENT_TYPE,
	PG_REJECT_MALFORMED,
	PG_REJECT_REPOSITORY,
	PG_REJECT_CONFLICT,
	PG_REJECT_REPLAY,      /* a signed timestamp outside the replay window */
	PG_REJECT__COUNT
};

/*
 * A hook delivery judged without a running server (hook_handlers.c): what
 * POST /hooks/push and /hooks/pull-request decide from the headers, the
 * body, the configuration, the policy and the secret, before the store is
 * touched.  The handlers call it and tests/fuzz/fuzz_hook.c drives it.
 * Every string is borrowed.
 */
typedef struct pg_hook_input {
	bool mail;                  /* /hooks/pull-request; else /hooks/push */
	const char *secret;         /* the hook's HMAC secret */
	const pg_config *config;
	const pg_policy *policy;
	const char *content_type;   /* the request's headers; NULL when absent */
	const char *delivery;       /* X-Pullgate-Delivery */
	const char *signature;      /* X-Pullgate-Signature */
	const char *timestamp;      /* X-Pullgate-Timestamp; NULL when absent */
	const char *body;
	size_t body_len;
} pg_hook_input;

typedef struct pg_hook_decision {
	unsigned status;            /* 0: accepted; else the refusal's HTTP status */
	enum pg_hook_reject why;    /* a refusal's reason, for /metrics */
	pg_buf message;             /* a refusal's one line */
	pg_job_spec *jobs;          /* accepted: the jobs to queue, perhaps none */
	size_t njobs;
	const char *note;           /* accepted: what the answer says */
	/* what the jobs point into */
	pg_push_record *push;
	struct pg_pull_request *mail;
	pg_buf location, tag;
} pg_hook_decision;

/*
 * Fill *d (always; release it with pg_hook_decision_release): 0 with
 * d->status 0 and the jobs, or with the refusal (400, 401, 413, 415, 422).
 * A negative code (out of memory) is a 500.
 */
int pg_hook_decide(pg_hook_decision *d, const pg_hook_input *in);
void pg_hook_decision_release(pg_hook_decision *d);

/*
 * Record delivery d (the caller fills its id, hook, digest and signature)
 * with jobs, as new queued jobs, each with the dedupe key of a hook's job
 * (the kind, the location, the tag, and the object id a push names or, for
 * a mail, d's digest): what pg_store_add_delivery answers.  Both hooks and
 * the transparency log's intake (intake.c) record through it.
 */
int pg_hook_record(pg_buf *ids, size_t *created, pg_store *store, pg_delivery *d,
		   pg_job_spec *jobs, size_t njobs);


struct pg_retired;

/*
 * config, policy and the secrets are replaced by a reload (reload.c) while
 * requests run: read each pointer once per use; what it pointed to stays
 * valid until the server stops.
 */
/* Connections the HTTP threads read the store through. */
#define PG_SERVER_READERS 4

struct pg_server {
	const pg_config *config;
	pg_policy *policy;
	pg_store *store;                /* the HTTP threads' writes (deliveries) */
	pg_store *readers[PG_SERVER_READERS]; /* their reads, never behind a write's sync */
	unsigned next_reader;
	pg_store *worker_store;         /* the worker's */
	pg_store *checkpoint_store;     /* the checkpointer's (server.c) */
	pthread_t checkpointer;
	bool checkpointer_running, checkpointer_stop;
	pthread_mutex_t checkpointer_lock;
	pthread_cond_t checkpointer_wake;
	pg_events *events;
	pg_worker *worker;
	pg_sessions *sessions;
	pg_throttle *throttle;          /* failed log-ins by account and address */
	char *home, *datadir, *state;
	int state_fd;                   /* the exclusive lock on state/pullgate.lock */
	int scratch_fd;                 /* the shared lock on home/tmp/.lock */
	char *push_secret, *mail_secret;
	void *mhd;                      /* struct MHD_Daemon, owned by http.c */
	pg_conns *conns;                /* the open connections and their deadlines (http.c) */
	char url[160];
	size_t requeued;
	pg_log_fn log;
	void *log_ctx;
	volatile bool stopping;
	pthread_mutex_t metrics_lock;
	uint64_t hook_rejects[2][PG_REJECT__COUNT]; /* [push, pull-request][reason] */
	uint64_t hooks_accepted[2];
	uint64_t http_requests;
	uint64_t http_errors;           /* 5xx */
	pg_notify *notify;              /* the approval notice by SMTP (notify.c) */
	struct pg_intake *intake;       /* the transparency log followed (intake.c), or NULL */
	struct pg_submit *submit;       /* the KCIDB documents sent (kcidb_submit.c) */
	pg_config *owned_config;        /* the last reload's configuration (reload.c) */
	struct pg_retired *retired;     /* what reloads replaced, freed at stop */
	size_t nretired, retired_alloc;
	uint64_t http_misdirected;      /* refused for their Host header */
	uint64_t login_failures;        /* wrong user or password */
	uint64_t login_throttled;       /* refused before the password was checked */
	uint64_t password_checks;       /* PBKDF2 runs */
	time_t mhd_log_window;          /* libmicrohttpd's messages, rate-limited */
	unsigned mhd_log_count;
	uint64_t mhd_log_dropped;
};

typedef struct pg_req {
	pg_server *srv;
	void *conn;                     /* struct MHD_Connection */
	const char *method;
	const char *path;
	int64_t id;                     /* the /pulls/ID of the path, when the route has one */
	const char *rest;               /* what a trailing '*' of the route matched */
	pg_buf body;                    /* capped when the route was found */
	pg_conn *k;                     /* the connection's entry in srv->conns */
	bool too_big;
	bool hook_mail;                 /* for metrics: which hook */
} pg_req;

/* Called for each chunk of a streamed response: like MHD's content reader. */
typedef ssize_t (*pg_stream_fn)(void *ctx, uint64_t pos, char *buf, size_t max);

#define PG_RESP_MAX_HEADERS 8

typedef struct pg_resp {
	unsigned status;
	const char *type;               /* Content-Type; static string */
	pg_buf body;
	char *headers[PG_RESP_MAX_HEADERS][2];
	size_t nheaders;
	pg_stream_fn stream;            /* when set, the body is streamed */
	void *stream_ctx;
	void (*stream_free)(void *ctx);
} pg_resp;

/* End of a stream (as MHD_CONTENT_READER_END_OF_STREAM). */
#define PG_STREAM_END ((ssize_t)-1)

/* Request accessors (http.c); the strings are borrowed from the request. */
const char *pg_req_header(const pg_req *rq, const char *name);
const char *pg_req_arg(const pg_req *rq, const char *name);

/* A decimal count from a query argument: 0 leaves *out (absent); -1 when malformed or over max. */
int pg_req_count(size_t *out, const char *s, size_t max);
const char *pg_req_cookie(const pg_req *rq, const char *name);

/* The client's address as text ("127.0.0.1", "::1"), or "" when unknown. */
void pg_req_address(const pg_req *rq, char *out, size_t cap);

/* The logged-in maintainer (appended to user; csrf too when not NULL): 0, or PG_ENOTFOUND. */
int pg_req_session(const pg_req *rq, pg_buf *user, pg_buf *csrf);

/*
 * A streamed answer (events, a followed log) is about to start: 0 when it
 * may, with *until the time (pg_test_clock_ms) at which the stream ends
 * itself (limits.stream-seconds; the client reconnects); 1 when rs holds
 * the refusal (503 with Retry-After: too many streams, in all or from the
 * client's address).  A logged-in maintainer's streams are not counted.
 */
int pg_req_stream(const pg_req *rq, pg_resp *rs, uint64_t *until);

/*
 * A mutating API call: a session (else 401) and its CSRF token in
 * X-CSRF-Token (else 403), and a same-origin Origin header when there is
 * one.  0 when allowed (user filled); 1 when rs holds the refusal.
 */
int pg_req_require_maintainer(const pg_req *rq, pg_resp *rs, pg_buf *user);

/* Responses. */
int pg_resp_header(pg_resp *rs, const char *name, const char *value);
/* A JSON error {"error": msg, "status": N}; returns 0 (the response is made). */
int pg_resp_error(pg_resp *rs, unsigned status, const char *fmt, ...) PG_PRINTF(3, 4);
/* The body is text of that type. */
int pg_resp_text(pg_resp *rs, unsigned status, const char *type, const char *text, size_t len);

/* Count a refused hook for /metrics. */
void pg_server_count_reject(pg_server *s, bool mail, enum pg_hook_reject why);
void pg_server_log(pg_server *s, const char *fmt, ...) PG_PRINTF(2, 3);

/* The generated hook secret in state: read it, or make one (0600) the first time (server.c). */
int pg_server_hook_secret(char **out, const char *state);

/* Free what reloads replaced, and the last reload's configuration (reload.c). */
void pg_server_free_retired(pg_server *s);
/* A connection to read the store through (server.c): each of the readers in turn. */
pg_store *pg_server_reader(pg_server *s);
/*
 * The merge window's queue as the dashboard and the API show it
 * (pg_store_queue), through a reader; empty when the service runs no
 * kernel stage (then verified is the end, and nothing waits to be stacked).
 */
int pg_server_queue(pg_job_list *out, pg_server *s);

/* Whether path is a log the gate wrote (under home/logs), so that it may be served. */
bool pg_server_owns_log(const pg_server *s, const char *path);

/*
 * Append the KCIDB document of pull j's newest finished report (kcidb.c),
 * as pg_kcidb_format writes it with what the service knows of the job:
 * the configured origin, the repository's public URL, the integration
 * branch, the pull mail's subject and Message-Id, and the KUnit cases of
 * the boot console in the run directory the job row names (only
 * home/logs/job-ID..., no link followed, its first 4 MiB).  PG_ENOTFOUND
 * when j has no finished report; PG_EINVALID for a stored report that
 * does not read back (one the store cut to its limits among them);
 * PG_ENOMEM.
 */
int pg_server_kcidb(pg_buf *doc, const pg_server *s, const pg_job *j);

/* The handlers (each returns 0 with rs filled, or a negative code for a 500). */
int pg_hook_push(pg_req *rq, pg_resp *rs);          /* hook_handlers.c */
int pg_hook_pull_request(pg_req *rq, pg_resp *rs);
int pg_api_list(pg_req *rq, pg_resp *rs);           /* api.c */
int pg_api_pull(pg_req *rq, pg_resp *rs);
int pg_api_log(pg_req *rq, pg_resp *rs);
/* The pull's KCIDB document (pg_server_kcidb). */
int pg_api_kcidb(pg_req *rq, pg_resp *rs);
int pg_api_events(pg_req *rq, pg_resp *rs);
int pg_api_approve(pg_req *rq, pg_resp *rs);
int pg_api_reject(pg_req *rq, pg_resp *rs);
int pg_api_cancel(pg_req *rq, pg_resp *rs);
/* The merge window's queue (docs/server.md, "The queue"). */
int pg_api_queue(pg_req *rq, pg_resp *rs);
/* Its server-sent events: "queue" each time it changes, for the front page to look again. */
int pg_api_queue_events(pg_req *rq, pg_resp *rs);
int pg_api_through(pg_req *rq, pg_resp *rs);
int pg_api_approve_through(pg_req *rq, pg_resp *rs);
int pg_api_hold(pg_req *rq, pg_resp *rs);
int pg_api_release(pg_req *rq, pg_resp *rs);
int pg_api_up(pg_req *rq, pg_resp *rs);
int pg_api_down(pg_req *rq, pg_resp *rs);
int pg_api_login(pg_req *rq, pg_resp *rs);
int pg_api_logout(pg_req *rq, pg_resp *rs);
int pg_api_session(pg_req *rq, pg_resp *rs);
int pg_page_queue(pg_req *rq, pg_resp *rs);         /* dashboard.c */
int pg_page_pull(pg_req *rq, pg_resp *rs);
int pg_page_login(pg_req *rq, pg_resp *rs);
int pg_page_asset(pg_req *rq, pg_resp *rs);
int pg_page_metrics(pg_req *rq, pg_resp *rs);       /* metrics.c */
int pg_page_healthz(pg_req *rq, pg_resp *rs);

/* Start listening (fills s->url) / stop, waiting for the connection threads (http.c). */
int pg_http_start(pg_server *s);
void pg_http_stop(pg_server *s);

#endif
