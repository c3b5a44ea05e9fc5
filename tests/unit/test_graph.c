/* test_graph.c - the commit-graph reader against git's own files, and against broken ones. */
#include "tests/unit/unit.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "repo/graph.h"
#include "tests/unit/run.h"

#include <unistd.h>

#define COMMITS 400

typedef struct fixture {
	char dir[64];
	char repo[128], levels[128], chain[128], scratch[128];
	pg_buf file;        /* the repository's commit-graph, as git wrote it */
	char *log;          /* git log --all --format='%H %ct %P' */
} fixture;

static void sh(const char *script)
{
	free(run_sh("%s", script));
}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	char cmd[4096], path[256];

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/pg-test-graph-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->repo, sizeof(f->repo), "%s/h.git", f->dir);
	snprintf(f->levels, sizeof(f->levels), "%s/levels.git", f->dir);
	snprintf(f->chain, sizeof(f->chain), "%s/chain.git", f->dir);
	/* thousands of broken files are written: in memory where there is a tmpfs */
	snprintf(f->scratch, sizeof(f->scratch), "%s/pg-test-graph-%ld.graph",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : f->dir, (long)getpid());
	snprintf(cmd, sizeof(cmd),
		 "set -e; tests/unit/make-history.sh %s 400 7 300000; "
		 "git --git-dir=%s commit-graph write --reachable; "
		 "cp -r %s %s; rm %s/objects/info/commit-graph; "
		 "git -c commitGraph.generationVersion=1 --git-dir=%s commit-graph write "
		 "--reachable; "
		 "cp -r %s %s; rm %s/objects/info/commit-graph; "
		 "git --git-dir=%s rev-parse t2 | "
		 "git --git-dir=%s commit-graph write --split --stdin-commits; "
		 "git --git-dir=%s commit-graph write --reachable --split=no-merge",
		 f->repo, f->repo, f->repo, f->levels, f->levels, f->levels, f->repo, f->chain,
		 f->chain, f->chain, f->chain, f->chain);
	sh(cmd);
	snprintf(path, sizeof(path), "%s/objects/info/commit-graph", f->repo);
	assert_int_equal(pg_buf_read_file(&f->file, path), 0);
	{
		const char *argv[] = { "git", "--git-dir", f->repo, "log", "--all",
				       "--format=%H %ct %P", NULL };

		f->log = run_must(argv);
	}
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	pg_remove_tree(f->dir);
	unlink(f->scratch);
	pg_buf_release(&f->file);
	free(f->log);
	free(f);
	return 0;
}

/* Every commit of git log: found, with its date and parents; generations grow. */
static void check_against_log(const fixture *f, const pg_graph *g)
{
	const char *line = f->log;
	size_t n = 0, octopus = 0;

	while (*line) {
		const char *nl = strchr(line, '\n'), *p;
		pg_oid id, parent;
		pg_graph_commit c, pc;
		uint32_t pos, i, at;
		long long t;

		assert_non_null(nl);
		assert_int_equal(pg_oid_fromhex(&id, line, PG_OID_HEXSZ), 0);
		assert_true(pg_graph_find(g, &id, &pos));
		assert_int_equal(pg_graph_read(&c, g, pos), 0);
		t = strtoll(line + PG_OID_HEXSZ + 1, (char **)&p, 10);
		assert_true(c.time == t);
		for (i = 0; *p == ' ' && p[1] != '\n'; i++, p += PG_OID_HEXSZ + 1) {
			assert_true(i < c.nparents);
			assert_int_equal(pg_graph_parent(&at, g, &c, i), 0);
			assert_int_equal(pg_graph_oid(&parent, g, at), 0);
			{
				pg_oid want;

				assert_int_equal(pg_oid_fromhex(&want, p + 1, PG_OID_HEXSZ), 0);
				assert_memory_equal(parent.id, want.id, PG_OID_RAWSZ);
			}
			assert_int_equal(pg_graph_read(&pc, g, at), 0);
			assert_true(pg_graph_generation(&c, pg_graph_gen_kind(g)) >
				    pg_graph_generation(&pc, pg_graph_gen_kind(g)));
			assert_true(c.level > pc.level);
		}
		assert_int_equal(i, c.nparents);
		octopus += c.nparents > 2;
		n++;
		line = nl + 1;
	}
	assert_int_equal(n, COMMITS);
	assert_int_equal(pg_graph_count(g), COMMITS);
	assert_true(octopus > 0); /* the EDGE chunk was read */
}

/*
 * Every commit's parents from the words of all of them, read along the
 * file in one call (across a chain's layers): pg_graph_read's, in order.
 */
static void check_parent_words(const pg_graph *g)
{
	uint32_t n = pg_graph_count(g), pos, i, a, b, *w = malloc(2 * (size_t)n * sizeof(*w));
	pg_graph_commit c, pc;

	assert_non_null(w);
	assert_int_equal(pg_graph_parent_words(w, g, 0, n), 0);
	for (pos = 0; pos < n; pos++) {
		assert_int_equal(pg_graph_read(&c, g, pos), 0);
		assert_int_equal(pg_graph_read_parents(&pc, g, pos, &w[2 * (size_t)pos]), 0);
		assert_int_equal(pc.nparents, c.nparents);
		assert_int_equal(pc.pos, pos);
		for (i = 0; i < c.nparents; i++) {
			assert_int_equal(pg_graph_parent(&a, g, &c, i), 0);
			assert_int_equal(pg_graph_parent(&b, g, &pc, i), 0);
			assert_int_equal(a, b);
		}
	}
	/* none past the end, as pg_graph_read */
	assert_int_equal(pg_graph_parent_words(w, g, n - 1, 2), PG_EINVALID);
	assert_int_equal(pg_graph_read_parents(&pc, g, n, w), PG_EINVALID);
	free(w);
}

static void test_reads_git_graph(void **state)
{
	fixture *f = *state;
	pg_graph *g = NULL;
	pg_oid none;
	uint32_t pos;

	assert_int_equal(pg_graph_open(&g, "/nonexistent"), 0);
	assert_null(g);
	{
		char objdir[256];

		snprintf(objdir, sizeof(objdir), "%s/objects", f->repo);
		assert_int_equal(pg_graph_open(&g, objdir), 0);
	}
	assert_non_null(g);
	assert_int_equal(pg_graph_gen_kind(g), PG_GRAPH_GEN_DATE);
	check_against_log(f, g);
	check_parent_words(g);
	memset(&none, 0xff, sizeof(none));
	assert_false(pg_graph_find(g, &none, &pos));
	memset(&none, 0, sizeof(none));
	assert_false(pg_graph_find(g, &none, &pos));
	assert_int_equal(pg_graph_read(&(pg_graph_commit){ 0 }, g, COMMITS), PG_EINVALID);
	pg_graph_free(g);
}

static void test_reads_levels_only(void **state)
{
	fixture *f = *state;
	pg_graph *g = NULL;
	char objdir[256];

	snprintf(objdir, sizeof(objdir), "%s/objects", f->levels);
	assert_int_equal(pg_graph_open(&g, objdir), 0);
	assert_non_null(g);
	assert_int_equal(pg_graph_gen_kind(g), PG_GRAPH_GEN_LEVEL);
	check_against_log(f, g);
	check_parent_words(g);
	pg_graph_free(g);
}

static void test_reads_a_chain(void **state)
{
	fixture *f = *state;
	pg_graph *g = NULL;
	char objdir[256];

	snprintf(objdir, sizeof(objdir), "%s/objects", f->chain);
	assert_int_equal(pg_graph_open(&g, objdir), 0);
	assert_non_null(g);
	assert_int_equal(pg_graph_gen_kind(g), PG_GRAPH_GEN_DATE);
	check_against_log(f, g);
	check_parent_words(g);
	pg_graph_free(g);
}

/* --- broken files ---------------------------------------------------------------- */

static void write_scratch(const fixture *f, const void *data, size_t len)
{
	FILE *out;

	/* a new file each time: truncating one makes ext4 flush it to disk */
	unlink(f->scratch);
	out = fopen(f->scratch, "wb");
	assert_non_null(out);
	assert_int_equal(fwrite(data, 1, len, out), len);
	assert_int_equal(fclose(out), 0);
}

/* Open the scratch file; when it opens, read every commit and look every one up. */
static int open_and_read_all(const fixture *f)
{
	pg_graph *g = NULL;
	uint32_t pos, i, k;
	int err = pg_graph_open_file(&g, f->scratch);

	if (err < 0) {
		assert_null(g);
		assert_non_null(strstr(pg_error_last(), "commit-graph"));
		return err;
	}
	for (pos = 0; pos < pg_graph_count(g); pos++) {
		pg_graph_commit c;
		pg_oid id;
		uint32_t at;

		if (pg_graph_oid(&id, g, pos) == 0)
			(void)pg_graph_find(g, &id, &at);
		if (pg_graph_read(&c, g, pos) < 0)
			continue;
		for (i = 0; i < c.nparents; i++) {
			assert_int_equal(pg_graph_parent(&k, g, &c, i), 0);
			assert_true(k < pg_graph_count(g));
			assert_int_equal(pg_graph_oid(&id, g, k), 0);
		}
	}
	pg_graph_free(g);
	return 0;
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* Where chunk id starts in the file, from its table of contents; 0 when absent. */
static size_t chunk_at(const unsigned char *g, uint32_t id)
{
	unsigned i;

	for (i = 0; i < g[6]; i++)
		if (get32(g + 8 + 12 * i) == id)
			return (size_t)get32(g + 8 + 12 * i + 8);
	return 0;
}

/* Where the chunk after id starts: where id ends. */
static size_t chunk_end(const unsigned char *g, uint32_t id)
{
	unsigned i;

	for (i = 0; i < g[6]; i++)
		if (get32(g + 8 + 12 * i) == id)
			return (size_t)get32(g + 8 + 12 * (i + 1) + 8);
	return 0;
}

#define ID(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static void test_every_truncation_is_refused(void **state)
{
	fixture *f = *state;
	size_t len;

	/* every length through the header, table and fanout, then every 7th */
	for (len = 0; len < f->file.len; len += len < 2048 ? 1 : 7) {
		write_scratch(f, f->file.ptr, len);
		assert_int_equal(open_and_read_all(f), PG_EINVALID);
	}
	write_scratch(f, f->file.ptr, f->file.len);
	assert_int_equal(open_and_read_all(f), 0);
}

/* One fault at a time, each in its own copy; the message says what is wrong. */
static void expect_refused(fixture *f, void (*break_it)(unsigned char *g, size_t len),
			   const char *what)
{
	unsigned char *copy = malloc(f->file.len);

	assert_non_null(copy);
	memcpy(copy, f->file.ptr, f->file.len);
	break_it(copy, f->file.len);
	write_scratch(f, copy, f->file.len);
	assert_int_equal(open_and_read_all(f), PG_EINVALID);
	if (!strstr(pg_error_last(), what))
		fail_msg("expected '%s' in: %s", what, pg_error_last());
	free(copy);
}

static void bad_signature(unsigned char *g, size_t len)
{
	(void)len;
	g[0] = 'X';
}

static void sha256_graph(unsigned char *g, size_t len)
{
	(void)len;
	g[5] = 2;
}

static void chunk_past_end(unsigned char *g, size_t len)
{
	put32(g + 8 + 12 * 1 + 8, (uint32_t)len + 100);
}

static void no_cdat(unsigned char *g, size_t len)
{
	unsigned i;

	(void)len;
	for (i = 0; i < g[6]; i++)
		if (get32(g + 8 + 12 * i) == ID('C', 'D', 'A', 'T'))
			put32(g + 8 + 12 * i, ID('X', 'D', 'A', 'T'));
}

static void twice(unsigned char *g, size_t len)
{
	(void)len;
	memcpy(g + 8 + 12, g + 8, 4);
}

static void unsorted_fanout(unsigned char *g, size_t len)
{
	size_t at = chunk_at(g, ID('O', 'I', 'D', 'F'));

	(void)len;
	put32(g + at + 4 * 10, 0xffff);
}

static void fanout_counts_too_many(unsigned char *g, size_t len)
{
	size_t at = chunk_at(g, ID('O', 'I', 'D', 'F'));

	(void)len;
	put32(g + at + 4 * 255, COMMITS * 4);
}

static void unterminated_toc(unsigned char *g, size_t len)
{
	(void)len;
	put32(g + 8 + 12 * g[6], ID('J', 'U', 'N', 'K'));
}

static void test_broken_headers_and_tables_are_refused(void **state)
{
	fixture *f = *state;

	expect_refused(f, bad_signature, "no CGPH signature");
	expect_refused(f, sha256_graph, "not a SHA-1 graph");
	expect_refused(f, chunk_past_end, "outside the file");
	expect_refused(f, no_cdat, "required chunk");
	expect_refused(f, twice, "appears twice");
	expect_refused(f, unsorted_fanout, "fanout is not sorted");
	expect_refused(f, fanout_counts_too_many, "fewer ids");
	expect_refused(f, unterminated_toc, "not terminated");
}

/* The first commit with at least `parents` parents. */
static uint32_t first_with(const fixture *f, uint32_t parents)
{
	pg_graph *g = NULL;
	pg_graph_commit c;
	uint32_t pos;

	write_scratch(f, f->file.ptr, f->file.len);
	assert_int_equal(pg_graph_open_file(&g, f->scratch), 0);
	for (pos = 0; pos < COMMITS; pos++)
		if (pg_graph_read(&c, g, pos) == 0 && c.nparents >= parents)
			break;
	pg_graph_free(g);
	assert_true(pos < COMMITS);
	return pos;
}

/* A bad entry is refused when it is read, naming the file and the position. */
static void expect_bad_entry(fixture *f, size_t field, uint32_t value, const char *what)
{
	unsigned char *copy = malloc(f->file.len);
	pg_graph *g = NULL;
	pg_graph_commit c;
	uint32_t pos = first_with(f, 1);
	size_t cdat;

	assert_non_null(copy);
	memcpy(copy, f->file.ptr, f->file.len);
	cdat = chunk_at(copy, ID('C', 'D', 'A', 'T'));
	put32(copy + cdat + (size_t)pos * 36 + field, value);
	write_scratch(f, copy, f->file.len);
	assert_int_equal(pg_graph_open_file(&g, f->scratch), 0);
	assert_int_equal(pg_graph_read(&c, g, pos), PG_EINVALID);
	if (!strstr(pg_error_last(), what) || !strstr(pg_error_last(), "is corrupt"))
		fail_msg("expected '%s' in: %s", what, pg_error_last());
	/* read from its words as a walk of all reads it: refused alike */
	{
		uint32_t w[2];

		assert_int_equal(pg_graph_parent_words(w, g, pos, 1), 0);
		assert_int_equal(pg_graph_read_parents(&c, g, pos, w), PG_EINVALID);
		if (!strstr(pg_error_last(), what))
			fail_msg("expected '%s' in: %s", what, pg_error_last());
	}
	pg_graph_free(g);
	free(copy);
}

static void test_broken_entries_are_refused(void **state)
{
	fixture *f = *state;
	unsigned char *copy;
	pg_graph *g = NULL;
	pg_graph_commit c;
	uint32_t octopus = first_with(f, 3);
	size_t edge, end, gda2;

	expect_bad_entry(f, 20, COMMITS + 5, "outside the graph");
	expect_bad_entry(f, 24, COMMITS + 5, "outside the graph");
	expect_bad_entry(f, 24, 0x80000000u | 100000, "edge list");

	/* an octopus whose EDGE list is not terminated runs to the end: refused */
	copy = malloc(f->file.len);
	assert_non_null(copy);
	memcpy(copy, f->file.ptr, f->file.len);
	edge = chunk_at(copy, ID('E', 'D', 'G', 'E'));
	end = chunk_end(copy, ID('E', 'D', 'G', 'E'));
	assert_true(edge != 0 && end > edge);
	for (; edge < end; edge += 4)
		copy[edge] &= 0x7f;
	write_scratch(f, copy, f->file.len);
	assert_int_equal(pg_graph_open_file(&g, f->scratch), 0);
	assert_int_equal(pg_graph_read(&c, g, octopus), PG_EINVALID);
	pg_graph_free(g);

	/* a corrected date that says it overflows, with no overflow chunk */
	memcpy(copy, f->file.ptr, f->file.len);
	gda2 = chunk_at(copy, ID('G', 'D', 'A', '2'));
	assert_true(gda2 != 0);
	assert_int_equal(chunk_at(copy, ID('G', 'D', 'O', '2')), 0);
	put32(copy + gda2 + 4 * 7, 0x80000001u);
	write_scratch(f, copy, f->file.len);
	assert_int_equal(pg_graph_open_file(&g, f->scratch), 0);
	assert_int_equal(pg_graph_read(&c, g, 7), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "overflow chunk"));
	pg_graph_free(g);
	free(copy);
}

/* Random damage, thousands of times: refused or read within bounds, never a crash. */
static void test_random_damage_never_crashes(void **state)
{
	fixture *f = *state;
	unsigned char *copy = malloc(f->file.len);
	uint64_t x = 88172645463325252ULL;
	size_t round, opened = 0;

	assert_non_null(copy);
	for (round = 0; round < 3000; round++) {
		int k, hits = 1 + (int)(round % 4);

		memcpy(copy, f->file.ptr, f->file.len);
		for (k = 0; k < hits; k++) {
			size_t at;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* half the time in the header, table and fanout, where it hurts most */
			at = (x & 1) ? (size_t)(x >> 8) % 1200 : (size_t)(x >> 8) % f->file.len;
			copy[at] = (unsigned char)(x >> 40);
		}
		write_scratch(f, copy, f->file.len);
		opened += open_and_read_all(f) == 0;
	}
	assert_true(opened > 0);
	free(copy);
}

static void test_broken_chains(void **state)
{
	fixture *f = *state;
	pg_graph *g = NULL;
	char objdir[256], chainfile[512], cmd[2048];
	pg_buf chain = PG_BUF_INIT;
	uint32_t full;

	snprintf(objdir, sizeof(objdir), "%s/objects", f->chain);
	snprintf(chainfile, sizeof(chainfile), "%s/info/commit-graphs/commit-graph-chain", objdir);
	assert_int_equal(pg_buf_read_file(&chain, chainfile), 0);
	assert_int_equal(pg_graph_open(&g, objdir), 0);
	full = pg_graph_count(g);
	pg_graph_free(g);

	/* the top layer missing: the chain is cut below it */
	snprintf(cmd, sizeof(cmd), "mv %s/info/commit-graphs/graph-%.40s.graph %s/top.graph",
		 objdir, chain.ptr + PG_OID_HEXSZ + 1, f->dir);
	sh(cmd);
	assert_int_equal(pg_graph_open(&g, objdir), 0);
	assert_non_null(g);
	assert_true(pg_graph_count(g) > 0 && pg_graph_count(g) < full);
	pg_graph_free(g);

	/* the top layer in place of the base: its bases do not match, nothing to use */
	snprintf(cmd, sizeof(cmd), "cp %s/top.graph %s/info/commit-graphs/graph-%.40s.graph",
		 f->dir, objdir, chain.ptr);
	sh(cmd);
	assert_int_equal(pg_graph_open(&g, objdir), PG_EINVALID);
	assert_null(g);
	assert_non_null(strstr(pg_error_last(), "base graphs"));

	/* a chain file of garbage */
	assert_int_equal(pg_write_file_atomic(chainfile, "not a graph\n", 12), 0);
	assert_int_equal(pg_graph_open(&g, objdir), PG_EINVALID);
	assert_null(g);
	assert_int_equal(pg_write_file_atomic(chainfile, "", 0), 0);
	assert_int_equal(pg_graph_open(&g, objdir), PG_EINVALID);
	assert_null(g);
	pg_buf_release(&chain);
}


/*
 * A repository's graph is refused when its trailing checksum does not
 * hold (a file opened as is, for tools, is not checked); one that holds
 * is remembered in the checks file, once.
 */
static void test_checksum_is_checked_once(void **state)
{
	fixture *f = *state;
	pg_graph *g = NULL;
	char repo[256], objdir[320], checks[320], cmd[2048];
	pg_buf file = PG_BUF_INIT;

	snprintf(repo, sizeof(repo), "%s/sum.git", f->dir);
	snprintf(objdir, sizeof(objdir), "%s/objects", repo);
	snprintf(checks, sizeof(checks), "%s/graph-checks", f->dir);
	snprintf(cmd, sizeof(cmd), "cp -r %s %s", f->repo, repo);
	sh(cmd);
	assert_int_equal(pg_graph_open_checked(&g, objdir, checks), 0);
	assert_non_null(g);
	pg_graph_free(g);
	assert_int_equal(pg_buf_read_file(&file, checks), 0);
	assert_non_null(strchr(file.ptr, '\n'));
	assert_null(strchr(strchr(file.ptr, '\n') + 1, '\n'));
	assert_int_equal(pg_graph_open_checked(&g, objdir, checks), 0);
	pg_graph_free(g);
	pg_buf_clear(&file);
	assert_int_equal(pg_buf_read_file(&file, checks), 0);
	assert_null(strchr(strchr(file.ptr, '\n') + 1, '\n'));

	/* one bit of a commit's date: every table still fits, the checksum does not */
	snprintf(cmd, sizeof(cmd), "f=%s/info/commit-graph; chmod u+w $f; perl -e 'open(F, "
		 "\"+<\", $ARGV[0]) or die; seek(F, -200, 2); read(F, $b, 1); seek(F, -200, 2); "
		 "print F chr(ord($b) ^ 1)' $f", objdir);
	sh(cmd);
	assert_int_equal(pg_graph_open_checked(&g, objdir, checks), PG_EINVALID);
	assert_null(g);
	assert_non_null(strstr(pg_error_last(), "checksum"));
	assert_int_equal(pg_graph_open(&g, objdir), PG_EINVALID);
	snprintf(cmd, sizeof(cmd), "%s/info/commit-graph", objdir);
	assert_int_equal(pg_graph_open_file(&g, cmd), 0);
	assert_non_null(g);
	pg_graph_free(g);
	pg_buf_release(&file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_git_graph),
		cmocka_unit_test(test_reads_levels_only),
		cmocka_unit_test(test_reads_a_chain),
		cmocka_unit_test(test_every_truncation_is_refused),
		cmocka_unit_test(test_broken_headers_and_tables_are_refused),
		cmocka_unit_test(test_broken_entries_are_refused),
		cmocka_unit_test(test_random_damage_never_crashes),
		cmocka_unit_test(test_broken_chains),
		cmocka_unit_test(test_checksum_is_checked_once),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
