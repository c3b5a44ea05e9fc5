/* cmd_verify.c - pullgate verify: check a pull and print the report. */
#include "cli/cli.h"
#include "common/buf.h"
#include "common/error.h"
#include "policies/policy.h"
#include "verifier/verify.h"

#include <getopt.h>

enum {
	OPT_UPSTREAM = 1000,
	OPT_JSON,
	OPT_PROTECT,
	OPT_ALLOW,
	OPT_MAX_COMMITS,
	OPT_POLICY,
};

static const struct option options[] = {
	{ "upstream", required_argument, NULL, OPT_UPSTREAM },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "protect", required_argument, NULL, OPT_PROTECT },
	{ "allow-committer", required_argument, NULL, OPT_ALLOW },
	{ "max-commits", required_argument, NULL, OPT_MAX_COMMITS },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_count(size_t *out, const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		return -1;
	*out = (size_t)v;
	return 0;
}

int cmd_verify(int argc, char **argv)
{
	pg_policy *policy = NULL;
	pg_report *report = NULL;
	pg_pull_spec spec;
	pg_buf out = PG_BUF_INIT;
	char *up_repo = NULL, *up_branch = NULL;
	const char *policy_file = NULL;
	/* --protect and --allow-committer apply on top of --policy, wherever it comes */
	const char **protect = NULL, **allow = NULL;
	size_t nprotect = 0, nallow = 0, max_commits = 0, i;
	bool json = false, have_max = false;
	int c, rc = PG_EXIT_UNDECIDED, err;

	memset(&spec, 0, sizeof(spec));
	protect = calloc((size_t)argc + 1, sizeof(*protect));
	allow = calloc((size_t)argc + 1, sizeof(*allow));
	if (!protect || !allow) {
		pg_error_oom();
		rc = cli_fail(NULL);
		goto done;
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case OPT_UPSTREAM:
			free(up_repo);
			free(up_branch);
			if (pg_split_location(&up_repo, &up_branch, optarg) < 0) {
				rc = cli_fail(NULL);
				goto done;
			}
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_PROTECT:
		case OPT_ALLOW:
			if (!strchr(optarg, '@')) {
				rc = cli_usage("verify", "'%s' is not an e-mail address", optarg);
				goto done;
			}
			if (c == OPT_PROTECT)
				protect[nprotect++] = optarg;
			else
				allow[nallow++] = optarg;
			break;
		case OPT_MAX_COMMITS:
			if (parse_count(&max_commits, optarg) < 0) {
				rc = cli_usage("verify", "--max-commits wants a number, not '%s'", optarg);
				goto done;
			}
			have_max = true;
			break;
		case OPT_POLICY:
			policy_file = optarg;
			break;
		case 'h':
			cli_usage("verify", NULL);
			rc = 0;
			goto done;
		default:
			rc = cli_usage("verify", "unknown option '%s'", argv[optind - 1]);
			goto done;
		}
	}
	if (argc - optind != 2) {
		rc = cli_usage("verify", "verify wants a repository and a tag");
		goto done;
	}
	if ((policy_file ? pg_policy_load(&policy, policy_file) :
	     pg_policy_new_default(&policy)) < 0) {
		rc = cli_fail(NULL);
		goto done;
	}
	for (i = 0; i < nprotect; i++)
		if (pg_policy_list_add(&policy->protected_committers, &policy->nprotected,
				       protect[i]) < 0) {
			rc = cli_fail(NULL);
			goto done;
		}
	for (i = 0; i < nallow; i++)
		if (pg_policy_list_add(&policy->allowed_committers, &policy->nallowed,
				       allow[i]) < 0) {
			rc = cli_fail(NULL);
			goto done;
		}
	if (have_max)
		policy->max_commits = max_commits;
	spec.repo = argv[optind];
	spec.tag = argv[optind + 1];
	spec.upstream = up_repo;
	spec.upstream_branch = up_branch;

	if ((err = pg_verify(&report, &spec, policy, cli_home())) < 0) {
		rc = err == PG_EINVALID && !up_repo && !policy->upstream_url ?
			cli_usage("verify", "%s", pg_error_last()) : cli_fail(NULL);
		goto done;
	}
	err = json ? pg_report_format_json(&out, report) : pg_report_format_text(&out, report);
	if (err < 0) {
		rc = cli_fail("report");
		goto done;
	}
	fwrite(out.ptr, 1, out.len, stdout);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "error: writing the report: %s\n", strerror(errno));
		rc = PG_EXIT_UNDECIDED;
		goto done;
	}
	rc = pg_report_verdict(report) == PG_VERDICT_ACCEPT ? PG_EXIT_ACCEPT : PG_EXIT_REJECT;
done:
	pg_buf_release(&out);
	pg_report_free(report);
	pg_policy_free(policy);
	free(protect);
	free(allow);
	free(up_repo);
	free(up_branch);
	return rc;
}
