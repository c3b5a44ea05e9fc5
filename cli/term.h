/* term.h - the terminal: one status line redrawn in place, or plain lines; severities in colour. */
#ifndef PG_CLI_TERM_H
#define PG_CLI_TERM_H

#include "cli/cli.h"
#include "common/buf.h"
#include "common/progress.h"

enum cli_color {
	CLI_COLOR_AUTO,   /* colour when standard output is a terminal and NO_COLOR is unset */
	CLI_COLOR_ALWAYS, /* --color=always: even into a pipe, NO_COLOR or not */
	CLI_COLOR_NEVER,
};

typedef struct cli_term {
	bool status;         /* standard error is a terminal (not TERM=dumb): redraw in place */
	bool color;          /* colour the report's severities on standard output */
	bool status_open;    /* a status line is on the screen, without its newline */
	uint64_t plain_ms;   /* when the last plain status line was printed */
	char plain_stage[16];
	bool json;           /* --progress-json: each event a JSON object on a line of its own */
} cli_term;

/* "auto", "always" or "never" (--color=WHEN): 0, or -1 for anything else. */
int cli_color_parse(enum cli_color *out, const char *arg);

/* Look at the terminal: standard error for progress, standard output for colour. */
void cli_term_init(cli_term *t, enum cli_color mode);

/*
 * A pg_progress_fn (ctx: the cli_term) writing to standard error.  On a
 * terminal a transient event replaces the status line ("\r", erase to
 * the end of the line), cut to the terminal's width, and any other event
 * is a line of its own; elsewhere every event that is not transient is a
 * plain "[stage] line", and a transient one only when its stage changes
 * or every 10 s, so that a log is not flooded.  With json, each event is
 * {"stage", "line", "transient", "done", "total", "unit", "bytes",
 * "elapsed_ms"} on a line (a transient one at most every second a stage),
 * for a program that runs pullgate: the service reads its children so.
 */
void cli_term_progress(void *ctx, const pg_progress *p);

/* Erase the status line, if one is shown, before other output. */
void cli_term_end(cli_term *t);

/*
 * Write a text report to f, the severities ("error", "warning" at the
 * start of a line) and the verdict in colour when t->color.
 */
int cli_term_write_report(const cli_term *t, FILE *f, const char *text, size_t len);

/* line on standard output as one line, made safe: its tags and paths are the pulls' text. */
void cli_put_line(const pg_buf *line);

#endif
