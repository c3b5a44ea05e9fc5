/* cmd_serve.c - pullgate serve: run the service in the foreground until SIGTERM or SIGINT. */
#include "cli/cli.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sanitize.h"
#include "server/auth.h"
#include "server/server.h"

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

/*
 * SIGHUP: the configuration file again, and the policy it names; both
 * valid, they replace the running ones, else those stay.  One log line.
 */
static void reload(pg_server *srv, const char *file)
{
	pg_config *c = NULL;
	pg_buf restart = PG_BUF_INIT, line = PG_BUF_INIT;

	cli_sd_notify("RELOADING=1");
	if (!file)
		pg_buf_puts(&line, "SIGHUP: serve runs without --config: nothing to read again");
	else if (pg_config_load(&c, file) < 0 || pg_server_reload(srv, c, &restart) < 0) {
		pg_buf_printf(&line, "reload refused, the running configuration stays: %s",
			      pg_error_last());
		pg_config_free(c);
	} else {
		pg_buf_printf(&line, "reloaded %s%s%s", file,
			      restart.len ? "; a restart is needed to change " : "", restart.ptr);
	}
	log_line(NULL, line.ptr);
	pg_error_clear();
	pg_buf_release(&restart);
	pg_buf_release(&line);
	cli_sd_notify("READY=1");
}

struct serve_args {
	const char *file;
	long port;
	bool hash;
};

static int serve_option(void *ctx, int c, const char *arg)
{
	struct serve_args *sa = ctx;
	char *end;

	switch (c) {
	case OPT_CONFIG:
		sa->file = arg;
		return 0;
	case OPT_PORT:
		sa->port = strtol(arg, &end, 10);
		if (*end || end == arg || sa->port < 0 || sa->port > 65535)
			return cli_usage("serve", "--port wants a number from 0 to 65535, not '%s'",
					 arg);
		return 0;
	case OPT_HASH:
		sa->hash = true;
		return 0;
	default:
		return -1;
	}
}

int cmd_serve(int argc, char **argv)
{
	pg_config *config = NULL;
	pg_server *srv = NULL;
	pg_server_opts so = PG_SERVER_OPTS_INIT;
	struct serve_args sa = { NULL, -1, false };
	volatile sig_atomic_t *stop, *hup;
	int rc, first = 0;

	if ((rc = cli_parse_options(&first, "serve", argc, argv, options, serve_option, &sa)) !=
	    CLI_CONTINUE)
		return rc;
	if (sa.hash)
		return hash_password();
	if (first != argc)
		return cli_usage("serve", "serve takes no arguments");
	if ((sa.file ? pg_config_load(&config, sa.file) : pg_config_new_default(&config)) < 0)
		return cli_fail(NULL);
	if (sa.port >= 0)
		config->port = (unsigned)sa.port;
	rc = 0;
	stop = cli_catch_stop_signals();
	hup = cli_catch_reload_signal();
	/* a peer gone mid-write (a client, a receiver over TLS) is an error to handle, not a death */
	signal(SIGPIPE, SIG_IGN);

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
	log_line(NULL, "serving; stop with SIGTERM or SIGINT, read the configuration again "
		 "with SIGHUP");
	if (cli_sd_notify("READY=1") < 0)
		log_line(NULL, "cannot tell the service manager it is ready ($NOTIFY_SOCKET)");
	while (!*stop) {
		struct timespec ts = { 0, 100000000L };

		if (*hup) {
			*hup = 0;
			reload(srv, sa.file);
		}
		nanosleep(&ts, NULL);
	}
	cli_sd_notify("STOPPING=1");
	log_line(NULL, "stopping: running jobs will resume at the next start");
	pg_server_stop(srv);
	log_line(NULL, "stopped");
done:
	pg_config_free(config);
	return rc;
}
