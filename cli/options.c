/* options.c - the one getopt loop every command runs, and the signals that ask it to stop. */
#include "cli/cli.h"

#include <signal.h>

static volatile sig_atomic_t stop_requested, reload_requested;

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload_requested = 1;
	else
		stop_requested = 1;
}

static void catch_signal(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

volatile sig_atomic_t *cli_catch_stop_signals(void)
{
	catch_signal(SIGINT);
	catch_signal(SIGTERM);
	return &stop_requested;
}

volatile sig_atomic_t *cli_catch_reload_signal(void)
{
	catch_signal(SIGHUP);
	return &reload_requested;
}

/*
 * getopt_long's own messages are off (opterr = 0), so the wrong argument is
 * named here.  After a failed short option in a cluster ("-xyz") optind has
 * not moved past the cluster, so argv[optind - 1] is the argument before it:
 * the option character (optopt) names it instead.
 */
static int bad_option(const char *cmd, int c, char **argv)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		return cli_usage(cmd, "option '%s' wants a value", arg);
	if (optopt > 0 && optopt < 256 && !(arg[0] == '-' && arg[1] == '-'))
		return cli_usage(cmd, "unknown option '-%c'", optopt);
	return cli_usage(cmd, "unknown option '%s'", arg);
}

int cli_parse_options(int *first_arg, const char *cmd, int argc, char **argv,
		      const struct option *options, cli_option_fn fn, void *ctx)
{
	int c, rc;

	optind = 0; /* 0, not 1: glibc starts a new scan from scratch */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		if (c == 'h')
			return cli_help(cmd);
		if (c == '?' || c == ':')
			return bad_option(cmd, c, argv);
		if ((rc = fn(ctx, c, optarg)) > 0)
			return rc;
		if (rc < 0)
			return bad_option(cmd, '?', argv);
	}
	*first_arg = optind;
	return CLI_CONTINUE;
}
