/* cmd_verify.c - pullgate verify: check a pull and print the report. */
#include "cli/cli.h"
#include "cli/pull_args.h"
#include "common/error.h"

static const struct option options[] = {
	CLI_PULL_OPTIONS,
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_verify(int argc, char **argv)
{
	cli_pull_args a;
	pg_report *report = NULL;
	int c, rc, err;

	if ((rc = cli_pull_init(&a, "verify", argc, argv, options)) != 0)
		return rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		if (c == 'h') {
			cli_usage("verify", NULL);
			rc = 0;
			goto done;
		}
		if ((rc = cli_pull_option(&a, c, optarg)) > 0)
			goto done;
		if (rc < 0) {
			rc = cli_usage("verify", "unknown option '%s'", argv[optind - 1]);
			goto done;
		}
	}
	if ((rc = cli_pull_finish(&a, argc, argv, optind)) != 0)
		goto done;
	if ((err = pg_verify(&report, &a.spec, a.policy, cli_home())) < 0)
		rc = cli_pull_failed(&a, err);
	else
		rc = cli_pull_print(&a, report);
done:
	pg_report_free(report);
	cli_pull_release(&a);
	return rc;
}
