/* cmd_policy.c - pullgate policy check: validate policy files, naming every problem. */
#include "cli/cli.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/sanitize.h"
#include "policies/policy.h"

/* Print "FILE: ok", or each problem on its own line; PG_EXIT_UNDECIDED when not valid. */
static int check_one(const char *path)
{
	pg_policy_problem *problems = NULL;
	pg_buf line = PG_BUF_INIT, safe = PG_BUF_INIT;
	size_t n = 0, i;
	int err, rc = PG_EXIT_ACCEPT;

	if ((err = pg_policy_check(&problems, &n, path)) < 0)
		return cli_fail(NULL);
	for (i = 0; i < n; i++) {
		pg_buf_clear(&line);
		pg_buf_clear(&safe);
		if ((err = pg_policy_problem_format(&line, path, &problems[i])) < 0 ||
		    (err = pg_sanitize_terminal(&safe, line.ptr, line.len, PG_SANITIZE_ONELINE)) < 0) {
			rc = cli_fail(NULL);
			goto done;
		}
		fprintf(stderr, "%s\n", safe.ptr);
		rc = PG_EXIT_UNDECIDED;
	}
	if (n == 0) {
		if ((err = pg_sanitize_terminal(&safe, path, strlen(path), PG_SANITIZE_ONELINE)) < 0) {
			rc = cli_fail(NULL);
			goto done;
		}
		printf("%s: ok\n", safe.ptr);
	}
done:
	pg_policy_problems_free(problems, n);
	pg_buf_release(&line);
	pg_buf_release(&safe);
	return rc;
}

int cmd_policy(int argc, char **argv)
{
	int i, rc = PG_EXIT_ACCEPT, one;

	if (argc < 2)
		return cli_usage("policy", "policy wants a subcommand");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cli_help("policy");
	if (strcmp(argv[1], "check")) {
		pg_buf name = PG_BUF_INIT;

		pg_sanitize_terminal(&name, argv[1], strlen(argv[1]), PG_SANITIZE_ONELINE);
		rc = cli_usage("policy", "'%s' is not a policy subcommand", name.ptr);
		pg_buf_release(&name);
		return rc;
	}
	if (argc < 3)
		return cli_usage("policy", "policy check wants at least one file");
	for (i = 2; i < argc; i++) {
		if ((one = check_one(argv[i])) != PG_EXIT_ACCEPT)
			rc = one;
	}
	if (fflush(stdout) != 0) {
		fprintf(stderr, "error: writing the result: %s\n", strerror(errno));
		return PG_EXIT_UNDECIDED;
	}
	return rc;
}
