/* farm.h - what build.sh says the icecream farm did: its "build.sh: icecc: " lines, bounded and made safe. */
#ifndef PG_FARM_H
#define PG_FARM_H

#include "common/buf.h"
#include "report/report.h"

/*
 * build.sh, compiling through an iceccd (PG_ICECC), prints on its stderr,
 * which the build stage reads with make's output, lines of
 * PG_FARM_PREFIX and one of:
 *
 *   environment ENV: CARRIES        the compiler environment sent to the farm:
 *                                   its id (32 hex digits) and what it holds
 *   HOST compiled N objects
 *   N objects compiled here
 *   HOST failed N jobs (REASON), compiled here instead
 *   warning: TEXT
 *   farm compiled M of T objects    the total, last
 *
 * A line of the prefix that is none of these is kept as it is, as a
 * warning's text is.  It is a script's output about hosts and paths, not
 * the pull's, and still untrusted text: each line is made safe for a
 * terminal (pg_sanitize_terminal, one line) and cut at PG_FARM_LINE_MAX
 * bytes, and at most PG_FARM_LINES_MAX lines of a build are kept.
 */
#define PG_FARM_PREFIX "build.sh: icecc: "
#define PG_FARM_LINE_MAX 512
#define PG_FARM_LINES_MAX 64
/* The hex digits of an environment's id: icecc names its tarball by an MD5. */
#define PG_FARM_ENV_HEXSZ 32

typedef struct pg_farm {
	pg_buf env;            /* the environment line's "ENV: CARRIES"; empty: none seen */
	pg_buf lines;          /* the other lines, in order, "; " between */
	size_t kept;           /* lines kept, the environment's included */
	size_t dropped;        /* lines past PG_FARM_LINES_MAX: counted, not kept */
	bool has_total;        /* a "farm compiled M of T objects" line was seen (kept or not) */
	size_t farm_objects;   /* its M */
	size_t total_objects;  /* its T */
} pg_farm;

void pg_farm_init(pg_farm *f);
void pg_farm_release(pg_farm *f);

/*
 * One line of build.sh's output (without its newline): 1 when it is one
 * of build.sh's icecc lines, taken into f; 0 for any other line, f
 * unchanged; PG_ENOMEM.  A second environment line is kept among the
 * others; the last total line gives the counts.
 */
int pg_farm_line(pg_farm *f, const char *line, size_t len);

/*
 * Record f in a build's provenance: p->farm_env the environment's "ENV:
 * CARRIES", p->farm the other lines and, when some were dropped, "N more
 * lines not kept"; each left NULL when f holds none (a build without the
 * farm has neither).
 */
int pg_farm_record(pg_provenance *p, const pg_farm *f);

#endif
