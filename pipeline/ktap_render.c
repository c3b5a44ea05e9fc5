/* ktap_render.c - a parsed boot console as text for people and as JSON (docs/kernel.md). */
#include "pipeline/ktap.h"
#include "common/error.h"
#include "common/json.h"

int pg_ktap_render_text(pg_buf *out, const pg_boot_result *r)
{
	static const char *const label[] = { "ok", "FAIL", "skip", "CRASHED" };
	size_t i;
	int err = 0;

	for (i = 0; i < r->ntests && err == 0; i++) {
		const pg_ktap_test *t = &r->tests[i];

		if (t->has_subtests && t->status != PG_KTAP_CRASHED)
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

/*
 * ---- STOPGAP: a JSON writer, to move into common/json.[ch] ------------------
 *
 * pipeline/ should not hold jansson values, and common/json.h does not yet
 * offer a way to write JSON without them.  These few functions are that
 * way: the renderer below names keys and values and never sees a json_t.
 * They are the one place in pipeline/ that includes jansson; once
 * common/json.h has a writer (pg_json_writer: begin/end of an object or
 * array, str, int, bool, real, null, and a finish that appends the text,
 * indented by 2 in insertion order, and a newline), they go and the
 * renderer calls it.  Every failure is remembered and reported by finish.
 */
#include <jansson.h>

#define JW_MAX_DEPTH 4

typedef struct jw {
	json_t *open[JW_MAX_DEPTH];  /* open[0] is the root, owned; the rest borrowed */
	size_t depth;
	bool ok;
} jw;

/* Put v (owned) under key in the innermost object, or at the end of the innermost array. */
static void jw_put(jw *w, const char *key, json_t *v)
{
	json_t *in = w->depth ? w->open[w->depth - 1] : NULL;

	if (!w->ok || !in || !v) {
		json_decref(v);
		w->ok = false;
	} else if (json_is_array(in)) {
		w->ok = json_array_append_new(in, v) == 0;
	} else {
		pg_json_set(in, key, v, &w->ok);
	}
}

static void jw_begin(jw *w, const char *key, bool array)
{
	json_t *v;

	if (!w->ok || w->depth == JW_MAX_DEPTH || !(v = array ? json_array() : json_object())) {
		w->ok = false;
		return;
	}
	if (w->depth)
		jw_put(w, key, v); /* the parent holds it; open[] borrows it */
	if (w->ok)
		w->open[w->depth++] = v;
}

static void jw_end(jw *w)
{
	if (w->depth > 1)
		w->depth--;
}

static void jw_str(jw *w, const char *key, const char *s)
{
	jw_put(w, key, pg_json_str(s));
}

static void jw_int(jw *w, const char *key, long long v)
{
	jw_put(w, key, json_integer((json_int_t)v));
}

static void jw_bool(jw *w, const char *key, bool v)
{
	jw_put(w, key, json_boolean(v));
}

/* A number of seconds, or null for a negative (unknown) one. */
static void jw_seconds(jw *w, const char *key, double v)
{
	jw_put(w, key, v >= 0 ? json_real(v) : json_null());
}

static int jw_finish(jw *w, pg_buf *out)
{
	size_t flags = JSON_INDENT(2) | JSON_PRESERVE_ORDER;
	char *text = NULL;
	int err = 0;

	if (!w->ok || !w->depth || !(text = json_dumps(w->open[0], flags)))
		err = pg_error_oom();
	else if ((err = pg_buf_puts(out, text)) == 0)
		err = pg_buf_putc(out, '\n');
	free(text);
	if (w->depth)
		json_decref(w->open[0]);
	w->depth = 0;
	return err;
}

/* ---- end of the stopgap ---------------------------------------------------- */

int pg_ktap_render_json(pg_buf *out, const pg_boot_result *r)
{
	jw w = { .ok = true };
	size_t i;

	jw_begin(&w, NULL, false);
	jw_bool(&w, "ok", pg_boot_result_ok(r));
	jw_int(&w, "passed", (long long)r->passed);
	jw_int(&w, "failed", (long long)r->failed);
	jw_int(&w, "skipped", (long long)r->skipped);
	jw_int(&w, "crashed", (long long)r->crashed);
	jw_seconds(&w, "boot_time", r->boot_time);
	jw_bool(&w, "marker", r->saw_marker);
	jw_bool(&w, "powered_off", r->powered_off);
	jw_bool(&w, "truncated", r->truncated);
	jw_begin(&w, "tests", true);
	for (i = 0; i < r->ntests && w.ok; i++) {
		const pg_ktap_test *t = &r->tests[i];

		jw_begin(&w, NULL, false);
		jw_str(&w, "path", t->path);
		jw_str(&w, "name", t->name);
		jw_int(&w, "depth", t->depth);
		jw_str(&w, "status", pg_ktap_status_name(t->status));
		jw_bool(&w, "has_subtests", t->has_subtests);
		jw_str(&w, "reason", t->reason);
		jw_int(&w, "line", (long long)t->line);
		jw_end(&w);
	}
	jw_end(&w);
	jw_begin(&w, "splats", true);
	for (i = 0; i < r->nsplats && w.ok; i++) {
		const pg_splat *s = &r->splats[i];

		jw_begin(&w, NULL, false);
		jw_str(&w, "kind", pg_splat_kind_name(s->kind));
		jw_seconds(&w, "time", s->time);
		jw_int(&w, "line", (long long)s->line);
		jw_str(&w, "text", s->text);
		jw_end(&w);
	}
	jw_end(&w);
	return jw_finish(&w, out);
}
