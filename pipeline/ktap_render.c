/* ktap_render.c - a parsed boot console as text for people and as JSON (docs/kernel.md). */
#include "pipeline/ktap.h"
#include "common/error.h"
#include "common/json.h"

/* Each evidence gap (any marker nonce) on a line of its own, after prefix. */
static int put_gaps(pg_buf *out, const pg_boot_result *r, const char *prefix)
{
	pg_buf why = PG_BUF_INIT;
	const char *p, *nl;
	int err = pg_boot_evidence_gaps(&why, r, NULL);

	for (p = why.ptr; err >= 0 && (nl = strchr(p, '\n')); p = nl + 1)
		err = pg_buf_printf(out, "%s%.*s\n", prefix, (int)(nl - p), p);
	pg_buf_release(&why);
	return err < 0 ? err : 0;
}

/* The failures the judge cannot place, a line each after "not judged: ". */
static int put_unjudged_line(void *ctx, const pg_ktap_problem *p)
{
	return p->kind == PG_KTAP_UNJUDGED ? pg_buf_printf(ctx, "not judged: %s\n", p->text) : 0;
}

int pg_ktap_render_text(pg_buf *out, const pg_boot_result *r)
{
	static const char *const label[] = { "ok", "FAIL", "skip", "CRASHED" };
	size_t i;
	int err = 0;

	for (i = 0; i < r->ntests && err == 0; i++) {
		const pg_ktap_test *t = &r->tests[i];

		if (t->has_subtests && t->status != PG_KTAP_CRASHED && !t->own_failure)
			continue;
		err = pg_buf_printf(out, "%-8s %s%s%s\n", label[t->status], t->path,
				    t->reason ? "  # " : "", t->reason ? t->reason : "");
	}
	for (i = 0; i < r->nsplats && err == 0; i++) {
		const pg_splat *s = &r->splats[i];
		size_t first = strcspn(s->text, "\n");

		if (s->time >= 0)
			err = pg_buf_printf(out, "splat    %s at %.6f s (line %zu): %.*s\n",
					    pg_splat_kind_name(s->kind), s->time, s->line,
					    (int)first, s->text);
		else
			err = pg_buf_printf(out, "splat    %s (line %zu): %.*s\n",
					    pg_splat_kind_name(s->kind), s->line,
					    (int)first, s->text);
	}
	if (err == 0)
		err = put_gaps(out, r, "evidence missing: ");
	if (err == 0 && (err = pg_ktap_problems(r, NULL, put_unjudged_line, out)) > 0)
		err = 0;
	if (err == 0) {
		if (r->boot_time >= 0)
			err = pg_buf_printf(out, "boot: %.3f s", r->boot_time);
		else
			err = pg_buf_puts(out, "boot: time unknown");
	}
	if (err == 0)
		err = pg_buf_printf(out, ", marker %s, %s%s\n",
				    r->saw_marker ? "seen" : "missing",
				    r->powered_off ? "powered off" : "no power-off",
				    r->truncated ? ", truncated" : "");
	if (err == 0)
		err = pg_buf_printf(out, "crashed: %zu, splats: %zu\n", r->crashed, r->nsplats);
	if (err == 0)
		err = pg_buf_printf(out, "ktap: %zu passed, %zu failed, %zu skipped\n",
				    r->passed, r->failed, r->skipped);
	return err;
}

/* A number of seconds, or null for a negative (unknown) one. */
static void put_seconds(pg_json_writer *w, const char *key, double v)
{
	if (v >= 0)
		pg_json_put_real(w, key, v);
	else
		pg_json_put_null(w, key);
}

/* "evidence_missing": the gaps (any marker nonce) as an array of lines. */
static int put_gap_list(pg_json_writer *w, const pg_boot_result *r)
{
	pg_buf why = PG_BUF_INIT;
	const char *p, *nl;
	int err = pg_boot_evidence_gaps(&why, r, NULL);

	pg_json_open_array(w, "evidence_missing");
	for (p = why.ptr; err >= 0 && (nl = strchr(p, '\n')); p = nl + 1) {
		char *line = pg_strndup(p, (size_t)(nl - p));

		if (!line)
			err = PG_ENOMEM;
		pg_json_put_str(w, NULL, line);
		free(line);
	}
	pg_json_close(w);
	pg_buf_release(&why);
	return err < 0 ? err : 0;
}

static int put_unjudged_item(void *ctx, const pg_ktap_problem *p)
{
	if (p->kind == PG_KTAP_UNJUDGED)
		pg_json_put_str(ctx, NULL, p->text);
	return 0;
}

int pg_ktap_render_json(pg_buf *out, const pg_boot_result *r)
{
	pg_json_writer *w = NULL;
	size_t i;
	int err;

	if ((err = pg_json_writer_new(&w)) < 0)
		return err;
	pg_json_put_bool(w, "ok", pg_boot_result_ok(r));
	pg_json_put_int(w, "passed", (int64_t)r->passed);
	pg_json_put_int(w, "failed", (int64_t)r->failed);
	pg_json_put_int(w, "skipped", (int64_t)r->skipped);
	pg_json_put_int(w, "crashed", (int64_t)r->crashed);
	put_seconds(w, "boot_time", r->boot_time);
	pg_json_put_bool(w, "marker", r->saw_marker);
	pg_json_put_bool(w, "powered_off", r->powered_off);
	pg_json_put_bool(w, "truncated", r->truncated);
	if (r->plan >= 0)
		pg_json_put_int(w, "plan", r->plan);
	else
		pg_json_put_null(w, "plan");
	pg_json_put_str(w, "marker_nonce", r->marker_nonce);
	pg_json_put_int(w, "dropped", (int64_t)r->dropped);
	if ((err = put_gap_list(w, r)) < 0) {
		pg_json_writer_free(w);
		return err;
	}
	/* "not_judged": failures no test result shows (pg_ktap_problems) */
	pg_json_open_array(w, "not_judged");
	err = pg_ktap_problems(r, NULL, put_unjudged_item, w);
	pg_json_close(w);
	if (err < 0) {
		pg_json_writer_free(w);
		return err;
	}
	pg_json_open_array(w, "tests");
	for (i = 0; i < r->ntests; i++) {
		const pg_ktap_test *t = &r->tests[i];

		pg_json_open_object(w, NULL);
		pg_json_put_str(w, "path", t->path);
		pg_json_put_str(w, "name", t->name);
		pg_json_put_int(w, "depth", t->depth);
		pg_json_put_str(w, "status", pg_ktap_status_name(t->status));
		pg_json_put_bool(w, "has_subtests", t->has_subtests);
		pg_json_put_bool(w, "own_failure", t->own_failure);
		pg_json_put_str(w, "reason", t->reason);
		pg_json_put_str(w, "diagnostic", t->diagnostic);
		pg_json_put_int(w, "line", (int64_t)t->line);
		pg_json_close(w);
	}
	pg_json_close(w);
	pg_json_open_array(w, "splats");
	for (i = 0; i < r->nsplats; i++) {
		const pg_splat *s = &r->splats[i];

		pg_json_open_object(w, NULL);
		pg_json_put_str(w, "kind", pg_splat_kind_name(s->kind));
		put_seconds(w, "time", s->time);
		pg_json_put_int(w, "line", (int64_t)s->line);
		pg_json_put_str(w, "text", s->text);
		pg_json_close(w);
	}
	pg_json_close(w);
	if ((err = pg_json_write(out, w, PG_JSON_INDENT)) == 0)
		err = pg_buf_putc(out, '\n');
	pg_json_writer_free(w);
	return err;
}
