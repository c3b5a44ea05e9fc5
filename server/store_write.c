/* store_write.c - what changes the store: deliveries and their jobs (committed in groups), changes of state with reports and decisions. */
#include "server/store_sql.h"
#include "common/array.h"
#include "common/testpoint.h"

static int delivery_row(sqlite3_stmt *st, void *ids)
{
	int64_t id = sqlite3_column_int64(st, 0);

	return pg_buf_put(ids, &id, sizeof(id));
}

/* The pulls a recorded delivery names, in order. */
static int delivery_pulls(pg_buf *ids, pg_store *s, const char *delivery)
{
	sqlite3_stmt *st = NULL;
	int err;

	if ((err = prepare(s, &st, "SELECT pull FROM delivery_pulls WHERE delivery = ?"
			   " ORDER BY pull")) < 0)
		return err;
	bind_text(st, 1, delivery);
	return each_row(s, st, "deliveries", delivery_row, ids);
}

/*
 * A delivery seen before: PG_EEXISTS with its jobs' ids (a retry, or a
 * replay of what another delivery signed), or PG_ECONFLICT; 0 when new.
 */
static int seen(pg_buf *ids, pg_store *s, const pg_delivery *d)
{
	sqlite3_stmt *st = NULL;
	char *first = NULL;
	int rc, err;

	if ((err = prepare(s, &st, "SELECT digest FROM deliveries WHERE id = ?")) < 0)
		return err;
	bind_text(st, 1, d->id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(st, 0), d->digest))
		err = pg_error_set(PG_ECONFLICT, "delivery '%s' was seen with another body", d->id);
	else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		err = fail(s, rc, "deliveries");
	done(s, st);
	if (err < 0)
		return err;
	if (rc == SQLITE_ROW) {
		if ((err = delivery_pulls(ids, s, d->id)) < 0)
			return err;
		return pg_error_set(PG_EEXISTS, "this delivery was received before: no new job");
	}
	if (!d->signature)
		return 0;
	if ((err = prepare(s, &st, "SELECT id FROM deliveries WHERE signature = ? LIMIT 1")) < 0)
		return err;
	bind_text(st, 1, d->signature);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && !(first = pg_strdup((const char *)sqlite3_column_text(st, 0))))
		err = PG_ENOMEM;
	else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		err = fail(s, rc, "deliveries");
	done(s, st);
	if (err == 0 && first && (err = delivery_pulls(ids, s, first)) == 0)
		err = pg_error_set(PG_EEXISTS, "this signed request was received before, as "
				   "delivery '%.128s': a replay makes no new job", first);
	free(first);
	return err;
}

/* An open job with the same dedupe key: its id in *id, or 0. */
static int open_twin(int64_t *id, pg_store *s, const pg_delivery *d, const char *dedupe)
{
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc = SQLITE_DONE, err;

	*id = 0;
	if (!dedupe)
		return 0;
	/* the pulls of one key are few: look at each one's state */
	if ((err = prepare(s, &st, "SELECT id, state FROM pulls WHERE dedupe = ? ORDER BY id")) < 0)
		return err;
	bind_text(st, 1, dedupe);
	while (!*id && (rc = sqlite3_step(st)) == SQLITE_ROW)
		for (i = 0; i < d->nopen; i++)
			if (!strcmp((const char *)sqlite3_column_text(st, 1),
				    pg_job_state_name(d->open[i])))
				*id = sqlite3_column_int64(st, 0);
	if (!*id && rc != SQLITE_DONE)
		err = fail(s, rc, "pulls");
	done(s, st);
	return err;
}

static int link_pull(pg_store *s, const char *delivery, int64_t id)
{
	sqlite3_stmt *st = NULL;
	int err;

	if ((err = prepare(s, &st, "INSERT OR IGNORE INTO delivery_pulls (delivery, pull)"
			   " VALUES (?, ?)")) < 0)
		return err;
	bind_text(st, 1, delivery);
	sqlite3_bind_int64(st, 2, id);
	return step_done(s, st, "deliveries");
}

static int add_jobs(pg_buf *ids, size_t *created, pg_store *s, const pg_delivery *d)
{
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc, err = 0;

	for (i = 0; i < d->njobs && err == 0; i++) {
		const pg_job_spec *j = &d->jobs[i];
		char expect[PG_OID_HEXSZ + 1];
		int64_t id;

		if ((err = open_twin(&id, s, d, j->dedupe)) < 0)
			break;
		if (!id) {
			if ((err = prepare(s, &st, "INSERT INTO pulls (delivery, kind, repo, repo_name,"
					   " tag, expect, sender, mail, state, created, updated, dedupe)"
					   " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) < 0)
				break;
			if (j->expect)
				pg_oid_tohex(expect, j->expect);
			bind_text(st, 1, d->id);
			bind_text(st, 2, pg_job_kind_name(j->kind));
			bind_text(st, 3, j->repo);
			bind_text(st, 4, j->repo_name);
			bind_text(st, 5, j->tag);
			bind_text(st, 6, j->expect ? expect : NULL);
			bind_text(st, 7, j->sender);
			if (j->mail)
				sqlite3_bind_blob64(st, 8, j->mail, j->mail_len, SQLITE_TRANSIENT);
			bind_text(st, 9, pg_job_state_name(d->state));
			sqlite3_bind_int64(st, 10, now());
			sqlite3_bind_int64(st, 11, now());
			bind_text(st, 12, j->dedupe);
			if ((rc = sqlite3_step(st)) != SQLITE_DONE)
				err = fail(s, rc, "pulls");
			id = sqlite3_last_insert_rowid(s->db);
			done(s, st);
			(*created)++;
		}
		if (err == 0 && (err = link_pull(s, d->id, id)) == 0)
			err = pg_buf_put(ids, &id, sizeof(id));
	}
	return err;
}

/* One delivery, inside the group's transaction. */
static int add_one(pg_buf *ids, size_t *created, pg_store *s, const pg_delivery *d)
{
	sqlite3_stmt *st = NULL;
	int err;

	if ((err = seen(ids, s, d)) < 0 || (err = prepare(s, &st, "INSERT INTO deliveries"
							     " (id, hook, digest, at, signature)"
							     " VALUES (?, ?, ?, ?, ?)")) < 0)
		return err;
	bind_text(st, 1, d->id);
	bind_text(st, 2, d->hook);
	bind_text(st, 3, d->digest);
	sqlite3_bind_int64(st, 4, now());
	bind_text(st, 5, d->signature);
	if ((err = step_done(s, st, "deliveries")) < 0)
		return err;
	return add_jobs(ids, created, s, d);
}

/* A delivery waiting for its group's commit, and its answer. */
struct pg_store_pending {
	const pg_delivery *d;
	pg_buf *ids;
	size_t *created;
	size_t ids_len;          /* where its ids start, to take them back on failure */
	int err;
	char msg[512];
	bool done;
	pg_store_pending *next;
};

/*
 * Record a group of deliveries in one transaction: one sync for them all.
 * Each is a savepoint of its own, so that one that fails (a conflict, a
 * replay) takes nothing of the others with it.
 */
static void commit_group(pg_store *s, pg_store_pending *group)
{
	pg_store_pending *p;
	int err;

	pthread_mutex_lock(&s->lock);
	err = pg_store_begin_write(s);
	for (p = group; p && err == 0; p = p->next) {
		p->ids_len = p->ids->len;
		*p->created = 0;
		if ((err = run(s, "SAVEPOINT delivery")) < 0)
			break;
		pg_error_clear();
		p->err = add_one(p->ids, p->created, s, p->d);
		snprintf(p->msg, sizeof(p->msg), "%s", pg_error_last());
		if (p->err < 0 && (err = run(s, "ROLLBACK TO delivery")) < 0)
			break;
		if ((err = run(s, "RELEASE delivery")) < 0)
			break;
	}
	err = pg_store_end_write(s, err);
	pthread_mutex_unlock(&s->lock);
	for (p = group; p; p = p->next) {
		/* nothing of the group is stored: each says why */
		if (err < 0 && p->err >= 0) {
			p->err = err;
			snprintf(p->msg, sizeof(p->msg), "%s", pg_error_last());
		}
		if (p->err < 0)
			*p->created = 0;
		if (p->err < 0 && p->err != PG_EEXISTS)
			pg_buf_truncate(p->ids, p->ids_len);
	}
}

int pg_store_add_delivery(pg_buf *ids, size_t *created, pg_store *s, const pg_delivery *d)
{
	pg_store_pending me, *group;

	memset(&me, 0, sizeof(me));
	me.d = d;
	me.ids = ids;
	me.created = created;
	*created = 0;
	pthread_mutex_lock(&s->group_lock);
	*s->queue_tail = &me;
	s->queue_tail = &me.next;
	/* whoever finds no commit under way commits what is queued, its own delivery included */
	while (!me.done) {
		if (s->committing) {
			pthread_cond_wait(&s->group_done, &s->group_lock);
			continue;
		}
		s->committing = true;
		group = s->queue;
		s->queue = NULL;
		s->queue_tail = &s->queue;
		pthread_mutex_unlock(&s->group_lock);
		commit_group(s, group);
		pthread_mutex_lock(&s->group_lock);
		while (group) {
			pg_store_pending *next = group->next;

			group->done = true;
			group = next;
		}
		s->committing = false;
		pthread_cond_broadcast(&s->group_done);
	}
	pthread_mutex_unlock(&s->group_lock);
	if (me.err < 0)
		return pg_error_set(me.err, "%s", me.msg);
	return 0;
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
	done(s, st);
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
	done(s, st);
	return err;
}

/*
 * The report's columns of a job, its verdict and counts from the whole
 * report r; its stages and the findings the view kept are save_rows'.
 */
static int save_report(pg_store *s, int64_t id, const pg_store_update *u,
		       const pg_report *view, const pg_buf *json)
{
	sqlite3_stmt *st = NULL;
	char obj[PG_OID_HEXSZ + 1], base[PG_OID_HEXSZ + 1], merge[PG_OID_HEXSZ + 1];
	const pg_report *r = u->report;
	int err;

	pg_oid_tohex(obj, &r->tag_object);
	pg_oid_tohex(base, &r->merge_base);
	pg_oid_tohex(merge, &r->merge_commit);
	if ((err = prepare(s, &st, "UPDATE pulls SET verdict = ?, errors = ?, warnings = ?,"
			   " commits = ?, merges = ?, report = ?, tag_object = ?, tag_time = ?,"
			   " tag_offset = ?, merge_base = ?, merge_commit = ?, simulated = ?,"
			   " tag_signer = ?, run_dir = ?, attribution = ?, with_pull = ? WHERE id = ?")) < 0)
		return err;
	bind_text(st, 1, pg_job_verdict_name(pg_report_verdict(r)));
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
	sqlite3_bind_int(st, 12, r->simulated);
	bind_text(st, 13, r->tag_signer);
	bind_text(st, 14, r->run_dir);
	bind_text(st, 15, u->attribution);
	if (u->with_pull)
		sqlite3_bind_int64(st, 16, u->with_pull);
	else
		sqlite3_bind_null(st, 16);
	sqlite3_bind_int64(st, 17, id);
	if ((err = step_done(s, st, "pulls")) < 0)
		return err;
	return save_rows(s, id, view);
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
static int swap_state(pg_store *s, int64_t id, enum pg_job_state from, enum pg_job_state to,
		      const pg_store_update *u)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	/* accepted by verify the first time: into the queue, behind every pull in it */
	if ((err = prepare(s, &st, "UPDATE pulls SET state = ?, message = ?, updated = ?,"
			   " attempts = attempts + ?, queue_rank = CASE WHEN ? THEN"
			   " coalesce(queue_rank, (SELECT coalesce(max(queue_rank), 0) + 1 FROM pulls))"
			   " ELSE queue_rank END,"
			   " merge_base = CASE WHEN ? THEN NULL ELSE merge_base END,"
			   " merge_commit = CASE WHEN ? THEN NULL ELSE merge_commit END"
			   " WHERE id = ? AND state = ?")) < 0)
		return err;
	bind_text(st, 1, pg_job_state_name(to));
	bind_text(st, 2, u->message);
	sqlite3_bind_int64(st, 3, now());
	sqlite3_bind_int(st, 4, u->new_run ? 1 : 0);
	sqlite3_bind_int(st, 5, to == PG_JOB_VERIFIED);
	/* a new run of the kernel stages: the last run's merge is no longer the one tested */
	sqlite3_bind_int(st, 6, to == PG_JOB_MERGING);
	sqlite3_bind_int(st, 7, to == PG_JOB_MERGING);
	sqlite3_bind_int64(st, 8, id);
	bind_text(st, 9, pg_job_state_name(from));
	if ((err = step_done(s, st, "pulls")) < 0 || sqlite3_changes(s->db) == 1)
		return err;
	/* nothing changed: say why */
	if ((err = prepare(s, &st, "SELECT state FROM pulls WHERE id = ?")) < 0)
		return err;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		err = pg_error_set(PG_ECONFLICT, "pull %lld is %s, not %s", (long long)id,
				   (const char *)sqlite3_column_text(st, 0), pg_job_state_name(from));
	else if (rc == SQLITE_DONE)
		err = pg_error_set(PG_ENOTFOUND, "pull %lld does not exist", (long long)id);
	else
		err = fail(s, rc, "pulls");
	done(s, st);
	return err;
}

/* Into the outbox, in the transaction that approves the pull. */
static int put_notice(pg_store *s, int64_t id, const char *path)
{
	sqlite3_stmt *st = NULL;
	int err;

	if ((err = prepare(s, &st, "INSERT OR REPLACE INTO notices (pull, path) VALUES (?, ?)")) < 0)
		return err;
	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, path);
	return step_done(s, st, "notices");
}

/* Into the submission outbox, in the transaction that stores the decided run's report. */
static int put_submission(pg_store *s, int64_t id)
{
	sqlite3_stmt *st = NULL;
	int err;

	if ((err = prepare(s, &st, "INSERT OR REPLACE INTO kcidb_submissions"
			   " (pull, run, seq, state, tries, status, note, next_at, updated)"
			   " SELECT id, attempts, 1 + COALESCE((SELECT seq FROM kcidb_submissions"
			   " WHERE pull = ?1), 0), 'queued', 0, 0, NULL, 0, ?2 FROM pulls"
			   " WHERE id = ?1")) < 0)
		return err;
	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, now());
	return step_done(s, st, "kcidb_submissions");
}

int pg_store_set_state(pg_store *s, int64_t id, enum pg_job_state from, enum pg_job_state to,
		       const pg_store_update *u)
{
	pg_buf json = PG_BUF_INIT;
	pg_report view;
	pg_finding *kept = NULL;
	int err;

	if (pg_testfault("store", pg_job_state_name(to)))
		return pg_error_set(PG_EIO, "store: pulls: pull %lld not made %s (a test's fault)",
				    (long long)id, pg_job_state_name(to));
	/* the whole report is never formatted: only what the store keeps of it */
	if (u->report && (err = pg_store_report_json(&json, &view, &kept, s, u->report)) < 0) {
		free(kept);
		pg_buf_release(&json);
		return err;
	}
	pthread_mutex_lock(&s->lock);
	/* a decision a person was told of is on disk before they are told */
	if (u->action && s->sync_decisions_only && (err = exec(s, "PRAGMA synchronous=FULL")) < 0)
		goto unlock;
	if ((err = pg_store_begin_write(s)) == 0 && (err = swap_state(s, id, from, to, u)) == 0 &&
	    u->report)
		err = save_report(s, id, u, &view, &json);
	if (err == 0 && u->action)
		err = add_decision(s, id, u->user, u->action, u->message);
	if (err == 0 && u->notice)
		err = put_notice(s, id, u->notice);
	if (err == 0 && u->kcidb && u->report)
		err = put_submission(s, id);
	err = pg_store_end_write(s, err);
	if (u->action && s->sync_decisions_only)
		sqlite3_exec(s->db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
unlock:
	pthread_mutex_unlock(&s->lock);
	pg_buf_release(&json);
	free(kept);
	return err;
}

int pg_store_set_stage(pg_store *s, int64_t id, const char *stage, const char *status,
		       const char *summary)
{
	sqlite3_stmt *st = NULL;
	int err;

	pthread_mutex_lock(&s->lock);
	if ((err = pg_store_begin_write(s)) == 0 &&
	    (err = prepare(s, &st, "UPDATE stages SET status = ?, summary = ?"
			   " WHERE pull = ? AND name = ?")) == 0) {
		bind_text(st, 1, status);
		bind_text(st, 2, summary);
		sqlite3_bind_int64(st, 3, id);
		bind_text(st, 4, stage);
		if ((err = step_done(s, st, "stages")) == 0 && sqlite3_changes(s->db) == 0)
			err = pg_error_set(PG_ENOTFOUND, "pull %lld has no %s stage", (long long)id,
					   stage);
	}
	err = pg_store_end_write(s, err);
	pthread_mutex_unlock(&s->lock);
	return err;
}


int pg_store_notice_done(pg_store *s, int64_t id, const char *note)
{
	sqlite3_stmt *st = NULL;
	int err;

	pthread_mutex_lock(&s->lock);
	if ((err = pg_store_begin_write(s)) == 0 &&
	    (err = prepare(s, &st, "DELETE FROM notices WHERE pull = ?")) == 0) {
		sqlite3_bind_int64(st, 1, id);
		err = step_done(s, st, "notices");
	}
	if (err == 0 && note)
		err = add_decision(s, id, "pullgate", "notice", note);
	err = pg_store_end_write(s, err);
	pthread_mutex_unlock(&s->lock);
	return err;
}

int pg_store_note(pg_store *s, int64_t id, const char *user, const char *action,
		  const char *note)
{
	int err;

	pthread_mutex_lock(&s->lock);
	if ((err = pg_store_begin_write(s)) == 0)
		err = add_decision(s, id, user, action, note);
	err = pg_store_end_write(s, err);
	pthread_mutex_unlock(&s->lock);
	return err;
}

int pg_store_meta_set(pg_store *s, const char *key, const char *value)
{
	sqlite3_stmt *st = NULL;
	int err;

	if (!strcmp(key, "schema"))
		return pg_error_set(PG_EINVALID, "meta key 'schema' is the store's own");
	pthread_mutex_lock(&s->lock);
	if ((err = pg_store_begin_write(s)) == 0 &&
	    (err = prepare(s, &st, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)")) == 0) {
		bind_text(st, 1, key);
		bind_text(st, 2, value);
		err = step_done(s, st, "meta");
	}
	err = pg_store_end_write(s, err);
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* The queue's pulls' ids and ranks, first place first. */
typedef struct ranks {
	int64_t *ids, *ranks;
	size_t n, alloc_ids, alloc_ranks;
} ranks;

static int rank_row(sqlite3_stmt *st, void *ctx)
{
	ranks *r = ctx;
	int err;

	if ((err = PG_ARRAY_GROW(r->ids, r->n + 1, r->alloc_ids)) < 0 ||
	    (err = PG_ARRAY_GROW(r->ranks, r->n + 1, r->alloc_ranks)) < 0)
		return err;
	r->ids[r->n] = sqlite3_column_int64(st, 0);
	r->ranks[r->n++] = sqlite3_column_int64(st, 1);
	return 0;
}

/* The ranks stay the ones the queue had; only which pull holds which changes. */
static int place(pg_store *s, int64_t id, int by)
{
	sqlite3_stmt *st = NULL;
	ranks r = { 0 };
	size_t i, at, to;
	int err;

	if ((err = prepare(s, &st, "SELECT id, queue_rank FROM pulls " PG_STORE_QUEUED
			   " ORDER BY queue_rank, id")) < 0 ||
	    (err = each_row(s, st, "pulls", rank_row, &r)) < 0)
		goto done;
	for (at = 0; at < r.n && r.ids[at] != id; at++)
		;
	if (at == r.n) {
		err = pg_error_set(PG_ENOTFOUND, "pull %lld is not in the queue", (long long)id);
		goto done;
	}
	if ((by < 0 && at < (size_t)-(long)by) || (by > 0 && at + (size_t)by >= r.n)) {
		err = pg_error_set(PG_ECONFLICT, "pull %lld is %s of the queue already",
				   (long long)id, by < 0 ? "first" : "last");
		goto done;
	}
	to = by < 0 ? at - (size_t)-(long)by : at + (size_t)by;
	memmove(&r.ids[at], &r.ids[at + 1], (r.n - at - 1) * sizeof(*r.ids));
	memmove(&r.ids[to + 1], &r.ids[to], (r.n - 1 - to) * sizeof(*r.ids));
	r.ids[to] = id;
	if ((err = prepare(s, &st, "UPDATE pulls SET queue_rank = ? WHERE id = ?")) < 0)
		goto done;
	for (i = 0; i < r.n && err == 0; i++) {
		int rc;

		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, r.ranks[i]);
		sqlite3_bind_int64(st, 2, r.ids[i]);
		if ((rc = sqlite3_step(st)) != SQLITE_DONE)
			err = fail(s, rc, "pulls");
	}
	done(s, st);
done:
	free(r.ids);
	free(r.ranks);
	return err;
}

int pg_store_queue_move(pg_store *s, int64_t id, int by)
{
	int err;

	pthread_mutex_lock(&s->lock);
	if ((err = pg_store_begin_write(s)) == 0)
		err = place(s, id, by);
	err = pg_store_end_write(s, err);
	pthread_mutex_unlock(&s->lock);
	return err;
}

int pg_store_queue_hold(pg_store *s, int64_t id, bool held)
{
	sqlite3_stmt *st = NULL;
	int err;

	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, "UPDATE pulls SET held = ? " PG_STORE_QUEUED " AND id = ?")) == 0) {
		sqlite3_bind_int(st, 1, held);
		sqlite3_bind_int64(st, 2, id);
		if ((err = step_done(s, st, "pulls")) == 0 && sqlite3_changes(s->db) != 1)
			err = pg_error_set(PG_ENOTFOUND, "pull %lld is not in the queue",
					   (long long)id);
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* Step an UPDATE of pull id made only while it is in state: PG_ECONFLICT when it is not. */
static int step_in_state(pg_store *s, sqlite3_stmt *st, int64_t id, enum pg_job_state state)
{
	int err;

	if ((err = step_done(s, st, "pulls")) == 0 && sqlite3_changes(s->db) != 1)
		err = pg_error_set(PG_ECONFLICT, "pull %lld is no longer %s", (long long)id,
				   pg_job_state_name(state));
	return err;
}

int pg_store_set_merge(pg_store *s, int64_t id, enum pg_job_state state, const pg_oid *base,
		       const pg_oid *merge)
{
	sqlite3_stmt *st = NULL;
	char b[PG_OID_HEXSZ + 1], m[PG_OID_HEXSZ + 1];
	int err;

	if (base && merge) {
		pg_oid_tohex(b, base);
		pg_oid_tohex(m, merge);
	}
	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, "UPDATE pulls SET merge_base = ?, merge_commit = ?"
			   " WHERE id = ? AND state = ?")) == 0) {
		bind_text(st, 1, base && merge ? b : NULL);
		bind_text(st, 2, base && merge ? m : NULL);
		sqlite3_bind_int64(st, 3, id);
		bind_text(st, 4, pg_job_state_name(state));
		err = step_in_state(s, st, id, state);
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

int pg_store_set_conflict(pg_store *s, int64_t id, enum pg_job_state state, const char *conflict,
			  int64_t with)
{
	sqlite3_stmt *st = NULL;
	int err;

	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, "UPDATE pulls SET conflict = ?, conflict_with = ?"
			   " WHERE id = ? AND state = ?")) == 0) {
		bind_text(st, 1, conflict);
		if (with)
			sqlite3_bind_int64(st, 2, with);
		sqlite3_bind_int64(st, 3, id);
		bind_text(st, 4, pg_job_state_name(state));
		err = step_in_state(s, st, id, state);
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

int pg_store_queue_to_end(pg_store *s, int64_t id, enum pg_job_state state)
{
	sqlite3_stmt *st = NULL;
	int err;

	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, "UPDATE pulls SET queue_rank ="
			   " (SELECT coalesce(max(queue_rank), 0) + 1 FROM pulls)"
			   " WHERE id = ? AND state = ?")) == 0) {
		sqlite3_bind_int64(st, 1, id);
		bind_text(st, 2, pg_job_state_name(state));
		err = step_in_state(s, st, id, state);
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

int pg_store_submission_set(pg_store *s, const pg_submission *sub, const char *decision)
{
	sqlite3_stmt *st = NULL;
	bool final = !strcmp(sub->state, "sent") || !strcmp(sub->state, "failed");
	int err, changed = 0;

	pthread_mutex_lock(&s->lock);
	if ((err = pg_store_begin_write(s)) == 0 &&
	    (err = prepare(s, &st, "UPDATE kcidb_submissions SET state = ?, tries = ?, status = ?,"
			   " note = ?, next_at = ?, updated = ? WHERE pull = ? AND seq = ?"
			   " AND state IN ('queued', 'retrying')")) == 0) {
		bind_text(st, 1, sub->state);
		sqlite3_bind_int(st, 2, (int)sub->tries);
		sqlite3_bind_int(st, 3, (int)sub->status);
		bind_text(st, 4, sub->note);
		sqlite3_bind_int64(st, 5, sub->next_at);
		sqlite3_bind_int64(st, 6, now());
		sqlite3_bind_int64(st, 7, sub->pull);
		sqlite3_bind_int64(st, 8, sub->seq);
		if ((err = step_done(s, st, "kcidb_submissions")) == 0)
			changed = sqlite3_changes(s->db);
	}
	if (err == 0 && changed && final && decision)
		err = add_decision(s, sub->pull, "pullgate", "kcidb", decision);
	err = pg_store_end_write(s, err);
	pthread_mutex_unlock(&s->lock);
	return err < 0 ? err : !changed;
}

int pg_store_submissions_drop(pg_store *s, size_t *n)
{
	int err;

	*n = 0;
	pthread_mutex_lock(&s->lock);
	if ((err = pg_store_begin_write(s)) == 0 &&
	    (err = run(s, "DELETE FROM kcidb_submissions WHERE state IN ('queued', 'retrying')")) == 0)
		*n = (size_t)sqlite3_changes(s->db);
	err = pg_store_end_write(s, err);
	pthread_mutex_unlock(&s->lock);
	return err;
}
