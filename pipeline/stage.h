/* stage.h - the gate's stages: a function per stage, and what one stage asks of another (pipeline/ only). */
#ifndef PG_STAGE_H
#define PG_STAGE_H

#include "pipeline/run.h"

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

/*
 * The base's boot (stage_boot.c), for the boot stage to judge the merge's
 * against.  It is kept in the build dir per base tree, scripts and tools:
 * pg_run_base_boot_needed sets run->base_boot to where it is kept and
 * says whether it is missing; then the build stage builds the base and
 * calls pg_run_base_boot while the build dir holds the base's Image.
 */
bool pg_run_base_boot_needed(pg_run *run, const pg_oid *base_tree);

/* The boot's script and inputs: boot.sh's, or lava.sh's when the run boots on LAVA. */
const char *const *pg_run_boot_files(const pg_run *run);
int pg_run_base_boot(pg_run *run, const pg_oid *base_tree);

/*
 * The KUnit selection for the pull (stage_build.c): the paths the merge
 * changes against its base, read in the merge's tree (pipeline/select.h),
 * capped by the policy, recorded in the report; the added options are
 * written to the run's kunit-select.config (run->select_path) for both
 * the base's and the merge's build.  Needs the merge stage's merge.
 */
int pg_run_select(pg_run *run);

#endif
