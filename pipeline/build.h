/* build.h - run the kernel build and read its diagnostics. */
#ifndef PG_BUILD_H
#define PG_BUILD_H

#include "common/buf.h"

#include <signal.h>

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
 * error|warning: MSG", ld "FILE:(section+0x..): undefined reference ..."
 * and make's "make[N]: *** [...] Error N" is not a diagnostic (0).
 */
int pg_diag_parse(pg_diag *out, const char *line, size_t len);

/* A key for comparing warnings across builds: "file: message", line numbers dropped. */
int pg_diag_key(pg_buf *out, const pg_diag *d);

typedef void (*pg_progress_fn)(void *ctx, const char *stage, const char *line);

typedef struct pg_build_opts {
	const char *const *argv;       /* the build command (scripts/kernel/build.sh ...) */
	const char *const *env;
	const char *log;               /* appended to */
	unsigned timeout_s;
	size_t objects_hint;           /* objects in a full build, for progress; 0: unknown */
	pg_progress_fn progress;
	void *ctx;
	volatile sig_atomic_t *cancel;
} pg_build_opts;

typedef struct pg_build_result {
	bool ok;
	bool timed_out;
	bool cancelled;
	int exit_code;
	uint64_t elapsed_ms;
	size_t objects;      /* compile steps seen ("  CC  foo.o" lines) */
	pg_diag *diags;
	size_t ndiags;       /* capped: at most PG_BUILD_MAX_DIAGS are kept */
	pg_buf tail;         /* the end of the output */
} pg_build_result;

#define PG_BUILD_MAX_DIAGS 1000

void pg_build_result_init(pg_build_result *r);
void pg_build_result_release(pg_build_result *r);

/* Run the build; 0 when it ran (see r->ok), negative when it could not be run. */
int pg_build_run(pg_build_result *r, const pg_build_opts *opts);

#endif
