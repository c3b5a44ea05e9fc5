/* pull.c - loading the pull's commits and the helpers the checks share. */
#include "verifier/pull.h"
#include "common/error.h"
#include "verifier/gpg.h"

/* As the signature check: kernel tag signatures are well under 1 KiB. */
#define SIG_MAX ((size_t)64 << 10)

pg_commit *pg_pull_find(const pg_pull *p, const pg_oid *id)
{
	return pg_map_get(&p->index, id->id, PG_OID_RAWSZ);
}

enum pg_severity pg_pull_severity(const pg_pull *p, enum pg_check_id check)
{
	return p->policy->severity[check];
}

bool pg_pull_gpg_keys(pg_gpg_keys *keys, const pg_policy *policy)
{
	memset(keys, 0, sizeof(*keys));
	if (policy->keyring)
		keys->keyring = policy->keyring;
	else if (policy->pgpkeys)
		keys->pgpkeys = policy->pgpkeys;
	else
		keys->gnupg_home = policy->gnupg_home;
	return keys->keyring || keys->pgpkeys || keys->gnupg_home;
}

int pg_pull_gpg_open(pg_gpg **out, const pg_pull *p)
{
	pg_buf tmp = PG_BUF_INIT;
	pg_gpg_keys keys;
	int err = 0;

	*out = NULL;
	pg_pull_gpg_keys(&keys, p->policy);
	if (!keys.gnupg_home && p->home)
		err = pg_buf_printf(&tmp, "%s/tmp", p->home);
	if (err == 0)
		err = pg_gpg_open(out, &keys, tmp.len ? tmp.ptr : NULL);
	pg_buf_release(&tmp);
	return err;
}

const pg_ident *pg_pull_sender(const pg_pull *p)
{
	return p->tag && p->tag->has_tagger ? &p->tag->tagger : NULL;
}

/* Whether the signature check would hand t's signature to gpg. */
static bool verifiable(const pg_tagobj *t)
{
	return t && t->signature && !strncmp(t->signature, "-----BEGIN PGP ", 15) &&
	       t->signature_len <= SIG_MAX;
}

/*
 * Start verifying the tag's signature in the background, with the keys
 * and the private home the signature check will use.  Nothing is lost if
 * it cannot start: the check then verifies as it always did.
 */
static void prefetch_tag(pg_pull *p)
{
	pg_buf tmp = PG_BUF_INIT;
	pg_gpg_keys keys;

	if (!pg_pull_gpg_keys(&keys, p->policy) ||
	    (pg_pull_severity(p, PG_CHECK_TAG_SIGNATURE) == PG_SEV_OFF &&
	     pg_pull_severity(p, PG_CHECK_MERGETAG_SIGNATURE) == PG_SEV_OFF))
		return;
	if (!keys.gnupg_home && p->home && pg_buf_printf(&tmp, "%s/tmp", p->home) < 0)
		goto done;
	if (pg_gpg_prefetch_start(&p->gpg_prefetch, &keys, tmp.len ? tmp.ptr : NULL) < 0)
		goto done;
	if (pg_pull_severity(p, PG_CHECK_TAG_SIGNATURE) != PG_SEV_OFF && verifiable(p->tag))
		pg_gpg_prefetch_add(p->gpg_prefetch, p->tag->payload, p->tag->payload_len,
				    p->tag->signature, p->tag->signature_len);
done:
	pg_buf_release(&tmp);
	pg_error_clear();
}

/* Queue the mergetags of the pull's merges, in the order the check reads them. */
static void prefetch_mergetags(pg_pull *p)
{
	size_t i, j;

	if (!p->gpg_prefetch || pg_pull_severity(p, PG_CHECK_MERGETAG_SIGNATURE) == PG_SEV_OFF)
		return;
	for (i = 0; i < p->ncommits; i++) {
		const pg_commit *m = p->commits[i];

		for (j = 0; m->nparents > 1 && j < m->nheaders; j++) {
			pg_tagobj *t = NULL;

			if (strcmp(m->headers[j].name, "mergetag") ||
			    pg_tagobj_parse(&t, m->headers[j].value, m->headers[j].value_len) < 0)
				continue;
			if (verifiable(t))
				pg_gpg_prefetch_add(p->gpg_prefetch, t->payload, t->payload_len,
						    t->signature, t->signature_len);
			pg_tagobj_free(t);
		}
	}
	pg_error_clear();
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
	prefetch_tag(p);
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
	p->labelled = calloc(n + 1, sizeof(*p->labelled));
	if (!p->commits || !p->original || !p->labelled) {
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
	prefetch_mergetags(p);
done:
	free(ids);
	free(hide);
	return err;
}

void pg_pull_release(pg_pull *p)
{
	size_t i;

	pg_gpg_prefetch_finish(p->gpg_prefetch);
	p->gpg_prefetch = NULL;
	for (i = 0; i < p->ncommits; i++)
		pg_commit_free(p->commits[i]);
	free(p->commits);
	free((void *)p->original);
	free(p->labelled);
	pg_map_release(&p->index);
	pg_upstream_free(p->upstream);
	p->commits = NULL;
	p->original = NULL;
	p->labelled = NULL;
	p->upstream = NULL;
	p->ncommits = 0;
}
