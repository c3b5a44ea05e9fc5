/* identity_index_bench.c - the identity index at scale: make, extend, reopen, probe a pull's commits. */
#include "common/error.h"
#include "repo/repo.h"
#include "verifier/identity_index.h"
#include "verifier/match.h"

#include <time.h>

/*
 *   identity-index-bench UPSTREAM.git PULLS.git TAG HOME BACK [WORK_MB]
 *
 * Makes the index of UPSTREAM's master as it was BACK first parents ago
 * in HOME (empty), extends it to master, opens it again at master, then
 * probes once for each commit of TAG ^master in PULLS (a fork borrowing
 * UPSTREAM's objects) and counts the upstream commits found with the same
 * identity: what upstream.c will do per pull commit instead of walking a
 * date window.  WORK_MB is the working memory of making and extending it
 * (opts.work_mem; 16 when not given).  Prints one line of figures.  A
 * bench tool: it prints.
 */

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1000 + (double)t.tv_nsec / 1e6;
}

static int die(const char *what)
{
	fprintf(stderr, "identity-index-bench: %s: %s\n", what, pg_error_last()); /* ok: a tool */
	return 2;
}

int main(int argc, char **argv)
{
	pg_repo *up = NULL, *pulls = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	pg_oid tip, base, tag, *ids = NULL;
	size_t n = 0, i, back, found = 0, candidates = 0;
	double t0, t_build, t_extend, t_open, t_probe, t_full;
	pg_identity_index_opts full = { 0 }, work = { 0 };
	size_t built, extended, runs, shares;

	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: %s UPSTREAM.git PULLS.git TAG HOME BACK [WORK_MB]\n",
			argv[0]);
		return 2;
	}
	back = strtoul(argv[5], NULL, 10);
	if (argc == 7)
		work.work_mem = (uint64_t)strtoul(argv[6], NULL, 10) << 20;
	if (pg_repo_open(&up, argv[1]) < 0 || pg_repo_ref_target(&tip, up, "refs/heads/master") < 0)
		return die(argv[1]);
	base = tip;
	for (i = 0; i < back; i++) {
		pg_commit *c = NULL;

		if (pg_repo_read_commit(&c, up, &base) < 0 || !c->nparents)
			return die("first parents");
		base = c->parents[0];
		pg_commit_free(c);
	}

	t0 = now_ms();
	if (pg_identity_index_open_opts(&x, up, argv[4], "bench:master", &base, &work, &info) < 0)
		return die("make");
	t_build = now_ms() - t0;
	built = info.added;
	runs = info.runs;
	shares = info.shares;
	pg_identity_index_free(x);

	t0 = now_ms();
	if (pg_identity_index_open_opts(&x, up, argv[4], "bench:master", &tip, &work, &info) < 0)
		return die("extend");
	t_extend = now_ms() - t0;
	extended = info.added;
	pg_identity_index_free(x);

	if (pg_repo_open(&pulls, argv[2]) < 0 || pg_repo_ref_target(&tag, pulls, argv[3]) < 0 ||
	    pg_repo_peel_commit(&tag, pulls, &tag) < 0 ||
	    pg_repo_walk_range(&ids, &n, pulls, &tag, &tip, 1) < 0)
		return die(argv[2]);

	t0 = now_ms();
	if (pg_identity_index_open(&x, up, argv[4], "bench:master", &tip, &info) < 0)
		return die("open");
	t_open = now_ms() - t0;
	/* the baseline of the same run: every entry checked when opened (--verify-index) */
	full.full_check = true;
	{
		pg_identity_index *y = NULL;

		t0 = now_ms();
		if (pg_identity_index_open_opts(&y, up, argv[4], "bench:master", &tip, &full,
						&info) < 0)
			return die("open with a full check");
		t_full = now_ms() - t0;
		pg_identity_index_free(y);
	}
	t0 = now_ms();
	for (i = 0; i < n; i++) {
		pg_commit *c = NULL;
		pg_identity_hit hits[16];
		size_t k, nhits;
		bool copy = false;

		if (pg_repo_read_commit(&c, pulls, &ids[i]) < 0)
			return die("pull commit");
		nhits = pg_identity_index_probe(hits, 16, x, pg_identity_hash(c));
		for (k = 0; k < nhits && k < 16; k++) {
			pg_commit *u = NULL;

			candidates++;
			if (!pg_oid_cmp(&hits[k].id, &c->id))
				continue;
			if (pg_repo_read_commit(&u, up, &hits[k].id) < 0)
				return die("candidate");
			copy = copy || pg_identity_equal(u, c);
			pg_commit_free(u);
		}
		found += copy;
		pg_commit_free(c);
	}
	t_probe = now_ms() - t0;
	printf("make %.0f ms (%zu commits, %zu runs on disk, %zu shares), extend %.1f ms (+%zu), open %.2f ms "
	       "(every entry checked: %.2f ms, %.1f x), "
	       "%zu probes %.2f ms (%zu candidates read), copies found %zu, %zu indexed\n",
	       t_build, built, runs, shares, t_extend, extended, t_open, t_full,
	       t_open > 0 ? t_full / t_open : 0.0, n, t_probe, candidates, found,
	       pg_identity_index_count(x));
	pg_identity_index_free(x);
	free(ids);
	pg_repo_free(pulls);
	pg_repo_free(up);
	return 0;
}
