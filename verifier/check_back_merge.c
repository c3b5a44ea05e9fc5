/* check_back_merge.c - back-merge: merges of upstream into the pull. */
#include "verifier/pull.h"
#include "common/error.h"

/*
 * A parent of a pull commit that is not itself in the pull is upstream's
 * (that is how the pull is cut).  A merge whose second or later parent is
 * upstream's pulled upstream into the branch: Documentation/maintainer/
 * rebasing-and-merging.rst asks for a good reason for each such back-merge.
 */
int pg_check_back_merge(pg_pull *p)
{
	enum pg_severity sev = pg_pull_severity(p, PG_CHECK_BACK_MERGE);
	char hex[PG_OID_HEXSZ + 1];
	size_t i, k;
	int err = 0;

	for (i = 0; i < p->ncommits && err == 0 && sev != PG_SEV_OFF; i++) {
		const pg_commit *m = p->commits[i];

		for (k = 1; k < m->nparents && err == 0; k++) {
			pg_commit *merged = NULL;
			pg_finding *f = NULL;
			pg_buf what = PG_BUF_INIT;

			if (pg_pull_find(p, &m->parents[k]))
				continue;
			pg_oid_tohex(hex, &m->parents[k]);
			if ((err = pg_repo_read_commit(&merged, p->repo, &m->parents[k])) < 0)
				break;
			err = pg_report_add(&f, p->report, PG_CHECK_BACK_MERGE, sev, m,
					    "merges upstream's %.12s into the pull", hex);
			if (err == 0)
				err = pg_buf_printf(&what, "%.12s %s", hex, merged->subject);
			if (err == 0)
				err = pg_finding_detail(f, "merged", NULL, what.ptr);
			if (err == 0)
				err = pg_finding_detail(f, "see",
							"Documentation/maintainer/rebasing-and-merging.rst",
							NULL);
			pg_buf_release(&what);
			pg_commit_free(merged);
		}
	}
	return err;
}
