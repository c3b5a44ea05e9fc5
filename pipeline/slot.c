/* slot.c - the build worktrees: each its own worktree, O= dir, lock and journal; a run takes a free one. */
#include "pipeline/run.h"
#include "common/digest.h"
#include "common/error.h"
#include "common/fs.h"

#include <time.h>
#include <unistd.h>

/* How often a run that waits for its pull's lock or a build worktree tries again. */
#define WAIT_NS (100 * 1000 * 1000L)

int pg_slot_root(pg_buf *out, const char *home, unsigned k)
{
	if (k < 1 || k > PG_GATE_MAX_WORKTREES)
		return pg_error_set(PG_EINVALID, "build worktree %u: there are 1 to %d", k,
				    PG_GATE_MAX_WORKTREES);
	return k == 1 ? pg_buf_puts(out, home) : pg_buf_printf(out, "%s/slots/%u", home, k);
}

int pg_slot_worktree_name(char *out, const char *home, const char *tree_path, unsigned k)
{
	char own[16], hex[PG_SHA256_HEXSZ + 1]; /* "build-16" at most */
	size_t n = strlen(home);
	int err;

	if (k == 1)
		snprintf(own, sizeof(own), "build");
	else
		snprintf(own, sizeof(own), "build-%u", k);
	if (!strncmp(tree_path, home, n) && !strcmp(tree_path + n, "/linux")) {
		snprintf(out, PG_SLOT_NAME_MAX, "%s", own);
		return 0;
	}
	if ((err = pg_sha256_hex(hex, home, n)) < 0)
		return err;
	snprintf(out, PG_SLOT_NAME_MAX, "%s-h%.8s", own, hex);
	return 0;
}

/* Lock build worktree k of home (its root made first): 0, 1 when another run holds it. */
static int lock_slot(int *fd, const char *home, unsigned k)
{
	pg_buf path = PG_BUF_INIT;
	int err;

	if ((err = pg_slot_root(&path, home, k)) == 0 && (err = pg_mkdir_p(path.ptr)) == 0 &&
	    (err = pg_buf_puts(&path, "/.kernel.lock")) == 0)
		err = pg_lock_file(fd, path.ptr, false);
	pg_buf_release(&path);
	return err;
}

/* home/work/pulls/<key>.lock: one run of a pull at a time, whichever build worktree. */
int pg_run_lock_pull(int *fd, const char *home, const char *key)
{
	pg_buf path = PG_BUF_INIT;
	int err;

	if ((err = pg_buf_printf(&path, "%s/work/pulls", home)) == 0 &&
	    (err = pg_mkdir_p(path.ptr)) == 0 &&
	    (err = pg_buf_printf(&path, "/%s.lock", key)) == 0)
		err = pg_lock_file(fd, path.ptr, false);
	pg_buf_release(&path);
	return err;
}

/* Between two tries: 0, or PG_ECANCELLED when the run is cancelled meanwhile. */
static int pause_or_cancel(const pg_run *g, const char *what)
{
	struct timespec ts = { 0, WAIT_NS };

	if (g->o->cancel && *g->o->cancel)
		return pg_error_set(PG_ECANCELLED, "cancelled while waiting for %s", what);
	nanosleep(&ts, NULL);
	return 0;
}

int pg_run_take_slot(pg_run *g)
{
	const pg_gate_opts *o = g->o;
	unsigned n = o->settings.build_worktrees, k;
	bool said = false;
	int err;

	if (n > PG_GATE_MAX_WORKTREES)
		return pg_error_set(PG_EINVALID, "%u build worktrees: at most %d", n,
				    PG_GATE_MAX_WORKTREES);
	/* first the pull: two runs of one pull would share its refs */
	while ((err = pg_run_lock_pull(&g->pull_lock_fd, o->home, g->key.ptr)) == 1) {
		if (!said)
			pg_run_progress(g, "merge", "waiting for another run of %s to end",
					g->report->tag);
		said = true;
		if ((err = pause_or_cancel(g, "another run of the pull")) < 0)
			return err;
	}
	if (err < 0)
		return err;
	/* then the first free build worktree, or the first that frees */
	for (said = false;;) {
		for (k = 1; k <= n; k++)
			if ((err = lock_slot(&g->lock_fd, o->home, k)) <= 0)
				break;
		if (err <= 0)
			break;
		if (!said && n == 1)
			pg_run_progress(g, "merge", "waiting for a free build worktree: the only one "
					"is in use");
		else if (!said)
			pg_run_progress(g, "merge", "waiting for a free build worktree: all %u are in use",
					n);
		said = true;
		if ((err = pause_or_cancel(g, "a free build worktree")) < 0)
			return err;
	}
	if (err < 0)
		return err;
	g->slot = k;
	if ((!g->tree_path.len && (err = pg_run_tree_path(&g->tree_path, o)) < 0) ||
	    (err = pg_slot_worktree_name(g->wt_name, o->home, g->tree_path.ptr, k)) < 0 ||
	    (err = pg_slot_root(&g->worktree, o->home, k)) < 0 ||
	    (err = pg_buf_puts(&g->build_dir, g->worktree.ptr)) < 0 ||
	    (err = pg_buf_puts(&g->worktree, "/work")) < 0 ||
	    (err = pg_mkdir_p(g->worktree.ptr)) < 0 ||
	    (err = pg_buf_puts(&g->worktree, "/build")) < 0 ||
	    (err = pg_buf_puts(&g->build_dir, "/build/arm64-gcc")) < 0)
		return err;
	if (n > 1)
		pg_run_progress(g, "merge", "build worktree %u of %u: %s, O=%s", k, n,
				g->worktree.ptr, g->build_dir.ptr);
	return 0;
}

int pg_gate_recover(const char *home, pg_buf *what)
{
	pg_buf root = PG_BUF_INIT, line = PG_BUF_INIT;
	unsigned k;
	int err = 0;

	for (k = 1; k <= PG_GATE_MAX_WORKTREES && err == 0; k++) {
		int fd = -1;

		/* a worktree never made has nothing to clean */
		pg_buf_clear(&root);
		if ((err = pg_slot_root(&root, home, k)) < 0)
			break;
		if (!pg_is_dir(root.ptr))
			continue;
		/* held: by a live run, which is not dead and cleans up after itself */
		if ((err = lock_slot(&fd, home, k)) == 0) {
			pg_buf_clear(&line);
			if ((err = pg_journal_recover(home, k, NULL, &line)) == 0 && line.len)
				err = pg_buf_printf(what, "%s%s", what->len ? "\n" : "", line.ptr);
		}
		if (fd >= 0)
			close(fd);
		if (err > 0)
			err = 0;
	}
	pg_buf_release(&root);
	pg_buf_release(&line);
	return err;
}
