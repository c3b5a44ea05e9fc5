/* main.c - pullgate's entry point: one binary, subcommands from a table. */
#include "cli/cli.h"
#include "cli/pull_args.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/sanitize.h"

static const struct pg_cmd commands[] = {
	{ "verify", cmd_verify, "verify " CLI_PULL_USAGE,
	  "check that a pull is what it claims to be" },
	{ "policy", cmd_policy, "policy check FILE...",
	  "validate policy files" },
	{ "gate", cmd_gate,
	  "gate [--tree DIR] [--branch NAME] [--stages merge,build,boot,approve] "
	  "[--approve|--no-approve] [--boot-timeout S] [--url URL] [--explain-tests] " CLI_PULL_USAGE,
	  "verify, merge, build, boot and approve a pull" },
	{ "version", cmd_version, "version", "print the version" },
	{ "ktap", cmd_ktap, "ktap [--json] [--nonce N] LOGFILE", "judge a kernel boot log (KTAP, splats)" },
	{ "serve", cmd_serve, "serve [--config FILE] [--port N] | serve --hash-password",
	  "run the webhook service, job store and dashboard" },
};

static const struct pg_cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < PG_ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void usage_all(FILE *f)
{
	size_t i;

	fprintf(f, "usage: pullgate <command> [<args>]\n\n");
	for (i = 0; i < PG_ARRAY_SIZE(commands); i++)
		fprintf(f, "   %-10s %s\n", commands[i].name, commands[i].summary);
}

int cli_fail(const char *what)
{
	pg_buf msg = PG_BUF_INIT;

	pg_sanitize_terminal(&msg, pg_error_last(), strlen(pg_error_last()),
			     PG_SANITIZE_ONELINE);
	if (what)
		fprintf(stderr, "error: %s: %s\n", what, msg.ptr);
	else
		fprintf(stderr, "error: %s\n", msg.ptr);
	pg_buf_release(&msg);
	return PG_EXIT_UNDECIDED;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	const struct pg_cmd *c = find_cmd(cmd);
	va_list ap;

	if (fmt) {
		pg_buf msg = PG_BUF_INIT, safe = PG_BUF_INIT;

		/* the message may quote the user's arguments: print them clean */
		va_start(ap, fmt);
		if (pg_buf_vprintf(&msg, fmt, ap) == 0 &&
		    pg_sanitize_terminal(&safe, msg.ptr, msg.len, PG_SANITIZE_ONELINE) == 0)
			fprintf(stderr, "error: %s\n", safe.ptr);
		va_end(ap);
		pg_buf_release(&msg);
		pg_buf_release(&safe);
	}
	if (c)
		fprintf(stderr, "usage: pullgate %s\n", c->usage);
	return PG_EXIT_USAGE;
}

void cli_puts_safe(FILE *f, const char *s)
{
	pg_buf b = PG_BUF_INIT;

	if (pg_sanitize_terminal(&b, s, strlen(s), 0) == 0)
		fputs(b.ptr, f);
	pg_buf_release(&b);
}

const char *cli_home(void)
{
	static char path[4096];
	const char *h = getenv("PULLGATE_HOME");

	if (h && *h)
		return h;
	h = getenv("HOME");
	snprintf(path, sizeof(path), "%s/.cache/pullgate", h && *h ? h : ".");
	return path;
}

const char *cli_datadir(void)
{
	const char *d = getenv("PULLGATE_DATADIR");

	return d && *d ? d : PG_DATADIR;
}

int cmd_version(int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		return cli_usage("version", "'version' takes no arguments");
	printf("pullgate %s\n", PG_VERSION);
	return 0;
}

int main(int argc, char **argv)
{
	const struct pg_cmd *c;

	if (argc < 2) {
		usage_all(stderr);
		return PG_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage_all(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version"))
		return cmd_version(1, argv + 1);
	c = find_cmd(argv[1]);
	if (!c) {
		pg_buf name = PG_BUF_INIT;

		pg_sanitize_terminal(&name, argv[1], strlen(argv[1]), PG_SANITIZE_ONELINE);
		fprintf(stderr, "error: '%s' is not a pullgate command\n", name.ptr);
		pg_buf_release(&name);
		usage_all(stderr);
		return PG_EXIT_USAGE;
	}
	return c->run(argc - 1, argv + 1);
}
