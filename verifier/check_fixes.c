/* check_fixes.c - fixes-tag: each Fixes: names a real upstream or pull commit, by its subject. */
#include "verifier/pull.h"
#include "common/error.h"

/*
 * Documentation/process/submitting-patches.rst: "Fixes: <12+ hex> ("subject")".
 * Parse the value into the id and the quoted subject; 0 on success.
 */
int pg_fixes_parse(const char *value, size_t *idlen, const char **subject, size_t *sublen)
{
	const char *p = value, *open, *close;
	size_t n = 0;

	while (p[n] && ((p[n] >= '0' && p[n] <= '9') || (p[n] >= 'a' && p[n] <= 'f') ||
			(p[n] >= 'A' && p[n] <= 'F')))
		n++;
	if (n < 4 || n > PG_OID_HEXSZ || p[n] != ' ')
		return -1;
	open = p + n + 1;
	while (*open == ' ')
		open++;
	close = open + strlen(open);
	if (open[0] != '(' || open[1] != '"' || close - open < 4 || close[-1] != ')' ||
	    close[-2] != '"')
		return -1;
	*idlen = n;
	*subject = open + 2;
	*sublen = (size_t)(close - open) - 4;
	return 0;
}

static int check_one(pg_pull *p, enum pg_severity sev, const pg_commit *c, const pg_trailer *t)
{
	const char *subject;
	size_t idlen, sublen;
	pg_oid id;
	pg_commit *target = NULL;
	pg_finding *f = NULL;
	int err, reachable;

	if (pg_fixes_parse(t->value, &idlen, &subject, &sublen) < 0) {
		err = pg_report_add(&f, p->report, PG_CHECK_FIXES_TAG, sev, c,
				    "malformed Fixes: tag (expected: Fixes: <sha> (\"subject\"))");
		return err ? err : pg_finding_detail(f, "trailer", t->line, NULL);
	}
	err = pg_repo_resolve_prefix(&id, p->repo, t->value, idlen);
	if (err == 0) {
		reachable = pg_pull_find(p, &id) ? 1 : pg_repo_is_ancestor(p->repo, &id, &p->upstream_tip);
		if (reachable < 0)
			return reachable;
		if (!reachable)
			err = PG_ENOTFOUND;
	}
	if (err == PG_ENOTFOUND || err == PG_EINVALID) {
		pg_error_clear();
		err = pg_report_add(&f, p->report, PG_CHECK_FIXES_TAG, sev, c,
				    "Fixes: names %.*s, which is neither an upstream nor a pull commit",
				    (int)idlen, t->value);
		return err ? err : pg_finding_detail(f, "trailer", t->line, NULL);
	}
	if (err < 0)
		return err;
	if ((err = pg_repo_read_commit(&target, p->repo, &id)) < 0)
		return err;
	if (strlen(target->subject) != sublen || memcmp(target->subject, subject, sublen)) {
		char hex[PG_OID_HEXSZ + 1];
		pg_buf quoted = PG_BUF_INIT;

		pg_oid_tohex(hex, &id);
		err = pg_report_add(&f, p->report, PG_CHECK_FIXES_TAG, sev, c,
				    "Fixes: %.12s quotes a subject that is not the commit's", hex);
		if (err == 0 && (err = pg_buf_put(&quoted, subject, sublen)) == 0)
			err = pg_finding_detail(f, "subject", quoted.ptr, target->subject);
		pg_buf_release(&quoted);
	}
	pg_commit_free(target);
	return err;
}

int pg_check_fixes_tag(pg_pull *p)
{
	enum pg_severity sev = pg_pull_severity(p, PG_CHECK_FIXES_TAG);
	size_t i, j;
	int err = 0;

	for (i = 0; i < p->ncommits && err == 0 && sev != PG_SEV_OFF; i++)
		for (j = 0; j < p->commits[i]->ntrailers && err == 0; j++)
			if (!strcasecmp(p->commits[i]->trailers[j].key, "Fixes"))
				err = check_one(p, sev, p->commits[i], &p->commits[i]->trailers[j]);
	return err;
}
