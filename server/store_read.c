/* store_read.c - jobs as the store gives them back: one, the oldest in a state, a page, counts. */
#include "server/store_sql.h"
#include "common/array.h"
#include "common/str.h"

/*
 * A job's columns, in the order read_job reads them.  A list leaves out
 * the mail and the report, the two that may be large: SQLite does not
 * read what is not selected.
 */
#define JOB_COLUMNS(mail, report) \
	"SELECT id, delivery, kind, repo, repo_name, tag, expect, sender, " mail ", state," \
	" verdict, errors, warnings, commits, merges, message, " report ", tag_object, tag_time," \
	" tag_offset, merge_base, merge_commit, attempts, created, updated, simulated, tag_signer," \
	" run_dir, queue_rank, held, attribution, with_pull, conflict, conflict_with FROM pulls "
#define JOB_SELECT JOB_COLUMNS("mail", "report")
#define JOB_LISTED JOB_COLUMNS("NULL", "NULL")

static char *col_dup(sqlite3_stmt *st, int i, bool *ok)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	char *s;

	if (!t)
		return NULL;
	if (!(s = pg_strndup((const char *)t, (size_t)sqlite3_column_bytes(st, i))))
		*ok = false;
	return s;
}

void pg_job_free(pg_job *j)
{
	size_t i;

	if (!j)
		return;
	free(j->delivery);
	free(j->repo);
	free(j->repo_name);
	free(j->tag);
	free(j->sender);
	free(j->mail);
	free(j->message);
	free(j->report);
	free(j->tag_signer);
	free(j->run_dir);
	free(j->attribution);
	free(j->conflict);
	for (i = 0; i < j->nstages; i++) {
		free(j->stages[i].name);
		free(j->stages[i].status);
		free(j->stages[i].log);
		free(j->stages[i].summary);
	}
	free(j->stages);
	for (i = 0; i < j->ndecisions; i++) {
		free(j->decisions[i].user);
		free(j->decisions[i].action);
		free(j->decisions[i].note);
	}
	free(j->decisions);
	free(j);
}

/* Pull id's column is damaged: the message says what its text is not. */
static int damaged(int64_t id, const char *column)
{
	return pg_error_wrap(PG_EINVALID, "store: pull %lld: damaged %s column", (long long)id,
			     column);
}

/* Column i of j's row, an object id in hex or NULL (*has false); anything else is damage. */
static int col_oid(pg_oid *out, bool *has, sqlite3_stmt *st, int i, const pg_job *j,
		   const char *column)
{
	const char *hex = (const char *)sqlite3_column_text(st, i);

	*has = hex != NULL;
	if (hex && pg_oid_fromhex(out, hex, (size_t)sqlite3_column_bytes(st, i)) < 0)
		return damaged(j->id, column);
	return 0;
}

/*
 * The typed columns of a job, each from its name or its hex: a value that
 * is none is a damaged row, and so is a merge recorded half.
 */
static int read_typed(pg_job *j, sqlite3_stmt *st)
{
	const char *verdict = (const char *)sqlite3_column_text(st, 10);
	bool base, merge;
	int err;

	if (pg_job_kind_from_name(&j->kind, (const char *)sqlite3_column_text(st, 2)) < 0)
		return damaged(j->id, "kind");
	if (pg_job_state_from_name(&j->state, (const char *)sqlite3_column_text(st, 9)) < 0)
		return damaged(j->id, "state");
	j->has_verdict = verdict != NULL;
	if (verdict && pg_job_verdict_from_name(&j->verdict, verdict) < 0)
		return damaged(j->id, "verdict");
	if ((err = col_oid(&j->expect, &j->has_expect, st, 6, j, "expect")) < 0 ||
	    (err = col_oid(&j->tag_object, &j->has_tag_object, st, 17, j, "tag_object")) < 0 ||
	    (err = col_oid(&j->merge_base, &base, st, 20, j, "merge_base")) < 0 ||
	    (err = col_oid(&j->merge_commit, &merge, st, 21, j, "merge_commit")) < 0)
		return err;
	if (base != merge)
		return pg_error_set(PG_EINVALID, "store: pull %lld: damaged %s column: empty, and "
				    "%s is not", (long long)j->id, base ? "merge_commit" : "merge_base",
				    base ? "merge_base" : "merge_commit");
	j->has_merge = base;
	return 0;
}

/* A job from a row selected with job_columns. */
static int read_job(pg_job **out, sqlite3_stmt *st, bool with_blobs)
{
	pg_job *j = calloc(1, sizeof(*j));
	bool ok = j != NULL;
	int err;

	*out = NULL;
	if (!ok)
		return pg_error_oom();
	j->id = sqlite3_column_int64(st, 0);
	j->delivery = col_dup(st, 1, &ok);
	j->repo = col_dup(st, 3, &ok);
	j->repo_name = col_dup(st, 4, &ok);
	j->tag = col_dup(st, 5, &ok);
	j->sender = col_dup(st, 7, &ok);
	if (with_blobs && sqlite3_column_type(st, 8) != SQLITE_NULL) {
		const void *b = sqlite3_column_blob(st, 8);

		j->mail_len = (size_t)sqlite3_column_bytes(st, 8);
		if (!(j->mail = malloc(j->mail_len + 1)))
			ok = false;
		else {
			if (j->mail_len)
				memcpy(j->mail, b, j->mail_len);
			j->mail[j->mail_len] = '\0';
		}
	}
	j->errors = sqlite3_column_int(st, 11);
	j->warnings = sqlite3_column_int(st, 12);
	j->commits = sqlite3_column_int(st, 13);
	j->merges = sqlite3_column_int(st, 14);
	j->message = col_dup(st, 15, &ok);
	if (with_blobs)
		j->report = col_dup(st, 16, &ok);
	j->tag_time = sqlite3_column_int64(st, 18);
	j->tag_offset = sqlite3_column_int(st, 19);
	j->attempts = sqlite3_column_int(st, 22);
	j->created = sqlite3_column_int64(st, 23);
	j->updated = sqlite3_column_int64(st, 24);
	j->simulated = sqlite3_column_int(st, 25) != 0;
	j->tag_signer = col_dup(st, 26, &ok);
	j->run_dir = col_dup(st, 27, &ok);
	j->queue_rank = sqlite3_column_int64(st, 28);
	j->held = sqlite3_column_int(st, 29) != 0;
	j->attribution = col_dup(st, 30, &ok);
	j->with_pull = sqlite3_column_int64(st, 31);
	j->conflict = col_dup(st, 32, &ok);
	j->conflict_with = sqlite3_column_int64(st, 33);
	err = ok ? read_typed(j, st) : pg_error_oom();
	if (err < 0) {
		pg_job_free(j);
		return err;
	}
	*out = j;
	return 0;
}

/* The first job sql (a JOB_SELECT) selects, with its one argument: arg, or else id. */
static int select_job(pg_job **out, pg_store *s, const char *sql, const char *arg, int64_t id)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	*out = NULL;
	if ((err = prepare(s, &st, sql)) < 0)
		return err;
	if (arg)
		bind_text(st, 1, arg);
	else
		sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		err = read_job(out, st, true);
	else if (rc != SQLITE_DONE)
		err = fail(s, rc, "pulls");
	done(s, st);
	return err;
}

int pg_store_oldest(pg_job **out, pg_store *s, enum pg_job_state state)
{
	int err;

	pthread_mutex_lock(&s->lock);
	err = select_job(out, s, JOB_SELECT "WHERE state = ? ORDER BY id LIMIT 1",
			 pg_job_state_name(state), 0);
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* A job's stages or decisions being read, with the array's allocation. */
typedef struct filling {
	pg_job *j;
	size_t alloc;
} filling;

static int stage_row(sqlite3_stmt *st, void *ctx)
{
	filling *f = ctx;
	pg_job_stage *x;
	bool ok = true;
	int err;

	if ((err = PG_ARRAY_GROW(f->j->stages, f->j->nstages + 1, f->alloc)) < 0)
		return err;
	x = memset(&f->j->stages[f->j->nstages++], 0, sizeof(*x));
	x->name = col_dup(st, 0, &ok);
	x->status = col_dup(st, 1, &ok);
	x->seconds = sqlite3_column_double(st, 2);
	x->log = col_dup(st, 3, &ok);
	x->summary = col_dup(st, 4, &ok);
	return ok ? 0 : pg_error_oom();
}

static int decision_row(sqlite3_stmt *st, void *ctx)
{
	filling *f = ctx;
	pg_job_decision *x;
	bool ok = true;
	int err;

	if ((err = PG_ARRAY_GROW(f->j->decisions, f->j->ndecisions + 1, f->alloc)) < 0)
		return err;
	x = memset(&f->j->decisions[f->j->ndecisions++], 0, sizeof(*x));
	x->user = col_dup(st, 0, &ok);
	x->action = col_dup(st, 1, &ok);
	x->at = sqlite3_column_int64(st, 2);
	x->note = col_dup(st, 3, &ok);
	return ok ? 0 : pg_error_oom();
}

/* The rows of sql (which takes the job's id) through row, which fills the job. */
static int read_rows(pg_store *s, pg_job *j, const char *sql, int (*row)(sqlite3_stmt *, void *))
{
	sqlite3_stmt *st = NULL;
	filling f = { j, 0 };
	int err;

	if ((err = prepare(s, &st, sql)) < 0)
		return err;
	sqlite3_bind_int64(st, 1, j->id);
	return each_row(s, st, "pulls", row, &f);
}

int pg_store_get(pg_job **out, pg_store *s, int64_t id)
{
	pg_job *j = NULL;
	int err;

	*out = NULL;
	pthread_mutex_lock(&s->lock);
	if ((err = select_job(&j, s, JOB_SELECT "WHERE id = ?", NULL, id)) == 0 && !j)
		err = pg_error_set(PG_ENOTFOUND, "pull %lld does not exist", (long long)id);
	if (err == 0 &&
	    (err = read_rows(s, j, "SELECT name, status, seconds, log, summary FROM stages"
			     " WHERE pull = ? ORDER BY seq", stage_row)) == 0)
		err = read_rows(s, j, "SELECT user, action, at, note FROM decisions"
				" WHERE pull = ? ORDER BY id", decision_row);
	pthread_mutex_unlock(&s->lock);
	if (err < 0) {
		pg_job_free(j);
		return err;
	}
	*out = j;
	return 0;
}

void pg_job_list_release(pg_job_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		pg_job_free(l->items[i]);
	free(l->items);
	memset(l, 0, sizeof(*l));
}

/* A page of jobs being read, with the array's allocation. */
typedef struct page {
	pg_job_list *l;
	size_t alloc;
} page;

static int list_row(sqlite3_stmt *st, void *ctx)
{
	page *p = ctx;
	int err;

	if ((err = PG_ARRAY_GROW(p->l->items, p->l->n + 1, p->alloc)) < 0 ||
	    (err = read_job(&p->l->items[p->l->n], st, false)) < 0)
		return err;
	p->l->n++;
	return 0;
}

int pg_store_list(pg_job_list *out, pg_store *s, const enum pg_job_state *state, size_t offset,
		  size_t limit)
{
	sqlite3_stmt *st = NULL;
	page p = { out, 0 };
	int rc, err;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, state ? "SELECT total(n) FROM pull_counts WHERE state = ?" :
			   "SELECT total(n) FROM pull_counts")) < 0)
		goto unlock;
	if (state)
		bind_text(st, 1, pg_job_state_name(*state));
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		out->total = (size_t)sqlite3_column_int64(st, 0);
	else
		err = fail(s, rc, "pulls");
	done(s, st);
	if (err < 0 ||
	    (err = prepare(s, &st, state ?
			   JOB_LISTED "WHERE state = ? ORDER BY id DESC LIMIT ? OFFSET ?" :
			   JOB_LISTED "ORDER BY id DESC LIMIT ? OFFSET ?")) < 0)
		goto unlock;
	if (state)
		bind_text(st, 1, pg_job_state_name(*state));
	sqlite3_bind_int64(st, state ? 2 : 1, (int64_t)limit);
	sqlite3_bind_int64(st, state ? 3 : 2, (int64_t)offset);
	err = each_row(s, st, "pulls", list_row, &p);
unlock:
	pthread_mutex_unlock(&s->lock);
	if (err < 0)
		pg_job_list_release(out);
	return err;
}

int pg_store_queue(pg_job_list *out, pg_store *s)
{
	sqlite3_stmt *st = NULL;
	page p = { out, 0 };
	int err;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, JOB_LISTED PG_STORE_QUEUED " ORDER BY queue_rank, id")) == 0)
		err = each_row(s, st, "pulls", list_row, &p);
	pthread_mutex_unlock(&s->lock);
	out->total = out->n;
	if (err < 0)
		pg_job_list_release(out);
	return err;
}

int pg_store_count_states(pg_store *s, pg_store_count_fn fn, void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, "SELECT state, n FROM pull_counts WHERE n > 0 ORDER BY state")) == 0) {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			fn(ctx, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1));
		if (rc != SQLITE_DONE)
			err = fail(s, rc, "pulls");
		done(s, st);
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

int pg_store_stage_totals(pg_store *s, pg_store_stage_fn fn, void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, "SELECT name, count(*), total(seconds) FROM stages"
			   " GROUP BY name ORDER BY name")) == 0) {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			fn(ctx, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1),
			   sqlite3_column_double(st, 2));
		if (rc != SQLITE_DONE)
			err = fail(s, rc, "stages");
		done(s, st);
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}


/* The outbox being read: ids and paths side by side. */
typedef struct outbox {
	int64_t *ids;
	char **paths;
	size_t n, alloc_ids, alloc_paths;
} outbox;

static int notice_row(sqlite3_stmt *st, void *ctx)
{
	outbox *o = ctx;
	bool ok = true;
	int err;

	if ((err = PG_ARRAY_GROW(o->ids, o->n + 1, o->alloc_ids)) < 0 ||
	    (err = PG_ARRAY_GROW(o->paths, o->n + 1, o->alloc_paths)) < 0)
		return err;
	o->ids[o->n] = sqlite3_column_int64(st, 0);
	o->paths[o->n] = col_dup(st, 1, &ok);
	if (!ok || !o->paths[o->n])
		return ok ? pg_error_set(PG_EINVALID, "a notice of pull %lld has no path",
					 (long long)o->ids[o->n]) : pg_error_oom();
	o->n++;
	return 0;
}

int pg_store_notices(int64_t **ids, char ***paths, size_t *n, pg_store *s)
{
	sqlite3_stmt *st = NULL;
	outbox o = { NULL, NULL, 0, 0, 0 };
	int err;

	*ids = NULL;
	*paths = NULL;
	*n = 0;
	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, "SELECT pull, path FROM notices ORDER BY pull")) == 0)
		err = each_row(s, st, "notices", notice_row, &o);
	pthread_mutex_unlock(&s->lock);
	if (err < 0) {
		pg_str_list_free(o.paths, o.n);
		free(o.ids);
		return err;
	}
	*ids = o.ids;
	*paths = o.paths;
	*n = o.n;
	return 0;
}

int pg_store_meta_get(char **out, pg_store *s, const char *key)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	*out = NULL;
	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, "SELECT value FROM meta WHERE key = ?")) == 0) {
		bind_text(st, 1, key);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW &&
		    !(*out = pg_strdup((const char *)sqlite3_column_text(st, 0))))
			err = PG_ENOMEM;
		else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			err = fail(s, rc, "meta");
		done(s, st);
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

void pg_submission_release(pg_submission *sub)
{
	free(sub->note);
	memset(sub, 0, sizeof(*sub));
}

void pg_submissions_free(pg_submission *list, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		pg_submission_release(&list[i]);
	free(list);
}

#define SUBMISSION_COLUMNS "pull, run, state, tries, status, note, next_at, updated, seq"

/* A row of SUBMISSION_COLUMNS; a state the store never writes is damage. */
static int submission_row(pg_submission *sub, sqlite3_stmt *st)
{
	const char *state = (const char *)sqlite3_column_text(st, 2);
	bool ok = true;

	memset(sub, 0, sizeof(*sub));
	sub->pull = sqlite3_column_int64(st, 0);
	sub->run = sqlite3_column_int64(st, 1);
	if (!state || (strcmp(state, "queued") && strcmp(state, "retrying") &&
		       strcmp(state, "sent") && strcmp(state, "failed")))
		return pg_error_set(PG_EINVALID, "store: the KCIDB submission of pull %lld has no "
				    "state it knows", (long long)sub->pull);
	snprintf(sub->state, sizeof(sub->state), "%s", state);
	sub->tries = (unsigned)sqlite3_column_int(st, 3);
	sub->status = (unsigned)sqlite3_column_int(st, 4);
	sub->note = col_dup(st, 5, &ok);
	sub->next_at = sqlite3_column_int64(st, 6);
	sub->updated = sqlite3_column_int64(st, 7);
	sub->seq = sqlite3_column_int64(st, 8);
	return ok ? 0 : pg_error_oom();
}

int pg_store_submission(pg_submission *out, pg_store *s, int64_t id)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, "SELECT " SUBMISSION_COLUMNS " FROM kcidb_submissions"
			   " WHERE pull = ?")) == 0) {
		sqlite3_bind_int64(st, 1, id);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			err = submission_row(out, st);
		else if (rc == SQLITE_DONE)
			err = pg_error_set(PG_ENOTFOUND, "pull %lld has no KCIDB submission",
					   (long long)id);
		else
			err = fail(s, rc, "kcidb_submissions");
		done(s, st);
	}
	pthread_mutex_unlock(&s->lock);
	if (err < 0)
		pg_submission_release(out);
	return err;
}

typedef struct due_list {
	pg_submission *items;
	size_t n, alloc;
} due_list;

static int due_row(sqlite3_stmt *st, void *ctx)
{
	due_list *l = ctx;
	int err;

	if ((err = PG_ARRAY_GROW(l->items, l->n + 1, l->alloc)) < 0)
		return err;
	if ((err = submission_row(&l->items[l->n], st)) < 0) {
		pg_submission_release(&l->items[l->n]);
		return err;
	}
	l->n++;
	return 0;
}

int pg_store_submissions_due(pg_submission **out, size_t *n, pg_store *s)
{
	sqlite3_stmt *st = NULL;
	due_list l = { NULL, 0, 0 };
	int err;

	*out = NULL;
	*n = 0;
	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, "SELECT " SUBMISSION_COLUMNS " FROM kcidb_submissions"
			   " WHERE state IN ('queued', 'retrying') ORDER BY next_at, pull")) == 0)
		err = each_row(s, st, "kcidb_submissions", due_row, &l);
	pthread_mutex_unlock(&s->lock);
	if (err < 0) {
		pg_submissions_free(l.items, l.n);
		return err;
	}
	*out = l.items;
	*n = l.n;
	return 0;
}
