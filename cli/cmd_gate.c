/* cmd_gate.c - pullgate gate: verify, merge, build, boot and approve a pull. */
#include "cli/cli.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/sanitize.h"
#include "pipeline/gate.h"

#include <getopt.h>
#include <signal.h>
#include <unistd.h>

enum {
	OPT_UPSTREAM = 1000,
	OPT_JSON,
	OPT_TREE,
	OPT_BRANCH,
	OPT_STAGES,
	OPT_APPROVE,
	OPT_NO_APPROVE,
	OPT_PROTECT,
	OPT_ALLOW,
	OPT_BOOT_TIMEOUT,
};

static const struct option options[] = {
	{ "upstream", required_argument, NULL, OPT_UPSTREAM },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "tree", required_argument, NULL, OPT_TREE },
	{ "branch", required_argument, NULL, OPT_BRANCH },
	{ "stages", required_argument, NULL, OPT_STAGES },
	{ "approve", no_argument, NULL, OPT_APPROVE },
	{ "no-approve", no_argument, NULL, OPT_NO_APPROVE },
	{ "protect", required_argument, NULL, OPT_PROTECT },
	{ "allow-committer", required_argument, NULL, OPT_ALLOW },
	{ "boot-timeout", required_argument, NULL, OPT_BOOT_TIMEOUT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static volatile sig_atomic_t cancelled;

static void on_signal(int sig)
{
	(void)sig;
	cancelled = 1;
}

static void show_progress(void *ctx, const char *stage, const char *line)
{
	pg_buf b = PG_BUF_INIT;

	(void)ctx;
	if (pg_sanitize_terminal(&b, line, strlen(line), PG_SANITIZE_ONELINE) == 0)
		fprintf(stderr, "[%s] %s\n", stage, b.ptr);
	pg_buf_release(&b);
}

/* "merge,build,boot,approve" -> flags; -1 on an unknown name */
static int parse_stages(const char *s)
{
	static const struct {
		const char *name;
		int flag;
	} names[] = {
		{ "merge", PG_GATE_MERGE }, { "build", PG_GATE_BUILD },
		{ "boot", PG_GATE_BOOT }, { "approve", PG_GATE_APPROVE },
	};
	int flags = 0;

	while (*s) {
		size_t n = strcspn(s, ","), i;

		for (i = 0; i < PG_ARRAY_SIZE(names); i++)
			if (strlen(names[i].name) == n && !strncmp(names[i].name, s, n))
				break;
		if (i == PG_ARRAY_SIZE(names))
			return -1;
		flags |= names[i].flag;
		s += n;
		if (*s == ',')
			s++;
	}
	return flags;
}

int cmd_gate(int argc, char **argv)
{
	pg_policy *policy = NULL;
	pg_report *report = NULL;
	pg_pull_spec spec;
	pg_gate_opts go;
	pg_buf out = PG_BUF_INIT;
	char *up_repo = NULL, *up_branch = NULL;
	struct sigaction sa;
	bool json = false;
	int c, rc = PG_EXIT_UNDECIDED, err, approve = -1;

	memset(&spec, 0, sizeof(spec));
	memset(&go, 0, sizeof(go));
	go.version = PG_GATE_OPTS_VERSION;
	go.stages = PG_GATE_ALL;
	go.home = cli_home();
	go.datadir = cli_datadir();
	go.progress = show_progress;
	go.cancel = &cancelled;
	if (pg_policy_new_default(&policy) < 0)
		return cli_fail(NULL);
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
		case OPT_TREE:
			go.tree = optarg;
			break;
		case OPT_BRANCH:
			go.branch = optarg;
			break;
		case OPT_STAGES:
			if ((err = parse_stages(optarg)) < 0) {
				rc = cli_usage("gate", "--stages wants a list of merge, build, boot, "
					       "approve, not '%s'", optarg);
				goto done;
			}
			go.stages = (unsigned)err;
			break;
		case OPT_APPROVE:
		case OPT_NO_APPROVE:
			approve = c == OPT_APPROVE;
			break;
		case OPT_PROTECT:
		case OPT_ALLOW:
			if (!strchr(optarg, '@')) {
				rc = cli_usage("gate", "'%s' is not an e-mail address", optarg);
				goto done;
			}
			if ((c == OPT_PROTECT ?
			     pg_policy_list_add(&policy->protected_committers, &policy->nprotected, optarg) :
			     pg_policy_list_add(&policy->allowed_committers, &policy->nallowed, optarg)) < 0) {
				rc = cli_fail(NULL);
				goto done;
			}
			break;
		case OPT_BOOT_TIMEOUT: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || end == optarg || v == 0 || v > 86400) {
				rc = cli_usage("gate", "--boot-timeout wants seconds, not '%s'", optarg);
				goto done;
			}
			go.boot_timeout_s = (unsigned)v;
			break;
		}
		case 'h':
			cli_usage("gate", NULL);
			rc = 0;
			goto done;
		default:
			rc = cli_usage("gate", "unknown option '%s'", argv[optind - 1]);
			goto done;
		}
	}
	if (argc - optind != 2) {
		rc = cli_usage("gate", "gate wants a repository and a tag");
		goto done;
	}
	spec.repo = argv[optind];
	spec.tag = argv[optind + 1];
	spec.upstream = up_repo;
	spec.upstream_branch = up_branch;
	go.approve = approve >= 0 ? approve : policy->auto_approve;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if ((err = pg_gate_run(&report, &spec, policy, &go)) < 0) {
		rc = err == PG_EINVALID && !up_repo && !policy->upstream_url ?
			cli_usage("gate", "%s", pg_error_last()) : cli_fail(NULL);
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
