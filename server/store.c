/* store.c - the SQLite job store: the schema, opening it (WAL) and closing it. */
#include "server/store_sql.h"

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
	if ((err = exec(s, schema)) == 0 &&
	    (err = prepare(s, &st, "SELECT value FROM meta WHERE key = 'schema'")) == 0) {
		if (sqlite3_step(st) == SQLITE_ROW)
			version = sqlite3_column_int(st, 0);
		if (version > PG_STORE_SCHEMA_VERSION)
			err = pg_error_set(PG_EINVALID, "store '%s' has schema %d; this pullgate knows %d",
					   path, version, PG_STORE_SCHEMA_VERSION);
		else if (version == 0)
			err = exec(s, "INSERT INTO meta (key, value) VALUES ('schema', '1')");
	}
	sqlite3_finalize(st);
	if ((err = end_transaction(s, err)) == 0) {
		*out = s;
		s = NULL;
	}
done:
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

int pg_store_ping(pg_store *s)
{
	int err;

	pthread_mutex_lock(&s->lock);
	err = exec(s, "SELECT 1 FROM meta LIMIT 1");
	pthread_mutex_unlock(&s->lock);
	return err;
}
