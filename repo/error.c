/* error.c - libgit2's failures as ours: its code mapped to a PG_E* code, its message kept. */
#include "repo/internal.h"
#include "common/error.h"

int pg_git_fail(int gerr, const char *fmt, ...)
{
	const git_error *e = git_error_last();
	char what[512];
	va_list ap;
	int code;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	switch (gerr) {
	case GIT_ENOTFOUND: code = PG_ENOTFOUND; break;
	case GIT_EEXISTS: code = PG_EEXISTS; break;
	case GIT_EINVALIDSPEC:
	case GIT_EPEEL:
	case GIT_EAMBIGUOUS: code = PG_EINVALID; break;
	case GIT_ELOCKED:
	case GIT_EMODIFIED:
	case GIT_ECONFLICT: code = PG_ECONFLICT; break;
	case GIT_EUSER: code = PG_ECANCELLED; break;
	default: code = PG_ERROR; break;
	}
	return pg_error_set(code, "%s: %s", what, e && e->message ? e->message : "libgit2 error");
}
