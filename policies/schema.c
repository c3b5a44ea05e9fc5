/* schema.c - the policy as field tables over the YAML walker, with the rules only a policy has. */
#include "policies/schema.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/hex.h"
#include "common/map.h"
#include "common/sanitize.h"

#include <sys/stat.h>

/* What the callbacks share while one policy is read. */
typedef struct policy_reading {
	pg_policy *p;
	pg_map fingerprints;       /* fingerprint -> the node that gave it first */
} policy_reading;

/* --- what strings must look like (NULL: fine) ---------------------------- */

static const char *why_email(const char *s)
{
	const char *at = strchr(s, '@');
	const char *bad = " \t<>,;\"()[]\\";

	if (!at || at == s || !at[1] || strchr(at + 1, '@'))
		return "one '@' with a name before it and a domain after it";
	if (strpbrk(s, bad))
		return "no spaces, brackets, quotes or separators";
	if (strlen(s) > 254)
		return "at most 254 characters";
	return NULL;
}

/* Bracket expressions must close; a trailing backslash quotes nothing. */
static const char *why_glob(const char *s)
{
	size_t i = 0, len = strlen(s);

	if (!len)
		return "a non-empty pattern";
	while (i < len) {
		if (s[i] == '\\') {
			if (i + 1 == len)
				return "no backslash at the end";
			i += 2;
		} else if (s[i] == '[') {
			i++;
			if (i < len && (s[i] == '!' || s[i] == '^'))
				i++;
			if (i < len && s[i] == ']')
				i++;
			while (i < len && s[i] != ']') {
				if (s[i] == '[' && i + 1 < len &&
				    (s[i + 1] == ':' || s[i + 1] == '.' || s[i + 1] == '=')) {
					char close[3] = { s[i + 1], ']', '\0' };
					const char *end = strstr(s + i + 2, close);

					if (!end)
						return "every '[:', '[.' and '[=' closed";
					i = (size_t)(end - s) + 2;
				} else {
					i++;
				}
			}
			if (i >= len)
				return "every '[' closed by a ']'";
			i++;
		} else {
			i++;
		}
	}
	return NULL;
}

/* A name in a commit's author line: git's identity has no brackets in it. */
static const char *why_ident_name(const char *s)
{
	if (strpbrk(s, "<>"))
		return "no '<' or '>'";
	if (strlen(s) > 200)
		return "at most 200 characters";
	return NULL;
}

static const char *why_location(const char *s)
{
	if (s[0] == '-')
		return "no '-' at the start";
	if (strpbrk(s, " \t"))
		return "no spaces";
	return NULL;
}

/* The rules of git check-ref-format that matter for a branch name. */
static const char *why_branch(const char *s)
{
	size_t len = strlen(s);

	if (s[0] == '-' || s[0] == '/' || s[len - 1] == '/' || s[len - 1] == '.' ||
	    strstr(s, "..") || strstr(s, "//") || strstr(s, "@{") || strstr(s, "/.") ||
	    s[0] == '.' || (len >= 5 && !strcmp(s + len - 5, ".lock")) ||
	    strpbrk(s, " ~^:?*[\\"))
		return "a valid git branch name";
	return NULL;
}

/* A kernel.org account as gitolite names the pusher: no blanks, no separators. */
static const char *why_account(const char *s)
{
	if (strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
	    strlen(s) || s[0] == '-' || s[0] == '.')
		return "an account name: letters, digits, '_', '.' and '-'";
	if (strlen(s) > 64)
		return "at most 64 characters";
	return NULL;
}

/* --- values a field kind cannot say ---------------------------------------- */

const char *pg_policy_why_fingerprint(const char *s)
{
	if (strlen(s) != 40 || !pg_hex_is(s, 40))
		return "a fingerprint of 40 hex digits without spaces";
	return NULL;
}

/*
 * The icecream daemon the build's compiles go through: "local", or the
 * absolute path of an iceccd's unix socket (sun_path holds 107 bytes and a
 * NUL).  A path is data to build.sh: printable ASCII only (no space, no
 * control character, C1 included, no byte of UTF-8, valid or not), and
 * nothing that would make it another place than it says: no '.' or '..'
 * component, no trailing '/' (a directory, "/" itself included).
 */
const char *pg_policy_why_icecc(const char *s)
{
	size_t n = strlen(s), len;
	const char *p, *c;

	if (!strcmp(s, "local"))
		return NULL;
	if (s[0] != '/')
		return "local, or the absolute path of an iceccd's unix socket";
	if (n > PG_POLICY_ICECC_MAX)
		return "a socket path of at most 107 bytes";
	for (p = s; *p; p++) {
		if ((unsigned char)*p >= 0x80)
			return "a socket path of ASCII characters only";
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return "a socket path without spaces or control characters";
	}
	if (s[n - 1] == '/')
		return "a socket's path, not a directory's (no trailing '/')";
	for (c = s + 1; *c; c += len + (c[len] == '/')) {
		len = strcspn(c, "/");
		if (len == 1 && c[0] == '.')
			return "a socket path without a '.' component";
		if (len == 2 && c[0] == '.' && c[1] == '.')
			return "a socket path without a '..' component";
	}
	return NULL;
}

/* 40 hex digits, stored upper case, and each key given once in the whole policy. */
static void read_fingerprint(pg_yaml_reader *r, void *base, const pg_yaml_node *v,
			     const char *path, const pg_yaml_field *f)
{
	static const pg_yaml_field text = { .wants = "a fingerprint" };
	policy_reading *pol = r->ctx;
	pg_signer *signer = base;
	const char *s = pg_yaml_string(r, v, path, &text);
	const pg_yaml_node *first;
	char *fpr;
	size_t i;
	int err;

	(void)f;
	if (!s)
		return;
	if (pg_policy_why_fingerprint(s)) {
		pg_yaml_wrong(r, v, path, pg_policy_why_fingerprint(s));
		return;
	}
	if (!(fpr = pg_strdup(s))) {
		pg_yaml_fail(r, PG_ENOMEM);
		return;
	}
	for (i = 0; i < 40; i++)
		if (fpr[i] >= 'a' && fpr[i] <= 'f')
			fpr[i] = (char)(fpr[i] - 'a' + 'A');
	if ((first = pg_map_get(&pol->fingerprints, fpr, 40))) {
		pg_yaml_problem_at(r, v, "'%s' repeats the fingerprint given at %u:%u: one entry "
				   "per key", path, first->mark.line, first->mark.column);
		free(fpr);
		return;
	}
	signer->fingerprint = fpr;
	if ((err = pg_map_set(&pol->fingerprints, fpr, 40, (void *)v)) < 0)
		pg_yaml_fail(r, err);
}

static void read_approval(pg_yaml_reader *r, void *base, const pg_yaml_node *v, const char *path,
			  const pg_yaml_field *f)
{
	pg_policy *p = base;

	(void)f;
	if (v->type == PG_YAML_SCALAR && !strcmp(v->value, "auto"))
		p->auto_approve = true;
	else if (v->type == PG_YAML_SCALAR && !strcmp(v->value, "manual"))
		p->auto_approve = false;
	else
		pg_yaml_wrong(r, v, path, "auto or manual");
}

/* signoff-from: a non-empty list of author and committer, each at most once. */
static void read_signoff_from(pg_yaml_reader *r, void *base, const pg_yaml_node *v,
			      const char *path, const pg_yaml_field *f)
{
	static const char wants[] = "a list of author and committer (to require no sign-off, "
				    "turn the signoff check off)";
	pg_policy *p = base;
	bool author = false, committer = false;
	size_t i;

	(void)f;
	if (v->type != PG_YAML_LIST || !v->n) {
		pg_yaml_wrong(r, v, path, wants);
		return;
	}
	for (i = 0; i < v->n; i++) {
		const pg_yaml_node *it = v->items[i];
		bool *which = NULL;

		if (it->type == PG_YAML_SCALAR && !strcmp(it->value, "author"))
			which = &author;
		else if (it->type == PG_YAML_SCALAR && !strcmp(it->value, "committer"))
			which = &committer;
		if (!which) {
			pg_yaml_problem_at(r, it, "'%s[%zu]' wants author or committer", path, i);
			continue;
		}
		if (*which)
			pg_yaml_problem_at(r, it, "'%s[%zu]' repeats '%s'", path, i, it->value);
		*which = true;
	}
	p->signoff_author = author;
	p->signoff_committer = committer;
}

/* checks: a check name (pg_check_from_name) to its severity. */
static void read_severity(pg_yaml_reader *r, void *base, const pg_yaml_node *key,
			  const pg_yaml_node *v, const char *map_path, const char *path)
{
	const char *names[PG_CHECK__COUNT];
	pg_policy *p = base;
	enum pg_check_id id;
	enum pg_severity sev;
	size_t i;

	if (pg_check_from_name(&id, key->value) < 0) {
		for (i = 0; i < PG_CHECK__COUNT; i++)
			names[i] = pg_check_name((enum pg_check_id)i);
		pg_yaml_unknown(r, key, "check", map_path, names, PG_CHECK__COUNT);
	} else if (v->type != PG_YAML_SCALAR || pg_severity_from_name(&sev, v->value) < 0) {
		pg_yaml_wrong(r, v, path, "error, warning or off");
	} else if (id == PG_CHECK_BOOT_EVIDENCE && sev != PG_SEV_ERROR) {
		/* the gate's own rule: a boot without evidence never passes */
		pg_yaml_wrong(r, v, path, "error: a boot passes only on evidence, whatever the policy");
	} else {
		p->severity[id] = sev;
	}
}

/* transparency.missing: what a pull with no push record in the log is. */
static void read_tlog_missing(pg_yaml_reader *r, void *base, const pg_yaml_node *v,
			      const char *path, const pg_yaml_field *f)
{
	pg_policy *p = base;

	(void)f;
	if (v->type == PG_YAML_SCALAR && !strcmp(v->value, "warning"))
		p->tlog_missing = PG_SEV_WARNING;
	else if (v->type == PG_YAML_SCALAR && !strcmp(v->value, "error"))
		p->tlog_missing = PG_SEV_ERROR;
	else
		pg_yaml_wrong(r, v, path, "warning or error (the log lags: warning by default)");
}

/* --- rules across the keys of one mapping ---------------------------------- */

/*
 * One source of keys.  A pgpkeys directory is looked at now, so that a
 * path that names nothing is the policy's problem, with its place, rather
 * than every verify's.
 */
static void check_keyring(pg_yaml_reader *r, void *base, const pg_yaml_node *map,
			  const char *path)
{
	const pg_yaml_node *dir = pg_yaml_map_get(map, "pgpkeys");
	const pg_policy *p = base;
	pg_buf quoted = PG_BUF_INIT;
	struct stat st;

	if (pg_yaml_map_get(map, "file") && dir && pg_yaml_map_get(map, "gnupg-home")) {
		pg_yaml_problem_at(r, map, "'%s' wants one of 'file', 'pgpkeys' or 'gnupg-home', "
				   "not all three", path);
		return;
	}
	pg_yaml_either(r, map, path, "file", "pgpkeys");
	pg_yaml_either(r, map, path, "file", "gnupg-home");
	pg_yaml_either(r, map, path, "pgpkeys", "gnupg-home");
	if (!dir || !p->pgpkeys)
		return;
	/* the whole path, not cut as a value is: it says where to look */
	if (pg_sanitize_terminal(&quoted, p->pgpkeys, strlen(p->pgpkeys),
				 PG_SANITIZE_ONELINE) < 0) {
		pg_yaml_fail(r, PG_ENOMEM);
	} else if (stat(p->pgpkeys, &st) < 0) {
		pg_yaml_problem_at(r, dir, "'%s.pgpkeys' names '%s', %s", path, quoted.ptr,
				   errno == ENOENT ? "which does not exist" : strerror(errno));
	} else if (!S_ISDIR(st.st_mode)) {
		pg_yaml_problem_at(r, dir, "'%s.pgpkeys' names '%s', which is %s, not a directory",
				   path, quoted.ptr, S_ISREG(st.st_mode) ? "a file" :
				   pg_file_kind(st.st_mode));
	}
	pg_buf_release(&quoted);
}

/* The log is looked at now, as a pgpkeys directory is: a wrong path is the policy's problem. */
static void check_transparency(pg_yaml_reader *r, void *base, const pg_yaml_node *map,
			       const char *path)
{
	const pg_yaml_node *log = pg_yaml_map_get(map, "log");
	const pg_policy *p = base;
	pg_buf quoted = PG_BUF_INIT;
	struct stat st;

	if (!log) {
		pg_yaml_problem_at(r, map, "'%s' names no log: the path of a clone of the "
				   "transparency log", path);
		return;
	}
	if (!p->tlog)
		return;
	if (pg_sanitize_terminal(&quoted, p->tlog, strlen(p->tlog), PG_SANITIZE_ONELINE) < 0)
		pg_yaml_fail(r, PG_ENOMEM);
	else if (stat(p->tlog, &st) < 0)
		pg_yaml_problem_at(r, log, "'%s.log' names '%s', %s", path, quoted.ptr,
				   errno == ENOENT ? "which does not exist" : strerror(errno));
	else if (!S_ISDIR(st.st_mode))
		pg_yaml_problem_at(r, log, "'%s.log' names '%s', which is %s, not a directory",
				   path, quoted.ptr, S_ISREG(st.st_mode) ? "a file" :
				   pg_file_kind(st.st_mode));
	pg_buf_release(&quoted);
}

static void check_committers(pg_yaml_reader *r, void *base, const pg_yaml_node *map,
			     const char *path)
{
	const pg_yaml_node *allowed = pg_yaml_map_get(map, "allowed");
	pg_policy *p = base;
	size_t i;

	if (!allowed || allowed->type != PG_YAML_LIST)
		return;
	for (i = 0; i < allowed->n && !pg_yaml_stopped(r); i++) {
		const pg_yaml_node *a = allowed->items[i];

		if (a->type == PG_YAML_SCALAR && pg_policy_is_protected(p, a->value))
			pg_yaml_problem_at(r, a, "'%s.allowed[%zu]' is also protected: an address "
					   "is either protected or allowed", path, i);
	}
}

/* --- the tables (policies/README.md) ----------------------------------------- */

#define MEMBER(s, m) .offset = offsetof(s, m)
#define LIST_OF(s, m, n) .offset = offsetof(s, m), .count = offsetof(s, n)
#define EMAILS .kind = PG_FIELD_STRINGS, .why = why_email, .wants = "an e-mail address", \
	.list_wants = "a list of e-mail addresses"
#define GLOBS .kind = PG_FIELD_STRINGS, .why = why_glob, .wants = "a glob", \
	.list_wants = "a list of globs"

static const pg_yaml_field upstream_fields[] = {
	{ .key = "url", .kind = PG_FIELD_STRING, MEMBER(pg_policy, upstream_url),
	  .wants = "a URL or path", .why = why_location },
	{ .key = "branch", .kind = PG_FIELD_STRING, MEMBER(pg_policy, upstream_branch),
	  .wants = "a branch name", .why = why_branch },
};

static const pg_yaml_field keyring_fields[] = {
	{ .key = "file", .kind = PG_FIELD_PATH, MEMBER(pg_policy, keyring), .wants = "a path" },
	{ .key = "pgpkeys", .kind = PG_FIELD_PATH, MEMBER(pg_policy, pgpkeys),
	  .wants = "a path" },
	{ .key = "gnupg-home", .kind = PG_FIELD_PATH, MEMBER(pg_policy, gnupg_home),
	  .wants = "a path" },
};

static const pg_yaml_field signer_fields[] = {
	{ .key = "fingerprint", .kind = PG_FIELD_CUSTOM, .read = read_fingerprint,
	  .required = true, .wants = "the key's 40 hex digits" },
	{ .key = "identities", EMAILS, LIST_OF(pg_signer, identities, nidentities) },
	{ .key = "repositories", GLOBS, LIST_OF(pg_signer, repositories, nrepositories) },
	{ .key = "tags", GLOBS, LIST_OF(pg_signer, tags, ntags) },
	{ .key = "account", .kind = PG_FIELD_STRING, MEMBER(pg_signer, account),
	  .wants = "a kernel.org account", .why = why_account },
};

static const pg_yaml_field transparency_fields[] = {
	{ .key = "log", .kind = PG_FIELD_PATH, MEMBER(pg_policy, tlog),
	  .wants = "the path of a clone of the transparency log" },
	{ .key = "missing", .kind = PG_FIELD_CUSTOM, .read = read_tlog_missing },
};

static const pg_yaml_field committers_fields[] = {
	{ .key = "protected", EMAILS, LIST_OF(pg_policy, protected_committers, nprotected) },
	{ .key = "allowed", EMAILS, LIST_OF(pg_policy, allowed_committers, nallowed) },
	{ .key = "protect-upstream-maintainer", .kind = PG_FIELD_BOOL,
	  MEMBER(pg_policy, protect_upstream_maintainer) },
};

static const pg_yaml_field limits_fields[] = {
	{ .key = "max-commits", .kind = PG_FIELD_SIZE, MEMBER(pg_policy, max_commits),
	  .max = 10000000 },
	{ .key = "max-pull-commits", .kind = PG_FIELD_SIZE, MEMBER(pg_policy, max_pull_commits),
	  .max = 10000000 },
	{ .key = "max-findings-per-check", .kind = PG_FIELD_SIZE,
	  MEMBER(pg_policy, max_findings_per_check), .max = 1000000 },
	{ .key = "lookback-days", .kind = PG_FIELD_UINT, MEMBER(pg_policy, lookback_days),
	  .max = 36500 },
	{ .key = "max-upstream-commits", .kind = PG_FIELD_SIZE,
	  MEMBER(pg_policy, max_upstream_commits), .max = 100000000 },
	{ .key = "fetch-timeout-seconds", .kind = PG_FIELD_UINT,
	  MEMBER(pg_policy, fetch_timeout_seconds), .min = 1, .max = 86400 },
	{ .key = "verify-timeout-seconds", .kind = PG_FIELD_UINT,
	  MEMBER(pg_policy, verify_timeout_seconds), .min = 1, .max = 86400 },
};

static const pg_yaml_field hygiene_fields[] = {
	{ .key = "recent-rebase-hours", .kind = PG_FIELD_UINT,
	  MEMBER(pg_policy, recent_rebase_hours), .max = 8760 },
	{ .key = "recent-rebase-min-age-days", .kind = PG_FIELD_UINT,
	  MEMBER(pg_policy, recent_rebase_min_age_days), .max = 36500 },
	{ .key = "signoff-from", .kind = PG_FIELD_CUSTOM, .read = read_signoff_from },
	{ .key = "future-slack-minutes", .kind = PG_FIELD_UINT,
	  MEMBER(pg_policy, future_slack_minutes), .max = 525600 },
};

/*
 * A distcc host as DISTCC_HOSTS spells a TCP one: HOST[:PORT][/LIMIT], HOST
 * a name or an IPv4 address.  Nothing else: no ssh (@), no options, no
 * spaces, so that the list is data and the build runs only distcc.
 */
static const char *why_distcc_host(const char *s)
{
	size_t host = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-");
	const char *p = s + host;
	size_t n;

	if (host == 0 || host > 253 || s[0] == '-' || s[0] == '.')
		return "HOST[:PORT][/LIMIT], HOST a name or an IPv4 address";
	if (*p == ':') {
		n = strspn(++p, "0123456789");
		if (n == 0 || n > 5 || *p == '0' || strtoul(p, NULL, 10) > 65535)
			return "a port of 1 to 65535 after ':'";
		p += n;
	}
	if (*p == '/') {
		n = strspn(++p, "0123456789");
		if (n == 0 || n > 3 || *p == '0')
			return "a job limit of 1 to 999 after '/'";
		p += n;
	}
	return *p ? "HOST[:PORT][/LIMIT] and nothing else (no ssh '@', no ',' options)" : NULL;
}

/* boot-on: where the boot stage boots (stage_boot.c). */
static void read_boot_on(pg_yaml_reader *r, void *base, const pg_yaml_node *v, const char *path,
			 const pg_yaml_field *f)
{
	pg_policy *p = base;

	(void)f;
	if (v->type == PG_YAML_SCALAR && !strcmp(v->value, "qemu"))
		p->boot_on_lava = false;
	else if (v->type == PG_YAML_SCALAR && !strcmp(v->value, "lava"))
		p->boot_on_lava = true;
	else
		pg_yaml_wrong(r, v, path, "qemu or lava");
}

/* What the lab downloads from and the server is reached at: an http(s) URL. */
static const char *why_http_url(const char *s)
{
	if (strncmp(s, "http://", 7) && strncmp(s, "https://", 8))
		return "an http:// or https:// URL";
	if (strpbrk(s, " \t\"'\\"))
		return "a URL without spaces or quotes";
	return NULL;
}

static const char *why_device_type(const char *s)
{
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") ==
	       strlen(s) ? NULL : "letters, digits, '_', '.' and '-'";
}

static const pg_yaml_field lava_fields[] = {
	{ .key = "url", .kind = PG_FIELD_STRING, MEMBER(pg_policy, lava_url),
	  .wants = "the LAVA server's URL", .why = why_http_url },
	{ .key = "token-file", .kind = PG_FIELD_PATH, MEMBER(pg_policy, lava_token_file),
	  .wants = "a path" },
	{ .key = "artifacts-url", .kind = PG_FIELD_STRING, MEMBER(pg_policy, lava_artifacts_url),
	  .wants = "the URL of $PULLGATE_HOME", .why = why_http_url },
	{ .key = "device-type", .kind = PG_FIELD_STRING, MEMBER(pg_policy, lava_device_type),
	  .wants = "a LAVA device type", .why = why_device_type, .max = 200 },
	{ .key = "device", .kind = PG_FIELD_PATH, MEMBER(pg_policy, lava_device),
	  .wants = "a LAVA device configuration" },
};

/*
 * A server wants a token; a lab to boot on wants a place to download from
 * (this machine's dispatcher, with a device, reads the run's directory);
 * a job goes to a server or to this machine's dispatcher, not both.
 */
static void check_lava(pg_yaml_reader *r, void *base, const pg_yaml_node *map, const char *path)
{
	const pg_policy *p = base;

	if (p->lava_url && !p->lava_token_file)
		pg_yaml_problem_at(r, map, "'%s' names a url and no token-file: the server wants "
				   "a token", path);
	if (p->lava_url && p->lava_device)
		pg_yaml_problem_at(r, map, "'%s' names a url and a device: a job runs on a LAVA "
				   "server or on this machine's dispatcher, not both", path);
	if (!p->lava_artifacts_url && !p->lava_device)
		pg_yaml_problem_at(r, map, "'%s' names no artifacts-url: the lab needs the URL of "
				   "$PULLGATE_HOME to download the kernel from", path);
}

static const pg_yaml_field pipeline_fields[] = {
	{ .key = "build-timeout-minutes", .kind = PG_FIELD_UINT,
	  MEMBER(pg_policy, build_timeout_minutes), .max = 1440 },
	{ .key = "boot-timeout-seconds", .kind = PG_FIELD_UINT,
	  MEMBER(pg_policy, boot_timeout_seconds), .max = 86400 },
	{ .key = "distcc-hosts", .kind = PG_FIELD_STRINGS, .why = why_distcc_host,
	  .wants = "a distcc host", .list_wants = "a list of distcc hosts",
	  LIST_OF(pg_policy, distcc_hosts, ndistcc_hosts), .max = 300 },
	{ .key = "icecc", .kind = PG_FIELD_STRING, MEMBER(pg_policy, icecc),
	  .wants = "an icecream daemon", .why = pg_policy_why_icecc },
	{ .key = "boot-on", .kind = PG_FIELD_CUSTOM, .read = read_boot_on },
	{ .key = "lava", PG_YAML_SECTION(lava_fields, check_lava) },
	{ .key = "kunit-select-max", .kind = PG_FIELD_UINT,
	  MEMBER(pg_policy, kunit_select_max), .max = 1000 },
};

static const pg_yaml_field merge_identity_fields[] = {
	{ .key = "name", .kind = PG_FIELD_STRING, MEMBER(pg_policy, merge_name), .required = true,
	  .why = why_ident_name, .wants = "the maintainer's name" },
	{ .key = "email", .kind = PG_FIELD_STRING, MEMBER(pg_policy, merge_email),
	  .required = true, .why = why_email, .wants = "an e-mail address" },
};

static const pg_yaml_field attestation_fields[] = {
	{ .key = "key", .kind = PG_FIELD_STRING, MEMBER(pg_policy, attest_key), .required = true,
	  .why = pg_policy_why_fingerprint, .wants = "the signing key's 40 hex digits" },
	{ .key = "gnupg-home", .kind = PG_FIELD_PATH, MEMBER(pg_policy, attest_gnupg_home),
	  .wants = "a path" },
};

static const pg_yaml_field root_fields[] = {
	{ .key = "upstream", PG_YAML_SECTION(upstream_fields, NULL) },
	{ .key = "keyring", PG_YAML_SECTION(keyring_fields, check_keyring) },
	{ .key = "signers", .kind = PG_FIELD_MAPS, LIST_OF(pg_policy, signers, nsigners),
	  .size = sizeof(pg_signer), .sub = PG_YAML_SUB(signer_fields, NULL),
	  .list_wants = "a list of signers" },
	{ .key = "repositories", GLOBS, LIST_OF(pg_policy, repositories, nrepositories) },
	{ .key = "committers", PG_YAML_SECTION(committers_fields, check_committers) },
	{ .key = "limits", PG_YAML_SECTION(limits_fields, NULL) },
	{ .key = "hygiene", PG_YAML_SECTION(hygiene_fields, NULL) },
	{ .key = "checks", .kind = PG_FIELD_NAMES, .entry = read_severity,
	  .list_wants = "a mapping of check names to error, warning or off" },
	{ .key = "approval", .kind = PG_FIELD_CUSTOM, .read = read_approval },
	{ .key = "pipeline", PG_YAML_SECTION(pipeline_fields, NULL) },
	{ .key = "merge-identity", PG_YAML_SECTION(merge_identity_fields, NULL) },
	{ .key = "attestation", PG_YAML_SECTION(attestation_fields, NULL) },
	{ .key = "transparency", PG_YAML_SECTION(transparency_fields, check_transparency) },
};

static const pg_yaml_doc policy_doc = {
	.what = "the policy",
	.wants = "a mapping of settings",
	.root = PG_YAML_SUB(root_fields, NULL),
};

int pg_policy_schema_read(pg_yaml_problems *pr, pg_policy *p, const char *text, size_t len,
			  const char *basedir)
{
	policy_reading pol = { p, PG_MAP_INIT };
	int err;

	err = pg_yaml_read(pr, p, &policy_doc, text, len, basedir, &pol);
	pg_map_release(&pol.fingerprints);
	return err;
}
