/* term.c - progress on the terminal (a status line redrawn in place, or plain lines) and colour. */
#include "cli/term.h"
#include "common/buf.h"
#include "common/json.h"
#include "common/sanitize.h"

#include <sys/ioctl.h>
#include <unistd.h>

#define PLAIN_EVERY_MS 10000
#define JSON_EVERY_MS 1000
#define RED "\033[31m"
#define YELLOW "\033[33m"
#define GREEN "\033[32m"
#define BOLD "\033[1m"
#define RESET "\033[0m"

int cli_color_parse(enum cli_color *out, const char *arg)
{
	if (!strcmp(arg, "auto"))
		*out = CLI_COLOR_AUTO;
	else if (!strcmp(arg, "always"))
		*out = CLI_COLOR_ALWAYS;
	else if (!strcmp(arg, "never"))
		*out = CLI_COLOR_NEVER;
	else
		return -1;
	return 0;
}

static bool dumb(void)
{
	const char *term = getenv("TERM");

	return !term || !*term || !strcmp(term, "dumb");
}

void cli_term_init(cli_term *t, enum cli_color mode)
{
	const char *no_color = getenv("NO_COLOR");

	memset(t, 0, sizeof(*t));
	t->status = isatty(STDERR_FILENO) && !dumb();
	if (mode == CLI_COLOR_ALWAYS)
		t->color = true;
	else if (mode == CLI_COLOR_AUTO)
		t->color = isatty(STDOUT_FILENO) && !dumb() && !(no_color && *no_color);
}

static size_t width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

void cli_term_end(cli_term *t)
{
	if (t->status_open) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		t->status_open = false;
	}
}

/* The event as one JSON line (control characters escaped by the writer). */
static void progress_json(cli_term *t, const pg_progress *p, uint64_t now)
{
	pg_json_writer *w = NULL;
	pg_buf out = PG_BUF_INIT;

	if (p->transient) {
		if (!strncmp(t->plain_stage, p->stage, sizeof(t->plain_stage) - 1) &&
		    now - t->plain_ms < JSON_EVERY_MS)
			return;
		snprintf(t->plain_stage, sizeof(t->plain_stage), "%s", p->stage);
		t->plain_ms = now;
	}
	if (pg_json_writer_new(&w) < 0)
		return;
	pg_json_put_str(w, "stage", p->stage);
	pg_json_put_str(w, "line", p->line);
	pg_json_put_bool(w, "transient", p->transient);
	pg_json_put_int(w, "done", (int64_t)p->done);
	pg_json_put_int(w, "total", (int64_t)p->total);
	pg_json_put_str(w, "unit", p->unit);
	pg_json_put_int(w, "bytes", (int64_t)p->bytes);
	pg_json_put_int(w, "elapsed_ms", (int64_t)p->elapsed_ms);
	if (pg_json_write(&out, w, PG_JSON_COMPACT) == 0) {
		fprintf(stderr, "%s\n", out.ptr);
		fflush(stderr);
	}
	pg_json_writer_free(w);
	pg_buf_release(&out);
}

void cli_term_progress(void *ctx, const pg_progress *p)
{
	cli_term *t = ctx;
	pg_buf raw = PG_BUF_INIT, line = PG_BUF_INIT;
	uint64_t now = pg_progress_now_ms();
	size_t w;

	if (t->json) {
		progress_json(t, p, now);
		return;
	}
	if (pg_buf_printf(&raw, "[%s] %s", p->stage, p->line) < 0 ||
	    pg_sanitize_terminal(&line, raw.ptr, raw.len, PG_SANITIZE_ONELINE) < 0)
		goto done;
	if (t->status) {
		w = width() - 1;
		if (p->transient && line.len > w)
			line.ptr[w] = '\0'; /* sanitized: ASCII escapes are gone, cut anywhere */
		fprintf(stderr, "\r\033[K%s%s", line.ptr, p->transient ? "" : "\n");
		t->status_open = p->transient;
		fflush(stderr);
		goto done;
	}
	if (p->transient) {
		if (!strncmp(t->plain_stage, p->stage, sizeof(t->plain_stage) - 1) &&
		    now - t->plain_ms < PLAIN_EVERY_MS)
			goto done;
		snprintf(t->plain_stage, sizeof(t->plain_stage), "%s", p->stage);
		t->plain_ms = now;
	}
	fprintf(stderr, "%s\n", line.ptr);
done:
	pg_buf_release(&raw);
	pg_buf_release(&line);
}

/* The colour of a line's first word, when it is a severity. */
static const char *severity_color(const char *l, size_t n)
{
	if (n > 6 && !memcmp(l, "error ", 6))
		return RED;
	if (n > 8 && !memcmp(l, "warning ", 8))
		return YELLOW;
	return NULL;
}

int cli_term_write_report(const cli_term *t, FILE *f, const char *text, size_t len)
{
	const char *l = text, *end = text + len;

	if (!t->color) {
		fwrite(text, 1, len, f);
		return 0;
	}
	while (l < end) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l);
		const char *c = severity_color(l, n);

		if (c) {
			size_t word = strcspn(l, " ");

			fprintf(f, "%s%.*s%s%.*s", c, (int)word, l, RESET, (int)(n - word), l + word);
		} else if (n > 16 && !memcmp(l, "verdict: accept", 15)) {
			fprintf(f, "verdict: %s%saccept%s%.*s", BOLD, GREEN, RESET, (int)(n - 15), l + 15);
		} else if (n > 16 && !memcmp(l, "verdict: reject", 15)) {
			fprintf(f, "verdict: %s%sreject%s%.*s", BOLD, RED, RESET, (int)(n - 15), l + 15);
		} else {
			fwrite(l, 1, n, f);
		}
		if (nl)
			fputc('\n', f);
		l += n + (nl ? 1 : 0);
	}
	return 0;
}

void cli_put_line(const pg_buf *line)
{
	pg_buf safe = PG_BUF_INIT;

	if (pg_sanitize_terminal(&safe, line->ptr, line->len, PG_SANITIZE_ONELINE) == 0) {
		fputs(safe.ptr, stdout);
		fputc('\n', stdout);
	}
	pg_buf_release(&safe);
}
