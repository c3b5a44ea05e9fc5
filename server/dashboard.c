/* dashboard.c - the dashboard's queue of pulls under the merge window, its log-in page and its static files. */
#include "server/dashboard.h"
#include "server/assets.h"
#include "common/error.h"

#define QUEUE_PAGE 50

/* The seconds of a kernel run, as the runs so far took them: the mean merge, build and boot. */
typedef struct run_time {
	double seconds;
} run_time;

static void stage_mean(void *ctx, const char *stage, int64_t n, double seconds)
{
	run_time *t = ctx;

	if (n > 0 && (!strcmp(stage, "merge") || !strcmp(stage, "build") || !strcmp(stage, "boot")))
		t->seconds += seconds / (double)n;
}

int pg_page_queue(pg_req *rq, pg_resp *rs)
{
	run_time run = { 0 };
	pg_job_list l, window = { NULL, 0, 0 };
	pg_buf *out = &rs->body;
	const char *state = pg_req_arg(rq, "state");
	enum pg_job_state st, filter = PG_JOB_QUEUED;
	size_t offset = 0, i;
	int err, stand_ins = -1;

	if (state && pg_job_state_from_name(&filter, state) < 0)
		return pg_resp_error(rs, 400, "unknown state");
	if (pg_req_count(&offset, pg_req_arg(rq, "offset"), (size_t)1 << 40) < 0)
		return pg_resp_error(rs, 400, "offset wants a count");
	if ((err = pg_store_list(&l, pg_server_reader(rq->srv), state ? &filter : NULL, offset,
				 QUEUE_PAGE)) < 0)
		return err;
	/* the window heads the first page of all pulls; a filter or an older page is the list's */
	if (!state && !offset && (err = pg_server_queue(&window, rq->srv)) < 0) {
		pg_job_list_release(&l);
		return err;
	}
	pg_dash_page_start(out, rq, "queue", "data-page=\"queue\"");
	pg_buf_puts(out, "<h1>Pulls</h1>\n");
	if (!state && !offset && rq->srv->config->stages) {
		/* without the means, the window shows no time */
		if (pg_store_stage_totals(pg_server_reader(rq->srv), stage_mean, &run) < 0) {
			pg_error_clear();
			run.seconds = 0;
		}
		pg_dash_window(out, &window, run.seconds, rq->srv->config->build_worktrees);
		pg_buf_puts(out, "<h2 id=\"all\">All pulls</h2>\n");
	}
	pg_buf_printf(out, "<p class=\"filters\">%s all</a>",
		      state ? "<a href=\"/\">" : "<a class=\"current\" href=\"/\">");
	for (st = 0; st < PG_JOB__COUNT; st++) {
		const char *name = pg_job_state_name(st);

		pg_buf_printf(out, " <a %shref=\"/?state=%s\">%s</a>",
			      state && st == filter ? "class=\"current\" " : "", name, name);
	}
	pg_buf_puts(out, "</p>\n");
	if (!l.n)
		pg_buf_puts(out, "<p class=\"empty\">No pulls yet. Hooks post them to "
			    "<code>/hooks/push</code> and <code>/hooks/pull-request</code>.</p>\n");
	else
		pg_buf_puts(out, "<table class=\"queue\" id=\"queue\"><thead><tr><th>#</th><th>state</th>"
			    "<th>tag</th><th>repository</th><th>commits</th><th>findings</th>"
			    "<th>updated</th><th>last word</th></tr></thead><tbody>\n");
	for (i = 0; i < l.n; i++) {
		const pg_job *j = l.items[i];

		pg_buf_printf(out, "<tr data-id=\"%lld\"><td><a href=\"/pulls/%lld\">%lld</a></td><td>",
			      (long long)j->id, (long long)j->id, (long long)j->id);
		pg_dash_state_badge(out, j->state);
		if (pg_dash_simulated(rq->srv, j, &stand_ins))
			pg_dash_simulated_badge(out, NULL);
		pg_buf_printf(out, "</td><td class=\"tag\"><a href=\"/pulls/%lld\">", (long long)j->id);
		pg_dash_html(out, "%s</a></td><td class=\"repo\">%s", pg_dash_tag_name(j->tag),
			     j->repo_name ? j->repo_name : j->repo);
		pg_buf_printf(out, "</td><td>%d</td><td>%d errors, %d warnings</td><td>", j->commits,
			      j->errors, j->warnings);
		pg_dash_when(out, j->updated);
		pg_dash_html(out, "</td><td class=\"message\">%s</td></tr>\n", j->message);
	}
	if (l.n)
		pg_buf_puts(out, "</tbody></table>\n");
	if (offset + l.n < l.total)
		pg_buf_printf(out, "<p><a href=\"/?offset=%zu%s%s\">older</a></p>\n", offset + l.n,
			      state ? "&amp;state=" : "", state ? state : "");
	pg_job_list_release(&l);
	pg_job_list_release(&window);
	return pg_dash_page_end(out, rs);
}

int pg_page_login(pg_req *rq, pg_resp *rs)
{
	pg_buf *out = &rs->body;

	pg_dash_page_start(out, rq, "log in", "data-page=\"login\"");
	pg_buf_puts(out, "<h1>Maintainer log in</h1>\n<form id=\"login\" class=\"login\">"
		    "<label>user <input name=\"user\" id=\"user-name\" autocomplete=\"username\" "
		    "required></label> <label>password <input name=\"password\" id=\"password\" "
		    "type=\"password\" autocomplete=\"current-password\" required></label> "
		    "<button type=\"submit\" id=\"login-button\">log in</button></form>\n"
		    "<p id=\"login-result\" role=\"status\"></p>\n");
	return pg_dash_page_end(out, rs);
}

int pg_page_asset(pg_req *rq, pg_resp *rs)
{
	size_t i;

	for (i = 0; i < pg_nassets; i++) {
		if (strcmp(pg_assets[i].name, rq->rest))
			continue;
		return pg_resp_text(rs, 200, pg_assets[i].type, (const char *)pg_assets[i].data,
				    pg_assets[i].size);
	}
	return pg_resp_error(rs, 404, "no such file");
}
