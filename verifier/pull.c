/* pull.c - loading the pull's commits and the helpers the checks share. */
#include "verifier/pull.h"
#include "common/error.h"

pg_commit *pg_pull_find(const pg_pull *p, const pg_oid *id)
{
	return pg_map_get(&p->index, id->id, PG_OID_RAWSZ);
}

enum pg_severity pg_pull_severity(const pg_pull *p, enum pg_check_id check)
{
	return p->policy->severity[check];
}

const pg_ident *pg_pull_sender(const pg_pull *p)
{
	return p->tag && p->tag->has_tagger ? &p->tag->tagger : NULL;
}

int pg_pull_load(pg_pull *p)
{
	pg_oid *ids = NULL, *hide = calloc(p->nhide + 1, sizeof(*hide));
	size_t n = 0, i, max = p->policy->max_pull_commits;
	char hex[PG_OID_HEXSZ + 1];
	int err;

	if (!hide)
		return pg_error_oom();
	hide[0] = p->upstream_tip;
	for (i = 0; i < p->nhide; i++)
		hide[i + 1] = p->hide[i];
	/* O(pull + upstream side down to the merge base), as git rev-list */
	if ((err = pg_repo_walk_range(&ids, &n, p->repo, &p->tag_commit, hide, p->nhide + 1)) < 0)
		goto done;
	/* no commit is read past the limit: a verdict on part of a pull is none */
	if (max && n > max) {
		err = pg_error_set(PG_ETOOBIG, "the pull has %zu commits, more than the policy's "
				   "max-pull-commits (%zu): pullgate cannot verify it", n, max);
		goto done;
	}
	p->commits = calloc(n + 1, sizeof(*p->commits));
	p->original = calloc(n + 1, sizeof(*p->original));
	if (!p->commits || !p->original) {
		err = pg_error_oom();
		goto done;
	}
	for (i = 0; i < n; i++) {
		if ((err = pg_repo_read_commit(&p->commits[i], p->repo, &ids[i])) < 0)
			goto done;
		p->ncommits++;
		if (p->commits[i]->malformed) {
			pg_oid_tohex(hex, &ids[i]);
			err = pg_error_set(PG_EINVALID, "commit %s is malformed: %s", hex,
					   p->commits[i]->malformed);
			goto done;
		}
		if ((err = pg_map_set(&p->index, p->commits[i]->id.id, PG_OID_RAWSZ,
				      p->commits[i])) < 0)
			goto done;
	}
done:
	free(ids);
	free(hide);
	return err;
}

void pg_pull_release(pg_pull *p)
{
	size_t i;

	for (i = 0; i < p->ncommits; i++)
		pg_commit_free(p->commits[i]);
	free(p->commits);
	free((void *)p->original);
	pg_map_release(&p->index);
	pg_upstream_free(p->upstream);
	p->commits = NULL;
	p->original = NULL;
	p->upstream = NULL;
	p->ncommits = 0;
}
