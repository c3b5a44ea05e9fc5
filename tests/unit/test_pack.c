/* test_pack.c - commits read from trusted packs and loose files: git's bytes, deltas left to libgit2, damage an error, never a crash; pack indexes checked; loose objects of any type checked. */
#include "tests/unit/unit.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/testpoint.h"
#include "repo/repo.h"
#include "tests/unit/run.h"

#include <dirent.h>
#include <unistd.h>

typedef struct fixture {
	char dir[64];
	char repo[128];
	char *batch;      /* git cat-file --batch of every commit */
	size_t ncommits;
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	char *deltas;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/pg-test-pack-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->repo, sizeof(f->repo), "%s/h.git", f->dir);
	/* repacked hard, so that some commits are stored as deltas of others */
	free(run_sh("tests/unit/make-history.sh %s 380 3 600 && cd %s && "
		"body=$(seq 1 400 | sed 's/^/a long and shared line of the message, number /') && "
		"c=$(git rev-parse main) && for i in $(seq 1 20); do "
		"c=$(printf 'commit %%s\n\n%%s\n' $i \"$body\" | git commit-tree -p $c main^{tree}); "
		"done && git update-ref refs/heads/main $c && "
		"git repack -adfq --window=250 --depth=50", f->repo, f->repo));
	deltas = run_sh("git --git-dir=%s verify-pack -v %s/objects/pack/*.idx | "
		    "awk '$2 == \"commit\" && NF == 7' | wc -l", f->repo, f->repo);
	assert_true(strtol(deltas, NULL, 10) > 0);
	free(deltas);
	f->batch = run_sh("git --git-dir=%s rev-list --all | git --git-dir=%s cat-file --batch",
		      f->repo, f->repo);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	pg_remove_tree(f->dir);
	free(f->batch);
	free(f);
	return 0;
}

/*
 * Read every commit of the batch in repo, parsed and raw: each read must
 * give git's bytes, or (when damaged is set) fail; never other bytes.  Returns how many read.
 */
static size_t read_all(const fixture *f, const char *repo, bool damaged)
{
	pg_repo *r = NULL;
	const char *p = f->batch;
	size_t ok = 0, n = 0;
	pg_buf raw = PG_BUF_INIT;
	enum pg_object_type type;

	assert_int_equal(pg_repo_open(&r, repo), 0);
	while (*p) {
		pg_oid id;
		pg_commit *got = NULL, *want = NULL;
		char *end;
		size_t len;
		int err;

		assert_int_equal(pg_oid_fromhex(&id, p, PG_OID_HEXSZ), 0);
		assert_int_equal(strncmp(p + PG_OID_HEXSZ, " commit ", 8), 0);
		len = strtoul(p + PG_OID_HEXSZ + 8, &end, 10);
		assert_int_equal(*end, '\n');
		assert_int_equal(pg_commit_parse(&want, &id, end + 1, len), 0);
		err = pg_repo_read_commit(&got, r, &id);
		if (err == 0) {
			assert_memory_equal(got->tree.id, want->tree.id, PG_OID_RAWSZ);
			assert_int_equal(got->nparents, want->nparents);
			assert_int_equal(got->message_len, want->message_len);
			assert_memory_equal(got->message, want->message, want->message_len);
			assert_string_equal(got->author.name, want->author.name);
			assert_true(got->committer.time == want->committer.time);
			ok++;
		} else {
			assert_true(damaged);
		}
		/* read raw, by libgit2 and as the reverts' walk does: git's bytes, or an error */
		pg_buf_clear(&raw);
		type = PG_OBJ_NONE;
		if (pg_repo_read_raw(&raw, &type, r, &id) == 0) {
			assert_int_equal(type, PG_OBJ_COMMIT);
			assert_int_equal(raw.len, len);
			assert_memory_equal(raw.ptr, end + 1, len);
		} else {
			assert_true(damaged);
			pg_error_clear();
		}
		pg_buf_clear(&raw);
		if (pg_repo_read_commit_raw(&raw, r, &id) == 0) {
			assert_int_equal(raw.len, len);
			assert_memory_equal(raw.ptr, end + 1, len);
		} else {
			assert_true(damaged);
			pg_error_clear();
		}
		pg_commit_free(got);
		pg_commit_free(want);
		p = end + 1 + len + 1;
		n++;
	}
	assert_int_equal(n, 400);
	pg_buf_release(&raw);
	pg_repo_free(r);
	return ok;
}

/* Reading alone, and reading ahead whatever the count of commits. */
static const pg_read_ahead alone = { SIZE_MAX, 0, 0, 0 }, ahead_all = { 1, 0, 0, 0 };

static void test_commits_read_from_packs_are_git_s(void **state)
{
	fixture *f = *state;

	assert_int_equal(read_all(f, f->repo, false), 400);
}

typedef struct seen_commits {
	pg_repo *r;
	const pg_oid *ids;
	unsigned *times;
} seen_commits;

static int saw(void *ctx, size_t i, const pg_commit *c)
{
	seen_commits *s = ctx;
	pg_commit *want = NULL;

	s->times[i]++;
	assert_memory_equal(c->id.id, s->ids[i].id, PG_OID_RAWSZ);
	assert_int_equal(pg_repo_read_commit(&want, s->r, &s->ids[i]), 0);
	assert_int_equal(c->message_len, want->message_len);
	assert_memory_equal(c->message, want->message, want->message_len);
	assert_memory_equal(c->tree.id, want->tree.id, PG_OID_RAWSZ);
	pg_commit_free(want);
	return 0;
}

/*
 * Commits read many at once, in the packs' order: each of the ids given
 * once with its place, git's bytes, deltas and a loose commit too (read as
 * one at a time reads them), an id listed twice given twice.
 */
static void test_commits_read_in_the_packs_order(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_oid ids[403];
	unsigned times[403] = { 0 };
	seen_commits s = { NULL, ids, times };
	const char *p = f->batch;
	char *hex;
	size_t n = 0, i, ahead;
	pg_oid tree;

	hex = run_sh("cd %s && git commit-tree -p main -m loose main^{tree}", f->repo);
	assert_int_equal(pg_oid_fromhex(&ids[n++], hex, PG_OID_HEXSZ), 0);
	free(hex);
	while (*p) {
		char *end;
		size_t len;

		assert_int_equal(pg_oid_fromhex(&ids[n++], p, PG_OID_HEXSZ), 0);
		len = strtoul(p + PG_OID_HEXSZ + 8, &end, 10);
		p = end + 1 + len + 1;
	}
	assert_int_equal(n, 401);
	ids[n++] = ids[7];
	ids[n++] = ids[0];
	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	s.r = r;
	/* read alone, and inflated ahead by other threads (fn reading one commit meanwhile) */
	for (ahead = 0; ahead < 2; ahead++) {
		pg_repo_set_read_ahead(r, ahead ? &ahead_all : &alone);
		memset(times, 0, sizeof(times));
		assert_int_equal(pg_repo_read_commits(r, ids, n, saw, &s), 0);
		for (i = 0; i < n; i++)
			assert_int_equal(times[i], 1);
	}
	/* a tree among them: named, as one read names it */
	tree = ids[3];
	assert_int_equal(pg_repo_commit_tree(&ids[3], r, &ids[3]), 0);
	for (ahead = 0; ahead < 2; ahead++) {
		pg_repo_set_read_ahead(r, ahead ? &ahead_all : &alone);
		memset(times, 0, sizeof(times));
		assert_int_equal(pg_repo_read_commits(r, ids, n, saw, &s), PG_EINVALID);
	}
	ids[3] = tree;
	pg_repo_free(r);
}

/* The one pack of repo, by path. */
static void pack_path(char *out, size_t len, const char *repo)
{
	char dir[320];
	DIR *d;
	struct dirent *e;

	snprintf(dir, sizeof(dir), "%s/objects/pack", repo);
	assert_non_null(d = opendir(dir));
	out[0] = '\0';
	while ((e = readdir(d)))
		if (strlen(e->d_name) > 5 && !strcmp(e->d_name + strlen(e->d_name) - 5, ".pack"))
			snprintf(out, len, "%s/%s", dir, e->d_name);
	closedir(d);
	assert_true(out[0] != '\0');
}

/* saw, and the offset in the pack of each commit it is given: in order, when located. */
typedef struct in_order {
	seen_commits s;
	const uint64_t *want; /* git's offset of each id */
	uint64_t last;
	bool ordered;
} in_order;

static int saw_in_order(void *ctx, size_t i, const pg_commit *c)
{
	in_order *o = ctx;

	o->ordered &= o->want[i] > o->last;
	o->last = o->want[i];
	return saw(&o->s, i, c);
}

/*
 * A pack of 30,000 objects (a bucket of the fanout holds a hundred), its
 * commits read a few at a time and all at once, whether its index is
 * stepped through or searched to the next id: each given once, git's
 * bytes, in the order of their offsets (git show-index): every one
 * located (one located in no pack comes after the rest).
 */
static void test_few_commits_among_many_objects(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_oid ids[400];
	uint64_t want[400];
	unsigned times[400];
	in_order o;
	char repo[200], pack[400], *list, *line;
	size_t n = 0, i, step;

	snprintf(repo, sizeof(repo), "%s/many.git", f->dir);
	free(run_sh("git clone -q --bare %s %s && cd %s && "
		    "awk 'BEGIN { print \"commit refs/heads/many\"; "
		    "print \"committer a <a@example.org> 1000000000 +0000\"; "
		    "print \"data 5\"; print \"many\"; "
		    "for (i = 0; i < 30000; i++) { print \"M 100644 inline f\" i; "
		    "print \"data \" length(i \"\") + 1; print i } }' | "
		    "git fast-import --quiet && git repack -adq", f->repo, repo, repo));
	pack_path(pack, sizeof(pack), repo);
	snprintf(pack + strlen(pack) - 5, 5, ".idx");
	list = run_sh("git --git-dir=%s show-index < %s > %s/offsets && "
		      "git --git-dir=%s rev-list --all | head -400 | "
		      "grep -F -f - %s/offsets", repo, pack, f->dir, repo, f->dir);
	for (line = list; *line && n < 400; n++) {
		char *end;

		want[n] = strtoull(line, &end, 10);
		assert_int_equal(*end, ' ');
		assert_int_equal(pg_oid_fromhex(&ids[n], end + 1, PG_OID_HEXSZ), 0);
		assert_non_null(line = strchr(end, '\n'));
		line++;
	}
	free(list);
	assert_int_equal(n, 400);
	assert_int_equal(pg_repo_open(&r, repo), 0);
	for (step = 1; step <= 400; step *= 20) {
		memset(times, 0, sizeof(times));
		for (i = 0; i < n; i += step) {
			memset(&o, 0, sizeof(o));
			o.s.r = r;
			o.s.ids = ids + i;
			o.s.times = times + i;
			o.want = want + i;
			o.ordered = true;
			assert_int_equal(pg_repo_read_commits(r, ids + i, n - i < step ? n - i : step,
							      saw_in_order, &o), 0);
			assert_true(o.ordered);
		}
		for (i = 0; i < n; i++)
			assert_int_equal(times[i], 1);
	}
	pg_repo_free(r);
}

/* What pg_repo_read_commits_raw gave: each call's place and a digest of its bytes. */
typedef struct raw_calls {
	size_t n, stop_at;      /* stop_at: fn fails at that call (0: never) */
	size_t batches;         /* inflated by other threads (pg_repo_read_ahead_batches) */
	size_t *place;
	uint64_t *digest;
} raw_calls;

static int saw_raw(void *ctx, size_t i, const pg_oid *id, const char *data, size_t len)
{
	raw_calls *c = ctx;
	uint64_t h = 1469598103934665603ULL;
	size_t k;

	(void)id;
	for (k = 0; k < len; k++)
		h = (h ^ (unsigned char)data[k]) * 1099511628211ULL;
	assert_int_equal(data[len], '\0');
	c->place[c->n] = i;
	c->digest[c->n] = h;
	if (++c->n == c->stop_at)
		return pg_error_set(PG_ECANCELLED, "stopped at call %zu", c->n);
	return 0;
}

/* Read ids[0..n) of repo into c, as ra says: the result, *msg its message. */
static int read_raw(raw_calls *c, const char *repo, const pg_oid *ids, size_t n,
		    const pg_read_ahead *ra, char *msg, size_t msglen)
{
	pg_repo *r = NULL;
	int err;

	c->n = 0;
	assert_int_equal(pg_repo_open(&r, repo), 0);
	pg_repo_set_read_ahead(r, ra);
	err = pg_repo_read_commits_raw(r, ids, n, saw_raw, c);
	snprintf(msg, msglen, "%s", err < 0 ? pg_error_last() : "");
	c->batches = pg_repo_read_ahead_batches(r);
	pg_repo_free(r);
	return err;
}

/*
 * Thousands of commits read alone and inflated ahead, the threads' way
 * by default and in small batches by more threads than slots divide
 * evenly (a slot taken by another thread than its last batch's), with a
 * batch's bytes too few for all of its commits: the same calls in the
 * same order with the same bytes; fn failing stops the reading where it
 * says (the threads waiting for slots, stopped); a commit damaged late
 * in the pack gives the same error after the same calls.
 */
static void test_read_ahead_gives_what_one_thread_gives(void **state)
{
	static const pg_read_ahead ways[] = {
		{ 1, 0, 0, 0 },      /* a thread a CPU, batches of 512 */
		{ 1, 4, 64, 0 },     /* 47 batches, 10 slots */
		{ 1, 3, 37, 2048 },  /* 82 batches, 8 slots; a slot holds 9 of its 37 commits' bytes */
		{ 1, 1, 1, 0 },      /* a commit a batch */
	};
	fixture *f = *state;
	char repo[200], pack[400], want_msg[1024], msg[1024], *list, *line;
	raw_calls want, got;
	pg_oid *ids;
	uint64_t *off;
	size_t n = 0, k, w, damage;

	snprintf(repo, sizeof(repo), "%s/ahead.git", f->dir);
	free(run_sh("git init -q --bare %s && cd %s && "
		    "awk 'BEGIN { for (i = 0; i < 3000; i++) { print \"commit refs/heads/main\"; "
		    "print \"committer c <c@example.org> \" (1000000000 + i) \" +0000\"; "
		    "m = \"change \" i \"\\n\\nwhat it does, at length: \" i * 7919; "
		    "print \"data \" length(m); print m; "
		    "print \"M 100644 inline f\" (i %% 50); print \"data \" length(i \"\") + 1; print i } }' | "
		    "git fast-import --quiet && git repack -adq", repo, repo));
	pack_path(pack, sizeof(pack), repo);
	snprintf(pack + strlen(pack) - 5, 5, ".idx");
	list = run_sh("git --git-dir=%s rev-list --all > %s/ahead-ids && "
		      "git --git-dir=%s show-index < %s | grep -F -f %s/ahead-ids | sort -n",
		      repo, f->dir, repo, pack, f->dir);
	assert_non_null(ids = calloc(3000, sizeof(*ids)));
	assert_non_null(off = calloc(3000, sizeof(*off)));
	for (line = list; *line && n < 3000; n++) {
		char *end;

		off[n] = strtoull(line, &end, 10);
		assert_int_equal(pg_oid_fromhex(&ids[n], end + 1, PG_OID_HEXSZ), 0);
		assert_non_null(line = strchr(end, '\n'));
		line++;
	}
	free(list);
	assert_int_equal(n, 3000);
	assert_non_null(want.place = calloc(n, sizeof(size_t)));
	assert_non_null(want.digest = calloc(n, sizeof(uint64_t)));
	assert_non_null(got.place = calloc(n, sizeof(size_t)));
	assert_non_null(got.digest = calloc(n, sizeof(uint64_t)));
	/* whole: ids given in the packs' order here, so the calls come in the ids' order */
	want.stop_at = got.stop_at = 0;
	assert_int_equal(read_raw(&want, repo, ids, n, &alone, want_msg, sizeof(want_msg)), 0);
	assert_int_equal(want.n, n);
	for (k = 0; k < n; k++)
		assert_int_equal(want.place[k], k);
	assert_int_equal(want.batches, 0);
	for (w = 0; w < PG_ARRAY_SIZE(ways); w++) {
		size_t batch = ways[w].batch ? ways[w].batch : 512;

		assert_int_equal(read_raw(&got, repo, ids, n, &ways[w], msg, sizeof(msg)), 0);
		assert_int_equal(got.n, n);
		/* every batch came from the threads */
		assert_int_equal(got.batches, (n + batch - 1) / batch);
		assert_memory_equal(want.place, got.place, n * sizeof(size_t));
		assert_memory_equal(want.digest, got.digest, n * sizeof(uint64_t));
	}
	/* a second thread that cannot start: read alone, the same */
	if (PG_TEST_POINTS_BUILT) {
		setenv("PULLGATE_TEST_FAIL", "read-ahead:thread 1", 1);
		setenv("PULLGATE_TEST_FAIL_TIMES", "1000", 1);
		assert_int_equal(read_raw(&got, repo, ids, n, &ways[1], msg, sizeof(msg)), 0);
		unsetenv("PULLGATE_TEST_FAIL");
		unsetenv("PULLGATE_TEST_FAIL_TIMES");
		assert_int_equal(got.batches, 0);
		assert_int_equal(got.n, n);
		assert_memory_equal(want.digest, got.digest, n * sizeof(uint64_t));
	}
	/* fn failing at its 1,700th call */
	got.stop_at = 1700;
	for (w = 0; w < PG_ARRAY_SIZE(ways); w++) {
		assert_int_equal(read_raw(&got, repo, ids, n, &ways[w], msg, sizeof(msg)),
				 PG_ECANCELLED);
		assert_int_equal(got.n, 1700);
		assert_true(got.batches > 0);
		assert_string_equal(msg, "stopped at call 1700");
	}
	got.stop_at = 0;
	/* the 2,600th commit's stream damaged (its fifth byte on, a zlib stream's blocks) */
	{
		pg_buf b = PG_BUF_INIT;

		snprintf(pack + strlen(pack) - 4, 6, ".pack");
		damage = 2599;
		assert_int_equal(pg_buf_read_file(&b, pack), 0);
		assert_true(off[damage] + 12 < b.len);
		memset(b.ptr + off[damage] + 4, 0xff, 8);
		assert_int_equal(pg_write_file_atomic(pack, b.ptr, b.len), 0);
		pg_buf_release(&b);
	}
	assert_int_equal(read_raw(&want, repo, ids, n, &alone, want_msg, sizeof(want_msg)),
			 PG_EINVALID);
	assert_int_equal(want.n, damage);
	assert_non_null(strstr(want_msg, "is damaged"));
	for (w = 0; w < PG_ARRAY_SIZE(ways); w++) {
		assert_int_equal(read_raw(&got, repo, ids, n, &ways[w], msg, sizeof(msg)),
				 PG_EINVALID);
		assert_int_equal(got.n, damage);
		assert_true(got.batches > 0);
		assert_string_equal(msg, want_msg);
		assert_memory_equal(want.digest, got.digest, damage * sizeof(uint64_t));
	}
	free(want.place);
	free(want.digest);
	free(got.place);
	free(got.digest);
	free(ids);
	free(off);
}

/* The pack's data damaged here and there: a read fails or is right, nothing else. */
static void test_damaged_pack_never_gives_other_bytes(void **state)
{
	fixture *f = *state;
	char copy[256], pack[640];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	size_t round, total = 0;

	snprintf(copy, sizeof(copy), "%s/damaged.git", f->dir);
	for (round = 0; round < 12; round++) {
		pg_buf b = PG_BUF_INIT;
		int k;

		free(run_sh("rm -rf %s && cp -r %s %s", copy, f->repo, copy));
		pack_path(pack, sizeof(pack), copy);
		assert_int_equal(pg_buf_read_file(&b, pack), 0);
		for (k = 0; k < 40; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* past the header, before the trailing checksum */
			b.ptr[12 + x % (b.len - 32)] = (char)(x >> 56);
		}
		assert_int_equal(pg_write_file_atomic(pack, b.ptr, b.len), 0);
		pg_buf_release(&b);
		total += read_all(f, copy, true);
	}
	/* most commits survive forty damaged bytes */
	assert_true(total > 12 * 300);
}

/*
 * A pack's commit whose entry header says one byte more (more: 1) or one
 * less (-1) than its stream holds: read, and the message of the error.
 */
static int read_missized(char *msg, size_t len, const fixture *f, int more)
{
	char copy[256], pack[640], hex[PG_OID_HEXSZ + 1];
	pg_buf b = PG_BUF_INIT;
	unsigned long off = 0;
	pg_repo *r = NULL;
	pg_commit *c = NULL;
	pg_oid id;
	char *out;
	int err;

	snprintf(copy, sizeof(copy), "%s/missized.git", f->dir);
	/* a whole commit whose size's low four bits (its entry's first byte) can move by one */
	out = run_sh("rm -rf %s && cp -r %s %s && git verify-pack -v %s/objects/pack/*.idx | "
		     "awk '$2 == \"commit\" && NF == 5 && $3 %% 16 >= 2 && $3 %% 16 <= 14 "
		     "{ print $1, $5; exit }'", copy, f->repo, copy, copy);
	assert_int_equal(sscanf(out, "%40s %lu", hex, &off), 2);
	free(out);
	pack_path(pack, sizeof(pack), copy);
	assert_int_equal(pg_buf_read_file(&b, pack), 0);
	assert_true(off >= 12 && off < b.len);
	b.ptr[off] = (char)((unsigned char)b.ptr[off] + more);
	assert_int_equal(pg_write_file_atomic(pack, b.ptr, b.len), 0);
	pg_buf_release(&b);
	assert_int_equal(pg_oid_fromhex(&id, hex, PG_OID_HEXSZ), 0);
	assert_int_equal(pg_repo_open(&r, copy), 0);
	err = pg_repo_read_commit(&c, r, &id);
	snprintf(msg, len, "%s", err < 0 ? pg_error_last() : "");
	pg_error_clear();
	pg_commit_free(c);
	pg_repo_free(r);
	return err;
}

/* A stream one byte longer or shorter than its entry says is damaged, and named so. */
static void test_missized_pack_commit_is_named(void **state)
{
	fixture *f = *state;
	char msg[512];

	assert_int_equal(read_missized(msg, sizeof(msg), f, -1), PG_EINVALID);
	assert_non_null(strstr(msg, "is damaged: it is longer than its header says"));
	assert_int_equal(read_missized(msg, sizeof(msg), f, 1), PG_EINVALID);
	assert_non_null(strstr(msg, "is damaged: it is shorter than its header says"));
}

/* A copy of the repository with every object loose, as a small fetch leaves them. */
static void make_loose(const fixture *f, const char *copy)
{
	free(run_sh("rm -rf %s && git init -q --bare %s && "
		    "git -C %s unpack-objects -q < $(ls %s/objects/pack/*.pack) && "
		    "git -C %s update-ref refs/heads/main $(git --git-dir=%s rev-parse main) && "
		    "test -z \"$(ls %s/objects/pack)\"",
		    copy, copy, copy, f->repo, copy, f->repo, copy));
}

static void test_loose_commits_are_git_s(void **state)
{
	fixture *f = *state;
	char copy[256];

	snprintf(copy, sizeof(copy), "%s/loose.git", f->dir);
	make_loose(f, copy);
	assert_int_equal(read_all(f, copy, false), 400);
}

/* Loose commits damaged, cut short or of another type: a read fails or is right. */
static void test_damaged_loose_commits_never_give_other_bytes(void **state)
{
	fixture *f = *state;
	char copy[256];
	char *files;
	size_t ok;

	snprintf(copy, sizeof(copy), "%s/loose-damaged.git", f->dir);
	make_loose(f, copy);
	/* of each commit's file: a byte flipped, the end cut off, or a blob's bytes */
	files = run_sh("cd %s/objects && i=0 && "
		       "for c in $(git --git-dir=%s rev-list --all); do "
		       "o=${c%%${c#??}}/${c#??}; chmod u+w $o; i=$((i + 1)); case $((i %% 4)) in "
		       "1) printf '\\377' | dd of=$o bs=1 seek=$((i %% 30 + 4)) conv=notrunc "
		       "2>/dev/null ;; "
		       "2) truncate -s -3 $o ;; "
		       "3) printf 'blob %%s\\0x' 1 | python3 -c 'import sys,zlib; "
		       "sys.stdout.buffer.write(zlib.compress(sys.stdin.buffer.read()))' > $o ;; "
		       "esac; done; echo $i", copy, f->repo);
	assert_int_equal(strtol(files, NULL, 10), 400);
	free(files);
	ok = read_all(f, copy, true);
	/* the untouched quarter is read; no more than the untouched and the lucky flips */
	assert_true(ok >= 100);
	assert_true(ok < 300);
}

/* --- pack indexes checked before libgit2 opens one ------------------------------ */

/* repo opened after cmd (run in a fresh copy's objects/pack): the error, or 0; msg is its message. */
static int open_damaged(char *msg, size_t len, const fixture *f, const char *cmd)
{
	char copy[256];
	pg_repo *r = NULL;
	int err;

	snprintf(copy, sizeof(copy), "%s/idx.git", f->dir);
	free(run_sh("rm -rf %s && cp -r %s %s && cd %s/objects/pack && chmod u+w * && %s", copy,
		    f->repo, copy, copy, cmd));
	err = pg_repo_open(&r, copy);
	snprintf(msg, len, "%s", err < 0 ? pg_error_last() : "");
	pg_error_clear();
	pg_repo_free(r);
	return err;
}

/* A command making the 4 bytes at off of the one *.ext file the big-endian value (a shell expression). */
static void put32(char *out, size_t len, const char *off, const char *value, const char *ext)
{
	snprintf(out, len, "v=$((%s)) && printf \"$(printf '\\\\%%03o\\\\%%03o\\\\%%03o\\\\%%03o' "
		 "$((v >> 24 & 255)) $((v >> 16 & 255)) $((v >> 8 & 255)) $((v & 255)))\" | "
		 "dd of=$(ls *.%s) bs=1 seek=%s conv=notrunc 2>/dev/null", value, ext, off);
}

static void test_pack_index_fanout_and_size_are_checked(void **state)
{
	fixture *f = *state;
	char msg[512], cmd[1024];

	/* the count (the last fanout entry) made 2^32-1: libgit2 1.5 read past the file */
	put32(cmd, sizeof(cmd), "1028", "4294967295", "idx");
	assert_int_equal(open_damaged(msg, sizeof(msg), f, cmd), PG_EINVALID);
	assert_non_null(strstr(msg, ".idx' is damaged: it claims 4294967295 objects, which its "));
	/* the first entry past the second */
	put32(cmd, sizeof(cmd), "8", "4000", "idx");
	assert_int_equal(open_damaged(msg, sizeof(msg), f, cmd), PG_EINVALID);
	assert_non_null(strstr(msg, ".idx' is damaged: its fanout table is out of order"));
	/* a count one more than the file holds */
	put32(cmd, sizeof(cmd), "1028", "$(($(od -An -tu1 -j1028 -N4 *.idx | "
		 "awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4 }') + 1))", "idx");
	assert_int_equal(open_damaged(msg, sizeof(msg), f, cmd), PG_EINVALID);
	assert_non_null(strstr(msg, ".idx' is damaged: it claims "));
	/* cut short by a byte, and by all but its header */
	assert_int_equal(open_damaged(msg, sizeof(msg), f, "truncate -s -1 *.idx"), PG_EINVALID);
	assert_non_null(strstr(msg, "which its "));
	assert_int_equal(open_damaged(msg, sizeof(msg), f, "truncate -s 100 *.idx"), PG_EINVALID);
	assert_non_null(strstr(msg, ".idx' is damaged: it is cut short"));
	/* a version libgit2 does not read */
	put32(cmd, sizeof(cmd), "4", "3", "idx");
	assert_int_equal(open_damaged(msg, sizeof(msg), f, cmd), PG_EINVALID);
	assert_non_null(strstr(msg, ".idx' is damaged: its version is 3, not 1 or 2"));
}

static void test_pack_header_must_match_its_index(void **state)
{
	fixture *f = *state;
	char msg[512], cmd[1024];

	put32(cmd, sizeof(cmd), "8", "7", "pack");
	assert_int_equal(open_damaged(msg, sizeof(msg), f, cmd), PG_EINVALID);
	assert_non_null(strstr(msg, ".pack' holds 7 objects, its index '"));
	put32(cmd, sizeof(cmd), "4", "4", "pack");
	assert_int_equal(open_damaged(msg, sizeof(msg), f, cmd), PG_EINVALID);
	assert_non_null(strstr(msg, ".pack' is damaged: its header is not a pack's"));
	assert_int_equal(open_damaged(msg, sizeof(msg), f, "truncate -s 20 *.pack"), PG_EINVALID);
	assert_non_null(strstr(msg, ".pack' is damaged: its header is not a pack's"));
	/* an index whose pack is gone is left out, as git leaves it out */
	assert_int_equal(open_damaged(msg, sizeof(msg), f, "rm *.pack"), 0);
}

/* A version 1 index (git index-pack --index-version=1) is checked and read. */
static void test_version_1_index_is_read(void **state)
{
	fixture *f = *state;
	char copy[256], msg[512];

	assert_int_equal(open_damaged(msg, sizeof(msg), f, "p=$(ls *.pack) && rm *.idx && "
				      "git index-pack --index-version=1 $p >/dev/null && "
				      "test \"$(head -c 4 ${p%.pack}.idx | od -An -tx1)\" != "
				      "\" ff 74 4f 63\""), 0);
	snprintf(copy, sizeof(copy), "%s/idx.git", f->dir);
	assert_int_equal(read_all(f, copy, false), 400);
}

/*
 * A pair found good is not read again while its files' identity (device,
 * inode, size, mtime) stays: bytes changed behind an unchanged identity
 * go unseen, and a new mtime has them read again.
 */
static void test_pack_check_is_remembered_by_file_identity(void **state)
{
	fixture *f = *state;
	char copy[256], msg[512], cmd[1024];
	pg_repo *r = NULL;

	assert_int_equal(open_damaged(msg, sizeof(msg), f, "true"), 0);
	snprintf(copy, sizeof(copy), "%s/idx.git", f->dir);
	put32(cmd, sizeof(cmd), "1028", "4294967295", "idx");
	free(run_sh("cd %s/objects/pack && touch -r *.idx %s/stamp && %s && touch -r %s/stamp *.idx",
		    copy, f->dir, cmd, f->dir));
	assert_int_equal(pg_repo_open(&r, copy), 0);
	pg_repo_free(r);
	r = NULL;
	free(run_sh("touch -d '1 hour ago' %s/objects/pack/*.idx", copy));
	assert_int_equal(pg_repo_open(&r, copy), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "it claims 4294967295 objects"));
	pg_error_clear();
}

/* --- loose objects of any type, through the object store's own reader ------------- */

/*
 * The object pick (a shell expression, in a loose copy of repo) names, with
 * cmd run on its file ($o), read as a commit (commit: true) or by the
 * object store's reader: the error, or 0; msg is its message.
 */
static int read_loose_object(char *msg, size_t len, const fixture *f, const char *pick,
			     const char *cmd, bool commit)
{
	char copy[256];
	char *hex;
	pg_buf out = PG_BUF_INIT;
	pg_repo *r = NULL;
	pg_commit *c = NULL;
	pg_oid id;
	int err;

	snprintf(copy, sizeof(copy), "%s/loose-object.git", f->dir);
	make_loose(f, copy);
	hex = run_sh("cd %s && b=%s && o=objects/${b%%${b#??}}/${b#??} && chmod u+w $o && %s && "
		     "printf %%s $b", copy, pick, cmd);
	assert_int_equal(pg_oid_fromhex(&id, hex + strlen(hex) - PG_OID_HEXSZ, PG_OID_HEXSZ), 0);
	free(hex);
	assert_int_equal(pg_repo_open(&r, copy), 0);
	err = commit ? pg_repo_read_commit(&c, r, &id) : pg_repo_read_raw(&out, NULL, r, &id);
	snprintf(msg, len, "%s", err < 0 ? pg_error_last() : "");
	pg_error_clear();
	pg_commit_free(c);
	pg_buf_release(&out);
	pg_repo_free(r);
	return err;
}

/* The first blob of repo's main, loose in copy, with cmd run on its file ($o). */
static int read_loose_blob(char *msg, size_t len, const fixture *f, const char *cmd)
{
	return read_loose_object(msg, len, f,
				 "$(git ls-tree -r main | awk '$2 == \"blob\" { print $3; exit }')",
				 cmd, false);
}

/*
 * main's commit, loose, its header saying one byte less than its stream
 * holds: both loose readers name it as a pack's is named.
 */
static void test_missized_loose_commit_is_named(void **state)
{
	static const char longer[] =
		"python3 -c 'import sys, zlib; "
		"d = zlib.decompress(open(sys.argv[1], \"rb\").read()); "
		"h, b = d.split(b\"\\0\", 1); "
		"open(sys.argv[1], \"wb\").write(zlib.compress(b\"commit %d\\0\" % "
		"(len(b) - 1) + b))' $o";
	fixture *f = *state;
	char msg[512];

	assert_int_equal(read_loose_object(msg, sizeof(msg), f, "$(git rev-parse main)", longer,
					   true), PG_EINVALID);
	assert_non_null(strstr(msg, "is damaged: it is longer than its header says"));
	assert_int_equal(read_loose_object(msg, sizeof(msg), f, "$(git rev-parse main)", longer,
					   false), PG_EINVALID);
	assert_non_null(strstr(msg, "is damaged: it is longer than its header says"));
}

static void test_damaged_loose_objects_are_errors(void **state)
{
	fixture *f = *state;
	char msg[512];

	assert_int_equal(read_loose_blob(msg, sizeof(msg), f, "true"), 0);
	/* cut short: libgit2 1.5.1 looped for ever on it */
	assert_int_equal(read_loose_blob(msg, sizeof(msg), f,
					 "truncate -s $(($(stat -c %s $o) / 2)) $o"), PG_EINVALID);
	assert_non_null(strstr(msg, "is damaged: its zlib stream is cut short"));
	/* a header that claims far more than the file can hold */
	assert_int_equal(read_loose_blob(msg, sizeof(msg), f,
					 "printf 'blob 999999999\\0x' | python3 -c 'import sys, zlib; "
					 "sys.stdout.buffer.write(zlib.compress(sys.stdin.buffer.read()))'"
					 " > $o"), PG_EINVALID);
	assert_non_null(strstr(msg, "is damaged: its header claims 999999999 bytes, more than its"));
	/* shorter and longer than the header says, an unknown type */
	assert_int_equal(read_loose_blob(msg, sizeof(msg), f,
					 "printf 'blob 5\\0abc' | python3 -c 'import sys, zlib; "
					 "sys.stdout.buffer.write(zlib.compress(sys.stdin.buffer.read()))'"
					 " > $o"), PG_EINVALID);
	assert_non_null(strstr(msg, "is damaged: it is shorter than its header says"));
	assert_int_equal(read_loose_blob(msg, sizeof(msg), f,
					 "printf 'blob 1\\0abc' | python3 -c 'import sys, zlib; "
					 "sys.stdout.buffer.write(zlib.compress(sys.stdin.buffer.read()))'"
					 " > $o"), PG_EINVALID);
	assert_non_null(strstr(msg, "is damaged: it is longer than its header says"));
	assert_int_equal(read_loose_blob(msg, sizeof(msg), f,
					 "printf 'blub 1\\0a' | python3 -c 'import sys, zlib; "
					 "sys.stdout.buffer.write(zlib.compress(sys.stdin.buffer.read()))'"
					 " > $o"), PG_EINVALID);
	assert_non_null(strstr(msg, "is damaged: its header is not \"type size\""));
	/* whole, but another object's bytes */
	assert_int_equal(read_loose_blob(msg, sizeof(msg), f,
					 "printf 'blob 1\\0a' | python3 -c 'import sys, zlib; "
					 "sys.stdout.buffer.write(zlib.compress(sys.stdin.buffer.read()))'"
					 " > $o"), PG_EINVALID);
	assert_non_null(strstr(msg, "is damaged: its contents are another object's"));
	/* not zlib at all */
	assert_int_equal(read_loose_blob(msg, sizeof(msg), f, "echo garbage > $o"), PG_EINVALID);
	assert_non_null(strstr(msg, "is damaged: its zlib stream is corrupt"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_commits_read_from_packs_are_git_s),
		cmocka_unit_test(test_commits_read_in_the_packs_order),
		cmocka_unit_test(test_few_commits_among_many_objects),
		cmocka_unit_test(test_read_ahead_gives_what_one_thread_gives),
		cmocka_unit_test(test_damaged_pack_never_gives_other_bytes),
		cmocka_unit_test(test_missized_pack_commit_is_named),
		cmocka_unit_test(test_loose_commits_are_git_s),
		cmocka_unit_test(test_damaged_loose_commits_never_give_other_bytes),
		cmocka_unit_test(test_missized_loose_commit_is_named),
		cmocka_unit_test(test_pack_index_fanout_and_size_are_checked),
		cmocka_unit_test(test_pack_header_must_match_its_index),
		cmocka_unit_test(test_version_1_index_is_read),
		cmocka_unit_test(test_pack_check_is_remembered_by_file_identity),
		cmocka_unit_test(test_damaged_loose_objects_are_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
