/* store_report.c - the report as the store keeps it: so many findings per check, so many bytes, the rest counted. */
#include "server/store_sql.h"
#include "common/json.h"

/*
 * A pull of 100,000 commits can carry as many findings of one check; the
 * verifier reports them all, but a stored report is read by every page
 * and API call about the pull, and is written again at each change of
 * state.  So the store keeps, per check and severity, the first
 * findings_per_check of them, in the order the checks made them (an error
 * of a check is never dropped for its warnings), and counts the rest; and
 * when the JSON is still larger than report_size, it keeps fewer (halving)
 * and then none of their details, until it fits.  The report's verdict
 * and counts are the whole report's, and a "stored" member says what was
 * left out: { "findings_per_check", "details": bool, "omitted": [{ "check",
 * "severity", "count" }] }.
 */

/* view: full with the findings kept, per check and severity; the count of those that were not. */
static size_t keep(pg_report *view, pg_finding *kept, const pg_report *full, size_t per_check,
		   bool details, size_t (*omitted)[3])
{
	size_t (*seen)[3] = calloc(PG_CHECK__COUNT, sizeof(*seen));
	size_t i, n = 0, dropped = 0;

	memset(omitted, 0, PG_CHECK__COUNT * sizeof(*omitted));
	for (i = 0; i < full->nfindings; i++) {
		const pg_finding *f = &full->findings[i];
		unsigned c = (unsigned)f->check < PG_CHECK__COUNT ? (unsigned)f->check : 0;
		unsigned sev = (unsigned)f->severity < 3 ? (unsigned)f->severity : 2;

		if (!seen || seen[c][sev]++ >= per_check) {
			omitted[c][sev]++;
			dropped++;
			continue;
		}
		kept[n] = *f; /* shallow: the strings stay full's */
		if (!details)
			kept[n].ndetails = 0;
		n++;
	}
	free(seen);
	*view = *full;
	view->findings = kept;
	view->nfindings = n;
	view->findings_alloc = n;
	return dropped;
}

/* The view's JSON with the whole report's verdict and counts, and what was left out. */
static int annotate(pg_buf *json, const pg_report *full, size_t per_check, bool details,
		    size_t (*omitted)[3])
{
	pg_json_writer *w = NULL;
	pg_buf out = PG_BUF_INIT;
	unsigned c, sev;
	int err;

	if ((err = pg_json_writer_from(&w, json->ptr, json->len)) < 0)
		return err;
	pg_json_put_str(w, "verdict", pg_job_verdict_name(pg_report_verdict(full)));
	pg_json_put_int(w, "errors", (int64_t)pg_report_count(full, PG_SEV_ERROR));
	pg_json_put_int(w, "warnings", (int64_t)pg_report_count(full, PG_SEV_WARNING));
	pg_json_open_object(w, "stored");
	pg_json_put_int(w, "findings_per_check", (int64_t)per_check);
	pg_json_put_bool(w, "details", details);
	pg_json_open_array(w, "omitted");
	for (c = 0; c < PG_CHECK__COUNT; c++)
		for (sev = 3; sev-- > 0;) {
			if (!omitted[c][sev])
				continue;
			pg_json_open_object(w, NULL);
			pg_json_put_str(w, "check", pg_check_name((enum pg_check_id)c));
			pg_json_put_str(w, "severity", pg_severity_name((enum pg_severity)sev));
			pg_json_put_int(w, "count", (int64_t)omitted[c][sev]);
			pg_json_close(w);
		}
	pg_json_close(w);
	pg_json_close(w);
	if ((err = pg_json_write(&out, w, PG_JSON_INDENT)) == 0 &&
	    (err = pg_buf_putc(&out, '\n')) == 0) {
		pg_buf_clear(json);
		err = pg_buf_put(json, out.ptr, out.len);
	}
	pg_json_writer_free(w);
	pg_buf_release(&out);
	return err;
}

int pg_store_report_json(pg_buf *json, pg_report *view, pg_finding **kept, pg_store *s,
			 const pg_report *full)
{
	size_t (*omitted)[3] = NULL;
	size_t per_check = s->findings_per_check, max = s->report_size, dropped;
	bool details = true;
	int err;

	*kept = NULL;
	if (!(omitted = calloc(PG_CHECK__COUNT, sizeof(*omitted))) ||
	    (full->nfindings && !(*kept = calloc(full->nfindings, sizeof(**kept))))) {
		free(omitted);
		return pg_error_oom();
	}
	for (;;) {
		pg_buf_clear(json);
		dropped = keep(view, *kept, full, per_check, details, omitted);
		if ((err = pg_report_format_json(json, view)) < 0)
			break;
		if ((dropped || !details) &&
		    (err = annotate(json, full, per_check, details, omitted)) < 0)
			break;
		if (json->len <= max || (!per_check && !details))
			break;
		/* too large still: fewer findings, then none of their details, then none */
		if (per_check > 1)
			per_check /= 2;
		else if (details)
			details = false;
		else
			per_check = 0;
	}
	free(omitted);
	return err;
}
