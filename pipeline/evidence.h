/* evidence.h - a boot judged on its own evidence, and its failures and splats against the base's boot. */
#ifndef PG_EVIDENCE_H
#define PG_EVIDENCE_H

#include "pipeline/ktap.h"
#include "policies/policy.h"
#include "report/report.h"

/* One run of boot.sh as the gate saw it. */
typedef struct pg_boot_run {
	const pg_boot_result *result; /* the parsed console; NULL: boot.sh wrote none */
	int exit_status;              /* boot.sh's exit status; -1: killed by a signal */
	bool timed_out;
	const char *nonce;            /* the nonce put on its kernel command line */
} pg_boot_run;

/*
 * Whether a run is evidence at all: boot.sh exited 0 and its console has
 * no evidence gap (pg_boot_evidence_gaps, with the run's nonce).  Lines
 * saying what is missing are appended to why (may be NULL).
 */
int pg_boot_run_gaps(pg_buf *why, const pg_boot_run *run);

/*
 * Judge the merge's boot into r:
 *   - boot-timeout when it timed out; boot-evidence, an error whatever the
 *     policy says, for each gap (pg_boot_run_gaps) and for each suite that
 *     reported on the base and not on the merge;
 *   - ktap-failure per failed or crashed test and kernel-splat per splat,
 *     at the policy's severity when new, at most a warning, marked
 *     pre-existing, when the base's boot shows the same (the same test
 *     path failing or crashing; a splat with the same pg_splat_key);
 *   - a row in r->suites per suite of either boot, base against merge.
 * base may be NULL, and is not used unless it is evidence itself: the
 * merge is then judged on its own.
 */
int pg_boot_judge(pg_report *r, const pg_policy *policy, const pg_boot_run *merge,
		  const pg_boot_run *base, unsigned timeout_s);

#endif
