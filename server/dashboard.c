/* dashboard.c - the maintainer's HTML pages, rendered on the server with every stored string escaped. */
#include "server/assets.h"
#include "server/web.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/json.h"
#include "common/sanitize.h"
#include "pipeline/attest.h"
#include "pipeline/ktap.h"
#include "policies/policy.h"
#include "server/config.h"

#include <time.h>

#define QUEUE_PAGE 50
#define MERGE_MSG_MAX ((size_t)64 << 10)
#define CONSOLE_MAX ((size_t)16 << 20)
/* A page stays readable (and small) whatever a console holds: the rest is in the log. */
#define KUNIT_ROWS 2000
#define SPLATS_SHOWN 20

/* Append s escaped for HTML (after making it valid UTF-8); NULL appends nothing. */
static void esc(pg_buf *out, const char *s)
{
	pg_buf clean = PG_BUF_INIT;

	if (!s)
		return;
	if (pg_sanitize_utf8(&clean, s, strlen(s)) == 0)
		pg_html_escape(out, clean.ptr, clean.len);
	pg_buf_release(&clean);
}

/*
 * Append fmt with each %s replaced by its argument escaped for HTML (NULL:
 * nothing); %% is a %, and no other conversion is known.  The attribute
 * lets the compiler check that every argument is a string.
 */
static void html(pg_buf *out, const char *fmt, ...) PG_PRINTF(2, 3);
static void html(pg_buf *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	while (*fmt) {
		size_t n = strcspn(fmt, "%");

		pg_buf_put(out, fmt, n);
		fmt += n;
		if (!*fmt)
			break;
		if (fmt[1] == 's')
			esc(out, va_arg(ap, const char *));
		else if (fmt[1])
			pg_buf_putc(out, fmt[1]);
		fmt += fmt[1] ? 2 : 1;
	}
	va_end(ap);
}

static void short_id(pg_buf *out, const char *hex)
{
	if (hex)
		pg_buf_printf(out, "<code title=\"%.40s\">%.12s</code>",
			      strspn(hex, "0123456789abcdef") >= 40 ? hex : "",
			      strspn(hex, "0123456789abcdef") >= 12 ? hex : "");
}

static const char *tag_name(const char *tag)
{
	return tag && !strncmp(tag, "refs/tags/", 10) ? tag + 10 : tag;
}

static void when(pg_buf *out, int64_t t)
{
	char s[32];
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(s, sizeof(s), "%Y-%m-%d %H:%M:%S UTC", &tm);
	pg_buf_puts(out, s);
}

/* The page head, the header bar with the maintainer's session, and <main>. */
static void page_start(pg_buf *out, pg_req *rq, const char *title, const char *body_attrs)
{
	pg_buf user = PG_BUF_INIT, csrf = PG_BUF_INIT;
	bool in = pg_req_session(rq, &user, &csrf) == 0;

	pg_error_clear();
	html(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	     "<title>%s - pullgate</title>\n<link rel=\"stylesheet\" href=\"/static/style.css\">\n"
	     "<script src=\"/static/app.js\" defer></script>\n", title);
	if (in)
		html(out, "<meta name=\"csrf-token\" content=\"%s\">\n", csrf.ptr);
	pg_buf_printf(out, "</head>\n<body %s>\n<header><a class=\"brand\" href=\"/\">pullgate</a>"
		      "<nav><a href=\"/\">queue</a> <a href=\"/metrics\">metrics</a> ",
		      body_attrs ? body_attrs : "");
	if (in)
		html(out, "<span class=\"user\" id=\"user\">%s</span> "
		     "<button type=\"button\" id=\"logout\">log out</button>", user.ptr);
	else
		pg_buf_puts(out, "<a id=\"login-link\" href=\"/login\">maintainer log in</a>");
	pg_buf_puts(out, "</nav></header>\n<main>\n");
	pg_buf_release(&user);
	pg_buf_release_secret(&csrf);
}

static int page_end(pg_buf *out, pg_resp *rs)
{
	pg_buf_puts(out, "</main>\n<footer>pullgate " PG_VERSION "</footer>\n</body></html>\n");
	rs->status = 200;
	rs->type = "text/html; charset=utf-8";
	return 0;
}

static void state_badge(pg_buf *out, const char *state)
{
	html(out, "<span class=\"state state-%s\" data-state=\"%s\">%s</span>", state, state, state);
}

/* Whether a stored report says stand-in scripts built and booted it. */
static bool simulated(const char *report_text)
{
	pg_json *report = NULL;
	bool yes;

	if (!report_text || pg_json_parse(&report, report_text, strlen(report_text)) < 0) {
		pg_error_clear();
		return false;
	}
	yes = pg_json_get_bool(report, "simulated");
	pg_json_free(report);
	return yes;
}

static void simulated_badge(pg_buf *out)
{
	pg_buf_puts(out, " <span class=\"simulated\" id=\"simulated\" title=\"stand-in build and "
		    "boot scripts ran: nothing was really compiled or booted\">simulated</span>");
}

/* --- the queue ------------------------------------------------------------------ */

int pg_page_queue(pg_req *rq, pg_resp *rs)
{
	pg_job_list l;
	pg_buf *out = &rs->body;
	const char *state = pg_req_arg(rq, "state");
	enum pg_job_state st;
	size_t offset = 0, i;
	int err;

	if (state && pg_job_state_from_name(&st, state) < 0)
		return pg_resp_error(rs, 400, "unknown state");
	if (pg_req_count(&offset, pg_req_arg(rq, "offset"), (size_t)1 << 40) < 0)
		return pg_resp_error(rs, 400, "offset wants a count");
	if ((err = pg_store_list(pg_server_reader(rq->srv), &l, state, offset, QUEUE_PAGE)) < 0)
		return err;
	page_start(out, rq, "queue", "data-page=\"queue\"");
	pg_buf_printf(out, "<h1>Pulls</h1>\n<p class=\"filters\">%s all</a>",
		      state ? "<a href=\"/\">" : "<a class=\"current\" href=\"/\">");
	for (st = 0; st < PG_JOB__COUNT; st++) {
		const char *name = pg_job_state_name(st);

		pg_buf_printf(out, " <a %shref=\"/?state=%s\">%s</a>",
			      state && !strcmp(state, name) ? "class=\"current\" " : "", name, name);
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
		state_badge(out, j->state);
		pg_buf_printf(out, "</td><td class=\"tag\"><a href=\"/pulls/%lld\">", (long long)j->id);
		html(out, "%s</a></td><td class=\"repo\">%s", tag_name(j->tag),
		     j->repo_name ? j->repo_name : j->repo);
		pg_buf_printf(out, "</td><td>%d</td><td>%d errors, %d warnings</td><td>", j->commits,
			      j->errors, j->warnings);
		when(out, j->updated);
		html(out, "</td><td class=\"message\">%s</td></tr>\n", j->message);
	}
	if (l.n)
		pg_buf_puts(out, "</tbody></table>\n");
	if (offset + l.n < l.total)
		pg_buf_printf(out, "<p><a href=\"/?offset=%zu%s%s\">older</a></p>\n", offset + l.n,
			      state ? "&amp;state=" : "", state ? state : "");
	pg_job_list_release(&l);
	return page_end(out, rs);
}

/* --- a pull ------------------------------------------------------------------------ */

/*
 * The story first (docs/report-schema.md, "summary"): what the pull
 * re-creates and should carry, and the verdict counted in root causes.  A
 * report from before the summary existed shows none.
 */
static void summary_block(pg_buf *out, const pg_json *report)
{
	const pg_json *s = pg_json_get(report, "summary");
	const char *text = pg_json_get_str(s, "text"), *verdict = pg_json_get_str(s, "verdict");

	if (!text)
		return;
	html(out, "<section id=\"summary\"><h2>Summary</h2><p class=\"story\">%s</p>", text);
	if (verdict)
		html(out, "<p class=\"roots\">%s</p>", verdict);
	pg_buf_puts(out, "</section>\n");
}

/* A finding's details, a row each: the field, the pull's copy, upstream's original. */
static void details(pg_buf *out, const pg_json *list)
{
	const pg_json *d;
	size_t i;

	for (i = 0; (d = pg_json_at(list, i)); i++)
		html(out, "<tr><th>%s</th><td class=\"pull\"><pre>%s</pre></td>"
		     "<td class=\"upstream\"><pre>%s</pre></td></tr>\n", pg_json_get_str(d, "field"),
		     pg_json_get_str(d, "pull"), pg_json_get_str(d, "upstream"));
}

/* One rewritten commit: the fields that differ, the pull's copy beside upstream's original. */
static void rewritten(pg_buf *out, const pg_json *f)
{
	const char *subject = pg_json_get_str(f, "subject");
	bool merge = subject && !strncmp(subject, "Merge ", 6);

	pg_buf_printf(out, "<article class=\"rewritten%s\">\n", merge ? " rewritten-merge" : "");
	html(out, "<h4>%s</h4>\n<table class=\"diff\"><thead><tr><th>field</th><th>pull copy ", subject);
	short_id(out, pg_json_get_str(f, "commit"));
	pg_buf_puts(out, "</th><th>upstream original ");
	short_id(out, pg_json_get_str(f, "upstream"));
	pg_buf_puts(out, "</th></tr></thead><tbody>\n");
	details(out, pg_json_get(f, "details"));
	pg_buf_puts(out, "</tbody></table></article>\n");
}

static void other_finding(pg_buf *out, const pg_json *f)
{
	const char *severity = pg_json_get_str(f, "severity"), *subject = pg_json_get_str(f, "subject");

	html(out, "<li class=\"finding sev-%s\"><span class=\"sev\">%s</span> "
	     "<span class=\"check\">%s</span> ", severity, severity, pg_json_get_str(f, "check"));
	short_id(out, pg_json_get_str(f, "commit"));
	if (subject)
		html(out, " <span class=\"subject\">%s</span>", subject);
	html(out, "<div class=\"message\">%s</div>", pg_json_get_str(f, "message"));
	if (pg_json_len(pg_json_get(f, "details"))) {
		pg_buf_puts(out, "<table class=\"details\"><tbody>");
		details(out, pg_json_get(f, "details"));
		pg_buf_puts(out, "</tbody></table>");
	}
	pg_buf_puts(out, "</li>\n");
}

/* What the store left out of a large report (server/store_report.c): counted, not shown. */
static void omitted(pg_buf *out, const pg_json *stored)
{
	const pg_json *list = pg_json_get(stored, "omitted"), *o;
	size_t i;

	if (!stored)
		return;
	pg_buf_puts(out, "<div class=\"omitted\" id=\"omitted\"><p>This report is too large to keep "
		    "whole: ");
	if (pg_json_len(list)) {
		pg_buf_printf(out, "the first %lld findings of each check and severity are kept, and "
			      "these are only counted:</p><ul>",
			      (long long)pg_json_int(pg_json_get(stored, "findings_per_check"), 0));
		for (i = 0; (o = pg_json_at(list, i)); i++) {
			pg_buf_printf(out, "<li><span class=\"count\">%lld</span> more ",
				      (long long)pg_json_int(pg_json_get(o, "count"), 0));
			html(out, "<span class=\"check\">%s</span> %s findings</li>",
			     pg_json_get_str(o, "check"), pg_json_get_str(o, "severity"));
		}
		pg_buf_puts(out, "</ul>");
	} else
		pg_buf_puts(out, "the findings are kept without their details.</p>");
	pg_buf_puts(out, "</div>\n");
}

static void findings(pg_buf *out, const pg_json *report)
{
	const pg_json *list = pg_json_get(report, "findings"), *f;
	size_t i, nrw = 0, nmerges = 0, nother = 0;

	for (i = 0; (f = pg_json_at(list, i)); i++) {
		const char *s = pg_json_get_str(f, "subject");

		if (pg_json_get_str(f, "check") && !strcmp(pg_json_get_str(f, "check"), "rewritten-upstream")) {
			nrw++;
			nmerges += s && !strncmp(s, "Merge ", 6);
		} else
			nother++;
	}
	pg_buf_printf(out, "<section id=\"findings\"><h2>Findings</h2>\n");
	omitted(out, pg_json_get(report, "stored"));
	if (!nrw && !nother && !pg_json_len(pg_json_get(pg_json_get(report, "stored"), "omitted")))
		pg_buf_puts(out, "<p class=\"clean\">No findings.</p>\n");
	if (nrw) {
		pg_buf_printf(out, "<section id=\"rewritten\"><h3>%zu rewritten upstream commit%s, "
			      "%zu of them merge%s</h3>\n<p>These commits carry an upstream commit's "
			      "author, date and message under a new id: the pull re-created them.</p>\n",
			      nrw, nrw == 1 ? "" : "s", nmerges, nmerges == 1 ? "" : "s");
		if (nmerges) {
			pg_buf_puts(out, "<h4>Rewritten maintainer merges</h4>\n<ul id=\"rewritten-merges\">");
			for (i = 0; (f = pg_json_at(list, i)); i++) {
				const char *s = pg_json_get_str(f, "subject");

				if (strcmp(pg_json_get_str(f, "check") ? pg_json_get_str(f, "check") : "", "rewritten-upstream") ||
				    !s || strncmp(s, "Merge ", 6))
					continue;
				pg_buf_puts(out, "<li>");
				short_id(out, pg_json_get_str(f, "commit"));
				pg_buf_puts(out, " copies ");
				short_id(out, pg_json_get_str(f, "upstream"));
				html(out, " <span class=\"subject\">%s</span></li>\n", s);
			}
			pg_buf_puts(out, "</ul>\n");
		}
		for (i = 0; (f = pg_json_at(list, i)); i++)
			if (pg_json_get_str(f, "check") && !strcmp(pg_json_get_str(f, "check"), "rewritten-upstream"))
				rewritten(out, f);
		pg_buf_puts(out, "</section>\n");
	}
	if (nother) {
		pg_buf_puts(out, "<h3>Other findings</h3>\n<ul class=\"findings\">\n");
		for (i = 0; (f = pg_json_at(list, i)); i++)
			if (!pg_json_get_str(f, "check") || strcmp(pg_json_get_str(f, "check"), "rewritten-upstream"))
				other_finding(out, f);
		pg_buf_puts(out, "</ul>\n");
	}
	pg_buf_puts(out, "</section>\n");
}

static void signatures(pg_buf *out, const pg_json *report)
{
	const pg_json *list = pg_json_get(report, "signatures"), *s;
	size_t i;

	if (!pg_json_len(list))
		return;
	pg_buf_puts(out, "<section id=\"signatures\"><h2>Signatures</h2><table><thead><tr><th>kind</th>"
		    "<th>tag</th><th>tagger</th><th>status</th><th>key</th></tr></thead><tbody>\n");
	for (i = 0; (s = pg_json_at(list, i)); i++)
		html(out, "<tr><td>%s</td><td>%s</td><td>%s</td><td class=\"sig-%s\">%s</td>"
		     "<td><code>%s</code></td></tr>\n", pg_json_get_str(s, "kind"),
		     pg_json_get_str(s, "tag"), pg_json_get_str(s, "tagger"),
		     pg_json_get_str(s, "status"), pg_json_get_str(s, "status"),
		     pg_json_get_str(s, "fingerprint"));
	pg_buf_puts(out, "</tbody></table></section>\n");
}

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

		html(out, "<tr class=\"stage stage-%s\"><th>%s</th><td>%s</td>", s->status, s->name,
		     s->status);
		pg_buf_printf(out, "<td>%.1f</td>", s->seconds);
		html(out, "<td>%s</td><td>", s->summary);
		if (s->log) {
			pg_buf_printf(out, "<a href=\"/api/pulls/%lld/log?stage=", (long long)j->id);
			html(out, "%s\">log</a>", s->name);
		}
		pg_buf_puts(out, "</td></tr>\n");
	}
	pg_buf_puts(out, "</tbody></table></section>\n");
}

static void merge_preview(pg_buf *out, const pg_server *srv, const pg_job *j, const pg_json *report)
{
	const pg_job_stage *m = stage_of(j, "merge");
	pg_buf msg = PG_BUF_INIT;

	if (!j->merge_commit && !m)
		return;
	pg_buf_puts(out, "<section id=\"merge\"><h2>Merge preview</h2>\n<dl class=\"facts\">");
	if (j->merge_commit) {
		pg_buf_puts(out, "<dt>merge commit</dt><dd>");
		short_id(out, j->merge_commit);
		pg_buf_puts(out, "</dd><dt>parents</dt><dd>");
		short_id(out, j->merge_base);
		pg_buf_puts(out, " (the integration branch when it was tested) and ");
		short_id(out, pg_json_get_str(report, "tag_commit"));
		pg_buf_puts(out, " (the tag's commit)</dd>");
	}
	if (m)
		html(out, "<dt>merge stage</dt><dd>%s: %s</dd>", m->status, m->summary);
	pg_buf_puts(out, "</dl>\n");
	if (m && read_log(&msg, srv, m->log, MERGE_MSG_MAX) == 0)
		html(out, "<pre class=\"merge-message\">%s</pre>\n", msg.ptr);
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
		html(out, "<tr class=\"ktap-%s\"><td>%s</td><td>%s</td><td>%s</td></tr>\n",
		     pg_ktap_status_name(t->status), t->path, pg_ktap_status_name(t->status), t->reason);
	}
	pg_buf_puts(out, "</tbody></table>\n");
	if (shown > KUNIT_ROWS)
		pg_buf_printf(out, "<p class=\"omitted\">%zu more tests: see the boot log.</p>\n",
			      shown - KUNIT_ROWS);
	for (i = 0; i < r->nsplats && i < SPLATS_SHOWN; i++)
		html(out, "<pre class=\"splat\">%s: %s</pre>\n", pg_splat_kind_name(r->splats[i].kind),
		     r->splats[i].text);
	if (r->nsplats > SPLATS_SHOWN)
		pg_buf_printf(out, "<p class=\"omitted\">%zu more splats: see the boot log.</p>\n",
			      r->nsplats - SPLATS_SHOWN);
	pg_buf_puts(out, "</section>\n");
	pg_boot_result_free(r);
	pg_buf_release(&log);
}

static void counts_cell(pg_buf *out, const pg_json *c)
{
	static const char *const keys[] = { "passed", "failed", "skipped", "crashed" };
	int64_t n;
	size_t i;

	if (pg_json_get_int(c, "passed", &n) < 0) {
		pg_buf_puts(out, "<td class=\"absent\">did not report</td>");
		return;
	}
	pg_buf_puts(out, "<td>");
	for (i = 0; i < PG_ARRAY_SIZE(keys); i++) {
		n = 0;
		pg_json_get_int(c, keys[i], &n);
		pg_buf_printf(out, "%s%lld %s", i ? ", " : "", (long long)n, keys[i]);
	}
	pg_buf_puts(out, "</td>");
}

/* The KUnit suites on the base and on the merge, and the base's boot in one line. */
static void comparison(pg_buf *out, const pg_json *report)
{
	const pg_json *list = pg_json_get(report, "suites"), *s;
	size_t i;

	if (!pg_json_len(list) && !pg_json_get_str(report, "base_boot"))
		return;
	pg_buf_puts(out, "<section id=\"base-vs-merge\"><h2>KUnit: base against merge</h2>\n");
	if (pg_json_get_str(report, "base_boot"))
		html(out, "<p class=\"base-boot\">the base's boot: %s</p>\n",
		     pg_json_get_str(report, "base_boot"));
	pg_buf_puts(out, "<table id=\"suites\"><thead><tr><th>suite</th><th>base</th><th>merge</th>"
		    "<th>verdict</th></tr></thead><tbody>\n");
	for (i = 0; (s = pg_json_at(list, i)); i++) {
		html(out, "<tr class=\"suite suite-%s\"><th>%s</th>", pg_json_get_str(s, "verdict"),
		     pg_json_get_str(s, "name"));
		counts_cell(out, pg_json_get(s, "base"));
		counts_cell(out, pg_json_get(s, "merge"));
		html(out, "<td>%s</td></tr>\n", pg_json_get_str(s, "verdict"));
	}
	pg_buf_puts(out, "</tbody></table></section>\n");
}

/* A suite's row of the report's base-against-merge table, or NULL. */
static const pg_json *suite_row(const pg_json *report, const char *name)
{
	const pg_json *s;
	size_t i;

	for (i = 0; (s = pg_json_at(pg_json_get(report, "suites"), i)); i++)
		if (pg_json_get_str(s, "name") && !strcmp(pg_json_get_str(s, "name"), name))
			return s;
	return NULL;
}

/* The pull-aware KUnit selection: each option, what selected it, its suites on base and merge. */
static void selection(pg_buf *out, const pg_json *report)
{
	const pg_json *sel = pg_json_get(report, "selection"), *o, *name;
	size_t i, k;

	if (!pg_json_get_str(sel, "note"))
		return;
	html(out, "<section id=\"selection\"><h2>KUnit selection</h2>\n<p class=\"note\">%s</p>\n",
	     pg_json_get_str(sel, "note"));
	if (!pg_json_len(pg_json_get(sel, "options"))) {
		pg_buf_puts(out, "</section>\n");
		return;
	}
	pg_buf_puts(out, "<table id=\"selected\"><thead><tr><th>option</th><th>status</th>"
		    "<th>selected by</th><th>suite</th><th>base</th><th>merge</th><th>verdict</th>"
		    "</tr></thead><tbody>\n");
	for (i = 0; (o = pg_json_at(pg_json_get(sel, "options"), i)); i++) {
		const pg_json *suites = pg_json_get(o, "suites");
		size_t n = pg_json_len(suites);

		html(out, "<tr class=\"selected selected-%s\"><th>%s</th><td>%s",
		     pg_json_get_str(o, "status"), pg_json_get_str(o, "option"),
		     pg_json_get_str(o, "status"));
		if (pg_json_get_str(o, "reason"))
			html(out, "<div class=\"reason\">%s</div>", pg_json_get_str(o, "reason"));
		html(out, "</td><td><code>%s</code> from <code>%s</code></td>",
		     pg_json_get_str(o, "path"), pg_json_get_str(o, "source"));
		if (!n)
			pg_buf_puts(out, "<td colspan=\"4\"></td>");
		for (k = 0; (name = pg_json_at(suites, k)); k++) {
			const char *s = pg_json_str(name);
			const pg_json *row = s ? suite_row(report, s) : NULL;

			if (k)
				pg_buf_puts(out, "<tr class=\"selected-suite\"><td colspan=\"3\"></td>");
			html(out, "<td>%s</td>", s ? s : "");
			if (row) {
				counts_cell(out, pg_json_get(row, "base"));
				counts_cell(out, pg_json_get(row, "merge"));
				html(out, "<td>%s</td>", pg_json_get_str(row, "verdict"));
			} else {
				pg_buf_puts(out, "<td colspan=\"3\" class=\"absent\">not booted</td>");
			}
			if (k + 1 < n)
				pg_buf_puts(out, "</tr>\n");
		}
		pg_buf_puts(out, "</tr>\n");
	}
	pg_buf_puts(out, "</tbody></table></section>\n");
}

/* What ran in each stage: the scripts by SHA-256, the tools, the Image. */
static void provenance(pg_buf *out, const pg_json *report)
{
	const pg_json *list = pg_json_get(report, "provenance"), *p, *f;
	size_t i, k;

	if (!pg_json_len(list))
		return;
	pg_buf_puts(out, "<section id=\"provenance\"><h2>Provenance</h2>\n<table><thead><tr>"
		    "<th>stage</th><th>what ran</th><th>tools and results</th></tr></thead><tbody>\n");
	for (i = 0; (p = pg_json_at(list, i)); i++) {
		html(out, "<tr><th>%s", pg_json_get_str(p, "stage"));
		if (pg_json_get_bool(p, "simulated"))
			simulated_badge(out);
		pg_buf_puts(out, "</th><td><ul>");
		for (k = 0; (f = pg_json_at(pg_json_get(p, "files"), k)); k++)
			html(out, "<li><code>%s</code> sha256 <code>%s</code></li>",
			     pg_json_get_str(f, "path"), pg_json_get_str(f, "sha256"));
		html(out, "</ul></td><td><dl class=\"facts\"><dt>toolchain</dt><dd>%s</dd>"
		     "<dt>qemu</dt><dd>%s</dd><dt>config sha256</dt><dd><code>%s</code></dd>"
		     "<dt>Image sha256</dt><dd><code>%s</code></dd><dt>nonce</dt><dd><code>%s</code>"
		     "</dd></dl></td></tr>\n", pg_json_get_str(p, "toolchain"), pg_json_get_str(p, "qemu"),
		     pg_json_get_str(p, "config_sha256"), pg_json_get_str(p, "image_sha256"),
		     pg_json_get_str(p, "nonce"));
	}
	pg_buf_puts(out, "</tbody></table></section>\n");
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

	if (strcmp(j->state, "approved") || !j->merge_commit)
		return;
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
	if (pg_attest_verify(&res, tree.ptr, j->merge_commit, NULL, ghome.ptr, NULL) < 0) {
		html(out, "<p class=\"attest attest-error\" id=\"attest-verdict\">not checked: %s</p>\n",
		     pg_error_last());
		pg_error_clear();
		goto done;
	}
	/* the service's home may hold other keys: only its own signs its notes */
	if (res.status == PG_ATTEST_VALID && strcasecmp(res.fingerprint, key)) {
		res.status = PG_ATTEST_INVALID;
		pg_buf_clear(&res.why);
		pg_buf_printf(&res.why, "signed by key %s, not the service's %s", res.fingerprint,
			      key);
	}
	verdict = res.status == PG_ATTEST_VALID ? "valid" :
		  res.status == PG_ATTEST_INVALID ? "invalid" : "none";
	html(out, "<p class=\"attest attest-%s\" id=\"attest-verdict\">%s", verdict, verdict);
	if (res.status == PG_ATTEST_VALID)
		html(out, ": signed by key <code>%s</code>", res.fingerprint);
	html(out, "; %s</p>\n", res.why.ptr);
	if (res.statement.len && pg_json_parse(&st, res.statement.ptr, res.statement.len) == 0)
		html(out, "<dl class=\"facts\"><dt>signed at</dt><dd>%s</dd><dt>approved by</dt>"
		     "<dd>%s</dd><dt>report sha256</dt><dd><code>%s</code></dd></dl>\n",
		     pg_json_get_str(st, "time"), pg_json_get_str(st, "approved_by"),
		     pg_json_get_str(pg_json_get(st, "report"), "sha256"));
	pg_error_clear();
	if (res.statement.len)
		html(out, "<details><summary>the signed statement (refs/notes/pullgate)</summary>"
		     "<pre class=\"statement\">%s</pre></details>\n", res.statement.ptr);
done:
	pg_buf_puts(out, "</section>\n");
	pg_json_free(st);
	pg_attest_result_release(&res);
	pg_buf_release(&tree);
	pg_buf_release(&ghome);
}

static void actions(pg_buf *out, pg_req *rq, const pg_job *j)
{
	pg_buf user = PG_BUF_INIT;
	bool in = pg_req_session(rq, &user, NULL) == 0;
	enum pg_job_state st = PG_JOB__COUNT;
	bool waiting, can_reject, can_cancel;

	pg_job_state_from_name(&st, j->state);
	pg_error_clear();
	waiting = pg_job_can_move(st, PG_JOB_APPROVED, PG_JOB_BY_MAINTAINER);
	can_reject = pg_job_can_move(st, PG_JOB_REJECTED, PG_JOB_BY_MAINTAINER);
	/* what does not run is cancelled at once; what runs, stopped by its worker */
	can_cancel = pg_job_can_move(st, PG_JOB_CANCELLED, PG_JOB_BY_MAINTAINER) ||
		     pg_job_state_is_running(st);
	pg_buf_puts(out, "<section id=\"actions\">");
	if (!in && (waiting || can_cancel))
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
	pg_buf_puts(out, "<p id=\"action-result\" role=\"status\"></p></section>\n");
	pg_buf_release(&user);
}

int pg_page_pull(pg_req *rq, pg_resp *rs)
{
	pg_job *j = NULL;
	pg_json *report = NULL;
	pg_buf *out = &rs->body, title = PG_BUF_INIT, attrs = PG_BUF_INIT;
	enum pg_job_state st = PG_JOB__COUNT;
	size_t i;
	int err;

	err = pg_store_get(pg_server_reader(rq->srv), &j, rq->id);
	if (err == PG_ENOTFOUND)
		return pg_resp_error(rs, 404, "pull %lld does not exist", (long long)rq->id);
	if (err < 0)
		return err;
	/* a report that does not parse is not shown; the rest of the page is */
	if ((j->report && pg_json_parse(&report, j->report, strlen(j->report)) < 0) ||
	    pg_job_state_from_name(&st, j->state) < 0)
		pg_error_clear();
	pg_buf_printf(&title, "#%lld %s", (long long)j->id, tag_name(j->tag));
	pg_buf_printf(&attrs, "data-page=\"pull\" data-pull=\"%lld\" data-final=\"%s\"",
		      (long long)j->id, pg_job_state_is_final(st) ? "yes" : "no");
	page_start(out, rq, title.ptr, attrs.ptr);
	pg_buf_printf(out, "<h1>#%lld ", (long long)j->id);
	html(out, "<span class=\"tag\">%s</span> ", tag_name(j->tag));
	state_badge(out, j->state);
	if (simulated(j->report))
		simulated_badge(out);
	html(out, "</h1>\n<p class=\"lede\" id=\"message\">%s</p>\n<dl class=\"facts\">"
	     "<dt>repository</dt><dd>%s", j->message, j->repo_name ? j->repo_name : j->repo);
	if (j->repo_name && strcmp(j->repo_name, j->repo))
		html(out, " (fetched from %s)", j->repo);
	html(out, "</dd><dt>came in by</dt><dd>%s",
	     !strcmp(j->kind, "mail") ? "pull-request mail" : "push record");
	if (j->sender)
		html(out, " from %s", j->sender);
	html(out, "</dd><dt>verdict</dt><dd id=\"verdict\">%s", j->verdict ? j->verdict : "not yet");
	pg_buf_printf(out, " (%d errors, %d warnings)</dd><dt>commits</dt><dd>%d (%d merges)</dd>"
		      "<dt>tag object</dt><dd>", j->errors, j->warnings, j->commits, j->merges);
	short_id(out, j->tag_object);
	pg_buf_printf(out, "</dd><dt>report</dt><dd><a href=\"/api/pulls/%lld\">JSON</a></dd></dl>\n",
		      (long long)j->id);
	if (report)
		summary_block(out, report);
	actions(out, rq, j);
	pg_buf_puts(out, "<section id=\"live\"><h2>Live progress</h2>"
		    "<div id=\"status\" hidden><progress id=\"status-bar\" max=\"1\"></progress> "
		    "<span id=\"status-text\"></span></div><ol id=\"progress\"></ol></section>\n");
	stages(out, j);
	if (report)
		findings(out, report);
	merge_preview(out, rq->srv, j, report);
	if (report) {
		comparison(out, report);
		selection(out, report);
	}
	kunit(out, rq->srv, j);
	if (report) {
		provenance(out, report);
		signatures(out, report);
	}
	attestation(out, rq->srv, j);
	if (j->ndecisions) {
		pg_buf_puts(out, "<section id=\"decisions\"><h2>Decisions</h2><ul>");
		for (i = 0; i < j->ndecisions; i++) {
			pg_buf_puts(out, "<li>");
			when(out, j->decisions[i].at);
			html(out, ": <span class=\"who\">%s</span> %s", j->decisions[i].user,
			     j->decisions[i].action);
			if (j->decisions[i].note)
				html(out, " &mdash; %s", j->decisions[i].note);
			pg_buf_puts(out, "</li>");
		}
		pg_buf_puts(out, "</ul></section>\n");
	}
	pg_json_free(report);
	pg_job_free(j);
	pg_buf_release(&title);
	pg_buf_release(&attrs);
	return page_end(out, rs);
}

int pg_page_login(pg_req *rq, pg_resp *rs)
{
	pg_buf *out = &rs->body;

	page_start(out, rq, "log in", "data-page=\"login\"");
	pg_buf_puts(out, "<h1>Maintainer log in</h1>\n<form id=\"login\" class=\"login\">"
		    "<label>user <input name=\"user\" id=\"user-name\" autocomplete=\"username\" "
		    "required></label> <label>password <input name=\"password\" id=\"password\" "
		    "type=\"password\" autocomplete=\"current-password\" required></label> "
		    "<button type=\"submit\" id=\"login-button\">log in</button></form>\n"
		    "<p id=\"login-result\" role=\"status\"></p>\n");
	return page_end(out, rs);
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
