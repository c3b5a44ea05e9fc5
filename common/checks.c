/* checks.c - names and default severities of the checks. */
#include "common/checks.h"
#include "common/error.h"

static const struct {
	const char *name;
	enum pg_severity severity;
} table[PG_CHECK__COUNT] = {
	[PG_CHECK_TAG_SIGNATURE] = { "tag-signature", PG_SEV_ERROR },
	[PG_CHECK_MERGETAG_SIGNATURE] = { "mergetag-signature", PG_SEV_ERROR },
	[PG_CHECK_REWRITTEN_UPSTREAM] = { "rewritten-upstream", PG_SEV_ERROR },
	[PG_CHECK_FOREIGN_COMMITTER] = { "foreign-committer", PG_SEV_ERROR },
	[PG_CHECK_RANGE_SIZE] = { "range-size", PG_SEV_WARNING },
	[PG_CHECK_PR_BASE] = { "pull-request-base", PG_SEV_ERROR },
	[PG_CHECK_PR_HEAD] = { "pull-request-head", PG_SEV_ERROR },
	[PG_CHECK_PR_URL] = { "pull-request-url", PG_SEV_ERROR },
	[PG_CHECK_PR_SHORTLOG] = { "pull-request-shortlog", PG_SEV_ERROR },
	[PG_CHECK_PR_DIFFSTAT] = { "pull-request-diffstat", PG_SEV_ERROR },
	[PG_CHECK_SIGNOFF] = { "signoff", PG_SEV_ERROR },
	[PG_CHECK_FIXES_TAG] = { "fixes-tag", PG_SEV_WARNING },
	[PG_CHECK_BACK_MERGE] = { "back-merge", PG_SEV_WARNING },
	[PG_CHECK_RECENT_REBASE] = { "recent-rebase", PG_SEV_WARNING },
	[PG_CHECK_DATE_ANOMALY] = { "date-anomaly", PG_SEV_WARNING },
	[PG_CHECK_MERGE_CONFLICT] = { "merge-conflict", PG_SEV_ERROR },
	[PG_CHECK_BUILD_ERROR] = { "build-error", PG_SEV_ERROR },
	[PG_CHECK_NEW_WARNING] = { "new-warning", PG_SEV_WARNING },
	[PG_CHECK_BOOT_TIMEOUT] = { "boot-timeout", PG_SEV_ERROR },
	[PG_CHECK_KTAP_FAILURE] = { "ktap-failure", PG_SEV_ERROR },
	[PG_CHECK_KERNEL_SPLAT] = { "kernel-splat", PG_SEV_ERROR },
	[PG_CHECK_BOOT_EVIDENCE] = { "boot-evidence", PG_SEV_ERROR },
	[PG_CHECK_LABELLED_BACKPORT] = { "labelled-backport", PG_SEV_OFF },
	[PG_CHECK_TRANSPARENCY] = { "transparency", PG_SEV_ERROR },
};

const char *pg_check_name(enum pg_check_id id)
{
	return (unsigned)id < PG_CHECK__COUNT ? table[id].name : "unknown";
}

int pg_check_from_name(enum pg_check_id *out, const char *name)
{
	unsigned i;

	for (i = 0; i < PG_CHECK__COUNT; i++) {
		if (!strcmp(table[i].name, name)) {
			*out = (enum pg_check_id)i;
			return 0;
		}
	}
	return pg_error_set(PG_ENOTFOUND, "'%s' is not a check", name);
}

enum pg_severity pg_check_default_severity(enum pg_check_id id)
{
	return (unsigned)id < PG_CHECK__COUNT ? table[id].severity : PG_SEV_ERROR;
}

const char *pg_severity_name(enum pg_severity s)
{
	switch (s) {
	case PG_SEV_OFF: return "off";
	case PG_SEV_WARNING: return "warning";
	case PG_SEV_ERROR: return "error";
	}
	return "error";
}

int pg_severity_from_name(enum pg_severity *out, const char *name)
{
	if (!strcmp(name, "off"))
		*out = PG_SEV_OFF;
	else if (!strcmp(name, "warning"))
		*out = PG_SEV_WARNING;
	else if (!strcmp(name, "error"))
		*out = PG_SEV_ERROR;
	else
		return pg_error_set(PG_EINVALID, "'%s' is not a severity (error, warning, off)",
				    name);
	return 0;
}
