/* check_signoff.c - signoff: every non-merge commit signed off by its author and its committer. */
#include "verifier/pull.h"
#include "common/error.h"

/* Documentation/process/submitting-patches.rst, "Sign your work" */

static bool email_in(const char *value, const char *email)
{
	const char *lt = strrchr(value, '<'), *gt = lt ? strchr(lt, '>') : NULL;
	size_t n = strlen(email);

	return lt && gt && (size_t)(gt - lt - 1) == n && n && !strncasecmp(lt + 1, email, n);
}

bool pg_commit_signed_off_by(const pg_commit *c, const char *email)
{
	size_t i;

	for (i = 0; i < c->ntrailers; i++)
		if (!strcasecmp(c->trailers[i].key, "Signed-off-by") &&
		    email_in(c->trailers[i].value, email))
			return true;
	return false;
}

static int signoffs_text(pg_buf *out, const pg_commit *c)
{
	size_t i;
	int err = 0;

	for (i = 0; i < c->ntrailers && err == 0; i++)
		if (!strcasecmp(c->trailers[i].key, "Signed-off-by"))
			err = pg_buf_printf(out, "%s%s", out->len ? ", " : "", c->trailers[i].value);
	if (err == 0 && !out->len)
		err = pg_buf_puts(out, "(none)");
	return err;
}

int pg_check_signoff(pg_pull *p)
{
	enum pg_severity sev = pg_pull_severity(p, PG_CHECK_SIGNOFF);
	pg_buf who = PG_BUF_INIT, sobs = PG_BUF_INIT;
	size_t i;
	int err = 0;

	for (i = 0; i < p->ncommits && err == 0 && sev != PG_SEV_OFF; i++) {
		const pg_commit *c = p->commits[i];
		bool author, committer;
		pg_finding *f = NULL;

		if (c->nparents > 1)
			continue;
		author = pg_commit_signed_off_by(c, c->author.email);
		committer = pg_commit_signed_off_by(c, c->committer.email);
		if (author && committer)
			continue;
		err = pg_report_add(&f, p->report, PG_CHECK_SIGNOFF, sev, c,
				    "no Signed-off-by from its %s",
				    !author && !committer ?
					(pg_ident_same_person(&c->author, &c->committer) ?
					 "author and committer" : "author, nor from its committer") :
				    !author ? "author" : "committer");
		pg_buf_clear(&who);
		if (err == 0 && !author && (err = pg_ident_format(&who, &c->author)) == 0)
			err = pg_finding_detail(f, "author", who.ptr, NULL);
		pg_buf_clear(&who);
		if (err == 0 && !committer && (err = pg_ident_format(&who, &c->committer)) == 0)
			err = pg_finding_detail(f, "committer", who.ptr, NULL);
		pg_buf_clear(&sobs);
		if (err == 0 && (err = signoffs_text(&sobs, c)) == 0)
			err = pg_finding_detail(f, "signed-off-by", sobs.ptr, NULL);
	}
	pg_buf_release(&who);
	pg_buf_release(&sobs);
	return err;
}
