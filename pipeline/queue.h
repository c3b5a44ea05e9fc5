/* queue.h - a list of pulls gated as a stack, each on the merges of the passing pulls ahead of it, with each failure's cause named. */
#ifndef PG_QUEUE_H
#define PG_QUEUE_H

#include "pipeline/gate.h"

/*
 * The stack: the integration branch's head, then the merge of every pull
 * of the queue that passed, in queue order, each merged onto the one
 * before.  Pull k is gated (merge, build, boot; never approve) onto the
 * stack of the pulls ahead of it; one that fails leaves the stack as it
 * was, so the pulls behind it are stacked without it.  The top of the
 * stack is on refs/heads/pullgate/queue, moved there as each pull passes
 * (so no gc takes a merge the next pull is merged onto): every commit on its
 * first-parent line down to the head is a merge that was built and
 * booted (as far as the stages asked), so the branch can be
 * fast-forwarded to it, or to any of them.
 *
 * Cost: one run a pull, plus, for a pull that fails a kernel stage on a
 * stack with passing pulls in it, the runs that tell why: one or two when
 * the pull ahead whose changes the failure names (a path, an identifier:
 * pipeline/suspect.h) is the one; without a suspect, one run alone on the
 * head and, when it passes there, a bisection of the pulls ahead (O(log k)
 * runs); a wrong suspect's runs narrow that bisection (at most two runs
 * more than it).  A merge conflict reruns the merge stage only, a build
 * failure merge and build.
 */

enum pg_queue_outcome {
	PG_QUEUE_PASSED,     /* on the stack: its merge is the next one's base */
	PG_QUEUE_FAILED,     /* a kernel stage (merge, build, boot) failed on its stack */
	PG_QUEUE_REJECTED,   /* rejected by verify: never merged */
};

const char *pg_queue_outcome_name(enum pg_queue_outcome o);

/* A run made to find out why a pull failed on its stack. */
typedef struct pg_queue_rerun {
	size_t upto;         /* onto the stack of the pulls ahead up to this position (1-based; 0: the head alone) */
	pg_oid onto;         /* that stack's top */
	unsigned stages;     /* enum pg_gate_stage: up to the stage that failed */
	bool failed;         /* the pull failed that stage there too */
	char *run_dir;       /* its log directory */
} pg_queue_rerun;

typedef struct pg_queue_item {
	size_t position;     /* 1-based, in the queue file's order */
	char *repo, *tag;    /* as given */
	enum pg_queue_outcome outcome;
	pg_report *report;   /* the run on its stack (verify alone, when rejected) */
	bool tested;         /* it got past verify: tested_on is set */
	pg_oid tested_on;    /* the stack it was merged onto */
	bool has_merge;      /* its merge was made: merge is set */
	pg_oid merge;
	const char *stage;   /* the stage that failed (static), or NULL */
	size_t with;         /* failed together with the pull at this position; 0: by itself */
	size_t suspect;      /* the position of the pull its failure named, run against first; 0: none */
	char *attribution;   /* one sentence on why it failed, or was rejected; NULL when it passed */
	pg_queue_rerun *reruns;
	size_t nreruns, reruns_alloc;
} pg_queue_item;

typedef struct pg_queue_result {
	pg_queue_item *items;  /* in queue order; only the pulls decided */
	size_t n, alloc;
	pg_oid head;           /* the integration branch's head when the queue started */
	pg_oid stack;          /* the top of the stack: the last passing merge, else head */
	bool has_stack;        /* refs/heads/pullgate/queue was set to stack */
} pg_queue_result;

/*
 * Gate pulls[0..n) as a stack, in order, as described above, with
 * opts for every run (its onto and run_name are the queue's own; its
 * stages must hold merge and not approve).  0 with *out holding a result
 * for every pull.  Negative when a run could not decide (or the queue
 * could not start): the error is set and *out, unless NULL, holds the
 * pulls decided before it, for the caller to show and free.
 */
int pg_queue_run(pg_queue_result **out, const pg_pull_spec *pulls, size_t n,
		 const pg_policy *policy, const pg_gate_opts *opts);
void pg_queue_result_free(pg_queue_result *q);

/*
 * What the CLI's queue and the service's (server/worker.c) share: how a
 * failure on a stack is attributed.
 */

/* The stage where a run stopped the pull: "verify", "merge", "build" or "boot"; NULL: it passed. */
const char *pg_queue_failed_stage(const pg_report *r);

/* The stages (pg_gate_stage flags, within stages) a rerun needs to see a failure at stage again. */
unsigned pg_queue_stages_upto(const char *stage, unsigned stages);

/*
 * Whether a pull runs into trouble on the stack up to upto (0: the head
 * alone, n: the whole stack): 1 it fails, 0 it passes, negative when it
 * could not be told.
 */
typedef int (*pg_queue_fails_fn)(void *ctx, size_t upto);

/*
 * Why a pull that fails on a stack of n merges (n > 0) fails: it is run on
 * the head alone, and when it passes there, the stack is bisected (it
 * passes on 0 and fails on n; about log2(n) runs).  With a suspect (1..n;
 * 0: none, pipeline/suspect.h), it is first run on the stack up to the
 * merge before the suspect's and, when it passes there, on the suspect's:
 * two runs (one when the suspect is on top) name it when it is the one,
 * and what they showed narrows the search when it is not.  *culprit: 0
 * when it fails by itself (only ever said after a run on the head alone),
 * else the smallest upto on which it fails, found between a run where it
 * passed (upto - 1) and one where it failed (upto): the merge at upto is
 * the one it fails together with.  Negative as fails is.
 */
int pg_queue_bisect(size_t *culprit, size_t n, size_t suspect, pg_queue_fails_fn fails,
		    void *ctx);

/* A pull as an attribution names it: "pull <number> (<tag>)". */
typedef struct pg_queue_name {
	size_t number;       /* its place in a file, or its id in the service */
	const char *tag;
} pg_queue_name;

/*
 * The sentence for a pull that failed stage: by itself (with NULL), on
 * branch, or together with the pull with.  failing is the run that failed:
 * a merge's conflicted paths are read from its findings.
 */
int pg_queue_attribution(pg_buf *out, const pg_queue_name *pull, const pg_queue_name *with,
			 const char *stage, const char *branch, const pg_report *failing);

/*
 * The sentence for a pull whose merge failed on branch after with, which
 * it was found to conflict with as it entered the queue, was approved
 * before it: "pull 12 (a) conflicts with pull 9 (b), which master took
 * before it, in x.c".
 */
int pg_queue_attribution_landed(pg_buf *out, const pg_queue_name *pull, const pg_queue_name *with,
				const char *branch, const pg_report *failing);

/* Whether every pull passed. */
bool pg_queue_all_passed(const pg_queue_result *q);

/*
 * The result as JSON: {"queue": [{position, repo, tag, outcome, tested_on,
 * merge, attribution, stage, with, reruns: [...], report: {...}}], "head",
 * "stack"} (docs/report-schema.md).
 */
int pg_queue_format_json(pg_buf *out, const pg_queue_result *q);

#endif
