/* cmd_guard.c - "pullgate guard": a pre-push hook that refuses to push re-created upstream commits. */
#include "cli/cli.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sanitize.h"
#include "repo/repo.h"
#include "verifier/verify.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

/* The line a hook written by --install carries, so that it may be replaced. */
#define HOOK_MARK "# installed by pullgate guard --install"
/* A pre-push line holds two ref names and two ids; refs are short in practice. */
#define LINE_MAX_LEN 8192

typedef struct guard_opts {
	bool install, force;
	const char *upstream; /* --upstream REV, before any configuration */
	const char *policy;
} guard_opts;

static const struct option options[] = {
	{ "install", no_argument, NULL, 'i' },
	{ "force", no_argument, NULL, 'f' },
	{ "upstream", required_argument, NULL, 'u' },
	{ "policy", required_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int guard_option(void *ctx, int c, const char *arg)
{
	guard_opts *o = ctx;

	switch (c) {
	case 'i': o->install = true; return 0;
	case 'f': o->force = true; return 0;
	case 'u': o->upstream = arg; return 0;
	case 'p': o->policy = arg; return 0;
	default: return -1;
	}
}

/* 'text' with every ' closed, escaped and reopened: safe in a sh script. */
static int sh_quote(pg_buf *out, const char *text)
{
	int err = pg_buf_putc(out, '\'');

	for (; *text && err == 0; text++)
		err = *text == '\'' ? pg_buf_puts(out, "'\\''") : pg_buf_putc(out, *text);
	return err ? err : pg_buf_putc(out, '\'');
}

static void print_safe_line(FILE *f, const char *s)
{
	pg_buf b = PG_BUF_INIT;

	if (pg_sanitize_terminal(&b, s, strlen(s), PG_SANITIZE_ONELINE) == 0)
		fputs(b.ptr, f);
	pg_buf_release(&b);
}

static int install(const guard_opts *o)
{
	pg_repo *repo = NULL;
	pg_buf path = PG_BUF_INIT, old = PG_BUF_INIT, hook = PG_BUF_INIT;
	char *dir = NULL, exe[PATH_MAX];
	ssize_t n;
	int rc = PG_EXIT_UNDECIDED, err;

	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0) {
		fprintf(stderr, "error: guard: cannot find the pullgate binary: %s\n", strerror(errno));
		return rc;
	}
	exe[n] = '\0';
	if ((err = pg_repo_open_env(&repo)) < 0 || (err = pg_repo_hooks_dir(&dir, repo)) < 0) {
		rc = cli_fail("guard");
		goto done;
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fputs("error: guard: cannot make '", stderr);
		print_safe_line(stderr, dir);
		fprintf(stderr, "': %s\n", strerror(errno));
		goto done;
	}
	if (pg_buf_printf(&path, "%s/pre-push", dir) < 0)
		goto oom;
	pg_buf_init(&old, 1 << 20);
	err = pg_buf_read_file(&old, path.ptr);
	if (err == 0 && !strstr(old.ptr, HOOK_MARK) && !o->force) {
		fputs("error: guard: '", stderr);
		print_safe_line(stderr, path.ptr);
		fputs("' is another pre-push hook; --force replaces it\n", stderr);
		goto done;
	}
	pg_error_clear();
	if (pg_buf_printf(&hook, "#!/bin/sh\n%s\n# refuse to push commits that re-create upstream "
			  "commits (man pullgate-guard)\nexec ", HOOK_MARK) < 0 ||
	    sh_quote(&hook, exe) < 0 || pg_buf_puts(&hook, " guard \"$@\"\n") < 0)
		goto oom;
	if (pg_write_file_atomic(path.ptr, hook.ptr, hook.len) < 0) {
		rc = cli_fail("guard");
		goto done;
	}
	if (chmod(path.ptr, 0755) < 0) {
		fputs("error: guard: chmod '", stderr);
		print_safe_line(stderr, path.ptr);
		fprintf(stderr, "': %s\n", strerror(errno));
		goto done;
	}
	fputs("pullgate guard: installed ", stdout);
	cli_puts_safe(stdout, path.ptr);
	fputs("\n", stdout);
	rc = PG_EXIT_ACCEPT;
	goto done;
oom:
	pg_error_oom();
	rc = cli_fail("guard");
done:
	pg_buf_release(&path);
	pg_buf_release(&old);
	pg_buf_release(&hook);
	free(dir);
	pg_repo_free(repo);
	return rc;
}

/* One line of pre-push's input: "<local ref> <local oid> <remote ref> <remote oid>". */
typedef struct push_line {
	char local_ref[LINE_MAX_LEN], remote_ref[LINE_MAX_LEN];
	pg_oid local, remote;
	bool deleting, creating;
} push_line;

static int parse_line(push_line *l, const char *line)
{
	char local_hex[LINE_MAX_LEN], remote_hex[LINE_MAX_LEN], extra;
	static const char zero[PG_OID_HEXSZ + 1] = "0000000000000000000000000000000000000000";

	if (sscanf(line, "%8191s %8191s %8191s %8191s %c", l->local_ref, local_hex, l->remote_ref,
		   remote_hex, &extra) != 4 ||
	    pg_oid_fromhex(&l->local, local_hex, strlen(local_hex)) < 0 ||
	    pg_oid_fromhex(&l->remote, remote_hex, strlen(remote_hex)) < 0)
		return -1;
	l->deleting = !strcmp(local_hex, zero);
	l->creating = !strcmp(remote_hex, zero);
	return 0;
}

/*
 * The upstream a pushed ref is compared with, as a revision: --upstream,
 * else pullgate.upstream, else the pushed branch's @{upstream} (a tag's:
 * the checked-out branch's) unless that is the very ref being pushed to.
 * *rev NULL: none.
 */
static int find_upstream(char **rev, pg_repo *repo, const guard_opts *o, const push_line *l,
			 const char *remote)
{
	pg_buf dest = PG_BUF_INIT;
	char *branch = NULL;
	int err;

	*rev = NULL;
	if (o->upstream)
		return (*rev = pg_strdup(o->upstream)) ? 0 : PG_ENOMEM;
	if ((err = pg_repo_config_string(rev, repo, "pullgate.upstream")) < 0 || *rev)
		return err;
	if (!strncmp(l->local_ref, "refs/heads/", 11))
		branch = pg_strdup(l->local_ref);
	else if ((err = pg_repo_head_branch(&branch, repo)) < 0)
		return err;
	if (!branch)
		return 0;
	if ((err = pg_repo_branch_upstream(rev, repo, branch)) == 0 && *rev && remote &&
	    !strncmp(l->remote_ref, "refs/heads/", 11) &&
	    (err = pg_buf_printf(&dest, "refs/remotes/%s/%s", remote, l->remote_ref + 11)) == 0 &&
	    !strcmp(*rev, dest.ptr)) {
		/* the branch tracks where it is pushed: that is no upstream to compare with */
		free(*rev);
		*rev = NULL;
	}
	pg_buf_release(&dest);
	free(branch);
	return err;
}


/*
 * Everything goes to standard error, as git's own hooks write: a push's
 * standard output may be a script's (git push --porcelain).
 */

/* The refusal: the story, then each copy with its original, as verify lists them. */
static void print_copies(const pg_report *r)
{
	char hex[PG_OID_HEXSZ + 1];
	size_t i;

	for (i = 0; i < r->nfindings; i++) {
		const pg_finding *f = &r->findings[i];

		if (f->check != PG_CHECK_REWRITTEN_UPSTREAM || !f->has_commit)
			continue;
		pg_oid_tohex(hex, &f->commit);
		fprintf(stderr, "  %.12s ", hex);
		print_safe_line(stderr, f->subject ? f->subject : "");
		fputs("\n    ", stderr);
		print_safe_line(stderr, f->message);
		fputs("\n", stderr);
	}
}

/* Judge one pushed ref: an exit status. */
static int guard_ref(pg_repo *repo, const guard_opts *o, const pg_policy *policy,
		     const push_line *l, const char *remote)
{
	pg_report *report = NULL;
	pg_buf story = PG_BUF_INIT;
	char *up = NULL;
	pg_oid tip, upstream, old;
	bool known;
	int rc = PG_EXIT_UNDECIDED, err;

	if (l->deleting)
		return PG_EXIT_ACCEPT; /* nothing leaves the repository */
	if ((err = find_upstream(&up, repo, o, l, remote)) < 0)
		goto fail;
	if (!up) {
		fputs("pullgate guard: ", stderr);
		print_safe_line(stderr, l->local_ref);
		fputs(": no upstream to compare with (set pullgate.upstream): not checked\n", stderr);
		return PG_EXIT_ACCEPT;
	}
	if (pg_repo_peel_commit(&tip, repo, &l->local) < 0) {
		if (!pg_repo_has_object(repo, &l->local))
			goto fail;
		/* a tag of a tree or a blob carries no commit to compare */
		pg_error_clear();
		rc = PG_EXIT_ACCEPT;
		goto done;
	}
	if ((err = pg_repo_revparse_commit(&upstream, repo, up)) < 0)
		goto fail;
	/*
	 * What the remote already has is not pushed again (it may not be
	 * here).  A tag it has (a tag pushed again with -f) hides the commit
	 * it ends at; one of a tree or a blob, or one that cannot be read
	 * here, hides nothing, so that more is judged, never less.
	 */
	known = !l->creating && pg_repo_has_object(repo, &l->remote);
	if (known && pg_repo_peel_commit(&old, repo, &l->remote) < 0) {
		pg_error_clear();
		known = false;
	}
	err = pg_verify_copies(&report, repo, &tip, &upstream, known ? &old : NULL, known ? 1 : 0,
			       policy);
	if (err < 0 || (err = pg_summary_format(&story, report)) < 0)
		goto fail;
	rc = report->summary.rewritten ? PG_EXIT_REJECT : PG_EXIT_ACCEPT;
	fputs(rc ? "pullgate guard: refusing to push " : "pullgate guard: ", stderr);
	print_safe_line(stderr, l->local_ref);
	fputs(" (against ", stderr);
	print_safe_line(stderr, up);
	fputs("): ", stderr);
	print_safe_line(stderr, story.ptr);
	fputs("\n", stderr);
	if (rc)
		print_copies(report);
	goto done;
fail:
	fputs("error: guard: ", stderr);
	print_safe_line(stderr, l->local_ref);
	fputs(": ", stderr);
	print_safe_line(stderr, pg_error_last());
	fputs("\n", stderr);
	rc = PG_EXIT_UNDECIDED;
done:
	pg_report_free(report);
	pg_buf_release(&story);
	free(up);
	return rc;
}

int cmd_guard(int argc, char **argv)
{
	guard_opts o = { 0 };
	pg_repo *repo = NULL;
	pg_policy *policy = NULL;
	pg_buf line = PG_BUF_INIT;
	const char *remote;
	bool refused = false, undecided = false;
	int rc, first = 0, c;

	if ((rc = cli_parse_options(&first, "guard", argc, argv, options, guard_option, &o)) !=
	    CLI_CONTINUE)
		return rc;
	if (o.install)
		return argc > first ? cli_usage("guard", "--install takes no operands") : install(&o);
	if (o.force)
		return cli_usage("guard", "--force goes with --install");
	if (argc - first > 2)
		return cli_usage("guard", "at most REMOTE and URL, as git gives a pre-push hook");
	remote = argc > first ? argv[first] : NULL;
	if ((o.policy ? pg_policy_load(&policy, o.policy) : pg_policy_new_default(&policy)) < 0 ||
	    pg_repo_open_env(&repo) < 0) {
		rc = cli_fail("guard");
		goto done;
	}
	pg_buf_init(&line, LINE_MAX_LEN);
	for (;;) {
		push_line l;

		pg_buf_clear(&line);
		while ((c = getchar()) != EOF && c != '\n')
			if (pg_buf_putc(&line, (char)c) < 0)
				break;
		if (c != EOF && c != '\n') {
			fprintf(stderr, "error: guard: a pre-push line longer than %d bytes\n",
				LINE_MAX_LEN);
			undecided = true;
			break;
		}
		if (!line.len && c == EOF)
			break;
		if (!line.len)
			continue;
		if (parse_line(&l, line.ptr) < 0) {
			fputs("error: guard: not a pre-push line: '", stderr);
			print_safe_line(stderr, line.ptr);
			fputs("'\n", stderr);
			undecided = true;
			continue;
		}
		rc = guard_ref(repo, &o, policy, &l, remote);
		refused |= rc == PG_EXIT_REJECT;
		undecided |= rc == PG_EXIT_UNDECIDED;
		if (c == EOF)
			break;
	}
	rc = refused ? PG_EXIT_REJECT : undecided ? PG_EXIT_UNDECIDED : PG_EXIT_ACCEPT;
	if (refused)
		fputs("pullgate guard: push refused: rebuild the branch on the upstream tip "
		      "without re-creating its commits (or push with --no-verify)\n", stderr);
done:
	pg_buf_release(&line);
	pg_repo_free(repo);
	pg_policy_free(policy);
	return rc;
}
