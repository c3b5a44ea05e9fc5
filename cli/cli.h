/* cli.h - the subcommand table and the helpers every cmd_<verb>.c shares. */
#ifndef PG_CLI_H
#define PG_CLI_H

#include "common/compat.h"

/* Exit statuses, shared by every subcommand. */
enum pg_exit {
	PG_EXIT_ACCEPT = 0,  /* the pull is good / the command succeeded */
	PG_EXIT_REJECT = 1,  /* the pull is bad: a report with findings */
	PG_EXIT_USAGE = 2,   /* the command line is wrong */
	PG_EXIT_UNDECIDED = 3 /* could not decide: missing repo, bad input... */
};

struct pg_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *usage;
	const char *summary;
};

int cmd_policy(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_gate(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_ktap(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* Print "error: <msg>" for the last library error; returns PG_EXIT_UNDECIDED. */
int cli_fail(const char *what);

/* Print "usage: pullgate <usage>" for the named command; returns PG_EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) PG_PRINTF(2, 3);

/* Print sanitized text to a stream (control characters and escapes removed). */
void cli_puts_safe(FILE *f, const char *s);

/* The directory for caches and state: $PULLGATE_HOME or ~/.cache/pullgate. */
const char *cli_home(void);

/* Where scripts/ and qemu-images/ live: $PULLGATE_DATADIR or the source tree. */
const char *cli_datadir(void);

#endif
