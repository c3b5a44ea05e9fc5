/* build.c - the build stage's process and its diagnostics. */
#include "pipeline/build.h"
#include "common/error.h"
#include "common/spawn.h"

void pg_diag_release(pg_diag *d)
{
	free(d->file);
	free(d->message);
	memset(d, 0, sizeof(*d));
}

static bool all_digits(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return n > 0;
}

static const char *find_kind(const char *p, const char *end, bool *error, size_t *skip)
{
	static const struct {
		const char *text;
		bool error;
	} kinds[] = {
		{ " fatal error: ", true }, { " error: ", true }, { " warning: ", false },
	};
	size_t k;

	for (k = 0; k < PG_ARRAY_SIZE(kinds); k++) {
		size_t n = strlen(kinds[k].text);

		if ((size_t)(end - p) >= n && !memcmp(p, kinds[k].text, n)) {
			*error = kinds[k].error;
			*skip = n;
			return p;
		}
	}
	return NULL;
}

int pg_diag_parse(pg_diag *out, const char *line, size_t len)
{
	const char *end = line + len, *p, *colon1, *colon2, *kind = NULL;
	bool error = false;
	size_t skip = 0, n;
	unsigned long ln = 0;

	memset(out, 0, sizeof(*out));
	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		end = line + --len;
	/* FILE:LINE[:COL]: KIND: MESSAGE */
	colon1 = memchr(line, ':', len);
	if (!colon1 || colon1 == line)
		return 0;
	colon2 = memchr(colon1 + 1, ':', (size_t)(end - colon1 - 1));
	if (!colon2 || !all_digits(colon1 + 1, (size_t)(colon2 - colon1 - 1)))
		return 0;
	for (p = colon1 + 1; p < colon2; p++)
		ln = ln * 10 + (unsigned long)(*p - '0');
	/* p is at the ':' after the line number; an optional ":COL" follows */
	p = colon2;
	n = 0;
	while (p + 1 + n < end && p[1 + n] >= '0' && p[1 + n] <= '9')
		n++;
	if (n && p + 1 + n < end && p[1 + n] == ':')
		p += 1 + n;
	if (!(kind = find_kind(p + 1, end, &error, &skip)))
		return 0;
	if (!(out->file = pg_strndup(line, (size_t)(colon1 - line))) ||
	    !(out->message = pg_strndup(kind + skip, (size_t)(end - kind - skip)))) {
		pg_diag_release(out);
		return PG_ENOMEM;
	}
	out->line = ln > UINT32_MAX ? UINT32_MAX : (unsigned)ln;
	out->error = error;
	return 1;
}

int pg_diag_key(pg_buf *out, const pg_diag *d)
{
	return pg_buf_printf(out, "%s: %s", d->file ? d->file : "", d->message);
}

void pg_build_result_init(pg_build_result *r)
{
	memset(r, 0, sizeof(*r));
	pg_buf_init(&r->tail, 0);
}

void pg_build_result_release(pg_build_result *r)
{
	size_t i;

	for (i = 0; i < r->ndiags; i++)
		pg_diag_release(&r->diags[i]);
	free(r->diags);
	pg_buf_release(&r->tail);
	pg_build_result_init(r);
}

typedef struct line_ctx {
	pg_build_result *r;
	const pg_build_opts *o;
} line_ctx;

/* Kbuild's quiet lines: two spaces, an upper-case verb, spaces, a path. */
static bool is_step(const char *line, size_t len, const char *verb)
{
	size_t n = strlen(verb);

	return len > n + 3 && line[0] == ' ' && line[1] == ' ' && !memcmp(line + 2, verb, n) &&
	       line[2 + n] == ' ';
}

static int on_line(void *vctx, const char *line, size_t len)
{
	line_ctx *c = vctx;
	pg_diag d;
	int rc;

	if (is_step(line, len, "CC") || is_step(line, len, "AS")) {
		c->r->objects++;
		if (c->o->progress && (c->r->objects % 25 == 0)) {
			char msg[96];

			/* an incremental build compiles fewer: the hint is a full build's */
			if (c->o->objects_hint)
				snprintf(msg, sizeof(msg), "%zu objects (a full build: %zu)",
					 c->r->objects, c->o->objects_hint);
			else
				snprintf(msg, sizeof(msg), "%zu objects", c->r->objects);
			c->o->progress(c->o->ctx, "build", msg);
		}
		return 0;
	}
	if ((rc = pg_diag_parse(&d, line, len)) <= 0)
		return rc;
	if (c->r->ndiags < PG_BUILD_MAX_DIAGS) {
		pg_diag *grown = realloc(c->r->diags, (c->r->ndiags + 1) * sizeof(*grown));

		if (!grown) {
			pg_diag_release(&d);
			return pg_error_oom();
		}
		c->r->diags = grown;
		grown[c->r->ndiags++] = d;
	} else {
		pg_diag_release(&d);
	}
	return 0;
}

int pg_build_run(pg_build_result *r, const pg_build_opts *o)
{
	pg_spawn_opts so = PG_SPAWN_OPTS_INIT;
	pg_spawn_result sr;
	line_ctx ctx = { r, o };
	int err;

	pg_build_result_release(r);
	pg_spawn_result_init(&sr);
	so.env = o->env;
	so.log_path = o->log;
	so.tail_max = 8192;
	so.timeout_ms = o->timeout_s * 1000u;
	so.on_line = on_line;
	so.ctx = &ctx;
	so.cancel = o->cancel;
	err = pg_spawn_run(&sr, o->argv, &so);
	r->exit_code = sr.exit_code;
	r->timed_out = sr.timed_out;
	r->cancelled = sr.cancelled;
	r->elapsed_ms = sr.elapsed_ms;
	r->ok = err == 0 && pg_spawn_succeeded(&sr);
	if (err == 0)
		err = pg_buf_put(&r->tail, sr.tail.ptr, sr.tail.len);
	pg_spawn_result_release(&sr);
	return err;
}
