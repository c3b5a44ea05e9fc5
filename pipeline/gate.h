/* gate.h - pullgate gate: verify, merge, build, boot, approve, stopping at the first rejection. */
#ifndef PG_GATE_H
#define PG_GATE_H

#include "common/buf.h"
#include "common/progress.h"
#include "pipeline/settings.h"
#include "verifier/verify.h"

#include <signal.h>


enum pg_gate_stage {
	PG_GATE_MERGE = 1 << 0,
	PG_GATE_BUILD = 1 << 1,
	PG_GATE_BOOT = 1 << 2,
	PG_GATE_APPROVE = 1 << 3,
	PG_GATE_ALL = 0xF,
};

typedef struct pg_gate_opts {
	unsigned version;
	const char *home;            /* $PULLGATE_HOME */
	const char *datadir;         /* where scripts/kernel/ lives */
	const char *run_name;        /* this run's logs go to home/logs/<run_name>;
					NULL: the pull's key (a rerun replaces them) */
	unsigned stages;             /* which of the stages after verify run */
	pg_gate_settings settings;   /* the tree, branch, merge identity, approval, timeouts,
					build worktrees, attestation key: resolved by the caller
					(pg_gate_settings_resolve), only read here */
	pg_progress_fn progress;     /* what a stage is doing (common/progress.h); may be NULL.
					The verify stage reports through spec->progress. */
	void *ctx;
	volatile sig_atomic_t *cancel;
	const pg_oid *expect_tag;    /* the tag object a push record named: anything else
					is not merged (pg_gate_expected_tag); NULL: none */
	bool explain_tests;          /* verify and merge only, then record the KUnit
					selection (report->selection): nothing is built */
	bool *branch_moved;          /* set when the approval found the integration branch
					moved since the merge was made (the run then fails with
					PG_ECONFLICT, nothing moved): test it again on the new
					head.  May be NULL */
	int (*approving)(void *ctx); /* pg_gate_approve: called once the tag is verified again,
					before the branch moves, to record the approval; a
					negative return moves nothing.  May be NULL */
	void *approving_ctx;
	bool by_policy;              /* pg_gate_approve: the policy approves (approval: auto),
					not the maintainer: the branch's log and the attestation
					say so */
	const pg_policy *policy;     /* pg_gate_approve: the policy in force now, under which
					the tag's signature is verified again (a key removed or
					revoked since the test approves nothing); NULL: nothing
					can be approved */
	const pg_oid *onto;          /* the merge stage merges onto this commit, not onto the
					integration branch's head: a stack of tested merges
					(pipeline/queue.h).  It must hold the head (be it or
					descend from it), else PG_EINVALID; report->merge_base
					is onto, so approval moves the branch only when it is
					at onto by then.  NULL: the head */
} pg_gate_opts;

/* The most build worktrees a run chooses from (pipeline.build-worktrees). */
#define PG_GATE_MAX_WORKTREES 16

#define PG_GATE_OPTS_VERSION 1

/* Options with every field zero but the version, and the settings' defaults. */
#define PG_GATE_OPTS_INIT { .version = PG_GATE_OPTS_VERSION, .settings = PG_GATE_SETTINGS_DEFAULT }

/*
 * Run the pull through every selected stage.  On 0, *out is the report:
 * the verify findings, the findings of the stage that stopped it, and one
 * pg_stage per stage run.  Only the approve stage moves the integration
 * branch, with a compare-and-swap against the head the merge was made on.
 * Whatever happens, the tree's working tree and integration branch are
 * left as they were unless the pull was approved, and the pull's refs are
 * removed unless its merge is kept for approval.  The run builds in the
 * first free of opts->settings.build_worktrees build worktrees
 * (home/work/build, then home/slots/<k>/work/build), after any other run
 * of the same pull, waiting for one when all are taken; a build worktree
 * is pullgate's own and stays, detached at the last merge built there.
 * Negative: could not decide (the report, if any, is freed).
 */
int pg_gate_run(pg_report **out, const pg_pull_spec *spec, const pg_policy *policy,
		const pg_gate_opts *opts);

/* The flag of the stage named name[0..len) (merge, build, boot, approve); 0 when unknown. */
unsigned pg_gate_stage_flag(const char *name, size_t len);

/*
 * Whether a set of stages can run: the stages after verify, in order and
 * without a gap (none; merge; merge and build; ...; all four), so that
 * nothing is booted unbuilt and nothing is approved untested.
 */
bool pg_gate_stages_valid(unsigned stages);

/*
 * The maintainer approves a pull that waits (its report's approve stage is
 * "waiting").  r holds what the gate's run recorded: tag, tag_object,
 * tag_signer, merge_base, merge_commit, run_dir.  The tag is read again
 * from spec->repo and must still be r->tag_object (and o->expect_tag, if
 * given), r->tag_signer must name the trusted signer that verified it, and
 * that signature must still hold under o->policy (pg_verify_signer: the
 * key still in its keyring, trusted by its signers, unrevoked, unexpired);
 * then the integration branch moves from r->merge_base to r->merge_commit
 * with a compare-and-swap, r is marked approved and the notice written
 * (its path in *notice; naming spec->name, else spec->repo).  PG_ECONFLICT
 * when the tag or the branch moved since the test: the branch does not
 * move and the pull must be run again; PG_EINVALID without the signer, or
 * when the policy now refuses it (the message says why): nothing moves, and
 * the pull can wait as it did.
 */
int pg_gate_approve(pg_report *r, const pg_pull_spec *spec, const pg_gate_opts *o,
		    pg_buf *notice);

/*
 * Finish an approval that was cut short (its process killed) after it was
 * recorded (opts->approving) and before its end was: r and spec as for
 * pg_gate_approve.  1 when the integration branch holds r->merge_commit:
 * the approval happened, and what follows the move is done now (the
 * notice, the pull's refs removed, the attestation signed again); 0 when
 * the branch is still at r->merge_base: nothing moved, and the approval
 * can be undone; PG_ECONFLICT when the branch is elsewhere (the pull must
 * be tested again).
 */
int pg_gate_approve_resume(pg_report *r, const pg_pull_spec *spec, const pg_gate_opts *o,
			   pg_buf *notice);

/*
 * The one comparison of the tag object verified (r->tag_object) with the
 * one a push record named (*expect; NULL: none was named, and any is
 * right): 0, or PG_ECONFLICT with "TAG is ID, not the ID the push record
 * names", and ": " then after it when then is given (what did not happen
 * for it).
 */
int pg_gate_expected_tag(const pg_report *r, const pg_oid *expect, const char *then);

/*
 * Clean up after the gate runs in home that died (SIGKILL, a crash, power
 * loss), in every build worktree there is: stop the build or boot each
 * left running, delete its pull's refs and the stale locks it left
 * (pg_journal_recover).  Every gate run does this for its build worktree
 * once it holds its lock; `serve` does it for all at start-up.  A build
 * worktree a live run holds is left alone.  *what gets one line per
 * worktree cleaned, or nothing.
 */
int pg_gate_recover(const char *home, pg_buf *what);

/* The name pullgate uses for a pull in branches, worktrees and log dirs. */
int pg_gate_pull_key(pg_buf *out, const char *tag);

#endif
