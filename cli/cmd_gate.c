/* cmd_gate.c - pullgate gate: verify, merge, build, boot and approve a pull. */
#include "cli/cli.h"
#include "cli/pull_args.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/sanitize.h"
#include "pipeline/gate.h"

#include <signal.h>
#include <unistd.h>

enum {
	OPT_TREE = CLI_OPT__NEXT,
	OPT_BRANCH,
	OPT_STAGES,
	OPT_APPROVE,
	OPT_NO_APPROVE,
	OPT_BOOT_TIMEOUT,
};

static const struct option options[] = {
	CLI_PULL_OPTIONS,
	{ "tree", required_argument, NULL, OPT_TREE },
	{ "branch", required_argument, NULL, OPT_BRANCH },
	{ "stages", required_argument, NULL, OPT_STAGES },
	{ "approve", no_argument, NULL, OPT_APPROVE },
	{ "no-approve", no_argument, NULL, OPT_NO_APPROVE },
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

/* "merge,build,boot,approve" -> flags; -1 on an unknown name or a gap */
static int parse_stages(const char *s)
{
	unsigned flags = 0, flag;

	while (*s) {
		size_t n = strcspn(s, ",");

		if (!(flag = pg_gate_stage_flag(s, n)))
			return -1;
		flags |= flag;
		s += n;
		if (*s == ',')
			s++;
	}
	return pg_gate_stages_valid(flags) ? (int)flags : -1;
}

int cmd_gate(int argc, char **argv)
{
	cli_pull_args a;
	pg_report *report = NULL;
	pg_gate_opts go;
	struct sigaction sa;
	int c, rc, err, approve = -1;

	if ((rc = cli_pull_init(&a, "gate", argc, argv, options)) != 0)
		return rc;
	memset(&go, 0, sizeof(go));
	go.version = PG_GATE_OPTS_VERSION;
	go.stages = PG_GATE_ALL;
	go.home = cli_home();
	go.datadir = cli_datadir();
	go.progress = show_progress;
	go.cancel = &cancelled;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		switch (c) {
		case OPT_TREE:
			go.tree = optarg;
			break;
		case OPT_BRANCH:
			go.branch = optarg;
			break;
		case OPT_STAGES:
			if ((err = parse_stages(optarg)) < 0) {
				rc = cli_usage("gate", "--stages wants merge, build, boot, approve in "
					       "order from merge without a gap, not '%s'", optarg);
				goto done;
			}
			go.stages = (unsigned)err;
			break;
		case OPT_APPROVE:
		case OPT_NO_APPROVE:
			approve = c == OPT_APPROVE;
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
			if ((rc = cli_pull_option(&a, c, optarg)) > 0)
				goto done;
			if (rc < 0) {
				rc = cli_usage("gate", "unknown option '%s'", argv[optind - 1]);
				goto done;
			}
		}
	}
	if ((rc = cli_pull_finish(&a, argc, argv, optind)) != 0)
		goto done;
	go.approve = approve >= 0 ? approve : a.policy->auto_approve;
	if (!go.boot_timeout_s)
		go.boot_timeout_s = a.policy->boot_timeout_seconds;
	go.build_timeout_s = a.policy->build_timeout_minutes * 60u;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	if ((err = pg_gate_run(&report, &a.spec, a.policy, &go)) < 0)
		rc = cli_pull_failed(&a, err);
	else
		rc = cli_pull_print(&a, report);
done:
	pg_report_free(report);
	cli_pull_release(&a);
	return rc;
}
