/* cmd_serve.c - pullgate serve: run the service in the foreground until SIGTERM or SIGINT. */
#include "cli/cli.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/sanitize.h"
#include "server/auth.h"
#include "server/server.h"

#include <getopt.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

enum { OPT_CONFIG = 1000, OPT_PORT, OPT_HASH };

static const struct option options[] = {
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "hash-password", no_argument, NULL, OPT_HASH },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* The service's log: one sanitized, time-stamped line on stderr. */
static void log_line(void *ctx, const char *line)
{
	pg_buf b = PG_BUF_INIT;
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	(void)ctx;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (pg_sanitize_terminal(&b, line, strlen(line), PG_SANITIZE_ONELINE) == 0)
		fprintf(stderr, "%s pullgate: %s\n", stamp, b.ptr);
	pg_buf_release(&b);
}

/* --hash-password: the password from the first line of stdin, its hash on stdout. */
static int hash_password(void)
{
	pg_buf pw = PG_BUF_INIT, hash = PG_BUF_INIT;
	int rc = 0;

	pg_buf_init(&pw, 4096);
	if (isatty(0))
		fprintf(stderr, "password: ");
	if (pg_buf_read_stream(&pw, stdin, "stdin") < 0) {
		rc = cli_fail("reading the password");
		goto done;
	}
	pg_buf_truncate(&pw, strcspn(pw.ptr, "\r\n"));
	if (pw.len < 8) {
		fprintf(stderr, "error: a maintainer's password wants at least 8 characters\n");
		rc = PG_EXIT_USAGE;
		goto done;
	}
	if (pg_auth_password_hash(&hash, pw.ptr, 0) < 0) {
		rc = cli_fail(NULL);
		goto done;
	}
	printf("%s\n", hash.ptr);
done:
	pg_buf_release_secret(&pw);
	pg_buf_release_secret(&hash);
	return rc;
}

int cmd_serve(int argc, char **argv)
{
	pg_config *config = NULL;
	pg_server *srv = NULL;
	pg_server_opts so;
	struct sigaction sa;
	const char *file = NULL;
	long port = -1;
	int c, rc = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case OPT_CONFIG:
			file = optarg;
			break;
		case OPT_PORT: {
			char *end;

			port = strtol(optarg, &end, 10);
			if (*end || end == optarg || port < 0 || port > 65535)
				return cli_usage("serve", "--port wants a number from 0 to 65535, not '%s'",
						 optarg);
			break;
		}
		case OPT_HASH:
			return hash_password();
		case 'h':
			cli_usage("serve", NULL);
			return 0;
		default:
			return cli_usage("serve", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc)
		return cli_usage("serve", "serve takes no arguments");
	if ((file ? pg_config_load(&config, file) : pg_config_new_default(&config)) < 0)
		return cli_fail(NULL);
	if (port >= 0)
		config->port = (unsigned)port;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	memset(&so, 0, sizeof(so));
	so.config = config;
	so.home = cli_home();
	so.datadir = cli_datadir();
	so.log = log_line;
	if (pg_server_start(&srv, &so) < 0) {
		rc = cli_fail("serve");
		goto done;
	}
	if (pg_server_requeued(srv))
		log_line(NULL, "jobs interrupted by the last stop are queued again");
	/* stdout carries the one line a script waits for */
	printf("pullgate: listening on %s\n", pg_server_url(srv));
	fflush(stdout);
	log_line(NULL, "serving; stop with SIGTERM or SIGINT");
	while (!stop_requested) {
		struct timespec ts = { 0, 100000000L };

		nanosleep(&ts, NULL);
	}
	log_line(NULL, "stopping: running jobs will resume at the next start");
	pg_server_stop(srv);
	log_line(NULL, "stopped");
done:
	pg_config_free(config);
	return rc;
}
