/* provenance.h - what a stage ran: its scripts against the shipped ones, the tools' versions, file hashes. */
#ifndef PG_PROVENANCE_H
#define PG_PROVENANCE_H

#include "report/report.h"

/*
 * The kernel scripts and inputs this pullgate was built with, and the
 * SHA-256 of each at build time: generated from the tree by
 * scripts/kernel/gen-shipped.sh (mk/pipeline.mk).  A file under the data
 * directory whose content differs, or a data directory of stand-ins
 * (tests/fakes), makes a run simulated.
 */
typedef struct pg_shipped_file {
	const char *path;     /* relative to the data directory */
	const char *sha256;
} pg_shipped_file;

extern const pg_shipped_file pg_shipped_files[];
extern const size_t pg_nshipped_files;

/* The files each stage runs or reads, relative to the data directory (NULL-terminated). */
extern const char *const pg_build_files[];
extern const char *const pg_boot_files[];
extern const char *const pg_lava_boot_files[];  /* the boot on a LAVA lab's */

/*
 * Record each of files (the first is the script the stage runs) under
 * datadir in p: its path, SHA-256 and whether it is the shipped content.
 * A support file that is absent is skipped when the script itself is a
 * stand-in (which needs none of them), else recorded as unreadable.
 */
int pg_prov_files(pg_report *r, pg_provenance *p, const char *datadir,
		  const char *const *files);

/*
 * The first line of `tool --version` (run from PATH, 10 s at most) in
 * *out (free()); "unavailable: why" when it cannot be run.  Never fails
 * but for PG_ENOMEM.
 */
int pg_prov_tool_version(char **out, const char *tool);

/* The SHA-256 of a file into *out (free()), or NULL when it cannot be read (no error). */
int pg_prov_file_sha256(char **out, const char *path);

#endif
