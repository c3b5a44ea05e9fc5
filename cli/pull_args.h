/* pull_args.h - the options verify and gate share: upstream, policy flags, keys, mail, output. */
#ifndef PG_PULL_ARGS_H
#define PG_PULL_ARGS_H

#include "cli/cli.h"
#include "cli/term.h"
#include "policies/policy.h"
#include "report/report.h"
#include "verifier/verify.h"

enum cli_pull_opt {
	CLI_OPT_UPSTREAM = 1000,
	CLI_OPT_JSON,
	CLI_OPT_PROTECT,
	CLI_OPT_ALLOW,
	CLI_OPT_MAX_COMMITS,
	CLI_OPT_KEYRING,
	CLI_OPT_TRUST,
	CLI_OPT_PULL_REQUEST,
	CLI_OPT_POLICY,
	CLI_OPT_REPOSITORY,
	CLI_OPT_COLOR,
	CLI_OPT_REPORT_FILE,
	CLI_OPT_POLICY_SHA256,
	CLI_OPT_INDEX_CACHE_SIZE,
	CLI_OPT_INDEX_MEMORY,
	CLI_OPT_PROGRESS_JSON,
	CLI_OPT__NEXT, /* a command's own options start here */
};

#define CLI_PULL_OPTIONS \
	{ "upstream", required_argument, NULL, CLI_OPT_UPSTREAM }, \
	{ "json", no_argument, NULL, CLI_OPT_JSON }, \
	{ "protect", required_argument, NULL, CLI_OPT_PROTECT }, \
	{ "allow-committer", required_argument, NULL, CLI_OPT_ALLOW }, \
	{ "max-commits", required_argument, NULL, CLI_OPT_MAX_COMMITS }, \
	{ "keyring", required_argument, NULL, CLI_OPT_KEYRING }, \
	{ "trust", required_argument, NULL, CLI_OPT_TRUST }, \
	{ "pull-request", required_argument, NULL, CLI_OPT_PULL_REQUEST }, \
	{ "policy", required_argument, NULL, CLI_OPT_POLICY }, \
	{ "allow-repository", required_argument, NULL, CLI_OPT_REPOSITORY }, \
	{ "color", required_argument, NULL, CLI_OPT_COLOR }, \
	{ "report-file", required_argument, NULL, CLI_OPT_REPORT_FILE }, \
	{ "policy-sha256", required_argument, NULL, CLI_OPT_POLICY_SHA256 }, \
	{ "index-cache-size", required_argument, NULL, CLI_OPT_INDEX_CACHE_SIZE }, \
	{ "index-memory", required_argument, NULL, CLI_OPT_INDEX_MEMORY }, \
	{ "progress-json", no_argument, NULL, CLI_OPT_PROGRESS_JSON }

typedef struct cli_pull_args {
	const char *cmd;            /* "verify" or "gate", for messages */
	bool json;
	pg_policy *policy;          /* --policy or the defaults; the flags apply on top */
	pg_pull_request *request;   /* the parsed --pull-request mail */
	const char *mail;
	const char *report_file;    /* --report-file: the JSON report goes there, not to stdout */
	bool progress_json;         /* --progress-json */
	char *up_repo, *up_branch;
	pg_pull_spec spec;          /* filled by cli_pull_finish; its progress goes to term */
	enum cli_color color;       /* --color */
	cli_term term;
	bool pulls_from_file;       /* set by a command's option (gate --queue): no REPO TAG
				       operands, spec holds only the upstream */
	bool scratch_held;          /* scratch_fd holds a share of $PULLGATE_HOME/tmp */
	int scratch_fd;
} cli_pull_args;

/*
 * Parse a pull command's argv: the --policy file (else the built-in
 * policy, with "error: FILE:LINE:COL: ..." printed for a bad one), the
 * shared options on top of it, the command's own options through fn (may
 * be NULL), then REPO and TAG and the mail.  Returns CLI_CONTINUE, or the
 * exit status to stop with (after printing; 0 for --help).  Release with
 * cli_pull_release whatever it returns.
 */
int cli_pull_parse(cli_pull_args *a, const char *cmd, int argc, char **argv,
		   const struct option *options, cli_option_fn fn, void *ctx);
void cli_pull_release(cli_pull_args *a);

/*
 * --policy-sha256 HEX against the policy read (p): 0 when it is that
 * file, else the exit status after printing (a usage error for HEX that is
 * not 64 hex digits; "error: the policy 'F' has SHA-256 ..." when it
 * changed).
 */
int cli_policy_check_sha256(const char *cmd, const pg_policy *p, const char *arg);

/*
 * The exit status of a pull command, after printing: for err < 0 (from
 * pg_verify or pg_gate_run) the error, else the report as text or JSON
 * and the status of its verdict.
 */
int cli_pull_outcome(cli_pull_args *a, int err, const pg_report *report);

/*
 * The policy's verify-timeout-seconds, from now (on) or no longer (off).
 * Past it the process says so on standard error ("error: verify did not
 * finish within N s (the policy's verify-timeout-seconds)") and exits
 * PG_EXIT_UNDECIDED at once: what hangs is libgit2 reading a damaged
 * repository, which no flag of ours reaches.  Locks die with the process;
 * files are written whole or not at all.
 */
void cli_pull_deadline(const cli_pull_args *a, bool on);

#endif
