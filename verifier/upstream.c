/* upstream.c - the upstream commits a pull commit could be a copy of, by identity. */
#include "verifier/chain.h"
#include "verifier/identity_index.h"
#include "verifier/match.h"
#include "verifier/pull.h"
#include "common/array.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/str.h"

#define CHUNK 512
#define DAY (24 * 60 * 60)

typedef struct cand {
	pg_oid id;
	uint64_t hash;
	struct cand *next;  /* the next candidate with the same hash */
	uint64_t who;       /* the date fallback's key (author and subject) */
	struct cand *next_who;
	pg_commit *parsed;  /* read again on a hash hit, then kept */
} cand;

struct pg_upstream {
	pg_repo *repo;
	cand **chunks;      /* candidates never move, so maps may point into them */
	size_t nchunks, chunks_alloc, n;
	pg_map by_id;       /* oid -> cand */
	pg_map by_hash;     /* identity hash -> first cand */
	pg_map by_who;      /* author and subject hash -> first cand */
	pg_map chain;       /* ids on the first-parent line -> non-NULL */
	pg_oid **chain_ids;
	size_t nchain, chain_alloc;
	char **emails;      /* committers of the first-parent line, lower case */
	size_t nemails, emails_alloc;
	bool chain_pending; /* with an index: emails are read when first asked for */
	pg_oid chain_tip;
	int64_t chain_since;
	size_t examined;
	int64_t since;      /* the date window's line (0 with an index) */
	bool truncated;
	pg_identity_index *index; /* every upstream commit by identity, or NULL */
	pg_identity_index *subjects; /* by author and subject, or NULL */
	pg_identity_index_info index_info;
};

static cand *cand_new(pg_upstream *u)
{
	if (u->n == u->nchunks * CHUNK) {
		if (PG_ARRAY_GROW(u->chunks, u->nchunks + 1, u->chunks_alloc) < 0 ||
		    !(u->chunks[u->nchunks] = calloc(CHUNK, sizeof(cand))))
			return NULL;
		u->nchunks++;
	}
	u->n++;
	return &u->chunks[(u->n - 1) / CHUNK][(u->n - 1) % CHUNK];
}

static int add_maintainer(pg_upstream *u, const char *email)
{
	char *lower;
	size_t i;
	int err;

	for (i = 0; i < u->nemails; i++)
		if (!strcasecmp(u->emails[i], email))
			return 0;
	if (!(lower = pg_strdup(email)))
		return PG_ENOMEM;
	for (i = 0; lower[i]; i++)
		if (lower[i] >= 'A' && lower[i] <= 'Z')
			lower[i] = (char)(lower[i] - 'A' + 'a');
	if ((err = PG_ARRAY_GROW(u->emails, u->nemails + 1, u->emails_alloc)) < 0) {
		free(lower);
		return err;
	}
	u->emails[u->nemails++] = lower;
	return 0;
}

static int chain_add(pg_upstream *u, const pg_oid *id)
{
	pg_oid *copy;
	int err;

	if (pg_map_get(&u->chain, id->id, PG_OID_RAWSZ))
		return 0;
	if (!(copy = malloc(sizeof(*copy))))
		return pg_error_oom();
	*copy = *id;
	if ((err = PG_ARRAY_GROW(u->chain_ids, u->nchain + 1, u->chain_alloc)) < 0) {
		free(copy);
		return err;
	}
	u->chain_ids[u->nchain++] = copy;
	return pg_map_set(&u->chain, copy->id, PG_OID_RAWSZ, copy);
}

/* Read an upstream commit and index it by identity, once. */
static int consider(pg_upstream *u, const pg_oid *id, bool on_chain_walk)
{
	pg_commit *c = NULL;
	cand *k;
	int err;

	if (pg_map_get(&u->by_id, id->id, PG_OID_RAWSZ))
		return 0;
	if ((err = pg_repo_read_commit(&c, u->repo, id)) < 0)
		return err;
	if (on_chain_walk && pg_map_get(&u->chain, id->id, PG_OID_RAWSZ)) {
		if ((err = add_maintainer(u, c->committer.email)) < 0 ||
		    (c->nparents && (err = chain_add(u, &c->parents[0])) < 0))
			goto done;
	}
	if (!(k = cand_new(u))) {
		err = pg_error_oom();
		goto done;
	}
	k->id = *id;
	k->hash = pg_identity_hash(c);
	k->next = pg_map_get(&u->by_hash, &k->hash, sizeof(k->hash));
	k->who = pg_author_subject_hash(c);
	k->next_who = pg_map_get(&u->by_who, &k->who, sizeof(k->who));
	u->examined++;
	if ((err = pg_map_set(&u->by_id, k->id.id, PG_OID_RAWSZ, k)) < 0 ||
	    (err = pg_map_set(&u->by_hash, &k->hash, sizeof(k->hash), k)) < 0 ||
	    (err = pg_map_set(&u->by_who, &k->who, sizeof(k->who), k)) < 0)
		goto done;
done:
	pg_commit_free(c);
	return err;
}

static int visit_window(void *u, const pg_oid *id, int64_t time, const pg_oid *first_parent)
{
	(void)time;
	(void)first_parent;
	return consider(u, id, true);
}

/* The oldest author date in the pull: no copy can be older than its original. */
static int64_t oldest_author_time(const pg_pull *p)
{
	int64_t t = INT64_MAX;
	size_t i;

	for (i = 0; i < p->ncommits; i++)
		if (p->commits[i]->author.time < t)
			t = p->commits[i]->author.time;
	return t;
}

static int add_cherry_pick_sources(pg_upstream *u, pg_pull *p)
{
	size_t i, j;
	int err;

	for (i = 0; i < p->ncommits; i++) {
		const pg_commit *c = p->commits[i];

		for (j = 0; j < c->ntrailers; j++) {
			enum pg_object_type type = PG_OBJ_NONE;
			pg_oid src;

			if (strcmp(c->trailers[j].key, "(cherry picked from commit") ||
			    pg_oid_fromhex(&src, c->trailers[j].value,
					   strlen(c->trailers[j].value)) < 0 ||
			    pg_repo_object_type(&type, p->repo, &src) < 0 || type != PG_OBJ_COMMIT)
				continue; /* names something we do not have: nothing to compare */
			err = pg_repo_is_ancestor(p->repo, &src, &p->upstream_tip);
			if (err < 0)
				return err;
			if (err == 1 && (err = consider(u, &src, false)) < 0)
				return err;
		}
	}
	pg_error_clear();
	return 0;
}

/* What the report says of an index that was made again because it was damaged. */
static int note_damaged(pg_pull *p, const pg_identity_index *x)
{
	return pg_report_add_note(p->report, PG_CHECK_REWRITTEN_UPSTREAM, NULL, NULL,
				  "the identity index '%s' was damaged and was made again",
				  pg_identity_index_path(x));
}

/*
 * The identity index of p's upstream (kind: opts->subjects), brought to
 * its tip; made again with remake.  A damaged file found on the way is
 * told in the report.
 */
static int open_one(pg_identity_index **out, pg_identity_index_info *info, pg_pull *p,
		    const char *name, bool subjects, bool remake)
{
	pg_identity_index_opts opts = { 0 };
	pg_identity_index_info dummy;
	int err;

	if (!info)
		info = &dummy;
	opts.subjects = subjects;
	opts.full_check = p->verify_index;
	opts.remake = remake;
	opts.cache_size = p->index_cache_size;
	opts.work_mem = p->index_memory;
	opts.ref = p->report->upstream_ref ? p->report->upstream_ref : "";
	if ((err = pg_identity_index_open_opts(out, p->repo, p->home, name, &p->upstream_tip,
					       &opts, info)) < 0)
		return err;
	if (info->action == PG_IDENTITY_INDEX_BUILT && info->why &&
	    !strcmp(info->why, "damaged") && !remake)
		return note_damaged(p, *out);
	return 0;
}

/*
 * The name of p's upstream for its indexes: its location.  One index
 * serves every ref of the repository (opts.ref says which is asked for),
 * and answers only from that ref's history: the probes below add what they
 * find as upstream commits without walking the ref again, so the index
 * itself leaves out what only other refs reach (verifier/identity_index.h).
 */
static int index_name(pg_buf *name, const pg_pull *p)
{
	return pg_buf_puts(name, p->report->upstream ? p->report->upstream : "");
}

/*
 * The identity index of p's upstream, brought to its tip; 0 with none
 * when it cannot be had (a home that cannot be written, say): the date
 * window then does its work.
 */
static int open_index(pg_upstream *u, pg_pull *p)
{
	pg_buf name = PG_BUF_INIT;
	const char *why;
	int err;

	if (!p->home)
		return 0;
	/* a commit-graph left out is read around: the report says why */
	if ((why = pg_repo_graph_warning(p->repo)) &&
	    (err = pg_report_add_note(p->report, PG_CHECK_REWRITTEN_UPSTREAM, NULL, NULL,
				      "upstream's commits were read without their commit-graph: "
				      "%s", why)) < 0)
		return err;
	if ((err = index_name(&name, p)) < 0)
		return err;
	err = open_one(&u->index, &u->index_info, p, name.ptr, false, false);
	if (err == 0)
		err = open_one(&u->subjects, NULL, p, name.ptr, true, false);
	/* the subject index took what the identity index's reading kept for it, or never will */
	pg_identity_index_drop_spare();
	pg_buf_release(&name);
	if (err == PG_ENOMEM)
		return err;
	if (err < 0) {
		/* both or neither: without the second, the date window finds re-dated copies */
		pg_identity_index_free(u->index);
		pg_identity_index_free(u->subjects);
		u->index = NULL;
		u->subjects = NULL;
		pg_error_clear();
	}
	return 0;
}

/*
 * An index a probe found damaged is made again (and said so); then every
 * pull commit is probed again.  1 when one was, 0 when neither was.
 */
static int remake_damaged(pg_upstream *u, pg_pull *p)
{
	pg_identity_index **which[2] = { &u->index, &u->subjects };
	pg_buf name = PG_BUF_INIT;
	size_t i;
	int err = 0, remade = 0;

	for (i = 0; i < 2 && err == 0; i++) {
		pg_identity_index *x = *which[i];

		if (!pg_identity_index_damaged(x))
			continue;
		if ((err = note_damaged(p, x)) < 0 || (!name.len && (err = index_name(&name, p)) < 0))
			break;
		*which[i] = NULL;
		pg_identity_index_free(x);
		err = open_one(which[i], i == 0 ? &u->index_info : NULL, p, name.ptr, i == 1, true);
		remade = 1;
	}
	pg_buf_release(&name);
	return err < 0 ? err : remade;
}

#define FEW_HITS 8

/*
 * The index's commits with this key: in few (FEW_HITS of them) when they
 * fit, else in *hits malloc()ed (free it when it is not few).
 */
static int probe(pg_identity_hit **hits, size_t *n, pg_identity_hit *few,
		 const pg_identity_index *x, uint64_t key)
{
	size_t max;

	*hits = few;
	*n = pg_identity_index_probe(few, FEW_HITS, x, key);
	if (*n <= FEW_HITS)
		return 0;
	if (!(*hits = calloc(*n, sizeof(**hits)))) {
		*hits = few;
		*n = 0;
		return pg_error_oom();
	}
	max = *n;
	if ((*n = pg_identity_index_probe(*hits, max, x, key)) > max)
		*n = max;
	return 0;
}

/*
 * Every upstream commit that shares a pull commit's identity key, and up
 * to PG_UPSTREAM_REDATED_MAX that share its author and subject: a probe of
 * each index per pull commit.  A pull commit of its own shares neither
 * key with anything (two probes of a few pages, nothing read); the
 * fallback's cap bounds what a subject used again and again ("Merge
 * branch 'for-next'") costs.
 */
static int probe_index(pg_upstream *u, const pg_pull *p)
{
	pg_identity_hit few[FEW_HITS], *hits;
	size_t i, j, n;
	int err = 0;

	for (i = 0; i < p->ncommits && err == 0; i++) {
		if ((err = probe(&hits, &n, few, u->index, pg_identity_hash(p->commits[i]))) < 0)
			return err;
		for (j = 0; j < n && err == 0; j++)
			err = consider(u, &hits[j].id, false);
		if (hits != few)
			free(hits);
		if (err < 0 || !u->subjects)
			continue;
		if ((err = probe(&hits, &n, few, u->subjects,
				 pg_author_subject_hash(p->commits[i]))) < 0)
			return err;
		for (j = 0; j < n && j < PG_UPSTREAM_REDATED_MAX && err == 0; j++)
			err = consider(u, &hits[j].id, false);
		if (hits != few)
			free(hits);
	}
	return err;
}

/*
 * The committers of upstream's first-parent line since `since`, its newest
 * PG_CHAIN_MAX commits at most: what the date window's walk learns on its
 * way, read from the line kept beside the identity index when an index
 * spares that walk (verifier/chain.c: walked once per upstream tip).
 */
static int walk_chain(pg_upstream *u)
{
	pg_chain c;
	pg_buf cache = PG_BUF_INIT;
	size_t i;
	int err;

	/* a line per ref (the index is the repository's): two refs do not walk over each other's */
	if ((err = pg_identity_index_ref_file(&cache, u->index, ".chain")) < 0)
		return err;
	err = pg_chain_load(&c, u->repo, &u->chain_tip, cache.ptr);
	pg_buf_release(&cache);
	/* down the line until a commit older than since, as the window walk stops */
	for (i = 0; err == 0 && i < c.n && c.v[i].time >= u->chain_since; i++)
		err = add_maintainer(u, c.v[i].email);
	pg_chain_release(&c);
	return err;
}

int pg_upstream_build(pg_upstream **out, pg_pull *p)
{
	pg_upstream *u = calloc(1, sizeof(*u));
	pg_commit *tip = NULL;
	pg_oid *side = NULL;
	size_t nside = 0, i, limit = p->policy->max_upstream_commits;
	int64_t since, floor;
	int err;

	*out = NULL;
	if (!u)
		return pg_error_oom();
	u->repo = p->repo;
	if ((err = pg_repo_read_commit(&tip, p->repo, &p->upstream_tip)) < 0)
		goto done;

	/*
	 * (b) every upstream commit sharing a pull commit's identity: one probe
	 * of the identity index per pull commit, however old the original.
	 * Without an index, the date window: O(upstream commits committed
	 * since the oldest author date in the pull), floored at the policy's
	 * lookback before upstream's tip, capped at max_upstream_commits.
	 */
	since = oldest_author_time(p);
	since = since == INT64_MAX ? tip->committer.time : since - DAY;
	floor = tip->committer.time - (int64_t)p->policy->lookback_days * DAY;
	if (since < floor)
		since = floor;
	if ((err = open_index(u, p)) < 0)
		goto done;
	if (u->index) {
		if ((err = probe_index(u, p)) < 0 || (err = remake_damaged(u, p)) < 0 ||
		    (err == 1 && (err = probe_index(u, p)) < 0))
			goto done;
		/* only a foreign committer asks who the maintainer is */
		u->chain_pending = true;
		u->chain_tip = p->upstream_tip;
		u->chain_since = since;
	} else {
		u->since = since;
		if ((err = chain_add(u, &p->upstream_tip)) < 0)
			goto done;
		if ((err = pg_repo_walk_since(p->repo, &p->upstream_tip, since,
					      limit ? limit : SIZE_MAX, visit_window, u)) < 0)
			goto done;
		if (limit && u->examined >= limit)
			u->truncated = true;
	}

	/*
	 * (a) the upstream side of the divergence, O(that side).  Not with
	 * the index: it holds every commit up to upstream's tip, so the
	 * probes of (b) have already added each one of that side a pull
	 * commit shares its identity with (an old base's 10,000 upstream
	 * commits are then neither walked nor read).
	 */
	if (!u->index && (err = pg_repo_walk_range(&side, &nside, p->repo, &p->upstream_tip,
						   &p->tag_commit, 1)) < 0)
		goto done;
	for (i = 0; i < nside && (!limit || u->examined < limit); i++)
		if ((err = consider(u, &side[i], false)) < 0)
			goto done;
	if (limit && i < nside)
		u->truncated = true;

	/* (c) explicit cherry-pick sources, however old */
	if ((err = add_cherry_pick_sources(u, p)) < 0)
		goto done;
	*out = u;
	u = NULL;
done:
	free(side);
	pg_commit_free(tip);
	pg_upstream_free(u);
	return err;
}

void pg_upstream_free(pg_upstream *u)
{
	size_t i;

	if (!u)
		return;
	for (i = 0; i < u->n; i++)
		pg_commit_free(u->chunks[i / CHUNK][i % CHUNK].parsed);
	for (i = 0; i < u->nchunks; i++)
		free(u->chunks[i]);
	free(u->chunks);
	for (i = 0; i < u->nchain; i++)
		free(u->chain_ids[i]);
	free(u->chain_ids);
	pg_str_list_free(u->emails, u->nemails);
	pg_map_release(&u->by_id);
	pg_map_release(&u->by_hash);
	pg_map_release(&u->by_who);
	pg_map_release(&u->chain);
	pg_identity_index_free(u->index);
	pg_identity_index_free(u->subjects);
	free(u);
}

int pg_upstream_candidates(const pg_commit ***out, size_t *n, pg_upstream *u,
			   const pg_commit *c)
{
	uint64_t h = pg_identity_hash(c);
	const pg_commit **list = NULL;
	size_t count = 0, alloc = 0, i;
	cand *k;
	int err = 0;

	*out = NULL;
	*n = 0;
	for (k = pg_map_get(&u->by_hash, &h, sizeof(h)); k; k = k->next) {
		if (k->hash != h || !pg_oid_cmp(&k->id, &c->id))
			continue;
		if (!k->parsed && (err = pg_repo_read_commit(&k->parsed, u->repo, &k->id)) < 0)
			goto done;
		if (!pg_identity_equal(k->parsed, c))
			continue;
		if ((err = PG_ARRAY_GROW(list, count + 1, alloc)) < 0)
			goto done;
		/* the one with the same tree first */
		for (i = count++; i > 0 && !pg_oid_cmp(&k->parsed->tree, &c->tree); i--)
			list[i] = list[i - 1];
		list[i] = k->parsed;
	}
	*out = list;
	*n = count;
	list = NULL;
done:
	free(list);
	return err;
}

int pg_upstream_redated(const pg_commit ***out, size_t *n, pg_upstream *u, const pg_commit *c)
{
	uint64_t h = pg_author_subject_hash(c);
	const pg_commit **list = NULL;
	size_t count = 0, alloc = 0, i;
	cand *k;
	int err = 0;

	*out = NULL;
	*n = 0;
	for (k = pg_map_get(&u->by_who, &h, sizeof(h)); k && count < PG_UPSTREAM_REDATED_MAX;
	     k = k->next_who) {
		if (k->who != h || !pg_oid_cmp(&k->id, &c->id))
			continue;
		if (!k->parsed && (err = pg_repo_read_commit(&k->parsed, u->repo, &k->id)) < 0)
			goto done;
		/* the identity's candidates are pg_upstream_candidates' */
		if (!pg_author_subject_equal(k->parsed, c) || pg_identity_equal(k->parsed, c))
			continue;
		if ((err = PG_ARRAY_GROW(list, count + 1, alloc)) < 0)
			goto done;
		for (i = count++; i > 0 && !pg_oid_cmp(&k->parsed->tree, &c->tree); i--)
			list[i] = list[i - 1];
		list[i] = k->parsed;
	}
	*out = list;
	*n = count;
	list = NULL;
done:
	free(list);
	return err;
}

bool pg_upstream_has(const pg_upstream *u, const pg_oid *id)
{
	return u && pg_map_get(&u->by_id, id->id, PG_OID_RAWSZ) != NULL;
}

int pg_upstream_holds(const pg_upstream *u, const pg_commit *c)
{
	pg_identity_hit few[FEW_HITS], *hits;
	size_t n, i;
	int held = 0, err;

	if (!u)
		return 0;
	if (pg_map_get(&u->by_id, c->id.id, PG_OID_RAWSZ))
		return 1;
	if (!u->index)
		return -1;
	if ((err = probe(&hits, &n, few, u->index, pg_identity_hash(c))) < 0)
		return err;
	for (i = 0; i < n && !held; i++)
		held = !pg_oid_cmp(&hits[i].id, &c->id);
	if (hits != few)
		free(hits);
	return held;
}

const pg_identity_index_info *pg_upstream_index_info(const pg_upstream *u, size_t *indexed)
{
	*indexed = u && u->index ? pg_identity_index_count(u->index) : 0;
	return u && u->index ? &u->index_info : NULL;
}

int64_t pg_upstream_since(const pg_upstream *u)
{
	return u ? u->since : 0;
}

size_t pg_upstream_examined(const pg_upstream *u)
{
	return u ? u->examined : 0;
}

bool pg_upstream_truncated(const pg_upstream *u)
{
	return u && u->truncated;
}

int pg_upstream_is_maintainer(pg_upstream *u, const char *email)
{
	size_t i;
	int err;

	if (u && u->chain_pending) {
		if ((err = walk_chain(u)) < 0)
			return err;
		u->chain_pending = false;
	}
	for (i = 0; u && i < u->nemails; i++)
		if (!strcasecmp(u->emails[i], email))
			return 1;
	return 0;
}
