/* store_sql.h - the SQLite handle, its cache of prepared statements and the helpers the store's files share (private). */
#ifndef PG_SERVER_STORE_SQL_H
#define PG_SERVER_STORE_SQL_H

#include "server/store.h"
#include "common/error.h"

#include <pthread.h>
#include <sqlite3.h>
#include <time.h>

/* Statements kept prepared for the handle's life: every one the store runs fits. */
#define STMT_CACHE 64

typedef struct pg_store_pending pg_store_pending;

struct pg_store {
	sqlite3 *db;
	pthread_mutex_t lock;   /* every call holds it: one statement or transaction at a time */
	struct {
		const char *sql;    /* the string literal it was prepared from, by address */
		sqlite3_stmt *st;
	} stmts[STMT_CACHE];
	size_t nstmts;
	size_t findings_per_check;   /* pg_store_set_limits */
	size_t report_size;
	bool sync_decisions_only;    /* pg_store_sync_decisions_only */
	unsigned give_way_ms;        /* pg_store_give_way */
	int wal_pages;               /* the log's length after its last commit, when it gives way */
	/* deliveries waiting for the next group commit (store_write.c) */
	pthread_mutex_t group_lock;
	pthread_cond_t group_done;
	pg_store_pending *queue, **queue_tail;
	bool committing;
};

/* The pulls in the merge window's queue (pg_store_queue): verify took them, nothing decided them. */
#define PG_STORE_QUEUED \
	"WHERE queue_rank IS NOT NULL AND state IN ('verified', 'merging', 'building', 'booting'," \
	" 'waiting', 'approving')"

/* How long a write waits for another connection's lock (store.c's busy) */
#define PG_STORE_BUSY_SECONDS 10

/* SQLite's failure as ours, with its message: foreign codes stop here. */
static inline int fail(pg_store *s, int rc, const char *what)
{
	int code = rc == SQLITE_NOMEM ? PG_ENOMEM :
		   rc == SQLITE_TOOBIG ? PG_ETOOBIG :
		   rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? PG_ETIMEOUT : PG_EIO;

	/*
	 * Busy or locked: another connection kept the lock past the wait
	 * (busy): the time ran out, which is no conflict of states; the
	 * caller may try again.
	 */
	if (code == PG_ETIMEOUT)
		return pg_error_set(code, "store: %s: %s (another connection held it for %d s: "
				    "try again)", what, s->db ? sqlite3_errmsg(s->db) :
				    sqlite3_errstr(rc), PG_STORE_BUSY_SECONDS);
	return pg_error_set(code, "store: %s: %s", what, s->db ? sqlite3_errmsg(s->db) :
			    sqlite3_errstr(rc));
}

static inline int exec(pg_store *s, const char *sql)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : fail(s, rc, sql);
}

/*
 * The statement for sql, a string literal (it is known by its address),
 * prepared the first time and kept: later calls only bind and step it.
 * Give it back with done() (reset, not finalized).
 */
static inline int prepare(pg_store *s, sqlite3_stmt **st, const char *sql)
{
	size_t i;
	int rc;

	for (i = 0; i < s->nstmts; i++)
		if (s->stmts[i].sql == sql) {
			*st = s->stmts[i].st;
			return 0;
		}
	rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "prepare");
	if (s->nstmts < STMT_CACHE) {
		s->stmts[s->nstmts].sql = sql;
		s->stmts[s->nstmts++].st = *st;
	}
	return 0;
}

/* A statement is done with: reset for its next use (finalized if the cache had no room). */
static inline void done(pg_store *s, sqlite3_stmt *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < s->nstmts; i++)
		if (s->stmts[i].st == st) {
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			return;
		}
	sqlite3_finalize(st);
}

/* Run a statement that returns no row, and give it back. */
static inline int step_done(pg_store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st), err = rc == SQLITE_DONE ? 0 : fail(s, rc, what);

	done(s, st);
	return err;
}

/*
 * Step through st's rows, calling row for each, and give st back: 0, the
 * first error row returned, or the store's.
 */
static inline int each_row(pg_store *s, sqlite3_stmt *st, const char *what,
			   int (*row)(sqlite3_stmt *st, void *ctx), void *ctx)
{
	int rc = SQLITE_DONE, err = 0;

	while (err == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
		err = row(st, ctx);
	if (err == 0 && rc != SQLITE_DONE)
		err = fail(s, rc, what);
	done(s, st);
	return err;
}

/* Run sql, a string literal with no argument and no row, through the statement cache. */
static inline int run(pg_store *s, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int err;

	if ((err = prepare(s, &st, sql)) < 0)
		return err;
	return step_done(s, st, sql);
}

/* Commit when err is 0, else (or when the commit fails) roll back; err or the commit's. */
static inline int end_transaction(pg_store *s, int err)
{
	if (err == 0 && (err = run(s, "COMMIT")) == 0)
		return 0;
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return err;
}

/*
 * A write transaction of s: BEGIN IMMEDIATE in the process's writers' turn
 * (store.c), and its end, which gives the turn to the next.  Call
 * pg_store_end_write whatever pg_store_begin_write returned.
 */
int pg_store_begin_write(pg_store *s);
int pg_store_end_write(pg_store *s, int err);

static inline int bind_text(sqlite3_stmt *st, int i, const char *v)
{
	return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

static inline int64_t now(void)
{
	return (int64_t)time(NULL);
}

/* store_report.c: the report as stored, bounded by the store's limits. */
int pg_store_report_json(pg_buf *json, pg_report *view, pg_finding **kept, pg_store *s,
			 const pg_report *full);

#endif
