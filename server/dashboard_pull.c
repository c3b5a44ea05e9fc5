/* dashboard_pull.c - a pull's page: its facts, its place in the merge window, decisions, live progress, stages, merge, KUnit log and attestation. */
#include "server/dashboard.h"
#include "common/error.h"
#include "common/fs.h"
#include "pipeline/attest.h"
#include "pipeline/kcidb.h"
#include "pipeline/ktap.h"
#include "policies/policy.h"
#include "server/config.h"
#include "verifier/mail.h"

#define MERGE_MSG_MAX ((size_t)64 << 10)
#define CONSOLE_MAX ((size_t)16 << 20)
/* A page stays readable (and small) whatever a console holds: the rest is in the log. */
#define KUNIT_ROWS 2000
#define SPLATS_SHOWN 20

static const pg_job_stage *stage_of(const pg_job *j, const char *name)
{
	size_t i;

	for (i = 0; i < j->nstages; i++)
		if (!strcmp(j->stages[i].name, name))
			return &j->stages[i];
	return NULL;
}

/* A log file the gate wrote, capped; an error when there is none (the message cleared). */
static int read_log(pg_buf *out, const pg_server *s, const char *path, size_t max)
{
	int err = PG_ENOTFOUND;

	pg_buf_init(out, max);
	if (pg_server_owns_log(s, path))
		err = pg_buf_read_file(out, path);
	if (err < 0)
		pg_error_clear();
	return err;
}

static void stages(pg_buf *out, const pg_job *j)
{
	size_t i;

	pg_buf_puts(out, "<section id=\"stages\"><h2>Stages</h2>\n");
	if (!j->nstages) {
		pg_buf_puts(out, "<p>No stage has run yet.</p></section>\n");
		return;
	}
	pg_buf_puts(out, "<table><thead><tr><th>stage</th><th>status</th><th>seconds</th>"
		    "<th>summary</th><th>log</th></tr></thead><tbody>\n");
	for (i = 0; i < j->nstages; i++) {
		const pg_job_stage *s = &j->stages[i];

		pg_dash_html(out, "<tr class=\"stage stage-%s\"><th>%s</th><td>%s</td>", s->status,
			     s->name, s->status);
		pg_buf_printf(out, "<td>%.1f</td>", s->seconds);
		pg_dash_html(out, "<td>%s</td><td>", s->summary);
		if (s->log) {
			pg_buf_printf(out, "<a href=\"/api/pulls/%lld/log?stage=", (long long)j->id);
			pg_dash_html(out, "%s\">log</a>", s->name);
		}
		pg_buf_puts(out, "</td></tr>\n");
	}
	pg_buf_puts(out, "</tbody></table></section>\n");
}

static void merge_preview(pg_buf *out, const pg_server *srv, const pg_job *j, const pg_json *report)
{
	const pg_job_stage *m = stage_of(j, "merge");
	pg_buf msg = PG_BUF_INIT;

	if (!j->has_merge && !m)
		return;
	pg_buf_puts(out, "<section id=\"merge\"><h2>Merge preview</h2>\n<dl class=\"facts\">");
	if (j->has_merge) {
		pg_buf_puts(out, "<dt>merge commit</dt><dd>");
		pg_dash_short_oid(out, true, &j->merge_commit);
		pg_buf_puts(out, "</dd><dt>parents</dt><dd>");
		pg_dash_short_oid(out, true, &j->merge_base);
		pg_buf_puts(out, " (the integration branch when it was tested) and ");
		pg_dash_short_id(out, pg_json_get_str(report, "tag_commit"));
		pg_buf_puts(out, " (the tag's commit)</dd>");
	}
	if (m)
		pg_dash_html(out, "<dt>merge stage</dt><dd>%s: %s</dd>", m->status, m->summary);
	pg_buf_puts(out, "</dl>\n");
	if (m && read_log(&msg, srv, m->log, MERGE_MSG_MAX) == 0)
		pg_dash_html(out, "<pre class=\"merge-message\">%s</pre>\n", msg.ptr);
	pg_buf_puts(out, "</section>\n");
	pg_buf_release(&msg);
}

static void kunit(pg_buf *out, const pg_server *srv, const pg_job *j)
{
	const pg_job_stage *b = stage_of(j, "boot");
	pg_boot_result *r = NULL;
	pg_buf log = PG_BUF_INIT;
	size_t i, shown = 0;

	if (!b)
		return;
	pg_buf_puts(out, "<section id=\"kunit\"><h2>KUnit results</h2>\n");
	if (read_log(&log, srv, b->log, CONSOLE_MAX) < 0 || pg_ktap_parse(&r, log.ptr, log.len) < 0) {
		pg_error_clear();
		pg_buf_puts(out, "<p>No console log.</p></section>\n");
		pg_buf_release(&log);
		return;
	}
	pg_buf_printf(out, "<p class=\"kunit-summary\">%zu passed, %zu failed, %zu skipped, "
		      "%zu crashed, %zu splats</p>\n", r->passed, r->failed, r->skipped, r->crashed,
		      r->nsplats);
	pg_buf_puts(out, "<table id=\"kunit-table\"><thead><tr><th>test</th><th>result</th>"
		    "<th>reason</th></tr></thead><tbody>\n");
	for (i = 0; i < r->ntests; i++) {
		const pg_ktap_test *t = &r->tests[i];

		if (t->has_subtests || shown++ >= KUNIT_ROWS)
			continue;
		pg_dash_html(out, "<tr class=\"ktap-%s\"><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			     pg_ktap_status_name(t->status), t->path, pg_ktap_status_name(t->status),
			     t->reason);
	}
	pg_buf_puts(out, "</tbody></table>\n");
	if (shown > KUNIT_ROWS)
		pg_buf_printf(out, "<p class=\"omitted\">%zu more tests: see the boot log.</p>\n",
			      shown - KUNIT_ROWS);
	for (i = 0; i < r->nsplats && i < SPLATS_SHOWN; i++)
		pg_dash_html(out, "<pre class=\"splat\">%s: %s</pre>\n",
			     pg_splat_kind_name(r->splats[i].kind), r->splats[i].text);
	if (r->nsplats > SPLATS_SHOWN)
		pg_buf_printf(out, "<p class=\"omitted\">%zu more splats: see the boot log.</p>\n",
			      r->nsplats - SPLATS_SHOWN);
	pg_buf_puts(out, "</section>\n");
	pg_boot_result_free(r);
	pg_buf_release(&log);
}

/*
 * The attestation of an approved pull: the note on its merge, checked as
 * `pullgate attest verify` does, against the service's configured key.
 */
static void attestation(pg_buf *out, const pg_server *srv, const pg_job *j)
{
	const pg_config *c = srv->config;
	const char *key = c->attest_key ? c->attest_key : srv->policy->attest_key;
	const char *home = c->attest_key ? c->attest_gnupg_home : srv->policy->attest_gnupg_home;
	pg_buf tree = PG_BUF_INIT, ghome = PG_BUF_INIT;
	pg_attest_result res;
	pg_json *st = NULL;
	const char *verdict;
	char merge[PG_OID_HEXSZ + 1];

	if (j->state != PG_JOB_APPROVED || !j->has_merge)
		return;
	pg_oid_tohex(merge, &j->merge_commit);
	pg_attest_result_init(&res);
	pg_buf_puts(out, "<section id=\"attestation\"><h2>Attestation</h2>\n");
	if (!key) {
		pg_buf_puts(out, "<p class=\"attest attest-none\" id=\"attest-verdict\">none: no "
			    "attestation key is configured (attestation.key)</p>\n");
		goto done;
	}
	if (c->tree)
		pg_buf_puts(&tree, c->tree);
	else
		pg_buf_printf(&tree, "%s/linux", srv->home);
	if (home)
		pg_buf_puts(&ghome, home);
	else
		pg_buf_printf(&ghome, "%s/gnupg", srv->home);
	/* the service's home may hold other keys: only its own signs its notes */
	if (pg_attest_verify(&res, tree.ptr, merge, key, NULL, ghome.ptr, NULL) < 0) {
		pg_dash_html(out, "<p class=\"attest attest-error\" id=\"attest-verdict\">not checked: "
			     "%s</p>\n", pg_error_last());
		pg_error_clear();
		goto done;
	}
	verdict = res.status == PG_ATTEST_VALID ? "valid" :
		  res.status == PG_ATTEST_INVALID ? "invalid" : "none";
	pg_dash_html(out, "<p class=\"attest attest-%s\" id=\"attest-verdict\">%s", verdict, verdict);
	if (res.status == PG_ATTEST_VALID)
		pg_dash_html(out, ": signed by key <code>%s</code>%s", res.fingerprint,
			     res.simulated ? " (SIMULATED: stand-in scripts ran, nothing was really "
			     "built or booted)" : NULL);
	pg_dash_html(out, "; %s</p>\n", res.why.ptr);
	if (res.statement.len && pg_json_parse(&st, res.statement.ptr, res.statement.len) == 0)
		pg_dash_html(out, "<dl class=\"facts\"><dt>signed at</dt><dd>%s</dd><dt>approved by</dt>"
			     "<dd>%s</dd><dt>report sha256</dt><dd><code>%s</code></dd></dl>\n",
			     pg_json_get_str(st, "time"), pg_json_get_str(st, "approved_by"),
			     pg_json_get_str(pg_json_get(st, "report"), "sha256"));
	pg_error_clear();
	if (res.statement.len)
		pg_dash_html(out, "<details><summary>the signed statement (refs/notes/pullgate)</summary>"
			     "<pre class=\"statement\">%s</pre></details>\n", res.statement.ptr);
done:
	pg_buf_puts(out, "</section>\n");
	pg_json_free(st);
	pg_attest_result_release(&res);
	pg_buf_release(&tree);
	pg_buf_release(&ghome);
}

/*
 * A fact after how the pull came in: the pull mail's thread on lore, its
 * URL shown whole (the reader sees where it goes); nothing when the mail's
 * Message-Id makes no link.  The <dd> is closed by the next fact.
 */
static void lore_link(pg_buf *out, const pg_job *j)
{
	pg_buf url = PG_BUF_INIT;

	if (j->mail && pg_mail_thread_link(&url, NULL, j->mail, j->mail_len) == 1)
		pg_dash_html(out, "</dd><dt>thread</dt><dd><a id=\"lore\" href=\"%s\" "
			     "rel=\"noreferrer\">%s</a>", url.ptr, url.ptr);
	pg_error_clear();
	pg_buf_release(&url);
}

/*
 * A fact after the tag object: the transparency log's record of its push,
 * as the report names it (report.transparency): its Message-Id, linked
 * to the record in the log's web view when one is configured
 * (repositories.transparency-web) and the Message-Id makes a link, its
 * date and the account that pushed; nothing when the report names none.
 * The <dd> is closed by the next fact.
 */
static void tlog_record(pg_buf *out, const pg_server *srv, const pg_json *report)
{
	const pg_json *t = pg_json_get(report, "transparency");
	const char *id = pg_json_get_str(t, "message_id"), *date = pg_json_get_str(t, "date");
	const char *web = srv->config->tlog_web;
	pg_buf url = PG_BUF_INIT;

	if (pg_json_type(t) != PG_JSON_OBJECT)
		return;
	pg_buf_puts(out, "</dd><dt>push record</dt><dd id=\"push-record\">");
	if (web && pg_mail_link(&url, web, id) == 1)
		pg_dash_html(out, "<a id=\"tlog\" href=\"%s\" rel=\"noreferrer\">%s</a>", url.ptr,
			     id);
	else
		pg_dash_html(out, "<span id=\"tlog\">%s</span>", id ? id : "(no Message-Id)");
	pg_error_clear();
	if (date)
		pg_dash_html(out, " of %s", date);
	pg_dash_html(out, ", pushed by %s", pg_json_get_str(t, "pushed_by"));
	if (pg_json_get_bool(t, "certified"))
		pg_buf_puts(out, ", certified by a signed push");
	pg_buf_release(&url);
}

/*
 * A fact after the report's: the checkout id the pull's KCIDB document
 * carries, from the job row's ids (no report parsed for a page), linked
 * to the document; nothing before a run finished.  The <dd> is closed by
 * the caller.
 */
static void kcidb_link(pg_buf *out, const pg_server *srv, const pg_job *j)
{
	pg_buf id = PG_BUF_INIT, url = PG_BUF_INIT;

	if (j->has_verdict && j->has_tag_object &&
	    pg_kcidb_checkout_id(&id, srv->config->kcidb_origin, &j->tag_object,
				 j->has_merge ? &j->merge_base : NULL) == 0 &&
	    pg_buf_printf(&url, "/api/pulls/%lld/kcidb", (long long)j->id) == 0)
		pg_dash_html(out, "</dd><dt>KCIDB</dt><dd><a id=\"kcidb\" href=\"%s\">%s</a>",
			     url.ptr, id.ptr);
	pg_error_clear();
	pg_buf_release(&id);
	pg_buf_release(&url);
}

/*
 * A fact after the KCIDB link: what became of the pull's submission
 * (kcidb.submit), when it has one.  The <dd> is closed by the caller.
 */
static void kcidb_submission(pg_buf *out, pg_server *srv, const pg_job *j)
{
	pg_submission sub;

	if (pg_store_submission(&sub, pg_server_reader(srv), j->id) < 0) {
		pg_error_clear();
		return;
	}
	pg_buf_puts(out, "</dd><dt>KCIDB submission</dt><dd id=\"kcidb-submission\">");
	if (!strcmp(sub.state, "sent"))
		pg_buf_printf(out, "KCIDB: sent (%u)", sub.status);
	else if (!strcmp(sub.state, "failed"))
		pg_dash_html(out, "KCIDB: failed: %s", sub.note ? sub.note : "");
	else if (!strcmp(sub.state, "retrying"))
		pg_dash_html(out, "KCIDB: waiting to retry (%u attempt%s: %s)", sub.tries,
			     sub.tries == 1 ? "" : "s", sub.note ? sub.note : "");
	else
		pg_buf_puts(out, "KCIDB: queued to be sent");
	pg_submission_release(&sub);
}

/* The states of the pulls in the merge window (server/store.h, pg_store_queue). */
static bool in_window(enum pg_job_state st)
{
	return st == PG_JOB_VERIFIED || st == PG_JOB_MERGING || st == PG_JOB_BUILDING ||
	       st == PG_JOB_BOOTING || st == PG_JOB_WAITING || st == PG_JOB_APPROVING;
}

/* window: the merge window's queue, and at place the pull's place in it (window->n: none). */
static void actions(pg_buf *out, pg_req *rq, const pg_job *j, const pg_job_list *window,
		    size_t place)
{
	pg_buf user = PG_BUF_INIT;
	bool in = pg_req_session(rq, &user, NULL) == 0;
	enum pg_job_state st = j->state;
	bool waiting, can_reject, can_cancel;

	waiting = pg_job_can_move(st, PG_JOB_APPROVING, PG_JOB_BY_MAINTAINER);
	can_reject = pg_job_can_move(st, PG_JOB_REJECTED, PG_JOB_BY_MAINTAINER);
	/* what does not run is cancelled at once; what runs, stopped by its worker */
	can_cancel = pg_job_can_move(st, PG_JOB_CANCELLED, PG_JOB_BY_MAINTAINER) ||
		     pg_job_state_is_running(st);
	pg_buf_puts(out, "<section id=\"actions\">");
	if (!in && (waiting || can_cancel || place < window->n))
		pg_buf_puts(out, "<p><a href=\"/login\">Log in</a> to decide on this pull.</p>");
	if (in && waiting)
		pg_buf_puts(out, "<button type=\"button\" class=\"approve\" id=\"approve\" "
			    "data-action=\"approve\">Approve and merge</button> ");
	if (in && can_reject)
		pg_buf_puts(out, "<button type=\"button\" class=\"reject\" id=\"reject\" "
			    "data-action=\"reject\">Reject</button> ");
	if (in && can_cancel)
		pg_buf_puts(out, "<button type=\"button\" class=\"cancel\" id=\"cancel\" "
			    "data-action=\"cancel\">Cancel</button> ");
	if (in && place < window->n)
		pg_dash_window_actions(out, rq, window, place);
	pg_buf_puts(out, "<p id=\"action-result\" role=\"status\"></p></section>\n");
	pg_buf_release(&user);
}

int pg_page_pull(pg_req *rq, pg_resp *rs)
{
	pg_job_list window = { NULL, 0, 0 };
	pg_job *j = NULL;
	pg_json *report = NULL;
	pg_buf *out = &rs->body, title = PG_BUF_INIT, attrs = PG_BUF_INIT;
	enum pg_job_state st;
	size_t i, place;
	int err, stand_ins = -1;

	err = pg_store_get(&j, pg_server_reader(rq->srv), rq->id);
	if (err == PG_ENOTFOUND)
		return pg_resp_error(rs, 404, "pull %lld does not exist", (long long)rq->id);
	if (err < 0)
		return err;
	/* a pull verify accepted and nobody decided is in the window: its place, what is above it */
	if (j->queue_rank && in_window(j->state) &&
	    (err = pg_server_queue(&window, rq->srv)) < 0) {
		pg_job_free(j);
		return err;
	}
	place = pg_dash_window_find(&window, j->id);
	/* a report that does not parse is not shown; the rest of the page is */
	if (j->report && pg_json_parse(&report, j->report, strlen(j->report)) < 0)
		pg_error_clear();
	st = j->state;
	pg_buf_printf(&title, "#%lld %s", (long long)j->id, pg_dash_tag_name(j->tag));
	pg_buf_printf(&attrs, "data-page=\"pull\" data-pull=\"%lld\" data-final=\"%s\"",
		      (long long)j->id, pg_job_state_is_final(st) ? "yes" : "no");
	/* app.js shows the badge when a run it watches starts building with stand-ins */
	if (!pg_job_state_is_final(st)) {
		stand_ins = pg_dash_stand_ins(rq->srv);
		if (stand_ins)
			pg_buf_puts(&attrs, " data-stand-ins=\"yes\"");
	}
	pg_dash_page_start(out, rq, title.ptr, attrs.ptr);
	pg_buf_printf(out, "<h1>#%lld ", (long long)j->id);
	pg_dash_html(out, "<span class=\"tag\">%s</span> ", pg_dash_tag_name(j->tag));
	pg_dash_state_badge(out, j->state);
	if (pg_dash_simulated(rq->srv, j, &stand_ins))
		pg_dash_simulated_badge(out, "simulated");
	pg_dash_html(out, "</h1>\n<p class=\"lede\" id=\"message\">%s</p>\n<dl class=\"facts\">"
		     "<dt>repository</dt><dd>%s", j->message, j->repo_name ? j->repo_name : j->repo);
	if (j->repo_name && strcmp(j->repo_name, j->repo))
		pg_dash_html(out, " (fetched from %s)", j->repo);
	pg_dash_html(out, "</dd><dt>came in by</dt><dd>%s",
		     j->kind == PG_JOB_MAIL ? "pull-request mail" : "push record");
	if (j->sender)
		pg_dash_html(out, " from %s", j->sender);
	lore_link(out, j);
	pg_dash_html(out, "</dd><dt>verdict</dt><dd id=\"verdict\">%s",
		     j->has_verdict ? pg_job_verdict_name(j->verdict) : "not yet");
	pg_buf_printf(out, " (%d errors, %d warnings)</dd><dt>commits</dt><dd>%d (%d merges)</dd>"
		      "<dt>tag object</dt><dd>", j->errors, j->warnings, j->commits, j->merges);
	pg_dash_short_oid(out, j->has_tag_object, &j->tag_object);
	tlog_record(out, rq->srv, report);
	pg_buf_printf(out, "</dd><dt>report</dt><dd><a href=\"/api/pulls/%lld\">JSON</a>",
		      (long long)j->id);
	kcidb_link(out, rq->srv, j);
	kcidb_submission(out, rq->srv, j);
	pg_buf_puts(out, "</dd></dl>\n");
	if (report)
		pg_dash_summary(out, report);
	pg_dash_why(out, j);
	pg_dash_conflicts(out, j, &window);
	if (place < window.n)
		pg_dash_window_place(out, &window, place);
	actions(out, rq, j, &window, place);
	pg_buf_puts(out, "<section id=\"live\"><h2>Live progress</h2>"
		    "<div id=\"status\" hidden><progress id=\"status-bar\" max=\"1\"></progress> "
		    "<span id=\"status-text\"></span></div><ol id=\"progress\"></ol></section>\n");
	stages(out, j);
	if (report)
		pg_dash_findings(out, report);
	merge_preview(out, rq->srv, j, report);
	if (report) {
		pg_dash_comparison(out, report);
		pg_dash_selection(out, report);
	}
	kunit(out, rq->srv, j);
	if (report) {
		pg_dash_provenance(out, report);
		pg_dash_signatures(out, report);
	}
	attestation(out, rq->srv, j);
	if (j->ndecisions) {
		pg_buf_puts(out, "<section id=\"decisions\"><h2>Decisions</h2><ul>");
		for (i = 0; i < j->ndecisions; i++) {
			pg_buf_puts(out, "<li>");
			pg_dash_when(out, j->decisions[i].at);
			pg_dash_html(out, ": <span class=\"who\">%s</span> %s", j->decisions[i].user,
				     j->decisions[i].action);
			if (j->decisions[i].note)
				pg_dash_html(out, " &mdash; %s", j->decisions[i].note);
			pg_buf_puts(out, "</li>");
		}
		pg_buf_puts(out, "</ul></section>\n");
	}
	pg_json_free(report);
	pg_job_free(j);
	pg_job_list_release(&window);
	pg_buf_release(&title);
	pg_buf_release(&attrs);
	return pg_dash_page_end(out, rs);
}
