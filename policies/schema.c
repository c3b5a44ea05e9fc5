/* schema.c - the policy schema: a YAML tree into a pg_policy, every problem by place. */
#include "policies/schema.h"
#include "common/error.h"
#include "common/map.h"
#include "common/sanitize.h"

#include <limits.h>

/* Longest string any key accepts; paths and URLs are the long ones. */
#define STRING_MAX 4096
/* Longest value quoted back in a message. */
#define QUOTE_MAX 60

typedef struct walker {
	pg_policy *p;
	pg_signer *signer;         /* the signer being read */
	pg_policy_problems *pr;
	const char *basedir;       /* for relative paths; NULL leaves them relative */
	pg_map fingerprints;       /* fingerprint -> the node that gave it first */
	int err;                   /* the first fatal error (out of memory) */
} walker;

struct field;
typedef void (*field_fn)(walker *w, const pg_yaml_node *v, const char *path,
			 const struct field *f);

/* A key of a fixed mapping, with what the generic setters need. */
typedef struct field {
	const char *key;
	field_fn fn;
	size_t offset;           /* of the pg_policy member to fill */
	size_t count;            /* of the member counting a list */
	unsigned long long max;  /* the largest number accepted */
	const struct field *sub; /* the keys of a section */
	size_t nsub;
} field;

static void fail(walker *w, int err)
{
	if (w->err == 0)
		w->err = err;
}

static void problem(walker *w, const pg_yaml_node *at, const char *fmt, ...) PG_PRINTF(3, 4);
static void problem(walker *w, const pg_yaml_node *at, const char *fmt, ...)
{
	pg_buf msg = PG_BUF_INIT;
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = pg_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	if (err == 0)
		err = pg_policy_problems_add(w->pr, at->mark, msg.ptr);
	if (err < 0)
		fail(w, err);
	pg_buf_release(&msg);
}

/* Append s for a message: one printable line, cut at QUOTE_MAX characters. */
static int quote(pg_buf *out, const char *s)
{
	size_t len = strlen(s), cut = 0, chars = 0;
	uint32_t cp;
	int err;

	while (cut < len && chars < QUOTE_MAX) {
		size_t n = pg_utf8_decode((const unsigned char *)s + cut, len - cut, &cp);

		cut += n ? n : 1;
		chars++;
	}
	if ((err = pg_buf_putc(out, '\'')) < 0 ||
	    (err = pg_sanitize_terminal(out, s, cut, PG_SANITIZE_ONELINE)) < 0)
		return err;
	return pg_buf_puts(out, cut < len ? "...'" : "'");
}

/* "a mapping", "a list", "nothing" or the quoted scalar. */
static int describe(pg_buf *out, const pg_yaml_node *n)
{
	if (n->type == PG_YAML_MAP)
		return pg_buf_puts(out, "a mapping");
	if (n->type == PG_YAML_LIST)
		return pg_buf_puts(out, "a list");
	if (pg_yaml_is_null(n))
		return pg_buf_puts(out, "nothing");
	return quote(out, n->value);
}

static void wrong(walker *w, const pg_yaml_node *n, const char *path, const char *wants)
{
	pg_buf found = PG_BUF_INIT;
	int err;

	if ((err = describe(&found, n)) < 0)
		fail(w, err);
	else
		problem(w, n, "'%s' wants %s, not %s", path, wants, found.ptr);
	pg_buf_release(&found);
}

/* "path.key", or "key" at the top level; NULL after recording ENOMEM. */
static char *join(walker *w, const char *path, const char *key)
{
	pg_buf b = PG_BUF_INIT;
	int err = *path ? pg_buf_printf(&b, "%s.%s", path, key) : pg_buf_puts(&b, key);

	if (err < 0) {
		fail(w, err);
		pg_buf_release(&b);
		return NULL;
	}
	return pg_buf_detach(&b);
}

static char *index_path(walker *w, const char *path, size_t i)
{
	pg_buf b = PG_BUF_INIT;

	if (pg_buf_printf(&b, "%s[%zu]", path, i) < 0) {
		fail(w, PG_ENOMEM);
		pg_buf_release(&b);
		return NULL;
	}
	return pg_buf_detach(&b);
}

/* Levenshtein distance, for "did you mean"; long words are never close. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, row[QUOTE_MAX + 1];

	if (la > QUOTE_MAX || lb > QUOTE_MAX)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* Report a key that is not among names[0..n): suggest a near one, else list them. */
static void unknown(walker *w, const pg_yaml_node *k, const char *what, const char *path,
		    const char *const *names, size_t n)
{
	pg_buf key = PG_BUF_INIT, where = PG_BUF_INIT, hint = PG_BUF_INIT;
	size_t i, best = SIZE_MAX, d;
	const char *near = NULL;
	int err;

	for (i = 0; i < n; i++) {
		d = distance(k->value, names[i]);
		if (d < best && d <= 2 && d < strlen(names[i]) / 2) {
			best = d;
			near = names[i];
		}
	}
	if ((err = quote(&key, k->value)) < 0 ||
	    (err = *path ? pg_buf_printf(&where, "in '%s'", path) :
		     pg_buf_puts(&where, "at the top level")) < 0)
		goto done;
	if (near) {
		err = pg_buf_printf(&hint, "did you mean '%s'?", near);
	} else {
		err = pg_buf_puts(&hint, "expected one of: ");
		for (i = 0; i < n && err == 0; i++)
			err = pg_buf_printf(&hint, "%s%s", i ? ", " : "", names[i]);
	}
	if (err == 0)
		problem(w, k, "unknown %s %s %s (%s)", what, key.ptr, where.ptr, hint.ptr);
done:
	if (err < 0)
		fail(w, err);
	pg_buf_release(&key);
	pg_buf_release(&where);
	pg_buf_release(&hint);
}

/* A key must be a non-empty string; report it otherwise. */
static bool key_ok(walker *w, const pg_yaml_node *k, const char *path)
{
	pg_buf found = PG_BUF_INIT;
	int err;

	if (k->type == PG_YAML_SCALAR && !pg_yaml_is_null(k))
		return true;
	if ((err = describe(&found, k)) < 0)
		fail(w, err);
	else if (*path)
		problem(w, k, "keys in '%s' are names, not %s", path, found.ptr);
	else
		problem(w, k, "keys at the top level are names, not %s", found.ptr);
	pg_buf_release(&found);
	return false;
}

static void walk_fields(walker *w, const pg_yaml_node *map, const char *path,
			const field *fields, size_t nfields)
{
	const pg_yaml_node *seen[16] = { NULL };
	const char *names[16];
	size_t i, j;

	if (map->type != PG_YAML_MAP) {
		wrong(w, map, path, "a mapping");
		return;
	}
	for (j = 0; j < nfields; j++)
		names[j] = fields[j].key;
	for (i = 0; i < map->n && w->err == 0; i++) {
		const pg_yaml_node *k = map->keys[i];
		char *sub;

		if (!key_ok(w, k, path))
			continue;
		for (j = 0; j < nfields && strcmp(fields[j].key, k->value); j++)
			;
		if (j == nfields) {
			unknown(w, k, "key", path, names, nfields);
		} else if (seen[j]) {
			problem(w, k, "duplicate key '%s'%s%s%s (first at %u:%u)", fields[j].key,
				*path ? " in '" : " at the top level", path, *path ? "'" : "",
				seen[j]->mark.line, seen[j]->mark.column);
		} else {
			seen[j] = k;
			if ((sub = join(w, path, fields[j].key))) {
				fields[j].fn(w, map->items[i], sub, &fields[j]);
				free(sub);
			}
		}
	}
}

/* --- scalars ------------------------------------------------------------ */

static bool has_control(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	for (; *u; u++)
		if (*u < 0x20 || *u == 0x7F || (u[0] == 0xC2 && u[1] >= 0x80 && u[1] <= 0x9F))
			return true;
	return false;
}

/* The string value of v, or NULL after reporting what was wanted. */
static const char *want_string(walker *w, const pg_yaml_node *v, const char *path,
			       const char *wants)
{
	if (v->type != PG_YAML_SCALAR || pg_yaml_is_null(v) || !v->len) {
		wrong(w, v, path, wants);
		return NULL;
	}
	if (v->len > STRING_MAX) {
		problem(w, v, "'%s' is %zu bytes long: expected at most %d", path, v->len,
			STRING_MAX);
		return NULL;
	}
	if (has_control(v->value)) {
		wrong(w, v, path, "text without control characters");
		return NULL;
	}
	return v->value;
}

static bool want_uint(walker *w, const pg_yaml_node *v, const char *path,
		      unsigned long long max, unsigned long long *out)
{
	const char *s = v->value;
	unsigned long long n = 0;
	size_t i;

	if (v->type != PG_YAML_SCALAR || !v->plain || !v->len) {
		wrong(w, v, path, "a non-negative integer");
		return false;
	}
	for (i = 0; i < v->len; i++) {
		if (s[i] < '0' || s[i] > '9') {
			wrong(w, v, path, "a non-negative integer");
			return false;
		}
		if (n > (ULLONG_MAX - 9) / 10)
			n = ULLONG_MAX;
		else
			n = n * 10 + (unsigned)(s[i] - '0');
	}
	if (s[0] == '0' && v->len > 1) {
		wrong(w, v, path, "a decimal integer without leading zeros");
		return false;
	}
	if (n > max) {
		problem(w, v, "'%s' wants at most %llu, not %s", path, max, s);
		return false;
	}
	*out = n;
	return true;
}

static bool want_bool(walker *w, const pg_yaml_node *v, const char *path, bool *out)
{
	static const char *const yes[] = { "true", "True", "TRUE" };
	static const char *const no[] = { "false", "False", "FALSE" };
	size_t i;

	if (v->type == PG_YAML_SCALAR && v->plain) {
		for (i = 0; i < PG_ARRAY_SIZE(yes); i++) {
			if (!strcmp(v->value, yes[i]) || !strcmp(v->value, no[i])) {
				*out = !strcmp(v->value, yes[i]);
				return true;
			}
		}
	}
	wrong(w, v, path, "true or false");
	return false;
}

static void set_string(walker *w, char **slot, const char *value)
{
	char *copy = pg_strdup(value);

	if (!copy) {
		fail(w, PG_ENOMEM);
		return;
	}
	free(*slot);
	*slot = copy;
}

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

/* Report s unless why(s) is NULL. */
static bool valid(walker *w, const pg_yaml_node *v, const char *path, const char *wants,
		  const char *(*why)(const char *), const char *s)
{
	pg_buf found = PG_BUF_INIT;
	const char *reason = why(s);
	int err;

	if (!reason)
		return true;
	if ((err = quote(&found, s)) < 0)
		fail(w, err);
	else
		problem(w, v, "'%s' wants %s, not %s: expected %s", path, wants, found.ptr, reason);
	pg_buf_release(&found);
	return false;
}

/* A list of strings that each pass why(); appended to *list. */
static void walk_strings(walker *w, const pg_yaml_node *v, const char *path, const char *wants,
			 const char *list_wants, const char *(*why)(const char *), char ***list,
			 size_t *n)
{
	size_t i;

	if (v->type != PG_YAML_LIST) {
		wrong(w, v, path, list_wants);
		return;
	}
	for (i = 0; i < v->n && w->err == 0; i++) {
		char *sub = index_path(w, path, i);
		const char *s;
		int err;

		if (!sub)
			return;
		if ((s = want_string(w, v->items[i], sub, wants)) &&
		    valid(w, v->items[i], sub, wants, why, s) &&
		    (err = pg_policy_list_add(list, n, s)) < 0)
			fail(w, err);
		free(sub);
	}
}

/* --- the generic setters ------------------------------------------------- */

static void set_size(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	unsigned long long n;

	if (want_uint(w, v, path, f->max, &n))
		*(size_t *)((char *)w->p + f->offset) = (size_t)n;
}

static void set_unsigned(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	unsigned long long n;

	if (want_uint(w, v, path, f->max, &n))
		*(unsigned *)((char *)w->p + f->offset) = (unsigned)n;
}

static void set_bool(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	bool b;

	if (want_bool(w, v, path, &b))
		*(bool *)((char *)w->p + f->offset) = b;
}

/* A pg_policy string list of e-mail addresses or globs. */
static void set_emails(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	char ***list = (char ***)((char *)w->p + f->offset);
	size_t *n = (size_t *)((char *)w->p + f->count);

	walk_strings(w, v, path, "an e-mail address", "a list of e-mail addresses", why_email,
		     list, n);
}

static void set_globs(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	char ***list = (char ***)((char *)w->p + f->offset);
	size_t *n = (size_t *)((char *)w->p + f->count);

	walk_strings(w, v, path, "a glob", "a list of globs", why_glob, list, n);
}

#define KEY(name, walk) { .key = name, .fn = walk }
#define NUMBER(name, setter, member, most) \
	{ .key = name, .fn = setter, .offset = offsetof(pg_policy, member), .max = most }
#define MEMBER(name, setter, member) \
	{ .key = name, .fn = setter, .offset = offsetof(pg_policy, member) }
#define LIST(name, setter, member, counter) { .key = name, .fn = setter, \
	.offset = offsetof(pg_policy, member), .count = offsetof(pg_policy, counter) }
#define SECTION(name, table) \
	{ .key = name, .fn = walk_section, .sub = table, .nsub = PG_ARRAY_SIZE(table) }

/* --- upstream and keyring ------------------------------------------------ */

static void set_url(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	const char *s = want_string(w, v, path, "a URL or path");

	(void)f;
	if (s && valid(w, v, path, "a URL or path", why_location, s))
		set_string(w, &w->p->upstream_url, s);
}

static void set_branch(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	const char *s = want_string(w, v, path, "a branch name");

	(void)f;
	if (s && valid(w, v, path, "a branch name", why_branch, s))
		set_string(w, &w->p->upstream_branch, s);
}

static void walk_upstream(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	static const field fields[] = {
		KEY("url", set_url),
		KEY("branch", set_branch),
	};

	(void)f;
	walk_fields(w, v, path, fields, PG_ARRAY_SIZE(fields));
}

static void set_path(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	char **slot = (char **)((char *)w->p + f->offset);
	const char *s = want_string(w, v, path, "a path");
	pg_buf full = PG_BUF_INIT;
	int err;

	if (!s)
		return;
	if (s[0] == '/' || !w->basedir)
		err = pg_buf_puts(&full, s);
	else
		err = pg_buf_printf(&full, "%s/%s", w->basedir, s);
	if (err < 0)
		fail(w, err);
	else
		set_string(w, slot, full.ptr);
	pg_buf_release(&full);
}

static void walk_keyring(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	static const field fields[] = {
		MEMBER("file", set_path, keyring),
		MEMBER("gnupg-home", set_path, gnupg_home),
	};

	(void)f;
	walk_fields(w, v, path, fields, PG_ARRAY_SIZE(fields));
	if (pg_yaml_map_get(v, "file") && pg_yaml_map_get(v, "gnupg-home"))
		problem(w, v, "'%s' wants either 'file' or 'gnupg-home', not both", path);
}

/* --- signers ------------------------------------------------------------- */

static void set_fingerprint(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	const char *s = want_string(w, v, path, "a fingerprint");
	const pg_yaml_node *first;
	char *fpr;
	size_t i;
	int err;

	(void)f;
	if (!s)
		return;
	for (i = 0; i < 40 && ((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
			       (s[i] >= 'A' && s[i] <= 'F')); i++)
		;
	if (i != 40 || s[40]) {
		wrong(w, v, path, "a fingerprint of 40 hex digits without spaces");
		return;
	}
	if (!(fpr = pg_strdup(s))) {
		fail(w, PG_ENOMEM);
		return;
	}
	for (i = 0; i < 40; i++)
		if (fpr[i] >= 'a' && fpr[i] <= 'f')
			fpr[i] = (char)(fpr[i] - 'a' + 'A');
	if ((first = pg_map_get(&w->fingerprints, fpr, 40))) {
		problem(w, v, "'%s' repeats the fingerprint given at %u:%u: one entry per key",
			path, first->mark.line, first->mark.column);
		free(fpr);
		return;
	}
	w->signer->fingerprint = fpr;
	if ((err = pg_map_set(&w->fingerprints, fpr, 40, (void *)v)) < 0)
		fail(w, err);
}

static void set_identities(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	(void)f;
	walk_strings(w, v, path, "an e-mail address", "a list of e-mail addresses", why_email,
		     &w->signer->identities, &w->signer->nidentities);
}

static void set_signer_repos(walker *w, const pg_yaml_node *v, const char *path,
			     const field *f)
{
	(void)f;
	walk_strings(w, v, path, "a glob", "a list of globs", why_glob,
		     &w->signer->repositories, &w->signer->nrepositories);
}

static void set_signer_tags(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	(void)f;
	walk_strings(w, v, path, "a glob", "a list of globs", why_glob, &w->signer->tags,
		     &w->signer->ntags);
}

static void walk_signers(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	static const field fields[] = {
		KEY("fingerprint", set_fingerprint),
		KEY("identities", set_identities),
		KEY("repositories", set_signer_repos),
		KEY("tags", set_signer_tags),
	};
	size_t i;

	(void)f;
	if (v->type != PG_YAML_LIST) {
		wrong(w, v, path, "a list of signers");
		return;
	}
	for (i = 0; i < v->n && w->err == 0; i++) {
		const pg_yaml_node *item = v->items[i];
		pg_signer *grown = realloc(w->p->signers, (w->p->nsigners + 1) * sizeof(*grown));
		char *sub;

		if (!grown) {
			fail(w, pg_error_oom());
			return;
		}
		w->p->signers = grown;
		w->signer = &grown[w->p->nsigners++];
		memset(w->signer, 0, sizeof(*w->signer));
		if (!(sub = index_path(w, path, i)))
			return;
		walk_fields(w, item, sub, fields, PG_ARRAY_SIZE(fields));
		if (item->type == PG_YAML_MAP && !pg_yaml_map_get(item, "fingerprint"))
			problem(w, item, "'%s' needs a 'fingerprint': the key's 40 hex digits", sub);
		free(sub);
	}
	w->signer = NULL;
}

/* --- committers, checks, approval ---------------------------------------- */

static void walk_committers(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	static const field fields[] = {
		LIST("protected", set_emails, protected_committers, nprotected),
		LIST("allowed", set_emails, allowed_committers, nallowed),
		MEMBER("protect-upstream-maintainer", set_bool, protect_upstream_maintainer),
	};
	const pg_yaml_node *allowed;
	size_t i;

	(void)f;
	walk_fields(w, v, path, fields, PG_ARRAY_SIZE(fields));
	if (!(allowed = pg_yaml_map_get(v, "allowed")) || allowed->type != PG_YAML_LIST)
		return;
	for (i = 0; i < allowed->n && w->err == 0; i++) {
		const pg_yaml_node *a = allowed->items[i];

		if (a->type == PG_YAML_SCALAR && pg_policy_is_protected(w->p, a->value))
			problem(w, a, "'%s.allowed[%zu]' is also protected: an address is either "
				"protected or allowed", path, i);
	}
}

static void walk_checks(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	const pg_yaml_node *seen[PG_CHECK__COUNT] = { NULL };
	const char *names[PG_CHECK__COUNT];
	enum pg_check_id id;
	enum pg_severity sev;
	size_t i;

	(void)f;
	if (v->type != PG_YAML_MAP) {
		wrong(w, v, path, "a mapping of check names to error, warning or off");
		return;
	}
	for (i = 0; i < PG_CHECK__COUNT; i++)
		names[i] = pg_check_name((enum pg_check_id)i);
	for (i = 0; i < v->n && w->err == 0; i++) {
		const pg_yaml_node *k = v->keys[i], *val = v->items[i];

		if (!key_ok(w, k, path))
			continue;
		if (pg_check_from_name(&id, k->value) < 0) {
			unknown(w, k, "check", path, names, PG_CHECK__COUNT);
			continue;
		}
		if (seen[id]) {
			problem(w, k, "duplicate key '%s' in '%s' (first at %u:%u)", names[id],
				path, seen[id]->mark.line, seen[id]->mark.column);
			continue;
		}
		seen[id] = k;
		if (val->type != PG_YAML_SCALAR || pg_severity_from_name(&sev, val->value) < 0) {
			pg_buf sub = PG_BUF_INIT;

			if (pg_buf_printf(&sub, "%s.%s", path, names[id]) < 0)
				fail(w, PG_ENOMEM);
			else
				wrong(w, val, sub.ptr, "error, warning or off");
			pg_buf_release(&sub);
			continue;
		}
		w->p->severity[id] = sev;
	}
}

static void set_approval(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	(void)f;
	if (v->type == PG_YAML_SCALAR && !strcmp(v->value, "auto"))
		w->p->auto_approve = true;
	else if (v->type == PG_YAML_SCALAR && !strcmp(v->value, "manual"))
		w->p->auto_approve = false;
	else
		wrong(w, v, path, "auto or manual");
}

static void walk_section(walker *w, const pg_yaml_node *v, const char *path, const field *f)
{
	walk_fields(w, v, path, f->sub, f->nsub);
}

static const field limits_fields[] = {
	NUMBER("max-commits", set_size, max_commits, 10000000),
	NUMBER("lookback-days", set_unsigned, lookback_days, 36500),
	NUMBER("max-upstream-commits", set_size, max_upstream_commits, 100000000),
};

static const field hygiene_fields[] = {
	NUMBER("recent-rebase-hours", set_unsigned, recent_rebase_hours, 8760),
	NUMBER("future-slack-minutes", set_unsigned, future_slack_minutes, 525600),
};

static const field pipeline_fields[] = {
	NUMBER("build-timeout-minutes", set_unsigned, build_timeout_minutes, 1440),
	NUMBER("boot-timeout-seconds", set_unsigned, boot_timeout_seconds, 86400),
};

static const field root_fields[] = {
	KEY("upstream", walk_upstream),
	KEY("keyring", walk_keyring),
	KEY("signers", walk_signers),
	LIST("repositories", set_globs, repositories, nrepositories),
	KEY("committers", walk_committers),
	SECTION("limits", limits_fields),
	SECTION("hygiene", hygiene_fields),
	KEY("checks", walk_checks),
	KEY("approval", set_approval),
	SECTION("pipeline", pipeline_fields),
};

static void walk_root(walker *w, const pg_yaml_node *root)
{
	pg_buf found = PG_BUF_INIT;
	int err;

	if (pg_yaml_is_null(root)) {
		problem(w, root, "the policy is empty: expected a mapping of settings");
	} else if (root->type != PG_YAML_MAP) {
		if ((err = describe(&found, root)) < 0)
			fail(w, err);
		else
			problem(w, root, "the policy wants a mapping of settings at the top "
				"level, not %s", found.ptr);
	} else {
		walk_fields(w, root, "", root_fields, PG_ARRAY_SIZE(root_fields));
	}
	pg_buf_release(&found);
}

int pg_policy_schema_walk(pg_policy *p, pg_policy_problems *pr, const pg_yaml_node *root,
			  const char *basedir)
{
	walker w;

	memset(&w, 0, sizeof(w));
	w.p = p;
	w.pr = pr;
	w.basedir = basedir;
	walk_root(&w, root);
	pg_map_release(&w.fingerprints);
	return w.err;
}
