/* check_back_merge.c - back-merge: merges of upstream's own line into the pull. */
#include "verifier/pull.h"
#include "common/array.h"
#include "common/error.h"

/*
 * A parent of a pull commit that is not itself in the pull is upstream's
 * (that is how the pull is cut).  A merge whose second or later parent is
 * on upstream's first-parent line (a commit of the mainline, or a release
 * tag on it) pulled upstream into the branch: Documentation/maintainer/
 * rebasing-and-merging.rst asks for a good reason for each such
 * back-merge.  Any other upstream commit is a topic branch that upstream
 * merged too, which the same document recommends sharing that way: no
 * finding.
 */

/* The merged parent k of m, when it is upstream's (not in the pull). */
typedef struct merged_parent {
	const pg_commit *m;
	size_t k;
} merged_parent;

static int report(pg_pull *p, enum pg_severity sev, const merged_parent *mp)
{
	pg_commit *merged = NULL;
	pg_finding *f = NULL;
	pg_buf what = PG_BUF_INIT;
	char hex[PG_OID_HEXSZ + 1];
	int err;

	pg_oid_tohex(hex, &mp->m->parents[mp->k]);
	if ((err = pg_repo_read_commit(&merged, p->repo, &mp->m->parents[mp->k])) < 0)
		return err;
	err = pg_report_add(&f, p->report, PG_CHECK_BACK_MERGE, sev, mp->m,
			    "merges upstream's %.12s into the pull", hex);
	if (err == 0)
		err = pg_buf_printf(&what, "%.12s %s", hex, merged->subject);
	if (err == 0)
		err = pg_finding_detail(f, "merged", NULL, what.ptr);
	if (err == 0)
		err = pg_finding_detail(f, "see", "Documentation/maintainer/rebasing-and-merging.rst",
					NULL);
	pg_buf_release(&what);
	pg_commit_free(merged);
	return err;
}

int pg_check_back_merge(pg_pull *p)
{
	enum pg_severity sev = pg_pull_severity(p, PG_CHECK_BACK_MERGE);
	merged_parent *mps = NULL;
	pg_oid *ids = NULL;
	bool *on = NULL;
	size_t i, k, n = 0, alloc = 0, ids_alloc = 0;
	int err = 0;

	if (sev == PG_SEV_OFF)
		return 0;
	for (i = 0; i < p->ncommits && err == 0; i++) {
		const pg_commit *m = p->commits[i];

		for (k = 1; k < m->nparents && err == 0; k++) {
			if (pg_pull_find(p, &m->parents[k]))
				continue;
			if ((err = PG_ARRAY_GROW(mps, n + 1, alloc)) < 0 ||
			    (err = PG_ARRAY_GROW(ids, n + 1, ids_alloc)) < 0)
				break;
			mps[n].m = m;
			mps[n].k = k;
			ids[n++] = m->parents[k];
		}
	}
	if (err < 0 || !n)
		goto done;
	if (!(on = calloc(n, sizeof(*on)))) {
		err = pg_error_oom();
		goto done;
	}
	/* one walk of upstream's line for all the merges */
	if ((err = pg_repo_first_parent_line(on, p->repo, &p->upstream_tip, ids, n)) < 0)
		goto done;
	for (i = 0; i < n && err == 0; i++)
		if (on[i])
			err = report(p, sev, &mps[i]);
done:
	free(mps);
	free(ids);
	free(on);
	return err;
}
