/* test_walk.c - the range, date and ancestry walks against git, with and without commit-graphs. */
#include "tests/unit/unit.h"

#include "common/digest.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/map.h"
#include "common/str.h"
#include "repo/repo.h"
#include "tests/unit/run.h"

#include <unistd.h>

#define COMMITS 400

typedef struct fixture {
	char dir[64];
	char path[6][256]; /* the variants below */
	pg_oid *all[2];    /* every commit, from git rev-list --all: mild, skewed */
	size_t nall[2];
	char *parents[2];  /* git rev-list --all --parents */
} fixture;

enum variant {
	MILD,          /* skew within the spacing of commits, no graph */
	MILD_GRAPH,    /* the same history, one commit-graph file */
	SKEW,          /* dates going back by up to 3.5 days, no graph */
	SKEW_GRAPH,    /* the same, a commit-graph with corrected dates (v2) */
	SKEW_LEVELS,   /* the same, a commit-graph with topological levels only (v1) */
	SKEW_CHAIN,    /* the same, a chain of two layers */
};

static size_t parse_ids(pg_oid **out, const char *text)
{
	size_t n = 0, alloc = 0;
	pg_oid *v = NULL;

	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);

		if (len == PG_OID_HEXSZ) {
			if (n == alloc) {
				alloc = alloc ? 2 * alloc : 64;
				v = reallocarray(v, alloc, sizeof(*v));
				assert_non_null(v);
			}
			assert_int_equal(pg_oid_fromhex(&v[n++], text, len), 0);
		}
		text += len + (nl != NULL);
	}
	*out = v;
	return n;
}

static size_t git_ids(pg_oid **out, const char *repo, const char *a, const char *b,
		      const char *c, const char *d)
{
	const char *argv[] = { "git", "--git-dir", repo, "rev-list", a, b, c, d, NULL };
	char *text = run_must(argv);
	size_t n = parse_ids(out, text);

	free(text);
	return n;
}

static void hex(char out[PG_OID_HEXSZ + 1], const pg_oid *id)
{
	pg_oid_tohex(out, id);
}

static void make_variant(fixture *f, enum variant v, const char *name, const char *skew)
{
	char path[256];
	const char *make[] = { "tests/unit/make-history.sh", path, "400", "16", skew, NULL };

	snprintf(path, sizeof(path), "%s/%s.git", f->dir, name);
	memcpy(f->path[v], path, sizeof(path));
	free(run_must(make));
}

static void write_graph(fixture *f, enum variant v, const char *version)
{
	const char *argv[] = { "git", "-c", version, "--git-dir", f->path[v], "commit-graph",
			       "write", "--reachable", NULL };

	free(run_must(argv));
}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	char *text, chain_base[1024];
	int i;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/pg-test-walk-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	make_variant(f, MILD, "mild", "500");
	make_variant(f, MILD_GRAPH, "mild-graph", "500");
	write_graph(f, MILD_GRAPH, "commitGraph.generationVersion=2");
	make_variant(f, SKEW, "skew", "300000");
	make_variant(f, SKEW_GRAPH, "skew-graph", "300000");
	write_graph(f, SKEW_GRAPH, "commitGraph.generationVersion=2");
	make_variant(f, SKEW_LEVELS, "skew-levels", "300000");
	write_graph(f, SKEW_LEVELS, "commitGraph.generationVersion=1");
	make_variant(f, SKEW_CHAIN, "skew-chain", "300000");
	{
		/* a base layer for t0, then the rest on top of it */
		const char *base[] = { "sh", "-c", chain_base, NULL };
		const char *top[] = { "git", "--git-dir", f->path[SKEW_CHAIN], "commit-graph",
				      "write", "--reachable", "--split=no-merge", NULL };

		snprintf(chain_base, sizeof(chain_base),
			 "git --git-dir=%s rev-parse t0 | git --git-dir=%s commit-graph write "
			 "--split --stdin-commits", f->path[SKEW_CHAIN], f->path[SKEW_CHAIN]);
		free(run_must(base));
		free(run_must(top));
	}
	for (i = 0; i < 2; i++) {
		const char *argv[] = { "git", "--git-dir", f->path[i ? SKEW : MILD], "rev-list",
				       "--all", NULL, NULL };

		text = run_must(argv);
		f->nall[i] = parse_ids(&f->all[i], text);
		free(text);
		assert_int_equal(f->nall[i], COMMITS);
		argv[5] = "--parents";
		f->parents[i] = run_must(argv);
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	pg_remove_tree(f->dir);
	free(f->all[0]);
	free(f->all[1]);
	free(f->parents[0]);
	free(f->parents[1]);
	free(f);
	return 0;
}

/* The chain variant really is a chain of two layers. */
static void test_the_chain_has_two_layers(void **state)
{
	fixture *f = *state;
	char path[512], *text;
	pg_buf b = PG_BUF_INIT;

	snprintf(path, sizeof(path), "%s/objects/info/commit-graphs/commit-graph-chain",
		 f->path[SKEW_CHAIN]);
	assert_int_equal(pg_buf_read_file(&b, path), 0);
	text = b.ptr;
	assert_int_equal(strlen(text), 2 * (PG_OID_HEXSZ + 1));
	pg_buf_release(&b);
}

/*
 * tip ^hide for pairs spread over the history: the same commits as the
 * exact set difference (git rev-list tip, minus git rev-list hide), in the
 * order git rev-list --topo-order --reverse gives.
 */
/*
 * The commits reachable from tip, marked in reach[] (indexed as the
 * history's list of commits), from git rev-list --all --parents.
 */
static void reachable(bool *reach, const fixture *f, int k, const pg_oid *tip)
{
	size_t n = f->nall[k], *stack = calloc(n + 1, sizeof(*stack)), top = 0, i;
	const pg_oid *all = f->all[k];

	assert_non_null(stack);
	memset(reach, 0, n * sizeof(*reach));
	for (i = 0; i < n && pg_oid_cmp(&all[i], tip); i++)
		;
	assert_true(i < n);
	reach[i] = true;
	stack[top++] = i;
	while (top) {
		size_t c = stack[--top];
		const char *line = f->parents[k];

		/* the line of commit c: rev-list --all lists them in the same order */
		for (i = 0; i < c; i++)
			line = strchr(line, '\n') + 1;
		for (line += PG_OID_HEXSZ; *line == ' '; line += PG_OID_HEXSZ) {
			pg_oid p;
			size_t j;

			assert_int_equal(pg_oid_fromhex(&p, ++line, PG_OID_HEXSZ), 0);
			for (j = 0; j < n && pg_oid_cmp(&all[j], &p); j++)
				;
			assert_true(j < n);
			if (!reach[j]) {
				reach[j] = true;
				stack[top++] = j;
			}
		}
	}
	free(stack);
}

static size_t index_of(const pg_oid *all, size_t n, const pg_oid *id)
{
	size_t i;

	for (i = 0; i < n && pg_oid_cmp(&all[i], id); i++)
		;
	assert_true(i < n);
	return i;
}

/* The commits of variant v's history. */
static const pg_oid *all_of(const fixture *f, enum variant v, size_t *n)
{
	int k = v >= SKEW;

	*n = f->nall[k];
	return f->all[k];
}

static void check_ranges(fixture *f, enum variant v, bool exact_expected)
{
	pg_repo *r = NULL;
	size_t i, j, pairs = 0, exact = 0, ordered = 0, nall;
	const pg_oid *all = all_of(f, v, &nall);
	bool *from_tip = calloc(nall, sizeof(bool)), *from_hide = calloc(nall, sizeof(bool));

	assert_non_null(from_tip);
	assert_non_null(from_hide);
	assert_int_equal(pg_repo_open(&r, f->path[v]), 0);
	for (i = 3; i < nall; i += 41) {
		reachable(from_tip, f, v >= SKEW, &all[i]);
		for (j = 0; j < nall; j += 67) {
			char th[PG_OID_HEXSZ + 1], not[PG_OID_HEXSZ + 2];
			pg_oid *got = NULL, *order = NULL;
			size_t ngot = 0, norder, k, want = 0;
			bool same = true;

			hex(th, &all[i]);
			not[0] = '^';
			hex(not + 1, &all[j]);
			reachable(from_hide, f, v >= SKEW, &all[j]);
			assert_int_equal(pg_repo_walk_range(&got, &ngot, r, &all[i], &all[j], 1), 0);
			for (k = 0; k < nall; k++)
				want += from_tip[k] && !from_hide[k];
			for (k = 0; k < ngot; k++) {
				size_t at = index_of(all, nall, &got[k]);

				/* never a commit the tip does not reach */
				assert_true(from_tip[at]);
				same = same && !from_hide[at];
			}
			/* never one short: only hidden commits can be too many */
			assert_true(ngot >= want);
			same = same && ngot == want;
			if (exact_expected && !same)
				fail_msg("%s %.13s: %zu commits, the exact difference has %zu",
					 th, not, ngot, want);
			exact += same;
			pairs++;
			/* git's order, for a few: each costs a git */
			if (same && ngot > 1 && ordered < 6) {
				norder = git_ids(&order, f->path[v], "--topo-order", "--reverse", th,
						 not);
				assert_int_equal(norder, ngot);
				for (k = 0; k < ngot; k++)
					if (pg_oid_cmp(&order[k], &got[k]))
						fail_msg("%s %.13s: commit %zu is not in git's "
							 "topological order", th, not, k);
				ordered++;
			}
			free(got);
			free(order);
		}
	}
	/*
	 * Without generation numbers skew can fool the walk, as it fools git's
	 * and libgit2's: it may keep a hidden commit, never lose one of the
	 * tip's (above).  The skewed history does fool it, so that the graph
	 * variants show they are exact where dates are not enough.
	 */
	assert_true(pairs > 50);
	assert_true(ordered == 6);
	if (v == SKEW)
		assert_true(exact < pairs);
	free(from_tip);
	free(from_hide);
	pg_repo_free(r);
}

static void test_ranges_mild_skew_no_graph(void **state)
{
	check_ranges(*state, MILD, true);
}

static void test_ranges_mild_skew_graph(void **state)
{
	check_ranges(*state, MILD_GRAPH, true);
}

static void test_ranges_skew_no_graph(void **state)
{
	check_ranges(*state, SKEW, false);
}

static void test_ranges_skew_graph_is_exact(void **state)
{
	check_ranges(*state, SKEW_GRAPH, true);
}

static void test_ranges_skew_levels_is_exact(void **state)
{
	check_ranges(*state, SKEW_LEVELS, true);
}

static void test_ranges_skew_chain_is_exact(void **state)
{
	check_ranges(*state, SKEW_CHAIN, true);
}

static int oid_order(const void *a, const void *b)
{
	return pg_oid_cmp(a, b);
}

/* got and want, in any order, the same ids, each once: checked, and both freed. */
/*
 * Whether a commit-graph is mapped into this process: a walk of all maps
 * it for its pass and lets it go after, so that it is not left resident.
 */
static bool graph_mapped(void)
{
	FILE *m = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;

	assert_non_null(m);
	while (fgets(line, sizeof(line), m))
		found |= strstr(line, "/commit-graph") != NULL;
	fclose(m);
	return found;
}

static void same_ids(pg_oid *got, size_t ngot, pg_oid *want, size_t nwant)
{
	size_t i;

	assert_int_equal(ngot, nwant);
	qsort(got, ngot, sizeof(*got), oid_order);
	qsort(want, nwant, sizeof(*want), oid_order);
	for (i = 0; i < ngot; i++)
		assert_memory_equal(got[i].id, want[i].id, PG_OID_RAWSZ);
	free(got);
	free(want);
}

/*
 * Every commit two tips reach, one of them a commit above the graph (made
 * after it, so read from its object): git rev-list's, each once, with no
 * graph, one file, a chain.
 */
static void test_walk_all_is_git_s(void **state)
{
	fixture *f = *state;
	static const enum variant vs[] = { SKEW, SKEW_GRAPH, SKEW_CHAIN };
	size_t k;

	for (k = 0; k < sizeof(vs) / sizeof(vs[0]); k++) {
		const char *path = f->path[vs[k]];
		pg_repo *r = NULL;
		pg_oid tips[2], *got = NULL, *want = NULL;
		size_t ngot = 0, nwant;
		char *out = run_sh("cd %s && git commit-tree -p main -p t1 -m above main^{tree}",
				   path);
		char top[PG_OID_HEXSZ + 1];

		assert_int_equal(pg_oid_fromhex(&tips[0], out, PG_OID_HEXSZ), 0);
		free(out);
		hex(top, &tips[0]);
		nwant = git_ids(&want, path, top, "t0", "--", NULL);
		assert_int_equal(pg_repo_open(&r, path), 0);
		assert_int_equal(pg_repo_ref_target(&tips[1], r, "refs/heads/t0"), 0);
		assert_int_equal(pg_repo_walk_all(&got, &ngot, r, tips, 2), 0);
		same_ids(got, ngot, want, nwant);
		pg_repo_free(r);
	}
}

/*
 * A clone that borrows a history through objects/info/alternates, each
 * with a commit on top the other lacks and a commit-graph of every commit
 * it has: the two trusted graphs hold the same ancestry, one tip in each,
 * and each commit is listed once.
 */
static void test_walk_all_alternates_two_graphs(void **state)
{
	fixture *f = *state;
	char base[300], path[300], top[2][PG_OID_HEXSZ + 1];
	pg_repo *r = NULL;
	pg_oid tips[2], *got = NULL, *want = NULL;
	size_t ngot = 0, nwant, i;
	const char *const on_top = "c=$(git --git-dir=%s commit-tree -p main -m top%d main^{tree}) && "
				   "git --git-dir=%s update-ref refs/heads/top $c && "
				   "git --git-dir=%s commit-graph write --reachable && echo $c";
	char *out;

	snprintf(base, sizeof(base), "%s/lender.git", f->dir);
	snprintf(path, sizeof(path), "%s/borrower.git", f->dir);
	free(run_sh("git clone -q --bare %s %s && git clone -q --bare --shared %s %s",
		    f->path[SKEW], base, base, path));
	for (i = 0; i < 2; i++) {
		const char *where = i ? path : base;

		out = run_sh(on_top, where, (int)i, where, where);
		assert_int_equal(pg_oid_fromhex(&tips[i], out, PG_OID_HEXSZ), 0);
		free(out);
		hex(top[i], &tips[i]);
	}
	free(run_sh("git --git-dir=%s update-ref refs/heads/lent %s", path, top[0]));
	nwant = git_ids(&want, path, top[0], top[1], "--", NULL);
	assert_int_equal(pg_repo_open(&r, path), 0);
	assert_int_equal(pg_repo_walk_all(&got, &ngot, r, tips, 2), 0);
	assert_false(graph_mapped());
	same_ids(got, ngot, want, nwant);
	pg_repo_free(r);
}

/* What a reading of a walk gave, in order, and where git says each commit lies. */
typedef struct reading {
	pg_repo *r;
	pg_oid *ids;
	size_t n, alloc;
	char *where;      /* git show-index of each pack: "PACK OFFSET ID" lines */
	bool wrong_bytes; /* a commit's bytes were not pg_repo_read_commit_raw's */
} reading;

static int saw_commit(void *ctx, size_t i, const pg_oid *id, const char *data, size_t len)
{
	reading *d = ctx;
	uint64_t h = pg_hash_bytes(data, len);
	pg_buf raw = PG_BUF_INIT;

	(void)i;
	if (d->n == d->alloc) {
		d->alloc = d->alloc ? 2 * d->alloc : 64;
		d->ids = reallocarray(d->ids, d->alloc, sizeof(*d->ids));
		assert_non_null(d->ids);
	}
	d->ids[d->n++] = *id;
	/* data may be the repository's own buffer, which this read reuses: hashed first */
	assert_int_equal(pg_repo_read_commit_raw(&raw, d->r, id), 0);
	d->wrong_bytes |= raw.len != len || pg_hash_bytes(raw.ptr, raw.len) != h;
	pg_buf_release(&raw);
	return 0;
}

/* Where git says id lies: its pack's number in d->where's order and its offset; -1: loose. */
static int pack_of(const reading *d, const pg_oid *id, unsigned long long *off)
{
	char h[PG_OID_HEXSZ + 1];
	const char *at;
	int pack;

	hex(h, id);
	if (!(at = strstr(d->where, h)))
		return -1;
	while (at > d->where && at[-1] != '\n')
		at--;
	assert_int_equal(sscanf(at, "%d %llu", &pack, off), 2);
	return pack;
}

/*
 * A history in two packs and loose commits, with no commit-graph, one,
 * and a chain: read in shares of any size (1 commit to all of them),
 * every commit the walk reached comes once, with its bytes, and in the
 * packs' order whatever the shares: each pack's commits together, by
 * offset, the loose ones after them all.
 */
static void test_reach_read_in_shares_is_along_the_packs(void **state)
{
	fixture *f = *state;
	static const size_t shares[] = { 1, 2, 3, 7, 50, 1000 };
	char path[300], top[PG_OID_HEXSZ + 1];
	size_t g, k, i, count, nshares;
	char *out;

	snprintf(path, sizeof(path), "%s/packs.git", f->dir);
	/* the history in one pack; 12 commits more in a second; 9 left loose */
	free(run_sh("git clone -q --bare --no-local %s %s && cd %s && "
		    "for i in $(seq 21); do c=$(git commit-tree -p main -m more$i main^{tree}) && "
		    "git update-ref refs/heads/main $c && "
		    "if [ $i -eq 12 ]; then git repack -q; fi; done",
		    f->path[SKEW], path, path));
	out = run_sh("cd %s && git rev-parse main", path);
	memcpy(top, out, PG_OID_HEXSZ);
	top[PG_OID_HEXSZ] = '\0';
	free(out);
	for (g = 0; g < 3; g++) {
		pg_oid tip, *want = NULL;
		size_t nwant;

		/* no graph, one file, a chain of two layers (each its ids in order, not both) */
		if (g == 1)
			free(run_sh("git --git-dir=%s commit-graph write --reachable", path));
		if (g == 2) {
			free(run_sh("cd %s && rm -f objects/info/commit-graph && "
				    "git rev-parse main~15 | git commit-graph write --split "
				    "--stdin-commits && "
				    "git commit-graph write --reachable --split=no-merge && "
				    "test $(wc -l < objects/info/commit-graphs/commit-graph-chain) = 2",
				    path));
		}
		nwant = git_ids(&want, path, top, "--", NULL, NULL);
		assert_true(nwant > 21);
		for (k = 0; k < sizeof(shares) / sizeof(shares[0]); k++) {
			reading d = { 0 };
			pg_repo_reach *w = NULL;
			unsigned long long off, last = 0;
			int pack, was = -2;
			bool *done_pack = calloc(8, sizeof(bool));

			d.where = run_sh("cd %s/objects/pack && n=0 && for x in *.idx; do "
					 "git show-index < $x | sed \"s/^/$n /\"; n=$((n+1)); done",
					 path);
			assert_int_equal(pg_repo_open(&d.r, path), 0);
			assert_int_equal(pg_oid_fromhex(&tip, top, PG_OID_HEXSZ), 0);
			assert_int_equal(pg_repo_reach_all(&w, &count, d.r, &tip, 1), 0);
			assert_int_equal(count, nwant);
			assert_int_equal(pg_repo_reach_read(w, shares[k], &nshares, saw_commit, &d), 0);
			/* a share is a stretch of a pack or 256 loose commits, past its size alone */
			assert_true(nshares >= 1 && nshares <= count);
			if (shares[k] >= count)
				assert_int_equal(nshares, 1);
			else
				assert_true(nshares > 1 && nshares >= (count - 9) / shares[k]);
			assert_false(d.wrong_bytes);
			for (i = 0; i < d.n; i++) {
				pack = pack_of(&d, &d.ids[i], &off);
				if (pack != was) {
					/* a pack's commits come together, and the loose ones last */
					assert_true(was != -1);
					assert_true(pack == -1 || (pack < 8 && !done_pack[pack]));
					if (was >= 0)
						done_pack[was] = true;
					was = pack;
					last = 0;
				}
				if (pack >= 0)
					assert_true(off > last);
				last = pack >= 0 ? off : last;
			}
			assert_int_equal(was, -1); /* loose commits were read */
			{
				pg_oid *copy = malloc(nwant * sizeof(*copy));

				assert_non_null(copy);
				memcpy(copy, want, nwant * sizeof(*copy));
				same_ids(d.ids, d.n, copy, nwant);
			}
			pg_repo_reach_free(w);
			pg_repo_free(d.r);
			free(d.where);
			free(done_pack);
		}
		free(want);
	}
}

typedef struct placed {
	pg_oid id;
	unsigned long long off;
} placed;

static int placed_order(const void *a, const void *b)
{
	return pg_oid_cmp(&((const placed *)a)->id, &((const placed *)b)->id);
}

/* What a reading of a walk gave, each commit's offset in the one pack, in order. */
typedef struct in_order {
	placed *at;        /* git show-index's, by id */
	size_t nat;
	size_t n, descents;
	unsigned long long last;
} in_order;

static int saw_offset(void *ctx, size_t i, const pg_oid *id, const char *data, size_t len)
{
	in_order *d = ctx;
	placed key, *p;

	(void)i;
	(void)data;
	(void)len;
	key.id = *id;
	p = bsearch(&key, d->at, d->nat, sizeof(*p), placed_order);
	assert_non_null(p);
	d->descents += d->n && p->off < d->last;
	d->last = p->off;
	d->n++;
	return 0;
}

/*
 * 10,000 commits in one pack, their commit-graph a chain of two layers,
 * each listed in 4,096-id stretches (one holds the end of a layer and
 * the start of the next): read in shares of any size, every commit once,
 * along the pack, its offsets ascending throughout.  (A walk of the pack
 * index that went on past a layer's end found none of the next layer's
 * commits, and read them after all the others.)
 */
static void test_reach_read_a_chain_along_the_pack(void **state)
{
	fixture *f = *state;
	static const size_t shares[] = { 100, 3000, 100000 };
	char path[300], *text, *line;
	pg_repo *r = NULL;
	pg_oid tip;
	size_t k, count, nshares, alloc = 0;
	in_order d = { 0 };

	snprintf(path, sizeof(path), "%s/chain.git", f->dir);
	free(run_sh("git init -q --bare %s && cd %s && awk 'BEGIN { for (i = 1; i <= 10000; i++) {"
		    " m = \"c\" i; printf \"commit refs/heads/main\\nmark :%%d\\n\", i;"
		    " printf \"committer C <c@example.org> %%d +0000\\n\", 1700000000 + i;"
		    " printf \"data %%d\\n%%s\\n\", length(m), m;"
		    " if (i > 1) printf \"from :%%d\\n\", i - 1; print \"\" } }' |"
		    " git fast-import --quiet && "
		    "git rev-parse main~5000 | git commit-graph write --split --stdin-commits && "
		    "git commit-graph write --reachable --split=no-merge && "
		    "test $(wc -l < objects/info/commit-graphs/commit-graph-chain) = 2 && "
		    "test $(ls objects/pack/*.idx | wc -l) = 1",
		    path, path));
	text = run_sh("cd %s/objects/pack && git show-index < $(ls *.idx)", path);
	for (line = text; *line; line = strchr(line, '\n') + 1) {
		char h[PG_OID_HEXSZ + 1];
		unsigned long long off;

		assert_int_equal(sscanf(line, "%llu %40s", &off, h), 2);
		if (d.nat == alloc) {
			alloc = alloc ? 2 * alloc : 1024;
			d.at = reallocarray(d.at, alloc, sizeof(*d.at));
			assert_non_null(d.at);
		}
		assert_int_equal(pg_oid_fromhex(&d.at[d.nat].id, h, PG_OID_HEXSZ), 0);
		d.at[d.nat++].off = off;
	}
	free(text);
	qsort(d.at, d.nat, sizeof(*d.at), placed_order);
	assert_int_equal(pg_repo_open(&r, path), 0);
	assert_int_equal(pg_repo_ref_target(&tip, r, "refs/heads/main"), 0);
	for (k = 0; k < sizeof(shares) / sizeof(shares[0]); k++) {
		pg_repo_reach *w = NULL;

		d.n = d.descents = 0;
		assert_int_equal(pg_repo_reach_all(&w, &count, r, &tip, 1), 0);
		assert_int_equal(count, 10000);
		assert_int_equal(pg_repo_reach_read(w, shares[k], &nshares, saw_offset, &d), 0);
		assert_int_equal(d.n, 10000);
		assert_int_equal(d.descents, 0);
		assert_true(nshares >= (10000 + shares[k] - 1) / shares[k]);
		pg_repo_reach_free(w);
	}
	pg_repo_free(r);
	free(d.at);
}

/*
 * A walk of all of one branch of a graph that holds another as big, their
 * commits interleaved in the graph's order: the ids are listed as git
 * lists them, and the graph is not left mapped (60,000 ids are 293 blocks
 * of its table; listing them through its cache, counted, mapped it again
 * after the walk had let it go, and nothing let it go after).
 */
static void test_walk_all_of_one_branch_leaves_the_graph_unmapped(void **state)
{
	fixture *f = *state;
	char path[300];
	pg_repo *r = NULL;
	pg_oid tip, *got = NULL, *want = NULL;
	size_t ngot = 0, nwant;
	char *out;

	snprintf(path, sizeof(path), "%s/two-branches.git", f->dir);
	free(run_sh("git init -q --bare %s && cd %s && python3 -c '\n"
		    "import sys\n"
		    "w = sys.stdout.write\n"
		    "for b, base in ((\"one\", 1), (\"two\", 50001)):\n"
		    "    for i in range(30000):\n"
		    "        w(\"commit refs/heads/%%s\\nmark :%%d\\n\" %% (b, base + i))\n"
		    "        w(\"committer c <c@example.org> %%d +0000\\ndata 4\\n%%s\\n\" %% (1000000 + i, b[:3]))\n"
		    "        if i:\n"
		    "            w(\"from :%%d\\n\" %% (base + i - 1))\n"
		    "' | git fast-import --quiet && git commit-graph write --reachable",
		    path, path));
	out = run_sh("git --git-dir=%s rev-parse refs/heads/one", path);
	assert_int_equal(pg_oid_fromhex(&tip, out, PG_OID_HEXSZ), 0);
	free(out);
	nwant = git_ids(&want, path, "refs/heads/one", "--", NULL, NULL);
	assert_int_equal(nwant, 30000);
	assert_int_equal(pg_repo_open(&r, path), 0);
	assert_int_equal(pg_repo_walk_all(&got, &ngot, r, &tip, 1), 0);
	assert_false(graph_mapped());
	same_ids(got, ngot, want, nwant);
	pg_repo_free(r);
}

/* A shallow clone's walk of all stops at the first commit it lacks, and says why. */
static void test_walk_all_shallow_is_named(void **state)
{
	fixture *f = *state;
	char path[300];
	pg_repo *r = NULL;
	pg_oid tip, *got = NULL;
	size_t ngot = 0;
	char *out;

	snprintf(path, sizeof(path), "%s/shallow.git", f->dir);
	out = run_sh("git clone -q --bare --depth 3 --branch main file://%s %s && git --git-dir=%s rev-parse main",
		     f->path[MILD], path, path);
	assert_int_equal(pg_oid_fromhex(&tip, out, PG_OID_HEXSZ), 0);
	free(out);
	assert_int_equal(pg_repo_open(&r, path), 0);
	assert_int_equal(pg_repo_walk_all(&got, &ngot, r, &tip, 1), PG_ENOTFOUND);
	assert_false(graph_mapped());
	assert_non_null(strstr(pg_error_last(), "shallow"));
	assert_null(got);
	pg_repo_free(r);
}

typedef struct visits {
	pg_oid ids[COMMITS];
	int64_t times[COMMITS];
	size_t n;
} visits;

static int record(void *ctx, const pg_oid *id, int64_t time, const pg_oid *first_parent)
{
	visits *v = ctx;

	(void)first_parent;
	assert_true(v->n < COMMITS);
	v->ids[v->n] = *id;
	v->times[v->n++] = time;
	return 0;
}

/* The date-ordered walk visits the same commits in the same order from a graph. */
static void test_walk_since_same_with_and_without_graph(void **state)
{
	fixture *f = *state;
	enum variant pairs[][2] = { { MILD, MILD_GRAPH }, { SKEW, SKEW_GRAPH },
				    { SKEW, SKEW_CHAIN } };
	size_t k, i;

	for (k = 0; k < PG_ARRAY_SIZE(pairs); k++) {
		visits *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
		pg_repo *ra = NULL, *rb = NULL;
		pg_oid tip;
		int64_t since;

		assert_non_null(a);
		assert_non_null(b);
		assert_int_equal(pg_repo_open(&ra, f->path[pairs[k][0]]), 0);
		assert_int_equal(pg_repo_open(&rb, f->path[pairs[k][1]]), 0);
		assert_int_equal(pg_repo_ref_target(&tip, ra, "refs/heads/main"), 0);
		since = 1700000000 + 600 * 250;
		assert_int_equal(pg_repo_walk_since(ra, &tip, since, SIZE_MAX, record, a), 0);
		assert_int_equal(pg_repo_walk_since(rb, &tip, since, SIZE_MAX, record, b), 0);
		assert_true(a->n > 50);
		assert_int_equal(a->n, b->n);
		for (i = 0; i < a->n; i++) {
			assert_memory_equal(a->ids[i].id, b->ids[i].id, PG_OID_RAWSZ);
			assert_true(a->times[i] == b->times[i]);
		}
		/* and the cap holds */
		b->n = 0;
		assert_int_equal(pg_repo_walk_since(rb, &tip, since, 10, record, b), 0);
		assert_int_equal(b->n, 10);
		pg_repo_free(ra);
		pg_repo_free(rb);
		free(a);
		free(b);
	}
}

/* Ancestry agrees with git's parents, with corrected dates, levels and a chain. */
static void test_is_ancestor(void **state)
{
	fixture *f = *state;
	enum variant vs[] = { MILD, SKEW_GRAPH, SKEW_LEVELS, SKEW_CHAIN };
	size_t k, i, j, yes = 0, no = 0;

	for (k = 0; k < PG_ARRAY_SIZE(vs); k++) {
		pg_repo *r = NULL;
		size_t nall;
		const pg_oid *all = all_of(f, vs[k], &nall);

		assert_int_equal(pg_repo_open(&r, f->path[vs[k]]), 0);
		for (i = 5; i < nall; i += 53) {
			bool *reach = calloc(nall, sizeof(bool));

			assert_non_null(reach);
			reachable(reach, f, vs[k] >= SKEW, &all[i]);
			for (j = 0; j < nall; j += 7) {
				int want = reach[j];

				assert_int_equal(pg_repo_is_ancestor(r, &all[j], &all[i]), want);
				yes += want;
				no += !want;
			}
			free(reach);
		}
		pg_repo_free(r);
	}
	assert_true(yes > 20 && no > 20);
}

static bool listed(const pg_oid *ids, size_t n, const pg_oid *id)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!pg_oid_cmp(&ids[i], id))
			return true;
	return false;
}

/*
 * The first-parent line agrees with git rev-list --first-parent, asked
 * about every commit at once and about one at a time (where the walk stops
 * early), with and without graphs, generations and skew.
 */
static void test_first_parent_line(void **state)
{
	fixture *f = *state;
	enum variant vs[] = { MILD, MILD_GRAPH, SKEW, SKEW_GRAPH, SKEW_LEVELS, SKEW_CHAIN };
	const char *tips[] = { "main", "t0", "t3" };
	size_t k, t, j, on_line = 0, off_line = 0;

	for (k = 0; k < PG_ARRAY_SIZE(vs); k++) {
		pg_repo *r = NULL;
		size_t nall;
		const pg_oid *all = all_of(f, vs[k], &nall);
		bool *on = calloc(nall, sizeof(bool));

		assert_non_null(on);
		assert_int_equal(pg_repo_open(&r, f->path[vs[k]]), 0);
		for (t = 0; t < PG_ARRAY_SIZE(tips); t++) {
			pg_oid *line = NULL, *tip = NULL;
			size_t nline = git_ids(&line, f->path[vs[k]], "--first-parent", tips[t], NULL,
					       NULL);

			assert_int_equal(git_ids(&tip, f->path[vs[k]], "-1", tips[t], NULL, NULL), 1);
			assert_int_equal(pg_repo_first_parent_line(on, r, tip, all, nall), 0);
			for (j = 0; j < nall; j++) {
				bool want = listed(line, nline, &all[j]);

				assert_int_equal(on[j], want);
				on_line += want;
				off_line += !want;
			}
			for (j = 0; j < nall; j += 11) {
				bool one;

				assert_int_equal(pg_repo_first_parent_line(&one, r, tip, &all[j], 1), 0);
				assert_int_equal(one, listed(line, nline, &all[j]));
			}
			free(line);
			free(tip);
		}
		free(on);
		pg_repo_free(r);
	}
	assert_true(on_line > 100 && off_line > 100);
}

/*
 * A repository that holds only a commit-graph, no objects: the walks must
 * read the graph, since there is nothing else.
 */
static void test_walks_read_the_graph_alone(void **state)
{
	fixture *f = *state;
	char empty[512], from[512], to[1024];
	const char *init[] = { "git", "init", "-q", "--bare", empty, NULL };
	const char *cp[] = { "cp", from, to, NULL };
	pg_repo *r = NULL, *full = NULL;
	pg_oid tip, hide, *got = NULL, *want = NULL;
	size_t ngot = 0, nwant = 0;

	snprintf(empty, sizeof(empty), "%s/graph-only.git", f->dir);
	snprintf(from, sizeof(from), "%s/objects/info/commit-graph", f->path[SKEW_GRAPH]);
	snprintf(to, sizeof(to), "%s/objects/info/commit-graph", empty);
	free(run_must(init));
	free(run_must(cp));
	assert_int_equal(pg_repo_open(&full, f->path[SKEW_GRAPH]), 0);
	assert_int_equal(pg_repo_ref_target(&tip, full, "refs/heads/main"), 0);
	assert_int_equal(pg_repo_ref_target(&hide, full, "refs/heads/t1"), 0);
	assert_int_equal(pg_repo_walk_range(&want, &nwant, full, &tip, &hide, 1), 0);
	assert_int_equal(pg_repo_open(&r, empty), 0);
	assert_int_equal(pg_repo_walk_range(&got, &ngot, r, &tip, &hide, 1), 0);
	assert_true(nwant > 20);
	assert_int_equal(ngot, nwant);
	assert_memory_equal(got, want, ngot * sizeof(*got));
	assert_int_equal(pg_repo_is_ancestor(r, &f->all[1][COMMITS - 1], &tip), 1);
	pg_repo_free(r);
	pg_repo_free(full);
	free(got);
	free(want);
}

/* An id the repository does not have is named; nothing crashes. */
static void test_missing_commit_is_named(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_oid *got = NULL, missing;
	size_t n = 0;

	memset(&missing, 0x42, sizeof(missing));
	assert_int_equal(pg_repo_open(&r, f->path[SKEW_GRAPH]), 0);
	assert_int_equal(pg_repo_walk_range(&got, &n, r, &missing, &f->all[1][0], 1),
			 PG_ENOTFOUND);
	assert_non_null(strstr(pg_error_last(), "4242424242"));
	assert_null(got);
	pg_repo_free(r);
}

/*
 * The merge message's subjects: the non-merge commits of the range, newest
 * first in git's --date-order (as libgit2's revwalk sorted them before).
 */
static void test_subjects_in_git_order(void **state)
{
	fixture *f = *state;
	static const enum variant vs[] = { MILD, MILD_GRAPH, SKEW_GRAPH };
	size_t v, i, j, k, compared = 0;

	for (v = 0; v < PG_ARRAY_SIZE(vs); v++) {
		size_t nall;
		const pg_oid *all = all_of(f, vs[v], &nall);
		pg_repo *r = NULL;

		assert_int_equal(pg_repo_open(&r, f->path[vs[v]]), 0);
		for (i = 5; i < nall; i += 97) {
			for (j = 0; j < nall; j += 131) {
				char th[PG_OID_HEXSZ + 1], hh[PG_OID_HEXSZ + 1];
				char **got = NULL, *want, *line, *save = NULL;
				size_t ngot = 0;

				hex(th, &all[i]);
				hex(hh, &all[j]);
				assert_int_equal(pg_repo_walk_subjects(&got, &ngot, r, &all[i],
								       &all[j]), 0);
				want = run_sh("git --git-dir=%s log --date-order --no-merges "
					    "--format=%%s %s ^%s", f->path[vs[v]], th, hh);
				for (k = 0, line = strtok_r(want, "\n", &save); line;
				     k++, line = strtok_r(NULL, "\n", &save)) {
					assert_true(k < ngot);
					assert_string_equal(got[k], line);
				}
				assert_int_equal(k, ngot);
				compared += ngot > 1;
				free(want);
				pg_str_list_free(got, ngot);
			}
		}
		pg_repo_free(r);
	}
	/* the comparison is not empty */
	assert_true(compared > 3);
}

/* A commit the range needs and the repository lacks is named; nothing is listed. */
static void test_subjects_of_a_missing_commit(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_oid missing;
	char **got = NULL;
	size_t n = 0;

	memset(&missing, 0x42, sizeof(missing));
	assert_int_equal(pg_repo_open(&r, f->path[MILD]), 0);
	assert_int_equal(pg_repo_walk_subjects(&got, &n, r, &missing, &f->all[0][0]),
			 PG_ENOTFOUND);
	assert_non_null(strstr(pg_error_last(), "4242424242"));
	assert_null(got);
	assert_int_equal(n, 0);
	pg_repo_free(r);
}

/* A copy of the skewed repository whose graph ($g) the shell script `change` changes. */
static void copy_with_broken_graph(const fixture *f, const char *name, const char *change,
				   char *out, size_t outlen)
{
	char cmd[2048];
	const char *argv[] = { "sh", "-c", cmd, NULL };

	snprintf(out, outlen, "%s/%s.git", f->dir, name);
	snprintf(cmd, sizeof(cmd), "set -e; rm -rf %s; cp -r %s %s; "
		 "g=%s/objects/info/commit-graph; %s", out, f->path[SKEW_GRAPH], out, out, change);
	free(run_must(argv));
}

static void range_of(pg_oid **out, size_t *n, const char *repo, const char *tip,
		     const char *hide, int expect)
{
	pg_repo *r = NULL;
	pg_oid t, h;

	assert_int_equal(pg_repo_open(&r, repo), 0);
	assert_int_equal(pg_repo_ref_target(&t, r, tip), 0);
	assert_int_equal(pg_repo_ref_target(&h, r, hide), 0);
	assert_int_equal(pg_repo_walk_range(out, n, r, &t, &h, 1), expect);
	pg_repo_free(r);
}

/* A graph that cannot be opened is left out: the objects answer, exactly. */
static void test_unusable_graph_is_ignored(void **state)
{
	fixture *f = *state;
	char path[512];
	pg_oid *got = NULL, *want = NULL;
	size_t ngot = 0, nwant = 0;

	copy_with_broken_graph(f, "truncated", "head -c 3000 $g >$g.cut; mv $g.cut $g",
			       path, sizeof(path));
	range_of(&want, &nwant, f->path[SKEW_GRAPH], "refs/heads/main", "refs/heads/t3", 0);
	range_of(&got, &ngot, path, "refs/heads/main", "refs/heads/t3", 0);
	assert_true(nwant > 20);
	assert_int_equal(ngot, nwant);
	assert_memory_equal(got, want, ngot * sizeof(*got));
	free(got);
	free(want);
}

/*
 * An entry that names a parent outside the graph is met during the walk:
 * one clear error naming the file, nothing read out of bounds.
 */
static void test_corrupt_graph_entry_is_a_clear_error(void **state)
{
	fixture *f = *state;
	char path[512], graph[600];
	pg_buf b = PG_BUF_INIT;
	unsigned char *g;
	pg_oid *got = NULL;
	size_t n = 0, cdat = 0, k;
	unsigned i;

	copy_with_broken_graph(f, "bad-parents", "true", path, sizeof(path));
	snprintf(graph, sizeof(graph), "%s/objects/info/commit-graph", path);
	assert_int_equal(pg_buf_read_file(&b, graph), 0);
	g = (unsigned char *)b.ptr;
	/* every CDAT entry's first parent becomes position 0x6fffffff */
	for (i = 0; i < g[6]; i++) {
		const unsigned char *e = g + 8 + 12 * i;

		if (!memcmp(e, "CDAT", 4))
			cdat = (size_t)e[8] << 24 | (size_t)e[9] << 16 | (size_t)e[10] << 8 | e[11];
	}
	assert_true(cdat > 0);
	for (k = 0; k < COMMITS; k++)
		memcpy(g + cdat + 36 * k + 20, "\x6f\xff\xff\xff", 4);
	assert_int_equal(pg_write_file_atomic(graph, b.ptr, b.len), 0);
	/* a graph that lies with a checksum that holds: the entry itself must be refused */
	{
		int fd;

		assert_int_equal(pg_open_regular(&fd, NULL, graph, PG_OPEN_READ, NULL), 0);
		assert_int_equal(pg_sha1_fd((unsigned char *)b.ptr + b.len - 20, fd, b.len - 20,
					    graph), 0);
		close(fd);
	}
	assert_int_equal(pg_write_file_atomic(graph, b.ptr, b.len), 0);
	pg_buf_release(&b);
	range_of(&got, &n, path, "refs/heads/main", "refs/heads/t3", PG_EINVALID);
	assert_null(got);
	assert_non_null(strstr(pg_error_last(), "commit-graph"));
	assert_non_null(strstr(pg_error_last(), "is corrupt"));
	/* a walk of all, which reads the parents along the file, refuses it alike */
	{
		pg_repo *r = NULL;
		pg_repo_reach *w = NULL;
		pg_oid tip;

		assert_int_equal(pg_repo_open(&r, path), 0);
		assert_int_equal(pg_repo_ref_target(&tip, r, "refs/heads/main"), 0);
		assert_int_equal(pg_repo_reach_all(&w, &n, r, &tip, 1), PG_EINVALID);
		assert_null(w);
		assert_non_null(strstr(pg_error_last(), "is corrupt"));
		pg_repo_free(r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_chain_has_two_layers),
		cmocka_unit_test(test_ranges_mild_skew_no_graph),
		cmocka_unit_test(test_ranges_mild_skew_graph),
		cmocka_unit_test(test_ranges_skew_no_graph),
		cmocka_unit_test(test_ranges_skew_graph_is_exact),
		cmocka_unit_test(test_ranges_skew_levels_is_exact),
		cmocka_unit_test(test_ranges_skew_chain_is_exact),
		cmocka_unit_test(test_walk_all_is_git_s),
		cmocka_unit_test(test_walk_all_alternates_two_graphs),
		cmocka_unit_test(test_walk_all_of_one_branch_leaves_the_graph_unmapped),
		cmocka_unit_test(test_walk_all_shallow_is_named),
		cmocka_unit_test(test_reach_read_in_shares_is_along_the_packs),
		cmocka_unit_test(test_reach_read_a_chain_along_the_pack),
		cmocka_unit_test(test_walk_since_same_with_and_without_graph),
		cmocka_unit_test(test_is_ancestor),
		cmocka_unit_test(test_first_parent_line),
		cmocka_unit_test(test_subjects_in_git_order),
		cmocka_unit_test(test_subjects_of_a_missing_commit),
		cmocka_unit_test(test_walks_read_the_graph_alone),
		cmocka_unit_test(test_missing_commit_is_named),
		cmocka_unit_test(test_unusable_graph_is_ignored),
		cmocka_unit_test(test_corrupt_graph_entry_is_a_clear_error),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
