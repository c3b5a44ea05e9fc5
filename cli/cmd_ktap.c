/* cmd_ktap.c - "pullgate ktap": judge a kernel boot log by its KTAP results and splats. */
#include "cli/cli.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "pipeline/ktap.h"
#include "pipeline/lava.h"

/* Boot logs are a few MiB at most; anything far larger is not one. */
#define KTAP_LOG_MAX ((size_t)64 << 20)

static const struct option options[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "nonce", required_argument, NULL, 'n' },
	{ "lava", no_argument, NULL, 'l' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct ktap_args {
	bool json;
	const char *nonce;   /* the marker must carry it */
	bool lava;           /* LOGFILE is a LAVA job's log: its console is read out of it */
};

static int ktap_option(void *ctx, int c, const char *arg)
{
	struct ktap_args *k = ctx;

	switch (c) {
	case 'j':
		k->json = true;
		return 0;
	case 'l':
		k->lava = true;
		return 0;
	case 'n':
		if (!*arg || strlen(arg) > PG_KTAP_NONCE_MAX ||
		    strspn(arg, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") !=
		    strlen(arg))
			return cli_usage("ktap", "--nonce wants letters and digits, not '%s'", arg);
		k->nonce = arg;
		return 0;
	default:
		return -1;
	}
}

/* Replace a LAVA job's log by the console its target records hold. */
static int lava_console(pg_buf *log, const char *path)
{
	pg_buf console;
	size_t n = 0;
	int err;

	pg_buf_init(&console, KTAP_LOG_MAX);
	if ((err = pg_lava_console(&console, &n, log->ptr, log->len)) == 0 && n == 0)
		err = pg_error_set(PG_EINVALID, "'%s' holds no console record of a LAVA job log", path);
	if (err == 0) {
		pg_buf t = *log;

		*log = console;
		console = t;
	}
	pg_buf_release(&console);
	return err;
}

int cmd_ktap(int argc, char **argv)
{
	pg_buf log = PG_BUF_INIT, report = PG_BUF_INIT;
	pg_boot_result *res = NULL;
	const char *path;
	struct ktap_args k = { false, NULL, false };
	int rc, err, first = 0, problems = 0;

	if ((rc = cli_parse_options(&first, "ktap", argc, argv, options, ktap_option, &k)) !=
	    CLI_CONTINUE)
		return rc;
	if (first == argc)
		return cli_usage("ktap", "LOGFILE is required");
	if (argc - first > 1)
		return cli_usage("ktap", "one LOGFILE only");
	path = argv[first];
	rc = PG_EXIT_UNDECIDED;

	pg_buf_init(&log, KTAP_LOG_MAX);
	if (!strcmp(path, "-"))
		err = pg_buf_read_stream(&log, stdin, "stdin");
	else
		err = pg_buf_read_file(&log, path);
	if (err < 0) {
		rc = cli_fail("ktap");
		goto done;
	}
	if (k.lava && (err = lava_console(&log, path)) < 0) {
		rc = cli_fail("ktap");
		goto done;
	}
	if ((err = pg_ktap_parse(&res, log.ptr, log.len)) < 0) {
		rc = cli_fail("ktap");
		goto done;
	}
	err = k.json ? pg_ktap_render_json(&report, res) : pg_ktap_render_text(&report, res);
	/* with --nonce, the marker must be this boot's (the renderers accept any marker) */
	if (err == 0 && k.nonce && !k.json &&
	    (!res->marker_nonce || strcmp(res->marker_nonce, k.nonce)))
		err = pg_buf_printf(&report, "evidence missing: the init's marker does not carry "
				    "nonce %s\n", k.nonce);
	/* the gate's judge (pipeline/evidence.c judges through the same function) */
	if (err == 0)
		err = problems = pg_ktap_problems(res, k.nonce, NULL, NULL);
	if (err < 0) {
		rc = cli_fail("ktap");
		goto done;
	}
	cli_puts_safe(stdout, report.ptr);
	rc = problems == 0 ? PG_EXIT_ACCEPT : PG_EXIT_REJECT;
done:
	pg_boot_result_free(res);
	pg_buf_release(&report);
	pg_buf_release(&log);
	return rc;
}
