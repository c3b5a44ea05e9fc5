/* isolate.h - a job's verify in a child process: a pull's repository that crashes or hangs libgit2 ends one job, not the service. */
#ifndef PG_ISOLATE_H
#define PG_ISOLATE_H

#include "common/json.h"
#include "common/progress.h"
#include "pipeline/settings.h"
#include "policies/policy.h"
#include "report/report.h"

#include <signal.h>

/*
 * pullgate reads what it can check itself (pack indexes, loose objects,
 * commit-graphs, identity indexes), but libgit2 still reads the objects of
 * packs, and libgit2 1.5.1 is known to loop for ever or crash on some
 * damaged ones.  The service's workers are threads of one process, so a
 * pull's repository is never read by libgit2 in it: each run of the gate
 * on a pull, its verify (`pullgate gate --stages verify`) and its kernel
 * stages (`pullgate gate --stages merge,... --no-approve`), is a child
 * process of its own, held to a deadline and no core file (the verify also
 * to an address-space limit), killed with the thread that started it; its
 * progress comes back as JSON lines (--progress-json) and its report as
 * JSON, read as untrusted input (pg_report_parse_json).
 */
typedef struct pg_isolate_opts {
	const char *home;              /* $PULLGATE_HOME of the child */
	const char *datadir;           /* PULLGATE_DATADIR of the child; may be NULL */
	const pg_policy *policy;       /* the policy in force: the child reads the same file,
					  and refuses it unless its SHA-256 is this one's */
	uint64_t index_cache_size;     /* 0: the default */
	uint64_t index_memory;         /* 0: the default */
	uint64_t max_memory;           /* a verify child's address space; 0: unlimited (a
					  kernel run's children, the compiler and QEMU, take
					  what they take) */
	const pg_gate_settings *settings; /* the kernel stages' tree, branch, merge identity
					     and build worktrees; NULL for a verify */
	volatile sig_atomic_t *cancel; /* the child is stopped when it becomes non-zero */
	pg_progress_fn progress;       /* the child's progress lines; may be NULL */
	void *ctx;
} pg_isolate_opts;

/* What the service knows of the pull it verifies. */
typedef struct pg_isolate_pull {
	const char *repo;              /* where it is fetched from */
	const char *tag;
	const char *name;              /* its public URL, when not repo; may be NULL */
	const char *mail;              /* the pull-request mail's bytes; may be NULL */
	size_t mail_len;
	const char *run_name;          /* the run's logs: $PULLGATE_HOME/logs/<run_name> */
	unsigned stages;               /* the kernel stages (pg_gate_stage flags); 0: verify */
	const pg_oid *expect;          /* the tag object a push record named; may be NULL */
	const pg_oid *onto;            /* the kernel stages merge onto this commit, not onto the
					  branch's head (a queue's stack: pg_gate_opts.onto); it
					  must descend from the head, else the child cannot decide
					  ("... does not descend from ...").  NULL: the head;
					  unused for a verify */
} pg_isolate_pull;

/*
 * Run the gate on the pull in a child process: verify alone, or verify and
 * pull->stages, never approving (the service approves, as the maintainer
 * does).  0 with *out the report; negative when it could not decide, with
 * the reason: the child's own error line, "did not finish within N s",
 * "died of SIGSEGV (signal 11)", or what is wrong with the report it left.
 * PG_ECANCELLED when *cancel stopped it.
 */
int pg_isolated_gate(pg_report **out, const pg_isolate_pull *pull, const pg_isolate_opts *o);

/*
 * Whether the pull merges with the pulls ahead of it in the queue, in a
 * child process (`pullgate conflicts --json`, held to the policy's verify
 * deadline and the verify's address-space limit): ahead[0..ahead_len)
 * its --ahead file's text, "REPO TAG TAG-OBJECT" lines, first place first,
 * written in a directory of the child's own; pull->expect its own
 * tag object, pull->onto the base (NULL: the branch's head); its stages,
 * mail and run_name are unused.  0 with *out the child's JSON document
 * (an object, unchecked beyond that: the caller reads it as untrusted);
 * negative when it could not decide, with the reason.
 */
int pg_isolated_conflicts(pg_json **out, const pg_isolate_pull *pull, const char *ahead,
			  size_t ahead_len, const pg_isolate_opts *o);

#endif
