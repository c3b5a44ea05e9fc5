/* recover.c - the run journal: what a run that died left behind (refs, locks, its build), cleaned up. */
#include "pipeline/run.h"
#include "common/error.h"
#include "common/fs.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

/*
 * The journal is one small file per build worktree, work/run.journal in
 * its root (pg_slot_root), written whole (atomically) each time:
 * "pullgate-run 1", then NUL-separated pairs of name and value (tree, key,
 * tag; pid and start while a script runs).  It exists only while a run
 * holds the build worktree's lock, so whoever holds the lock and finds one
 * knows that its run died.
 */
#define JOURNAL_MAGIC "pullgate-run 1"

static int journal_path(pg_buf *out, const char *home, unsigned slot)
{
	int err = pg_slot_root(out, home, slot);

	return err < 0 ? err : pg_buf_puts(out, "/work/run.journal");
}

/* The start time of process pid, in clock ticks since boot (/proc/PID/stat, field 22); 0: gone. */
static unsigned long long start_time(int pid)
{
	char path[64], text[1024], *p;
	unsigned long long t = 0;
	ssize_t n;
	int field, fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	/* /proc's files are regular (of size 0): read to the buffer's end */
	if (pg_open_regular(&fd, NULL, path, PG_OPEN_READ, NULL) < 0) {
		pg_error_clear();
		return 0;
	}
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	/* the command name may hold spaces and parentheses: fields count from the last ')' */
	if (!(p = strrchr(text, ')')))
		return 0;
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtoull(p + 1, NULL, 10);
	return t;
}

static int write_journal(pg_run *g, int pid)
{
	pg_buf j = PG_BUF_INIT;
	int err;

	err = pg_buf_printf(&j, "%s%ctree%c%s%ckey%c%s%ctag%c%s%c", JOURNAL_MAGIC, 0, 0,
			    g->tree_path.ptr, 0, 0, g->key.ptr, 0, 0, g->report->tag, 0);
	if (err == 0 && pid > 0)
		err = pg_buf_printf(&j, "pid%c%d%cstart%c%llu%c", 0, pid, 0, 0, start_time(pid), 0);
	if (err == 0)
		err = pg_write_file_atomic(g->journal.ptr, j.ptr, j.len);
	pg_buf_release(&j);
	return err;
}

int pg_journal_begin(pg_run *g)
{
	int err;

	if ((err = journal_path(&g->journal, g->o->home, g->slot)) < 0 ||
	    (err = write_journal(g, 0)) < 0)
		pg_buf_clear(&g->journal);
	return err;
}

void pg_journal_child(void *ctx, int pid)
{
	pg_run *g = ctx;

	/* without it a death now leaves the child running: say so, but run on */
	if (g->journal.len && write_journal(g, pid) < 0)
		pg_error_clear();
}

void pg_journal_end(pg_run *g)
{
	if (g->journal.len)
		unlink(g->journal.ptr);
	pg_buf_clear(&g->journal);
}

/* The value of name in the journal text, or NULL. */
static const char *entry(const pg_buf *j, const char *name)
{
	const char *p = j->ptr + strlen(JOURNAL_MAGIC) + 1, *end = j->ptr + j->len;

	while (p < end) {
		const char *value = p + strlen(p) + 1;

		if (value >= end)
			return NULL;
		if (!strcmp(p, name))
			return value;
		p = value + strlen(value) + 1;
	}
	return NULL;
}

/* Stop the process group a dead run left running, if its leader is still that process. */
static bool stop_child(const pg_buf *j)
{
	const char *pid_s = entry(j, "pid"), *start_s = entry(j, "start");
	int pid = pid_s ? (int)strtol(pid_s, NULL, 10) : 0, i;
	unsigned long long start = start_s ? strtoull(start_s, NULL, 10) : 0;

	if (pid <= 1 || !start || start_time(pid) != start)
		return false;
	kill(-pid, SIGKILL);
	for (i = 0; i < 100 && start_time(pid) == start; i++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	return true;
}

/* A key as pg_gate_pull_key makes them: a file name of its own under home/work/pulls. */
static bool plain_key(const char *key)
{
	return *key && *key != '.' && strlen(key) <= 128 &&
	       strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
		       strlen(key);
}

int pg_journal_recover(const char *home, unsigned slot, const char *held_key, pg_buf *what)
{
	pg_buf path = PG_BUF_INIT, j = PG_BUF_INIT;
	pg_tree *tree = NULL;
	const char *tree_path, *key, *tag;
	char wt_name[PG_SLOT_NAME_MAX], where[48] = "";
	bool stopped, live = false;
	int err, fd = -1;

	pg_buf_init(&j, 64 << 10);
	if (slot > 1)
		snprintf(where, sizeof(where), " in build worktree %u", slot);
	if ((err = journal_path(&path, home, slot)) < 0)
		goto done;
	if ((err = pg_buf_read_file(&j, path.ptr)) == PG_ENOTFOUND) {
		pg_error_clear();
		err = 0;
		goto done;
	}
	if (err < 0)
		goto done;
	tree_path = j.len > strlen(JOURNAL_MAGIC) && !strcmp(j.ptr, JOURNAL_MAGIC) ?
		    entry(&j, "tree") : NULL;
	key = tree_path ? entry(&j, "key") : NULL;
	tag = tree_path ? entry(&j, "tag") : NULL;
	stopped = tree_path && stop_child(&j);
	if (!tree_path || !key || !tag || !plain_key(key)) {
		err = pg_buf_printf(what, "removed '%s', a run journal that does not parse",
				    path.ptr);
		unlink(path.ptr);
		goto done;
	}
	if ((err = pg_slot_worktree_name(wt_name, home, tree_path, slot)) < 0)
		goto done;
	/* the branch is pg_tree_open's to check; any will do to reach the pull's refs */
	if ((err = pg_tree_open(&tree, tree_path, "master")) == PG_ENOTFOUND) {
		pg_error_clear();
		err = pg_buf_printf(what, "a run of '%s' died%s; its tree '%s' is gone", tag, where,
				    tree_path);
		unlink(path.ptr);
		goto done;
	}
	if (err < 0 ||
	    (!(held_key && !strcmp(held_key, key)) && (err = pg_run_lock_pull(&fd, home, key)) < 0))
		goto done;
	/* the pull runs again in another build worktree already: its refs are that run's now */
	live = err == 1;
	if ((err = pg_tree_drop_stale(tree, live ? NULL : key, tag, wt_name)) < 0)
		goto done;
	if (live)
		err = pg_buf_printf(what, "a run of '%s' died%s; its refs are left to the run of it "
				    "that holds the pull now%s", tag, where,
				    stopped ? "; stopped the script it left running" : "");
	else
		err = pg_buf_printf(what, "a run of '%s' died%s: removed refs/heads/pullgate/%s and "
				    "its tag's ref from '%s'%s", tag, where, key, tree_path,
				    stopped ? ", and stopped the script it left running" : "");
	unlink(path.ptr);
done:
	if (fd >= 0)
		close(fd);
	pg_tree_free(tree);
	pg_buf_release(&path);
	pg_buf_release(&j);
	return err;
}
