/* tlog_follow.c - the transparency log read incrementally: a cursor of epoch tips, the messages added since, the epochs fetched. */
#include "verifier/tlog_internal.h"
#include "common/array.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/hex.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CURSOR_MAGIC "pullgate-tlog-cursor 1 "
#define NEW_EPOCHS_A_TURN 8

struct pg_tlog_follower {
	char *path;       /* the log's directory, absolute */
	pg_repo **repos;  /* per epoch, opened on first use */
	size_t nrepos, alloc;
};

void pg_tlog_cursor_release(pg_tlog_cursor *c)
{
	free(c->tips);
	c->tips = NULL;
	c->nepochs = 0;
}

int pg_tlog_cursor_format(pg_buf *out, const pg_tlog_cursor *c)
{
	char hex[PG_OID_HEXSZ + 1];
	size_t e;
	int err;

	if ((err = pg_buf_printf(out, CURSOR_MAGIC "%zu\n", c->nepochs)) < 0)
		return err;
	for (e = 0; e < c->nepochs; e++) {
		pg_oid_tohex(hex, &c->tips[e]);
		if ((err = pg_buf_printf(out, "%06zu %s\n", e, hex)) < 0)
			return err;
	}
	return 0;
}

int pg_tlog_cursor_parse(pg_tlog_cursor *c, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t n = 0, e, magic = strlen(CURSOR_MAGIC);

	memset(c, 0, sizeof(*c));
	if (len < magic || memcmp(p, CURSOR_MAGIC, magic))
		return pg_error_set(PG_EINVALID, "the cursor does not start with '%.*s'",
				    (int)magic - 1, CURSOR_MAGIC);
	for (p += magic; p < end && *p >= '0' && *p <= '9' && n <= PG_TLOG_MAX_EPOCHS; p++)
		n = n * 10 + (size_t)(*p - '0');
	if (p == text + magic || p >= end || *p != '\n' || n > PG_TLOG_MAX_EPOCHS)
		return pg_error_set(PG_EINVALID, "the cursor's count of epochs is not one "
				    "(0 to %d)", PG_TLOG_MAX_EPOCHS);
	p++;
	/* EEEEEE SP TIP LF, each epoch in order */
	if ((size_t)(end - p) != n * (6 + 1 + PG_OID_HEXSZ + 1))
		return pg_error_set(PG_EINVALID, "the cursor holds %zu bytes of epochs, not the "
				    "%zu of %zu epochs", (size_t)(end - p),
				    n * (6 + 1 + PG_OID_HEXSZ + 1), n);
	if (n && !(c->tips = calloc(n, sizeof(*c->tips))))
		return pg_error_oom();
	for (e = 0; e < n; e++, p += 6 + 1 + PG_OID_HEXSZ + 1) {
		char num[7];

		memcpy(num, p, 6);
		num[6] = '\0';
		if (strspn(num, "0123456789") != 6 || strtoul(num, NULL, 10) != e || p[6] != ' ' ||
		    !pg_hex_is(p + 7, PG_OID_HEXSZ) ||
		    pg_oid_fromhex(&c->tips[e], p + 7, PG_OID_HEXSZ) < 0 ||
		    p[7 + PG_OID_HEXSZ] != '\n') {
			pg_tlog_cursor_release(c);
			return pg_error_set(PG_EINVALID, "the cursor's line of epoch %zu is not "
					    "'%06zu' and 40 hex digits", e, e);
		}
	}
	c->nepochs = n;
	return 0;
}

int pg_tlog_follower_new(pg_tlog_follower **out, const char *path)
{
	pg_tlog_follower *f;

	*out = NULL;
	if (!(f = calloc(1, sizeof(*f))))
		return pg_error_oom();
	if (!(f->path = realpath(path, NULL))) {
		int err = pg_error_set(errno == ENOENT ? PG_ENOTFOUND : PG_EIO,
				       "transparency log '%s': %s", path, strerror(errno));

		free(f);
		return err;
	}
	*out = f;
	return 0;
}

void pg_tlog_follower_free(pg_tlog_follower *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->nrepos; i++)
		pg_repo_free(f->repos[i]);
	free(f->repos);
	free(f->path);
	free(f);
}

const char *pg_tlog_follower_path(const pg_tlog_follower *f)
{
	return f->path;
}

/* The epochs there are now, each opened once: *n of them. */
static int epochs(size_t *n, pg_tlog_follower *f)
{
	pg_buf dir = PG_BUF_INIT;
	size_t want = pg_tlog_count_epochs(f->path);
	int err = 0;

	*n = 0;
	if (!want)
		return pg_error_set(PG_ENOTFOUND, "transparency log '%s' has no git/0.git: not a "
				    "public-inbox v2 archive", f->path);
	if (want > f->nrepos) {
		if ((err = PG_ARRAY_GROW(f->repos, want, f->alloc)) < 0)
			return err;
		memset(f->repos + f->nrepos, 0, (want - f->nrepos) * sizeof(*f->repos));
		f->nrepos = want;
	}
	for (; *n < want; (*n)++) {
		if (f->repos[*n])
			continue;
		pg_buf_clear(&dir);
		if ((err = pg_buf_printf(&dir, "%s/git/%zu.git", f->path, *n)) < 0 ||
		    (err = pg_repo_open(&f->repos[*n], dir.ptr)) < 0)
			break;
	}
	pg_buf_release(&dir);
	return err;
}

static int master(pg_oid *tip, pg_repo *r)
{
	int err = pg_repo_ref_target(tip, r, "refs/heads/master");

	if (err == PG_ENOTFOUND) {
		pg_error_clear();
		memset(tip, 0, sizeof(*tip));
		return 0;
	}
	return err;
}

int pg_tlog_next_epoch_url(pg_buf *out, const char *prev, size_t e)
{
	size_t len = strlen(prev), end, start, digits;
	const char *suffix;
	char want[32];

	if (!e)
		return pg_error_set(PG_ENOTFOUND, "epoch 0 follows none");
	end = len && prev[len - 1] == '/' ? len - 1 : len;
	suffix = end >= 4 && !memcmp(prev + end - 4, ".git", 4) ? ".git" : "";
	digits = end - strlen(suffix);
	for (start = digits; start > 0 && prev[start - 1] >= '0' && prev[start - 1] <= '9'; start--)
		;
	snprintf(want, sizeof(want), "%zu", e - 1);
	if (start == 0 || prev[start - 1] != '/' || digits - start != strlen(want) ||
	    memcmp(prev + start, want, digits - start))
		return pg_error_set(PG_ENOTFOUND, "'%s' does not end in epoch %zu's number", prev,
				    e - 1);
	pg_buf_clear(out);
	return pg_buf_printf(out, "%.*s%zu%s%s", (int)start, prev, e, suffix, prev + end);
}

/*
 * Epoch n, when its origin has it (PG_ENOTFOUND from the fetch: it has
 * not, which is no error): public-inbox starts a new epoch when
 * the last grows too large, and git.kernel.org's log has no webhook to
 * say so.  Its URL is made from epoch n - 1's origin; it is fetched into
 * a directory of its own under git/ and renamed git/N.git once its master
 * is there, so a stop halfway leaves no epoch without its messages (a
 * leftover is removed at the next try).  *added is 1 for a new epoch.
 * An origin that has no epoch n (yet) is asked again at the next fetch;
 * one that cannot be reached for it is the error, as for the others.
 */
static int new_epoch(size_t *added, pg_tlog_follower *f, size_t n)
{
	pg_buf url = PG_BUF_INIT, tmp = PG_BUF_INIT, final = PG_BUF_INIT;
	char *prev = NULL;
	pg_repo *r = NULL;
	bool did = false;
	int err;

	*added = 0;
	if (!n || n >= PG_TLOG_MAX_EPOCHS)
		return 0;
	if ((err = pg_repo_config_string(&prev, f->repos[n - 1], "remote.origin.url")) < 0 ||
	    !prev) {
		if (err == PG_ENOMEM)
			goto done;
		goto quiet;
	}
	if ((err = pg_tlog_next_epoch_url(&url, prev, n)) < 0) {
		if (err == PG_ENOMEM)
			goto done;
		goto quiet;
	}
	if ((err = pg_buf_printf(&final, "%s/git", f->path)) < 0)
		goto done;
	/* a log the service may not write is kept by someone else, its new epochs too */
	if (access(final.ptr, W_OK) < 0)
		goto quiet;
	if ((err = pg_buf_printf(&final, "/%zu.git", n)) < 0 ||
	    (err = pg_buf_printf(&tmp, "%s/git/.%zu.git.new", f->path, n)) < 0 ||
	    (err = pg_remove_tree(tmp.ptr)) < 0)
		goto done;
	if ((err = pg_repo_init_mirror(&r, tmp.ptr, "origin", url.ptr)) < 0)
		goto done;
	err = pg_repo_fetch_mirror(&did, r, "origin", "refs/heads/master");
	pg_repo_free(r);
	r = NULL;
	if (err < 0 || !did || pg_is_dir(final.ptr)) {
		pg_remove_tree(tmp.ptr);
		/* no such epoch (yet) is the usual answer; any other failure is said */
		if (err == PG_ENOTFOUND || err == 0)
			goto quiet;
		pg_error_set(err, "a new epoch from '%s': %s", url.ptr, pg_error_last());
		goto done;
	}
	if (rename(tmp.ptr, final.ptr) < 0) {
		err = pg_error_set(PG_EIO, "'%s': %s", final.ptr, strerror(errno));
		pg_remove_tree(tmp.ptr);
		goto done;
	}
	*added = 1;
	goto done;
quiet:
	pg_error_clear();
	err = 0;
done:
	free(prev);
	pg_buf_release(&url);
	pg_buf_release(&tmp);
	pg_buf_release(&final);
	return err;
}

int pg_tlog_fetch(size_t *fetched, bool *more, pg_tlog_follower *f)
{
	size_t n, e;
	int err, first = 0;
	pg_buf why = PG_BUF_INIT;

	*fetched = 0;
	*more = false;
	if ((err = epochs(&n, f)) < 0)
		return err;
	for (e = 0; e < n; e++) {
		bool did = false;

		err = pg_repo_fetch_mirror(&did, f->repos[e], "origin", "refs/heads/master");
		*fetched += did;
		if (err == PG_ENOMEM)
			first = err;
		if (err < 0 && !first) {
			first = err;
			pg_buf_printf(&why, "epoch %zu: %s", e, pg_error_last());
		}
	}
	/* the epochs the origin began since: a few a turn, the rest at the next */
	for (e = 0; e < NEW_EPOCHS_A_TURN && first != PG_ENOMEM; e++) {
		size_t added = 0;

		if ((err = new_epoch(&added, f, n)) < 0 && !first) {
			first = err;
			pg_buf_printf(&why, "epoch %zu: %s", n, pg_error_last());
		}
		if (!added || (err = epochs(&n, f)) < 0)
			break;
		(*fetched)++;
		*more = e + 1 == NEW_EPOCHS_A_TURN;
	}
	if (err < 0 && !first)
		first = err;
	if (first && why.len)
		pg_error_set(first, "%s", why.ptr);
	pg_buf_release(&why);
	return first;
}

int pg_tlog_cursor_at_end(pg_tlog_cursor *c, pg_tlog_follower *f)
{
	pg_oid *tips = NULL;
	size_t n, e;
	int err;

	if ((err = epochs(&n, f)) < 0)
		return err;
	if (!(tips = calloc(n, sizeof(*tips))))
		return pg_error_oom();
	for (e = 0; e < n; e++)
		if ((err = master(&tips[e], f->repos[e])) < 0) {
			free(tips);
			return err;
		}
	pg_tlog_cursor_release(c);
	c->tips = tips;
	c->nepochs = n;
	return 0;
}

/* One call of pg_tlog_follow. */
typedef struct follow {
	pg_tlog_follow_info *info;
	pg_tlog_follower *f;
	pg_tlog_cursor *c;
	const pg_tlog_follow_opts *o;
	size_t batch;
	size_t pending;  /* messages taken since batch_fn last saw c */
	bool moved;      /* c moved since then */
} follow;

static bool cancelled(const follow *w)
{
	return w->o->cancel && *w->o->cancel;
}

/* batch_fn, when c moved since it last saw it. */
static int hand_batch(follow *w)
{
	size_t n = w->pending;

	if (!w->moved)
		return 0;
	w->pending = 0;
	w->moved = false;
	return w->o->batch_fn ? w->o->batch_fn(w->o->ctx, w->c, n) : 0;
}

/* Whether an error of reading a message stops the epoch: what may pass, not what the commit is. */
static bool stops_epoch(int err)
{
	return err == PG_ENOMEM || err == PG_ECANCELLED || err == PG_EIO || err == PG_ETIMEOUT;
}

/*
 * Hand entry the messages of epoch e past c's tip, oldest first.  *fatal
 * says the error stops the whole read; otherwise only this epoch stopped.
 */
static int follow_epoch(follow *w, size_t e, bool *fatal)
{
	pg_repo *r = w->f->repos[e];
	pg_tlog_cursor *c = w->c;
	pg_oid tip, *ids = NULL;
	pg_buf msg = PG_BUF_INIT, why = PG_BUF_INIT;
	size_t n = 0, i;
	bool found;
	int err;

	*fatal = false;
	if ((err = master(&tip, r)) < 0 || !pg_oid_cmp(&tip, &c->tips[e]))
		return err;
	if ((err = pg_tlog_walk(&ids, &n, &found, r, &tip, &c->tips[e], e, w->o->cancel)) < 0) {
		*fatal = err == PG_ENOMEM || err == PG_ECANCELLED;
		return err;
	}
	if (!found && !pg_oid_is_zero(&c->tips[e])) {
		/* read from its root, each watched record it holds would be a job again */
		c->tips[e] = tip;
		w->info->rewritten++;
		w->info->last_rewritten = e;
		w->moved = true;
		free(ids);
		return 0;
	}
	for (i = n; i > 0; i--) {
		pg_tlog_record *rec = NULL;
		pg_tlog_entry en;

		if (cancelled(w)) {
			err = pg_error_set(PG_ECANCELLED, "the read of the log was cancelled");
			*fatal = true;
			break;
		}
		memset(&en, 0, sizeof(en));
		en.epoch = (unsigned)e;
		en.commit = ids[i - 1];
		pg_buf_release(&msg);
		pg_buf_clear(&why);
		en.err = pg_tlog_read_message(&msg, &en.deletion, r, &ids[i - 1]);
		if (en.err == 0) {
			en.raw = msg.ptr;
			en.raw_len = msg.len;
			en.err = pg_tlog_record_parse(&rec, msg.ptr, msg.len);
		}
		if (en.err < 0 && stops_epoch(en.err)) {
			err = en.err;
			*fatal = err == PG_ENOMEM || err == PG_ECANCELLED;
			break;
		}
		/* anything else is this commit's: said by entry, and the read goes on */
		if (en.err < 0 && (err = pg_buf_puts(&why, pg_error_last())) < 0) {
			*fatal = true;
			break;
		}
		en.rec = rec;
		en.error = en.err < 0 ? why.ptr : NULL;
		err = w->o->entry(w->o->ctx, &en);
		pg_tlog_record_free(rec);
		if (err < 0) {
			*fatal = true;
			break;
		}
		c->tips[e] = ids[i - 1];
		w->info->read++;
		w->moved = true;
		if (++w->pending == w->batch && (err = hand_batch(w)) < 0) {
			*fatal = true;
			break;
		}
	}
	pg_buf_release(&msg);
	pg_buf_release(&why);
	free(ids);
	return err;
}

int pg_tlog_follow(pg_tlog_follow_info *info, pg_tlog_follower *f, pg_tlog_cursor *c,
		   const pg_tlog_follow_opts *o)
{
	follow w = { info, f, c, o, o->batch ? o->batch : 1000, 0, false };
	pg_buf why = PG_BUF_INIT;
	size_t n, e;
	int err, first = 0, berr;
	bool fatal = false;

	memset(info, 0, sizeof(*info));
	if ((err = epochs(&n, f)) < 0)
		return err;
	info->epochs = n;
	if (n > c->nepochs) {
		/* a new epoch holds only what was written after every older one: from its root */
		pg_oid *tips = calloc(n, sizeof(*tips));

		if (!tips)
			return pg_error_oom();
		if (c->nepochs)
			memcpy(tips, c->tips, c->nepochs * sizeof(*tips));
		free(c->tips);
		c->tips = tips;
		c->nepochs = n;
	}
	for (e = 0; e < n && !fatal; e++) {
		if ((err = follow_epoch(&w, e, &fatal)) == 0)
			continue;
		if (!fatal)
			info->unread++;
		if (!first || fatal) {
			first = err;
			pg_buf_clear(&why);
			if (pg_buf_printf(&why, "epoch %zu: %s", e, pg_error_last()) < 0)
				first = PG_ENOMEM;
		}
	}
	/* what entry took is the caller's to keep, whatever stopped the read */
	berr = hand_batch(&w);
	if (!first && berr < 0) {
		pg_buf_release(&why);
		return berr;
	}
	if (first && first != PG_ENOMEM)
		pg_error_set(first, "%s", why.ptr);
	pg_buf_release(&why);
	return first;
}
