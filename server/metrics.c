/* metrics.c - /metrics in the Prometheus text format and /healthz. */
#include "server/web.h"
#include "common/error.h"
#include "verifier/identity_index.h"

static const char *const reasons[PG_REJECT__COUNT] = {
	"signature", "delivery", "size", "content-type", "malformed", "repository", "conflict",
	"replay",
};

static void count_state(void *ctx, const char *state, int64_t n)
{
	pg_buf_printf(ctx, "pullgate_jobs{state=\"%s\"} %lld\n", state, (long long)n);
}

static void stage_total(void *ctx, const char *stage, int64_t n, double seconds)
{
	/* stage names are the gate's own: verify, merge, build, boot, approve */
	pg_buf_printf(ctx, "pullgate_stage_duration_seconds_sum{stage=\"%s\"} %.3f\n"
		      "pullgate_stage_duration_seconds_count{stage=\"%s\"} %lld\n",
		      stage, seconds, stage, (long long)n);
}

int pg_page_metrics(pg_req *rq, pg_resp *rs)
{
	pg_server *s = rq->srv;
	pg_buf *out = &rs->body;
	pg_conns_stats cs;
	uint64_t index_bytes = 0;
	size_t h, i;
	int err;

	pg_buf_puts(out, "# HELP pullgate_jobs Pulls in the store, by state.\n"
		    "# TYPE pullgate_jobs gauge\n");
	if ((err = pg_store_count_states(pg_server_reader(s), count_state, out)) < 0)
		return err;
	pg_buf_puts(out, "# HELP pullgate_stage_duration_seconds Time spent in each stage, "
		    "over the last run of every pull.\n# TYPE pullgate_stage_duration_seconds summary\n");
	if ((err = pg_store_stage_totals(pg_server_reader(s), stage_total, out)) < 0)
		return err;
	pthread_mutex_lock(&s->metrics_lock);
	pg_buf_puts(out, "# HELP pullgate_hook_rejections_total Hook deliveries refused, by hook "
		    "and reason.\n# TYPE pullgate_hook_rejections_total counter\n");
	for (h = 0; h < 2; h++)
		for (i = 0; i < PG_REJECT__COUNT; i++)
			pg_buf_printf(out, "pullgate_hook_rejections_total{hook=\"%s\",reason=\"%s\"} %llu\n",
				      h ? "pull-request" : "push", reasons[i],
				      (unsigned long long)s->hook_rejects[h][i]);
	pg_buf_printf(out, "# HELP pullgate_hook_deliveries_total Hook deliveries accepted.\n"
		      "# TYPE pullgate_hook_deliveries_total counter\n"
		      "pullgate_hook_deliveries_total{hook=\"push\"} %llu\n"
		      "pullgate_hook_deliveries_total{hook=\"pull-request\"} %llu\n"
		      "# HELP pullgate_http_requests_total HTTP requests received.\n"
		      "# TYPE pullgate_http_requests_total counter\n"
		      "pullgate_http_requests_total %llu\n"
		      "# HELP pullgate_http_server_errors_total Responses with a 5xx status.\n"
		      "# TYPE pullgate_http_server_errors_total counter\n"
		      "pullgate_http_server_errors_total %llu\n",
		      (unsigned long long)s->hooks_accepted[0], (unsigned long long)s->hooks_accepted[1],
		      (unsigned long long)s->http_requests, (unsigned long long)s->http_errors);
	pg_buf_printf(out, "# HELP pullgate_http_misdirected_total Requests refused for their Host "
		      "header.\n# TYPE pullgate_http_misdirected_total counter\n"
		      "pullgate_http_misdirected_total %llu\n"
		      "# HELP pullgate_login_failures_total Log-ins with a wrong user or password.\n"
		      "# TYPE pullgate_login_failures_total counter\n"
		      "pullgate_login_failures_total %llu\n"
		      "# HELP pullgate_login_throttled_total Log-ins refused, unchecked, while their "
		      "account or address was throttled.\n"
		      "# TYPE pullgate_login_throttled_total counter\n"
		      "pullgate_login_throttled_total %llu\n"
		      "# HELP pullgate_password_checks_total Passwords checked (PBKDF2 runs).\n"
		      "# TYPE pullgate_password_checks_total counter\n"
		      "pullgate_password_checks_total %llu\n",
		      (unsigned long long)s->http_misdirected, (unsigned long long)s->login_failures,
		      (unsigned long long)s->login_throttled, (unsigned long long)s->password_checks);
	pthread_mutex_unlock(&s->metrics_lock);
	/* a directory listing: the files' sizes, nothing read */
	if (pg_identity_index_cache_size(&index_bytes, s->home) < 0)
		pg_error_clear();
	pg_buf_printf(out, "# HELP pullgate_identity_index_bytes Bytes the identity indexes take "
		      "in $PULLGATE_HOME/identity (limits.index-cache-size bounds them).\n"
		      "# TYPE pullgate_identity_index_bytes gauge\n"
		      "pullgate_identity_index_bytes %llu\n", (unsigned long long)index_bytes);
	pg_conns_get_stats(s->conns, &cs);
	pg_buf_printf(out, "# HELP pullgate_http_connections Connections open now.\n"
		      "# TYPE pullgate_http_connections gauge\n"
		      "pullgate_http_connections %zu\n"
		      "# HELP pullgate_http_request_timeouts_total Requests not received within "
		      "their deadline.\n# TYPE pullgate_http_request_timeouts_total counter\n"
		      "pullgate_http_request_timeouts_total %llu\n"
		      "# HELP pullgate_http_refused_connections_total Connections refused past "
		      "their address's share.\n# TYPE pullgate_http_refused_connections_total counter\n"
		      "pullgate_http_refused_connections_total %llu\n",
		      cs.open, (unsigned long long)cs.timeouts, (unsigned long long)cs.refused);
	rs->status = 200;
	rs->type = "text/plain; version=0.0.4; charset=utf-8";
	return 0;
}

int pg_page_healthz(pg_req *rq, pg_resp *rs)
{
	if (pg_store_ping(pg_server_reader(rq->srv)) < 0)
		return pg_resp_error(rs, 503, "the store does not answer: %s", pg_error_last());
	return pg_resp_text(rs, 200, "application/json", "{\"status\": \"ok\"}\n", 17);
}
