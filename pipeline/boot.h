/* boot.h - boot the built kernel in QEMU and judge its console. */
#ifndef PG_BOOT_H
#define PG_BOOT_H

#include "pipeline/ktap.h"

#include <signal.h>

typedef struct pg_boot_opts {
	const char *const *argv;       /* scripts/kernel/boot.sh BUILD_DIR LOG TIMEOUT */
	const char *const *env;
	const char *console_log;       /* where boot.sh writes the console */
	const char *log;               /* boot.sh's own messages are appended here */
	unsigned timeout_s;            /* a little more than boot.sh's own timeout */
	volatile sig_atomic_t *cancel;
} pg_boot_opts;

typedef struct pg_boot_run {
	int exit_code;                 /* boot.sh: 0 powered off, 1 no marker, 124 timeout */
	bool timed_out;                /* boot.sh's timeout or ours */
	bool cancelled;
	uint64_t elapsed_ms;
	pg_boot_result *result;        /* the parsed console; NULL when there was none */
} pg_boot_run;

void pg_boot_run_release(pg_boot_run *r);

/* Boot and parse; 0 when it ran (judge r), negative when it could not run. */
int pg_boot(pg_boot_run *r, const pg_boot_opts *opts);

#endif
