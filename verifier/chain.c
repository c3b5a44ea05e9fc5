/* chain.c - the committers of upstream's first-parent line, newest first: walked once per tip, kept on disk. */
#include "verifier/chain.h"
#include "common/array.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"

/*
 * The cache: one line per commit, from the tip down,
 *	<40 hex id> <committer time> <committer e-mail>\n
 * An e-mail of a commit header never holds a newline; one with any other
 * control character, a line that does not parse, or more than PG_CHAIN_MAX
 * lines make the whole file unusable, and the line is walked again.
 */

void pg_chain_release(pg_chain *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->v[i].email);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static int push(pg_chain *c, const pg_oid *id, int64_t time, char *email)
{
	int err;

	if ((err = PG_ARRAY_GROW(c->v, c->n + 1, c->alloc)) < 0) {
		free(email);
		return err;
	}
	c->v[c->n].id = *id;
	c->v[c->n].time = time;
	c->v[c->n].email = email;
	c->n++;
	return 0;
}

static bool email_ok(const char *s, size_t len)
{
	size_t i;

	if (!len)
		return false;
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

/* One line of the cache, [p, end) without its newline. */
static int parse_line(pg_chain *c, const char *p, const char *end)
{
	pg_oid id;
	int64_t t = 0;
	bool neg = false;
	const char *q;
	char *email;

	if (end - p < PG_OID_HEXSZ + 4 || p[PG_OID_HEXSZ] != ' ' ||
	    pg_oid_fromhex(&id, p, PG_OID_HEXSZ) < 0)
		return PG_EINVALID;
	q = p + PG_OID_HEXSZ + 1;
	if (*q == '-')
		neg = *q++ == '-';
	if (q >= end || *q < '0' || *q > '9')
		return PG_EINVALID;
	for (; q < end && *q >= '0' && *q <= '9'; q++) {
		if (t > (INT64_MAX - 9) / 10)
			return PG_EINVALID;
		t = t * 10 + (*q - '0');
	}
	if (q >= end || *q++ != ' ' || !email_ok(q, (size_t)(end - q)))
		return PG_EINVALID;
	if (!(email = pg_strndup(q, (size_t)(end - q))))
		return PG_ENOMEM;
	return push(c, &id, neg ? -t : t, email);
}

static int parse_cache(pg_chain *c, const pg_buf *text)
{
	const char *p = text->ptr, *end = text->ptr + text->len;
	int err = 0;

	while (p < end && err == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl || c->n >= PG_CHAIN_MAX)
			return PG_EINVALID;
		err = parse_line(c, p, nl);
		p = nl + 1;
	}
	return err;
}

static int write_cache(const pg_chain *c, const char *path)
{
	pg_buf out = PG_BUF_INIT;
	char hex[PG_OID_HEXSZ + 1];
	size_t i;
	int err = 0;

	for (i = 0; i < c->n && err == 0; i++) {
		pg_oid_tohex(hex, &c->v[i].id);
		err = pg_buf_printf(&out, "%s %lld %s\n", hex, (long long)c->v[i].time,
				    c->v[i].email);
	}
	if (err == 0)
		err = pg_write_file_atomic(path, out.ptr ? out.ptr : "", out.len);
	pg_buf_release(&out);
	return err;
}

/* Whether every e-mail the walk would keep can be written back and read again. */
static bool cacheable(const pg_chain *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!email_ok(c->v[i].email, strlen(c->v[i].email)))
			return false;
	return true;
}

int pg_chain_load(pg_chain *out, pg_repo *r, const pg_oid *tip, const char *cache)
{
	pg_chain old;
	pg_buf text = PG_BUF_INIT;
	pg_oid id = *tip;
	size_t moved;
	int err = 0;

	memset(out, 0, sizeof(*out));
	memset(&old, 0, sizeof(old));
	if (cache && pg_buf_read_file(&text, cache) == 0) {
		/* a file that does not parse whole is not used at all */
		if (parse_cache(&old, &text) < 0)
			pg_chain_release(&old);
		if (old.n && !pg_oid_cmp(&old.v[0].id, tip)) {
			*out = old;
			pg_buf_release(&text);
			return 0;
		}
	}
	pg_error_clear();
	pg_buf_release(&text);
	while (out->n < PG_CHAIN_MAX && err == 0) {
		pg_commit *c = NULL;
		char *email;
		bool more;

		if (old.n && !pg_oid_cmp(&id, &old.v[0].id)) {
			/* the cached line's tip: the rest is the cache */
			for (moved = 0; moved < old.n && out->n < PG_CHAIN_MAX && err == 0; moved++) {
				err = push(out, &old.v[moved].id, old.v[moved].time,
					   old.v[moved].email);
				old.v[moved].email = NULL;
			}
			break;
		}
		if ((err = pg_repo_read_commit(&c, r, &id)) < 0)
			break;
		if (!(email = pg_strdup(c->committer.email))) {
			pg_commit_free(c);
			err = PG_ENOMEM;
			break;
		}
		err = push(out, &id, c->committer.time, email);
		more = c->nparents > 0;
		if (more)
			id = c->parents[0];
		pg_commit_free(c);
		if (!more)
			break;
	}
	pg_chain_release(&old); /* what was moved is NULL there */
	if (err < 0) {
		pg_chain_release(out);
		return err;
	}
	if (cache && cacheable(out) && write_cache(out, cache) < 0)
		pg_error_clear();
	return 0;
}
