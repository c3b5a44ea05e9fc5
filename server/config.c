/* config.c - the serve configuration read from the capped YAML tree, every mistake by place. */
#include "server/config.h"
#include "common/error.h"
#include "common/sanitize.h"
#include "common/yaml_tree.h"
#include "pipeline/gate.h"

#include <limits.h>

#define STRING_MAX 4096

typedef struct reader {
	pg_config *c;
	const char *name;     /* for messages */
	const char *basedir;  /* for relative paths; NULL keeps them as written */
	int err;
} reader;

int pg_config_new_default(pg_config **out)
{
	pg_config *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return pg_error_oom();
	c->port = 8080;
	c->max_body = (size_t)4 << 20;
	c->stages = PG_GATE_ALL;
	c->verify_workers = 2;
	c->session_hours = 12;
	if (!(c->source = pg_strdup("(built-in)")) || !(c->address = pg_strdup("127.0.0.1"))) {
		pg_config_free(c);
		return PG_ENOMEM;
	}
	*out = c;
	return 0;
}

static void free_secret(char *s)
{
	if (!s)
		return;
	/* volatile so that the zeroing is not optimised away before free() */
	for (volatile char *p = s; *p; p++)
		*p = '\0';
	free(s);
}

void pg_config_free(pg_config *c)
{
	size_t i;

	if (!c)
		return;
	free(c->source);
	free(c->address);
	free(c->policy);
	free(c->state);
	free_secret(c->push_secret);
	free_secret(c->mail_secret);
	free(c->repo_base);
	for (i = 0; i < c->nrepos; i++) {
		free(c->repos[i].name);
		free(c->repos[i].location);
	}
	free(c->repos);
	for (i = 0; i < c->naccounts; i++) {
		free(c->accounts[i].name);
		free_secret(c->accounts[i].hash);
	}
	free(c->accounts);
	free(c->tree);
	free(c->branch);
	free(c->merge_name);
	free(c->merge_email);
	free(c);
}

static int bad(reader *r, const pg_yaml_node *at, const char *fmt, ...) PG_PRINTF(3, 4);
static int bad(reader *r, const pg_yaml_node *at, const char *fmt, ...)
{
	pg_buf msg = PG_BUF_INIT;
	va_list ap;

	if (r->err)
		return r->err;
	va_start(ap, fmt);
	r->err = pg_buf_vprintf(&msg, fmt, ap);
	va_end(ap);
	if (r->err == 0)
		r->err = pg_error_set(PG_EINVALID, "%s:%u:%u: %s", r->name, at->mark.line,
				      at->mark.column, msg.ptr);
	pg_buf_release(&msg);
	return r->err;
}

static const char *scalar(reader *r, const pg_yaml_node *v, const char *key)
{
	if (v->type != PG_YAML_SCALAR || pg_yaml_is_null(v) || !v->len) {
		bad(r, v, "'%s' wants a non-empty string", key);
		return NULL;
	}
	if (v->len > STRING_MAX) {
		bad(r, v, "'%s' is longer than %d bytes", key, STRING_MAX);
		return NULL;
	}
	return v->value;
}

static int set_string(reader *r, char **dst, const pg_yaml_node *v, const char *key)
{
	const char *s = scalar(r, v, key);

	if (!s)
		return r->err;
	free(*dst);
	if (!(*dst = pg_strdup(s)))
		return r->err = PG_ENOMEM;
	return 0;
}

/* A path: relative ones are taken from the configuration file's directory. */
static int set_path(reader *r, char **dst, const pg_yaml_node *v, const char *key)
{
	const char *s = scalar(r, v, key);
	pg_buf b = PG_BUF_INIT;

	if (!s)
		return r->err;
	if (s[0] != '/' && r->basedir && (r->err = pg_buf_printf(&b, "%s/", r->basedir)) < 0)
		return r->err;
	if ((r->err = pg_buf_puts(&b, s)) < 0)
		return r->err;
	free(*dst);
	*dst = pg_buf_detach(&b);
	return 0;
}

static int set_number(reader *r, unsigned long long *dst, const pg_yaml_node *v, const char *key,
		      unsigned long long min, unsigned long long max)
{
	char *end;
	unsigned long long n;

	if (v->type != PG_YAML_SCALAR || !v->plain || !v->len || v->value[0] == '-') {
		return bad(r, v, "'%s' wants a number from %llu to %llu", key, min, max);
	}
	errno = 0;
	n = strtoull(v->value, &end, 10);
	if (errno || *end || n < min || n > max)
		return bad(r, v, "'%s' wants a number from %llu to %llu", key, min, max);
	*dst = n;
	return 0;
}

static int set_bool(reader *r, bool *dst, const pg_yaml_node *v, const char *key)
{
	if (v->type == PG_YAML_SCALAR && v->plain && !strcmp(v->value, "true"))
		*dst = true;
	else if (v->type == PG_YAML_SCALAR && v->plain && !strcmp(v->value, "false"))
		*dst = false;
	else
		return bad(r, v, "'%s' wants true or false", key);
	return 0;
}

static int want_map(reader *r, const pg_yaml_node *v, const char *key)
{
	return v->type == PG_YAML_MAP ? 0 : bad(r, v, "'%s' wants a mapping", key);
}

/* The key's name, refusing non-scalar and repeated keys. */
static const char *key_of(reader *r, const pg_yaml_node *map, size_t i)
{
	const pg_yaml_node *k = map->keys[i];
	size_t j;

	if (k->type != PG_YAML_SCALAR || !k->len) {
		bad(r, k, "expected a key name");
		return NULL;
	}
	for (j = 0; j < i; j++)
		if (map->keys[j]->type == PG_YAML_SCALAR && !strcmp(map->keys[j]->value, k->value)) {
			bad(r, k, "'%s' is given twice", k->value);
			return NULL;
		}
	return k->value;
}

static int unknown(reader *r, const pg_yaml_node *map, size_t i, const char *section)
{
	pg_buf q = PG_BUF_INIT;
	int err;

	pg_sanitize_terminal(&q, map->keys[i]->value, strnlen(map->keys[i]->value, 60),
			     PG_SANITIZE_ONELINE);
	err = bad(r, map->keys[i], "unknown key '%s'%s%s", q.ptr, section ? " in " : "",
		  section ? section : "");
	pg_buf_release(&q);
	return err;
}

static int read_listen(reader *r, const pg_yaml_node *v)
{
	unsigned long long n;
	size_t i;

	if (want_map(r, v, "listen") < 0)
		return r->err;
	for (i = 0; i < v->n && !r->err; i++) {
		const char *k = key_of(r, v, i);

		if (!k)
			break;
		if (!strcmp(k, "address"))
			set_string(r, &r->c->address, v->items[i], "address");
		else if (!strcmp(k, "port")) {
			if (set_number(r, &n, v->items[i], "port", 0, 65535) == 0)
				r->c->port = (unsigned)n;
		} else
			unknown(r, v, i, "listen");
	}
	return r->err;
}

static int read_secret(reader *r, char **dst, const pg_yaml_node *v, const char *hook)
{
	pg_buf path = PG_BUF_INIT, text = PG_BUF_INIT;
	char *p = NULL;
	size_t i;

	if (want_map(r, v, hook) < 0)
		return r->err;
	for (i = 0; i < v->n && !r->err; i++) {
		const char *k = key_of(r, v, i);

		if (!k)
			break;
		if (!strcmp(k, "secret")) {
			const char *s = scalar(r, v->items[i], "secret");

			if (s && strlen(s) < 16)
				bad(r, v->items[i], "a hook secret wants at least 16 characters");
			else if (s) {
				free_secret(*dst);
				if (!(*dst = pg_strdup(s)))
					r->err = PG_ENOMEM;
			}
		} else if (!strcmp(k, "secret-file")) {
			if (set_path(r, &p, v->items[i], "secret-file") < 0)
				break;
			pg_buf_init(&text, 4096);
			if (pg_buf_read_file(&text, p) < 0) {
				r->err = pg_error_wrap(pg_error_last_code(), "%s: secret-file", r->name);
				break;
			}
			pg_buf_rtrim(&text);
			if (text.len < 16) {
				bad(r, v->items[i], "the secret in '%s' wants at least 16 characters", p);
				break;
			}
			free_secret(*dst);
			*dst = pg_buf_detach(&text);
		} else
			unknown(r, v, i, hook);
	}
	free(p);
	pg_buf_release(&path);
	pg_buf_release_secret(&text);
	return r->err;
}

static int read_hooks(reader *r, const pg_yaml_node *v)
{
	unsigned long long n;
	size_t i;

	if (want_map(r, v, "hooks") < 0)
		return r->err;
	for (i = 0; i < v->n && !r->err; i++) {
		const char *k = key_of(r, v, i);

		if (!k)
			break;
		if (!strcmp(k, "push"))
			read_secret(r, &r->c->push_secret, v->items[i], "push");
		else if (!strcmp(k, "pull-request"))
			read_secret(r, &r->c->mail_secret, v->items[i], "pull-request");
		else if (!strcmp(k, "max-body")) {
			if (set_number(r, &n, v->items[i], "max-body", 1024, (size_t)64 << 20) == 0)
				r->c->max_body = (size_t)n;
		} else
			unknown(r, v, i, "hooks");
	}
	return r->err;
}

static int read_repositories(reader *r, const pg_yaml_node *v)
{
	size_t i, j;

	if (want_map(r, v, "repositories") < 0)
		return r->err;
	for (i = 0; i < v->n && !r->err; i++) {
		const char *k = key_of(r, v, i);
		const pg_yaml_node *m = v->items[i];

		if (!k)
			break;
		if (!strcmp(k, "base")) {
			set_string(r, &r->c->repo_base, m, "base");
			continue;
		}
		if (strcmp(k, "map")) {
			unknown(r, v, i, "repositories");
			break;
		}
		if (want_map(r, m, "map") < 0)
			break;
		if (m->n > PG_CONFIG_MAX_REPOS) {
			bad(r, m, "'map' has more than %d entries", PG_CONFIG_MAX_REPOS);
			break;
		}
		free(r->c->repos);
		r->c->nrepos = 0;
		if (!(r->c->repos = calloc(m->n + 1, sizeof(*r->c->repos)))) {
			r->err = pg_error_oom();
			break;
		}
		for (j = 0; j < m->n && !r->err; j++) {
			pg_repo_map *e = &r->c->repos[r->c->nrepos];
			const char *name = key_of(r, m, j);

			if (!name)
				break;
			if (!(e->name = pg_strdup(name))) {
				r->err = PG_ENOMEM;
				break;
			}
			r->c->nrepos++;
			/* a location that looks like a path is a path, relative to the file */
			if (m->items[j]->type == PG_YAML_SCALAR && m->items[j]->len &&
			    !strstr(m->items[j]->value, "://"))
				set_path(r, &e->location, m->items[j], name);
			else
				set_string(r, &e->location, m->items[j], name);
		}
	}
	return r->err;
}

static int read_stages(reader *r, const pg_yaml_node *v)
{
	unsigned flags = 0, flag;
	size_t i;

	if (v->type != PG_YAML_LIST)
		return bad(r, v, "'stages' wants a list of merge, build, boot, approve");
	for (i = 0; i < v->n; i++) {
		const pg_yaml_node *s = v->items[i];

		if (s->type != PG_YAML_SCALAR || !(flag = pg_gate_stage_flag(s->value, strlen(s->value))))
			return bad(r, s, "'stages' wants merge, build, boot or approve");
		flags |= flag;
	}
	if (!pg_gate_stages_valid(flags))
		return bad(r, v, "'stages' must run in order from merge without a gap "
			   "(nothing is booted unbuilt or approved untested)");
	r->c->stages = flags;
	return 0;
}

static int read_pipeline(reader *r, const pg_yaml_node *v)
{
	unsigned long long n;
	size_t i;

	if (want_map(r, v, "pipeline") < 0)
		return r->err;
	for (i = 0; i < v->n && !r->err; i++) {
		const char *k = key_of(r, v, i);
		const pg_yaml_node *x = v->items[i];

		if (!k)
			break;
		if (!strcmp(k, "stages"))
			read_stages(r, x);
		else if (!strcmp(k, "tree"))
			set_path(r, &r->c->tree, x, "tree");
		else if (!strcmp(k, "branch"))
			set_string(r, &r->c->branch, x, "branch");
		else if (!strcmp(k, "merge-name"))
			set_string(r, &r->c->merge_name, x, "merge-name");
		else if (!strcmp(k, "merge-email"))
			set_string(r, &r->c->merge_email, x, "merge-email");
		else if (!strcmp(k, "verify-workers")) {
			if (set_number(r, &n, x, "verify-workers", 1, 16) == 0)
				r->c->verify_workers = (unsigned)n;
		} else
			unknown(r, v, i, "pipeline");
	}
	return r->err;
}

static int read_accounts(reader *r, const pg_yaml_node *v)
{
	size_t i, j;

	if (v->type != PG_YAML_LIST)
		return bad(r, v, "'accounts' wants a list of {name, password-hash}");
	if (v->n > PG_CONFIG_MAX_ACCOUNTS)
		return bad(r, v, "'accounts' has more than %d entries", PG_CONFIG_MAX_ACCOUNTS);
	if (!(r->c->accounts = calloc(v->n + 1, sizeof(*r->c->accounts))))
		return r->err = pg_error_oom();
	for (i = 0; i < v->n && !r->err; i++) {
		const pg_yaml_node *a = v->items[i];
		pg_account *acc = &r->c->accounts[r->c->naccounts++];

		if (want_map(r, a, "accounts") < 0)
			break;
		for (j = 0; j < a->n && !r->err; j++) {
			const char *k = key_of(r, a, j);

			if (!k)
				break;
			if (!strcmp(k, "name"))
				set_string(r, &acc->name, a->items[j], "name");
			else if (!strcmp(k, "password-hash"))
				set_string(r, &acc->hash, a->items[j], "password-hash");
			else
				unknown(r, a, j, "an account");
		}
		if (!r->err && (!acc->name || !acc->hash))
			bad(r, a, "an account wants both 'name' and 'password-hash'");
		if (!r->err && strncmp(acc->hash, "pbkdf2-sha256$", 14))
			bad(r, a, "'password-hash' wants the output of 'pullgate serve --hash-password'");
		for (j = 0; !r->err && j + 1 < r->c->naccounts; j++)
			if (!strcmp(r->c->accounts[j].name, acc->name))
				bad(r, a, "account '%s' is given twice", acc->name);
	}
	return r->err;
}

static int read_session(reader *r, const pg_yaml_node *v)
{
	unsigned long long n;
	size_t i;

	if (want_map(r, v, "session") < 0)
		return r->err;
	for (i = 0; i < v->n && !r->err; i++) {
		const char *k = key_of(r, v, i);

		if (!k)
			break;
		if (!strcmp(k, "hours")) {
			if (set_number(r, &n, v->items[i], "hours", 1, 24 * 30) == 0)
				r->c->session_hours = (unsigned)n;
		} else if (!strcmp(k, "secure-cookie"))
			set_bool(r, &r->c->cookie_secure, v->items[i], "secure-cookie");
		else
			unknown(r, v, i, "session");
	}
	return r->err;
}

static int walk(reader *r, const pg_yaml_node *root)
{
	size_t i;

	if (!root)
		return 0; /* an empty file: the defaults */
	if (want_map(r, root, "the configuration") < 0)
		return r->err;
	for (i = 0; i < root->n && !r->err; i++) {
		const char *k = key_of(r, root, i);
		const pg_yaml_node *v = root->items[i];

		if (!k)
			break;
		if (!strcmp(k, "listen"))
			read_listen(r, v);
		else if (!strcmp(k, "policy"))
			set_path(r, &r->c->policy, v, "policy");
		else if (!strcmp(k, "state"))
			set_path(r, &r->c->state, v, "state");
		else if (!strcmp(k, "hooks"))
			read_hooks(r, v);
		else if (!strcmp(k, "repositories"))
			read_repositories(r, v);
		else if (!strcmp(k, "pipeline"))
			read_pipeline(r, v);
		else if (!strcmp(k, "accounts"))
			read_accounts(r, v);
		else if (!strcmp(k, "session"))
			read_session(r, v);
		else
			unknown(r, root, i, NULL);
	}
	return r->err;
}

int pg_config_parse(pg_config **out, const char *text, size_t len, const char *name)
{
	pg_config *c = NULL;
	pg_yaml_node *root = NULL;
	pg_yaml_mark where;
	reader r;
	char *dir = NULL, *slash;
	int err;

	*out = NULL;
	if (len > PG_CONFIG_MAX_SIZE)
		return pg_error_set(PG_ETOOBIG, "%s: larger than %zu bytes", name, PG_CONFIG_MAX_SIZE);
	if ((err = pg_config_new_default(&c)) < 0)
		return err;
	if (!(dir = pg_strdup(name))) {
		err = PG_ENOMEM;
		goto done;
	}
	if ((slash = strrchr(dir, '/')))
		*(slash == dir ? slash + 1 : slash) = '\0';
	memset(&r, 0, sizeof(r));
	r.c = c;
	r.name = name;
	r.basedir = slash ? dir : NULL;
	free(c->source);
	if (!(c->source = pg_strdup(name))) {
		err = PG_ENOMEM;
		goto done;
	}
	err = pg_yaml_parse(&root, &where, text, len);
	if (err == PG_EINVALID) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", pg_error_last());
		err = pg_error_set(PG_EINVALID, "%s:%u:%u: %s", name, where.line, where.column, msg);
		goto done;
	}
	if (err < 0 || (err = walk(&r, root)) < 0)
		goto done;
	*out = c;
	c = NULL;
done:
	pg_yaml_free(root);
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
