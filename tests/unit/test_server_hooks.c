/* test_server_hooks.c - unit tests for push records, delivery ids, mail refs, the hook decision and the serve configuration. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "pipeline/gate.h"
#include "server/config.h"
#include "server/hooks.h"
#include "server/intake.h"
#include "server/web.h"

#include <time.h>

#define ZERO "0000000000000000000000000000000000000000"
#define ONE "1111111111111111111111111111111111111111"

static pg_push_record *parse_ok(const char *text)
{
	pg_push_record *r = NULL;

	assert_int_equal(pg_push_parse(&r, text, strlen(text)), 0);
	assert_non_null(r);
	return r;
}

static void parse_bad(const char *text, int code, const char *msg)
{
	pg_push_record *r = NULL;

	assert_int_equal(pg_push_parse(&r, text, strlen(text)), code);
	assert_null(r);
	if (msg && !strstr(pg_error_last(), msg))
		fail_msg("'%s' does not say '%s'", pg_error_last(), msg);
}

static void test_push_json_and_yaml(void **state)
{
	pg_push_record *r;

	(void)state;
	r = parse_ok("{ \"repo\": \"pub/scm/linux/kernel/git/kees/linux\", \"user\": \"kees\",\n"
		     "  \"changes\": [ { \"ref\": \"refs/tags/hardening-v6.16-rc1-fix1\", \"old\": \""
		     ZERO "\", \"new\": \"" ONE "\" },\n"
		     "  { \"ref\": \"refs/heads/for-next/hardening\", \"old\": \"" ONE "\", \"new\": \""
		     ONE "\" } ] }");
	assert_string_equal(r->repo, "pub/scm/linux/kernel/git/kees/linux");
	assert_string_equal(r->user, "kees");
	assert_int_equal(r->nchanges, 2);
	assert_true(r->changes[0].is_tag);
	assert_false(r->changes[1].is_tag);
	assert_true(pg_oid_is_zero(&r->changes[0].old_id));
	assert_int_equal(pg_push_tag_count(r), 1);
	pg_push_record_free(r);

	r = parse_ok("repo: pub/scm/linux/kernel/git/kees/linux\n"
		     "changes:\n  - ref: refs/tags/a\n    old: " ZERO "\n    new: " ZERO "\n");
	assert_null(r->user);
	/* a deleted tag makes no job */
	assert_int_equal(pg_push_tag_count(r), 0);
	pg_push_record_free(r);
}

static void test_push_refusals(void **state)
{
	(void)state;
	parse_bad("", PG_EINVALID, "mapping");
	parse_bad("[1, 2]", PG_EINVALID, "mapping");
	parse_bad("{ \"repo\": ", PG_EINVALID, "line ");
	parse_bad("{ \"changes\": [] }", PG_EINVALID, "no 'repo'");
	parse_bad("{ \"repo\": \"x\" }", PG_EINVALID, "'changes'");
	parse_bad("{ \"repo\": \"x\", \"changes\": [] }", PG_EINVALID, "at least one");
	parse_bad("{ \"repo\": [1], \"changes\": [] }", PG_EINVALID, "'repo' wants");
	parse_bad("{ \"repo\": \"../etc\", \"changes\": [ 1 ] }", PG_EINVALID, "plain repository");
	parse_bad("{ \"repo\": \"/abs\", \"changes\": [ 1 ] }", PG_EINVALID, "plain repository");
	parse_bad("{ \"repo\": \"a b\", \"changes\": [ 1 ] }", PG_EINVALID, "plain repository");
	parse_bad("{ \"repo\": \"x\", \"changes\": [ 1 ] }", PG_EINVALID, "mapping of ref");
	parse_bad("{ \"repo\": \"x\", \"changes\": [ { \"ref\": \"tags/a\", \"old\": \"" ZERO
		  "\", \"new\": \"" ONE "\" } ] }", PG_EINVALID, "full ref name");
	parse_bad("{ \"repo\": \"x\", \"changes\": [ { \"ref\": \"refs/tags/a..b\", \"old\": \"" ZERO
		  "\", \"new\": \"" ONE "\" } ] }", PG_EINVALID, "full ref name");
	parse_bad("{ \"repo\": \"x\", \"changes\": [ { \"ref\": \"refs/tags/a\", \"old\": \"0\","
		  " \"new\": \"" ONE "\" } ] }", PG_EINVALID, "'changes[0].old' wants 40 hex");
	parse_bad("{ \"repo\": \"x\", \"changes\": [ { \"ref\": \"refs/tags/a\", \"old\": \"" ZERO
		  "\", \"new\": \"" ZERO "zz\" } ] }", PG_EINVALID, "'changes[0].new' wants 40 hex");
	/* aliases are refused by the YAML reader: no billion laughs */
	parse_bad("a: &x [1]\nb: *x\n", PG_EINVALID, NULL);
}

/* The first of two values no longer wins: a repeated key is refused, in JSON and YAML alike. */
static void test_push_duplicate_keys(void **state)
{
	(void)state;
	parse_bad("{ \"repo\": \"x\", \"repo\": \"../../etc\", \"changes\": [ { \"ref\": "
		  "\"refs/tags/a\", \"old\": \"" ZERO "\", \"new\": \"" ONE "\" } ] }",
		  PG_EINVALID, "line 1, column 16: duplicate key 'repo' at the top level (first at 1:3)");
	parse_bad("repo: x\nchanges:\n  - ref: refs/tags/a\n    old: " ZERO "\n    new: " ONE
		  "\n    new: " ZERO "\n", PG_EINVALID,
		  "line 6, column 5: duplicate key 'new' in 'changes[0]' (first at 5:5)");
	parse_bad("{\"repo\":\"x\",\"changes\":[{\"ref\":\"refs/tags/a\",\"old\":\"" ZERO "\",\"new\":\""
		  ONE "\"}],\"changes\":[]}", PG_EINVALID,
		  "line 1, column 145: duplicate key 'changes' at the top level (first at 1:13)");
	/* and so is a key the record does not have */
	parse_bad("{ \"repo\": \"x\", \"usr\": \"kees\", \"changes\": [ { \"ref\": \"refs/tags/a\", "
		  "\"old\": \"" ZERO "\", \"new\": \"" ONE "\" } ] }", PG_EINVALID,
		  "line 1, column 16: unknown key 'usr' at the top level (did you mean 'user'?)");
}

static void test_push_change_cap(void **state)
{
	pg_buf b = PG_BUF_INIT;
	size_t i;

	(void)state;
	pg_buf_puts(&b, "{ \"repo\": \"x\", \"changes\": [");
	for (i = 0; i <= PG_PUSH_MAX_CHANGES; i++)
		pg_buf_printf(&b, "%s{ \"ref\": \"refs/tags/t%zu\", \"old\": \"" ZERO "\", \"new\": \""
			      ONE "\" }", i ? ", " : "", i);
	pg_buf_puts(&b, "] }");
	parse_bad(b.ptr, PG_ETOOBIG, "at most");
	pg_buf_release(&b);
}

static void test_delivery_and_mail_tag(void **state)
{
	pg_buf b = PG_BUF_INIT;

	(void)state;
	assert_true(pg_hook_delivery_valid("72d3162e-cc78-11e3-81ab-4c9367dc0958"));
	assert_true(pg_hook_delivery_valid("a"));
	assert_false(pg_hook_delivery_valid(""));
	assert_false(pg_hook_delivery_valid(NULL));
	assert_false(pg_hook_delivery_valid("a b"));
	assert_false(pg_hook_delivery_valid("a/b"));
	assert_int_equal(pg_hook_mail_tag(&b, "tags/hardening-v6.16-rc1-fix1"), 0);
	assert_string_equal(b.ptr, "refs/tags/hardening-v6.16-rc1-fix1");
	pg_buf_clear(&b);
	assert_int_equal(pg_hook_mail_tag(&b, "refs/tags/x"), 0);
	assert_string_equal(b.ptr, "refs/tags/x");
	pg_buf_clear(&b);
	assert_int_equal(pg_hook_mail_tag(&b, "x"), 0);
	assert_string_equal(b.ptr, "refs/tags/x");
	pg_buf_clear(&b);
	assert_int_equal(pg_hook_mail_tag(&b, "refs/heads/master"), PG_EINVALID);
	assert_int_equal(pg_hook_mail_tag(&b, NULL), PG_EINVALID);
	assert_int_equal(pg_hook_mail_tag(&b, "a..b"), PG_EINVALID);
	assert_int_equal(b.len, 0);
	pg_buf_release(&b);
}

static void test_config(void **state)
{
	static const char text[] =
		"listen: {address: 127.0.0.1, port: 0}\n"
		"policy: policy.yaml\n"
		"state: /var/lib/pullgate\n"
		"hooks:\n  push: {secret: 0123456789abcdef}\n  max-body: 65536\n"
		"repositories:\n  base: https://git.kernel.org/\n"
		"  transparency-web: https://tlog.example.org/gitolite/\n"
		"  map: {pub/scm/linux/kernel/git/kees/linux: /srv/kees.git}\n"
		"pipeline: {stages: [merge, build], verify-workers: 3, build-worktrees: 4, branch: next}\n"
		"accounts:\n  - {name: linus, password-hash: 'pbkdf2-sha256$1000$00$00'}\n"
		"session: {hours: 2, secure-cookie: true}\n"
		"attestation: {key: 0123456789ABCDEF0123456789ABCDEF01234567, gnupg-home: gnupg}\n"
		"kcidb: {origin: my_ci_2}\n";
	pg_config *c = NULL;
	pg_buf loc = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_config_parse(&c, text, strlen(text), "/etc/pullgate/serve.yaml"), 0);
	assert_int_equal(c->port, 0);
	assert_string_equal(c->address, "127.0.0.1");
	assert_string_equal(c->policy, "/etc/pullgate/policy.yaml");
	assert_string_equal(c->state, "/var/lib/pullgate");
	assert_string_equal(c->push_secret, "0123456789abcdef");
	assert_null(c->mail_secret);
	assert_int_equal(c->max_body, 65536);
	assert_int_equal(c->stages, PG_GATE_MERGE | PG_GATE_BUILD);
	assert_int_equal(c->verify_workers, 3);
	assert_int_equal(c->build_worktrees, 4);
	assert_string_equal(c->branch, "next");
	assert_int_equal(c->naccounts, 1);
	assert_string_equal(c->accounts[0].name, "linus");
	assert_int_equal(c->session_hours, 2);
	assert_true(c->cookie_secure);
	assert_string_equal(c->attest_key, "0123456789ABCDEF0123456789ABCDEF01234567");
	assert_string_equal(c->attest_gnupg_home, "/etc/pullgate/gnupg");
	assert_string_equal(c->kcidb_origin, "my_ci_2");
	assert_string_equal(c->tlog_web, "https://tlog.example.org/gitolite/");
	assert_int_equal(pg_config_repo_location(&loc, c, "pub/scm/linux/kernel/git/kees/linux"), 0);
	assert_string_equal(loc.ptr, "/srv/kees.git");
	pg_buf_clear(&loc);
	assert_int_equal(pg_config_repo_location(&loc, c, "pub/scm/linux/kernel/git/tiwai/sound"), 0);
	assert_string_equal(loc.ptr, "https://git.kernel.org/pub/scm/linux/kernel/git/tiwai/sound");
	pg_buf_clear(&loc);
	assert_int_equal(pg_config_repo_location(&loc, c, "../../etc"), PG_EINVALID);
	pg_config_free(c);
	pg_buf_release(&loc);

	/* the embedded defaults */
	assert_int_equal(pg_config_new_default(&c), 0);
	assert_int_equal(c->port, 8080);
	assert_string_equal(c->address, "127.0.0.1");
	assert_int_equal(c->stages, PG_GATE_ALL);
	assert_int_equal(c->build_worktrees, 1);
	assert_null(c->policy);
	assert_null(c->attest_key);
	/* kernel.org publishes its log as git, with no web view to link a record to */
	assert_null(c->tlog_web);
	assert_string_equal(c->kcidb_origin, "pullgate");
	assert_int_equal(pg_config_repo_location(&loc, c, "x"), PG_ENOTFOUND);
	pg_config_free(c);
	pg_buf_release(&loc);

	/* a kcidb section without an origin keeps the default */
	assert_int_equal(pg_config_parse(&c, "kcidb: {}\n", 10, "s.yaml"), 0);
	assert_string_equal(c->kcidb_origin, "pullgate");
	/* the identity indexes' working memory: 16 MiB unless limits.index-memory says */
	assert_int_equal(c->limits.index_memory, (size_t)16 << 20);
	pg_config_free(c);
	assert_int_equal(pg_config_parse(&c, "limits: {index-memory: 1048576}\n", 32, "s.yaml"), 0);
	assert_int_equal(c->limits.index_memory, (size_t)1 << 20);
	pg_config_free(c);
}

static void config_bad(const char *text, const char *msg)
{
	pg_config *c = NULL;

	assert_int_equal(pg_config_parse(&c, text, strlen(text), "s.yaml"), PG_EINVALID);
	assert_null(c);
	if (!strstr(pg_error_last(), msg))
		fail_msg("'%s' does not say '%s'", pg_error_last(), msg);
}

static void test_config_refusals(void **state)
{
	(void)state;
	config_bad("listen: {port: 70000}\n",
		   "s.yaml:1:16: 'listen.port' wants at most 65535, not 70000");
	config_bad("lisen: {}\n", "s.yaml:1:1: unknown key 'lisen'");
	config_bad("limits: {index-memory: 1048575}\n",
		   "s.yaml:1:24: 'limits.index-memory' wants at least 1048576, not 1048575");
	config_bad("hooks: {push: {secret: short}}\n", "at least 16 characters");
	config_bad("pipeline: {stages: [merge, deploy]}\n",
		   "s.yaml:1:28: 'pipeline.stages[1]' wants merge, build, boot or approve, not 'deploy'");
	config_bad("pipeline: {stages: [merge, approve]}\n",
		   "s.yaml:1:20: 'pipeline.stages' must run in order");
	config_bad("pipeline: {stages: [boot]}\n", "approved untested");
	config_bad("pipeline: {build-worktrees: 17}\n",
		   "s.yaml:1:29: 'pipeline.build-worktrees' wants at most 16, not 17");
	config_bad("pipeline: {build-worktrees: 0}\n",
		   "s.yaml:1:29: 'pipeline.build-worktrees' wants at least 1, not 0");
	config_bad("pipeline: {build-worktrees: two}\n", "'pipeline.build-worktrees'");
	config_bad("pipeline: {build-worktrees: -1}\n", "'pipeline.build-worktrees'");
	config_bad("accounts: [{name: x}]\n",
		   "s.yaml:1:12: 'accounts[0]' has no 'password-hash': expected a password hash");
	config_bad("accounts: [{name: x, password-hash: plain}]\n", "--hash-password");
	config_bad("policy: a\npolicy: b\n",
		   "s.yaml:2:1: duplicate key 'policy' at the top level (first at 1:1)");
	config_bad("[1]\n", "wants a mapping");
	config_bad("attestation: {key: 4931 76BD}\n",
		   "s.yaml:1:20: 'attestation.key' wants the signing key's 40 hex digits, not "
		   "'4931 76BD': expected a fingerprint of 40 hex digits without spaces");
	config_bad("attestation: {gnupg-home: /x}\n", "'attestation' has no 'key'");
	config_bad("listen: {port: 1\n", "s.yaml:");
	config_bad("kcidb: {origin: Pull-Gate}\n",
		   "s.yaml:1:17: 'kcidb.origin' wants a KCIDB origin, not 'Pull-Gate': expected "
		   "1 to 64 of a-z, 0-9 and '_'");
	config_bad("kcidb: {origin: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa}\n",
		   "'kcidb.origin' wants a KCIDB origin");
	config_bad("kcidb: {origin: ''}\n", "'kcidb.origin'");
	/* the record's Message-Id follows the web view's URL, which goes into an href */
	config_bad("repositories: {transparency-web: 'ftp://x/'}\n",
		   "s.yaml:1:34: 'repositories.transparency-web' wants a URL, not 'ftp://x/': "
		   "expected an http:// or https:// URL such as https://example.org/");
	/* nor can it change the link's host: the host is there, before its '/', with no user */
	config_bad("repositories: {transparency-web: 'https://'}\n",
		   "s.yaml:1:34: 'repositories.transparency-web' wants a URL, not 'https://': "
		   "expected a URL naming its host after '//', without a user ('@'), then '/'");
	config_bad("repositories: {transparency-web: 'https:///tlog/'}\n", "naming its host");
	config_bad("repositories: {transparency-web: 'http://:8080/tlog/'}\n", "naming its host");
	config_bad("repositories: {transparency-web: 'https://x@evil.example/'}\n",
		   "without a user ('@')");
	config_bad("repositories: {transparency-web: 'https://u:p@tlog.example.org/t/'}\n",
		   "without a user ('@')");
	config_bad("repositories: {transparency-web: 'https://tlog.example.org?q/'}\n",
		   "then '/'");
	config_bad("repositories: {transparency-web: 'https://x/a\"b/'}\n",
		   "without blanks, quotes or brackets");
	config_bad("repositories: {transparency-web: 'https://x/tlog'}\n",
		   "expected a URL ending in '/', where the record's Message-Id follows");
	/* the service sends nothing: there is no URL to send to */
	config_bad("kcidb: {url: 'https://kcidb.example.org/submit'}\n",
		   "s.yaml:1:9: unknown key 'url' in 'kcidb'");
}

/* notice: the tree's public name and the merge's link, a URL the hex id is appended to. */
static void test_config_notice_names_and_links(void **state)
{
	static const char text[] =
		"notice:\n  relay: 127.0.0.1\n  from: Linus Torvalds <torvalds@linux-foundation.org>\n"
		"  tree-name: torvalds/linux.git\n  commit-url: https://git.kernel.org/torvalds/c/\n";
	static const char link[] = "notice: {commit-url: 'http://x/c?id='}\n";
	pg_config *c = NULL;

	(void)state;
	assert_int_equal(pg_config_parse(&c, text, strlen(text), "s.yaml"), 0);
	assert_string_equal(c->notice.tree_name, "torvalds/linux.git");
	assert_string_equal(c->notice.commit_url, "https://git.kernel.org/torvalds/c/");
	pg_config_free(c);
	assert_int_equal(pg_config_parse(&c, link, strlen(link), "s.yaml"), 0);
	assert_string_equal(c->notice.commit_url, "http://x/c?id=");
	pg_config_free(c);
	/* without it, the id alone */
	assert_int_equal(pg_config_parse(&c, "", 0, "s.yaml"), 0);
	assert_null(c->notice.commit_url);
	pg_config_free(c);

	config_bad("notice: {commit-url: 'git://git.kernel.org/c/'}\n",
		   "s.yaml:1:22: 'notice.commit-url' wants a URL, not 'git://git.kernel.org/c/': "
		   "expected an http:// or https:// URL of printable ASCII");
	config_bad("notice: {commit-url: 'https://'}\n", "'notice.commit-url' wants a URL");
	config_bad("notice: {commit-url: \"https://x/c/\\r\\nBcc: a@b/\"}\n",
		   "'notice.commit-url' wants text without control characters");
	config_bad("notice: {commit-url: 'https://x/a b/'}\n", "'notice.commit-url' wants a URL");
	config_bad("notice: {commit-url: 'https://x/\xc3\xa9/'}\n", "'notice.commit-url' wants a URL");
	config_bad("notice: {commit-url: 'https://example.org/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/'}\n",
		   "at most 200 characters");
}

/* intake.transparency: read, its defaults, where its jobs fetch from, and what it refuses. */
static void test_config_intake(void **state)
{
	static const char text[] =
		"repositories: {map: {pub/scm/linux/kernel/git/kees/linux: /srv/kees.git}}\n"
		"intake:\n  transparency:\n    log: tlog\n"
		"    repos: [pub/scm/linux/kernel/git/kees/linux, pub/scm/linux/kernel/git/a/b]\n"
		"    tags: ['for-linus-*', 'v6.*']\n    url-base: mirrors/\n    fetch-seconds: 5\n";
	static const char bare[] = "intake: {transparency: {log: /l, repos: [x/y]}}\n";
	pg_config *c = NULL;
	pg_buf loc = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_config_parse(&c, text, strlen(text), "/etc/pullgate/serve.yaml"), 0);
	assert_string_equal(c->intake.log, "/etc/pullgate/tlog");
	assert_int_equal(c->intake.nrepos, 2);
	assert_int_equal(c->intake.ntags, 2);
	assert_string_equal(c->intake.url_base, "/etc/pullgate/mirrors/");
	assert_int_equal(c->intake.fetch_seconds, 5);
	/* the map wins; else url-base, the path and .git */
	assert_int_equal(pg_config_intake_location(&loc, c, "pub/scm/linux/kernel/git/kees/linux"), 0);
	assert_string_equal(loc.ptr, "/srv/kees.git");
	pg_buf_clear(&loc);
	assert_int_equal(pg_config_intake_location(&loc, c, "pub/scm/linux/kernel/git/a/b"), 0);
	assert_string_equal(loc.ptr, "/etc/pullgate/mirrors/pub/scm/linux/kernel/git/a/b.git");
	pg_buf_clear(&loc);
	assert_int_equal(pg_config_intake_location(&loc, c, "../x"), PG_EINVALID);
	/* which changes it takes */
	assert_true(pg_intake_wants(&c->intake, "pub/scm/linux/kernel/git/a/b", "refs/tags/v6.16"));
	assert_true(pg_intake_wants(&c->intake, "pub/scm/linux/kernel/git/a/b",
				    "refs/tags/for-linus-x/y"));
	assert_false(pg_intake_wants(&c->intake, "pub/scm/linux/kernel/git/a/b", "refs/tags/v5.1"));
	assert_false(pg_intake_wants(&c->intake, "pub/scm/linux/kernel/git/a/b", "refs/heads/v6.1"));
	assert_false(pg_intake_wants(&c->intake, "pub/scm/linux/kernel/git/a/b", "refs/tags/"));
	assert_false(pg_intake_wants(&c->intake, "pub/scm/linux/kernel/git/a/b", "refs/tags/v6..x"));
	assert_false(pg_intake_wants(&c->intake, "pub/scm/linux/kernel/git/a", "refs/tags/v6.1"));
	pg_config_free(c);
	/* the defaults: every tag, kernel.org, a minute */
	assert_int_equal(pg_config_parse(&c, bare, strlen(bare), "s.yaml"), 0);
	assert_null(c->intake.url_base);
	assert_int_equal(c->intake.fetch_seconds, 60);
	assert_true(pg_intake_wants(&c->intake, "x/y", "refs/tags/anything"));
	pg_buf_clear(&loc);
	assert_int_equal(pg_config_intake_location(&loc, c, "x/y"), 0);
	assert_string_equal(loc.ptr, "https://git.kernel.org/x/y.git");
	pg_config_free(c);
	/* none configured: no intake */
	assert_int_equal(pg_config_parse(&c, "", 0, "s.yaml"), 0);
	assert_null(c->intake.log);
	pg_config_free(c);
	pg_buf_release(&loc);

	config_bad("intake: {transparency: {log: /l}}\n",
		   "s.yaml:1:24: 'intake.transparency' has no 'repos'");
	config_bad("intake: {transparency: {log: /l, repos: []}}\n",
		   "'intake.transparency.repos' wants at least one repository");
	config_bad("intake: {transparency: {repos: [a/b]}}\n", "has no 'log'");
	config_bad("intake: {transparency: {log: /l, repos: [/etc/x]}}\n",
		   "'intake.transparency.repos[0]' wants a kernel.org repository path");
	config_bad("intake: {transparency: {log: /l, repos: [a/b], tags: ['refs/tags/x']}}\n",
		   "'intake.transparency.tags[0]' wants a glob");
	config_bad("intake: {transparency: {log: /l, repos: [a/b], url-base: 'https://x.org'}}\n",
		   "ending in '/'");
	config_bad("intake: {transparency: {log: /l, repos: [a/b], fetch-seconds: 86401}}\n",
		   "'intake.transparency.fetch-seconds' wants at most 86400, not 86401");
	config_bad("intake: {gitolite: {}}\n", "unknown key 'gitolite' in 'intake'");
}

static void test_intake_delivery_id(void **state)
{
	pg_buf id = PG_BUF_INIT;
	char long_id[130];

	(void)state;
	assert_int_equal(pg_intake_delivery_id(&id, "<160424100444.28613.1@gitolite.kernel.org>"), 0);
	assert_string_equal(id.ptr, "tlog:160424100444.28613.1@gitolite.kernel.org");
	pg_buf_clear(&id);
	/* a bare one is taken as it is */
	assert_int_equal(pg_intake_delivery_id(&id, "a+b=c@x"), 0);
	assert_string_equal(id.ptr, "tlog:a+b=c@x");
	pg_buf_clear(&id);
	assert_int_equal(pg_intake_delivery_id(&id, NULL), PG_EINVALID);
	assert_int_equal(pg_intake_delivery_id(&id, "<>"), PG_EINVALID);
	assert_int_equal(pg_intake_delivery_id(&id, "<a b@x>"), PG_EINVALID);
	assert_int_equal(pg_intake_delivery_id(&id, "<a@x> <b@y>"), PG_EINVALID);
	assert_int_equal(pg_intake_delivery_id(&id, "<a\n@x>"), PG_EINVALID);
	assert_int_equal(pg_intake_delivery_id(&id, "<a\"@x>"), PG_EINVALID);
	memset(long_id, 'a', sizeof(long_id) - 1);
	long_id[sizeof(long_id) - 1] = '\0';
	assert_int_equal(pg_intake_delivery_id(&id, long_id), PG_EINVALID);
	long_id[120] = '\0';
	assert_int_equal(pg_intake_delivery_id(&id, long_id), 0);
	assert_int_equal(id.len, 5 + 120);
	pg_buf_release(&id);
}

/* pg_hook_decide on a service with a mapped repository and an allow-list. */
static unsigned decide(pg_hook_decision *d, bool mail, const char *type, const char *delivery,
		       bool sign, const char *body)
{
	static const char cfg[] = "repositories: {map: {kees/linux: /srv/git/kees.git}}\n";
	static const char pol[] = "repositories: ['/srv/git/*.git', 'https://example.org/*']\n";
	pg_config *c = NULL;
	pg_policy *p = NULL;
	pg_buf sig = PG_BUF_INIT, text = PG_BUF_INIT;
	pg_hook_input in;
	char now[24];

	assert_int_equal(pg_config_parse(&c, cfg, strlen(cfg), "s.yaml"), 0);
	assert_int_equal(pg_policy_parse(&p, pol, strlen(pol), "p.yaml"), 0);
	/* signed as a sender signs: "TIMESTAMP.BODY", the time now */
	snprintf(now, sizeof(now), "%lld", (long long)time(NULL));
	assert_int_equal(pg_buf_printf(&text, "%s.%s", now, body), 0);
	assert_int_equal(pg_buf_puts(&sig, "sha256="), 0);
	assert_int_equal(pg_auth_hmac_hex(&sig, "0123456789abcdef", text.ptr, text.len), 0);
	memset(&in, 0, sizeof(in));
	in.mail = mail;
	in.secret = "0123456789abcdef";
	in.config = c;
	in.policy = p;
	in.content_type = type;
	in.delivery = delivery;
	in.signature = sign ? sig.ptr : "sha256=00";
	in.timestamp = now;
	in.body = body;
	in.body_len = strlen(body);
	assert_int_equal(pg_hook_decide(d, &in), 0);
	pg_buf_release(&sig);
	pg_buf_release(&text);
	pg_config_free(c);
	pg_policy_free(p);
	return d->status;
}

static void test_hook_decision(void **state)
{
	static const char push[] = "{\"repo\": \"kees/linux\", \"changes\": ["
		"{\"ref\": \"refs/tags/v1\", \"old\": \"" ZERO "\", \"new\": \"" ONE "\"},"
		"{\"ref\": \"refs/heads/x\", \"old\": \"" ZERO "\", \"new\": \"" ONE "\"}]}";
	static const char elsewhere[] = "{\"repo\": \"other/linux\", \"changes\": ["
		"{\"ref\": \"refs/tags/v1\", \"old\": \"" ZERO "\", \"new\": \"" ONE "\"}]}";
	pg_hook_decision d;
	char hex[PG_OID_HEXSZ + 1];

	(void)state;
	assert_int_equal(decide(&d, false, "application/json; charset=utf-8", "d1", true, push), 0);
	assert_int_equal(d.njobs, 1);
	assert_string_equal(d.jobs[0].tag, "refs/tags/v1");
	assert_string_equal(d.jobs[0].repo, "/srv/git/kees.git");
	assert_int_equal(d.jobs[0].kind, PG_JOB_PUSH);
	assert_non_null(d.jobs[0].expect);
	pg_oid_tohex(hex, d.jobs[0].expect);
	assert_string_equal(hex, ONE);
	pg_hook_decision_release(&d);

	assert_int_equal(decide(&d, false, "text/html", "d1", true, push), 415);
	assert_int_equal(d.why, PG_REJECT_CONTENT_TYPE);
	assert_int_equal(d.njobs, 0);
	pg_hook_decision_release(&d);
	assert_int_equal(decide(&d, false, "application/json", "bad id", true, push), 400);
	assert_int_equal(d.why, PG_REJECT_DELIVERY);
	pg_hook_decision_release(&d);
	assert_int_equal(decide(&d, false, "application/json", "d1", false, push), 401);
	assert_int_equal(d.why, PG_REJECT_SIGNATURE);
	assert_non_null(strstr(d.message.ptr, "X-Pullgate-Signature"));
	pg_hook_decision_release(&d);
	assert_int_equal(decide(&d, false, "application/json", "d1", true, "{\"repo\": 1}"), 400);
	assert_int_equal(d.why, PG_REJECT_MALFORMED);
	assert_non_null(strstr(d.message.ptr, "malformed push record: "));
	pg_hook_decision_release(&d);
	assert_int_equal(decide(&d, false, "application/json", "d1", true, elsewhere), 422);
	assert_int_equal(d.why, PG_REJECT_REPOSITORY);
	pg_hook_decision_release(&d);

	assert_int_equal(decide(&d, true, "text/plain", "m1", true, "not a request-pull"), 400);
	assert_int_equal(d.why, PG_REJECT_MALFORMED);
	assert_non_null(strstr(d.message.ptr, "malformed pull-request mail: "));
	pg_hook_decision_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_push_json_and_yaml),
		cmocka_unit_test(test_push_refusals),
		cmocka_unit_test(test_push_duplicate_keys),
		cmocka_unit_test(test_push_change_cap),
		cmocka_unit_test(test_delivery_and_mail_tag),
		cmocka_unit_test(test_hook_decision),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_config_refusals),
		cmocka_unit_test(test_config_notice_names_and_links),
		cmocka_unit_test(test_config_intake),
		cmocka_unit_test(test_intake_delivery_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
