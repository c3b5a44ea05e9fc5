/* metrics.c - /metrics in the Prometheus text format and /healthz. */
#include "server/web.h"
#include "common/error.h"

static const char *const reasons[PG_REJECT__COUNT] = {
	"signature", "delivery", "size", "content-type", "malformed", "repository", "conflict",
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
	pthread_mutex_unlock(&s->metrics_lock);
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
