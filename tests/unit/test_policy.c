/* test_policy.c - unit tests for the policy loader, its problems and the lookups. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "policies/policy.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

static pg_policy *parse_ok(const char *yaml)
{
	pg_policy *p = NULL;
	int err = pg_policy_parse(&p, yaml, strlen(yaml), "t.yaml");

	if (err < 0)
		fail_msg("unexpected error: %s", pg_error_last());
	assert_non_null(p);
	return p;
}

/* The first problem, as pg_policy_parse reports it. */
static void parse_fails_len(const char *yaml, size_t len, const char *want)
{
	pg_policy *p = NULL;

	assert_int_equal(pg_policy_parse(&p, yaml, len, "t.yaml"), PG_EINVALID);
	assert_null(p);
	assert_string_equal(pg_error_last(), want);
}

static void parse_fails(const char *yaml, const char *want)
{
	parse_fails_len(yaml, strlen(yaml), want);
}

/* A scratch directory for files, removed by the caller with cleanup(). */
static char scratch[64];

static const char *write_file(const char *name, const char *text, size_t len)
{
	static char path[256];
	FILE *f;

	if (!scratch[0]) {
		snprintf(scratch, sizeof(scratch), "/tmp/test_policy.XXXXXX");
		assert_non_null(mkdtemp(scratch));
	}
	snprintf(path, sizeof(path), "%s/%s", scratch, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	return path;
}

static const char *write_str(const char *name, const char *text)
{
	return write_file(name, text, strlen(text));
}

/* Every problem pg_policy_check finds, one formatted line each. */
static char *check_all(const char *path)
{
	pg_policy_problem *list = NULL;
	pg_buf out = PG_BUF_INIT;
	size_t n = 0, i;

	assert_int_equal(pg_policy_check(&list, &n, path), 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(pg_policy_problem_format(&out, "t.yaml", &list[i]), 0);
		assert_int_equal(pg_buf_putc(&out, '\n'), 0);
	}
	pg_policy_problems_free(list, n);
	return pg_buf_detach(&out);
}

static void test_default_yaml_is_the_builtin_default(void **state)
{
	pg_policy *file = NULL, *builtin = NULL, a, b;
	unsigned i;

	(void)state;
	assert_int_equal(pg_policy_load(&file, "policies/default.yaml"), 0);
	assert_int_equal(pg_policy_new_default(&builtin), 0);

	for (i = 0; i < PG_CHECK__COUNT; i++)
		assert_int_equal(file->severity[i], builtin->severity[i]);
	assert_null(file->upstream_url);
	assert_null(builtin->upstream_url);
	assert_null(file->upstream_branch);
	assert_null(builtin->upstream_branch);
	assert_null(file->keyring);
	assert_null(file->gnupg_home);
	assert_null(builtin->keyring);
	assert_null(builtin->gnupg_home);
	assert_int_equal(file->nsigners, builtin->nsigners);
	assert_int_equal(file->nrepositories, builtin->nrepositories);
	assert_int_equal(file->nprotected, builtin->nprotected);
	assert_int_equal(file->nallowed, builtin->nallowed);
	assert_int_equal(file->protect_upstream_maintainer, builtin->protect_upstream_maintainer);
	assert_int_equal(file->max_commits, builtin->max_commits);
	assert_int_equal(file->max_pull_commits, builtin->max_pull_commits);
	assert_int_equal(file->max_findings_per_check, builtin->max_findings_per_check);
	assert_int_equal(file->lookback_days, builtin->lookback_days);
	assert_int_equal(file->max_upstream_commits, builtin->max_upstream_commits);
	assert_int_equal(file->recent_rebase_hours, builtin->recent_rebase_hours);
	assert_int_equal(file->recent_rebase_min_age_days, builtin->recent_rebase_min_age_days);
	assert_int_equal(file->future_slack_minutes, builtin->future_slack_minutes);
	assert_true(file->signoff_author && builtin->signoff_author);
	assert_true(file->signoff_committer && builtin->signoff_committer);
	assert_int_equal(file->auto_approve, builtin->auto_approve);
	assert_int_equal(file->build_timeout_minutes, builtin->build_timeout_minutes);
	assert_int_equal(file->boot_timeout_seconds, builtin->boot_timeout_seconds);
	assert_int_equal(file->kunit_select_max, builtin->kunit_select_max);
	assert_string_equal(file->source, "policies/default.yaml");
	assert_string_equal(builtin->source, "(built-in)");

	/*
	 * And whatever field is added later: both are calloc'ed, so with the
	 * source set aside the bytes must agree (the lists are all NULL).
	 */
	a = *file;
	b = *builtin;
	a.source = b.source = NULL;
	/* the digest names the bytes read, and the built-in policy read none */
	memcpy(a.sha256, b.sha256, sizeof(a.sha256));
	assert_memory_equal(&a, &b, sizeof(a));
	pg_policy_free(file);
	pg_policy_free(builtin);
}

static void test_kernel_toplevel_loads(void **state)
{
	pg_policy *p = NULL;

	(void)state;
	assert_int_equal(pg_policy_load(&p, "policies/kernel-toplevel.yaml"), 0);
	assert_string_equal(p->upstream_url,
			    "https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git");
	assert_string_equal(p->upstream_branch, "master");
	assert_int_equal(p->nprotected, 1);
	assert_true(pg_policy_is_protected(p, "Torvalds@Linux-Foundation.org"));
	assert_true(p->protect_upstream_maintainer);
	assert_int_equal(p->nrepositories, 2);
	assert_true(pg_policy_repository_allowed(
		p, "git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux.git"));
	assert_false(pg_policy_repository_allowed(p, "https://evil.example/kees/linux.git"));
	assert_false(pg_policy_repository_allowed(
		p, "https://git.kernel.org/pub/scm/linux/kernel/git/a/b/../../../../../x"));
	assert_int_equal(p->nsigners, 0);
	assert_false(p->auto_approve);
	/* the kernel's rule: author and committer sign off */
	assert_true(p->signoff_author);
	assert_true(p->signoff_committer);
	pg_policy_free(p);
}

/* A project whose maintainers apply patches without signing off themselves. */
static void test_no_maintainer_signoff_loads(void **state)
{
	pg_policy *p = NULL, *d = NULL;
	size_t i;

	(void)state;
	assert_int_equal(pg_policy_load(&p, "policies/no-maintainer-signoff.yaml"), 0);
	assert_int_equal(pg_policy_new_default(&d), 0);
	assert_true(p->signoff_author);
	assert_false(p->signoff_committer);
	/* nothing else is looser than the kernel's defaults */
	for (i = 0; i < PG_CHECK__COUNT; i++)
		assert_int_equal(p->severity[i], d->severity[i]);
	assert_int_equal(p->recent_rebase_min_age_days, d->recent_rebase_min_age_days);
	assert_int_equal(p->nsigners, 0);
	pg_policy_free(p);
	pg_policy_free(d);
}

static void test_signoff_from(void **state)
{
	pg_policy *p;

	(void)state;
	p = parse_ok("hygiene: {signoff-from: [committer]}\n");
	assert_false(p->signoff_author);
	assert_true(p->signoff_committer);
	pg_policy_free(p);
	p = parse_ok("hygiene:\n  signoff-from: [committer, author]\n");
	assert_true(p->signoff_author && p->signoff_committer);
	pg_policy_free(p);
	parse_fails("hygiene: {signoff-from: []}\n",
		    "t.yaml:1:25: 'hygiene.signoff-from' wants a list of author and committer (to "
		    "require no sign-off, turn the signoff check off), not an empty list");
	parse_fails("hygiene: {signoff-from: author}\n",
		    "t.yaml:1:25: 'hygiene.signoff-from' wants a list of author and committer (to "
		    "require no sign-off, turn the signoff check off), not 'author'");
	parse_fails("hygiene: {signoff-from: [author, maintainer]}\n",
		    "t.yaml:1:34: 'hygiene.signoff-from[1]' wants author or committer");
	parse_fails("hygiene: {signoff-from: [author, author]}\n",
		    "t.yaml:1:34: 'hygiene.signoff-from[1]' repeats 'author'");
}

static const char full[] =
	"upstream:\n"
	"  url: git://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git\n"
	"  branch: master\n"
	"keyring:\n"
	"  file: keys/maintainers.asc\n"
	"signers:\n"
	"  - fingerprint: e85052128ae3acf4dce4073ec1af8dcf493176bd\n"
	"    identities: [kees@kernel.org, keescook@chromium.org]\n"
	"    repositories: ['git://git.kernel.org/pub/scm/linux/kernel/git/kees/*']\n"
	"    tags: ['hardening-*', 'for-linus-*']\n"
	"  - fingerprint: 789703BD146789D01C2C3DF0CD2DDD3043A9254E\n"
	"repositories:\n"
	"  - 'git://git.kernel.org/pub/scm/linux/kernel/git/*/*'\n"
	"committers:\n"
	"  protected: [torvalds@linux-foundation.org]\n"
	"  allowed: [gregkh@linuxfoundation.org]\n"
	"  protect-upstream-maintainer: false\n"
	"limits: {max-commits: 500, max-pull-commits: 2000, max-findings-per-check: 7,\n"
	"         lookback-days: 30, max-upstream-commits: 1000}\n"
	"hygiene:\n"
	"  recent-rebase-hours: 48\n"
	"  recent-rebase-min-age-days: 14\n"
	"  future-slack-minutes: 5\n"
	"  signoff-from: [author]\n"
	"checks:\n"
	"  range-size: off\n"
	"  signoff: warning\n"
	"  back-merge: error\n"
	"approval: auto\n"
	"pipeline: {build-timeout-minutes: 90, boot-timeout-seconds: 120}\n";

static void test_every_key_is_mapped(void **state)
{
	pg_policy *p = NULL;
	const pg_signer *s;

	(void)state;
	assert_int_equal(pg_policy_parse(&p, full, strlen(full), "etc/pullgate/p.yaml"), 0);
	assert_string_equal(p->source, "etc/pullgate/p.yaml");
	assert_string_equal(p->upstream_url,
			    "git://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git");
	assert_string_equal(p->upstream_branch, "master");
	/* relative to the policy's directory */
	assert_string_equal(p->keyring, "etc/pullgate/keys/maintainers.asc");
	assert_null(p->gnupg_home);

	assert_int_equal(p->nsigners, 2);
	s = &p->signers[0];
	assert_string_equal(s->fingerprint, "E85052128AE3ACF4DCE4073EC1AF8DCF493176BD");
	assert_int_equal(s->nidentities, 2);
	assert_string_equal(s->identities[1], "keescook@chromium.org");
	assert_int_equal(s->nrepositories, 1);
	assert_int_equal(s->ntags, 2);
	assert_string_equal(s->tags[1], "for-linus-*");
	s = &p->signers[1];
	assert_int_equal(s->nidentities, 0);
	assert_int_equal(s->nrepositories, 0);
	assert_int_equal(s->ntags, 0);

	assert_int_equal(p->nrepositories, 1);
	assert_int_equal(p->nprotected, 1);
	assert_int_equal(p->nallowed, 1);
	assert_true(pg_policy_is_allowed(p, "GregKH@linuxfoundation.org"));
	assert_false(p->protect_upstream_maintainer);
	assert_int_equal(p->max_commits, 500);
	assert_int_equal(p->max_pull_commits, 2000);
	assert_int_equal(p->max_findings_per_check, 7);
	assert_int_equal(p->lookback_days, 30);
	assert_int_equal(p->max_upstream_commits, 1000);
	assert_int_equal(p->recent_rebase_hours, 48);
	assert_int_equal(p->recent_rebase_min_age_days, 14);
	assert_int_equal(p->future_slack_minutes, 5);
	assert_true(p->signoff_author);
	assert_false(p->signoff_committer);
	assert_int_equal(p->severity[PG_CHECK_RANGE_SIZE], PG_SEV_OFF);
	assert_int_equal(p->severity[PG_CHECK_SIGNOFF], PG_SEV_WARNING);
	assert_int_equal(p->severity[PG_CHECK_BACK_MERGE], PG_SEV_ERROR);
	/* checks left out keep their defaults */
	assert_int_equal(p->severity[PG_CHECK_FIXES_TAG], PG_SEV_WARNING);
	assert_int_equal(p->severity[PG_CHECK_TAG_SIGNATURE], PG_SEV_ERROR);
	assert_true(p->auto_approve);
	assert_int_equal(p->build_timeout_minutes, 90);
	assert_int_equal(p->boot_timeout_seconds, 120);
	pg_policy_free(p);
}

static void test_left_out_keys_keep_defaults(void **state)
{
	pg_policy *p = parse_ok("{}\n"), *d = NULL;

	(void)state;
	assert_int_equal(pg_policy_new_default(&d), 0);
	assert_int_equal(p->lookback_days, d->lookback_days);
	assert_int_equal(p->max_upstream_commits, d->max_upstream_commits);
	assert_true(p->protect_upstream_maintainer);
	pg_policy_free(p);
	pg_policy_free(d);

	p = parse_ok("limits:\n  max-commits: 7\n");
	assert_int_equal(p->max_commits, 7);
	assert_int_equal(p->lookback_days, 365);
	pg_policy_free(p);
}

/* The digest names the policy by its bytes: one byte more is another policy. */
static void test_digest(void **state)
{
	pg_policy *p = parse_ok("limits:\n  max-commits: 7\n"), *q = parse_ok("limits:\n  max-commits: 7\n\n");
	pg_policy *d = NULL;

	(void)state;
	/* sha256sum of that text, by hand */
	assert_string_equal(p->sha256, "a8ea1971d9c3bae9d6c545c6429ee9b5d2092201012613fef91ac90657a821a1");
	assert_string_not_equal(p->sha256, q->sha256);
	assert_int_equal(pg_policy_new_default(&d), 0);
	/* the built-in policy, which no file is (an empty one is refused): no bytes' */
	assert_string_equal(d->sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	pg_policy_free(p);
	pg_policy_free(q);
	pg_policy_free(d);
}

static void test_relative_paths(void **state)
{
	pg_policy *p;
	const char *path;
	char *dir;
	pg_buf want = PG_BUF_INIT;

	(void)state;
	/* no directory in the name: the path stays relative */
	p = parse_ok("keyring: {gnupg-home: gnupg}\n");
	assert_string_equal(p->gnupg_home, "gnupg");
	pg_policy_free(p);
	p = parse_ok("keyring: {file: /etc/keys.asc}\n");
	assert_string_equal(p->keyring, "/etc/keys.asc");
	pg_policy_free(p);

	/* a loaded file: the file's absolute directory */
	path = write_str("rel.yaml", "keyring:\n  gnupg-home: gnupg\n");
	assert_int_equal(pg_policy_load(&p, path), 0);
	dir = realpath(scratch, NULL);
	assert_non_null(dir);
	assert_int_equal(pg_buf_printf(&want, "%s/gnupg", dir), 0);
	assert_string_equal(p->gnupg_home, want.ptr);
	pg_policy_free(p);
	pg_buf_release(&want);
	free(dir);
}

/* --- every class of error, with its place ---------------------------------- */

static void test_broken_yaml(void **state)
{
	(void)state;
	parse_fails("limits: [\n",
		    "t.yaml:2:1: invalid YAML: did not find expected node content "
		    "(while parsing a flow node at 2:1)");
	parse_fails("limits:\n\tmax-commits: 1\n",
		    "t.yaml:2:1: invalid YAML: found character that cannot start any token "
		    "(while scanning for the next token at 2:1)");
	parse_fails("checks:\n  signoff: error\n range-size: off\n",
		    "t.yaml:3:2: invalid YAML: did not find expected key "
		    "(while parsing a block mapping at 1:1)");
	parse_fails("approval: 'auto\n",
		    "t.yaml:2:1: invalid YAML: found unexpected end of stream "
		    "(while scanning a quoted scalar at 1:11)");
}

static void test_unknown_keys(void **state)
{
	(void)state;
	parse_fails("limts:\n  max-commits: 3\n",
		    "t.yaml:1:1: unknown key 'limts' at the top level (did you mean 'limits'?)");
	parse_fails("limits:\n  max-commits: 3\n  frobnicate: 1\n",
		    "t.yaml:3:3: unknown key 'frobnicate' in 'limits' (expected one of: "
		    "max-commits, max-pull-commits, max-findings-per-check, lookback-days, "
		    "max-upstream-commits, fetch-timeout-seconds, verify-timeout-seconds)");
	parse_fails("signers:\n  - fingerprint: E85052128AE3ACF4DCE4073EC1AF8DCF493176BD\n"
		    "    identities: [a@b.c]\n    tag: ['x']\n",
		    "t.yaml:4:5: unknown key 'tag' in 'signers[0]' (did you mean 'tags'?)");
	parse_fails("checks:\n  rnge-size: off\n",
		    "t.yaml:2:3: unknown check 'rnge-size' in 'checks' (did you mean 'range-size'?)");
	parse_fails("checks: {sevrity: error}\n",
		    "t.yaml:1:10: unknown check 'sevrity' in 'checks' (expected one of: "
		    "tag-signature, mergetag-signature, rewritten-upstream, foreign-committer, "
		    "range-size, pull-request-base, pull-request-head, pull-request-url, "
		    "pull-request-shortlog, pull-request-diffstat, signoff, fixes-tag, "
		    "back-merge, recent-rebase, date-anomaly, merge-conflict, build-error, "
		    "new-warning, boot-timeout, ktap-failure, kernel-splat, boot-evidence, "
		    "labelled-backport, transparency)");
	parse_fails("? [a]\n: b\n", "t.yaml:1:3: keys at the top level are names, not a list");
	parse_fails("limits: {~: 1}\n", "t.yaml:1:10: keys in 'limits' are names, not nothing");
}

static void test_duplicate_keys(void **state)
{
	(void)state;
	parse_fails("approval: auto\napproval: manual\n",
		    "t.yaml:2:1: duplicate key 'approval' at the top level (first at 1:1)");
	parse_fails("limits: {max-commits: 1, max-commits: 2}\n",
		    "t.yaml:1:26: duplicate key 'max-commits' in 'limits' (first at 1:10)");
	parse_fails("checks:\n  signoff: off\n  signoff: error\n",
		    "t.yaml:3:3: duplicate key 'signoff' in 'checks' (first at 2:3)");
}

static void test_wrong_types(void **state)
{
	(void)state;
	parse_fails("limits: 5\n", "t.yaml:1:9: 'limits' wants a mapping, not '5'");
	parse_fails("hygiene: [1]\n", "t.yaml:1:10: 'hygiene' wants a mapping, not a list");
	parse_fails("signers: kees\n", "t.yaml:1:10: 'signers' wants a list of signers, not 'kees'");
	parse_fails("signers: [kees]\n", "t.yaml:1:11: 'signers[0]' wants a mapping, not 'kees'");
	parse_fails("approval: {a: b}\n",
		    "t.yaml:1:11: 'approval' wants auto or manual, not a mapping");
	parse_fails("repositories: 'git://x/*'\n",
		    "t.yaml:1:15: 'repositories' wants a list of globs, not 'git://x/*'");
	parse_fails("committers: {protected: torvalds@linux-foundation.org}\n",
		    "t.yaml:1:25: 'committers.protected' wants a list of e-mail addresses, "
		    "not 'torvalds@linux-foundation.org'");
	parse_fails("committers: {allowed: [[a@b.c]]}\n",
		    "t.yaml:1:24: 'committers.allowed[0]' wants an e-mail address, not a list");
	parse_fails("upstream: {url: }\n",
		    "t.yaml:1:17: 'upstream.url' wants a URL or path, not nothing");
	parse_fails("upstream: {branch: ''}\n",
		    "t.yaml:1:20: 'upstream.branch' wants a branch name, not ''");
	parse_fails("checks: {signoff: [error]}\n",
		    "t.yaml:1:19: 'checks.signoff' wants error, warning or off, not a list");
	parse_fails("", "t.yaml:1:1: the policy is empty: expected a mapping of settings");
	parse_fails("# nothing but a comment\n",
		    "t.yaml:1:1: the policy is empty: expected a mapping of settings");
	parse_fails("- approval: auto\n",
		    "t.yaml:1:1: the policy wants a mapping of settings at the top level, not a list");
}

static void test_numbers_and_booleans(void **state)
{
	(void)state;
	parse_fails("limits:\n  max-commits: -1\n",
		    "t.yaml:2:16: 'limits.max-commits' wants a non-negative integer, not '-1'");
	parse_fails("limits: {max-commits: '5'}\n",
		    "t.yaml:1:23: 'limits.max-commits' wants a non-negative integer, not '5'");
	parse_fails("limits: {lookback-days: 1.5}\n",
		    "t.yaml:1:25: 'limits.lookback-days' wants a non-negative integer, not '1.5'");
	parse_fails("limits: {lookback-days: 010}\n",
		    "t.yaml:1:25: 'limits.lookback-days' wants a decimal integer without leading "
		    "zeros, not '010'");
	parse_fails("limits: {lookback-days: 36501}\n",
		    "t.yaml:1:25: 'limits.lookback-days' wants at most 36500, not 36501");
	parse_fails("hygiene: {recent-rebase-hours: 99999999999999999999999999}\n",
		    "t.yaml:1:32: 'hygiene.recent-rebase-hours' wants at most 8760, "
		    "not 99999999999999999999999999");
	parse_fails("committers: {protect-upstream-maintainer: yes}\n",
		    "t.yaml:1:43: 'committers.protect-upstream-maintainer' wants true or false, "
		    "not 'yes'");
	parse_fails("committers: {protect-upstream-maintainer: 'true'}\n",
		    "t.yaml:1:43: 'committers.protect-upstream-maintainer' wants true or false, "
		    "not 'true'");
}

static void test_checks_and_severities(void **state)
{
	(void)state;
	parse_fails("checks:\n  signoff: fatal\n",
		    "t.yaml:2:12: 'checks.signoff' wants error, warning or off, not 'fatal'");
	parse_fails("checks:\n  signoff: Off\n",
		    "t.yaml:2:12: 'checks.signoff' wants error, warning or off, not 'Off'");
	parse_fails("approval: yes\n", "t.yaml:1:11: 'approval' wants auto or manual, not 'yes'");
	/* the gate's own rule: boot-evidence is an error whatever the policy says */
	parse_fails("checks:\n  boot-evidence: off\n",
		    "t.yaml:2:18: 'checks.boot-evidence' wants error: a boot passes only on "
		    "evidence, whatever the policy, not 'off'");
}

static void test_merge_identity(void **state)
{
	pg_policy *p = parse_ok("merge-identity:\n  name: Linus Torvalds\n"
				"  email: torvalds@linux-foundation.org\n"), *d = NULL;

	(void)state;
	assert_string_equal(p->merge_name, "Linus Torvalds");
	assert_string_equal(p->merge_email, "torvalds@linux-foundation.org");
	pg_policy_free(p);
	/* by default none: the service's, else pullgate's own */
	assert_int_equal(pg_policy_new_default(&d), 0);
	assert_null(d->merge_name);
	assert_null(d->merge_email);
	pg_policy_free(d);
	parse_fails("merge-identity:\n  name: Linus\n",
		    "t.yaml:2:3: 'merge-identity' has no 'email': expected an e-mail address");
	parse_fails("merge-identity:\n  name: Linus <x>\n  email: a@b.example\n",
		    "t.yaml:2:9: 'merge-identity.name' wants the maintainer's name, not 'Linus <x>': "
		    "expected no '<' or '>'");
	parse_fails("merge-identity:\n  name: Linus\n  email: linus\n",
		    "t.yaml:3:10: 'merge-identity.email' wants an e-mail address, not 'linus': "
		    "expected one '@' with a name before it and a domain after it");
}

static void test_attestation(void **state)
{
	pg_policy *p = parse_ok("attestation:\n  key: 0123456789ABCDEF0123456789abcdef01234567\n"
				"  gnupg-home: /srv/pullgate/gnupg\n"), *d = NULL;

	(void)state;
	assert_string_equal(p->attest_key, "0123456789ABCDEF0123456789abcdef01234567");
	assert_string_equal(p->attest_gnupg_home, "/srv/pullgate/gnupg");
	pg_policy_free(p);
	/* by default none: an approval then says it has no attestation */
	assert_int_equal(pg_policy_new_default(&d), 0);
	assert_null(d->attest_key);
	pg_policy_free(d);
	parse_fails("attestation:\n  gnupg-home: /x\n",
		    "t.yaml:2:3: 'attestation' has no 'key': expected the signing key's 40 hex digits");
	parse_fails("attestation:\n  key: 493176BD\n",
		    "t.yaml:2:8: 'attestation.key' wants the signing key's 40 hex digits, not "
		    "'493176BD': expected a fingerprint of 40 hex digits without spaces");
}

static void test_fingerprints(void **state)
{
	(void)state;
	parse_fails("signers:\n  - fingerprint: 493176BD\n    identities: [a@b.c]\n",
		    "t.yaml:2:18: 'signers[0].fingerprint' wants a fingerprint of 40 hex digits "
		    "without spaces, not '493176BD'");
	parse_fails("signers:\n  - fingerprint: E850 5212 8AE3 ACF4 DCE4  073E C1AF 8DCF 4931 76BD\n"
		    "    identities: [a@b.c]\n",
		    "t.yaml:2:18: 'signers[0].fingerprint' wants a fingerprint of 40 hex digits "
		    "without spaces, not 'E850 5212 8AE3 ACF4 DCE4  073E C1AF 8DCF 4931 76BD'");
	parse_fails("signers:\n  - fingerprint: G85052128AE3ACF4DCE4073EC1AF8DCF493176BD\n"
		    "    identities: [a@b.c]\n",
		    "t.yaml:2:18: 'signers[0].fingerprint' wants a fingerprint of 40 hex digits "
		    "without spaces, not 'G85052128AE3ACF4DCE4073EC1AF8DCF493176BD'");
	parse_fails("signers:\n  - fingerprint: E85052128AE3ACF4DCE4073EC1AF8DCF493176BD\n"
		    "    identities: [a@b.c]\n"
		    "  - fingerprint: e85052128ae3acf4dce4073ec1af8dcf493176bd\n"
		    "    identities: [d@e.f]\n",
		    "t.yaml:4:18: 'signers[1].fingerprint' repeats the fingerprint given at 2:18: "
		    "one entry per key");
	parse_fails("signers:\n  - identities: [a@b.c]\n",
		    "t.yaml:2:5: 'signers[0]' has no 'fingerprint': expected the key's 40 hex digits");
	parse_fails("signers:\n  - fingerprint: E85052128AE3ACF4DCE4073EC1AF8DCF493176BD\n"
		    "    identities: [kees]\n",
		    "t.yaml:3:18: 'signers[0].identities[0]' wants an e-mail address, not 'kees': "
		    "expected one '@' with a name before it and a domain after it");
	parse_fails("signers:\n  - fingerprint: E85052128AE3ACF4DCE4073EC1AF8DCF493176BD\n"
		    "    tags: hardening-*\n",
		    "t.yaml:3:11: 'signers[0].tags' wants a list of globs, not 'hardening-*'");
	parse_fails("signers:\n  - {}\n",
		    "t.yaml:2:5: 'signers[0]' has no 'fingerprint': expected the key's 40 hex digits");
}

static void test_strings(void **state)
{
	(void)state;
	parse_fails("committers: {protected: [linus]}\n",
		    "t.yaml:1:26: 'committers.protected[0]' wants an e-mail address, not 'linus': "
		    "expected one '@' with a name before it and a domain after it");
	parse_fails("committers: {allowed: ['Linus <torvalds@linux-foundation.org>']}\n",
		    "t.yaml:1:24: 'committers.allowed[0]' wants an e-mail address, not "
		    "'Linus <torvalds@linux-foundation.org>': expected no spaces, brackets, "
		    "quotes or separators");
	parse_fails("committers:\n  protected: [a@b.c]\n  allowed: [x@y.z, A@B.C]\n",
		    "t.yaml:3:20: 'committers.allowed[1]' is also protected: an address is either "
		    "protected or allowed");
	parse_fails("repositories: ['git://x/[abc']\n",
		    "t.yaml:1:16: 'repositories[0]' wants a glob, not 'git://x/[abc': expected "
		    "every '[' closed by a ']'");
	parse_fails("repositories: ['a\\']\n",
		    "t.yaml:1:16: 'repositories[0]' wants a glob, not 'a\\': expected no backslash "
		    "at the end");
	parse_fails("repositories: ['[[:alpha:]*']\n",
		    "t.yaml:1:16: 'repositories[0]' wants a glob, not '[[:alpha:]*': expected "
		    "every '[' closed by a ']'");
	parse_fails("repositories: ['[[:alpha]]']\n",
		    "t.yaml:1:16: 'repositories[0]' wants a glob, not '[[:alpha]]': expected "
		    "every '[:', '[.' and '[=' closed");
	parse_fails("upstream: {url: --upload-pack=x}\n",
		    "t.yaml:1:17: 'upstream.url' wants a URL or path, not '--upload-pack=x': "
		    "expected no '-' at the start");
	parse_fails("upstream: {branch: 'a..b'}\n",
		    "t.yaml:1:20: 'upstream.branch' wants a branch name, not 'a..b': expected a "
		    "valid git branch name");
	parse_fails("upstream: {url: \"a\\tb\"}\n",
		    "t.yaml:1:17: 'upstream.url' wants text without control characters, not 'a b'");
	parse_fails("keyring: {file: k.asc, gnupg-home: g}\n",
		    "t.yaml:1:10: 'keyring' wants either 'file' or 'gnupg-home', not both");
	/* a long value is cut in the message */
	parse_fails("approval: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
		    "t.yaml:1:11: 'approval' wants auto or manual, not "
		    "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'");
	/* escapes in keys are not echoed raw */
	parse_fails("\"\\e[31mred\": 1\n",
		    "t.yaml:1:1: unknown key 'red' at the top level (expected one of: upstream, "
		    "keyring, signers, repositories, committers, limits, hygiene, checks, approval, "
		    "pipeline, merge-identity, attestation, transparency)");
}

static void test_refused_yaml_features(void **state)
{
	static const char laughs[] =
		"a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
		"b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
		"c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n";

	(void)state;
	parse_fails(laughs, "t.yaml:1:4: an anchor (&): anchors and aliases are not allowed");
	parse_fails("limits: *x\n", "t.yaml:1:9: an alias (*): anchors and aliases are not allowed");
	parse_fails("approval: !!str auto\n",
		    "t.yaml:1:11: an explicit tag (!): tags are not allowed");
	parse_fails("approval: auto\n---\napproval: manual\n",
		    "t.yaml:2:1: a second document: expected only one");
	parse_fails("approval: auto\n...\n---\n",
		    "t.yaml:3:1: a second document: expected only one");
}

static void test_bytes(void **state)
{
	(void)state;
	parse_fails_len("limits:\n  max\0commits: 1\n", 25, "t.yaml:2:6: NUL byte: expected UTF-8 text");
	parse_fails("approval: \"caf\xC3\xA9\xFF\"\n",
		    "t.yaml:1:16: invalid UTF-8 (byte 0xFF): expected UTF-8 text");
	parse_fails("\xFF\xFE" "a\0",
		    "t.yaml:1:1: invalid UTF-8 (byte 0xFF): expected UTF-8 text");
	parse_fails("approval: \033[31mauto\n",
		    "t.yaml:1:11: control character U+001B: expected printable text");
	parse_fails("approval: \xC2\x9B" "31m\n",
		    "t.yaml:1:11: control character U+009B: expected printable text");
	/* escapes cannot sneak them back in */
	parse_fails("upstream: {url: \"a\\0b\"}\n",
		    "t.yaml:1:17: an escape in this scalar makes a NUL: expected UTF-8 text");
	/* a UTF-8 byte order mark is fine; columns count characters, not bytes */
	pg_policy_free(parse_ok("\xEF\xBB\xBF" "approval: auto\n"));
	parse_fails("# \xC3\xA9\xC3\xA9\n\xC3\xA9: 1\n",
		    "t.yaml:2:1: unknown key '\xC3\xA9' at the top level (expected one of: upstream, "
		    "keyring, signers, repositories, committers, limits, hygiene, checks, approval, "
		    "pipeline, merge-identity, attestation, transparency)");
	parse_fails("checks: {signoff: \xC3\xA9\xC3\xA9}\napproval: x\n",
		    "t.yaml:1:19: 'checks.signoff' wants error, warning or off, not '\xC3\xA9\xC3\xA9'");
}

static void test_caps(void **state)
{
	pg_buf big = PG_BUF_INIT;
	pg_policy *p = NULL;
	size_t i;

	(void)state;
	/* size */
	assert_int_equal(pg_buf_puts(&big, "approval: auto\n"), 0);
	while (big.len <= PG_POLICY_MAX_SIZE)
		assert_int_equal(pg_buf_puts(&big, "# padding padding padding padding\n"), 0);
	assert_int_equal(pg_policy_parse(&p, big.ptr, big.len, "t.yaml"), PG_ETOOBIG);
	assert_null(p);
	assert_string_equal(pg_error_last(),
			    "t.yaml: the policy is larger than 1 MiB: expected a smaller file");

	/* depth */
	pg_buf_clear(&big);
	assert_int_equal(pg_buf_puts(&big, "approval: "), 0);
	for (i = 0; i < 1000; i++)
		assert_int_equal(pg_buf_putc(&big, '['), 0);
	parse_fails(big.ptr, "t.yaml:1:74: nesting deeper than 64 levels");

	/* nodes */
	pg_buf_clear(&big);
	assert_int_equal(pg_buf_puts(&big, "repositories: ["), 0);
	for (i = 0; i < 100001; i++)
		assert_int_equal(pg_buf_puts(&big, "a,"), 0);
	assert_int_equal(pg_buf_puts(&big, "]\n"), 0);
	parse_fails(big.ptr, "t.yaml:1:200010: more than 100000 nodes: expected a smaller document");

	/* one string */
	pg_buf_clear(&big);
	assert_int_equal(pg_buf_puts(&big, "upstream: {url: "), 0);
	for (i = 0; i < 5000; i++)
		assert_int_equal(pg_buf_putc(&big, 'u'), 0);
	assert_int_equal(pg_buf_puts(&big, "}\n"), 0);
	parse_fails(big.ptr, "t.yaml:1:17: 'upstream.url' is 5000 bytes long: expected at most 4096");
	pg_buf_release(&big);
}

/* distcc hosts are TCP hosts only: nothing build.sh could take for a command or an option. */
static void test_distcc_hosts(void **state)
{
	pg_policy *p;

	(void)state;
	p = parse_ok("pipeline:\n  distcc-hosts: [build1.example.org:3632/8, 10.0.0.2/4, b3]\n");
	assert_int_equal(p->ndistcc_hosts, 3);
	assert_string_equal(p->distcc_hosts[0], "build1.example.org:3632/8");
	assert_string_equal(p->distcc_hosts[2], "b3");
	pg_policy_free(p);
	p = parse_ok("pipeline:\n  distcc-hosts: []\n");
	assert_int_equal(p->ndistcc_hosts, 0);
	pg_policy_free(p);
	parse_fails("pipeline:\n  distcc-hosts: [user@build1]\n",
		    "t.yaml:2:18: 'pipeline.distcc-hosts[0]' wants a distcc host, not 'user@build1': "
		    "expected HOST[:PORT][/LIMIT] and nothing else (no ssh '@', no ',' options)");
	parse_fails("pipeline:\n  distcc-hosts: ['b1,lzo']\n",
		    "t.yaml:2:18: 'pipeline.distcc-hosts[0]' wants a distcc host, not 'b1,lzo': "
		    "expected HOST[:PORT][/LIMIT] and nothing else (no ssh '@', no ',' options)");
	parse_fails("pipeline:\n  distcc-hosts: ['b1 b2']\n",
		    "t.yaml:2:18: 'pipeline.distcc-hosts[0]' wants a distcc host, not 'b1 b2': "
		    "expected HOST[:PORT][/LIMIT] and nothing else (no ssh '@', no ',' options)");
	parse_fails("pipeline:\n  distcc-hosts: [b1:0]\n",
		    "t.yaml:2:18: 'pipeline.distcc-hosts[0]' wants a distcc host, not 'b1:0': "
		    "expected a port of 1 to 65535 after ':'");
	parse_fails("pipeline:\n  distcc-hosts: [b1:70000]\n",
		    "t.yaml:2:18: 'pipeline.distcc-hosts[0]' wants a distcc host, not 'b1:70000': "
		    "expected a port of 1 to 65535 after ':'");
	parse_fails("pipeline:\n  distcc-hosts: [b1/0]\n",
		    "t.yaml:2:18: 'pipeline.distcc-hosts[0]' wants a distcc host, not 'b1/0': "
		    "expected a job limit of 1 to 999 after '/'");
	parse_fails("pipeline:\n  distcc-hosts: [--help]\n",
		    "t.yaml:2:18: 'pipeline.distcc-hosts[0]' wants a distcc host, not '--help': "
		    "expected HOST[:PORT][/LIMIT], HOST a name or an IPv4 address");
	parse_fails("pipeline:\n  distcc-hosts: b1\n",
		    "t.yaml:2:17: 'pipeline.distcc-hosts' wants a list of distcc hosts, not 'b1'");
}

/* pipeline.icecc: the word local or an absolute socket path, nothing build.sh could take for more. */
static void test_icecc(void **state)
{
	pg_policy *p;
	pg_buf yaml = PG_BUF_INIT, want = PG_BUF_INIT, path = PG_BUF_INIT;

	(void)state;
	p = parse_ok("pipeline:\n  build-timeout-minutes: 60\n");
	assert_null(p->icecc);
	pg_policy_free(p);
	p = parse_ok("pipeline:\n  icecc: local\n");
	assert_string_equal(p->icecc, "local");
	pg_policy_free(p);
	p = parse_ok("pipeline:\n  icecc: /run/icecc/iceccd.socket\n");
	assert_string_equal(p->icecc, "/run/icecc/iceccd.socket");
	pg_policy_free(p);
	/* the longest a sockaddr_un holds: 107 bytes, and one more is refused */
	assert_int_equal(pg_buf_putc(&path, '/'), 0);
	while (path.len < PG_POLICY_ICECC_MAX)
		assert_int_equal(pg_buf_putc(&path, 's'), 0);
	assert_int_equal(pg_buf_printf(&yaml, "pipeline:\n  icecc: %s\n", path.ptr), 0);
	p = parse_ok(yaml.ptr);
	assert_int_equal(strlen(p->icecc), 107);
	pg_policy_free(p);
	assert_int_equal(pg_buf_putc(&path, 's'), 0);
	pg_buf_clear(&yaml);
	assert_int_equal(pg_buf_printf(&yaml, "pipeline:\n  icecc: %s\n", path.ptr), 0);
	/* the value is quoted cut short: the message's ends are what it says */
	assert_int_equal(pg_buf_printf(&want, "t.yaml:2:10: 'pipeline.icecc' wants an icecream "
				       "daemon, not '%.60s...'", path.ptr), 0);
	assert_int_equal(pg_policy_parse(&p, yaml.ptr, yaml.len, "t.yaml"), PG_EINVALID);
	assert_null(p);
	assert_memory_equal(pg_error_last(), want.ptr, want.len);
	assert_string_equal(pg_error_last() + want.len, ": expected a socket path of at most 107 bytes");

	parse_fails("pipeline:\n  icecc: Local\n",
		    "t.yaml:2:10: 'pipeline.icecc' wants an icecream daemon, not 'Local': "
		    "expected local, or the absolute path of an iceccd's unix socket");
	parse_fails("pipeline:\n  icecc: run/iceccd.socket\n",
		    "t.yaml:2:10: 'pipeline.icecc' wants an icecream daemon, not "
		    "'run/iceccd.socket': expected local, or the absolute path of an iceccd's "
		    "unix socket");
	parse_fails("pipeline:\n  icecc: '--help'\n",
		    "t.yaml:2:10: 'pipeline.icecc' wants an icecream daemon, not '--help': "
		    "expected local, or the absolute path of an iceccd's unix socket");
	parse_fails("pipeline:\n  icecc: '/run/ice cc.socket'\n",
		    "t.yaml:2:10: 'pipeline.icecc' wants an icecream daemon, not "
		    "'/run/ice cc.socket': expected a socket path without spaces or control "
		    "characters");
	parse_fails("pipeline:\n  icecc: /run/../etc/iceccd\n",
		    "t.yaml:2:10: 'pipeline.icecc' wants an icecream daemon, not "
		    "'/run/../etc/iceccd': expected a socket path without a '..' component");
	parse_fails("pipeline:\n  icecc: /run/icecc/..\n",
		    "t.yaml:2:10: 'pipeline.icecc' wants an icecream daemon, not "
		    "'/run/icecc/..': expected a socket path without a '..' component");
	parse_fails("pipeline:\n  icecc: \"/run/ice\\tcc\"\n",
		    "t.yaml:2:10: 'pipeline.icecc' wants text without control characters, "
		    "not '/run/ice cc'");
	parse_fails("pipeline:\n  icecc: [local]\n",
		    "t.yaml:2:10: 'pipeline.icecc' wants an icecream daemon, not a list");
	parse_fails("pipeline:\n  icecc: ''\n",
		    "t.yaml:2:10: 'pipeline.icecc' wants an icecream daemon, not ''");
	parse_fails("pipeline:\n  icecc: /run/ic\xC3\xA9" "cc.socket\n",
		    "t.yaml:2:10: 'pipeline.icecc' wants an icecream daemon, not "
		    "'/run/ic\xC3\xA9" "cc.socket': expected a socket path of ASCII characters only");
	/* a C1 control made by an escape: the YAML reader refuses it first */
	parse_fails("pipeline:\n  icecc: \"/run/ice\\x85cc\"\n",
		    "t.yaml:2:10: 'pipeline.icecc' wants text without control characters, "
		    "not '/run/icecc'");
	parse_fails("pipeline:\n  icecc: /\n",
		    "t.yaml:2:10: 'pipeline.icecc' wants an icecream daemon, not '/': expected a "
		    "socket's path, not a directory's (no trailing '/')");
	parse_fails("pipeline:\n  icecc: /run/icecc/\n",
		    "t.yaml:2:10: 'pipeline.icecc' wants an icecream daemon, not '/run/icecc/': "
		    "expected a socket's path, not a directory's (no trailing '/')");
	parse_fails("pipeline:\n  icecc: /run/./iceccd.socket\n",
		    "t.yaml:2:10: 'pipeline.icecc' wants an icecream daemon, not "
		    "'/run/./iceccd.socket': expected a socket path without a '.' component");
	/* a '.' or '..' in a name is no component; the check is the CLI's too */
	assert_null(pg_policy_why_icecc("/run/..icecc/x..y/iceccd"));
	assert_null(pg_policy_why_icecc("/run/.icecc/iceccd.socket."));
	assert_null(pg_policy_why_icecc("/!~"));
	assert_non_null(pg_policy_why_icecc(""));
	assert_non_null(pg_policy_why_icecc("/run/ice\033cc"));
	assert_non_null(pg_policy_why_icecc("/run/ice\177cc"));
	assert_non_null(pg_policy_why_icecc("/run/ice\x01" "cc"));
	/* bytes of 0x80 and more: a C1 control, invalid UTF-8, a character past ASCII */
	assert_string_equal(pg_policy_why_icecc("/run/ice\xC2\x85" "cc"),
			    "a socket path of ASCII characters only");
	assert_string_equal(pg_policy_why_icecc("/run/ice\x85" "cc"),
			    "a socket path of ASCII characters only");
	assert_string_equal(pg_policy_why_icecc("/run/ice\xFF" "cc"),
			    "a socket path of ASCII characters only");
	assert_string_equal(pg_policy_why_icecc("/run/\xE2\x80\x8Eicecc"),
			    "a socket path of ASCII characters only");
	assert_string_equal(pg_policy_why_icecc("/."), "a socket path without a '.' component");
	assert_string_equal(pg_policy_why_icecc("/run/icecc/."),
			    "a socket path without a '.' component");
	assert_string_equal(pg_policy_why_icecc("/./run"), "a socket path without a '.' component");
	assert_string_equal(pg_policy_why_icecc("/.."), "a socket path without a '..' component");
	assert_string_equal(pg_policy_why_icecc("//"),
			    "a socket's path, not a directory's (no trailing '/')");
	pg_buf_release(&yaml);
	pg_buf_release(&want);
	pg_buf_release(&path);
}

/* keyring.pgpkeys: one source of three, a directory that exists when the policy is read. */
static void test_pgpkeys(void **state)
{
	pg_policy *p;
	const char *path;
	char *dir;
	pg_buf want = PG_BUF_INIT, file = PG_BUF_INIT;

	(void)state;
	p = parse_ok("keyring: {pgpkeys: /}\n");
	assert_string_equal(p->pgpkeys, "/");
	assert_null(p->keyring);
	assert_null(p->gnupg_home);
	pg_policy_free(p);

	/* relative to the policy's directory, as file: is */
	path = write_str("pgp.yaml", "keyring:\n  pgpkeys: pgpkeys.d\n");
	dir = realpath(scratch, NULL);
	assert_non_null(dir);
	assert_int_equal(pg_buf_printf(&want, "%s/pgpkeys.d", dir), 0);
	assert_int_equal(pg_policy_load(&p, path), PG_EINVALID);
	assert_null(p);
	assert_non_null(strstr(pg_error_last(), "which does not exist"));
	assert_int_equal(mkdir(want.ptr, 0755), 0);
	assert_int_equal(pg_policy_load(&p, path), 0);
	assert_string_equal(p->pgpkeys, want.ptr);
	pg_policy_free(p);

	parse_fails("keyring: {pgpkeys: /nonexistent/pgpkeys}\n",
		    "t.yaml:1:20: 'keyring.pgpkeys' names '/nonexistent/pgpkeys', which does not "
		    "exist");
	parse_fails("keyring: {pgpkeys: /dev/null}\n",
		    "t.yaml:1:20: 'keyring.pgpkeys' names '/dev/null', which is a device, not a "
		    "directory");
	assert_int_equal(pg_buf_printf(&file, "keyring: {pgpkeys: '%s/pgp.yaml'}\n", dir), 0);
	pg_buf_clear(&want);
	assert_int_equal(pg_buf_printf(&want, "t.yaml:1:20: 'keyring.pgpkeys' names '%s/pgp.yaml', "
				       "which is a file, not a directory", dir), 0);
	parse_fails(file.ptr, want.ptr);

	parse_fails("keyring: {file: k.asc, pgpkeys: /}\n",
		    "t.yaml:1:10: 'keyring' wants either 'file' or 'pgpkeys', not both");
	parse_fails("keyring: {gnupg-home: g, pgpkeys: /}\n",
		    "t.yaml:1:10: 'keyring' wants either 'pgpkeys' or 'gnupg-home', not both");
	parse_fails("keyring: {gnupg-home: g, pgpkeys: /, file: k.asc}\n",
		    "t.yaml:1:10: 'keyring' wants one of 'file', 'pgpkeys' or 'gnupg-home', not "
		    "all three");
	parse_fails("keyring: {pgpkeys: ''}\n",
		    "t.yaml:1:20: 'keyring.pgpkeys' wants a path, not ''");
	pg_buf_release(&want);
	pg_buf_release(&file);
	free(dir);
}

/* transparency: a log that must be a directory, missing warning or error; a signer's account. */
static void test_transparency(void **state)
{
	pg_policy *p;

	(void)state;
	p = parse_ok("signers: [{fingerprint: E85052128AE3ACF4DCE4073EC1AF8DCF493176BD}]\n");
	assert_null(p->tlog);
	assert_int_equal(p->tlog_missing, PG_SEV_WARNING);
	assert_null(p->signers[0].account);
	assert_int_equal(p->severity[PG_CHECK_TRANSPARENCY], PG_SEV_ERROR);
	pg_policy_free(p);

	p = parse_ok("transparency: {log: /, missing: error}\n"
		     "signers: [{fingerprint: E85052128AE3ACF4DCE4073EC1AF8DCF493176BD, "
		     "account: kees}]\n");
	assert_string_equal(p->tlog, "/");
	assert_int_equal(p->tlog_missing, PG_SEV_ERROR);
	assert_string_equal(p->signers[0].account, "kees");
	pg_policy_free(p);

	parse_fails("transparency: {missing: error}\n",
		    "t.yaml:1:15: 'transparency' names no log: the path of a clone of the "
		    "transparency log");
	parse_fails("transparency: {log: /, missing: off}\n",
		    "t.yaml:1:33: 'transparency.missing' wants warning or error (the log lags: "
		    "warning by default), not 'off'");
	parse_fails("transparency: {log: /nonexistent/tlog}\n",
		    "t.yaml:1:21: 'transparency.log' names '/nonexistent/tlog', which does not "
		    "exist");
	parse_fails("signers: [{fingerprint: E85052128AE3ACF4DCE4073EC1AF8DCF493176BD, "
		    "account: 'kees cook'}]\n",
		    "t.yaml:1:76: 'signers[0].account' wants a kernel.org account, not "
		    "'kees cook': expected an account name: letters, digits, '_', '.' and '-'");
}

/* A LAVA job goes to a server (with a token and an artifacts URL) or to this machine's dispatcher. */
static void test_lava(void **state)
{
	pg_policy *p;

	(void)state;
	p = parse_ok("pipeline:\n  boot-on: lava\n  lava:\n    device: /srv/lava/qemu.yaml\n");
	assert_true(p->boot_on_lava);
	assert_string_equal(p->lava_device, "/srv/lava/qemu.yaml");
	assert_null(p->lava_url);
	assert_null(p->lava_artifacts_url);
	pg_policy_free(p);
	p = parse_ok("pipeline:\n  lava:\n    url: https://lava.example.org/\n"
		     "    token-file: /etc/pullgate/lava-token\n"
		     "    artifacts-url: https://gate.example.org/home/\n");
	assert_string_equal(p->lava_url, "https://lava.example.org/");
	assert_null(p->lava_device);
	pg_policy_free(p);
	parse_fails("pipeline:\n  lava:\n    url: https://lava.example.org/\n"
		    "    token-file: /t\n    device: /srv/lava/qemu.yaml\n",
		    "t.yaml:3:5: 'pipeline.lava' names a url and a device: a job runs on a LAVA "
		    "server or on this machine's dispatcher, not both");
	parse_fails("pipeline:\n  lava:\n    device-type: qemu\n",
		    "t.yaml:3:5: 'pipeline.lava' names no artifacts-url: the lab needs the URL of "
		    "$PULLGATE_HOME to download the kernel from");
	parse_fails("pipeline:\n  lava:\n    url: https://lava.example.org/\n"
		    "    artifacts-url: https://gate.example.org/home/\n",
		    "t.yaml:3:5: 'pipeline.lava' names a url and no token-file: the server wants "
		    "a token");
}

static void test_check_collects_every_problem(void **state)
{
	static const char text[] =
		"limits:\n"
		"  max-commits: many\n"
		"  lookbak-days: 3\n"
		"checks:\n"
		"  range-size: of\n"
		"committers:\n"
		"  protected: [linus]\n"
		"approval: yes\n"
		"sevrity: 3\n";
	const char *path = write_file("many.yaml", text, sizeof(text) - 1);
	char *got = check_all(path);

	(void)state;
	assert_string_equal(got,
		"t.yaml:2:16: 'limits.max-commits' wants a non-negative integer, not 'many'\n"
		"t.yaml:3:3: unknown key 'lookbak-days' in 'limits' (did you mean 'lookback-days'?)\n"
		"t.yaml:5:15: 'checks.range-size' wants error, warning or off, not 'of'\n"
		"t.yaml:7:15: 'committers.protected[0]' wants an e-mail address, not 'linus': "
		"expected one '@' with a name before it and a domain after it\n"
		"t.yaml:8:11: 'approval' wants auto or manual, not 'yes'\n"
		"t.yaml:9:1: unknown key 'sevrity' at the top level (expected one of: upstream, "
		"keyring, signers, repositories, committers, limits, hygiene, checks, approval, "
		"pipeline, merge-identity, attestation, transparency)\n");
	free(got);

	/* a syntax error ends the examination, after what came before it */
	path = write_str("syntax.yaml", "approval: x\nlimits: [\n");
	got = check_all(path);
	assert_string_equal(got,
		"t.yaml:3:1: invalid YAML: did not find expected node content "
		"(while parsing a flow node at 3:1)\n");
	free(got);

	path = write_str("ok.yaml", "approval: auto\n");
	got = check_all(path);
	assert_string_equal(got, "");
	free(got);
}

static void test_check_caps_the_count(void **state)
{
	pg_buf text = PG_BUF_INIT;
	pg_policy_problem *list = NULL;
	size_t n = 0, i;
	const char *path;

	(void)state;
	for (i = 0; i < 150; i++)
		assert_int_equal(pg_buf_printf(&text, "k%zu: 1\n", i), 0);
	path = write_file("lots.yaml", text.ptr, text.len);
	assert_int_equal(pg_policy_check(&list, &n, path), 0);
	assert_int_equal(n, PG_POLICY_MAX_PROBLEMS + 1);
	assert_int_equal(list[99].line, 100);
	assert_string_equal(list[100].message, "too many problems; the rest are not shown");
	pg_policy_problems_free(list, n);
	pg_buf_release(&text);
}

static void test_check_file_errors(void **state)
{
	pg_policy_problem *list = NULL;
	pg_policy *p = NULL;
	pg_buf big = PG_BUF_INIT, line = PG_BUF_INIT;
	size_t n = 0;
	const char *path;

	(void)state;
	assert_int_equal(pg_policy_check(&list, &n, "/nonexistent/policy.yaml"), PG_ENOTFOUND);
	assert_int_equal(n, 0);
	assert_int_equal(pg_policy_load(&p, "/nonexistent/policy.yaml"), PG_ENOTFOUND);
	assert_string_equal(pg_error_last(), "cannot read the policy: '/nonexistent/policy.yaml': "
			    "No such file or directory");

	while (big.len <= PG_POLICY_MAX_SIZE + 10)
		assert_int_equal(pg_buf_puts(&big, "# a comment line, over and over\n"), 0);
	path = write_file("big.yaml", big.ptr, big.len);
	assert_int_equal(pg_policy_check(&list, &n, path), 0);
	assert_int_equal(n, 1);
	assert_int_equal(list[0].line, 0);
	assert_int_equal(pg_policy_problem_format(&line, "big.yaml", &list[0]), 0);
	assert_string_equal(line.ptr, "big.yaml: the policy is larger than 1 MiB: expected a "
			    "smaller file");
	pg_policy_problems_free(list, n);
	assert_int_equal(pg_policy_load(&p, path), PG_ETOOBIG);
	assert_null(p);
	pg_buf_release(&big);
	pg_buf_release(&line);
}

/* Garbage of every kind gives 0 or PG_EINVALID, never a crash (run under ASan too). */
static void test_garbage(void **state)
{
	static const char *const seeds[] = { full, "a: [\n", "{x: {y: [1, 2, {z: 3}]}}\n" };
	uint32_t x = 2463534242u;
	char buf[600];
	size_t round, i, len;
	pg_policy *p;
	int err;

	(void)state;
	for (round = 0; round < 3000; round++) {
		const char *seed = seeds[round % PG_ARRAY_SIZE(seeds)];

		len = strlen(seed) < sizeof(buf) ? strlen(seed) : sizeof(buf);
		memcpy(buf, seed, len);
		/* flip a few bytes of a seed, or fill with noise */
		for (i = 0; i < (round % 7 == 0 ? len : 1 + round % 5); i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			buf[round % 7 == 0 ? i : x % len] = (char)(x >> 8);
		}
		p = NULL;
		err = pg_policy_parse(&p, buf, len, "t.yaml");
		assert_true(err == 0 || err == PG_EINVALID);
		assert_true((err == 0) == (p != NULL));
		if (err < 0)
			assert_int_equal(strncmp(pg_error_last(), "t.yaml:", 7), 0);
		pg_policy_free(p);
	}
}

static void test_lookups(void **state)
{
	pg_policy *p = parse_ok(full);
	const pg_signer *s;

	(void)state;
	assert_true(pg_policy_glob_match("hardening-*", "hardening-v6.16-rc1"));
	assert_false(pg_policy_glob_match("hardening-*", "hardening/evil"));
	assert_true(pg_policy_glob_match("v6.1[0-9]", "v6.16"));
	assert_true(pg_policy_glob_match("a\\*", "a*"));
	assert_false(pg_policy_glob_match("a\\*", "ab"));

	assert_true(pg_policy_repository_allowed(
		p, "git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux.git"));
	assert_false(pg_policy_repository_allowed(
		p, "git://git.kernel.org/pub/scm/linux/kernel/git/kees/sub/linux.git"));
	assert_false(pg_policy_repository_allowed(p, "https://example.org/linux.git"));

	s = pg_policy_find_signer(p, "e85052128AE3ACF4DCE4073EC1AF8DCF493176BD");
	assert_non_null(s);
	assert_ptr_equal(s, &p->signers[0]);
	assert_null(pg_policy_find_signer(p, "0000000000000000000000000000000000000000"));
	assert_true(pg_policy_signer_allows(
		s, "git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux", "hardening-v6.16",
		"Kees@Kernel.org"));
	assert_false(pg_policy_signer_allows(
		s, "git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux", "hardening-v6.16",
		"grace@example.org"));
	assert_false(pg_policy_signer_allows(
		s, "git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux", "hardening-v6.16",
		NULL));
	assert_false(pg_policy_signer_allows(
		s, "git://git.kernel.org/pub/scm/linux/kernel/git/kees/linux", "v6.16",
		"kees@kernel.org"));
	assert_false(pg_policy_signer_allows(
		s, "git://git.kernel.org/pub/scm/linux/kernel/git/grace/linux", "hardening-x",
		"kees@kernel.org"));
	/* empty lists admit any */
	assert_true(pg_policy_signer_allows(&p->signers[1], "/any/where", "anything", NULL));
	pg_policy_free(p);

	p = parse_ok("{}\n");
	assert_true(pg_policy_repository_allowed(p, "/any/where"));
	pg_policy_free(p);
}

static void test_add_signer(void **state)
{
	pg_policy *p = parse_ok("signers:\n  - fingerprint: E85052128AE3ACF4DCE4073EC1AF8DCF493176BD\n"
			       "    identities: [kees@kernel.org]\n");
	pg_signer *s = NULL;

	(void)state;
	assert_int_equal(pg_policy_add_signer(&s, p, "0123456789abcdef0123456789ABCDEF01234567"), 0);
	assert_int_equal(p->nsigners, 2);
	assert_ptr_equal(s, &p->signers[1]);
	/* kept upper case, with no limits: any identity, repository and tag */
	assert_string_equal(s->fingerprint, "0123456789ABCDEF0123456789ABCDEF01234567");
	assert_true(pg_policy_signer_allows(s, "/any/where", "anything", NULL));
	assert_ptr_equal(pg_policy_find_signer(p, "0123456789abcdef0123456789abcdef01234567"), s);
	/* the signer read from the file is still there */
	assert_string_equal(p->signers[0].fingerprint, "E85052128AE3ACF4DCE4073EC1AF8DCF493176BD");
	assert_int_equal(p->signers[0].nidentities, 1);

	assert_int_equal(pg_policy_add_signer(&s, p, "493176BD"), PG_EINVALID);
	assert_null(s);
	assert_int_equal(pg_policy_add_signer(NULL, p, "G123456789abcdef0123456789ABCDEF01234567"),
			 PG_EINVALID);
	assert_int_equal(p->nsigners, 2);
	pg_error_clear();
	pg_policy_free(p);
}

static int cleanup(void **state)
{
	char cmd[128];

	(void)state;
	if (scratch[0]) {
		const char *names[] = { "rel.yaml", "many.yaml", "syntax.yaml", "ok.yaml",
					"lots.yaml", "big.yaml", "pgp.yaml" };
		size_t i;

		for (i = 0; i < PG_ARRAY_SIZE(names); i++) {
			snprintf(cmd, sizeof(cmd), "%s/%s", scratch, names[i]);
			unlink(cmd);
		}
		snprintf(cmd, sizeof(cmd), "%s/pgpkeys.d", scratch);
		rmdir(cmd);
		rmdir(scratch);
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_yaml_is_the_builtin_default),
		cmocka_unit_test(test_merge_identity),
		cmocka_unit_test(test_attestation),
		cmocka_unit_test(test_kernel_toplevel_loads),
		cmocka_unit_test(test_no_maintainer_signoff_loads),
		cmocka_unit_test(test_signoff_from),
		cmocka_unit_test(test_every_key_is_mapped),
		cmocka_unit_test(test_left_out_keys_keep_defaults),
		cmocka_unit_test(test_relative_paths),
		cmocka_unit_test(test_broken_yaml),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_duplicate_keys),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_numbers_and_booleans),
		cmocka_unit_test(test_checks_and_severities),
		cmocka_unit_test(test_fingerprints),
		cmocka_unit_test(test_add_signer),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_refused_yaml_features),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_distcc_hosts),
		cmocka_unit_test(test_icecc),
		cmocka_unit_test(test_lava),
		cmocka_unit_test(test_pgpkeys),
		cmocka_unit_test(test_transparency),
		cmocka_unit_test(test_check_collects_every_problem),
		cmocka_unit_test(test_check_caps_the_count),
		cmocka_unit_test(test_check_file_errors),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_lookups),
		cmocka_unit_test(test_digest),
	};

	return cmocka_run_group_tests(tests, NULL, cleanup);
}
