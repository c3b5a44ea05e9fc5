/* config.c - the serve configuration as field tables over the YAML walker, every mistake by place. */
#include "server/config.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/yaml_schema.h"
#include "pipeline/gate.h"
#include "pipeline/kcidb.h"
#include "policies/policy.h"
#include "server/hooks.h"
#include "server/kcidb_submit.h"
#include "verifier/identity_index.h"

/* A hook secret, given or read from a file, has at least this many characters. */
#define SECRET_MIN 16

int pg_config_new_default(pg_config **out)
{
	pg_config *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return pg_error_oom();
	c->port = 8080;
	c->max_body = (size_t)4 << 20;
	c->replay_window = 300;
	c->limits.connections = 1024;
	c->limits.per_address = 64;
	c->limits.header_timeout = 10;
	c->limits.body_timeout = 60;
	c->limits.findings_per_check = 100;
	c->limits.report_size = (size_t)1 << 20;
	c->limits.login_backoff = 1;
	c->limits.streams = 256;
	c->limits.streams_per_address = 8;
	c->limits.stream_seconds = 600;
	c->limits.index_cache_size = (size_t)PG_IDENTITY_INDEX_CACHE_DEFAULT;
	c->limits.index_memory = (size_t)PG_IDENTITY_INDEX_WORK_DEFAULT;
	c->limits.verify_memory = (size_t)8 << 30;
	c->stages = PG_GATE_ALL;
	c->verify_workers = 2;
	c->build_worktrees = 1;
	c->session_hours = 12;
	c->notice.port = 25;
	c->notice.attempts = 4;
	c->notice.retry_seconds = 30;
	c->notice.timeout_seconds = 60;
	c->intake.fetch_seconds = 60;
	c->kcidb_submit.timeout_seconds = 30;
	c->kcidb_submit.attempts = 5;
	c->kcidb_submit.retry_seconds = 30;
	if (!(c->source = pg_strdup("(built-in)")) || !(c->address = pg_strdup("127.0.0.1")) ||
	    !(c->kcidb_origin = pg_strdup(PG_KCIDB_ORIGIN_DEFAULT))) {
		pg_config_free(c);
		return PG_ENOMEM;
	}
	*out = c;
	return 0;
}

void pg_config_free(pg_config *c)
{
	size_t i;

	if (!c)
		return;
	free(c->source);
	free(c->address);
	pg_str_list_free(c->hosts, c->nhosts);
	free(c->policy);
	free(c->state);
	pg_free_secret(c->push_secret);
	pg_free_secret(c->mail_secret);
	free(c->repo_base);
	for (i = 0; i < c->nrepos; i++) {
		free(c->repos[i].name);
		free(c->repos[i].location);
	}
	free(c->repos);
	for (i = 0; i < c->naccounts; i++) {
		free(c->accounts[i].name);
		pg_free_secret(c->accounts[i].hash);
	}
	free(c->accounts);
	free(c->tree);
	free(c->branch);
	free(c->public_base);
	free(c->tlog_web);
	free(c->merge_name);
	free(c->merge_email);
	free(c->notice.relay);
	free(c->notice.from);
	free(c->notice.tree_name);
	free(c->notice.commit_url);
	free(c->attest_key);
	free(c->attest_gnupg_home);
	free(c->kcidb_origin);
	free(c->kcidb_submit.url);
	pg_free_secret(c->kcidb_submit.token);
	pg_intake_conf_release(&c->intake);
	free(c);
}

void pg_intake_conf_release(pg_intake_conf *k)
{
	free(k->log);
	pg_str_list_free(k->repos, k->nrepos);
	pg_str_list_free(k->tags, k->ntags);
	free(k->url_base);
	memset(k, 0, sizeof(*k));
}

/* --- values a field kind cannot say ---------------------------------------- */

/* secret-file: the secret is the file's text without trailing whitespace. */
static void read_secret_file(pg_yaml_reader *r, void *base, const pg_yaml_node *v,
			     const char *path, const pg_yaml_field *f)
{
	static const pg_yaml_field file = { .wants = "a path" };
	char **secret = base, *name = NULL;
	pg_buf text = PG_BUF_INIT;
	const char *s = pg_yaml_string(r, v, path, &file);

	(void)f;
	if (!s || !(name = pg_yaml_path(r, s)))
		goto done;
	pg_buf_init(&text, 4096);
	if (pg_buf_read_file(&text, name) < 0) {
		if (pg_error_last_code() == PG_ENOMEM)
			pg_yaml_fail(r, PG_ENOMEM);
		else
			pg_yaml_problem_at(r, v, "'%s' names a file that cannot be read: %s", path,
					   pg_error_last());
		goto done;
	}
	pg_buf_rtrim(&text);
	if (text.len < SECRET_MIN) {
		pg_yaml_problem_at(r, v, "the secret in '%s' wants at least %d characters", name,
				   SECRET_MIN);
		goto done;
	}
	pg_free_secret(*secret);
	*secret = pg_buf_detach(&text);
done:
	free(name);
	pg_buf_release_secret(&text);
}

/*
 * kcidb.submit.token-file: the bearer token, read now (at start and at
 * each reload), never quoted back.
 */
static void read_token_file(pg_yaml_reader *r, void *base, const pg_yaml_node *v,
			    const char *path, const pg_yaml_field *f)
{
	static const pg_yaml_field file = { .wants = "a path" };
	pg_config *c = base;
	const char *s = pg_yaml_string(r, v, path, &file);
	char *name = NULL, *token = NULL;
	int err;

	(void)f;
	if (!s || !(name = pg_yaml_path(r, s)))
		goto done;
	if ((err = pg_submit_token_read(&token, name)) == PG_ENOMEM)
		pg_yaml_fail(r, err);
	else if (err < 0)
		pg_yaml_problem_at(r, v, "'%s': %s", path, pg_error_last());
	else {
		pg_free_secret(c->kcidb_submit.token);
		c->kcidb_submit.token = token;
	}
	pg_error_clear();
done:
	free(name);
}

/* A location with a scheme is a URL; anything else is a path, relative to the file. */
static void read_repo(pg_yaml_reader *r, void *base, const pg_yaml_node *key,
		      const pg_yaml_node *v, const char *map_path, const char *path)
{
	static const pg_yaml_field location = { .wants = "a URL or path" };
	pg_repo_map *e = base;
	const char *s = pg_yaml_string(r, v, path, &location);

	(void)map_path;
	if (!(e->name = pg_strdup(key->value)))
		pg_yaml_fail(r, PG_ENOMEM);
	else if (s && !(e->location = strstr(s, "://") ? pg_strdup(s) : pg_yaml_path(r, s)))
		pg_yaml_fail(r, PG_ENOMEM);
}

/* intake's url-base: a URL as it is, a path from the file's directory; either ends in '/'. */
static void read_url_base(pg_yaml_reader *r, void *base, const pg_yaml_node *v, const char *path,
			  const pg_yaml_field *f)
{
	static const pg_yaml_field url = { .wants = "a URL or path" };
	pg_config *c = base;
	const char *s = pg_yaml_string(r, v, path, &url);
	char *p = NULL;

	(void)f;
	if (!s)
		return;
	if (strpbrk(s, " \t") || s[strlen(s) - 1] != '/') {
		pg_yaml_wrong(r, v, path, "a URL or path without spaces, ending in '/'");
		return;
	}
	if (!(p = strstr(s, "://") ? pg_strdup(s) : pg_yaml_path(r, s))) {
		pg_yaml_fail(r, PG_ENOMEM);
		return;
	}
	free(c->intake.url_base);
	c->intake.url_base = p;
}

static void read_stages(pg_yaml_reader *r, void *base, const pg_yaml_node *v, const char *path,
			const pg_yaml_field *f)
{
	pg_config *c = base;
	unsigned flags = 0, flag;
	size_t i;

	(void)f;
	if (v->type != PG_YAML_LIST) {
		pg_yaml_wrong(r, v, path, "a list of merge, build, boot, approve");
		return;
	}
	for (i = 0; i < v->n; i++) {
		const pg_yaml_node *s = v->items[i];

		if (s->type != PG_YAML_SCALAR ||
		    !(flag = pg_gate_stage_flag(s->value, strlen(s->value)))) {
			pg_buf sub = PG_BUF_INIT;

			if (pg_buf_printf(&sub, "%s[%zu]", path, i) < 0)
				pg_yaml_fail(r, PG_ENOMEM);
			else
				pg_yaml_wrong(r, s, sub.ptr, "merge, build, boot or approve");
			pg_buf_release(&sub);
			return;
		}
		flags |= flag;
	}
	if (!pg_gate_stages_valid(flags)) {
		pg_yaml_problem_at(r, v, "'%s' must run in order from merge without a gap "
				   "(nothing is booted unbuilt or approved untested)", path);
		return;
	}
	c->stages = flags;
}

static void read_queue(pg_yaml_reader *r, void *base, const pg_yaml_node *v, const char *path,
		       const pg_yaml_field *f)
{
	pg_config *c = base;

	(void)f;
	if (v->type == PG_YAML_SCALAR && !strcmp(v->value, "stack"))
		c->each_on_head = false;
	else if (v->type == PG_YAML_SCALAR && !strcmp(v->value, "each"))
		c->each_on_head = true;
	else
		pg_yaml_wrong(r, v, path, "stack or each");
}

/* A Host name as a request carries it, without a port: a DNS name or an IP address. */
static const char *why_host(const char *s)
{
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:") !=
		strlen(s) ? "a host name or an IP address, without a port" : NULL;
}

static const char *why_hash(const char *s)
{
	return strncmp(s, "pbkdf2-sha256$", 14) ? "the output of 'pullgate serve --hash-password'" :
						   NULL;
}

/* A From for the notice: "address" or "Name <address>", the address with one '@'. */
static const char *why_from(const char *s)
{
	const char *lt = strrchr(s, '<'), *addr = lt ? lt + 1 : s;
	size_t n = lt ? strcspn(addr, ">") : strlen(s);
	const char *at = memchr(addr, '@', n);

	if ((lt && (addr[n] != '>' || addr[n + 1])) || !at || at == addr || at == addr + n - 1 ||
	    memchr(at + 1, '@', (size_t)(addr + n - at - 1)) || strcspn(addr, " \t\"(),:;<>[]\\") < n)
		return "an address (user@example.org) or Name <user@example.org>";
	return NULL;
}

/* A header's value: printable ASCII without blanks, as a repository's path is written. */
static const char *why_tree_name(const char *s)
{
	const char *p;

	for (p = s; *p; p++)
		if (*p <= ' ' || *p >= 0x7f)
			break;
	if (!*s || *p || strlen(s) > 200)
		return "printable ASCII without blanks, at most 200 characters";
	return NULL;
}

/* Every id of a KCIDB document starts with its origin: the schema's pattern. */
_Static_assert(PG_KCIDB_ORIGIN_MAX == 64, "why_origin names the longest origin");
static const char *why_origin(const char *s)
{
	return pg_kcidb_origin_valid(s) ? NULL : "1 to 64 of a-z, 0-9 and '_'";
}

/* A glob of tag names: what follows refs/tags/, without blanks. */
static const char *why_tag_glob(const char *s)
{
	return strpbrk(s, " \t") || !strncmp(s, "refs/", 5) ?
		"a glob of tag names (what follows refs/tags/), without blanks" : NULL;
}

/* --- rules across keys ------------------------------------------------------ */

/* A relay needs a From. */
static void check_notice(pg_yaml_reader *r, void *base, const pg_yaml_node *map,
			 const char *path)
{
	const pg_config *c = base;

	if (c->notice.relay && !c->notice.from)
		pg_yaml_problem_at(r, map, "'%s' names a relay but no 'from': the maintainer the "
				   "notice comes from", path);
}

static void check_secret(pg_yaml_reader *r, void *base, const pg_yaml_node *map, const char *path)
{
	(void)base;
	pg_yaml_either(r, map, path, "secret", "secret-file");
}

/* An account name is given once; r->ctx is the configuration being read. */
static void check_account(pg_yaml_reader *r, void *base, const pg_yaml_node *map,
			  const char *path)
{
	const pg_config *c = r->ctx;
	const pg_account *a = base;
	size_t i;

	for (i = 0; a->name && i + 1 < c->naccounts; i++)
		if (c->accounts[i].name && !strcmp(c->accounts[i].name, a->name)) {
			pg_yaml_problem_at(r, map, "'%s' repeats the name of 'accounts[%zu]': one "
					   "entry per account", path, i);
			return;
		}
}

/* The intake watches some repositories: every push to kernel.org is in the log. */
static void check_intake(pg_yaml_reader *r, void *base, const pg_yaml_node *map,
			 const char *path)
{
	const pg_config *c = base;

	if (c->intake.log && !c->intake.nrepos)
		pg_yaml_problem_at(r, map, "'%s.repos' wants at least one repository: the log holds "
				   "every push to kernel.org", path);
}

/* --- the tables (docs/server.md) ---------------------------------------------- */

#define MEMBER(s, m) .offset = offsetof(s, m)

static const pg_yaml_field listen_fields[] = {
	{ .key = "address", .kind = PG_FIELD_STRING, MEMBER(pg_config, address),
	  .wants = "an IP address" },
	{ .key = "port", .kind = PG_FIELD_UINT, MEMBER(pg_config, port), .max = 65535 },
	{ .key = "hosts", .kind = PG_FIELD_STRINGS, MEMBER(pg_config, hosts),
	  .count = offsetof(pg_config, nhosts), .max = 255, .why = why_host,
	  .wants = "a host name", .list_wants = "a list of host names" },
};

/* Read into the secret's char *, the hook's member. */
static const pg_yaml_field secret_fields[] = {
	{ .key = "secret", .kind = PG_FIELD_STRING, .wants = "a secret", .min = SECRET_MIN,
	  .secret = true },
	{ .key = "secret-file", .kind = PG_FIELD_CUSTOM, .read = read_secret_file },
};

static const pg_yaml_field hooks_fields[] = {
	{ .key = "push", .kind = PG_FIELD_MAP, MEMBER(pg_config, push_secret),
	  .sub = PG_YAML_SUB(secret_fields, check_secret) },
	{ .key = "pull-request", .kind = PG_FIELD_MAP, MEMBER(pg_config, mail_secret),
	  .sub = PG_YAML_SUB(secret_fields, check_secret) },
	{ .key = "max-body", .kind = PG_FIELD_SIZE, MEMBER(pg_config, max_body), .min = 1024,
	  .max = (size_t)64 << 20 },
	{ .key = "replay-window", .kind = PG_FIELD_UINT, MEMBER(pg_config, replay_window),
	  .min = 10, .max = 86400 },
};

static const pg_yaml_field limits_fields[] = {
	{ .key = "connections", .kind = PG_FIELD_UINT, MEMBER(pg_config, limits.connections),
	  .min = 16, .max = 65536 },
	{ .key = "connections-per-address", .kind = PG_FIELD_UINT,
	  MEMBER(pg_config, limits.per_address), .min = 1, .max = 65536 },
	{ .key = "header-timeout", .kind = PG_FIELD_UINT, MEMBER(pg_config, limits.header_timeout),
	  .min = 1, .max = 3600 },
	{ .key = "body-timeout", .kind = PG_FIELD_UINT, MEMBER(pg_config, limits.body_timeout),
	  .min = 1, .max = 3600 },
	{ .key = "findings-per-check", .kind = PG_FIELD_UINT,
	  MEMBER(pg_config, limits.findings_per_check), .min = 1, .max = 100000 },
	{ .key = "report-size", .kind = PG_FIELD_SIZE, MEMBER(pg_config, limits.report_size),
	  .min = 65536, .max = (size_t)256 << 20 },
	{ .key = "login-backoff", .kind = PG_FIELD_UINT, MEMBER(pg_config, limits.login_backoff),
	  .min = 1, .max = 60 },
	{ .key = "streams", .kind = PG_FIELD_UINT, MEMBER(pg_config, limits.streams), .min = 1,
	  .max = 32768 },
	{ .key = "streams-per-address", .kind = PG_FIELD_UINT,
	  MEMBER(pg_config, limits.streams_per_address), .min = 1, .max = 32768 },
	{ .key = "stream-seconds", .kind = PG_FIELD_UINT, MEMBER(pg_config, limits.stream_seconds),
	  .min = 1, .max = 86400 },
	{ .key = "index-cache-size", .kind = PG_FIELD_SIZE,
	  MEMBER(pg_config, limits.index_cache_size), .min = (size_t)1 << 20 },
	{ .key = "index-memory", .kind = PG_FIELD_SIZE,
	  MEMBER(pg_config, limits.index_memory), .min = (size_t)1 << 20 },
	{ .key = "verify-memory", .kind = PG_FIELD_SIZE,
	  MEMBER(pg_config, limits.verify_memory), .min = (size_t)256 << 20 },
};

/* What a merge message names: a network URL, ending where a repository name follows. */
static const char *why_public_base(const char *s)
{
	if (!strstr(s, "://") || !strncmp(s, "file:", 5))
		return "a network URL such as git://git.kernel.org/";
	if (strpbrk(s, " \t") || s[strlen(s) - 1] != '/')
		return "a URL without spaces, ending in '/'";
	return NULL;
}

/* Printable ASCII without blanks, quotes or brackets: a URL that reads the same in a mail and a page. */
static bool web_chars(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f || strchr("\"'<>\\", *s))
			return false;
	return true;
}

/*
 * The start of a link made by appending to s: http:// or https://, a host
 * with no user before it ('@'), and the '/' that ends it, so that what is
 * appended cannot change the host.
 */
static const char *why_url_prefix(const char *s)
{
	const char *host = !strncmp(s, "https://", 8) ? s + 8
			 : !strncmp(s, "http://", 7) ? s + 7 : NULL;
	size_t n;

	if (!host)
		return "an http:// or https:// URL such as https://example.org/";
	n = strcspn(host, "/?#");
	if (!n || *host == ':' || memchr(host, '@', n) || host[n] != '/')
		return "a URL naming its host after '//', without a user ('@'), then '/'";
	return NULL;
}

/* Where a record's Message-Id is appended: a web URL, ending where that id follows. */
static const char *why_web_base(const char *s)
{
	const char *why;

	if ((why = why_url_prefix(s)))
		return why;
	if (!web_chars(s))
		return "a URL of printable ASCII without blanks, quotes or brackets, ending in '/'";
	if (s[strlen(s) - 1] != '/')
		return "a URL ending in '/', where the record's Message-Id follows";
	return NULL;
}

/* The notice's link to a merge: a web URL its hex id is appended to, a line of a mail. */
static const char *why_commit_url(const char *s)
{
	if (why_url_prefix(s) || !web_chars(s) || strlen(s) > 200)
		return "an http:// or https:// URL of printable ASCII without blanks, quotes or "
		       "brackets, naming its host (no user '@') then '/', at most 200 characters, "
		       "such as https://git.kernel.org/torvalds/c/";
	return NULL;
}

static const pg_yaml_field repositories_fields[] = {
	{ .key = "base", .kind = PG_FIELD_STRING, MEMBER(pg_config, repo_base),
	  .wants = "a URL or path" },
	{ .key = "public-base", .kind = PG_FIELD_STRING, MEMBER(pg_config, public_base),
	  .wants = "a URL", .why = why_public_base },
	{ .key = "transparency-web", .kind = PG_FIELD_STRING, MEMBER(pg_config, tlog_web),
	  .wants = "a URL", .why = why_web_base },
	{ .key = "map", .kind = PG_FIELD_NAMES, MEMBER(pg_config, repos),
	  .count = offsetof(pg_config, nrepos), .size = sizeof(pg_repo_map),
	  .max = PG_CONFIG_MAX_REPOS, .entry = read_repo,
	  .list_wants = "a mapping of repository names to locations" },
};

static const pg_yaml_field pipeline_fields[] = {
	{ .key = "stages", .kind = PG_FIELD_CUSTOM, .read = read_stages },
	{ .key = "tree", .kind = PG_FIELD_PATH, MEMBER(pg_config, tree), .wants = "a path" },
	{ .key = "branch", .kind = PG_FIELD_STRING, MEMBER(pg_config, branch),
	  .wants = "a branch name" },
	{ .key = "merge-name", .kind = PG_FIELD_STRING, MEMBER(pg_config, merge_name),
	  .wants = "a name" },
	{ .key = "merge-email", .kind = PG_FIELD_STRING, MEMBER(pg_config, merge_email),
	  .wants = "an e-mail address" },
	{ .key = "verify-workers", .kind = PG_FIELD_UINT, MEMBER(pg_config, verify_workers),
	  .min = 1, .max = 16 },
	{ .key = "build-worktrees", .kind = PG_FIELD_UINT, MEMBER(pg_config, build_worktrees),
	  .min = 1, .max = PG_GATE_MAX_WORKTREES },
	{ .key = "queue", .kind = PG_FIELD_CUSTOM, .read = read_queue },
};

static const pg_yaml_field account_fields[] = {
	{ .key = "name", .kind = PG_FIELD_STRING, MEMBER(pg_account, name), .required = true,
	  .wants = "a user name" },
	{ .key = "password-hash", .kind = PG_FIELD_STRING, MEMBER(pg_account, hash),
	  .required = true, .secret = true, .why = why_hash, .wants = "a password hash" },
};

static const pg_yaml_field session_fields[] = {
	{ .key = "hours", .kind = PG_FIELD_UINT, MEMBER(pg_config, session_hours), .min = 1,
	  .max = 24 * 30 },
	{ .key = "secure-cookie", .kind = PG_FIELD_BOOL, MEMBER(pg_config, cookie_secure) },
};

static const pg_yaml_field notice_fields[] = {
	{ .key = "relay", .kind = PG_FIELD_STRING, MEMBER(pg_config, notice.relay),
	  .wants = "a host name or address" },
	{ .key = "port", .kind = PG_FIELD_UINT, MEMBER(pg_config, notice.port), .min = 1,
	  .max = 65535 },
	{ .key = "from", .kind = PG_FIELD_STRING, MEMBER(pg_config, notice.from),
	  .why = why_from, .wants = "an e-mail address" },
	{ .key = "attempts", .kind = PG_FIELD_UINT, MEMBER(pg_config, notice.attempts), .min = 1,
	  .max = 10 },
	{ .key = "retry-seconds", .kind = PG_FIELD_UINT, MEMBER(pg_config, notice.retry_seconds),
	  .min = 1, .max = 3600 },
	{ .key = "timeout-seconds", .kind = PG_FIELD_UINT,
	  MEMBER(pg_config, notice.timeout_seconds), .min = 1, .max = 600 },
	{ .key = "tree-name", .kind = PG_FIELD_STRING, MEMBER(pg_config, notice.tree_name),
	  .why = why_tree_name, .wants = "a name such as torvalds/linux.git" },
	{ .key = "commit-url", .kind = PG_FIELD_STRING, MEMBER(pg_config, notice.commit_url),
	  .why = why_commit_url, .wants = "a URL" },
};

static const pg_yaml_field attestation_fields[] = {
	{ .key = "key", .kind = PG_FIELD_STRING, MEMBER(pg_config, attest_key), .required = true,
	  .why = pg_policy_why_fingerprint, .wants = "the signing key's 40 hex digits" },
	{ .key = "gnupg-home", .kind = PG_FIELD_PATH, MEMBER(pg_config, attest_gnupg_home),
	  .wants = "a path" },
};

/* Where each decided run's document is POSTed (docs/kcidb.md, "Submission"). */
static const pg_yaml_field submit_fields[] = {
	{ .key = "url", .kind = PG_FIELD_STRING, MEMBER(pg_config, kcidb_submit.url),
	  .required = true, .max = 2048, .why = pg_submit_why_url, .wants = "a URL" },
	{ .key = "token-file", .kind = PG_FIELD_CUSTOM, .read = read_token_file,
	  .required = true },
	{ .key = "timeout-seconds", .kind = PG_FIELD_UINT,
	  MEMBER(pg_config, kcidb_submit.timeout_seconds), .min = 1, .max = 600 },
	{ .key = "attempts", .kind = PG_FIELD_UINT, MEMBER(pg_config, kcidb_submit.attempts),
	  .min = 1, .max = 20 },
	{ .key = "retry-seconds", .kind = PG_FIELD_UINT,
	  MEMBER(pg_config, kcidb_submit.retry_seconds), .min = 1, .max = 3600 },
};

/* The documents' origin; with submit, the service also sends them (docs/kcidb.md). */
static const pg_yaml_field kcidb_fields[] = {
	{ .key = "origin", .kind = PG_FIELD_STRING, MEMBER(pg_config, kcidb_origin),
	  .why = why_origin, .wants = "a KCIDB origin" },
	{ .key = "submit", PG_YAML_SECTION(submit_fields, NULL) },
};

static const pg_yaml_field tlog_intake_fields[] = {
	{ .key = "log", .kind = PG_FIELD_PATH, MEMBER(pg_config, intake.log), .required = true,
	  .wants = "a path" },
	{ .key = "repos", .kind = PG_FIELD_STRINGS, MEMBER(pg_config, intake.repos),
	  .count = offsetof(pg_config, intake.nrepos), .required = true, .max = 256,
	  .why = pg_push_why_repo, .wants = "a kernel.org repository path",
	  .list_wants = "a list of kernel.org repository paths" },
	{ .key = "tags", .kind = PG_FIELD_STRINGS, MEMBER(pg_config, intake.tags),
	  .count = offsetof(pg_config, intake.ntags), .max = 256, .why = why_tag_glob,
	  .wants = "a glob", .list_wants = "a list of globs" },
	{ .key = "url-base", .kind = PG_FIELD_CUSTOM, .read = read_url_base },
	{ .key = "fetch-seconds", .kind = PG_FIELD_UINT, MEMBER(pg_config, intake.fetch_seconds),
	  .min = 1, .max = 86400 },
};

static const pg_yaml_field intake_fields[] = {
	{ .key = "transparency", PG_YAML_SECTION(tlog_intake_fields, check_intake) },
};

static const pg_yaml_field root_fields[] = {
	{ .key = "listen", PG_YAML_SECTION(listen_fields, NULL) },
	{ .key = "policy", .kind = PG_FIELD_PATH, MEMBER(pg_config, policy), .wants = "a path" },
	{ .key = "state", .kind = PG_FIELD_PATH, MEMBER(pg_config, state), .wants = "a path" },
	{ .key = "hooks", PG_YAML_SECTION(hooks_fields, NULL) },
	{ .key = "repositories", PG_YAML_SECTION(repositories_fields, NULL) },
	{ .key = "pipeline", PG_YAML_SECTION(pipeline_fields, NULL) },
	{ .key = "accounts", .kind = PG_FIELD_MAPS, MEMBER(pg_config, accounts),
	  .count = offsetof(pg_config, naccounts), .size = sizeof(pg_account),
	  .max = PG_CONFIG_MAX_ACCOUNTS, .sub = PG_YAML_SUB(account_fields, check_account),
	  .list_wants = "a list of accounts" },
	{ .key = "session", PG_YAML_SECTION(session_fields, NULL) },
	{ .key = "notice", PG_YAML_SECTION(notice_fields, check_notice) },
	{ .key = "attestation", PG_YAML_SECTION(attestation_fields, NULL) },
	{ .key = "limits", PG_YAML_SECTION(limits_fields, NULL) },
	{ .key = "kcidb", PG_YAML_SECTION(kcidb_fields, NULL) },
	{ .key = "intake", PG_YAML_SECTION(intake_fields, NULL) },
};

static const pg_yaml_doc config_doc = {
	.what = "the configuration",
	.wants = "a mapping of settings",
	.root = PG_YAML_SUB(root_fields, NULL),
	.may_be_empty = true,
};

int pg_config_parse(pg_config **out, const char *text, size_t len, const char *name)
{
	pg_config *c = NULL;
	char *dir = NULL, *slash;
	int err;

	*out = NULL;
	if (len > PG_CONFIG_MAX_SIZE)
		return pg_error_set(PG_ETOOBIG, "%s: larger than %zu bytes", name, PG_CONFIG_MAX_SIZE);
	if ((err = pg_config_new_default(&c)) < 0)
		return err;
	free(c->source);
	if (!(c->source = pg_strdup(name)) || !(dir = pg_strdup(name))) {
		err = PG_ENOMEM;
		goto done;
	}
	if ((slash = strrchr(dir, '/')))
		*(slash == dir ? slash + 1 : slash) = '\0';
	if ((err = pg_yaml_load(c, &config_doc, text, len, name, slash ? dir : NULL, c)) < 0)
		goto done;
	*out = c;
	c = NULL;
done:
	pg_config_free(c);
	free(dir);
	return err;
}

int pg_config_load(pg_config **out, const char *path)
{
	pg_buf text = PG_BUF_INIT;
	int err;

	*out = NULL;
	pg_buf_init(&text, PG_CONFIG_MAX_SIZE);
	if ((err = pg_buf_read_file(&text, path)) < 0)
		err = pg_error_wrap(err, "configuration");
	else
		err = pg_config_parse(out, text.ptr, text.len, path);
	pg_buf_release_secret(&text);
	return err;
}

int pg_config_repo_location(pg_buf *out, const pg_config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nrepos; i++)
		if (!strcmp(c->repos[i].name, name))
			return pg_buf_puts(out, c->repos[i].location);
	if (!c->repo_base)
		return pg_error_set(PG_ENOTFOUND, "repository '%s' is not in the configuration", name);
	/* a name with ".." or a scheme could point the base anywhere: refuse */
	if (strstr(name, "..") || strstr(name, "://") || name[0] == '/' || strchr(name, '\\'))
		return pg_error_set(PG_EINVALID, "repository name '%s' is not a plain path", name);
	return pg_buf_printf(out, "%s%s%s", c->repo_base,
			     c->repo_base[strlen(c->repo_base) - 1] == '/' ? "" : "/", name);
}

int pg_config_intake_location(pg_buf *out, const pg_config *c, const char *name)
{
	const char *base = c->intake.url_base ? c->intake.url_base : PG_INTAKE_URL_BASE;
	size_t i;

	for (i = 0; i < c->nrepos; i++)
		if (!strcmp(c->repos[i].name, name))
			return pg_buf_puts(out, c->repos[i].location);
	if (pg_push_why_repo(name))
		return pg_error_set(PG_EINVALID, "repository name '%s' is not a plain path", name);
	return pg_buf_printf(out, "%s%s.git", base, name);
}
