/* stage.h - one run of the gate: what its stages share, and a function per stage (pipeline/ only). */
#ifndef PG_STAGE_H
#define PG_STAGE_H

#include "pipeline/gate.h"
#include "pipeline/tree.h"

/*
 * The run of one pull through the stages after verify.  The runner
 * (gate.c) fills everything above "left by the stages" before the first
 * stage runs and frees it after the last; the stages read it, write their
 * logs under logs, and leave what a later stage needs below, or in report
 * (merge_base, merge_commit, approved).
 */
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

	/* where the kernel is built: pullgate's one worktree of the tree and its O= dir */
	pg_buf worktree;
	pg_buf build_dir;

	/* the build and boot scripts' environment on top of ours */
	pg_buf home_env;      /* PULLGATE_HOME=... */
	const char *env[3];

	/* left by the stages */
	pg_oid base;          /* merge: the integration head the merge was made on */
	bool keep_refs;       /* approve: the merge waits for approval, or was approved */

	int lock_fd;          /* the runner's: one kernel job per home */
} pg_run;

/*
 * A stage records its outcome with pg_stage_set(st, ...): passed (the next
 * stage runs), failed (the pull is bad here: its findings are in
 * run->report), skipped or waiting; it returns 0.  Negative when it could
 * not run: the runner marks it "error" with the message and stops.
 */
typedef int (*pg_stage_fn)(pg_run *run, pg_stage *st);

int pg_stage_merge(pg_run *run, pg_stage *st);    /* stage_merge.c */
int pg_stage_build(pg_run *run, pg_stage *st);    /* stage_build.c */
int pg_stage_boot(pg_run *run, pg_stage *st);     /* stage_boot.c */
int pg_stage_approve(pg_run *run, pg_stage *st);  /* stage_approve.c */

/* Tell the caller's progress callback, if any, what the stage is doing. */
void pg_run_progress(const pg_run *run, const char *stage, const char *fmt, ...) PG_PRINTF(3, 4);

/* A status the next one replaces: done of total (0: unknown) unit, elapsed_ms into the step. */
void pg_run_progress_count(const pg_run *run, const char *stage, uint64_t done, uint64_t total,
			   const char *unit, uint64_t elapsed_ms);

/* The maintainer's tree: o->tree, else home/linux. */
int pg_run_tree_path(pg_buf *out, const pg_gate_opts *o);

/* A run's log directory, home/logs/<run_name or the pull's key>, made if missing. */
int pg_run_logs_dir(pg_buf *out, const pg_gate_opts *o, const char *key);

#endif
