/* cmd_conflicts.c - pullgate conflicts: a pull merged in memory with the base and with each pull ahead of it, its textual conflicts named. */
#include "cli/cli.h"
#include "cli/pull_args.h"
#include "cli/pull_list.h"
#include "cli/term.h"
#include "common/buf.h"
#include "common/error.h"
#include "pipeline/conflicts.h"
#include "repo/repo.h"

enum {
	OPT_TREE = 1000,
	OPT_BRANCH,
	OPT_ONTO,
	OPT_POLICY,
	OPT_POLICY_SHA256,
	OPT_AHEAD,
	OPT_EXPECT_TAG,
	OPT_JSON,
};

static const struct option options[] = {
	{ "tree", required_argument, NULL, OPT_TREE },
	{ "branch", required_argument, NULL, OPT_BRANCH },
	{ "onto", required_argument, NULL, OPT_ONTO },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "policy-sha256", required_argument, NULL, OPT_POLICY_SHA256 },
	{ "ahead", required_argument, NULL, OPT_AHEAD },
	{ "expect-tag", required_argument, NULL, OPT_EXPECT_TAG },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct conflicts_args {
	pg_gate_given given;        /* --tree, --branch: as the gate resolves them */
	const char *policy;         /* --policy FILE */
	const char *policy_sha256;  /* --policy-sha256 HEX */
	const char *ahead;          /* --ahead FILE */
	bool json;
	bool has_onto, has_expect;
	pg_oid onto, expect;
};

/* 40 hex digits into id: 0, or the usage error naming the option. */
static int oid_option(pg_oid *id, const char *opt, const char *what, const char *arg)
{
	if (strlen(arg) != PG_OID_HEXSZ || pg_oid_fromhex(id, arg, PG_OID_HEXSZ) < 0)
		return cli_usage("conflicts", "--%s wants %s 40 hex digits, not '%s'", opt, what,
				 arg);
	return 0;
}

static int conflicts_option(void *ctx, int c, const char *arg)
{
	struct conflicts_args *a = ctx;
	int rc;

	switch (c) {
	case OPT_TREE:
		a->given.tree = arg;
		return 0;
	case OPT_BRANCH:
		a->given.branch = arg;
		return 0;
	case OPT_POLICY:
		a->policy = arg;
		return 0;
	case OPT_POLICY_SHA256:
		a->policy_sha256 = arg;
		return 0;
	case OPT_AHEAD:
		a->ahead = arg;
		return 0;
	case OPT_JSON:
		a->json = true;
		return 0;
	case OPT_ONTO:
		if ((rc = oid_option(&a->onto, "onto", "the commit's", arg)) != 0)
			return rc;
		a->has_onto = true;
		return 0;
	case OPT_EXPECT_TAG:
		if ((rc = oid_option(&a->expect, "expect-tag", "the tag object's", arg)) != 0)
			return rc;
		a->has_expect = true;
		return 0;
	default:
		return -1;
	}
}

/* The base as a sentence names it: the branch, or the commit it was given above it. */
static int put_base(pg_buf *line, const pg_conflicts_result *r)
{
	char hex[PG_OID_HEXSZ + 1];

	if (!r->onto)
		return pg_buf_puts(line, r->branch);
	pg_oid_tohex(hex, &r->base);
	return pg_buf_printf(line, "%s at %.12s", r->branch, hex);
}

/* " in a.c (2 hunks), b.c (not textual), and 3 more paths" */
static int put_paths(pg_buf *line, const pg_conflict_list *l)
{
	size_t i;
	int err = pg_buf_puts(line, " in ");

	for (i = 0; i < l->n && err == 0; i++) {
		const pg_conflict *c = &l->items[i];

		err = c->hunks ? pg_buf_printf(line, "%s%s (%u hunk%s)", i ? ", " : "", c->path,
					       c->hunks, c->hunks == 1 ? "" : "s") :
			pg_buf_printf(line, "%s%s (not textual)", i ? ", " : "", c->path);
	}
	if (err == 0 && l->more)
		err = pg_buf_printf(line, "%s%zu more path%s", l->n ? ", and " : "", l->more,
				    l->more == 1 ? "" : "s");
	return err;
}

/* ": resolved by refs/pullgate/resolutions/x (abc)", when ref names one */
static int put_resolution(pg_buf *line, const char *ref, const pg_oid *id)
{
	char hex[PG_OID_HEXSZ + 1];

	if (!ref)
		return 0;
	pg_oid_tohex(hex, id);
	return pg_buf_printf(line, ": resolved by %s (%.12s)", ref, hex);
}

/* One line a finding; a clean pull gets one line saying so. */
static int print_text(const pg_conflicts_result *r)
{
	pg_buf line = PG_BUF_INIT;
	size_t i, merged = 0, resolved = 0;
	int err = 0;

	if (r->alone.n || r->alone.more) {
		if ((err = pg_buf_printf(&line, "conflicts: %s conflicts by itself with ", r->tag)) == 0 &&
		    (err = put_base(&line, r)) == 0 && (err = put_paths(&line, &r->alone)) == 0 &&
		    (err = put_resolution(&line, r->alone_resolution, &r->alone_resolution_commit)) == 0)
			cli_put_line(&line);
		if (!r->alone_resolution)
			goto done;
		resolved++;
	}
	for (i = 0; i < r->nahead && err == 0; i++) {
		const pg_conflicts_ahead *j = &r->ahead[i];

		pg_buf_clear(&line);
		switch (j->status) {
		case PG_CONFLICTS_CLEAN:
			merged++;
			continue;
		case PG_CONFLICTS_IN_BASE:
			merged++;
			if ((err = pg_buf_printf(&line, "conflicts: pull %zu (%s) is already in ",
						 j->position, j->tag)) == 0 &&
			    (err = put_base(&line, r)) == 0)
				cli_put_line(&line);
			continue;
		case PG_CONFLICTS_SKIPPED:
			if ((err = pg_buf_printf(&line, "conflicts: pull %zu (%s) conflicts by itself "
						 "with ", j->position, j->tag)) == 0 &&
			    (err = put_base(&line, r)) == 0 &&
			    (err = pg_buf_printf(&line, ": %s was not merged with it", r->tag)) == 0)
				cli_put_line(&line);
			continue;
		case PG_CONFLICTS_UNKNOWN:
			if ((err = pg_buf_printf(&line, "conflicts: pull %zu (%s) could not be checked: "
						 "%s", j->position, j->tag, j->why)) == 0)
				cli_put_line(&line);
			continue;
		case PG_CONFLICTS_CONFLICTS:
		case PG_CONFLICTS_RESOLVED:
			if ((err = pg_buf_printf(&line, "conflicts: %s conflicts with pull %zu (%s)",
						 r->tag, j->position, j->tag)) == 0 &&
			    (err = put_paths(&line, &j->conflicts)) == 0 &&
			    (err = put_resolution(&line, j->resolution, &j->resolution_commit)) == 0)
				cli_put_line(&line);
			merged += j->status == PG_CONFLICTS_RESOLVED;
			resolved += j->status == PG_CONFLICTS_RESOLVED;
			continue;
		}
	}
	if (err == 0 && !pg_conflicts_found(r)) {
		const char *how = resolved ? "through the resolutions above" : "cleanly";

		pg_buf_clear(&line);
		err = merged ? pg_buf_printf(&line, "conflicts: %s merges %s with the %zu pull%s "
					     "ahead", r->tag, how, merged, merged == 1 ? "" : "s") :
			pg_buf_printf(&line, "conflicts: %s merges %s with ", r->tag, how);
		if (err == 0 && !merged)
			err = put_base(&line, r);
		if (err == 0)
			cli_put_line(&line);
	}
done:
	pg_buf_release(&line);
	return err;
}

static int print_result(const struct conflicts_args *a, const pg_conflicts_result *r)
{
	pg_buf out = PG_BUF_INIT;
	int err;

	if (a->json) {
		if ((err = pg_conflicts_format_json(&out, r)) == 0)
			fwrite(out.ptr, 1, out.len, stdout);
	} else {
		err = print_text(r);
	}
	pg_buf_release(&out);
	if (err < 0)
		return cli_fail("the result");
	if (fflush(stdout) != 0) {
		fprintf(stderr, "error: writing the result: %s\n", strerror(errno));
		return PG_EXIT_UNDECIDED;
	}
	return pg_conflicts_found(r) ? PG_EXIT_REJECT : PG_EXIT_ACCEPT;
}

int cmd_conflicts(int argc, char **argv)
{
	struct conflicts_args a;
	pg_conflicts_opts o = PG_CONFLICTS_OPTS_INIT;
	pg_conflicts_pull pull = { 0 }, *ahead = NULL;
	pg_conflicts_result *r = NULL;
	cli_pull_line *lines = NULL;
	pg_policy *policy = NULL;
	pg_fetch_limits fl;
	pg_buf text;
	size_t i, n = 0;
	int rc, first = 0;

	memset(&a, 0, sizeof(a));
	pg_buf_init(&text, (size_t)1 << 20);
	if ((rc = cli_parse_options(&first, "conflicts", argc, argv, options, conflicts_option,
				    &a)) != CLI_CONTINUE)
		goto done;
	if (argc - first != 2) {
		rc = cli_usage("conflicts", "conflicts wants a repository and a tag");
		goto done;
	}
	/* the policy as the gate reads it: the same file, the same digest */
	if ((a.policy ? pg_policy_load(&policy, a.policy) : pg_policy_new_default(&policy)) < 0) {
		rc = cli_fail(NULL);
		goto done;
	}
	if (a.policy_sha256 &&
	    (rc = cli_policy_check_sha256("conflicts", policy, a.policy_sha256)) != 0)
		goto done;
	if (a.ahead && (rc = cli_read_pull_list(&lines, &n, &text, a.ahead, "an --ahead",
						CLI_PULLS_EXPECT | CLI_PULLS_EMPTY,
						PG_EXIT_UNDECIDED)) != 0)
		goto done;
	if (n && !(ahead = calloc(n, sizeof(*ahead)))) {
		pg_error_oom();
		rc = cli_fail(NULL);
		goto done;
	}
	for (i = 0; i < n; i++) {
		ahead[i].repo = lines[i].repo;
		ahead[i].tag = lines[i].tag;
		ahead[i].expect = lines[i].has_expect ? &lines[i].expect : NULL;
	}
	pull.repo = argv[first];
	pull.tag = argv[first + 1];
	pull.expect = a.has_expect ? &a.expect : NULL;

	o.home = cli_home();
	o.onto = a.has_onto ? &a.onto : NULL;
	o.cancel = cli_catch_stop_signals();
	pg_gate_settings_resolve(&o.settings, &a.given, policy);
	/* a fetch by URL is held to the policy's deadline, and stops on SIGINT or SIGTERM */
	fl.timeout_s = policy->fetch_timeout_seconds;
	fl.cancel = o.cancel;
	fl.source = PG_POLICY_FETCH_LIMIT;
	pg_repo_set_fetch_limits(&fl);
	if (pg_conflicts_check(&r, &pull, ahead, n, &o) < 0)
		rc = cli_fail(NULL);
	else
		rc = print_result(&a, r);
done:
	pg_conflicts_result_free(r);
	free(ahead);
	free(lines);
	pg_policy_free(policy);
	pg_buf_release(&text);
	return rc;
}
