/* checks.h - the stable check ids and their default severities. */
#ifndef PG_CHECKS_H
#define PG_CHECKS_H

#include "common/compat.h"

enum pg_severity {
	PG_SEV_OFF = 0,
	PG_SEV_WARNING = 1,
	PG_SEV_ERROR = 2,
};

/* The ids are stable: policies, JSON reports and the store use the names. */
enum pg_check_id {
	PG_CHECK_TAG_SIGNATURE,
	PG_CHECK_MERGETAG_SIGNATURE,
	PG_CHECK_REWRITTEN_UPSTREAM,
	PG_CHECK_FOREIGN_COMMITTER,
	PG_CHECK_RANGE_SIZE,
	PG_CHECK_PR_BASE,
	PG_CHECK_PR_HEAD,
	PG_CHECK_PR_URL,
	PG_CHECK_PR_SHORTLOG,
	PG_CHECK_PR_DIFFSTAT,
	PG_CHECK_SIGNOFF,
	PG_CHECK_FIXES_TAG,
	PG_CHECK_BACK_MERGE,
	PG_CHECK_RECENT_REBASE,
	PG_CHECK_DATE_ANOMALY,
	PG_CHECK_MERGE_CONFLICT,
	PG_CHECK_BUILD_ERROR,
	PG_CHECK_NEW_WARNING,
	PG_CHECK_BOOT_TIMEOUT,
	PG_CHECK_KTAP_FAILURE,
	PG_CHECK_KERNEL_SPLAT,
	PG_CHECK_BOOT_EVIDENCE,   /* always an error: a boot passes only on evidence */
	PG_CHECK_LABELLED_BACKPORT, /* off: a note only (rewritten-upstream's copies) */
	PG_CHECK_TRANSPARENCY,    /* the push records of kernel.org's transparency log */
	PG_CHECK__COUNT
};

/* "rewritten-upstream" etc.; never NULL for a valid id. */
const char *pg_check_name(enum pg_check_id id);

/* 0 and *out set, or PG_ENOTFOUND for an unknown name. */
int pg_check_from_name(enum pg_check_id *out, const char *name);

enum pg_severity pg_check_default_severity(enum pg_check_id id);

const char *pg_severity_name(enum pg_severity s);
int pg_severity_from_name(enum pg_severity *out, const char *name);

#endif
