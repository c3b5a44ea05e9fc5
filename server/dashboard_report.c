/* dashboard_report.c - a pull's report on its page: summary, findings, KUnit suites and selection, provenance, signatures. */
#include "server/dashboard.h"

/*
 * The story first (docs/report-schema.md, "summary"): what the pull
 * re-creates and should carry, and the verdict counted in root causes.  A
 * report from before the summary existed shows none.
 */
void pg_dash_summary(pg_buf *out, const pg_json *report)
{
	const pg_json *s = pg_json_get(report, "summary");
	const char *text = pg_json_get_str(s, "text"), *verdict = pg_json_get_str(s, "verdict");

	if (!text)
		return;
	pg_dash_html(out, "<section id=\"summary\"><h2>Summary</h2><p class=\"story\">%s</p>", text);
	if (verdict)
		pg_dash_html(out, "<p class=\"roots\">%s</p>", verdict);
	pg_buf_puts(out, "</section>\n");
}

/* A finding's details, a row each: the field, the pull's copy, upstream's original. */
static void details(pg_buf *out, const pg_json *list)
{
	const pg_json *d;
	size_t i;

	for (i = 0; (d = pg_json_at(list, i)); i++)
		pg_dash_html(out, "<tr><th>%s</th><td class=\"pull\"><pre>%s</pre></td>"
			     "<td class=\"upstream\"><pre>%s</pre></td></tr>\n",
			     pg_json_get_str(d, "field"), pg_json_get_str(d, "pull"),
			     pg_json_get_str(d, "upstream"));
}

/* One rewritten commit: the fields that differ, the pull's copy beside upstream's original. */
static void rewritten(pg_buf *out, const pg_json *f)
{
	const char *subject = pg_json_get_str(f, "subject");
	bool merge = subject && !strncmp(subject, "Merge ", 6);

	pg_buf_printf(out, "<article class=\"rewritten%s\">\n", merge ? " rewritten-merge" : "");
	pg_dash_html(out, "<h4>%s</h4>\n<table class=\"diff\"><thead><tr><th>field</th>"
		     "<th>pull copy ", subject);
	pg_dash_short_id(out, pg_json_get_str(f, "commit"));
	pg_buf_puts(out, "</th><th>upstream original ");
	pg_dash_short_id(out, pg_json_get_str(f, "upstream"));
	pg_buf_puts(out, "</th></tr></thead><tbody>\n");
	details(out, pg_json_get(f, "details"));
	pg_buf_puts(out, "</tbody></table></article>\n");
}

static void other_finding(pg_buf *out, const pg_json *f)
{
	const char *severity = pg_json_get_str(f, "severity"), *subject = pg_json_get_str(f, "subject");

	pg_dash_html(out, "<li class=\"finding sev-%s\"><span class=\"sev\">%s</span> "
		     "<span class=\"check\">%s</span> ", severity, severity,
		     pg_json_get_str(f, "check"));
	pg_dash_short_id(out, pg_json_get_str(f, "commit"));
	if (subject)
		pg_dash_html(out, " <span class=\"subject\">%s</span>", subject);
	pg_dash_html(out, "<div class=\"message\">%s</div>", pg_json_get_str(f, "message"));
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
			pg_dash_html(out, "<span class=\"check\">%s</span> %s findings</li>",
				     pg_json_get_str(o, "check"), pg_json_get_str(o, "severity"));
		}
		pg_buf_puts(out, "</ul>");
	} else
		pg_buf_puts(out, "the findings are kept without their details.</p>");
	pg_buf_puts(out, "</div>\n");
}

void pg_dash_findings(pg_buf *out, const pg_json *report)
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
				pg_dash_short_id(out, pg_json_get_str(f, "commit"));
				pg_buf_puts(out, " copies ");
				pg_dash_short_id(out, pg_json_get_str(f, "upstream"));
				pg_dash_html(out, " <span class=\"subject\">%s</span></li>\n", s);
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

void pg_dash_signatures(pg_buf *out, const pg_json *report)
{
	const pg_json *list = pg_json_get(report, "signatures"), *s;
	size_t i;

	if (!pg_json_len(list))
		return;
	pg_buf_puts(out, "<section id=\"signatures\"><h2>Signatures</h2><table><thead><tr><th>kind</th>"
		    "<th>tag</th><th>tagger</th><th>status</th><th>key</th></tr></thead><tbody>\n");
	for (i = 0; (s = pg_json_at(list, i)); i++)
		pg_dash_html(out, "<tr><td>%s</td><td>%s</td><td>%s</td><td class=\"sig-%s\">%s</td>"
			     "<td><code>%s</code></td></tr>\n", pg_json_get_str(s, "kind"),
			     pg_json_get_str(s, "tag"), pg_json_get_str(s, "tagger"),
			     pg_json_get_str(s, "status"), pg_json_get_str(s, "status"),
			     pg_json_get_str(s, "fingerprint"));
	pg_buf_puts(out, "</tbody></table></section>\n");
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
void pg_dash_comparison(pg_buf *out, const pg_json *report)
{
	const pg_json *list = pg_json_get(report, "suites"), *s;
	size_t i;

	if (!pg_json_len(list) && !pg_json_get_str(report, "base_boot"))
		return;
	pg_buf_puts(out, "<section id=\"base-vs-merge\"><h2>KUnit: base against merge</h2>\n");
	if (pg_json_get_str(report, "base_boot"))
		pg_dash_html(out, "<p class=\"base-boot\">the base's boot: %s</p>\n",
			     pg_json_get_str(report, "base_boot"));
	pg_buf_puts(out, "<table id=\"suites\"><thead><tr><th>suite</th><th>base</th><th>merge</th>"
		    "<th>verdict</th></tr></thead><tbody>\n");
	for (i = 0; (s = pg_json_at(list, i)); i++) {
		pg_dash_html(out, "<tr class=\"suite suite-%s\"><th>%s</th>",
			     pg_json_get_str(s, "verdict"), pg_json_get_str(s, "name"));
		counts_cell(out, pg_json_get(s, "base"));
		counts_cell(out, pg_json_get(s, "merge"));
		pg_dash_html(out, "<td>%s</td></tr>\n", pg_json_get_str(s, "verdict"));
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
void pg_dash_selection(pg_buf *out, const pg_json *report)
{
	const pg_json *sel = pg_json_get(report, "selection"), *o, *name;
	size_t i, k;

	if (!pg_json_get_str(sel, "note"))
		return;
	pg_dash_html(out, "<section id=\"selection\"><h2>KUnit selection</h2>\n"
		     "<p class=\"note\">%s</p>\n", pg_json_get_str(sel, "note"));
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

		pg_dash_html(out, "<tr class=\"selected selected-%s\"><th>%s</th><td>%s",
			     pg_json_get_str(o, "status"), pg_json_get_str(o, "option"),
			     pg_json_get_str(o, "status"));
		if (pg_json_get_str(o, "reason"))
			pg_dash_html(out, "<div class=\"reason\">%s</div>",
				     pg_json_get_str(o, "reason"));
		pg_dash_html(out, "</td><td><code>%s</code> from <code>%s</code></td>",
			     pg_json_get_str(o, "path"), pg_json_get_str(o, "source"));
		if (!n)
			pg_buf_puts(out, "<td colspan=\"4\"></td>");
		for (k = 0; (name = pg_json_at(suites, k)); k++) {
			const char *s = pg_json_str(name);
			const pg_json *row = s ? suite_row(report, s) : NULL;

			if (k)
				pg_buf_puts(out, "<tr class=\"selected-suite\"><td colspan=\"3\"></td>");
			pg_dash_html(out, "<td>%s</td>", s ? s : "");
			if (row) {
				counts_cell(out, pg_json_get(row, "base"));
				counts_cell(out, pg_json_get(row, "merge"));
				pg_dash_html(out, "<td>%s</td>", pg_json_get_str(row, "verdict"));
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
void pg_dash_provenance(pg_buf *out, const pg_json *report)
{
	const pg_json *list = pg_json_get(report, "provenance"), *p, *f;
	size_t i, k;

	if (!pg_json_len(list))
		return;
	pg_buf_puts(out, "<section id=\"provenance\"><h2>Provenance</h2>\n<table><thead><tr>"
		    "<th>stage</th><th>what ran</th><th>tools and results</th></tr></thead><tbody>\n");
	for (i = 0; (p = pg_json_at(list, i)); i++) {
		pg_dash_html(out, "<tr><th>%s", pg_json_get_str(p, "stage"));
		if (pg_json_get_bool(p, "simulated"))
			pg_dash_simulated_badge(out, NULL);
		pg_buf_puts(out, "</th><td><ul>");
		for (k = 0; (f = pg_json_at(pg_json_get(p, "files"), k)); k++)
			pg_dash_html(out, "<li><code>%s</code> sha256 <code>%s</code></li>",
				     pg_json_get_str(f, "path"), pg_json_get_str(f, "sha256"));
		pg_dash_html(out, "</ul></td><td><dl class=\"facts\"><dt>toolchain</dt><dd>%s</dd>"
			     "<dt>qemu</dt><dd>%s</dd><dt>config sha256</dt><dd><code>%s</code></dd>"
			     "<dt>Image sha256</dt><dd><code>%s</code></dd><dt>nonce</dt>"
			     "<dd><code>%s</code></dd>", pg_json_get_str(p, "toolchain"),
			     pg_json_get_str(p, "qemu"), pg_json_get_str(p, "config_sha256"),
			     pg_json_get_str(p, "image_sha256"), pg_json_get_str(p, "nonce"));
		/* a build on the icecream farm: its compiler environment and what each host did */
		if (pg_json_get_str(p, "farm_env"))
			pg_dash_html(out, "<dt>icecc environment</dt><dd>%s</dd>",
				     pg_json_get_str(p, "farm_env"));
		if (pg_json_get_str(p, "farm"))
			pg_dash_html(out, "<dt>farm</dt><dd>%s</dd>", pg_json_get_str(p, "farm"));
		pg_buf_puts(out, "</dl></td></tr>\n");
	}
	pg_buf_puts(out, "</tbody></table></section>\n");
}
