/* dashboard_window.c - the merge window on the dashboard: the queue's section of the front page, a queued pull's place, buttons and why it failed. */
#include "server/dashboard.h"
#include "common/error.h"
#include "server/stack.h"

size_t pg_dash_window_find(const pg_job_list *q, int64_t id)
{
	size_t i;

	for (i = 0; i < q->n && q->items[i]->id != id; i++)
		;
	return i;
}

/* A pull of the queue as a link and its tag: "#12 (tag)". */
static void pull_link(pg_buf *out, const pg_job *j)
{
	pg_buf_printf(out, "<a href=\"/pulls/%lld\">#%lld</a>", (long long)j->id, (long long)j->id);
	pg_dash_html(out, " (%s)", pg_dash_tag_name(j->tag));
}

/* What q->items[i] was tested on: a link to the pull under it, "the branch", or why none. */
static void tested_on(pg_buf *out, const pg_job_list *q, size_t i)
{
	const pg_job *j = q->items[i];
	size_t k;

	/* a merge of an earlier run stays in the row until the next run ends: no test of now */
	if (pg_job_state_is_running(j->state)) {
		pg_buf_puts(out, "being tested");
		return;
	}
	if (j->state == PG_JOB_VERIFIED || !j->has_merge) {
		pg_buf_puts(out, "to be tested");
		return;
	}
	/* as GET /api/queue finds it: the pull ahead whose merge is its merge's base */
	for (k = 0; k < i; k++)
		if (q->items[k]->has_merge && !pg_oid_cmp(&q->items[k]->merge_commit, &j->merge_base))
			break;
	if (k < i)
		pull_link(out, q->items[k]);
	else
		pg_buf_puts(out, "the branch");
}

/* Whom a pull of the queue conflicts with, as it found when it entered: links. */
static void conflicts_cell(pg_buf *out, const pg_job_list *q, const pg_job *j)
{
	size_t k = j->conflict_with ? pg_dash_window_find(q, j->conflict_with) : q->n;

	if (k < q->n) {
		pg_buf_puts(out, "with ");
		pull_link(out, q->items[k]);
	} else if (j->conflict && !j->conflict_with)
		/* a conflict with no one to wait behind: the branch's, or settled by a resolution */
		pg_buf_puts(out, strstr(j->conflict, ", resolved by ") ? "resolved" : "with the branch");
}

/* "in about 12 min", "now", or "not known" (eta as pg_stack_eta gives it). */
static void eta_words(pg_buf *out, double eta)
{
	if (eta < 0)
		pg_buf_puts(out, "not known");
	else if (eta == 0)
		pg_buf_puts(out, "tested");
	else
		pg_buf_printf(out, "in about %.0f min", eta < 60 ? 1 : eta / 60);
}

void pg_dash_window(pg_buf *out, const pg_job_list *q, double run_s, unsigned worktrees)
{
	double *eta = NULL;
	size_t i;

	pg_buf_puts(out, "<section id=\"window\"><h2>Merge window</h2>\n");
	if (!q->n) {
		pg_buf_puts(out, "<p class=\"empty\">No pull is in the window: a pull verify accepts "
			    "joins it, behind those that came before it.</p></section>\n");
		return;
	}
	if (!(eta = calloc(q->n, sizeof(*eta)))) {
		pg_buf_puts(out, "<p class=\"empty\">Out of memory.</p></section>\n");
		return;
	}
	pg_stack_eta(eta, q, run_s, worktrees);
	for (i = 0; i < q->n && q->items[i]->held; i++)
		;
	pg_buf_puts(out, "<p class=\"window-note\">First place first: each pull is merged, built "
		    "and booted on the branch plus the merges of the waiting pulls above it, and is "
		    "approved after them.</p>\n");
	if (i < q->n) {
		pg_buf_printf(out, "<p id=\"window-eta\">The head of the window, <a href=\"/pulls/"
			      "%lld\">#%lld</a>, is approvable ", (long long)q->items[i]->id,
			      (long long)q->items[i]->id);
		if (eta[i] == 0)
			pg_buf_puts(out, "now");
		else if (eta[i] > 0) {
			pg_buf_printf(out, "<span data-eta=\"%.0f\">", eta[i]);
			eta_words(out, eta[i]);
			pg_buf_puts(out, "</span>");
		} else
			pg_buf_puts(out, "at a time not known yet");
		if (run_s > 0)
			pg_buf_printf(out, " (a kernel run takes %.0f s on average here)", run_s);
		pg_buf_puts(out, ".</p>\n");
	}
	pg_buf_puts(out, "<table class=\"window\" id=\"window-queue\"><thead><tr>"
		    "<th>place</th><th>pull</th><th>tag</th><th>state</th><th>held</th>"
		    "<th>tested on</th><th>conflicts</th><th>tested</th></tr></thead><tbody>\n");
	for (i = 0; i < q->n; i++) {
		const pg_job *j = q->items[i];

		pg_buf_printf(out, "<tr class=\"window-pull\" data-pull=\"%lld\" data-place=\"%zu\">"
			      "<td>%zu</td><td><a href=\"/pulls/%lld\">#%lld</a></td><td class=\"tag\">",
			      (long long)j->id, i + 1, i + 1, (long long)j->id, (long long)j->id);
		pg_dash_html(out, "%s</td><td>", pg_dash_tag_name(j->tag));
		pg_dash_state_badge(out, j->state);
		pg_buf_puts(out, j->held ? "</td><td class=\"hold\"><span class=\"held\">held</span>"
			    "</td>" : "</td><td class=\"hold\"></td>");
		pg_buf_puts(out, "<td class=\"tested-on\">");
		tested_on(out, q, i);
		pg_buf_puts(out, "</td><td class=\"conflicts\">");
		conflicts_cell(out, q, j);
		if (eta[i] > 0) /* counted down on the page until the window changes */
			pg_buf_printf(out, "</td><td class=\"eta\" data-eta=\"%.0f\">", eta[i]);
		else
			pg_buf_puts(out, "</td><td class=\"eta\">");
		eta_words(out, eta[i]);
		pg_buf_puts(out, "</td></tr>\n");
	}
	pg_buf_puts(out, "</tbody></table></section>\n");
	free(eta);
}

void pg_dash_window_place(pg_buf *out, const pg_job_list *q, size_t i)
{
	const pg_job *j = q->items[i];

	pg_buf_printf(out, "<section id=\"window\"><h2>Merge window</h2>\n<p id=\"window-place\">"
		      "Place %zu of %zu in the <a href=\"/#window\">merge window</a>", i + 1, q->n);
	if (j->held)
		pg_buf_puts(out, ", <span class=\"held\">held</span>: the stack goes on without it "
			    "until it is released");
	pg_buf_puts(out, "; tested on: <span id=\"tested-on\">");
	tested_on(out, q, i);
	pg_buf_puts(out, "</span>.</p></section>\n");
}

/*
 * What approving the pull through approves, asked of the worker as the
 * API's GET /api/pulls/ID/through asks it: nothing is shown when that is
 * the pull alone (Approve does it), the reason when its stack is gone.
 */
static void through(pg_buf *out, pg_req *rq, const pg_job_list *q, const pg_job *j)
{
	int64_t *ids = NULL;
	size_t n = 0, i, k;
	int err;

	if ((err = pg_worker_through(rq->srv->worker, j->id, &ids, &n)) < 0) {
		if (err == PG_ECONFLICT)
			pg_dash_html(out, "<p class=\"through-none\" id=\"through-none\">%s</p>",
				     pg_error_last());
		pg_error_clear();
		return;
	}
	if (n > 1) {
		pg_buf_printf(out, "<div class=\"through\" id=\"through\"><p>Pull #%lld was tested on "
			      "the merges of the pulls under it: approving it through approves, in "
			      "order,</p><ol id=\"through-list\">", (long long)j->id);
		for (i = 0; i < n; i++) {
			pg_buf_printf(out, "<li data-pull=\"%lld\">", (long long)ids[i]);
			if ((k = pg_dash_window_find(q, ids[i])) < q->n)
				pull_link(out, q->items[k]);
			else
				pg_buf_printf(out, "<a href=\"/pulls/%lld\">#%lld</a>", (long long)ids[i],
					      (long long)ids[i]);
			pg_buf_puts(out, "</li>");
		}
		pg_buf_printf(out, "</ol><button type=\"button\" class=\"approve\" "
			      "id=\"approve-through\" data-action=\"approve-through\">Approve "
			      "through #%lld (%zu pulls)</button></div> ", (long long)j->id, n);
	}
	free(ids);
}

void pg_dash_window_actions(pg_buf *out, pg_req *rq, const pg_job_list *q, size_t i)
{
	const pg_job *j = q->items[i];

	if (pg_job_can_move(j->state, PG_JOB_APPROVING, PG_JOB_BY_MAINTAINER))
		through(out, rq, q, j);
	if (j->held)
		pg_buf_puts(out, "<button type=\"button\" class=\"release\" id=\"release\" "
			    "data-action=\"release\">Release</button> ");
	else
		pg_buf_puts(out, "<button type=\"button\" class=\"hold\" id=\"hold\" "
			    "data-action=\"hold\">Hold</button> ");
	if (i > 0)
		pg_buf_puts(out, "<button type=\"button\" class=\"up\" id=\"up\" data-action=\"up\">"
			    "Up</button> ");
	if (i + 1 < q->n)
		pg_buf_puts(out, "<button type=\"button\" class=\"down\" id=\"down\" "
			    "data-action=\"down\">Down</button> ");
}

void pg_dash_conflicts(pg_buf *out, const pg_job *j, const pg_job_list *q)
{
	size_t i, k = j->conflict_with ? pg_dash_window_find(q, j->conflict_with) : q->n;
	bool by_others = false;

	for (i = 0; i < q->n && !by_others; i++)
		by_others = q->items[i]->conflict_with == j->id;
	if (!j->conflict && !by_others)
		return;
	pg_buf_puts(out, "<section id=\"conflicts\"><h2>Conflicts</h2>\n");
	if (j->conflict)
		pg_dash_html(out, "<p class=\"conflict\" id=\"conflict\">Found as it entered the "
			     "window: it %s.</p>\n", j->conflict);
	if (k < q->n && j->state == PG_JOB_VERIFIED && !q->items[k]->held) {
		pg_buf_puts(out, "<p id=\"waits-behind\">It waits behind ");
		pull_link(out, q->items[k]);
		pg_buf_puts(out, ": tested now, its merge would fail. It goes on when that pull leaves "
			    "the window or is held; or hold or cancel one of them.</p>\n");
	}
	for (i = 0; i < q->n; i++) {
		if (q->items[i]->conflict_with != j->id)
			continue;
		pg_buf_puts(out, "<p class=\"conflicted-by\">");
		pull_link(out, q->items[i]);
		pg_dash_html(out, " %s.</p>\n", q->items[i]->conflict ? q->items[i]->conflict :
			     "conflicts with this pull");
	}
	pg_buf_puts(out, "</section>\n");
}

void pg_dash_why(pg_buf *out, const pg_job *j)
{
	if (!j->attribution)
		return;
	pg_dash_html(out, "<section id=\"why\"><h2>Why it failed</h2>\n<p class=\"attribution\" "
		     "id=\"attribution\">%s</p>\n", j->attribution);
	if (j->with_pull)
		pg_buf_printf(out, "<p>Together with <a id=\"with\" href=\"/pulls/%lld\">pull "
			      "#%lld</a>.</p>\n", (long long)j->with_pull, (long long)j->with_pull);
	pg_buf_puts(out, "</section>\n");
}
