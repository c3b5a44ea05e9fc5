/* store.c - the SQLite job store: the schema and its upgrades, opening it (WAL, synced) and closing it. */
#include "server/store_sql.h"
#include "server/clock.h"

/* Schema 1, as the first release made it; later versions are upgrades below. */
static const char schema_v1[] =
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

/*
 * Each upgrade takes schema N-1 to N, in the transaction that opens the
 * store.  2: a delivery's signature, to know a replay under a new id; a
 * pull's dedupe key, to know an open twin; and which pulls each delivery
 * names (made or found open), filled from the pulls each one made.  3: the
 * number of pulls in each state.  4: whether a pull's report is of a
 * stand-in's run, for the list, which never reads the reports.  5: the
 * trusted signer of a pull's tag and its run's log directory, which an
 * approval rests on, filled from the reports (an approval parsed the
 * report for them).
 */
static const char *const upgrades[] = {
	[2] = "ALTER TABLE deliveries ADD COLUMN signature TEXT;"
	      "CREATE INDEX deliveries_signature ON deliveries (signature);"
	      "ALTER TABLE pulls ADD COLUMN dedupe TEXT;"
	      "CREATE INDEX pulls_dedupe ON pulls (dedupe);"
	      "CREATE TABLE delivery_pulls ("
	      "  delivery TEXT NOT NULL REFERENCES deliveries(id),"
	      "  pull INTEGER NOT NULL REFERENCES pulls(id), PRIMARY KEY (delivery, pull))"
	      "  WITHOUT ROWID;"
	      "INSERT INTO delivery_pulls (delivery, pull)"
	      "  SELECT delivery, id FROM pulls WHERE delivery IS NOT NULL;"
	      /* delivery_pulls answers what pulls.delivery's index did: one index less to write */
	      "DROP INDEX pulls_delivery;",
	/*
	 * 3: how many pulls are in each state, kept by triggers: /api/pulls
	 * and /metrics counted the whole table at every request (every page of
	 * an index read again while the worker commits), the first page of the
	 * list only a few rows.
	 */
	[3] = "CREATE TABLE pull_counts (state TEXT PRIMARY KEY, n INTEGER NOT NULL)"
	      "  WITHOUT ROWID;"
	      "INSERT INTO pull_counts (state, n) SELECT state, count(*) FROM pulls GROUP BY state;"
	      "CREATE TRIGGER pull_counts_insert AFTER INSERT ON pulls BEGIN"
	      "  INSERT INTO pull_counts (state, n) VALUES (NEW.state, 1)"
	      "    ON CONFLICT (state) DO UPDATE SET n = n + 1;"
	      "END;"
	      "CREATE TRIGGER pull_counts_delete AFTER DELETE ON pulls BEGIN"
	      "  UPDATE pull_counts SET n = n - 1 WHERE state = OLD.state;"
	      "END;"
	      "CREATE TRIGGER pull_counts_move AFTER UPDATE OF state ON pulls"
	      "  WHEN OLD.state IS NOT NEW.state BEGIN"
	      "  UPDATE pull_counts SET n = n - 1 WHERE state = OLD.state;"
	      "  INSERT INTO pull_counts (state, n) VALUES (NEW.state, 1)"
	      "    ON CONFLICT (state) DO UPDATE SET n = n + 1;"
	      "END;",
	[4] = "ALTER TABLE pulls ADD COLUMN simulated INTEGER NOT NULL DEFAULT 0;"
	      "UPDATE pulls SET simulated = 1"
	      "  WHERE json_valid(report) AND json_extract(report, '$.simulated') = 1;",
	[5] = "ALTER TABLE pulls ADD COLUMN tag_signer TEXT;"
	      "ALTER TABLE pulls ADD COLUMN run_dir TEXT;"
	      "UPDATE pulls SET"
	      "  tag_signer = CASE json_type(report, '$.tag_signer')"
	      "    WHEN 'text' THEN json_extract(report, '$.tag_signer') END,"
	      "  run_dir = CASE json_type(report, '$.run_dir')"
	      "    WHEN 'text' THEN json_extract(report, '$.run_dir') END"
	      "  WHERE json_valid(report);",
	[6] = "CREATE TABLE notices (pull INTEGER PRIMARY KEY, path TEXT NOT NULL);",
	/*
	 * 7: the merge window's queue (docs/server.md, "The queue"): a pull's
	 * place in its branch's queue, given when verify accepts it and kept
	 * when it is tested again; whether the maintainer holds it; and why
	 * its kernel stages failed (alone, or together with another pull).
	 * The pulls in the queue today enter it in the order they came.
	 */
	[7] = "ALTER TABLE pulls ADD COLUMN queue_rank INTEGER;"
	      "ALTER TABLE pulls ADD COLUMN held INTEGER NOT NULL DEFAULT 0;"
	      "ALTER TABLE pulls ADD COLUMN attribution TEXT;"
	      "ALTER TABLE pulls ADD COLUMN with_pull INTEGER;"
	      "UPDATE pulls SET queue_rank = id WHERE state IN ('verified', 'merging', 'building',"
	      "  'booting', 'waiting', 'approving');"
	      "CREATE INDEX pulls_queue ON pulls (queue_rank) WHERE queue_rank IS NOT NULL;",
	/*
	 * 8: a textual conflict found when the pull entered the queue: the
	 * sentence, and the pull ahead of it that it conflicts with (it waits
	 * behind that pull).
	 */
	[8] = "ALTER TABLE pulls ADD COLUMN conflict TEXT;"
	      "ALTER TABLE pulls ADD COLUMN conflict_with INTEGER;",
	/*
	 * 9: the KCIDB submission outbox (server/kcidb_submit.c): one row per
	 * pull, its newest decided run, put there in the transaction that
	 * stores the run's report, kept once sent or failed for its state;
	 * seq counts the puts, so a try's outcome is matched to the put it
	 * tried (a stacked pull's re-test decides again in the same run).
	 */
	[9] = "CREATE TABLE kcidb_submissions ("
	      "  pull INTEGER PRIMARY KEY REFERENCES pulls(id), run INTEGER NOT NULL,"
	      "  seq INTEGER NOT NULL,"
	      "  state TEXT NOT NULL, tries INTEGER NOT NULL DEFAULT 0,"
	      "  status INTEGER NOT NULL DEFAULT 0, note TEXT, next_at INTEGER NOT NULL DEFAULT 0,"
	      "  updated INTEGER NOT NULL);"
	      "CREATE INDEX kcidb_submissions_due ON kcidb_submissions (next_at)"
	      "  WHERE state IN ('queued', 'retrying');",
};

static int upgrade(pg_store *s, const char *path)
{
	sqlite3_stmt *st = NULL;
	char version[16];
	int v = 0, err, rc;

	if ((err = exec(s, schema_v1)) < 0)
		return err;
	rc = sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = 'schema'", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return fail(s, rc, "meta");
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (v > PG_STORE_SCHEMA_VERSION)
		return pg_error_set(PG_EINVALID, "store '%s' has schema %d; this pullgate knows %d",
				    path, v, PG_STORE_SCHEMA_VERSION);
	/* a new file has schema 1 now */
	for (v = v ? v + 1 : 2; v <= PG_STORE_SCHEMA_VERSION && err == 0; v++)
		err = exec(s, upgrades[v]);
	snprintf(version, sizeof(version), "%d", PG_STORE_SCHEMA_VERSION);
	if (err == 0 && (err = prepare(s, &st, "INSERT OR REPLACE INTO meta (key, value)"
				       " VALUES ('schema', ?)")) == 0) {
		bind_text(st, 1, version);
		err = step_done(s, st, "meta");
	}
	return err;
}

/*
 * While another connection writes, wait in short steps: SQLite's own busy
 * handler sleeps up to 100 ms a try, so that a hook behind the worker's
 * commit would wait many times as long as the commit takes.
 */
#define BUSY_STEP_US 200
#define BUSY_MAX_US (PG_STORE_BUSY_SECONDS * 1000 * 1000)

static int busy(void *ctx, int tries)
{
	struct timespec ts = { 0, BUSY_STEP_US * 1000L };

	(void)ctx;
	if ((long long)tries * BUSY_STEP_US >= BUSY_MAX_US)
		return 0;
	nanosleep(&ts, NULL);
	return 1;
}

/*
 * The process's write transactions take turns here before SQLite's lock.
 * Connections of one service (its hooks', its worker's) would otherwise
 * find that lock taken and poll for it in sleeps (busy), and the worker's
 * commits, one after another, would keep the hooks waiting.  Here the next
 * writer is woken as the last one ends, and a connection that gives way
 * (pg_store_give_way) writes only after QUIET_MS with no other writer, or
 * once it waited its limit: then it goes before the others.  Taken under
 * s->lock; nothing is taken while a turn is held.
 */
#define QUIET_MS 2
#define GIVE_WAY_CHECKPOINT_PAGES 1000 /* SQLite's default */

static struct {
	pthread_once_t once;
	pthread_mutex_t lock;
	pthread_cond_t turn;      /* on the monotonic clock */
	bool busy;                /* a write transaction is under way */
	unsigned waiting;         /* writers that do not give way, waiting */
	unsigned yielding;        /* writers that give way, waiting */
	unsigned overdue;         /* writers that gave way as long as they may, waiting */
	uint64_t others_ended_ms; /* when the last writer that does not give way ended */
} writers = { .once = PTHREAD_ONCE_INIT };

static void writers_init(void)
{
	pthread_condattr_t attr;

	pthread_mutex_init(&writers.lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&writers.turn, &attr);
	pthread_condattr_destroy(&attr);
}

/* Wait for the turns to change, until ms on the monotonic clock (0: no limit). */
static void wait_turn(uint64_t until_ms)
{
	struct timespec ts;
	uint64_t now = pg_now_ms();

	if (!until_ms) {
		pthread_cond_wait(&writers.turn, &writers.lock);
		return;
	}
	pg_monotonic_after(&ts, until_ms > now ? (unsigned)(until_ms - now) : 0);
	pthread_cond_timedwait(&writers.turn, &writers.lock, &ts);
}

/* A connection that gives way: until the others are quiet, or until deadline. */
static void give_way(uint64_t deadline)
{
	uint64_t now, quiet;

	for (;;) {
		now = pg_now_ms();
		quiet = writers.others_ended_ms + QUIET_MS;
		if (now >= deadline)
			break;
		if (!writers.busy && !writers.waiting && now >= quiet)
			return;
		wait_turn(!writers.busy && !writers.waiting && quiet < deadline ? quiet : deadline);
	}
	/* it waited long enough: the next turn is its own */
	writers.overdue++;
	while (writers.busy)
		wait_turn(0);
	writers.overdue--;
}

int pg_store_begin_write(pg_store *s)
{
	pthread_once(&writers.once, writers_init);
	pthread_mutex_lock(&writers.lock);
	if (s->give_way_ms) {
		writers.yielding++;
		give_way(pg_now_ms() + s->give_way_ms);
		writers.yielding--;
	} else {
		writers.waiting++;
		while (writers.busy || writers.overdue)
			wait_turn(0);
		writers.waiting--;
	}
	writers.busy = true;
	pthread_mutex_unlock(&writers.lock);
	return run(s, "BEGIN IMMEDIATE");
}

void pg_store_writers_waiting(unsigned *yielding, unsigned *waiting)
{
	pthread_once(&writers.once, writers_init);
	pthread_mutex_lock(&writers.lock);
	*yielding = writers.yielding;
	*waiting = writers.waiting;
	pthread_mutex_unlock(&writers.lock);
}

int pg_store_end_write(pg_store *s, int err)
{
	err = end_transaction(s, err);
	pthread_mutex_lock(&writers.lock);
	writers.busy = false;
	if (!s->give_way_ms)
		writers.others_ended_ms = pg_now_ms();
	pthread_cond_broadcast(&writers.turn);
	pthread_mutex_unlock(&writers.lock);
	/* past the turn, so that no one waits for it (a busy or failed one is left to the checkpointer) */
	if (s->wal_pages >= GIVE_WAY_CHECKPOINT_PAGES) {
		sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		s->wal_pages = 0;
	}
	return err;
}

/* A commit of a connection that gives way: the log's length, for pg_store_end_write. */
static int wal_pages(void *ctx, sqlite3 *db, const char *name, int pages)
{
	pg_store *s = ctx;

	(void)db;
	(void)name;
	s->wal_pages = pages;
	return SQLITE_OK;
}

int pg_store_open(pg_store **out, const char *path)
{
	pg_store *s = NULL;
	int rc, err = 0;

	*out = NULL;
	if (!(s = calloc(1, sizeof(*s))))
		return pg_error_oom();
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->group_lock, NULL);
	pthread_cond_init(&s->group_done, NULL);
	s->queue_tail = &s->queue;
	s->findings_per_check = 100;
	s->report_size = (size_t)1 << 20;
	rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			     SQLITE_OPEN_FULLMUTEX, NULL);
	if (rc != SQLITE_OK) {
		err = pg_error_set(PG_EIO, "store '%s': %s", path,
				   s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
		goto done;
	}
	sqlite3_busy_handler(s->db, busy, NULL);
	/*
	 * WAL, synced at every commit (FULL): a hook is answered only once its
	 * delivery is on disk.  Deliveries are committed in groups, so the
	 * sync is paid once per group, not per hook.
	 */
	if ((err = exec(s, "PRAGMA journal_mode=WAL")) < 0 ||
	    (err = exec(s, "PRAGMA synchronous=FULL")) < 0 ||
	    (err = exec(s, "PRAGMA foreign_keys=ON")) < 0)
		goto done;
	if ((err = pg_store_begin_write(s)) == 0)
		err = upgrade(s, path);
	if ((err = pg_store_end_write(s, err)) == 0) {
		*out = s;
		s = NULL;
	}
done:
	pg_store_free(s);
	return err;
}

void pg_store_free(pg_store *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nstmts; i++)
		sqlite3_finalize(s->stmts[i].st);
	sqlite3_close(s->db);
	pthread_cond_destroy(&s->group_done);
	pthread_mutex_destroy(&s->group_lock);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void pg_store_sync_decisions_only(pg_store *s)
{
	pthread_mutex_lock(&s->lock);
	if (exec(s, "PRAGMA synchronous=NORMAL") == 0)
		s->sync_decisions_only = true;
	pg_error_clear();
	pthread_mutex_unlock(&s->lock);
}

void pg_store_give_way(pg_store *s, unsigned max_ms)
{
	pthread_mutex_lock(&s->lock);
	s->give_way_ms = max_ms;
	/*
	 * SQLite's own checkpoint after a commit (past 1,000 pages of log)
	 * would run inside the turn, with the hooks waiting for it to copy the
	 * log and sync the database: it runs after the turn instead.
	 */
	sqlite3_wal_hook(s->db, max_ms ? wal_pages : NULL, s);
	if (!max_ms)
		sqlite3_wal_autocheckpoint(s->db, GIVE_WAY_CHECKPOINT_PAGES);
	pthread_mutex_unlock(&s->lock);
}

void pg_store_set_limits(pg_store *s, size_t per_check, size_t max_bytes)
{
	pthread_mutex_lock(&s->lock);
	s->findings_per_check = per_check ? per_check : 1;
	s->report_size = max_bytes;
	pthread_mutex_unlock(&s->lock);
}

void pg_store_manual_checkpoints(pg_store *s)
{
	pthread_mutex_lock(&s->lock);
	sqlite3_wal_autocheckpoint(s->db, 0);
	pthread_mutex_unlock(&s->lock);
}

/* A log this long is restarted: passive checkpoints alone never restart one that is always written. */
#define WAL_RESTART_PAGES 8192

int pg_store_checkpoint(pg_store *s)
{
	int rc, log = 0, done_pages = 0;

	pthread_mutex_lock(&s->lock);
	rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, &done_pages);
	/* the next writer starts the log again from its beginning, once all of it is copied */
	if (rc == SQLITE_OK && log > WAL_RESTART_PAGES)
		rc = sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_RESTART, NULL, NULL);
	rc = rc == SQLITE_OK || rc == SQLITE_BUSY ? 0 : fail(s, rc, "checkpoint");
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int pg_store_ping(pg_store *s)
{
	sqlite3_stmt *st = NULL;
	int rc, err;

	pthread_mutex_lock(&s->lock);
	if ((err = prepare(s, &st, "SELECT 1 FROM meta LIMIT 1")) == 0) {
		rc = sqlite3_step(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			err = fail(s, rc, "meta");
		done(s, st);
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}
