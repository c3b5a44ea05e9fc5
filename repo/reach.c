/* reach.c - every commit the tips reach: walked with a bit a commit, listed, or read in shares along the packs. */
#include "repo/commits.h"
#include "common/array.h"
#include "common/error.h"

#include <stdlib.h>
#include <string.h>

/* What the walk still has to visit, and what it saw. */
typedef struct pg_repo_reach reach;
struct pg_repo_reach {
	pg_repo *r;
	unsigned char **seen;  /* a bit per position of each graph, made when first needed */
	unsigned char **walked; /* the same, for the commits walked in that graph (listed) */
	uint64_t *todo;        /* graph << 32 | position */
	size_t ntodo, todo_alloc;
	pg_cnode **nodes;      /* commits no graph holds, still to visit */
	size_t nnodes, nodes_alloc;
	uint32_t **words;      /* each graph's parents (pg_graph_parent_words), while walked */
	pg_oid *out;           /* the commits no graph holds, as they were reached */
	size_t nout, out_alloc;
	size_t count;          /* every commit reached: those, and the graphs' walked */
};

#define F_REACHED 16u

static int reach_seen(reach *w, uint32_t g)
{
	size_t bytes = (size_t)pg_graph_count(w->r->graphs[g]) / 8 + 1;

	if ((!w->seen[g] && !(w->seen[g] = calloc(bytes, 1))) ||
	    (!w->walked[g] && !(w->walked[g] = calloc(bytes, 1))))
		return pg_error_oom();
	return 0;
}

/*
 * The commit at pos of graph g, reached: marked and queued, once.  Two
 * graphs (a store and its alternate's) may both hold it: it is walked in
 * the first that does, so it is listed once and its ancestry walked once.
 */
static int reach_mark(reach *w, uint32_t g, uint32_t pos)
{
	uint32_t first, at;
	pg_oid id;
	int err;

	if (w->seen[g][pos / 8] & (1u << (pos % 8)))
		return 0;
	w->seen[g][pos / 8] |= (unsigned char)(1u << (pos % 8));
	if (g > 0) {
		if ((err = pg_graph_oid(&id, w->r->graphs[g], pos)) < 0)
			return err;
		for (first = 0; first < g; first++) {
			if (pg_graph_find(w->r->graphs[first], &id, &at)) {
				if ((err = reach_seen(w, first)) < 0)
					return err;
				return reach_mark(w, first, at);
			}
		}
	}
	if ((err = PG_ARRAY_GROW(w->todo, w->ntodo + 1, w->todo_alloc)) < 0)
		return err;
	w->todo[w->ntodo++] = (uint64_t)g << 32 | pos;
	return 0;
}

/* n, reached: its position marked and queued, or, in no graph, it queued. */
static int reach_node(reach *w, pg_cnode *n)
{
	uint32_t g, count;
	int err;

	if (!n->graph) {
		if (n->flags & F_REACHED)
			return 0;
		n->flags |= F_REACHED;
		if ((err = PG_ARRAY_GROW(w->nodes, w->nnodes + 1, w->nodes_alloc)) < 0)
			return err;
		w->nodes[w->nnodes++] = n;
		return 0;
	}
	g = n->graph - 1;
	count = pg_graph_count(w->r->graphs[g]);
	if (n->pos >= count)
		return pg_error_set(PG_EINVALID, "walk: a commit-graph position out of its graph");
	if ((err = reach_seen(w, g)) < 0)
		return err;
	return reach_mark(w, g, n->pos);
}

/* The commit at pos of graph g: its parents marked and queued (it is listed by list_marked). */
static int reach_position(reach *w, uint32_t g, uint32_t pos)
{
	const pg_graph *graph = w->r->graphs[g];
	pg_graph_commit c;
	uint32_t i, p;
	int err;

	/* a graph's parents, read along its file when the walk first reaches it */
	if (!w->words[g]) {
		uint32_t nc = pg_graph_count(graph);

		if (!(w->words[g] = malloc(2 * ((size_t)nc + 1) * sizeof(**w->words))))
			return pg_error_oom();
		if ((err = pg_graph_parent_words(w->words[g], graph, 0, nc)) < 0)
			return err;
	}
	if ((err = pg_graph_read_parents(&c, graph, pos, &w->words[g][2 * (size_t)pos])) < 0)
		return err;
	w->walked[g][pos / 8] |= (unsigned char)(1u << (pos % 8));
	for (i = 0; i < c.nparents && err == 0; i++)
		if ((err = pg_graph_parent(&p, graph, &c, i)) == 0)
			err = reach_mark(w, g, p);
	return err;
}

static bool marked(const unsigned char *bits, uint32_t pos)
{
	return (bits[pos / 8] & (1u << (pos % 8))) != 0;
}


/* The ids the listing reads at once from a graph's table: 80 KiB. */
#define LIST_CHUNK 4096

/*
 * The walk of every commit tips reach, their bits set, nothing listed
 * yet.  The graphs are mapped for what the walk reads of them besides
 * the parents (a commit's id, where it is in another graph), and let go
 * of before the ids are listed and the commits read, which need little
 * of them.
 */
int pg_repo_reach_all(pg_repo_reach **out, size_t *count, pg_repo *r, const pg_oid *tips,
		      size_t ntips)
{
	pg_csrc s;
	reach *w;
	uint32_t g, pos, n;
	size_t i;
	int err;

	*out = NULL;
	*count = 0;
	if (!(w = calloc(1, sizeof(*w))))
		return pg_error_oom();
	w->r = r;
	if ((err = pg_csrc_init(&s, r)) < 0) {
		free(w);
		return err;
	}
	if (!(w->seen = calloc(r->ngraphs + 1, sizeof(*w->seen))) ||
	    !(w->walked = calloc(r->ngraphs + 1, sizeof(*w->walked))) ||
	    !(w->words = calloc(r->ngraphs + 1, sizeof(*w->words)))) {
		err = pg_error_oom();
		goto done;
	}
	for (i = 0; i < ntips && err == 0; i++) {
		pg_cnode *t = NULL;

		if ((err = pg_csrc_get(&t, &s, &tips[i])) == 0)
			err = reach_node(w, t);
	}
	/*
	 * Every commit's parents are read from the graphs, most of them at
	 * random: along each graph's entries once, when the walk first
	 * reaches it (reach_position), 8 bytes a commit kept, where its
	 * 36-byte entries read in place made all of them resident (39 MB at
	 * a million commits, on a kernel with large folios).
	 */
	for (i = 0; i < r->ngraphs; i++)
		pg_graph_map(r->graphs[i]);
	while (err == 0 && (w->ntodo || w->nnodes)) {
		if (w->ntodo) {
			uint64_t v = w->todo[--w->ntodo];

			err = reach_position(w, (uint32_t)(v >> 32), (uint32_t)v);
			continue;
		}
		{
			pg_cnode *c = w->nodes[--w->nnodes];

			if ((err = PG_ARRAY_GROW(w->out, w->nout + 1, w->out_alloc)) < 0)
				break;
			w->out[w->nout++] = c->id;
			for (i = 0; i < c->nparents && err == 0; i++)
				if ((err = pg_csrc_parse(&s, c->parents[i])) == 0)
					err = reach_node(w, c->parents[i]);
		}
	}
	for (i = 0; i < r->ngraphs; i++)
		pg_graph_let_go(r->graphs[i]);
	/* a commit not there (a shallow clone's history ends): name it and its child */
	if (err == PG_ENOTFOUND)
		err = pg_repo_walk_diagnose(r, tips, ntips, NULL, 0, err);
done:
	/* what was seen and the parents made the walk; what was walked is listed */
	for (i = 0; w->seen && i < r->ngraphs; i++)
		free(w->seen[i]);
	for (i = 0; w->words && i < r->ngraphs; i++)
		free(w->words[i]);
	free(w->seen);
	free(w->words);
	w->words = NULL;
	free(w->todo);
	free(w->nodes);
	w->seen = NULL;
	w->todo = NULL;
	w->nodes = NULL;
	pg_csrc_release(&s);
	if (err < 0) {
		pg_repo_reach_free(w);
		return err;
	}
	w->count = w->nout;
	for (g = 0; g < r->ngraphs; g++)
		for (pos = 0, n = w->walked[g] ? pg_graph_count(r->graphs[g]) : 0; pos < n; pos++)
			w->count += marked(w->walked[g], pos);
	*out = w;
	*count = w->count;
	return 0;
}

void pg_repo_reach_free(pg_repo_reach *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; w->seen && i < w->r->ngraphs; i++)
		free(w->seen[i]);
	for (i = 0; w->walked && i < w->r->ngraphs; i++)
		free(w->walked[i]);
	free(w->seen);
	free(w->walked);
	free(w->todo);
	free(w->nodes);
	free(w->out);
	free(w);
}

/*
 * A stretch of the listing: the commits no graph holds (in the order
 * they were reached), then those walked in each graph, in its order (by
 * id within each of its files), read a chunk at a time along its table
 * of ids.  Never through the graph's cache, whose count of blocks read
 * would map the file again after it was let go of (a walk of one branch
 * of a graph that holds others marks short stretches all over it).
 */
typedef struct stretch {
	uint32_t g;     /* the graph, or ngraphs: the commits no graph holds */
	uint32_t pos;   /* the first position (or index of out) */
	uint32_t n;     /* positions it spans */
	size_t first;   /* the listing's number of its first commit */
	size_t m;       /* commits of the listing in it */
} stretch;

/* *s made the stretch after it (first_stretch's: the first); false when there is none. */
static bool next_stretch(const reach *w, stretch *s)
{
	uint32_t ng = w->r->ngraphs, count, i;

	s->first += s->m;
	s->pos += s->n;
	s->m = s->n = 0;
	if (s->g == ng) {
		if (s->pos < w->nout) {
			s->n = s->m = w->nout - s->pos < LIST_CHUNK ? (uint32_t)(w->nout - s->pos) :
								      LIST_CHUNK;
			return true;
		}
		s->g = 0;
		s->pos = 0;
	}
	for (; s->g < ng; s->g++, s->pos = 0) {
		count = w->walked[s->g] ? pg_graph_count(w->r->graphs[s->g]) : 0;
		if (s->pos >= count)
			continue;
		s->n = count - s->pos < LIST_CHUNK ? count - s->pos : LIST_CHUNK;
		for (i = 0; i < s->n; i++)
			s->m += marked(w->walked[s->g], s->pos + i);
		return true;
	}
	return false;
}

/* The listing starts with the commits no graph holds. */
static void first_stretch(const reach *w, stretch *s)
{
	memset(s, 0, sizeof(*s));
	s->g = w->r->ngraphs;
}

/*
 * The ids of s's commits, appended to out[*n...]; chunk has room for
 * LIST_CHUNK ids (a graph's table is read there when not all of its
 * stretch was walked).
 */
static int stretch_ids(pg_oid *out, size_t *n, const reach *w, const stretch *s, pg_oid *chunk)
{
	const unsigned char *bits;
	uint32_t i;
	int err;

	if (s->g == w->r->ngraphs) {
		memcpy(&out[*n], &w->out[s->pos], s->n * sizeof(*out));
		*n += s->n;
		return 0;
	}
	bits = w->walked[s->g];
	if (s->m == s->n)
		chunk = &out[*n];
	if ((err = pg_graph_oids(chunk, w->r->graphs[s->g], s->pos, s->n)) < 0)
		return err;
	if (s->m == s->n) {
		*n += s->n;
		return 0;
	}
	for (i = 0; i < s->n; i++)
		if (marked(bits, s->pos + i))
			out[(*n)++] = chunk[i];
	return 0;
}

int pg_repo_reach_list(pg_oid **out, size_t *n, const pg_repo_reach *w)
{
	pg_oid *ids = NULL, *chunk = NULL;
	stretch s;
	int err = 0;

	*out = NULL;
	*n = 0;
	/* room made once: a million ids are 20 MB, which growing by half would leave a third unused */
	if (!(ids = malloc((w->count + 1) * sizeof(*ids))) ||
	    !(chunk = malloc(LIST_CHUNK * sizeof(*chunk)))) {
		free(ids);
		return pg_error_oom();
	}
	for (first_stretch(w, &s); err == 0 && next_stretch(w, &s);)
		if (s.m)
			err = stretch_ids(ids, n, w, &s, chunk);
	free(chunk);
	if (err < 0) {
		free(ids);
		*n = 0;
		return err;
	}
	*out = ids;
	return 0;
}

/*
 * A share's commits are those of a stretch of the packs: the packs, one
 * after another in pg_pack_loc.pack's order, are cut into PACKED buckets
 * of equal bytes, and the commits in none (read by libgit2) go in the
 * buckets after them, LOOSE_EACH to a bucket in the listing's order (the
 * last takes the rest).  A share is a run of buckets, cut where the next
 * would take it past its size (a bucket that alone is past it is a share
 * of its own: its bytes bound how many commits it holds).  Where each
 * commit lies is kept as its place: 1 + its pack above PLACE_BITS, its
 * offset below; 0 in none.
 */
#define BUCKETS 65536
#define PACKED 49152
#define LOOSE_EACH 256
#define PLACE_BITS 48

/* How the packs are cut into buckets. */
typedef struct cut {
	uint64_t *starts;  /* where each pack starts among them all */
	uint32_t npacks;
	uint64_t width;    /* a bucket's bytes */
	size_t loose;      /* commits in no pack met so far, in the listing's order */
} cut;

static uint64_t place_of(const pg_pack_loc *l, uint32_t npacks)
{
	if (!l->off || l->pack >= npacks || l->pack >= 0xffffu || l->off >> PLACE_BITS)
		return 0;
	return (uint64_t)(l->pack + 1) << PLACE_BITS | l->off;
}

static void loc_of(pg_pack_loc *l, uint64_t place)
{
	l->off = place & (((uint64_t)1 << PLACE_BITS) - 1);
	l->pack = place ? (uint32_t)(place >> PLACE_BITS) - 1 : 0;
}

/* The bucket of the next commit of the listing, at place. */
static size_t bucket_of(cut *c, uint64_t place)
{
	size_t b;

	if (place) {
		b = (size_t)((c->starts[(place >> PLACE_BITS) - 1] +
			      (place & (((uint64_t)1 << PLACE_BITS) - 1))) / c->width);
		return b < PACKED ? b : PACKED - 1;
	}
	b = c->loose++ / LOOSE_EACH;
	return PACKED + (b < BUCKETS - PACKED - 1 ? b : BUCKETS - PACKED - 1);
}

static int cut_init(cut *c, pg_repo *r)
{
	uint64_t total = 0, len;
	uint32_t j;
	int err;

	memset(c, 0, sizeof(*c));
	if ((err = pg_repo_pack_lens(&c->starts, &c->npacks, r)) < 0)
		return err;
	for (j = 0; j < c->npacks; j++) {
		len = c->starts[j];
		c->starts[j] = total;
		total += len;
	}
	c->width = total / PACKED + 1;
	return 0;
}

/*
 * Where each commit of the listing lies (place, by its number in it), and
 * how many each bucket holds (hist): located along each pack's index once
 * for all of a graph's commits, which come in order.
 */
static int places_of(uint64_t *place, size_t *hist, const reach *w, cut *c)
{
	pg_pack_locator *lc = NULL;
	pg_oid *ids = NULL, *chunk = NULL, last;
	pg_pack_loc *locs = NULL;
	size_t nids, k;
	bool have_last = false;
	stretch s;
	int err;

	if ((err = pg_pack_locator_new(&lc, w->r)) < 0)
		return err;
	if (!(ids = malloc(LIST_CHUNK * sizeof(*ids))) ||
	    !(chunk = malloc(LIST_CHUNK * sizeof(*chunk))) ||
	    !(locs = malloc(LIST_CHUNK * sizeof(*locs)))) {
		err = pg_error_oom();
		goto done;
	}
	for (first_stretch(w, &s); err == 0 && next_stretch(w, &s);) {
		if (!s.m)
			continue;
		nids = 0;
		if ((err = stretch_ids(ids, &nids, w, &s, chunk)) < 0)
			break;
		for (k = 0; k < nids; k++)
			locs[k].i = (uint32_t)k;
		/*
		 * A graph's ids come in order, stretch after stretch: located
		 * along each pack's index once.  They start again at each graph
		 * and at each layer of a chain (a stretch may hold the end of one
		 * and the start of the next), and those no graph holds come in no
		 * order: such a stretch is sorted and located on its own, and the
		 * walk along the indexes starts again after it.
		 */
		for (k = 1; k < nids && pg_oid_cmp(&ids[k - 1], &ids[k]) < 0; k++)
			;
		if (k < nids || s.g == w->r->ngraphs) {
			qsort_r(locs, nids, sizeof(*locs), pg_repo_loc_by_id, ids);
			err = pg_repo_pack_locate(locs, nids, w->r, ids);
			/* the next in order starts the walk again, wherever this one left it */
			memset(last.id, 0xff, sizeof(last.id));
			have_last = true;
		} else {
			if (have_last && pg_oid_cmp(&last, &ids[0]) >= 0) {
				pg_pack_locator_free(lc);
				lc = NULL;
				if ((err = pg_pack_locator_new(&lc, w->r)) < 0)
					break;
			}
			err = pg_pack_locator_next(lc, locs, nids, ids);
			last = ids[nids - 1];
			have_last = true;
		}
		if (err < 0)
			break;
		for (k = 0; k < nids; k++)
			place[s.first + locs[k].i] = place_of(&locs[k], c->npacks);
		for (k = 0; k < nids; k++)
			hist[bucket_of(c, place[s.first + k])]++;
	}
done:
	pg_pack_locator_free(lc);
	free(ids);
	free(chunk);
	free(locs);
	return err;
}

/*
 * The commits of the share of buckets [lo, hi), n of them, listed into ids
 * and locs (room for n) and read; chunk has room for twice LIST_CHUNK ids.
 */
static int read_share(const reach *w, const uint64_t *place, cut *c, size_t lo, size_t hi,
		      pg_oid *ids, pg_pack_loc *locs, size_t n, pg_oid *chunk,
		      pg_repo_commit_bytes_fn fn, void *ctx)
{
	uint16_t b[LIST_CHUNK];
	size_t got = 0, k, m;
	stretch s;
	int err = 0;

	c->loose = 0;
	for (first_stretch(w, &s); err == 0 && next_stretch(w, &s);) {
		for (k = m = 0; k < s.m; k++) {
			b[k] = (uint16_t)bucket_of(c, place[s.first + k]);
			m += b[k] >= lo && b[k] < hi;
		}
		if (!m)
			continue;
		k = 0;
		if ((err = stretch_ids(chunk, &k, w, &s, chunk + LIST_CHUNK)) < 0)
			break;
		for (k = 0; k < s.m; k++) {
			if (b[k] < lo || b[k] >= hi)
				continue;
			if (got == n)
				return pg_error_set(PG_EINVALID, "walk: a share past its %zu commits", n);
			ids[got] = chunk[k];
			loc_of(&locs[got], place[s.first + k]);
			locs[got].i = (uint32_t)got;
			got++;
		}
	}
	if (err == 0 && got != n)
		err = pg_error_set(PG_EINVALID, "walk: a share of %zu commits listed %zu", n, got);
	return err < 0 ? err : pg_repo_read_located(w->r, ids, locs, n, fn, ctx);
}

int pg_repo_reach_read(pg_repo_reach *w, size_t share, size_t *shares, pg_repo_commit_bytes_fn fn,
		       void *ctx)
{
	uint64_t *place = NULL;
	size_t *hist = NULL, n, most = 0, b, lo;
	pg_oid *ids = NULL, *chunk = NULL;
	pg_pack_loc *locs = NULL;
	cut c = { 0 };
	int err = 0;

	if (!share)
		share = 1;
	if (shares)
		*shares = 1;
	/* all at once: listed, and read in the packs' order */
	if (w->count <= share) {
		if ((err = pg_repo_reach_list(&ids, &n, w)) == 0)
			err = pg_repo_read_commits_raw(w->r, ids, n, fn, ctx);
		free(ids);
		return err;
	}
	if ((err = cut_init(&c, w->r)) < 0)
		return err;
	if (!(place = malloc(w->count * sizeof(*place))) ||
	    !(hist = calloc(BUCKETS, sizeof(*hist)))) {
		err = pg_error_oom();
		goto done;
	}
	if ((err = places_of(place, hist, w, &c)) < 0)
		goto done;
	/* the largest share, for the room its listing takes */
	for (b = 0, n = 0; b < BUCKETS; b++) {
		if (n && n + hist[b] > share)
			n = 0;
		n += hist[b];
		most = n > most ? n : most;
	}
	if (most > UINT32_MAX || !(ids = malloc((most + 1) * sizeof(*ids))) ||
	    !(locs = malloc((most + 1) * sizeof(*locs))) ||
	    !(chunk = malloc(2 * LIST_CHUNK * sizeof(*chunk)))) {
		err = pg_error_oom();
		goto done;
	}
	if (shares)
		*shares = 0;
	for (lo = 0; lo < BUCKETS && err == 0; lo = b) {
		for (b = lo, n = 0; b < BUCKETS && !(n && n + hist[b] > share); b++)
			n += hist[b];
		if (n && (err = read_share(w, place, &c, lo, b, ids, locs, n, chunk, fn, ctx)) == 0 &&
		    shares)
			(*shares)++;
	}
done:
	free(c.starts);
	free(place);
	free(hist);
	free(ids);
	free(locs);
	free(chunk);
	return err;
}

int pg_repo_walk_all(pg_oid **out, size_t *n, pg_repo *r, const pg_oid *tips, size_t ntips)
{
	pg_repo_reach *w = NULL;
	size_t count;
	int err;

	*out = NULL;
	*n = 0;
	if ((err = pg_repo_reach_all(&w, &count, r, tips, ntips)) == 0)
		err = pg_repo_reach_list(out, n, w);
	pg_repo_reach_free(w);
	return err;
}
