/* walk.c - history: ranges, the date-ordered walk, subjects, ancestry and merge bases. */
#include "repo/internal.h"
#include "common/array.h"
#include "common/error.h"

/*
 * libgit2's walk stops at a commit it cannot parse, or cannot find,
 * without naming it.  Find that commit with our own lenient parser
 * (bounded) and name it in the error; otherwise keep the original error.
 * A commit that is not there at all is no malformed commit: the history
 * is incomplete (a shallow clone, a partial fetch), and the error names
 * the commit whose parent it is.
 */
#define DIAGNOSE_MAX 100000

/* What a missing commit means: the history is incomplete; child names it as a parent (or NULL). */
static int missing(const git_oid *id, const git_oid *child)
{
	char hex[PG_OID_HEXSZ + 1], of[PG_OID_HEXSZ + 1];

	git_oid_tostr(hex, sizeof(hex), id);
	if (!child)
		return pg_error_set(PG_ENOTFOUND, "commit %s is not in the repository", hex);
	git_oid_tostr(of, sizeof(of), child);
	return pg_error_set(PG_ENOTFOUND, "commit %s, a parent of %s, is not in the repository: "
			    "its history is incomplete (a shallow clone or a partial fetch?); fetch "
			    "it whole", hex, of);
}

typedef struct visit {
	pg_oid id;
	pg_oid child;      /* the commit that names it as a parent */
	bool has_child;
} visit;

static int name_unparseable(pg_repo *r, const pg_oid *tip, int err, bool *named)
{
	visit *queue = NULL;
	pg_map seen = PG_MAP_INIT;
	size_t head = 0, tail = 0, i;
	char hex[PG_OID_HEXSZ + 1], saved[512];

	*named = true;
	snprintf(saved, sizeof(saved), "%s", pg_error_last());
	if (!(queue = calloc(DIAGNOSE_MAX, sizeof(*queue))))
		return err;
	queue[tail++].id = *tip;
	while (head < tail) {
		visit v = queue[head++];
		git_commit *gc = NULL;
		pg_commit *c = NULL;
		int gerr;

		if ((gerr = git_commit_lookup(&gc, r->git, pg_git_oid(&v.id))) < 0) {
			const git_error *e = git_error_last();

			pg_oid_tohex(hex, &v.id);
			if (gerr == GIT_ENOTFOUND)
				err = missing(pg_git_oid(&v.id), v.has_child ? pg_git_oid(&v.child) : NULL);
			else
				err = pg_error_set(PG_EINVALID, "commit %s is malformed: %s", hex,
						   e && e->message ? e->message : "cannot be parsed");
			goto done;
		}
		git_commit_free(gc);
		if (pg_repo_read_commit(&c, r, &v.id) < 0)
			continue;
		/* the walk's quick parser insists on a committer with an e-mail and a date */
		if (!c->committer.email[0] || !c->committer.time) {
			pg_oid_tohex(hex, &v.id);
			err = pg_error_set(PG_EINVALID, "commit %s is malformed: its committer "
					   "line has no e-mail or no date", hex);
			pg_commit_free(c);
			goto done;
		}
		for (i = 0; i < c->nparents && tail < DIAGNOSE_MAX; i++) {
			if (pg_map_get(&seen, c->parents[i].id, PG_OID_RAWSZ))
				continue;
			queue[tail].id = c->parents[i];
			queue[tail].child = v.id;
			queue[tail].has_child = true;
			if (pg_map_set(&seen, queue[tail].id.id, PG_OID_RAWSZ, &queue[tail]) < 0)
				break;
			tail++;
		}
		pg_commit_free(c);
	}
	pg_error_set(err, "%s", saved);
	*named = false;
done:
	pg_map_release(&seen);
	free(queue);
	return err;
}

/* The commit of tip's history, then of each hidden one's, that stopped a walk; err when none. */
static int diagnose(pg_repo *r, const pg_oid *tip, const pg_oid *hide, size_t nhide, int err)
{
	bool named = false;
	size_t i;

	err = name_unparseable(r, tip, err, &named);
	for (i = 0; i < nhide && !named; i++)
		err = name_unparseable(r, &hide[i], err, &named);
	return err;
}

/* A revwalk over tip ^hide[0..nhide), sorted as libgit2's `sort` says. */
static int start_walk(git_revwalk **out, pg_repo *r, unsigned sort, const pg_oid *tip,
		      const pg_oid *hide, size_t nhide)
{
	git_revwalk *walk = NULL;
	size_t i;
	int gerr;

	*out = NULL;
	if ((gerr = git_revwalk_new(&walk, r->git)) < 0 ||
	    (gerr = git_revwalk_sorting(walk, sort)) < 0 ||
	    (gerr = git_revwalk_push(walk, pg_git_oid(tip))) < 0) {
		git_revwalk_free(walk);
		return diagnose(r, tip, NULL, 0, pg_git_fail(gerr, "walk"));
	}
	for (i = 0; i < nhide; i++) {
		if ((gerr = git_revwalk_hide(walk, pg_git_oid(&hide[i]))) < 0) {
			git_revwalk_free(walk);
			return diagnose(r, &hide[i], NULL, 0, pg_git_fail(gerr, "walk"));
		}
	}
	*out = walk;
	return 0;
}

int pg_repo_walk_range(pg_oid **out, size_t *n, pg_repo *r, const pg_oid *tip,
		       const pg_oid *hide, size_t nhide)
{
	git_revwalk *walk = NULL;
	git_oid id;
	pg_oid *list = NULL;
	size_t count = 0, alloc = 0;
	int gerr, err;

	*out = NULL;
	*n = 0;
	if ((err = start_walk(&walk, r, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE, tip, hide,
			      nhide)) < 0)
		goto done;
	while ((gerr = git_revwalk_next(&id, walk)) == 0) {
		if ((err = PG_ARRAY_GROW(list, count + 1, alloc)) < 0)
			goto done;
		pg_oid_from_git(&list[count++], &id);
	}
	if (gerr != GIT_ITEROVER) {
		err = diagnose(r, tip, hide, nhide, pg_git_fail(gerr, "walk"));
		goto done;
	}
	*out = list;
	*n = count;
	list = NULL;
done:
	free(list);
	git_revwalk_free(walk);
	return err;
}

int pg_repo_walk_subjects(char ***subjects, size_t *n, pg_repo *r, const pg_oid *tip,
			  const pg_oid *hide)
{
	git_revwalk *walk = NULL;
	git_oid id;
	char **list = NULL;
	size_t count = 0, alloc = 0;
	int gerr, err;

	*subjects = NULL;
	*n = 0;
	if ((err = start_walk(&walk, r, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME, tip, hide, 1)) < 0)
		goto done;
	while ((gerr = git_revwalk_next(&id, walk)) == 0) {
		git_commit *c = NULL;
		const char *summary;

		if ((gerr = git_commit_lookup(&c, r->git, &id)) < 0)
			break;
		summary = git_commit_summary(c);
		if (git_commit_parentcount(c) <= 1 &&
		    ((err = PG_ARRAY_GROW(list, count + 1, alloc)) < 0 ||
		     !(list[count++] = pg_strdup(summary ? summary : "")))) {
			git_commit_free(c);
			err = err < 0 ? err : PG_ENOMEM;
			goto done;
		}
		git_commit_free(c);
	}
	if (gerr != GIT_ITEROVER) {
		err = diagnose(r, tip, hide, 1, pg_git_fail(gerr, "walk"));
		goto done;
	}
	*subjects = list;
	*n = count;
	list = NULL;
	count = 0;
done:
	pg_repo_strings_free(list, count);
	git_revwalk_free(walk);
	return err;
}

/* A binary max-heap of commits by committer time, for the date-ordered walk. */
typedef struct heap_item {
	int64_t time;
	pg_oid id;
} heap_item;

typedef struct heap {
	heap_item *items;
	size_t len, alloc;
} heap;

static int heap_push(heap *h, int64_t t, const pg_oid *id)
{
	size_t i;
	int err;

	if ((err = PG_ARRAY_GROW(h->items, h->len + 1, h->alloc)) < 0)
		return err;
	i = h->len++;
	while (i > 0 && h->items[(i - 1) / 2].time < t) {
		h->items[i] = h->items[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->items[i].time = t;
	h->items[i].id = *id;
	return 0;
}

static heap_item heap_pop(heap *h)
{
	heap_item top = h->items[0], last = h->items[--h->len];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->len)
			break;
		if (c + 1 < h->len && h->items[c + 1].time > h->items[c].time)
			c++;
		if (h->items[c].time <= last.time)
			break;
		h->items[i] = h->items[c];
		i = c;
	}
	if (h->len)
		h->items[i] = last;
	return top;
}

/* Commits visited past the date line before the walk gives up, as git's slop. */
#define SINCE_SLOP 16

/* Stable storage for the ids the walk's seen-map points into. */
#define ARENA_CHUNK 1024

typedef struct oid_arena {
	pg_oid **chunks;
	size_t nchunks, alloc, used;
} oid_arena;

static pg_oid *arena_add(oid_arena *a, const git_oid *id)
{
	pg_oid *slot;

	if (a->used == a->nchunks * ARENA_CHUNK) {
		if (PG_ARRAY_GROW(a->chunks, a->nchunks + 1, a->alloc) < 0 ||
		    !(a->chunks[a->nchunks] = malloc(ARENA_CHUNK * sizeof(pg_oid))))
			return NULL;
		a->nchunks++;
	}
	slot = &a->chunks[a->used / ARENA_CHUNK][a->used % ARENA_CHUNK];
	a->used++;
	pg_oid_from_git(slot, id);
	return slot;
}

static void arena_release(oid_arena *a)
{
	while (a->nchunks)
		free(a->chunks[--a->nchunks]);
	free(a->chunks);
}

/* Queue a commit (a parent of child, or the tip) for the date-ordered walk unless it was queued before. */
static int walk_enqueue(pg_repo *r, heap *h, pg_map *seen, oid_arena *arena,
			const git_oid *id, const git_oid *child)
{
	git_commit *c = NULL;
	pg_oid *slot;
	int gerr, err;

	if (pg_map_get(seen, id->id, PG_OID_RAWSZ))
		return 0;
	if (!(slot = arena_add(arena, id)))
		return pg_error_oom();
	if ((err = pg_map_set(seen, slot->id, PG_OID_RAWSZ, slot)) < 0)
		return err;
	if ((gerr = git_commit_lookup(&c, r->git, id)) < 0)
		return gerr == GIT_ENOTFOUND ? missing(id, child) : pg_git_fail(gerr, "walk");
	err = heap_push(h, git_commit_time(c), slot);
	git_commit_free(c);
	return err;
}

int pg_repo_walk_since(pg_repo *r, const pg_oid *tip, int64_t since, size_t max,
		       pg_repo_visit_fn fn, void *ctx)
{
	heap h = { NULL, 0, 0 };
	pg_map seen = PG_MAP_INIT;
	oid_arena arena = { NULL, 0, 0, 0 };
	size_t visited = 0, slop = SINCE_SLOP;
	int gerr, err;

	err = walk_enqueue(r, &h, &seen, &arena, pg_git_oid(tip), NULL);
	while (err == 0 && h.len && visited < max) {
		heap_item it = heap_pop(&h);
		git_commit *c = NULL;
		pg_oid first;
		unsigned i, np;

		if (it.time < since && --slop == 0)
			break;
		if ((gerr = git_commit_lookup(&c, r->git, pg_git_oid(&it.id))) < 0) {
			err = pg_git_fail(gerr, "walk");
			break;
		}
		np = git_commit_parentcount(c);
		if (np)
			pg_oid_from_git(&first, git_commit_parent_id(c, 0));
		for (i = 0; i < np && err == 0; i++)
			err = walk_enqueue(r, &h, &seen, &arena, git_commit_parent_id(c, i),
					   pg_git_oid(&it.id));
		git_commit_free(c);
		if (err)
			break;
		visited++;
		err = fn(ctx, &it.id, it.time, np ? &first : NULL);
	}
	arena_release(&arena);
	free(h.items);
	pg_map_release(&seen);
	return err;
}

int pg_repo_is_ancestor(pg_repo *r, const pg_oid *ancestor, const pg_oid *descendant)
{
	int gerr;

	if (!pg_oid_cmp(ancestor, descendant))
		return 1;
	gerr = git_graph_descendant_of(r->git, pg_git_oid(descendant), pg_git_oid(ancestor));
	if (gerr < 0)
		return pg_git_fail(gerr, "ancestry");
	return gerr;
}

int pg_repo_merge_base(pg_oid *out, pg_repo *r, const pg_oid *a, const pg_oid *b)
{
	git_oid base;
	int gerr = git_merge_base(&base, r->git, pg_git_oid(a), pg_git_oid(b));

	if (gerr == GIT_ENOTFOUND)
		return pg_error_set(PG_ENOTFOUND, "no common ancestor");
	if (gerr < 0)
		return pg_git_fail(gerr, "merge base");
	pg_oid_from_git(out, &base);
	return 0;
}
