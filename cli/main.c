/* main.c - pullgate's entry point: one binary, subcommands from a table. */
#include "cli/cli.h"
#include "cli/pull_args.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/sanitize.h"
#include "common/testpoint.h"

#include <limits.h>
#include <unistd.h>

/* Each command's options are in its manual page: pullgate help CMD. */
static const struct pg_cmd commands[] = {
	{ "verify", cmd_verify, "verify [options] REPO TAG",
	  "check that a pull is what it claims to be" },
	{ "policy", cmd_policy, "policy check FILE...",
	  "validate policy files" },
	{ "gate", cmd_gate, "gate [options] REPO TAG | gate --queue FILE [options]",
	  "verify, merge, build, boot and approve a pull, or test a queue of pulls as a stack" },
	{ "conflicts", cmd_conflicts,
	  "conflicts [options] [--ahead FILE] REPO TAG",
	  "merge a pull in memory with the pulls ahead of it in a queue: its textual conflicts" },
	{ "version", cmd_version, "version [--verbose]",
	  "print the version (--verbose: and the data and home directories)" },
	{ "ktap", cmd_ktap, "ktap [--json] [--nonce N] LOGFILE", "judge a kernel boot log (KTAP, splats)" },
	{ "attest", cmd_attest,
	  "attest verify (--signer FPR | --policy FILE | --config FILE) [--keyring FILE] [--tree DIR] "
	  "COMMIT",
	  "check the signed attestation (refs/notes/pullgate) on an approved merge" },
	{ "serve", cmd_serve, "serve [--config FILE] [--port N] | serve --hash-password",
	  "run the webhook service, job store and dashboard" },
	{ "guard", cmd_guard, "guard [--upstream REV] [--policy FILE] [REMOTE [URL]] | guard --install [--force]",
	  "a git pre-push hook: refuse to push re-created upstream commits" },
	{ "help", cmd_help, "help [COMMAND]", "show a command's manual page" },
};

static const struct pg_cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < PG_ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

void cli_usage_all(FILE *f)
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
	if (c && c->run != cmd_help)
		fprintf(stderr, "(every option: pullgate help %s)\n", c->name);
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

/* A data directory holds the kernel scripts the gate runs. */
static bool is_datadir(const char *dir)
{
	char path[PATH_MAX];

	return (size_t)snprintf(path, sizeof(path), "%s/scripts/kernel/build.sh", dir) <
		       sizeof(path) && access(path, R_OK) == 0;
}

/* Canonical form of dir + rel into out, when it is a data directory. */
static bool try_datadir(char *out, const char *dir, const char *rel)
{
	char path[PATH_MAX];

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) >= sizeof(path) ||
	    !is_datadir(path))
		return false;
	return realpath(path, out) != NULL;
}

const char *cli_datadir(void)
{
	static char found[PATH_MAX];
	char exe[PATH_MAX], *slash;
	const char *d = getenv("PULLGATE_DATADIR");
	ssize_t n;

	if (d && *d)
		return d;
	if (found[0])
		return found;
	/*
	 * Where the binary is, not where it was built: an installed one
	 * (PREFIX/bin) has its data in PREFIX/share/pullgate wherever PREFIX
	 * was moved to; one in the build tree (build/<config>/) uses the
	 * checkout around it.
	 */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')))
			*slash = '\0';
		if (try_datadir(found, exe, "../share/pullgate") ||
		    try_datadir(found, exe, "../.."))
			return found;
	}
	found[0] = '\0';
	return PG_DATADIR;
}

int cmd_version(int argc, char **argv)
{
	bool verbose = argc == 2 && !strcmp(argv[1], "--verbose");

	if (argc > 1 && !verbose)
		return cli_usage("version", "'version' takes no arguments but --verbose");
	printf("pullgate %s\n", PG_VERSION);
	if (verbose) {
		fputs("data: ", stdout);
		cli_puts_safe(stdout, cli_datadir());
		fputs("\nhome: ", stdout);
		cli_puts_safe(stdout, cli_home());
		fputs("\n", stdout);
		/* a build for tests says so: its runs stop where PULLGATE_TEST_STOP asks */
		if (PG_TEST_POINTS_BUILT)
			fputs("test points: built in (PULLGATE_TEST_STOP)\n", stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct pg_cmd *c;

	if (argc < 2) {
		cli_usage_all(stderr);
		return PG_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		cli_usage_all(stdout);
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
		cli_usage_all(stderr);
		return PG_EXIT_USAGE;
	}
	return c->run(argc - 1, argv + 1);
}
