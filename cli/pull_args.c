/* pull_args.c - parsing and applying the options that verify and gate share. */
#include "cli/cli.h"
#include "cli/pull_args.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/hex.h"
#include "common/sanitize.h"
#include "repo/repo.h"
#include "verifier/mail.h"

#include <signal.h>
#include <strings.h>
#include <unistd.h>

/* Load the --policy file among argv, else the built-in policy: 0, or an exit status. */
static int load_policy(cli_pull_args *a, int argc, char **argv, const struct option *options)
{
	const char *file = NULL;
	char **copy;
	int c;

	/*
	 * --policy first, so that the other flags apply on top of it wherever
	 * they are.  getopt_long permutes the vector it scans; the scan that
	 * counts runs on argv as given, so this one runs on a copy.
	 */
	if (!(copy = calloc((size_t)argc + 1, sizeof(*copy)))) {
		pg_error_oom();
		return cli_fail(NULL);
	}
	memcpy(copy, argv, (size_t)argc * sizeof(*copy));
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, copy, ":h", options, NULL)) != -1)
		if (c == CLI_OPT_POLICY)
			file = optarg;
	free(copy);
	if ((file ? pg_policy_load(&a->policy, file) : pg_policy_new_default(&a->policy)) < 0)
		return cli_fail(NULL);
	return 0;
}

void cli_pull_release(cli_pull_args *a)
{
	pg_policy_free(a->policy);
	pg_pull_request_free(a->request);
	free(a->up_repo);
	free(a->up_branch);
	if (a->scratch_held)
		close(a->scratch_fd);
	memset(a, 0, sizeof(*a));
}

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
	size_t len = colon ? (size_t)(colon - arg) : strlen(arg);
	char fpr[41];
	pg_signer *s;
	int err;

	if (len != 40 || !pg_hex_is(arg, 40) || (colon && !colon[1]))
		return pg_error_set(PG_EINVALID, "--trust wants FINGERPRINT[:TAGGLOB] with 40 "
				    "hex digits, not '%s'", arg);
	memcpy(fpr, arg, len);
	fpr[len] = '\0';
	if ((err = pg_policy_add_signer(&s, policy, fpr)) < 0)
		return err;
	return colon ? pg_policy_list_add(&s->tags, &s->ntags, colon + 1) : 0;
}

int cli_policy_check_sha256(const char *cmd, const pg_policy *p, const char *arg)
{
	/* the policy read is the one the caller reviewed (the service: the one it runs) */
	if (strlen(arg) != PG_SHA256_HEXSZ || !pg_hex_is(arg, PG_SHA256_HEXSZ))
		return cli_usage(cmd, "--policy-sha256 wants 64 hex digits, not '%s'", arg);
	if (strcasecmp(arg, p->sha256)) {
		pg_error_set(PG_EINVALID, "the policy '%s' has SHA-256 %s, not %s: it changed "
			     "since it was read", p->source, p->sha256, arg);
		return cli_fail(NULL);
	}
	return 0;
}

static int pull_option(cli_pull_args *a, int c, const char *arg)
{
	pg_policy *p = a->policy;
	int err;

	switch (c) {
	case CLI_OPT_UPSTREAM:
		free(a->up_repo);
		free(a->up_branch);
		return pg_split_location(&a->up_repo, &a->up_branch, arg) < 0 ? cli_fail(NULL) : 0;
	case CLI_OPT_JSON:
		a->json = true;
		return 0;
	case CLI_OPT_COLOR:
		return cli_color_parse(&a->color, arg) < 0 ?
			cli_usage(a->cmd, "--color wants auto, always or never, not '%s'", arg) : 0;
	case CLI_OPT_PROTECT:
	case CLI_OPT_ALLOW:
		if (!strchr(arg, '@'))
			return cli_usage(a->cmd, "'%s' is not an e-mail address", arg);
		err = c == CLI_OPT_PROTECT ?
			pg_policy_list_add(&p->protected_committers, &p->nprotected, arg) :
			pg_policy_list_add(&p->allowed_committers, &p->nallowed, arg);
		return err < 0 ? cli_fail(NULL) : 0;
	case CLI_OPT_MAX_COMMITS:
		if (parse_count(&p->max_commits, arg) < 0)
			return cli_usage(a->cmd, "--max-commits wants a number, not '%s'", arg);
		return 0;
	case CLI_OPT_KEYRING:
		free(p->keyring);
		return (p->keyring = pg_strdup(arg)) ? 0 : cli_fail(NULL);
	case CLI_OPT_TRUST:
		if ((err = add_trust(p, arg)) < 0)
			return err == PG_EINVALID ? cli_usage(a->cmd, "%s", pg_error_last()) :
				cli_fail(NULL);
		return 0;
	case CLI_OPT_PULL_REQUEST:
		a->mail = arg;
		return 0;
	case CLI_OPT_POLICY:
		return 0; /* loaded by cli_pull_init */
	case CLI_OPT_PROGRESS_JSON:
		a->progress_json = true;
		return 0;
	case CLI_OPT_REPORT_FILE:
		a->report_file = arg;
		return 0;
	case CLI_OPT_POLICY_SHA256:
		return cli_policy_check_sha256(a->cmd, p, arg);
	case CLI_OPT_INDEX_CACHE_SIZE:
		if (parse_count(&a->spec.index_cache_size, arg) < 0 ||
		    a->spec.index_cache_size < ((size_t)1 << 20))
			return cli_usage(a->cmd, "--index-cache-size wants a number of bytes, at least "
					 "1048576, not '%s'", arg);
		return 0;
	case CLI_OPT_INDEX_MEMORY:
		if (parse_count(&a->spec.index_memory, arg) < 0 ||
		    a->spec.index_memory < ((size_t)1 << 20))
			return cli_usage(a->cmd, "--index-memory wants a number of bytes, at least "
					 "1048576, not '%s'", arg);
		return 0;
	case CLI_OPT_REPOSITORY:
		/* widens the policy's allow-list, as --trust widens its signers */
		return pg_policy_list_add(&p->repositories, &p->nrepositories, arg) < 0 ?
			cli_fail(NULL) : 0;
	default:
		return -1;
	}
}

/* Parse the mail; on failure print "error: 'MAIL': why" and return the exit status. */
static int read_request(pg_pull_request **out, const char *path)
{
	pg_buf what = PG_BUF_INIT;
	int rc = 0;

	if (pg_mail_read(out, path) == 0)
		return 0;
	if (pg_buf_putc(&what, '\'') == 0 &&
	    pg_sanitize_terminal(&what, path, strlen(path), PG_SANITIZE_ONELINE) == 0 &&
	    pg_buf_putc(&what, '\'') == 0)
		rc = cli_fail(what.ptr);
	else
		rc = cli_fail("the pull-request mail");
	pg_buf_release(&what);
	return rc;
}

/*
 * Before verifying: a share of $PULLGATE_HOME/tmp, where the private GnuPG
 * homes go, cleared of what killed runs left when no other pullgate uses
 * it; and the policy's deadline on every fetch of a URL.
 */
static int claim_scratch(cli_pull_args *a)
{
	pg_buf tmp = PG_BUF_INIT;
	pg_fetch_limits fl = { a->policy->fetch_timeout_seconds, NULL, PG_POLICY_FETCH_LIMIT };
	size_t removed;
	int err;

	pg_repo_set_fetch_limits(&fl);
	if ((err = pg_buf_printf(&tmp, "%s/tmp", cli_home())) == 0 &&
	    (err = pg_scratch_claim(&a->scratch_fd, &removed, tmp.ptr)) == 0)
		a->scratch_held = true;
	pg_buf_release(&tmp);
	return err < 0 ? cli_fail(NULL) : 0;
}

/* After the options: REPO and TAG, then the mail.  0, or an exit status. */
static int finish(cli_pull_args *a, int argc, char **argv, int first)
{
	int rc;

	if (a->pulls_from_file) {
		if (argc != first)
			return cli_usage(a->cmd, "%s --queue takes no REPO TAG: its pulls are in "
					 "the file", a->cmd);
		if (a->mail)
			return cli_usage(a->cmd, "--pull-request is one pull's mail, not a queue's");
	} else if (argc - first != 2) {
		return cli_usage(a->cmd, "%s wants a repository and a tag", a->cmd);
	} else {
		a->spec.repo = argv[first];
		a->spec.tag = argv[first + 1];
	}
	a->spec.upstream = a->up_repo;
	a->spec.upstream_branch = a->up_branch;
	if (a->mail && (rc = read_request(&a->request, a->mail)) != 0)
		return rc;
	a->spec.request = a->request;
	return claim_scratch(a);
}

struct dispatch {
	cli_pull_args *a;
	cli_option_fn fn;
	void *ctx;
};

static int dispatch_option(void *ctx, int c, const char *arg)
{
	struct dispatch *d = ctx;
	int rc = pull_option(d->a, c, arg);

	return rc < 0 && d->fn ? d->fn(d->ctx, c, arg) : rc;
}

int cli_pull_parse(cli_pull_args *a, const char *cmd, int argc, char **argv,
		   const struct option *options, cli_option_fn fn, void *ctx)
{
	struct dispatch d = { a, fn, ctx };
	int rc, first = 0;

	memset(a, 0, sizeof(*a));
	a->cmd = cmd;
	if ((rc = load_policy(a, argc, argv, options)) != 0)
		return rc;
	if ((rc = cli_parse_options(&first, cmd, argc, argv, options, dispatch_option, &d)) !=
	    CLI_CONTINUE)
		return rc;
	if ((rc = finish(a, argc, argv, first)) != 0)
		return rc;
	cli_term_init(&a->term, a->color);
	a->term.json = a->progress_json;
	a->spec.progress = cli_term_progress;
	a->spec.progress_ctx = &a->term;
	return CLI_CONTINUE;
}

static int print_report(cli_pull_args *a, const pg_report *report)
{
	pg_buf out = PG_BUF_INIT;
	int err, rc;

	err = a->json || a->report_file ? pg_report_format_json(&out, report) :
		pg_report_format_text(&out, report);
	if (err == 0 && a->report_file)
		err = pg_write_file_atomic(a->report_file, out.ptr, out.len);
	if (err < 0) {
		pg_buf_release(&out);
		return cli_fail("report");
	}
	cli_term_end(&a->term);
	if (a->report_file)
		; /* the file holds it */
	else if (a->json)
		fwrite(out.ptr, 1, out.len, stdout);
	else
		cli_term_write_report(&a->term, stdout, out.ptr, out.len);
	pg_buf_release(&out);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "error: writing the report: %s\n", strerror(errno));
		return PG_EXIT_UNDECIDED;
	}
	rc = pg_report_verdict(report) == PG_VERDICT_ACCEPT ? PG_EXIT_ACCEPT : PG_EXIT_REJECT;
	return rc;
}

/* What the alarm says: made when armed, written by the handler (write is async-signal-safe). */
static char deadline_msg[160];
static size_t deadline_len;

static void deadline_passed(int sig)
{
	(void)sig;
	if (write(STDERR_FILENO, deadline_msg, deadline_len) < 0)
		_exit(PG_EXIT_UNDECIDED);
	_exit(PG_EXIT_UNDECIDED);
}

void cli_pull_deadline(const cli_pull_args *a, bool on)
{
	struct sigaction sa;
	int n;

	if (!on || !a->policy->verify_timeout_seconds) {
		alarm(0);
		return;
	}
	/* on a terminal, over the progress line that may be showing */
	n = snprintf(deadline_msg, sizeof(deadline_msg), "%serror: verify did not finish within "
		     "%u s (the policy's verify-timeout-seconds)\n",
		     isatty(STDERR_FILENO) ? "\r\033[K" : "", a->policy->verify_timeout_seconds);
	deadline_len = n > 0 && (size_t)n < sizeof(deadline_msg) ? (size_t)n : 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = deadline_passed;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm(a->policy->verify_timeout_seconds);
}

int cli_pull_outcome(cli_pull_args *a, int err, const pg_report *report)
{
	cli_term_end(&a->term);
	if (err >= 0)
		return print_report(a, report);
	if (err == PG_EINVALID && !a->up_repo && !a->policy->upstream_url)
		return cli_usage(a->cmd, "%s", pg_error_last());
	return cli_fail(NULL);
}
