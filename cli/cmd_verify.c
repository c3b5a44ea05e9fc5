/* cmd_verify.c - pullgate verify: check a pull and print the report. */
#include "cli/cli.h"
#include "cli/pull_args.h"
#include "common/error.h"

enum { OPT_VERIFY_INDEX = CLI_OPT__NEXT };

static const struct option options[] = {
	CLI_PULL_OPTIONS,
	{ "verify-index", no_argument, NULL, OPT_VERIFY_INDEX },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int verify_option(void *ctx, int c, const char *arg)
{
	bool *verify_index = ctx;

	(void)arg;
	if (c != OPT_VERIFY_INDEX)
		return -1;
	*verify_index = true;
	return 0;
}

int cmd_verify(int argc, char **argv)
{
	cli_pull_args a;
	pg_report *report = NULL;
	bool verify_index = false;
	int rc, err;

	if ((rc = cli_pull_parse(&a, "verify", argc, argv, options, verify_option,
				 &verify_index)) != CLI_CONTINUE)
		goto done;
	a.spec.verify_index = verify_index;
	cli_pull_deadline(&a, true);
	err = pg_verify(&report, &a.spec, a.policy, cli_home());
	cli_pull_deadline(&a, false);
	rc = cli_pull_outcome(&a, err, report);
done:
	pg_report_free(report);
	cli_pull_release(&a);
	return rc;
}
