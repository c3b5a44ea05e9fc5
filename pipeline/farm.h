/* farm.h - what build.sh says the icecream farm did: its farm file's lines, bounded and made safe. */
#ifndef PG_FARM_H
#define PG_FARM_H

#include "common/buf.h"
#include "report/report.h"

/*
 * build.sh, asked to compile through an iceccd (PG_ICECC), writes what the
 * farm did, once make has ended, to a file beside its log: LOG's name with
 * ".log" replaced by "-farm.txt" (pg_farm_path), one of these a line:
 *
 *   environment ENV: CARRIES        the compiler environment sent to the farm:
 *                                   its id (32 hex digits) and what it holds
 *   HOST compiled N objects
 *   HOST failed N jobs (WHY), compiled here instead
 *   HOST: N objects compiled here again for their warnings (WHY)
 *   N objects compiled here
 *   warning: TEXT
 *   farm compiled M of T objects    the total, last
 *
 * It removes the file when it starts and renames its own over it at the
 * end.  It prints the same lines on stderr too, behind "build.sh: icecc: ",
 * for people; those are never read: make's output shares that stream, and a
 * pull's Makefile could print a farm that never ran.
 *
 * The file only removes that trivial forgery.  build.sh runs the pull's
 * code (its Makefiles, its scripts), which can write any file build.sh can,
 * the farm file included: what a build says of itself is only as trusted
 * as the build, and this is no sandbox.  So a line of the file is untrusted
 * text: a line none of these is kept as it is, as a warning's text is; each
 * is made safe for a terminal (pg_sanitize_terminal, one line) and cut at
 * PG_FARM_LINE_MAX bytes, at most PG_FARM_LINES_MAX lines of a build are
 * kept, and the file is read only up to PG_FARM_FILE_MAX bytes.
 */
#define PG_FARM_LINE_MAX 512
#define PG_FARM_LINES_MAX 64
#define PG_FARM_FILE_MAX ((size_t)64 << 10)
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
 * One line of the farm file (without its newline), taken into f: 0, or
 * PG_ENOMEM.  Its trailing blanks go; a line empty then is skipped.  A second
 * environment line is kept among the others; the last total line gives
 * the counts.
 */
int pg_farm_line(pg_farm *f, const char *line, size_t len);

/* Each line of text (the farm file's content), as pg_farm_line takes it. */
int pg_farm_parse(pg_farm *f, const char *text, size_t len);

/* The farm file of a build whose log is log, as build.sh names it: ${log%.log}-farm.txt. */
int pg_farm_path(pg_buf *out, const char *log);

/*
 * Read the farm file at path into f.  It is opened without blocking and
 * without following a symlink, and must be a regular file of at most
 * PG_FARM_FILE_MAX bytes.  0 when read; 0 with f unchanged when there is
 * none (build.sh wrote nothing); 0 with f holding one "warning: ..." line
 * saying why when it was refused or could not be read (the build's record
 * is the pull's code's to spoil, the run is not); PG_ENOMEM.
 */
int pg_farm_read(pg_farm *f, const char *path);

/*
 * Record f in a build's provenance: p->farm_env the environment's "ENV:
 * CARRIES", p->farm the other lines and, when some were dropped, "N more
 * lines not kept"; each left NULL when f holds none (a build without the
 * farm has neither).
 */
int pg_farm_record(pg_provenance *p, const pg_farm *f);

#endif
