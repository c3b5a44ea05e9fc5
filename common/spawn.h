/* spawn.h - run a child from an argv, never a shell: timeout, captured output, log. */
#ifndef PG_SPAWN_H
#define PG_SPAWN_H

#include "common/buf.h"

#include <signal.h>

/*
 * The child runs in a process group of its own, with stdin from /dev/null
 * and stdout and stderr merged into one pipe.  On timeout or cancellation
 * the whole group gets SIGTERM, then SIGKILL after a grace period, so that
 * make's children and QEMU die with it.
 */
typedef int (*pg_spawn_line_fn)(void *ctx, const char *line, size_t len);

typedef struct pg_spawn_opts {
	unsigned version;
	const char *cwd;                 /* NULL: inherit */
	const char *const *env;          /* extra "KEY=VALUE" entries, NULL-terminated */
	const char *log_path;            /* output is appended here when set */
	size_t tail_max;                 /* keep the last tail_max bytes of output */
	unsigned timeout_ms;             /* 0: none */
	unsigned grace_ms;               /* between SIGTERM and SIGKILL; 0: 2000 */
	pg_spawn_line_fn on_line;        /* called for each output line, may be NULL */
	void *ctx;
	volatile sig_atomic_t *cancel;   /* when it becomes non-zero the child is stopped */
	/* called once the child runs, with its pid (its process group's id too); may be NULL */
	void (*on_start)(void *ctx, int pid);
	/*
	 * The child's address space in bytes (RLIMIT_AS), 0: unlimited; and no
	 * core file (RLIMIT_CORE 0): a child that reads hostile input may blow
	 * up, and must neither take the machine's memory nor leave its image.
	 */
	uint64_t max_memory;
	bool no_core;
	/*
	 * The child is killed when the thread that started it dies (with its
	 * process, a SIGKILL included): a service killed mid-verify leaves no
	 * orphan holding its locks.
	 */
	bool die_with_parent;
} pg_spawn_opts;

#define PG_SPAWN_OPTS_VERSION 1
#define PG_SPAWN_OPTS_INIT { PG_SPAWN_OPTS_VERSION, NULL, NULL, NULL, 0, 0, 0, NULL, NULL, NULL, NULL, 0, false, false }

typedef struct pg_spawn_result {
	int exit_code;     /* the exit status, or -1 when killed by a signal */
	int signal;        /* the signal that ended it, or 0 */
	bool timed_out;
	bool cancelled;
	uint64_t elapsed_ms;
	pg_buf tail;       /* the end of the output, at most tail_max bytes */
} pg_spawn_result;

void pg_spawn_result_init(pg_spawn_result *res);
void pg_spawn_result_release(pg_spawn_result *res);

/*
 * Run argv[0] (looked up in PATH) with argv.  Returns 0 when the child ran,
 * whatever its exit status (see *res); PG_ENOTFOUND when argv[0] cannot be
 * executed, PG_EIO when the pipe, fork or log fail.  A non-zero return from
 * on_line stops the child and is returned.
 */
int pg_spawn_run(pg_spawn_result *res, const char *const argv[], const pg_spawn_opts *opts);

/* Whether the child exited 0 without timeout or cancellation. */
bool pg_spawn_succeeded(const pg_spawn_result *res);

#endif
