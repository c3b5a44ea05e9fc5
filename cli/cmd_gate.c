/* cmd_gate.c - pullgate gate: verify, merge, build, boot and approve a pull. */
#include "cli/cli.h"
#include "cli/pull_args.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/sanitize.h"
#include "pipeline/gate.h"


enum {
	OPT_TREE = CLI_OPT__NEXT,
	OPT_BRANCH,
	OPT_STAGES,
	OPT_APPROVE,
	OPT_NO_APPROVE,
	OPT_BOOT_TIMEOUT,
	OPT_BOOT_ON,
	OPT_URL,
	OPT_EXPLAIN_TESTS,
	OPT_BUILD_WORKTREES,
};

static const struct option options[] = {
	CLI_PULL_OPTIONS,
	{ "tree", required_argument, NULL, OPT_TREE },
	{ "branch", required_argument, NULL, OPT_BRANCH },
	{ "stages", required_argument, NULL, OPT_STAGES },
	{ "approve", no_argument, NULL, OPT_APPROVE },
	{ "no-approve", no_argument, NULL, OPT_NO_APPROVE },
	{ "boot-timeout", required_argument, NULL, OPT_BOOT_TIMEOUT },
	{ "boot-on", required_argument, NULL, OPT_BOOT_ON },
	{ "url", required_argument, NULL, OPT_URL },
	{ "explain-tests", no_argument, NULL, OPT_EXPLAIN_TESTS },
	{ "build-worktrees", required_argument, NULL, OPT_BUILD_WORKTREES },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

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

struct gate_args {
	pg_gate_opts *go;
	pg_gate_given given; /* the flags that override the policy (pipeline/settings.h) */
	const char *url; /* --url: the public URL REPO mirrors */
};

static int gate_option(void *ctx, int c, const char *arg)
{
	struct gate_args *g = ctx;
	char *end;
	unsigned long v;
	int flags;

	switch (c) {
	case OPT_TREE:
		g->given.tree = arg;
		return 0;
	case OPT_BRANCH:
		g->given.branch = arg;
		return 0;
	case OPT_STAGES:
		if ((flags = parse_stages(arg)) < 0)
			return cli_usage("gate", "--stages wants merge, build, boot, approve in "
					 "order from merge without a gap, not '%s'", arg);
		g->go->stages = (unsigned)flags;
		return 0;
	case OPT_EXPLAIN_TESTS:
		g->go->explain_tests = true;
		return 0;
	case OPT_APPROVE:
	case OPT_NO_APPROVE:
		g->given.approve = c == OPT_APPROVE ? PG_GATE_YES : PG_GATE_NO;
		return 0;
	case OPT_URL:
		if (!*arg || strpbrk(arg, " \t\n") || arg[0] == '-')
			return cli_usage("gate", "--url wants the repository's public URL, not '%s'",
					 arg);
		g->url = arg;
		return 0;
	case OPT_BOOT_ON:
		if (strcmp(arg, "qemu") && strcmp(arg, "lava"))
			return cli_usage("gate", "--boot-on wants qemu or lava, not '%s'", arg);
		g->given.boot_on_lava = !strcmp(arg, "lava") ? PG_GATE_YES : PG_GATE_NO;
		return 0;
	case OPT_BUILD_WORKTREES:
		v = strtoul(arg, &end, 10);
		if (*end || end == arg || arg[0] == '-' || v == 0 || v > PG_GATE_MAX_WORKTREES)
			return cli_usage("gate", "--build-worktrees wants 1 to %d, not '%s'",
					 PG_GATE_MAX_WORKTREES, arg);
		g->given.build_worktrees = (unsigned)v;
		return 0;
	case OPT_BOOT_TIMEOUT:
		v = strtoul(arg, &end, 10);
		if (*end || end == arg || v == 0 || v > 86400)
			return cli_usage("gate", "--boot-timeout wants seconds, not '%s'", arg);
		g->given.boot_timeout_s = (unsigned)v;
		return 0;
	default:
		return -1;
	}
}

int cmd_gate(int argc, char **argv)
{
	cli_pull_args a;
	pg_report *report = NULL;
	pg_gate_opts go = PG_GATE_OPTS_INIT;
	struct gate_args g = { .go = &go };
	int rc, err;

	go.stages = PG_GATE_ALL;
	go.home = cli_home();
	go.datadir = cli_datadir();
	if ((rc = cli_pull_parse(&a, "gate", argc, argv, options, gate_option, &g)) !=
	    CLI_CONTINUE)
		goto done;
	go.progress = cli_term_progress;
	go.ctx = &a.term;
	/* the merge message and the notice name the public URL, not a local mirror */
	if (g.url)
		a.spec.name = g.url;
	go.cancel = cli_catch_stop_signals();
	/* the KUnit selection of the merge, without building: verify and merge only */
	if (go.explain_tests) {
		go.stages = PG_GATE_MERGE;
		g.given.approve = PG_GATE_NO;
	}
	/* the flags, else the policy, else the defaults */
	pg_gate_settings_resolve(&go.settings, &g.given, a.policy);

	err = pg_gate_run(&report, &a.spec, a.policy, &go);
	rc = cli_pull_outcome(&a, err, report);
done:
	pg_report_free(report);
	cli_pull_release(&a);
	return rc;
}
