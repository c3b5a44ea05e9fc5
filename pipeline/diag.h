/* diag.h - compiler and linker diagnostics in build output: parse a line, key a warning. */
#ifndef PG_DIAG_H
#define PG_DIAG_H

#include "common/buf.h"

/* A compiler or linker diagnostic: "file:line:col: error: message". */
typedef struct pg_diag {
	char *file;      /* as printed; NULL for a diagnostic without a location */
	unsigned line;
	bool error;      /* error (or fatal error); else warning */
	char *message;   /* without the "error: " prefix */
} pg_diag;

void pg_diag_release(pg_diag *d);

/*
 * Parse one line of build output.  1 and *out filled for a diagnostic, 0
 * for any other line.  Recognises gcc/clang "FILE:LINE[:COL]: error|fatal
 * error|warning: MSG".  Lines without a line number are not diagnostics:
 * make's "make[N]: *** [...] Error N", and also ld's "FILE:(section+0x..):
 * undefined reference ..." (a link failure is quoted from the build's tail).
 */
int pg_diag_parse(pg_diag *out, const char *line, size_t len);

/* A key for comparing warnings across builds: "file: message", line numbers dropped. */
int pg_diag_key(pg_buf *out, const pg_diag *d);

#endif
