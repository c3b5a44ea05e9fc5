/* walk.c - history: ranges, the date-ordered walk, subjects, ancestry and merge bases. */
#include "repo/commits.h"
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

/* The commit of the tips' history, then of each hidden one's, that stopped a walk; err when none. */
int pg_repo_walk_diagnose(pg_repo *r, const pg_oid *tips, size_t ntips, const pg_oid *hide,
			  size_t nhide, int err)
{
	bool named = false;
	size_t i;

	for (i = 0; i < ntips && !named; i++)
		err = name_unparseable(r, &tips[i], err, &named);
	for (i = 0; i < nhide && !named; i++)
		err = name_unparseable(r, &hide[i], err, &named);
	return err;
}

/*
 * The walks below ask repo/commits.c for commits: from a trusted
 * commit-graph where one holds them, by position and without inflating
 * anything, else from the object's header lines.
 */

/* A node's flags in the range walk. */
#define F_TIP 1u      /* reachable from the tip */
#define F_HIDE 2u     /* reachable from a hidden commit */
#define F_QUEUED 4u
#define F_DONE 8u     /* popped and its parents painted */

/*
 * The queue of the painting walk: highest generation first (a commit not
 * in a graph is above all), then newest first, then first come.  By date
 * (git's --date-order), the generation plays no part.
 */
typedef struct qitem {
	pg_cnode *n;
	uint64_t seq;
} qitem;

typedef struct pqueue {
	qitem *v;
	size_t len, alloc;
	uint64_t seq;
	bool by_date;
} pqueue;

static bool q_before(const pqueue *q, const qitem *a, const qitem *b)
{
	if (!q->by_date && a->n->gen != b->n->gen)
		return a->n->gen > b->n->gen;
	if (a->n->time != b->n->time)
		return a->n->time > b->n->time;
	return a->seq < b->seq;
}

static int q_push(pqueue *q, pg_cnode *n)
{
	size_t i;
	int err;

	if ((err = PG_ARRAY_GROW(q->v, q->len + 1, q->alloc)) < 0)
		return err;
	i = q->len++;
	q->v[i].n = n;
	q->v[i].seq = q->seq++;
	while (i > 0 && q_before(q, &q->v[i], &q->v[(i - 1) / 2])) {
		qitem t = q->v[i];

		q->v[i] = q->v[(i - 1) / 2];
		q->v[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
	return 0;
}

static pg_cnode *q_pop(pqueue *q)
{
	pg_cnode *top = q->v[0].n;
	size_t i = 0;

	q->v[0] = q->v[--q->len];
	for (;;) {
		size_t c = 2 * i + 1;
		qitem t;

		if (c >= q->len)
			break;
		if (c + 1 < q->len && q_before(q, &q->v[c + 1], &q->v[c]))
			c++;
		if (!q_before(q, &q->v[c], &q->v[i]))
			break;
		t = q->v[i];
		q->v[i] = q->v[c];
		q->v[c] = t;
		i = c;
	}
	return top;
}

/*
 * Uninteresting commits looked at, past the last interesting one, before a
 * walk among commits without generation numbers gives up: libgit2's and
 * git's SLOP, their tolerance for clock skew.
 */
#define RANGE_SLOP 5

typedef struct painter {
	pg_csrc *s;
	pqueue q;
	size_t nonstale;   /* queued and not hidden */
	size_t infinite;   /* queued and without a generation */
	size_t live;       /* popped and not hidden (so far): the result */
	bool exact;        /* no RANGE_SLOP guess (pg_repo_walk_range_exact) */
	pg_cnode **stack;  /* for marking hidden ancestors */
	size_t nstack, stack_alloc;
} painter;

static int enqueue(painter *w, pg_cnode *n)
{
	int err;

	if ((err = q_push(&w->q, n)) < 0)
		return err;
	n->flags |= F_QUEUED;
	w->nonstale += !(n->flags & F_HIDE);
	w->infinite += n->gen == PG_GEN_INFINITY;
	return 0;
}

/*
 * n, popped before, turns out to be hidden after all (clock skew put it
 * ahead of a hidden child): so are the ancestors it painted, at once, as
 * libgit2's mark_parents_uninteresting does.
 */
static int mark_hidden(painter *w, pg_cnode *n)
{
	int err;

	w->nstack = 0;
	if ((err = PG_ARRAY_GROW(w->stack, 1, w->stack_alloc)) < 0)
		return err;
	w->stack[w->nstack++] = n;
	while (w->nstack) {
		pg_cnode *c = w->stack[--w->nstack];
		uint32_t i;

		for (i = 0; i < c->nparents; i++) {
			pg_cnode *p = c->parents[i];

			if (p->flags & F_HIDE)
				continue;
			p->flags |= F_HIDE;
			if (p->flags & F_QUEUED)
				w->nonstale--;
			if (!(p->flags & F_DONE))
				continue;
			w->live--;
			if ((err = PG_ARRAY_GROW(w->stack, w->nstack + 1, w->stack_alloc)) < 0)
				return err;
			w->stack[w->nstack++] = p;
		}
	}
	return 0;
}

/* Give p the flags its child painted it with. */
static int paint_parent(painter *w, pg_cnode *p, uint32_t add)
{
	int err;

	if ((p->flags & add) == add)
		return 0;
	if ((err = pg_csrc_parse(w->s, p)) < 0)
		return err;
	if ((add & F_HIDE) && !(p->flags & F_HIDE)) {
		p->flags |= F_HIDE;
		if (p->flags & F_QUEUED) {
			w->nonstale--;
		} else if (p->flags & F_DONE) {
			w->live--;
			return mark_hidden(w, p);
		}
	}
	p->flags |= add;
	return p->flags & (F_QUEUED | F_DONE) ? 0 : enqueue(w, p);
}

/*
 * Paint down from the tip and the hidden commits, as git's
 * paint_down_to_common does, until nothing the tip reaches can still turn
 * out hidden.  In generation order that is exact: a commit is popped after
 * every child, so its flags are final, and once every queued commit is
 * hidden nothing below them can be the tip's alone.  Commits without a
 * generation (in no graph) come first, newest first, and there, as in
 * git and libgit2, the walk goes on RANGE_SLOP commits past the point
 * where every queued one is hidden and older than the last interesting
 * one: that tolerates clock skew, but is a guess.  Exact (w->exact), the
 * walk goes on instead while a commit it took for the tip's may still turn
 * out hidden: until none is left (live), or every queued commit has a
 * generation (a commit in a graph reaches none outside it); without a
 * graph, that is down to the roots below the hidden commits.
 */
static int paint(painter *w)
{
	int64_t last = INT64_MAX;
	int slop = RANGE_SLOP, err = 0;

	while (w->q.len && err == 0) {
		pg_cnode *n;
		uint32_t i;

		if (w->nonstale == 0) {
			if (w->infinite == 0 || (w->exact && w->live == 0))
				break;
			if (w->exact)
				;
			else if (w->q.v[0].n->time >= last)
				slop = RANGE_SLOP;
			else if (--slop == 0)
				break;
		}
		n = q_pop(&w->q);
		n->flags &= ~F_QUEUED;
		n->flags |= F_DONE;
		w->nonstale -= !(n->flags & F_HIDE);
		w->infinite -= n->gen == PG_GEN_INFINITY;
		if (!(n->flags & F_HIDE)) {
			last = n->time;
			w->live++;
		}
		for (i = 0; i < n->nparents && err == 0; i++)
			err = paint_parent(w, n->parents[i], n->flags & (F_TIP | F_HIDE));
	}
	return err;
}

typedef struct collect {
	pg_cnode **v;
	size_t n, alloc;
	int err;
} collect;

static void collect_result(void *ctx, pg_cnode *n)
{
	collect *c = ctx;
	uint32_t i;

	if ((n->flags & (F_TIP | F_HIDE)) != F_TIP || c->err)
		return;
	if ((c->err = PG_ARRAY_GROW(c->v, c->n + 1, c->alloc)) < 0)
		return;
	c->v[c->n++] = n;
	/* count each commit's children inside the result, for the order */
	for (i = 0; i < n->nparents; i++)
		if ((n->parents[i]->flags & (F_TIP | F_HIDE)) == F_TIP)
			n->parents[i]->aux++;
}

/*
 * The result in libgit2's topological order, reversed: depth first from
 * the tip, a commit once all its children in the result are out, parents
 * in their order, the last pushed first.
 */
static int topo_order(pg_oid *out, pg_cnode *tip, size_t n, painter *w)
{
	size_t k = n;
	int err;

	w->nstack = 0;
	if ((err = PG_ARRAY_GROW(w->stack, 1, w->stack_alloc)) < 0)
		return err;
	w->stack[w->nstack++] = tip;
	while (w->nstack && k) {
		pg_cnode *c = w->stack[--w->nstack];
		uint32_t i;

		out[--k] = c->id;
		for (i = 0; i < c->nparents; i++) {
			pg_cnode *p = c->parents[i];

			if ((p->flags & (F_TIP | F_HIDE)) != F_TIP || --p->aux != 0)
				continue;
			if ((err = PG_ARRAY_GROW(w->stack, w->nstack + 1, w->stack_alloc)) < 0)
				return err;
			w->stack[w->nstack++] = p;
		}
	}
	if (k)
		return pg_error_set(PG_ERROR, "walk: the commits in range form no order from "
				    "the tip");
	return 0;
}

/*
 * Paint the range tips[0..ntips) ^hide[0..nhide) and collect it (c, each
 * commit's children in it counted in aux).  w->s is set.
 */
static int paint_set(collect *c, painter *w, pg_repo *r, const pg_oid *tips, size_t ntips,
		     const pg_oid *hide, size_t nhide)
{
	pg_cnode *h;
	size_t i;
	int err;

	for (i = 0; i < ntips; i++) {
		if ((err = pg_csrc_get(&h, w->s, &tips[i])) < 0)
			return err;
		if (h->flags & F_TIP)
			continue;
		h->flags |= F_TIP;
		if ((err = enqueue(w, h)) < 0)
			return err;
	}
	for (i = 0; i < nhide; i++) {
		if ((err = pg_csrc_get(&h, w->s, &hide[i])) < 0)
			return err;
		if (h->flags & F_HIDE)
			continue;
		if (!(h->flags & F_QUEUED)) {
			h->flags |= F_HIDE;
			err = enqueue(w, h);
		} else {
			h->flags |= F_HIDE;
			w->nonstale--;
		}
		if (err < 0)
			return err;
	}
	/* a commit not there: name it and the commit whose parent it is */
	if ((err = paint(w)) == PG_ENOTFOUND)
		err = pg_repo_walk_diagnose(r, tips, ntips, hide, nhide, err);
	if (err < 0)
		return err;
	pg_csrc_each(w->s, collect_result, c);
	return c->err;
}

/* paint_set from one tip; *t is its node. */
static int paint_range(pg_cnode **t, collect *c, painter *w, pg_repo *r, const pg_oid *tip,
		       const pg_oid *hide, size_t nhide)
{
	int err;

	if ((err = paint_set(c, w, r, tip, 1, hide, nhide)) < 0)
		return err;
	return pg_csrc_node(t, w->s, tip);
}

/*
 * The commits of tips' range without hide, painted (exactly: no clock-skew
 * cut-off) and listed: with one tip and !exact in topological order, newest
 * first; otherwise in the order painted.
 */
static int walk_list(pg_oid **out, size_t *n, pg_repo *r, const pg_oid *tips, size_t ntips,
		     const pg_oid *hide, size_t nhide, bool exact)
{
	pg_csrc s;
	painter w;
	collect c = { NULL, 0, 0, 0 };
	pg_cnode *t = NULL;
	pg_oid *list = NULL;
	size_t i;
	int err;

	*out = NULL;
	*n = 0;
	memset(&w, 0, sizeof(w));
	w.exact = exact;
	if ((err = pg_csrc_init(&s, r)) < 0)
		goto done;
	w.s = &s;
	if (exact)
		err = paint_set(&c, &w, r, tips, ntips, hide, nhide);
	else
		err = paint_range(&t, &c, &w, r, tips, hide, nhide);
	if (err < 0 || !c.n)
		goto done;
	if (!(list = malloc(c.n * sizeof(*list)))) {
		err = pg_error_oom();
		goto done;
	}
	if (!exact)
		err = topo_order(list, t, c.n, &w);
	else
		for (i = 0; i < c.n; i++)
			list[i] = c.v[i]->id;
	if (err < 0)
		goto done;
	*out = list;
	*n = c.n;
	list = NULL;
done:
	free(list);
	free(c.v);
	free(w.q.v);
	free(w.stack);
	pg_csrc_release(&s);
	return err;
}

int pg_repo_walk_range_exact(pg_oid **out, size_t *n, pg_repo *r, const pg_oid *tips,
			     size_t ntips, const pg_oid *hide, size_t nhide)
{
	return walk_list(out, n, r, tips, ntips, hide, nhide, true);
}

int pg_repo_walk_range(pg_oid **out, size_t *n, pg_repo *r, const pg_oid *tip,
		       const pg_oid *hide, size_t nhide)
{
	return walk_list(out, n, r, tip, 1, hide, nhide, false);
}

/*
 * The collected range newest first, no commit before all its children in
 * it, else by committer date, first come on a tie: git's --date-order, and
 * libgit2's GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME.
 */
static int date_order(pg_cnode **out, pg_cnode *tip, size_t n, pqueue *q)
{
	size_t k = 0;
	int err;

	q->len = 0;
	q->by_date = true;
	if ((err = q_push(q, tip)) < 0)
		return err;
	while (q->len && k < n) {
		pg_cnode *c = q_pop(q);
		uint32_t i;

		out[k++] = c;
		for (i = 0; i < c->nparents; i++) {
			pg_cnode *p = c->parents[i];

			if ((p->flags & (F_TIP | F_HIDE)) != F_TIP || --p->aux != 0)
				continue;
			if ((err = q_push(q, p)) < 0)
				return err;
		}
	}
	if (k < n)
		return pg_error_set(PG_ERROR, "walk: the commits in range form no order from "
				    "the tip");
	return 0;
}

/*
 * Our own walk, not a git_revwalk: libgit2 1.5.1's limited revwalk leaks
 * the commit-list nodes it had queued when a commit of the walk is missing
 * (a shallow or partial history); here a missing commit is named instead.
 */
int pg_repo_walk_subjects(char ***subjects, size_t *n, pg_repo *r, const pg_oid *tip,
			  const pg_oid *hide)
{
	pg_csrc s;
	painter w;
	collect c = { NULL, 0, 0, 0 };
	pg_cnode *t = NULL, **order = NULL;
	char **list = NULL;
	size_t i, count = 0, alloc = 0;
	int gerr, err;

	*subjects = NULL;
	*n = 0;
	memset(&w, 0, sizeof(w));
	if ((err = pg_csrc_init(&s, r)) < 0)
		goto done;
	w.s = &s;
	if ((err = paint_range(&t, &c, &w, r, tip, hide, 1)) < 0 || !c.n)
		goto done;
	if (!(order = malloc(c.n * sizeof(*order)))) {
		err = pg_error_oom();
		goto done;
	}
	if ((err = date_order(order, t, c.n, &w.q)) < 0)
		goto done;
	for (i = 0; i < c.n; i++) {
		git_commit *commit = NULL;
		const char *summary;

		if (order[i]->nparents > 1)
			continue;
		if ((gerr = git_commit_lookup(&commit, r->git, pg_git_oid(&order[i]->id))) < 0) {
			err = pg_git_fail(gerr, "walk");
			goto done;
		}
		summary = git_commit_summary(commit);
		if ((err = PG_ARRAY_GROW(list, count + 1, alloc)) < 0 ||
		    !(list[count++] = pg_strdup(summary ? summary : ""))) {
			git_commit_free(commit);
			err = err < 0 ? err : PG_ENOMEM;
			goto done;
		}
		git_commit_free(commit);
	}
	*subjects = list;
	*n = count;
	list = NULL;
	count = 0;
done:
	pg_str_list_free(list, count);
	free(order);
	free(c.v);
	free(w.q.v);
	free(w.stack);
	pg_csrc_release(&s);
	return err;
}

/* A binary max-heap of commits by committer time, for the date-ordered walk. */
typedef struct heap_item {
	int64_t time;
	pg_cnode *n;
} heap_item;

typedef struct heap {
	heap_item *items;
	size_t len, alloc;
} heap;

static int heap_push(heap *h, pg_cnode *n)
{
	size_t i;
	int err;

	if ((err = PG_ARRAY_GROW(h->items, h->len + 1, h->alloc)) < 0)
		return err;
	i = h->len++;
	while (i > 0 && h->items[(i - 1) / 2].time < n->time) {
		h->items[i] = h->items[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->items[i].time = n->time;
	h->items[i].n = n;
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

#define F_SEEN 1u

/* Queue a commit for the date-ordered walk unless it was queued before. */
static int walk_enqueue(pg_csrc *s, heap *h, pg_cnode *n)
{
	int err;

	if (n->flags & F_SEEN)
		return 0;
	n->flags |= F_SEEN;
	if ((err = pg_csrc_parse(s, n)) < 0)
		return err;
	return heap_push(h, n);
}

int pg_repo_walk_since(pg_repo *r, const pg_oid *tip, int64_t since, size_t max,
		       pg_repo_visit_fn fn, void *ctx)
{
	heap h = { NULL, 0, 0 };
	pg_csrc s;
	pg_cnode *t;
	size_t visited = 0, slop = SINCE_SLOP;
	int err;

	if ((err = pg_csrc_init(&s, r)) == 0 && (err = pg_csrc_node(&t, &s, tip)) == 0)
		err = walk_enqueue(&s, &h, t);
	while (err == 0 && h.len && visited < max) {
		heap_item it = heap_pop(&h);
		uint32_t i;

		if (it.time < since && --slop == 0)
			break;
		for (i = 0; i < it.n->nparents && err == 0; i++)
			if ((err = walk_enqueue(&s, &h, it.n->parents[i])) == PG_ENOTFOUND)
				err = missing(pg_git_oid(&it.n->parents[i]->id), pg_git_oid(&it.n->id));
		if (err)
			break;
		visited++;
		err = fn(ctx, &it.n->id, it.time, it.n->nparents ? &it.n->parents[0]->id : NULL);
	}
	free(h.items);
	pg_csrc_release(&s);
	return err;
}

/*
 * With generation numbers, only commits at or above the ancestor's
 * generation can reach it: a depth-first search, first parents first,
 * that never goes below.  Without them (the ancestor is in no graph),
 * libgit2's merge-base walk decides.
 */
int pg_repo_is_ancestor(pg_repo *r, const pg_oid *ancestor, const pg_oid *descendant)
{
	pg_csrc s;
	pg_cnode *a, *d, **stack = NULL;
	size_t nstack = 0, alloc = 0;
	int gerr, err, found = 0;

	if (!pg_oid_cmp(ancestor, descendant))
		return 1;
	if ((err = pg_csrc_init(&s, r)) < 0 || (err = pg_csrc_get(&a, &s, ancestor)) < 0 ||
	    (err = pg_csrc_get(&d, &s, descendant)) < 0)
		goto done;
	if (a->gen == PG_GEN_INFINITY) {
		gerr = git_graph_descendant_of(r->git, pg_git_oid(descendant), pg_git_oid(ancestor));
		err = gerr < 0 ? pg_git_fail(gerr, "ancestry") : gerr;
		goto done;
	}
	if ((err = PG_ARRAY_GROW(stack, 1, alloc)) < 0)
		goto done;
	d->flags |= F_SEEN;
	stack[nstack++] = d;
	while (nstack && !found) {
		pg_cnode *c = stack[--nstack];
		uint32_t i;

		if ((err = pg_csrc_parse(&s, c)) < 0)
			goto done;
		for (i = c->nparents; i-- > 0 && !found; ) {
			pg_cnode *p = c->parents[i];

			if (p->flags & F_SEEN)
				continue;
			p->flags |= F_SEEN;
			if (p == a) {
				found = 1;
				break;
			}
			if ((err = pg_csrc_parse(&s, p)) < 0)
				goto done;
			if (p->gen < a->gen)
				continue;
			if ((err = PG_ARRAY_GROW(stack, nstack + 1, alloc)) < 0)
				goto done;
			stack[nstack++] = p;
		}
	}
	err = found;
done:
	free(stack);
	pg_csrc_release(&s);
	return err;
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

/* One commit asked about by pg_repo_first_parent_line, and when its ancestry is asked next. */
typedef struct fp_want {
	pg_cnode *n;
	bool open;
	size_t step, next;
} fp_want;

/*
 * Whether w can still lie below c on the line (every commit below c is
 * c's ancestor): 0 when it cannot, 1 when it may, negative on error.  By
 * generation where both have one (exact, no read); else by ancestry, asked
 * once c is dated before w and then at doubling intervals, so that a long
 * line costs a few questions.  Asking late only walks further: it never
 * changes the answer.
 */
static int may_lie_below(pg_repo *r, fp_want *w, const pg_cnode *c, size_t step)
{
	if (c->gen != PG_GEN_INFINITY && w->n->gen != PG_GEN_INFINITY)
		return c->gen > w->n->gen;
	if (c->time >= w->n->time)
		return 1;
	if (step < w->next)
		return 1;
	w->next = step + (w->step = w->step ? 2 * w->step : 1);
	return pg_repo_is_ancestor(r, &w->n->id, &c->id);
}

int pg_repo_first_parent_line(bool *on, pg_repo *r, const pg_oid *tip, const pg_oid *ids,
			      size_t n)
{
	pg_csrc s;
	pg_cnode *c;
	fp_want *want = NULL;
	size_t i, left = n, step;
	int err;

	for (i = 0; i < n; i++)
		on[i] = false;
	if (!n)
		return 0;
	if ((err = pg_csrc_init(&s, r)) < 0)
		return err;
	if (!(want = calloc(n, sizeof(*want)))) {
		err = pg_error_oom();
		goto done;
	}
	for (i = 0; i < n; i++) {
		if ((err = pg_csrc_get(&want[i].n, &s, &ids[i])) < 0)
			goto done;
		want[i].open = true;
	}
	if ((err = pg_csrc_get(&c, &s, tip)) < 0)
		goto done;
	for (step = 0; left; step++) {
		for (i = 0; i < n; i++) {
			if (!want[i].open)
				continue;
			if (want[i].n == c)
				on[i] = true;
			else if ((err = may_lie_below(r, &want[i], c, step)) < 0)
				goto done;
			else if (err)
				continue;
			want[i].open = false;
			left--;
		}
		if (!c->nparents)
			break;
		c = c->parents[0];
		if ((err = pg_csrc_parse(&s, c)) < 0)
			goto done;
	}
	err = 0;
done:
	free(want);
	pg_csrc_release(&s);
	return err;
}
