/* cli.h - the subcommand table and the helpers every cmd_<verb>.c shares. */
#ifndef PG_CLI_H
#define PG_CLI_H

#include "common/compat.h"

#include <getopt.h>
#include <signal.h>

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
int cmd_help(int argc, char **argv);
int cmd_guard(int argc, char **argv);
int cmd_conflicts(int argc, char **argv);

/* The command list, for `pullgate`, `pullgate help` and an unknown command. */
void cli_usage_all(FILE *f);

/*
 * Print the manual page of a command or topic as plain text on stdout
 * (what --help prints): 0, or the usage error when there is none.
 */
int cli_help(const char *topic);
int cmd_attest(int argc, char **argv);

/* Print "error: <msg>" for the last library error; returns PG_EXIT_UNDECIDED. */
int cli_fail(const char *what);

/* Print "usage: pullgate <usage>" for the named command; returns PG_EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) PG_PRINTF(2, 3);

/* Print sanitized text to a stream (control characters and escapes removed). */
void cli_puts_safe(FILE *f, const char *s);

/* cli_parse_options returns this when the command should go on. */
#define CLI_CONTINUE (-1)

/*
 * A command's handler for one of its options (c is the option's value in
 * the table, arg its argument or NULL): 0 when it was handled, -1 when c is
 * not one of the command's options, or an exit status to stop with (after
 * printing).
 */
typedef int (*cli_option_fn)(void *ctx, int c, const char *arg);

/*
 * The one getopt_long loop: fn sees every option of the table.  --help (-h)
 * prints the command's manual page (cli_help).  An unknown option, or one missing its value, is named
 * in a usage error.  Returns CLI_CONTINUE with *first_arg at the first
 * operand, or the exit status to stop with.
 */
int cli_parse_options(int *first_arg, const char *cmd, int argc, char **argv,
		      const struct option *options, cli_option_fn fn, void *ctx);

/* SIGINT and SIGTERM set the flag returned (never cleared). */
volatile sig_atomic_t *cli_catch_stop_signals(void);

/* SIGHUP sets the flag returned; the caller clears it. */
volatile sig_atomic_t *cli_catch_reload_signal(void);

/*
 * Send state ("READY=1", "RELOADING=1", ...) to the service manager when
 * $NOTIFY_SOCKET names one (a path or "@abstract"): 1 sent, 0 no socket,
 * -1 it could not be sent (errno).
 */
int cli_sd_notify(const char *state);

/* The directory for caches and state: $PULLGATE_HOME or ~/.cache/pullgate. */
const char *cli_home(void);

/*
 * Where scripts/kernel/, qemu-images/ and patches/ live: $PULLGATE_DATADIR;
 * else, found from the binary's own path, ../share/pullgate (installed) or
 * ../.. (the build tree, build/<config>/pullgate); else the data directory
 * the build was configured with (PG_DATADIR, $(PREFIX)/share/pullgate).
 */
const char *cli_datadir(void);

#endif
