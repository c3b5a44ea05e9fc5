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
	int rc, err;

	if ((rc = cli_pull_parse(&a, "verify", argc, argv, options, NULL, NULL)) != CLI_CONTINUE)
		goto done;
	err = pg_verify(&report, &a.spec, a.policy, cli_home());
	rc = cli_pull_outcome(&a, err, report);
done:
	pg_report_free(report);
	cli_pull_release(&a);
	return rc;
}
