/* store_sql.h - the SQLite handle and the statement helpers that the store's files share (private). */
#ifndef PG_SERVER_STORE_SQL_H
#define PG_SERVER_STORE_SQL_H

#include "server/store.h"
#include "common/error.h"

#include <pthread.h>
#include <sqlite3.h>
#include <time.h>

struct pg_store {
	sqlite3 *db;
	pthread_mutex_t lock;   /* every call holds it: one statement or transaction at a time */
};

/* SQLite's failure as ours, with its message: foreign codes stop here. */
static inline int fail(pg_store *s, int rc, const char *what)
{
	int code = rc == SQLITE_NOMEM ? PG_ENOMEM :
		   rc == SQLITE_TOOBIG ? PG_ETOOBIG :
		   rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? PG_ECONFLICT : PG_EIO;

	return pg_error_set(code, "store: %s: %s", what, s->db ? sqlite3_errmsg(s->db) :
			    sqlite3_errstr(rc));
}

static inline int exec(pg_store *s, const char *sql)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : fail(s, rc, sql);
}

static inline int prepare(pg_store *s, sqlite3_stmt **st, const char *sql)
{
	int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);

	return rc == SQLITE_OK ? 0 : fail(s, rc, "prepare");
}

/* Run a statement that returns no row, and finalize it. */
static inline int step_done(pg_store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st), err = rc == SQLITE_DONE ? 0 : fail(s, rc, what);

	sqlite3_finalize(st);
	return err;
}

/*
 * Step through st's rows, calling row for each, and finalize st: 0, the
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
	sqlite3_finalize(st);
	return err;
}

/* Commit when err is 0, else (or when the commit fails) roll back; err or the commit's. */
static inline int end_transaction(pg_store *s, int err)
{
	if (err == 0 && (err = exec(s, "COMMIT")) == 0)
		return 0;
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return err;
}

static inline int bind_text(sqlite3_stmt *st, int i, const char *v)
{
	return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

static inline int64_t now(void)
{
	return (int64_t)time(NULL);
}

#endif
