/* store.c - the SQLite job store: schema, transactions, and the queries the server needs. */
#include "server/store.h"
#include "common/error.h"

#include <pthread.h>
#include <sqlite3.h>
#include <time.h>

struct pg_store {
	sqlite3 *db;
	pthread_mutex_t lock;
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS deliveries ("
	"  id TEXT PRIMARY KEY, hook TEXT NOT NULL, digest TEXT NOT NULL, at INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS pulls ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT, delivery TEXT REFERENCES deliveries(id),"
	"  kind TEXT NOT NULL, repo TEXT NOT NULL, repo_name TEXT, tag TEXT NOT NULL,"
	"  expect TEXT, sender TEXT, mail BLOB, state TEXT NOT NULL, verdict TEXT,"
	"  errors INTEGER NOT NULL DEFAULT 0, warnings INTEGER NOT NULL DEFAULT 0,"
	"  commits INTEGER NOT NULL DEFAULT 0, merges INTEGER NOT NULL DEFAULT 0,"
	"  message TEXT, report TEXT, tag_object TEXT, tag_time INTEGER NOT NULL DEFAULT 0,"
	"  tag_offset INTEGER NOT NULL DEFAULT 0, merge_base TEXT, merge_commit TEXT,"
	"  attempts INTEGER NOT NULL DEFAULT 0,"
	"  created INTEGER NOT NULL, updated INTEGER NOT NULL);"
	"CREATE INDEX IF NOT EXISTS pulls_state ON pulls (state, id);"
	"CREATE INDEX IF NOT EXISTS pulls_delivery ON pulls (delivery);"
	"CREATE TABLE IF NOT EXISTS stages ("
	"  pull INTEGER NOT NULL REFERENCES pulls(id), seq INTEGER NOT NULL, name TEXT NOT NULL,"
	"  status TEXT NOT NULL, seconds REAL NOT NULL, log TEXT, summary TEXT,"
	"  PRIMARY KEY (pull, seq));"
	"CREATE TABLE IF NOT EXISTS findings ("
	"  pull INTEGER NOT NULL REFERENCES pulls(id), seq INTEGER NOT NULL,"
	"  check_id TEXT NOT NULL, severity TEXT NOT NULL, commit_id TEXT, upstream_id TEXT,"
	"  subject TEXT, message TEXT, PRIMARY KEY (pull, seq));"
	"CREATE INDEX IF NOT EXISTS findings_check ON findings (check_id);"
	"CREATE TABLE IF NOT EXISTS decisions ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT, pull INTEGER NOT NULL REFERENCES pulls(id),"
	"  user TEXT NOT NULL, action TEXT NOT NULL, at INTEGER NOT NULL, note TEXT);";

static const char job_columns[] =
	"id, delivery, kind, repo, repo_name, tag, expect, sender, mail, state, verdict, errors,"
	" warnings, commits, merges, message, report, tag_object, tag_time, tag_offset,"
	" merge_base, merge_commit, attempts, created, updated";

static int fail(pg_store *s, int rc, const char *what)
{
	int code = rc == SQLITE_NOMEM ? PG_ENOMEM :
		   rc == SQLITE_TOOBIG ? PG_ETOOBIG :
		   rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? PG_ECONFLICT : PG_EIO;

	return pg_error_set(code, "store: %s: %s", what, s->db ? sqlite3_errmsg(s->db) :
			    sqlite3_errstr(rc));
}

static int exec(pg_store *s, const char *sql)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : fail(s, rc, sql);
}

static int prepare(pg_store *s, sqlite3_stmt **st, const char *sql)
{
	int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);

	return rc == SQLITE_OK ? 0 : fail(s, rc, "prepare");
}

static int bind_text(sqlite3_stmt *st, int i, const char *v)
{
	return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

static int64_t now(void)
{
	return (int64_t)time(NULL);
}

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

int pg_store_open(pg_store **out, const char *path)
{
	pg_store *s = NULL;
	sqlite3_stmt *st = NULL;
	int rc, err = 0, version = 0;

	*out = NULL;
	if (!(s = calloc(1, sizeof(*s))))
		return pg_error_oom();
	pthread_mutex_init(&s->lock, NULL);
	rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			     SQLITE_OPEN_FULLMUTEX, NULL);
	if (rc != SQLITE_OK) {
		err = pg_error_set(PG_EIO, "store '%s': %s", path,
				   s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		goto done;
	}
	sqlite3_busy_timeout(s->db, 5000);
	/* WAL survives a SIGKILL with every committed transaction; NORMAL sync is enough in WAL */
	if ((err = exec(s, "PRAGMA journal_mode=WAL")) < 0 ||
	    (err = exec(s, "PRAGMA synchronous=NORMAL")) < 0 ||
	    (err = exec(s, "PRAGMA foreign_keys=ON")) < 0 ||
	    (err = exec(s, "BEGIN IMMEDIATE")) < 0)
		goto done;
	if ((err = exec(s, schema)) < 0 ||
	    (err = prepare(s, &st, "SELECT value FROM meta WHERE key = 'schema'")) < 0)
		goto rollback;
	if (sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (version > PG_STORE_SCHEMA_VERSION) {
		err = pg_error_set(PG_EINVALID, "store '%s' has schema %d; this pullgate knows %d",
				   path, version, PG_STORE_SCHEMA_VERSION);
		goto rollback;
	}
	if (version == 0 &&
	    (err = exec(s, "INSERT INTO meta (key, value) VALUES ('schema', '1')")) < 0)
		goto rollback;
	if ((err = exec(s, "COMMIT")) < 0)
		goto done;
	*out = s;
	s = NULL;
	goto done;
rollback:
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
done:
	sqlite3_finalize(st);
	pg_store_free(s);
	return err;
}

void pg_store_free(pg_store *s)
{
	if (!s)
		return;
	sqlite3_close(s->db);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void pg_job_free(pg_job *j)
{
	size_t i;

	if (!j)
		return;
	free(j->delivery);
	free(j->kind);
	free(j->repo);
	free(j->repo_name);
	free(j->tag);
	free(j->expect);
	free(j->sender);
	free(j->mail);
	free(j->state);
	free(j->verdict);
	free(j->message);
	free(j->report);
	free(j->tag_object);
	free(j->merge_base);
	free(j->merge_commit);
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

/* A job from a row selected with job_columns. */
static int read_job(pg_job **out, sqlite3_stmt *st, bool with_blobs)
{
	pg_job *j = calloc(1, sizeof(*j));
	bool ok = j != NULL;

	*out = NULL;
	if (!ok)
		return pg_error_oom();
	j->id = sqlite3_column_int64(st, 0);
	j->delivery = col_dup(st, 1, &ok);
	j->kind = col_dup(st, 2, &ok);
	j->repo = col_dup(st, 3, &ok);
	j->repo_name = col_dup(st, 4, &ok);
	j->tag = col_dup(st, 5, &ok);
	j->expect = col_dup(st, 6, &ok);
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
	j->state = col_dup(st, 9, &ok);
	j->verdict = col_dup(st, 10, &ok);
	j->errors = sqlite3_column_int(st, 11);
	j->warnings = sqlite3_column_int(st, 12);
	j->commits = sqlite3_column_int(st, 13);
	j->merges = sqlite3_column_int(st, 14);
	j->message = col_dup(st, 15, &ok);
	if (with_blobs)
		j->report = col_dup(st, 16, &ok);
	j->tag_object = col_dup(st, 17, &ok);
	j->tag_time = sqlite3_column_int64(st, 18);
	j->tag_offset = sqlite3_column_int(st, 19);
	j->merge_base = col_dup(st, 20, &ok);
	j->merge_commit = col_dup(st, 21, &ok);
	j->attempts = sqlite3_column_int(st, 22);
	j->created = sqlite3_column_int64(st, 23);
	j->updated = sqlite3_column_int64(st, 24);
	if (!ok) {
		pg_job_free(j);
		return pg_error_oom();
	}
	*out = j;
	return 0;
}

static int ids_of_delivery(pg_store *s, pg_buf *ids, const char *delivery)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	if ((err = prepare(s, &st, "SELECT id FROM pulls WHERE delivery = ? ORDER BY id")) < 0)
		return err;
	bind_text(st, 1, delivery);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && err == 0) {
		int64_t id = sqlite3_column_int64(st, 0);

		err = pg_buf_put(ids, &id, sizeof(id));
	}
	if (err == 0 && rc != SQLITE_DONE)
		err = fail(s, rc, "deliveries");
	sqlite3_finalize(st);
	return err;
}

int pg_store_add_delivery(pg_store *s, pg_buf *ids, const char *delivery, const char *hook,
			  const char *digest, const char *state, const pg_job_spec *jobs,
			  size_t njobs)
{
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc, err;

	pthread_mutex_lock(&s->lock);
	if ((err = exec(s, "BEGIN IMMEDIATE")) < 0)
		goto unlock;
	if ((err = prepare(s, &st, "SELECT digest FROM deliveries WHERE id = ?")) < 0)
		goto rollback;
	bind_text(st, 1, delivery);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		bool same = !strcmp((const char *)sqlite3_column_text(st, 0), digest);

		sqlite3_finalize(st);
		st = NULL;
		if (!same) {
			err = pg_error_set(PG_ECONFLICT, "delivery '%s' was seen with another body",
					   delivery);
			goto rollback;
		}
		if ((err = ids_of_delivery(s, ids, delivery)) == 0)
			err = pg_error_set(PG_EEXISTS, "delivery '%s' was seen already", delivery);
		goto rollback;
	}
	if (rc != SQLITE_DONE) {
		err = fail(s, rc, "deliveries");
		goto rollback;
	}
	sqlite3_finalize(st);
	st = NULL;
	if ((err = prepare(s, &st, "INSERT INTO deliveries (id, hook, digest, at) VALUES (?, ?, ?, ?)")) < 0)
		goto rollback;
	bind_text(st, 1, delivery);
	bind_text(st, 2, hook);
	bind_text(st, 3, digest);
	sqlite3_bind_int64(st, 4, now());
	if ((rc = sqlite3_step(st)) != SQLITE_DONE) {
		err = fail(s, rc, "deliveries");
		goto rollback;
	}
	sqlite3_finalize(st);
	st = NULL;
	if ((err = prepare(s, &st, "INSERT INTO pulls (delivery, kind, repo, repo_name, tag, expect,"
			   " sender, mail, state, created, updated)"
			   " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) < 0)
		goto rollback;
	for (i = 0; i < njobs; i++) {
		int64_t id;

		sqlite3_reset(st);
		bind_text(st, 1, delivery);
		bind_text(st, 2, jobs[i].kind);
		bind_text(st, 3, jobs[i].repo);
		bind_text(st, 4, jobs[i].repo_name);
		bind_text(st, 5, jobs[i].tag);
		bind_text(st, 6, jobs[i].expect);
		bind_text(st, 7, jobs[i].sender);
		if (jobs[i].mail)
			sqlite3_bind_blob64(st, 8, jobs[i].mail, jobs[i].mail_len, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(st, 8);
		bind_text(st, 9, state);
		sqlite3_bind_int64(st, 10, now());
		sqlite3_bind_int64(st, 11, now());
		if ((rc = sqlite3_step(st)) != SQLITE_DONE) {
			err = fail(s, rc, "pulls");
			goto rollback;
		}
		id = sqlite3_last_insert_rowid(s->db);
		if ((err = pg_buf_put(ids, &id, sizeof(id))) < 0)
			goto rollback;
	}
	sqlite3_finalize(st);
	st = NULL;
	err = exec(s, "COMMIT");
	if (err == 0)
		goto unlock;
rollback:
	sqlite3_finalize(st);
	st = NULL;
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
unlock:
	pthread_mutex_unlock(&s->lock);
	return err;
}

static int select_job(pg_store *s, pg_job **out, const char *where, const char *arg, int64_t id)
{
	sqlite3_stmt *st = NULL;
	pg_buf sql = PG_BUF_INIT;
	int rc, err;

	*out = NULL;
	if ((err = pg_buf_printf(&sql, "SELECT %s FROM pulls WHERE %s", job_columns, where)) < 0 ||
	    (err = prepare(s, &st, sql.ptr)) < 0)
		goto done;
	if (arg)
		bind_text(st, 1, arg);
	else
		sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		err = read_job(out, st, true);
	else if (rc != SQLITE_DONE)
		err = fail(s, rc, "pulls");
done:
	sqlite3_finalize(st);
	pg_buf_release(&sql);
	return err;
}

int pg_store_oldest(pg_store *s, pg_job **out, const char *state)
{
	int err;

	pthread_mutex_lock(&s->lock);
	err = select_job(s, out, "state = ? ORDER BY id LIMIT 1", state, 0);
	pthread_mutex_unlock(&s->lock);
	return err;
}

static int read_details(pg_store *s, pg_job *j)
{
	sqlite3_stmt *st = NULL;
	bool ok = true;
	int rc, err;

	if ((err = prepare(s, &st, "SELECT name, status, seconds, log, summary FROM stages"
			   " WHERE pull = ? ORDER BY seq")) < 0)
		return err;
	sqlite3_bind_int64(st, 1, j->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && ok) {
		pg_job_stage *g = realloc(j->stages, (j->nstages + 1) * sizeof(*g)), *x;

		if (!g) {
			ok = false;
			break;
		}
		j->stages = g;
		x = &g[j->nstages++];
		memset(x, 0, sizeof(*x));
		x->name = col_dup(st, 0, &ok);
		x->status = col_dup(st, 1, &ok);
		x->seconds = sqlite3_column_double(st, 2);
		x->log = col_dup(st, 3, &ok);
		x->summary = col_dup(st, 4, &ok);
	}
	sqlite3_finalize(st);
	if (!ok)
		return pg_error_oom();
	if ((err = prepare(s, &st, "SELECT user, action, at, note FROM decisions"
			   " WHERE pull = ? ORDER BY id")) < 0)
		return err;
	sqlite3_bind_int64(st, 1, j->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && ok) {
		pg_job_decision *g = realloc(j->decisions, (j->ndecisions + 1) * sizeof(*g)), *x;

		if (!g) {
			ok = false;
			break;
		}
		j->decisions = g;
		x = &g[j->ndecisions++];
		memset(x, 0, sizeof(*x));
		x->user = col_dup(st, 0, &ok);
		x->action = col_dup(st, 1, &ok);
		x->at = sqlite3_column_int64(st, 2);
		x->note = col_dup(st, 3, &ok);
	}
	sqlite3_finalize(st);
	return ok ? 0 : pg_error_oom();
}

int pg_store_get(pg_store *s, pg_job **out, int64_t id)
{
	pg_job *j = NULL;
	int err;

	*out = NULL;
	pthread_mutex_lock(&s->lock);
	if ((err = select_job(s, &j, "id = ?", NULL, id)) == 0 && !j)
		err = pg_error_set(PG_ENOTFOUND, "pull %lld does not exist", (long long)id);
	if (err == 0)
		err = read_details(s, j);
	pthread_mutex_unlock(&s->lock);
	if (err < 0) {
		pg_job_free(j);
		return err;
	}
	*out = j;
	return 0;
}

static int save_rows(pg_store *s, int64_t id, const pg_report *r)
{
	sqlite3_stmt *st = NULL;
	char c[PG_OID_HEXSZ + 1], u[PG_OID_HEXSZ + 1];
	size_t i;
	int rc, err;

	sqlite3_stmt *del = NULL;

	if ((err = prepare(s, &del, "DELETE FROM stages WHERE pull = ?")) < 0)
		return err;
	sqlite3_bind_int64(del, 1, id);
	rc = sqlite3_step(del);
	sqlite3_finalize(del);
	if (rc != SQLITE_DONE)
		return fail(s, rc, "stages");
	if ((err = prepare(s, &del, "DELETE FROM findings WHERE pull = ?")) < 0)
		return err;
	sqlite3_bind_int64(del, 1, id);
	rc = sqlite3_step(del);
	sqlite3_finalize(del);
	if (rc != SQLITE_DONE)
		return fail(s, rc, "findings");

	if ((err = prepare(s, &st, "INSERT INTO stages (pull, seq, name, status, seconds, log,"
			   " summary) VALUES (?, ?, ?, ?, ?, ?, ?)")) < 0)
		return err;
	for (i = 0; i < r->nstages && err == 0; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, (int64_t)i);
		bind_text(st, 3, r->stages[i].name);
		bind_text(st, 4, pg_stage_status_name(r->stages[i].status));
		sqlite3_bind_double(st, 5, (double)r->stages[i].elapsed_ms / 1000);
		bind_text(st, 6, r->stages[i].log);
		bind_text(st, 7, r->stages[i].summary);
		if ((rc = sqlite3_step(st)) != SQLITE_DONE)
			err = fail(s, rc, "stages");
	}
	sqlite3_finalize(st);
	if (err < 0 || (err = prepare(s, &st, "INSERT INTO findings (pull, seq, check_id, severity,"
				      " commit_id, upstream_id, subject, message)"
				      " VALUES (?, ?, ?, ?, ?, ?, ?, ?)")) < 0)
		return err;
	for (i = 0; i < r->nfindings && err == 0; i++) {
		const pg_finding *f = &r->findings[i];

		pg_oid_tohex(c, &f->commit);
		pg_oid_tohex(u, &f->upstream);
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, (int64_t)i);
		bind_text(st, 3, pg_check_name(f->check));
		bind_text(st, 4, pg_severity_name(f->severity));
		bind_text(st, 5, f->has_commit ? c : NULL);
		bind_text(st, 6, f->has_upstream ? u : NULL);
		bind_text(st, 7, f->subject);
		bind_text(st, 8, f->message);
		if ((rc = sqlite3_step(st)) != SQLITE_DONE)
			err = fail(s, rc, "findings");
	}
	sqlite3_finalize(st);
	return err;
}

/* The report's columns of a job; its stages and findings are save_rows'. */
static int save_report(pg_store *s, int64_t id, const pg_report *r, const pg_buf *json)
{
	sqlite3_stmt *st = NULL;
	char obj[PG_OID_HEXSZ + 1], base[PG_OID_HEXSZ + 1], merge[PG_OID_HEXSZ + 1];
	int rc, err;

	pg_oid_tohex(obj, &r->tag_object);
	pg_oid_tohex(base, &r->merge_base);
	pg_oid_tohex(merge, &r->merge_commit);
	if ((err = prepare(s, &st, "UPDATE pulls SET verdict = ?, errors = ?, warnings = ?,"
			   " commits = ?, merges = ?, report = ?, tag_object = ?, tag_time = ?,"
			   " tag_offset = ?, merge_base = ?, merge_commit = ? WHERE id = ?")) < 0)
		return err;
	bind_text(st, 1, pg_report_verdict(r) == PG_VERDICT_ACCEPT ? "accept" : "reject");
	sqlite3_bind_int64(st, 2, (int64_t)pg_report_count(r, PG_SEV_ERROR));
	sqlite3_bind_int64(st, 3, (int64_t)pg_report_count(r, PG_SEV_WARNING));
	sqlite3_bind_int64(st, 4, (int64_t)r->ncommits);
	sqlite3_bind_int64(st, 5, (int64_t)r->nmerges);
	sqlite3_bind_text(st, 6, json->ptr, (int)json->len, SQLITE_TRANSIENT);
	bind_text(st, 7, obj);
	sqlite3_bind_int64(st, 8, r->tag_time);
	sqlite3_bind_int(st, 9, r->tag_offset);
	bind_text(st, 10, r->has_merge ? base : NULL);
	bind_text(st, 11, r->has_merge ? merge : NULL);
	sqlite3_bind_int64(st, 12, id);
	rc = sqlite3_step(st);
	err = rc == SQLITE_DONE ? 0 : fail(s, rc, "pulls");
	sqlite3_finalize(st);
	return err < 0 ? err : save_rows(s, id, r);
}

static int add_decision(pg_store *s, int64_t id, const char *user, const char *action,
			const char *note)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	if ((err = prepare(s, &st, "INSERT INTO decisions (pull, user, action, at, note)"
			   " VALUES (?, ?, ?, ?, ?)")) < 0)
		return err;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, user);
	bind_text(st, 3, action);
	sqlite3_bind_int64(st, 4, now());
	bind_text(st, 5, note);
	rc = sqlite3_step(st);
	err = rc == SQLITE_DONE ? 0 : fail(s, rc, "decisions");
	sqlite3_finalize(st);
	return err;
}

/* The compare-and-swap: from to to only while the job is in from. */
static int swap_state(pg_store *s, int64_t id, const char *from, const char *to,
		      const pg_store_update *u)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	if ((err = prepare(s, &st, "UPDATE pulls SET state = ?, message = ?, updated = ?,"
			   " attempts = attempts + ? WHERE id = ? AND state = ?")) < 0)
		return err;
	bind_text(st, 1, to);
	bind_text(st, 2, u->message);
	sqlite3_bind_int64(st, 3, now());
	sqlite3_bind_int(st, 4, u->new_run ? 1 : 0);
	sqlite3_bind_int64(st, 5, id);
	bind_text(st, 6, from);
	rc = sqlite3_step(st);
	err = rc == SQLITE_DONE ? 0 : fail(s, rc, "pulls");
	sqlite3_finalize(st);
	if (err < 0 || sqlite3_changes(s->db) == 1)
		return err;
	/* nothing changed: say why */
	if ((err = prepare(s, &st, "SELECT state FROM pulls WHERE id = ?")) < 0)
		return err;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		err = pg_error_set(PG_ECONFLICT, "pull %lld is %s, not %s", (long long)id,
				   (const char *)sqlite3_column_text(st, 0), from);
	else if (rc == SQLITE_DONE)
		err = pg_error_set(PG_ENOTFOUND, "pull %lld does not exist", (long long)id);
	else
		err = fail(s, rc, "pulls");
	sqlite3_finalize(st);
	return err;
}

int pg_store_set_state(pg_store *s, int64_t id, const char *from, const char *to,
		       const pg_store_update *u)
{
	pg_buf json = PG_BUF_INIT;
	int err;

	if (u->report && (err = pg_report_format_json(&json, u->report)) < 0)
		return err;
	pthread_mutex_lock(&s->lock);
	if ((err = exec(s, "BEGIN IMMEDIATE")) == 0) {
		if ((err = swap_state(s, id, from, to, u)) == 0 && u->report)
			err = save_report(s, id, u->report, &json);
		if (err == 0 && u->action)
			err = add_decision(s, id, u->user, u->action, u->message);
		if (err < 0 || (err = exec(s, "COMMIT")) < 0)
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	}
	pthread_mutex_unlock(&s->lock);
	pg_buf_release(&json);
	return err;
}

int pg_store_set_stage(pg_store *s, int64_t id, const char *stage, const char *status,
		       const char *summary)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, "UPDATE stages SET status = ?, summary = ? WHERE pull = ? AND name = ?")) == 0) {
		bind_text(st, 1, status);
		bind_text(st, 2, summary);
		sqlite3_bind_int64(st, 3, id);
		bind_text(st, 4, stage);
		if ((rc = sqlite3_step(st)) != SQLITE_DONE)
			err = fail(s, rc, "stages");
		else if (sqlite3_changes(s->db) == 0)
			err = pg_error_set(PG_ENOTFOUND, "pull %lld has no %s stage", (long long)id, stage);
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->lock);
	return err;
}

void pg_job_list_release(pg_job_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		pg_job_free(l->items[i]);
	free(l->items);
	memset(l, 0, sizeof(*l));
}

int pg_store_list(pg_store *s, pg_job_list *out, const char *state, size_t offset, size_t limit)
{
	sqlite3_stmt *st = NULL;
	pg_buf sql = PG_BUF_INIT;
	int rc, err;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, state ? "SELECT count(*) FROM pulls WHERE state = ?" :
			   "SELECT count(*) FROM pulls")) < 0)
		goto unlock;
	if (state)
		bind_text(st, 1, state);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		out->total = (size_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if ((err = pg_buf_printf(&sql, "SELECT %s FROM pulls %s ORDER BY id DESC LIMIT ? OFFSET ?",
				 job_columns, state ? "WHERE state = ?" : "")) < 0 ||
	    (err = prepare(s, &st, sql.ptr)) < 0)
		goto unlock;
	if (state)
		bind_text(st, 1, state);
	sqlite3_bind_int64(st, state ? 2 : 1, (int64_t)limit);
	sqlite3_bind_int64(st, state ? 3 : 2, (int64_t)offset);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		pg_job **g = realloc(out->items, (out->n + 1) * sizeof(*g));

		if (!g) {
			err = pg_error_oom();
			break;
		}
		out->items = g;
		if ((err = read_job(&g[out->n], st, false)) < 0)
			break;
		out->n++;
	}
	if (err == 0 && rc != SQLITE_DONE)
		err = fail(s, rc, "pulls");
unlock:
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->lock);
	pg_buf_release(&sql);
	if (err < 0)
		pg_job_list_release(out);
	return err;
}

int pg_store_count_states(pg_store *s, pg_store_count_fn fn, void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, "SELECT state, count(*) FROM pulls GROUP BY state ORDER BY state")) == 0) {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			fn(ctx, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1));
		if (rc != SQLITE_DONE)
			err = fail(s, rc, "pulls");
	}
	sqlite3_finalize(st);
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
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->lock);
	return err;
}

int pg_store_ping(pg_store *s)
{
	int err;

	pthread_mutex_lock(&s->lock);
	err = exec(s, "SELECT 1 FROM meta LIMIT 1");
	pthread_mutex_unlock(&s->lock);
	return err;
}
