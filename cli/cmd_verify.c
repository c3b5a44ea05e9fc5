/* cmd_verify.c - pullgate verify: check a pull and print the report. */
#include "cli/cli.h"
#include "common/buf.h"
#include "common/error.h"
#include "policies/policy.h"
#include "verifier/verify.h"

#include <ctype.h>
#include <getopt.h>

enum {
	OPT_UPSTREAM = 1000,
	OPT_JSON,
	OPT_PROTECT,
	OPT_ALLOW,
	OPT_MAX_COMMITS,
	OPT_KEYRING,
	OPT_TRUST,
	OPT_POLICY,
};

static const struct option options[] = {
	{ "upstream", required_argument, NULL, OPT_UPSTREAM },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "protect", required_argument, NULL, OPT_PROTECT },
	{ "allow-committer", required_argument, NULL, OPT_ALLOW },
	{ "max-commits", required_argument, NULL, OPT_MAX_COMMITS },
	{ "keyring", required_argument, NULL, OPT_KEYRING },
	{ "trust", required_argument, NULL, OPT_TRUST },
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

/* --trust FPR[:TAGGLOB]: a policy signer for that key, for any tag or the glob's. */
static int add_trust(pg_policy *policy, const char *arg)
{
	const char *colon = strchr(arg, ':');
	size_t len = colon ? (size_t)(colon - arg) : strlen(arg), i;
	pg_signer *grown, *s;

	if (len != 40 || strspn(arg, "0123456789abcdefABCDEF") < 40 || (colon && !colon[1]))
		return pg_error_set(PG_EINVALID, "--trust wants FINGERPRINT[:TAGGLOB] with 40 "
				    "hex digits, not '%s'", arg);
	grown = realloc(policy->signers, (policy->nsigners + 1) * sizeof(*grown));
	if (!grown)
		return pg_error_oom();
	policy->signers = grown;
	s = &grown[policy->nsigners];
	memset(s, 0, sizeof(*s));
	if (!(s->fingerprint = pg_strndup(arg, len)))
		return PG_ENOMEM;
	for (i = 0; i < len; i++)
		s->fingerprint[i] = (char)toupper((unsigned char)s->fingerprint[i]);
	policy->nsigners++;
	return colon ? pg_policy_list_add(&s->tags, &s->ntags, colon + 1) : 0;
}

int cmd_verify(int argc, char **argv)
{
	pg_policy *policy = NULL;
	pg_report *report = NULL;
	pg_pull_spec spec;
	pg_buf out = PG_BUF_INIT;
	char *up_repo = NULL, *up_branch = NULL;
	const char *policy_file = NULL;
	bool json = false;
	int c, rc = PG_EXIT_UNDECIDED, err;

	memset(&spec, 0, sizeof(spec));
	/* --policy first, so that the other flags apply on top of it wherever they are */
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1)
		if (c == OPT_POLICY)
			policy_file = optarg;
	if ((policy_file ? pg_policy_load(&policy, policy_file) : pg_policy_new_default(&policy)) < 0)
		return cli_fail(NULL);
	optind = 0; /* glibc: a full restart of the scan */
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
			if ((c == OPT_PROTECT ?
			     pg_policy_list_add(&policy->protected_committers, &policy->nprotected, optarg) :
			     pg_policy_list_add(&policy->allowed_committers, &policy->nallowed, optarg)) < 0) {
				rc = cli_fail(NULL);
				goto done;
			}
			break;
		case OPT_MAX_COMMITS:
			if (parse_count(&policy->max_commits, optarg) < 0) {
				rc = cli_usage("verify", "--max-commits wants a number, not '%s'", optarg);
				goto done;
			}
			break;
		case OPT_KEYRING:
			free(policy->keyring);
			if (!(policy->keyring = pg_strdup(optarg))) {
				rc = cli_fail(NULL);
				goto done;
			}
			break;
		case OPT_TRUST:
			if ((err = add_trust(policy, optarg)) < 0) {
				rc = err == PG_EINVALID ? cli_usage("verify", "%s", pg_error_last()) :
					cli_fail(NULL);
				goto done;
			}
			break;
		case OPT_POLICY:
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
	free(up_repo);
	free(up_branch);
	return rc;
}
