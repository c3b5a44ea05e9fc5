/* run.h - one run of the gate: the pg_run the runner and its stages share, and its helpers (pipeline/ only). */
#ifndef PG_RUN_H
#define PG_RUN_H

#include "pipeline/gate.h"
#include "pipeline/tree.h"

/*
 * The run of one pull through the stages after verify.  The runner
 * (gate.c) fills everything above "left by the stages" before the first
 * stage runs and frees it after the last; the stages read it, write their
 * logs under logs, and leave what a later stage needs below, or in report
 * (merge_base, merge_commit, approved).
 */
/* The longest name of a build worktree, its NUL included (pg_slot_worktree_name). */
#define PG_SLOT_NAME_MAX 32

typedef struct pg_run {
	const pg_pull_spec *spec;
	const pg_policy *policy;
	const pg_gate_opts *o;
	pg_report *report;    /* the verdict so far: stages add findings */
	pg_buf key;           /* the pull's name in branches and logs (pg_gate_pull_key) */
	pg_buf logs;          /* this run's log directory (pg_run_logs_dir) */

	/* the maintainer's tree, open on the integration branch */
	pg_tree *tree;
	pg_buf tree_path;

	/* where the kernel is built: the run's build worktree of the tree and its O= dir (slot.c) */
	unsigned slot;        /* which build worktree, 1 to o->settings.build_worktrees */
	char wt_name[PG_SLOT_NAME_MAX]; /* its name among the tree's worktrees: build, build-2, ... */
	pg_buf worktree;
	pg_buf build_dir;

	/* the build and boot scripts' environment on top of ours */
	pg_buf home_env;      /* PULLGATE_HOME=... */
	pg_buf distcc_env;    /* PG_DISTCC_HOSTS=...: the policy's distcc hosts, if any */
	pg_buf icecc_env;     /* PG_ICECC=...: the settings' iceccd, if any */
	pg_buf lava_env[5];   /* PG_LAVA_*=...: the policy's LAVA lab, when it boots there */
	const char *env[12];  /* the above, PG_BUILD_STREAM=1 and the NULL */

	/* evidence: every run's own */
	pg_buf nonce;         /* random, on this run's kernel command lines: the init prints it */
	char *toolchain;      /* the cross compiler's and QEMU's version lines */
	char *qemu;
	pg_buf tools_key;     /* what a boot depends on but the tree: scripts, tools (hex) */

	/* the pull-aware KUnit selection (pg_run_select): the fragment's file, and its hash */
	pg_buf select_path;   /* empty: nothing selected, build.sh gets no --select */
	pg_buf select_key;    /* SHA-256 (hex) of that fragment, part of the base boot's key */

	/* left by the stages */
	pg_oid base;          /* merge: the integration head the merge was made on */
	pg_buf base_boot;     /* build: the directory holding the base's boot (console, meta) */
	bool base_booted;     /* build: that boot is this run's, not kept from an earlier one */
	bool keep_refs;       /* approve: the merge waits for the maintainer's approval */

	int lock_fd;          /* the build worktree's lock: one run in it at a time */
	int pull_lock_fd;     /* the pull's lock: one run of a pull at a time */
	pg_buf journal;       /* work/run.journal of the build worktree while the run holds it */
} pg_run;

/*
 * run.c: what the runner and the stages both call.  They live here, not
 * in the runner (gate.c), so that the stages never call back into the
 * runner that calls them.
 */

/* Tell the caller's progress callback, if any, what the stage is doing. */
void pg_run_progress(const pg_run *run, const char *stage, const char *fmt, ...) PG_PRINTF(3, 4);

/* A status the next one replaces: done of total (0: unknown) unit, elapsed_ms into the step. */
void pg_run_progress_count(const pg_run *run, const char *stage, uint64_t done, uint64_t total,
			   const char *unit, uint64_t elapsed_ms);

/* The maintainer's tree: o->settings.tree, else home/linux. */
int pg_run_tree_path(pg_buf *out, const pg_gate_opts *o);

/*
 * A fresh log directory for a run: home/logs/<run_name or the pull's
 * key>/run-N, N one more than any before, made here (never one an earlier
 * run wrote), and home/logs/<...>/latest pointed at it.
 */
int pg_run_logs_dir(pg_buf *out, const pg_gate_opts *o, const char *key);

/*
 * The build worktrees (slot.c).  Worktree k (1 to PG_GATE_MAX_WORKTREES)
 * lives under its root: home itself for the first, so that a home made
 * before there were more keeps its warm tree, build dir and ccache, and
 * home/slots/<k> for the others, laid out alike below (work/build, the
 * worktree; build/arm64-gcc, its O= dir; work/run.journal; .kernel.lock),
 * so that a compile's command line, relative to the build dir under
 * CCACHE_BASEDIR=home, is the same in every one and hits the one ccache.
 * The base's warnings and boot and the object count a build's progress
 * reads are kept in the O= dir: no two runs share one at a time.
 */
int pg_slot_root(pg_buf *out, const char *home, unsigned k);
/*
 * The name of build worktree k among tree_path's worktrees: build,
 * build-2, ... for a home's own tree (home/linux); for a tree given from
 * elsewhere (--tree), which other homes may share, the same with "-h" and
 * eight hex digits of the home's SHA-256: two homes never share a
 * worktree's name, and so its index and HEAD.  out holds PG_SLOT_NAME_MAX
 * bytes.
 */
int pg_slot_worktree_name(char *out, const char *home, const char *tree_path, unsigned k);

/*
 * Take the pull's lock (home/work/pulls/<key>.lock: two runs of one pull
 * would share its refs), then the first free build worktree of
 * o->settings.build_worktrees, waiting for either, with one progress line, until
 * it frees or the run is cancelled (PG_ECANCELLED).  Sets run->slot,
 * wt_name, worktree, build_dir, lock_fd and pull_lock_fd.
 */
int pg_run_take_slot(pg_run *run);

/* Try the pull's lock for key without waiting: 0 taken (*fd), 1 held by a live run. */
int pg_run_lock_pull(int *fd, const char *home, const char *key);

/*
 * The run journal (recover.c): while a run holds its build worktree it
 * says which pull's refs exist and which child runs, so that whoever next
 * holds that worktree's lock can clean up after a run that died (SIGKILL,
 * power loss).
 */
int pg_journal_begin(pg_run *run);
void pg_journal_child(void *run, int pid);   /* a pg_spawn_opts on_start callback */
void pg_journal_end(pg_run *run);

/*
 * With build worktree slot's lock held: if its journal names a run that
 * died, stop the child it left running, remove the worktree's stale index
 * lock and, unless another live run of the same pull holds the pull's
 * lock (held_key: the pull whose lock the caller holds, or NULL), the
 * pull's refs and their stale locks; remove the journal.  *what gets one
 * line saying what was cleaned (empty when nothing was).
 */
int pg_journal_recover(const char *home, unsigned slot, const char *held_key, pg_buf *what);

#endif
