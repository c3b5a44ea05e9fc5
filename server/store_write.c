/* store_write.c - what changes the store: deliveries and their jobs, changes of state with reports and decisions. */
#include "server/store_sql.h"

static int delivery_row(sqlite3_stmt *st, void *ids)
{
	int64_t id = sqlite3_column_int64(st, 0);

	return pg_buf_put(ids, &id, sizeof(id));
}

/* A delivery seen before: PG_EEXISTS with its jobs' ids, or PG_ECONFLICT; 0 when new. */
static int seen(pg_store *s, pg_buf *ids, const char *delivery, const char *digest)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	if ((err = prepare(s, &st, "SELECT digest FROM deliveries WHERE id = ?")) < 0)
		return err;
	bind_text(st, 1, delivery);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(st, 0), digest))
		err = pg_error_set(PG_ECONFLICT, "delivery '%s' was seen with another body", delivery);
	else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		err = fail(s, rc, "deliveries");
	sqlite3_finalize(st);
	if (err < 0 || rc != SQLITE_ROW)
		return err;
	if ((err = prepare(s, &st, "SELECT id FROM pulls WHERE delivery = ? ORDER BY id")) < 0)
		return err;
	bind_text(st, 1, delivery);
	if ((err = each_row(s, st, "deliveries", delivery_row, ids)) < 0)
		return err;
	return pg_error_set(PG_EEXISTS, "delivery '%s' was seen already", delivery);
}

static int add_jobs(pg_store *s, pg_buf *ids, const char *delivery, const char *state,
		    const pg_job_spec *jobs, size_t njobs)
{
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc, err;

	if ((err = prepare(s, &st, "INSERT INTO pulls (delivery, kind, repo, repo_name, tag, expect,"
			   " sender, mail, state, created, updated)"
			   " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) < 0)
		return err;
	for (i = 0; i < njobs && err == 0; i++) {
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
		if ((rc = sqlite3_step(st)) != SQLITE_DONE)
			err = fail(s, rc, "pulls");
		id = sqlite3_last_insert_rowid(s->db);
		if (err == 0)
			err = pg_buf_put(ids, &id, sizeof(id));
	}
	sqlite3_finalize(st);
	return err;
}

int pg_store_add_delivery(pg_store *s, pg_buf *ids, const char *delivery, const char *hook,
			  const char *digest, const char *state, const pg_job_spec *jobs,
			  size_t njobs)
{
	sqlite3_stmt *st = NULL;
	int err;

	pthread_mutex_lock(&s->lock);
	if ((err = exec(s, "BEGIN IMMEDIATE")) == 0) {
		if ((err = seen(s, ids, delivery, digest)) == 0 &&
		    (err = prepare(s, &st, "INSERT INTO deliveries (id, hook, digest, at)"
				   " VALUES (?, ?, ?, ?)")) == 0) {
			bind_text(st, 1, delivery);
			bind_text(st, 2, hook);
			bind_text(st, 3, digest);
			sqlite3_bind_int64(st, 4, now());
			if ((err = step_done(s, st, "deliveries")) == 0)
				err = add_jobs(s, ids, delivery, state, jobs, njobs);
		}
		err = end_transaction(s, err);
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* Run sql, which takes a job's id and returns no row. */
static int exec_id(pg_store *s, const char *sql, int64_t id, const char *what)
{
	sqlite3_stmt *st = NULL;
	int err;

	if ((err = prepare(s, &st, sql)) < 0)
		return err;
	sqlite3_bind_int64(st, 1, id);
	return step_done(s, st, what);
}

/* The stages and findings of a report, in place of those of an earlier run. */
static int save_rows(pg_store *s, int64_t id, const pg_report *r)
{
	sqlite3_stmt *st = NULL;
	char c[PG_OID_HEXSZ + 1], u[PG_OID_HEXSZ + 1];
	size_t i;
	int rc, err;

	if ((err = exec_id(s, "DELETE FROM stages WHERE pull = ?", id, "stages")) < 0 ||
	    (err = exec_id(s, "DELETE FROM findings WHERE pull = ?", id, "findings")) < 0 ||
	    (err = prepare(s, &st, "INSERT INTO stages (pull, seq, name, status, seconds, log,"
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
	int err;

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
	if ((err = step_done(s, st, "pulls")) < 0)
		return err;
	return save_rows(s, id, r);
}

static int add_decision(pg_store *s, int64_t id, const char *user, const char *action,
			const char *note)
{
	sqlite3_stmt *st = NULL;
	int err;

	if ((err = prepare(s, &st, "INSERT INTO decisions (pull, user, action, at, note)"
			   " VALUES (?, ?, ?, ?, ?)")) < 0)
		return err;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, user);
	bind_text(st, 3, action);
	sqlite3_bind_int64(st, 4, now());
	bind_text(st, 5, note);
	return step_done(s, st, "decisions");
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
	if ((err = step_done(s, st, "pulls")) < 0 || sqlite3_changes(s->db) == 1)
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
		err = end_transaction(s, err);
	}
	pthread_mutex_unlock(&s->lock);
	pg_buf_release(&json);
	return err;
}

int pg_store_set_stage(pg_store *s, int64_t id, const char *stage, const char *status,
		       const char *summary)
{
	sqlite3_stmt *st = NULL;
	int err;

	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, "UPDATE stages SET status = ?, summary = ?"
			   " WHERE pull = ? AND name = ?")) == 0) {
		bind_text(st, 1, status);
		bind_text(st, 2, summary);
		sqlite3_bind_int64(st, 3, id);
		bind_text(st, 4, stage);
		if ((err = step_done(s, st, "stages")) == 0 && sqlite3_changes(s->db) == 0)
			err = pg_error_set(PG_ENOTFOUND, "pull %lld has no %s stage", (long long)id,
					   stage);
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}


int pg_store_note(pg_store *s, int64_t id, const char *user, const char *action,
		  const char *note)
{
	int err;

	pthread_mutex_lock(&s->lock);
	err = add_decision(s, id, user, action, note);
	pthread_mutex_unlock(&s->lock);
	return err;
}
