/* cmd_gate.c - pullgate gate: verify, merge, build, boot and approve a pull, or a queue of pulls as a stack. */
#include "cli/cli.h"
#include "cli/pull_args.h"
#include "cli/pull_list.h"
#include "cli/term.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "pipeline/gate.h"
#include "pipeline/kcidb.h"
#include "pipeline/queue.h"
#include "repo/repo.h"
#include "verifier/mail.h"

#include <sys/stat.h>
#include <unistd.h>


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
	OPT_QUEUE,
	OPT_RUN_NAME,
	OPT_MERGE_NAME,
	OPT_MERGE_EMAIL,
	OPT_EXPECT_TAG,
	OPT_ONTO,
	OPT_KCIDB,
	OPT_KCIDB_ORIGIN,
	OPT_ICECC,
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
	{ "queue", required_argument, NULL, OPT_QUEUE },
	{ "run-name", required_argument, NULL, OPT_RUN_NAME },
	{ "merge-name", required_argument, NULL, OPT_MERGE_NAME },
	{ "merge-email", required_argument, NULL, OPT_MERGE_EMAIL },
	{ "expect-tag", required_argument, NULL, OPT_EXPECT_TAG },
	{ "onto", required_argument, NULL, OPT_ONTO },
	{ "kcidb", required_argument, NULL, OPT_KCIDB },
	{ "kcidb-origin", required_argument, NULL, OPT_KCIDB_ORIGIN },
	{ "icecc", required_argument, NULL, OPT_ICECC },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* "merge,build,boot,approve" -> flags, "verify" -> none; -1 on an unknown name or a gap */
static int parse_stages(const char *s)
{
	unsigned flags = 0, flag;

	if (!strcmp(s, "verify"))
		return 0;

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
	cli_pull_args *a;
	pg_gate_given given; /* the flags that override the policy (pipeline/settings.h) */
	const char *url; /* --url: the public URL REPO mirrors */
	const char *queue; /* --queue FILE: REPO TAG lines, gated as a stack */
	bool stages_given; /* --stages */
	pg_oid expect; /* --expect-tag */
	pg_oid onto; /* --onto */
	const char *kcidb; /* --kcidb FILE: the run as a KCIDB document */
	const char *kcidb_origin; /* --kcidb-origin */
};

/*
 * --kcidb FILE must be a file that can be written whole: in a directory
 * that exists, and not itself a directory or anything else but a file.
 */
static bool kcidb_path_ok(const char *path)
{
	const char *slash = strrchr(path, '/');
	struct stat st;
	char *dir;
	bool ok;

	if (!*path || path[strlen(path) - 1] == '/' ||
	    (stat(path, &st) == 0 && !S_ISREG(st.st_mode)))
		return false;
	dir = !slash ? pg_strdup(".") : pg_strndup(path, slash == path ? 1 : (size_t)(slash - path));
	ok = dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
	free(dir);
	return ok;
}

static int gate_option(void *ctx, int c, const char *arg)
{
	struct gate_args *g = ctx;
	const char *why;
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
			return cli_usage("gate", "--stages wants verify, or merge, build, boot, "
					 "approve in order from merge without a gap, not '%s'", arg);
		g->go->stages = (unsigned)flags;
		g->stages_given = true;
		return 0;
	case OPT_EXPLAIN_TESTS:
		g->go->explain_tests = true;
		return 0;
	case OPT_RUN_NAME:
		/* a directory under $PULLGATE_HOME/logs: a name, never a path */
		if (!*arg || arg[0] == '.' || strlen(arg) > 64 ||
		    arg[strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			       "0123456789._-")])
			return cli_usage("gate", "--run-name wants up to 64 letters, digits, '.', '_' "
					 "or '-', not starting with '.', not '%s'", arg);
		g->go->run_name = arg;
		return 0;
	case OPT_MERGE_NAME:
	case OPT_MERGE_EMAIL:
		/* a commit header's value: one line, no angle brackets */
		if (!*arg || strpbrk(arg, "<>\n\r"))
			return cli_usage("gate", "--%s wants one line without '<' or '>', not '%s'",
					 c == OPT_MERGE_NAME ? "merge-name" : "merge-email", arg);
		if (c == OPT_MERGE_NAME)
			g->given.merge_name = arg;
		else
			g->given.merge_email = arg;
		return 0;
	case OPT_EXPECT_TAG:
		if (strlen(arg) != PG_OID_HEXSZ || pg_oid_fromhex(&g->expect, arg, PG_OID_HEXSZ) < 0)
			return cli_usage("gate", "--expect-tag wants the tag object's 40 hex digits, "
					 "not '%s'", arg);
		g->go->expect_tag = &g->expect;
		return 0;
	case OPT_ONTO:
		if (strlen(arg) != PG_OID_HEXSZ || pg_oid_fromhex(&g->onto, arg, PG_OID_HEXSZ) < 0)
			return cli_usage("gate", "--onto wants the commit's 40 hex digits, not '%s'",
					 arg);
		g->go->onto = &g->onto;
		return 0;
	case OPT_KCIDB:
		if (!kcidb_path_ok(arg))
			return cli_usage("gate", "--kcidb wants a file in a directory that exists, "
					 "not '%s'", arg);
		g->kcidb = arg;
		return 0;
	case OPT_KCIDB_ORIGIN:
		if (!pg_kcidb_origin_valid(arg))
			return cli_usage("gate", "--kcidb-origin wants 1 to %d of a-z, 0-9 and '_' "
					 "(a KCIDB origin), not '%s'", PG_KCIDB_ORIGIN_MAX, arg);
		g->kcidb_origin = arg;
		return 0;
	case OPT_ICECC:
		/* the policy's pipeline.icecc, for this run: the same check, in the same words */
		if ((why = pg_policy_why_icecc(arg)))
			return cli_usage("gate", "--icecc wants an icecream daemon, not '%s': "
					 "expected %s", arg, why);
		g->given.icecc = arg;
		return 0;
	case OPT_QUEUE:
		g->queue = arg;
		g->a->pulls_from_file = true;
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

/* --- --queue FILE ------------------------------------------------------------------ */

/*
 * The queue file: a pull a line, REPO TAG (cli/pull_list.h).  The specs
 * point into text, each a copy of proto (the shared upstream and
 * progress) with its repo and tag.  0, or an exit status.
 */
static int read_queue(pg_pull_spec **specs, size_t *n, pg_buf *text, const char *file,
		      const pg_pull_spec *proto)
{
	cli_pull_line *lines = NULL;
	size_t i, count = 0;
	int rc;

	*specs = NULL;
	*n = 0;
	if ((rc = cli_read_pull_list(&lines, &count, text, file, "a queue", 0, PG_EXIT_USAGE)) != 0)
		goto done;
	if (!(*specs = calloc(count, sizeof(**specs)))) {
		pg_error_oom();
		rc = cli_fail(NULL);
		goto done;
	}
	for (i = 0; i < count; i++) {
		(*specs)[i] = *proto;
		(*specs)[i].repo = lines[i].repo;
		(*specs)[i].tag = lines[i].tag;
	}
	*n = count;
done:
	free(lines);
	return rc;
}

/* One line per pull, then the stack's ref. */
static int print_queue_text(const pg_queue_result *q)
{
	pg_buf line = PG_BUF_INIT;
	char on[PG_OID_HEXSZ + 1], merge[PG_OID_HEXSZ + 1];
	size_t i, stacked = 0;
	int err = 0;

	for (i = 0; i < q->n && err == 0; i++) {
		const pg_queue_item *it = &q->items[i];

		pg_buf_clear(&line);
		pg_oid_tohex(on, &it->tested_on);
		pg_oid_tohex(merge, &it->merge);
		err = pg_buf_printf(&line, "%zu %s: %s", it->position, it->tag,
				    pg_queue_outcome_name(it->outcome));
		if (err == 0 && it->outcome == PG_QUEUE_FAILED)
			err = pg_buf_printf(&line, " (%s)", it->stage);
		if (err == 0 && it->tested)
			err = pg_buf_printf(&line, ", tested on %.12s", on);
		if (err == 0 && it->outcome == PG_QUEUE_PASSED && it->has_merge) {
			err = pg_buf_printf(&line, ", merge %.12s", merge);
			stacked++;
		}
		if (err == 0 && it->attribution)
			err = pg_buf_printf(&line, ": %s", it->attribution);
		if (err == 0)
			cli_put_line(&line);
	}
	if (err == 0 && q->has_stack) {
		pg_oid_tohex(on, &q->stack);
		pg_oid_tohex(merge, &q->head);
		pg_buf_clear(&line);
		if ((err = pg_buf_printf(&line, "stack: refs/heads/pullgate/queue at %.12s, %zu "
					 "merge%s on %.12s", on, stacked, stacked == 1 ? "" : "s",
					 merge)) == 0)
			cli_put_line(&line);
	}
	pg_buf_release(&line);
	return err;
}

static int print_queue(const cli_pull_args *a, const pg_queue_result *q)
{
	pg_buf out = PG_BUF_INIT;
	int err;

	if (a->json) {
		if ((err = pg_queue_format_json(&out, q)) == 0)
			fwrite(out.ptr, 1, out.len, stdout);
	} else {
		err = print_queue_text(q);
	}
	pg_buf_release(&out);
	if (err < 0)
		return cli_fail("the queue's result");
	if (fflush(stdout) != 0) {
		fprintf(stderr, "error: writing the result: %s\n", strerror(errno));
		return PG_EXIT_UNDECIDED;
	}
	return 0;
}

/* The options a queue cannot take: each is one pull's, or approval, which is the service's. */
static int queue_usage(const struct gate_args *g)
{
	if (g->given.approve == PG_GATE_YES ||
	    (g->stages_given && (g->go->stages & PG_GATE_APPROVE)))
		return cli_usage("gate", "--queue does not approve: approval through a queue is "
				 "the service's");
	if (g->stages_given && !(g->go->stages & PG_GATE_MERGE))
		return cli_usage("gate", "--queue merges each pull onto the stack: its --stages "
				 "start with merge");
	if (g->go->explain_tests)
		return cli_usage("gate", "--explain-tests is one pull's, not a queue's");
	if (g->url)
		return cli_usage("gate", "--url is one pull's, not a queue's");
	if (g->go->expect_tag)
		return cli_usage("gate", "--expect-tag is one pull's, not a queue's");
	if (g->go->onto)
		return cli_usage("gate", "--onto is one pull's: a queue merges each pull onto "
				 "the stack it computes");
	/* a KCIDB checkout is one pull on one base: a queue is several, each on the one before */
	if (g->kcidb)
		return cli_usage("gate", "--kcidb is one pull's, not a queue's: gate each pull "
				 "with --kcidb");
	return 0;
}

static int run_queue(cli_pull_args *a, struct gate_args *g)
{
	pg_pull_spec *specs = NULL;
	pg_queue_result *q = NULL;
	pg_buf text;
	size_t n = 0;
	int rc, err;

	pg_buf_init(&text, (size_t)1 << 20);
	if ((rc = queue_usage(g)) != 0 ||
	    (rc = read_queue(&specs, &n, &text, g->queue, &a->spec)) != 0)
		goto done;
	if (!g->stages_given)
		g->go->stages = PG_GATE_MERGE | PG_GATE_BUILD | PG_GATE_BOOT;
	g->given.approve = PG_GATE_NO;
	pg_gate_settings_resolve(&g->go->settings, &g->given, a->policy);
	err = pg_queue_run(&q, specs, n, a->policy, g->go);
	cli_term_end(&a->term);
	/* what ran is shown, also when a run could not decide */
	if (q && (rc = print_queue(a, q)) != 0)
		goto done;
	if (err < 0)
		rc = cli_fail(NULL);
	else
		rc = pg_queue_all_passed(q) ? PG_EXIT_ACCEPT : PG_EXIT_REJECT;
done:
	pg_queue_result_free(q);
	free(specs);
	pg_buf_release(&text);
	return rc;
}

/*
 * The run as a KCIDB document in --kcidb's file, written whole: rc, the
 * verdict's exit status, or PG_EXIT_UNDECIDED when it cannot be written.
 */
static int write_kcidb(const cli_pull_args *a, const struct gate_args *g,
		       const pg_report *report, int rc)
{
	pg_kcidb_opts ko = { .origin = g->kcidb_origin, .branch = g->go->settings.branch };
	pg_buf doc = PG_BUF_INIT;
	int err;

	/* the URL the sender announced: --url, else the mail's, else the repository as given */
	ko.repo_url = a->spec.name ? a->spec.name :
		      a->request && a->request->url ? a->request->url : a->spec.repo;
	ko.subject = a->request ? a->request->subject : NULL;
	ko.message_id = a->request ? a->request->message_id : NULL;
	if ((err = pg_kcidb_format(&doc, report, &ko)) == 0)
		err = pg_write_file_atomic(g->kcidb, doc.ptr, doc.len);
	pg_buf_release(&doc);
	return err < 0 ? cli_fail("--kcidb") : rc;
}

/* The terminal's progress; the verify stage's end ends its deadline. */
static void gate_progress(void *ctx, const pg_progress *p)
{
	if (!strcmp(p->stage, "verify") &&
	    (!strcmp(p->line, pg_stage_status_name(PG_STAGE_PASSED)) ||
	     !strcmp(p->line, pg_stage_status_name(PG_STAGE_FAILED))))
		alarm(0);
	cli_term_progress(ctx, p);
}

int cmd_gate(int argc, char **argv)
{
	cli_pull_args a;
	pg_report *report = NULL;
	pg_gate_opts go = PG_GATE_OPTS_INIT;
	struct gate_args g = { .go = &go, .a = &a };
	pg_fetch_limits fl;
	int rc, err;

	go.stages = PG_GATE_ALL;
	go.home = cli_home();
	go.datadir = cli_datadir();
	if ((rc = cli_pull_parse(&a, "gate", argc, argv, options, gate_option, &g)) !=
	    CLI_CONTINUE)
		goto done;
	go.progress = cli_term_progress;
	go.ctx = &a.term;
	go.cancel = cli_catch_stop_signals();
	/* SIGINT or SIGTERM stops a fetch too, not only the stages (the service stops its runs so) */
	fl.timeout_s = a.policy->fetch_timeout_seconds;
	fl.cancel = go.cancel;
	fl.source = PG_POLICY_FETCH_LIMIT;
	pg_repo_set_fetch_limits(&fl);
	if (g.kcidb_origin && !g.kcidb) {
		rc = cli_usage("gate", "--kcidb-origin wants --kcidb");
		goto done;
	}
	if (g.queue) {
		rc = run_queue(&a, &g);
		goto done;
	}
	/* the merge message and the notice name the public URL, not a local mirror */
	if (g.url)
		a.spec.name = g.url;
	/* the KUnit selection of the merge, without building: verify and merge only */
	if (go.explain_tests) {
		go.stages = PG_GATE_MERGE;
		g.given.approve = PG_GATE_NO;
	}
	if (go.onto && !(go.stages & PG_GATE_MERGE)) {
		rc = cli_usage("gate", "--onto wants the merge stage");
		goto done;
	}
	/* the flags, else the policy, else the defaults */
	pg_gate_settings_resolve(&go.settings, &g.given, a.policy);

	/* the verify stage is held to the policy's deadline; the kernel stages have their own */
	go.progress = gate_progress;
	cli_pull_deadline(&a, true);
	err = pg_gate_run(&report, &a.spec, a.policy, &go);
	cli_pull_deadline(&a, false);
	rc = cli_pull_outcome(&a, err, report);
	/* a run that could not decide has no result to send: no document is written */
	if (g.kcidb && err >= 0 && (rc == PG_EXIT_ACCEPT || rc == PG_EXIT_REJECT))
		rc = write_kcidb(&a, &g, report, rc);
done:
	pg_report_free(report);
	cli_pull_release(&a);
	return rc;
}
