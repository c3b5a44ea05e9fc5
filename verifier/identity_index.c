/* identity_index.c - an upstream repository's identity keys on disk: made once, extended from its refs' tips, probed in place. */
#include "verifier/identity_index.h"
#include "verifier/identity_internal.h"
#include "common/array.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/map.h"
#include "common/pagefile.h"
#include "common/search.h"
#include "common/testpoint.h"
#include "verifier/match.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

/* The fewest entries a run holds, whatever the working memory given. */
#define RUN_MIN 16

static const key_kind kinds[] = {
	{ ".idx", PG_IDENTITY_INDEX_KEY, pg_identity_hash_keys, pg_identity_hash },
	{ ".subj", PG_SUBJECT_INDEX_KEY, pg_author_subject_hash_keys, pg_author_subject_hash },
};

void pg_identity_put64(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Spelled out, so that the compiler makes it one load (a loop it left a loop: half a checksum's time). */
uint64_t pg_identity_get64(const unsigned char *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
	       (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	       (uint64_t)p[7] << 56;
}

void pg_identity_put32(unsigned char *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

uint32_t pg_identity_get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The checksum's state before n bytes. */
uint64_t pg_identity_checksum_start(uint64_t n)
{
	return 0x243f6a8885a308d3ULL ^ n;
}

static uint64_t rotl64(uint64_t x, unsigned k)
{
	return x << k | x >> (64 - k);
}

/*
 * h past p[0..n): blocks of 32 bytes, then whole words, then (only at the
 * end of the bytes) the bytes left.  A block's four words are mixed apart
 * (each multiplied by an odd constant: a word changed changes the mix) and
 * folded into h with one multiplication, so the chain from one block to
 * the next waits on one multiplication, not four: extending an index of a
 * million commits checked and checksummed 36 MB several times over, half
 * of a second ref's first verify (format 3 chained a word at a time).
 * Streamed, every part but the last is a whole number of blocks.
 */
uint64_t pg_identity_checksum_more(uint64_t h, const unsigned char *p, size_t n)
{
	size_t i = 0;

	for (; i + 32 <= n; i += 32) {
		uint64_t a = pg_identity_get64(p + i) * 0x9e3779b97f4a7c15ULL;
		uint64_t b = pg_identity_get64(p + i + 8) * 0xc2b2ae3d27d4eb4fULL;
		uint64_t c = pg_identity_get64(p + i + 16) * 0x165667b19e3779f9ULL;
		uint64_t d = pg_identity_get64(p + i + 24) * 0x27d4eb2f165667c5ULL;

		h ^= a ^ rotl64(b, 17) ^ rotl64(c, 31) ^ rotl64(d, 47);
		h *= 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	for (; i + 8 <= n; i += 8) {
		h ^= pg_identity_get64(p + i);
		h *= 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	for (; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* A checksum that catches damage, not an adversary: the directory is ours. */
uint64_t pg_identity_checksum(const unsigned char *p, size_t n)
{
	return pg_identity_checksum_more(pg_identity_checksum_start(n), p, n);
}

/* --- the key's fingerprint -------------------------------------------------------- */

/*
 * Commits that exercise what an identity key may look at: author, date and
 * zone, the message before the trailers, trailers of every kind, quoted
 * commit ids, headers.  A key function that treats any of them differently
 * gives another fingerprint, and every index is made again.
 */
static const char *const samples[] = {
	"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
	"author A U Thor <author@example.org> 1600000000 +0200\n"
	"committer C O Mitter <committer@example.org> 1600000100 -0700\n"
	"\nsubsys: a plain change\n\nWhy it is needed.\n",
	"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
	"parent 1111111111111111111111111111111111111111\n"
	"author Ånna Ümlaut <anna@example.org> 1500000000 +0000\n"
	"committer Top <top@example.org> 1500000000 +0000\n"
	"\nfs: fix the thing introduced by commit 1234567890ab (\"fs: add the thing\")\n\n"
	"Commit 0123456789abcdef0123456789abcdef01234567 (\"fs: add the thing\")\n"
	"broke it; see also commit deadbeefcafe.\n\n"
	"Fixes: 1234567890ab (\"fs: add the thing\")\n"
	"Reviewed-by: R <r@example.org>\n"
	"Signed-off-by: Ånna Ümlaut <anna@example.org>\n"
	"Link: https://lore.kernel.org/r/20200101000000.1-1-anna@example.org\n"
	"(cherry picked from commit 89abcdef0123456789abcdef0123456789abcdef)\n",
	"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
	"parent 1111111111111111111111111111111111111111\n"
	"parent 2222222222222222222222222222222222222222\n"
	"author Top <top@example.org> 1700000000 -0800\n"
	"committer Top <top@example.org> 1700000000 -0800\n"
	"mergetag object 2222222222222222222222222222222222222222\n"
	" type commit\n tag sub-for-linus\n tagger Sub <sub@example.org> 1699990000 +0100\n"
	" \n sub updates\n"
	"encoding ISO-8859-1\n"
	"\nMerge tag 'sub-for-linus' of git://git.example.org/sub\n\n"
	"Pull sub updates from Sub:\n\n - one\n - two\n",
	"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
	"author  <> 0 +0000\n"
	"committer  <> 0 +0000\n"
	"\n",
	"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n"
	"author Crlf <crlf@example.org> 1234567890 +0530\r\n"
	"committer Crlf <crlf@example.org> 1234567890 +0530\r\n"
	"\r\nsubject with CR\r\n\r\nSigned-off-by: Crlf <crlf@example.org>\r\n",
};

static uint64_t fingerprint_value[PG_ARRAY_SIZE(kinds)];
static int fingerprint_err;
static const char *fingerprint_why;
static pthread_once_t fingerprint_once = PTHREAD_ONCE_INIT;

/*
 * A build hashes the keys read alone (pg_commit_keys_parse), a probe those
 * of the parsed commit (pg_commit_parse): should they ever differ, every
 * probe would miss what the index holds, so the samples are hashed both
 * ways and an index is neither made nor opened when they differ.
 */
static void compute_fingerprint(void)
{
	uint64_t h[PG_ARRAY_SIZE(kinds)];
	size_t i, k;

	for (k = 0; k < PG_ARRAY_SIZE(kinds); k++)
		h[k] = 0xcbf29ce484222325ULL;
	for (i = 0; i < PG_ARRAY_SIZE(samples); i++) {
		size_t len = strlen(samples[i]);
		pg_commit *parsed = NULL;
		pg_commit_keys c;
		bool differ = false;

		fingerprint_why = "a sample commit does not parse";
		/* read as a build reads them */
		if ((fingerprint_err = pg_commit_keys_parse(&c, samples[i], len)) < 0 ||
		    (fingerprint_err = pg_commit_parse(&parsed, NULL, samples[i], len)) < 0)
			return;
		for (k = 0; k < PG_ARRAY_SIZE(kinds); k++) {
			uint64_t key = kinds[k].key(&c);

			/* a test's fault: the parsed commit's key one off */
			differ = differ || key != kinds[k].of_commit(parsed) +
						     (pg_testfault("index", "sample keys") ? 1 : 0);
			h[k] = (h[k] ^ key) * 0x100000001b3ULL;
			h[k] ^= h[k] >> 31;
		}
		pg_commit_free(parsed);
		if (differ) {
			fingerprint_why = "a sample commit's keys read alone are not its parse's";
			fingerprint_err = PG_EINVALID;
			return;
		}
	}
	memcpy(fingerprint_value, h, sizeof(h));
}

static int key_fingerprint(uint64_t *out, const key_kind *kind)
{
	pthread_once(&fingerprint_once, compute_fingerprint);
	*out = fingerprint_value[kind - kinds];
	return fingerprint_err < 0 ? pg_error_set(fingerprint_err, "identity index: %s",
						   fingerprint_why) : 0;
}

/* --- entries ---------------------------------------------------------------------- */

int pg_identity_entry_cmp(const void *a, const void *b)
{
	uint64_t ka = pg_identity_get64(a), kb = pg_identity_get64(b);

	if (ka != kb)
		return ka < kb ? -1 : 1;
	return memcmp((const unsigned char *)a + 16, (const unsigned char *)b + 16, PG_OID_RAWSZ);
}

void pg_identity_entry_put(unsigned char *e, uint64_t key, int64_t author_time, const pg_oid *id)
{
	pg_identity_put64(e, key);
	pg_identity_put64(e + 8, (uint64_t)author_time);
	memcpy(e + 16, id->id, PG_OID_RAWSZ);
}

/* Commits read of count so far, on r's progress function: a first index takes seconds. */
static void reading(pg_repo *r, size_t done, size_t count, uint64_t t0)
{
	pg_progress p = { .stage = "index", .transient = true, .done = done, .total = count,
			  .unit = "commits" };
	pg_buf line = PG_BUF_INIT;

	p.elapsed_ms = pg_progress_now_ms() - t0;
	p.line = "";
	if (pg_progress_format(&line, &p) == 0)
		p.line = line.ptr;
	pg_repo_progress(r, &p);
	pg_buf_release(&line);
}

/* Sorted entries e[0..n), each commit once: how many are left. */
size_t pg_identity_unique_entries(unsigned char *e, size_t n)
{
	size_t i, k = n ? 1 : 0;

	for (i = 1; i < n; i++)
		if (pg_identity_entry_cmp(e + (k - 1) * ENTRY, e + i * ENTRY))
			memmove(e + k++ * ENTRY, e + i * ENTRY, ENTRY);
	return k;
}

/* Where a build's runs go, how many entries each holds, and how many commits a first index lists at once. */
typedef struct build {
	const char *dir;
	size_t cap;
	size_t share;
} build;

/* What entries_of's reading of each commit adds it to. */
typedef struct reader {
	pg_repo *r;
	runs *out, *other;
	const key_kind *kind, *other_kind;
	size_t done, count;
	uint64_t t0, shown;
} reader;

static int read_one(void *ctx, size_t i, const pg_oid *id, const char *data, size_t len)
{
	reader *d = ctx;
	pg_commit_keys c;
	int err;

	(void)i;
	/* a look at the clock every 4096 commits, a line at most every 100 ms */
	d->done++;
	if (!(d->done & 4095) && pg_progress_now_ms() - d->shown >= 100) {
		d->shown = pg_progress_now_ms();
		reading(d->r, d->done, d->count, d->t0);
	}
	if ((err = pg_commit_keys_parse(&c, data, len)) < 0)
		return err;
	if ((err = pg_identity_runs_add(d->out, d->kind->key(&c), c.time, id)) == 0 && d->other)
		err = pg_identity_runs_add(d->other, d->other_kind->key(&c), c.time, id);
	return err;
}

/*
 * The entries of ids[0..count), or of the commits of the walk w (count of
 * them, read in shares of b->share), read from r, sorted into *out, and,
 * when other is not NULL, other_kind's of the same commits into *other:
 * each commit is read once for both indexes.  A commit listed twice (a
 * range walked by date under clock skew may list one again, from another
 * tip) has one entry: a file with two is damaged.
 */
static int entries_of(runs *out, runs *other, pg_repo *r, pg_repo_reach *w, const pg_oid *ids,
		      size_t count, const key_kind *kind, const key_kind *other_kind, const build *b)
{
	size_t cap = b->cap < count ? b->cap : count;
	reader d = { r, out, other, kind, other_kind, 0, count, 0, 0 };
	int err = 0;

	d.t0 = d.shown = pg_progress_now_ms();
	pg_identity_runs_init(out, b->dir, cap);
	if (other)
		pg_identity_runs_init(other, b->dir, cap);
	/*
	 * All in one reading, in the packs' order, each run filled from one
	 * stretch of them: read a run's worth at a time, the ids in id order,
	 * each run was spread over the whole pack, whose pages were let go of
	 * and faulted in again run after run.  A walk's commits are read in
	 * shares, each a stretch of the packs, so that where they lie and
	 * their ids are held for a share at a time (pg_repo_reach_read), not
	 * for the whole history.
	 */
	err = w ? pg_repo_reach_read(w, b->share, &out->shares, read_one, &d) :
		  pg_repo_read_commits_raw(r, ids, count, read_one, &d);
	if (err < 0)
		goto done;
	if (other)
		other->shares = out->shares;
	pg_identity_runs_finish(out);
	if (other)
		pg_identity_runs_finish(other);
done:
	if (err < 0) {
		pg_identity_runs_release(out);
		if (other)
			pg_identity_runs_release(other);
	}
	return err;
}

/*
 * Append the commits tip reaches and none of hide[0..nhide) does to *all
 * (*count of them, room for *alloc); *n says how many were.
 */
static int append_range(pg_oid **all, size_t *count, size_t *alloc, size_t *n, pg_repo *r,
			const pg_oid *tip, const pg_oid *hide, size_t nhide)
{
	pg_oid *ids = NULL;
	int err;

	*n = 0;
	if ((err = pg_repo_walk_range(&ids, n, r, tip, hide, nhide)) == 0 &&
	    (err = PG_ARRAY_GROW(*all, *count + *n + 1, *alloc)) == 0) {
		if (*n)
			memcpy(*all + *count, ids, *n * sizeof(*ids));
		*count += *n;
	}
	free(ids);
	return err;
}

/*
 * The commits reachable from one of tips[0..ntips) and from none of
 * hides[0..nhides), into *out (malloc()ed): each tip's range hides the
 * tips before it too, so no commit comes twice (git rev-list TIP... ^HIDE...).
 */
static int walk_new(pg_oid **out, size_t *n, pg_repo *r, const pg_oid *tips, size_t ntips,
		    const pg_oid *hides, size_t nhides)
{
	pg_oid *all = NULL, *hide = NULL;
	size_t count = 0, alloc = 0, k, i;
	int err = 0;

	*out = NULL;
	*n = 0;
	/* every commit: a bit each where the commit-graph has it */
	if (!nhides)
		return pg_repo_walk_all(out, n, r, tips, ntips);
	if (!(hide = malloc((nhides + ntips + 1) * sizeof(*hide))))
		return pg_error_oom();
	if (nhides)
		memcpy(hide, hides, nhides * sizeof(*hide));
	for (i = 0; i < ntips; i++) {
		if ((err = append_range(&all, &count, &alloc, &k, r, &tips[i], hide, nhides)) < 0)
			goto done;
		hide[nhides++] = tips[i];
	}
	*out = all;
	*n = count;
	all = NULL;
done:
	free(all);
	free(hide);
	return err;
}

/*
 * The other kind's entries of the last commits read_new read: verify opens
 * one upstream's identity index, then its subject index, and a first
 * verify makes both from every commit of the upstream.  The entries name
 * commits by id, so they are the same in any repository: what decides is
 * the range (its tips and hides), not the pg_repo.  Kept for the thread
 * until the other kind takes it, another read replaces it, or
 * pg_identity_index_drop_spare.
 */
static _Thread_local struct {
	const key_kind *kind; /* whose entries e are */
	pg_oid *range;        /* the tips, then the hides */
	size_t ntips, nhides;
	bool have;
	runs e;
} spare;

void pg_identity_index_drop_spare(void)
{
	pg_identity_runs_release(&spare.e);
	free(spare.range);
	memset(&spare, 0, sizeof(spare));
}

static bool spare_fits(const key_kind *kind, const pg_oid *tips, size_t ntips,
		       const pg_oid *hides, size_t nhides)
{
	return spare.kind == kind && spare.ntips == ntips && spare.nhides == nhides &&
	       (!ntips || !memcmp(spare.range, tips, ntips * sizeof(*tips))) &&
	       (!nhides || !memcmp(spare.range + ntips, hides, nhides * sizeof(*hides)));
}

/* The entries of the commits tips have and hides had not, sorted into *out. */
static int read_new(runs *out, pg_repo *r, const pg_oid *tips, size_t ntips,
		    const pg_oid *hides, size_t nhides, const key_kind *kind, const build *b)
{
	pg_repo_reach *w = NULL;
	pg_oid *ids = NULL;
	size_t count = 0;
	int err;

	const key_kind *other_kind = kind == &kinds[0] ? &kinds[1] : &kinds[0];
	runs other;

	pg_identity_runs_release(out);
	if (spare.have && spare_fits(kind, tips, ntips, hides, nhides)) {
		pg_identity_runs_move(out, &spare.e);
		pg_identity_index_drop_spare();
		return 0;
	}
	pg_identity_index_drop_spare();
	/* a first index: every commit, a bit each where the commit-graph has it, read in shares */
	if (!nhides) {
		if ((err = pg_repo_reach_all(&w, &count, r, tips, ntips)) == 0)
			err = entries_of(out, &other, r, w, NULL, count, kind, other_kind, b);
		pg_repo_reach_free(w);
	} else if ((err = walk_new(&ids, &count, r, tips, ntips, hides, nhides)) == 0) {
		err = entries_of(out, &other, r, NULL, ids, count, kind, other_kind, b);
	}
	if (err == 0) {
		if (!(spare.range = malloc((ntips + nhides + 1) * sizeof(*spare.range)))) {
			pg_identity_runs_release(&other);
			free(ids);
			return 0; /* no spare: the other kind reads again */
		}
		if (ntips)
			memcpy(spare.range, tips, ntips * sizeof(*tips));
		if (nhides)
			memcpy(spare.range + ntips, hides, nhides * sizeof(*hides));
		spare.kind = other_kind;
		spare.ntips = ntips;
		spare.nhides = nhides;
		spare.have = true;
		pg_identity_runs_move(&spare.e, &other);
	}
	free(ids);
	return err;
}

int pg_identity_oid_cmp(const void *a, const void *b)
{
	return memcmp(a, b, PG_OID_RAWSZ);
}

/*
 * git wrote the commit-graph again (a gc, a fetch that writes it): the
 * index holds what the old graph said its tips reach.  Walk the new graph
 * from the tips, which reads no commit it holds, and compare the commits it
 * reaches with the index's: the index is kept when it holds no commit the
 * walk does not reach, and the commits it lacks are read and added
 * (*add).  *keep false: it holds a commit the new graph does not reach,
 * and is made again.  So a graph that lied is found out when git writes
 * it again, at the cost of a walk, not of reading every commit again.
 */
static int reconcile(bool *keep, runs *add, pg_repo *r, const pg_oid *tips, size_t ntips,
		     const unsigned char *old, size_t count, const key_kind *kind, const build *b)
{
	pg_oid *ids = NULL, *lack = NULL;
	unsigned char *have = NULL;
	size_t n = 0, nlack = 0, i, k;
	int err;

	*keep = false;
	pg_identity_runs_release(add);
	if ((err = walk_new(&ids, &n, r, tips, ntips, NULL, 0)) < 0)
		return err;
	if ((count && !(have = malloc(count * PG_OID_RAWSZ))) ||
	    (n && !(lack = malloc(n * sizeof(*lack))))) {
		err = pg_error_oom();
		goto done;
	}
	for (i = 0; i < count; i++)
		memcpy(have + i * PG_OID_RAWSZ, old + i * ENTRY + 16, PG_OID_RAWSZ);
	qsort(have, count, PG_OID_RAWSZ, pg_identity_oid_cmp);
	qsort(ids, n, sizeof(*ids), pg_identity_oid_cmp);
	for (i = 0, k = 0; i < n; i++) {
		if (i && !pg_oid_cmp(&ids[i - 1], &ids[i]))
			continue; /* listed twice by the walk: once */
		if (k < count && memcmp(have + k * PG_OID_RAWSZ, ids[i].id, PG_OID_RAWSZ) < 0)
			goto done; /* the index holds a commit the walk does not reach */
		if (k < count && !memcmp(have + k * PG_OID_RAWSZ, ids[i].id, PG_OID_RAWSZ))
			k++;
		else
			lack[nlack++] = ids[i];
	}
	if (k < count)
		goto done;
	if ((err = entries_of(add, NULL, r, NULL, lack, nlack, kind, NULL, b)) == 0)
		*keep = true;
done:
	free(ids);
	free(lack);
	free(have);
	return err;
}

/* --- the file --------------------------------------------------------------------- */

static size_t segments_of(size_t count)
{
	return count / SEGMENT + (count % SEGMENT != 0);
}

void pg_identity_unmap(pg_identity_index *x)
{
	pg_pagefile_free(x->f);
	x->f = NULL;
	free(x->segments);
	free(x->checked);
	x->segments = NULL;
	x->checked = NULL;
	x->nsegments = 0;
}

void pg_identity_tips_free(tip_slot *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].ref);
	free(v);
}

void pg_identity_index_free(pg_identity_index *x)
{
	if (!x)
		return;
	pg_identity_unmap(x);
	free(x->path);
	pg_identity_tips_free(x->tips, x->ntips);
	free(x->others);
	free(x);
}

/*
 * Segment s of the file holds: its checksum is the table's, its entries
 * are in order, and its first is past the entry before it.  Checked once.
 */
static int check_segment(pg_identity_index *x, size_t s)
{
	unsigned char e[(SEGMENT + 1) * ENTRY];
	size_t first = s * SEGMENT, n = x->count - first < SEGMENT ? x->count - first : SEGMENT;
	size_t i, from = first ? 1 : 0;
	int err;

	if (x->checked[s / 8] & (1u << (s % 8)))
		return 0;
	if ((err = pg_pagefile_read(x->f, x->entries_off + (uint64_t)(first - from) * ENTRY, e,
				    (n + from) * ENTRY)) < 0)
		goto damaged;
	if (pg_identity_checksum(e + from * ENTRY, n * ENTRY) != x->segments[s])
		goto damaged;
	for (i = 1; i < n + from; i++)
		if (pg_identity_entry_cmp(e + (i - 1) * ENTRY, e + i * ENTRY) >= 0)
			goto damaged;
	x->checked[s / 8] |= (unsigned char)(1u << (s % 8));
	return 0;
damaged:
	x->damaged = true;
	return pg_error_set(PG_EINVALID, "identity index '%s' is damaged (entries %zu to %zu)",
			    x->path, first, first + n);
}

/* Entry i, into e (ENTRY bytes), from a segment that holds. */
static int entry_at(const pg_identity_index *cx, size_t i, unsigned char *e)
{
	pg_identity_index *x = (pg_identity_index *)cx; /* the segments' checks are a cache */
	int err;

	if ((err = check_segment(x, i / SEGMENT)) < 0)
		return err;
	return pg_pagefile_read(x->f, x->entries_off + (uint64_t)i * ENTRY, e, ENTRY);
}

/*
 * Open path.  0 with nothing open when it does not exist (*exists false)
 * or cannot be an index (made again).
 */
static int open_file(pg_identity_index *x, const char *path, bool *exists)
{
	int err = pg_pagefile_open(&x->f, path, CACHE_BLOCKS);

	*exists = err != PG_ENOTFOUND;
	if (err == PG_ENOTFOUND || err == PG_EINVALID) {
		pg_error_clear();
		return 0;
	}
	return err < 0 ? pg_error_wrap(err, "identity index") : 0;
}

/* Bytes the tips take on disk, their checksum included. */
size_t pg_identity_tips_size(const tip_slot *v, size_t n)
{
	size_t len = 4 + 8, i;

	for (i = 0; i < n; i++)
		len += PG_OID_RAWSZ + 4 + strlen(v[i].ref);
	return len;
}

void pg_identity_put_tips(unsigned char *p, const tip_slot *v, size_t n)
{
	unsigned char *start = p;
	size_t i, len;

	pg_identity_put32(p, (uint32_t)n);
	p += 4;
	for (i = 0; i < n; i++) {
		len = strlen(v[i].ref);
		memcpy(p, v[i].tip.id, PG_OID_RAWSZ);
		pg_identity_put32(p + PG_OID_RAWSZ, (uint32_t)len);
		memcpy(p + PG_OID_RAWSZ + 4, v[i].ref, len);
		p += PG_OID_RAWSZ + 4 + len;
	}
	pg_identity_put64(p, pg_identity_checksum(start, (size_t)(p - start)));
}

/*
 * The tips, from off to the file's end (len), which they must fill
 * exactly, their count, names and checksum holding.
 */
static bool read_tips(pg_identity_index *x, uint64_t off, uint64_t len)
{
	unsigned char *b = NULL, *p;
	size_t size, n, i, k;
	bool ok = false;

	if (len < off + 12 || len - off > 4 + PG_IDENTITY_INDEX_TIPS *
					      (PG_OID_RAWSZ + 4 + NAME_MAX_LEN) + 8)
		return false;
	size = (size_t)(len - off);
	if (!(b = malloc(size)) || pg_pagefile_read(x->f, off, b, size) < 0 ||
	    pg_identity_checksum(b, size - 8) != pg_identity_get64(b + size - 8) ||
	    (n = pg_identity_get32(b)) > PG_IDENTITY_INDEX_TIPS || !n ||
	    !(x->tips = calloc(n + 1, sizeof(*x->tips))))
		goto done;
	for (i = 0, p = b + 4; i < n; i++) {
		if ((size_t)(b + size - 8 - p) < PG_OID_RAWSZ + 4 ||
		    (k = pg_identity_get32(p + PG_OID_RAWSZ)) > NAME_MAX_LEN ||
		    (size_t)(b + size - 8 - p) - PG_OID_RAWSZ - 4 < k ||
		    !(x->tips[i].ref = malloc(k + 1)))
			goto done;
		x->ntips++;
		memcpy(x->tips[i].tip.id, p, PG_OID_RAWSZ);
		memcpy(x->tips[i].ref, p + PG_OID_RAWSZ + 4, k);
		x->tips[i].ref[k] = '\0';
		p += PG_OID_RAWSZ + 4 + k;
	}
	ok = p == b + size - 8;
done:
	free(b);
	return ok;
}

/*
 * Whether the open file is a whole index of this upstream with this key;
 * *why says what is wrong: its header and the table of its segments are
 * checked, its entries are not (check_order, all_entries, check_segment).
 */
bool pg_identity_header_ok(pg_identity_index *x, const char *name, uint64_t fingerprint,
	       const char **why)
{
	const unsigned char *h = x->head;
	uint64_t len = x->f ? pg_pagefile_size(x->f) : 0, body;
	size_t name_len = strlen(name), count, nseg, i;
	char stored[NAME_MAX_LEN];

	*why = "damaged";
	if (len < HEADER || pg_pagefile_read(x->f, 0, x->head, HEADER) < 0 ||
	    memcmp(h, MAGIC, 8)) {
		pg_error_clear();
		return false;
	}
	/* another format or key is no damage: what pullgate writes changed */
	if (pg_identity_get32(h + 8) != FORMAT || pg_identity_get32(h + 12) != x->kind->version ||
	    pg_identity_get64(h + 16) != fingerprint) {
		*why = "key";
		return false;
	}
	if (pg_identity_checksum(h, 96) != pg_identity_get64(h + 96) || pg_identity_get32(h + 84) > 1)
		return false;
	count = (size_t)pg_identity_get64(h + 24);
	nseg = segments_of(count);
	body = len - HEADER;
	if (pg_identity_get32(h + 52) != name_len || body < name_len ||
	    pg_pagefile_read(x->f, HEADER, stored, name_len) < 0 ||
	    memcmp(stored, name, name_len) ||
	    pg_identity_get64(h + 24) > (body - name_len) / ENTRY ||
	    !read_tips(x, HEADER + name_len + (uint64_t)count * ENTRY + (uint64_t)nseg * 8, len)) {
		pg_error_clear();
		return false;
	}
	x->entries_off = HEADER + name_len;
	x->count = count;
	memcpy(x->tip.id, h + 32, PG_OID_RAWSZ);
	memcpy(x->graph.id, h + 64, PG_OID_RAWSZ);
	x->has_graph = pg_identity_get32(h + 84) == 1;
	if (!(x->segments = malloc(nseg * 8 + 1)) || !(x->checked = calloc(nseg / 8 + 1, 1))) {
		pg_error_clear();
		return false;
	}
	x->nsegments = nseg;
	if (pg_pagefile_read(x->f, x->entries_off + (uint64_t)count * ENTRY, x->segments,
			     nseg * 8) < 0 ||
	    pg_identity_checksum((const unsigned char *)x->segments, nseg * 8) !=
	    pg_identity_get64(h + 88)) {
		pg_error_clear();
		return false;
	}
	/* stored little-endian: each read before its slot is written */
	for (i = 0; i < nseg; i++)
		x->segments[i] = pg_identity_get64((const unsigned char *)x->segments + i * 8);
	return true;
}

/*
 * Adjacent entries in order at SAMPLES evenly spaced places (every pair in
 * a small file): entries reversed, or a wide region overwritten, are seen
 * at the cost of a few dozen block reads, without checksumming 36 MiB.
 */
static bool check_order(pg_identity_index *x)
{
	unsigned char e[2 * ENTRY];
	size_t j, n = x->count < 2 ? 0 : x->count - 1, step = n / SAMPLES + (n % SAMPLES != 0);

	for (j = 0; j < n; j += step ? step : 1) {
		if (pg_pagefile_read(x->f, x->entries_off + (uint64_t)j * ENTRY, e, 2 * ENTRY) < 0) {
			pg_error_clear();
			return false;
		}
		if (pg_identity_entry_cmp(e, e + ENTRY) >= 0)
			return false;
	}
	/* the last pair too: a step may pass it */
	if (n && (pg_pagefile_read(x->f, x->entries_off + (uint64_t)(n - 1) * ENTRY, e,
				   2 * ENTRY) < 0 || pg_identity_entry_cmp(e, e + ENTRY) >= 0)) {
		pg_error_clear();
		return false;
	}
	return true;
}

/*
 * Every entry of the open file, checked (every segment's checksum, the
 * order); NULL when damaged.  Read straight, not mapped:
 * the copy is enough to hold in memory.
 */
static int all_entries(unsigned char **out, pg_identity_index *x)
{
	unsigned char *e;
	size_t i;

	*out = NULL;
	if (x->count > SIZE_MAX / ENTRY - 1 || !(e = malloc(x->count * ENTRY + 1)))
		return pg_error_oom();
	if (pg_pagefile_pread(x->f, x->entries_off, e, x->count * ENTRY) < 0) {
		pg_error_clear();
		goto damaged;
	}
	for (i = 0; i < x->nsegments; i++) {
		size_t n = x->count - i * SEGMENT < SEGMENT ? x->count - i * SEGMENT : SEGMENT;

		if (pg_identity_checksum(e + i * SEGMENT * ENTRY, n * ENTRY) != x->segments[i])
			goto damaged;
	}
	for (i = 1; i < x->count; i++)
		if (pg_identity_entry_cmp(e + (i - 1) * ENTRY, e + i * ENTRY) >= 0)
			goto damaged;
	memset(x->checked, 0xff, x->nsegments / 8 + 1);
	*out = e;
	return 0;
damaged:
	free(e);
	return 0;
}

/* --- the budget ------------------------------------------------------------------- */

/* The files of one upstream: HASH.idx, HASH.subj, HASH.chain, HASH.others (and temporary ones). */
typedef struct group {
	char stem[32];
	uint64_t bytes;
	int64_t used;   /* the newest mtime of its files: when it was last used */
} group;

static int group_cmp(const void *a, const void *b)
{
	const group *x = a, *y = b;

	return x->used < y->used ? -1 : x->used > y->used;
}

/*
 * The files of dir by upstream; *total is their size.  A temporary file
 * younger than a day may be another writer's: it counts, it is kept.
 */
static int list_groups(group **out, size_t *n, uint64_t *total, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	group *v = NULL;
	size_t count = 0, alloc = 0, i;
	pg_buf path = PG_BUF_INIT;
	int err = 0;

	*out = NULL;
	*n = 0;
	*total = 0;
	if (!d)
		return errno == ENOENT ? 0 : pg_error_set(PG_EIO, "'%s': %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		const char *dot = strchr(de->d_name, '.');
		size_t stem = dot ? (size_t)(dot - de->d_name) : 0;
		struct stat st;

		if (!stem || stem >= sizeof(v->stem))
			continue;
		pg_buf_clear(&path);
		if ((err = pg_buf_printf(&path, "%s/%s", dir, de->d_name)) < 0)
			goto done;
		if (lstat(path.ptr, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		*total += (uint64_t)st.st_size;
		for (i = 0; i < count; i++)
			if (!strncmp(v[i].stem, de->d_name, stem) && !v[i].stem[stem])
				break;
		if (i == count) {
			if ((err = PG_ARRAY_GROW(v, count + 1, alloc)) < 0)
				goto done;
			memset(&v[count], 0, sizeof(v[count]));
			memcpy(v[count].stem, de->d_name, stem);
			count++;
		}
		v[i].bytes += (uint64_t)st.st_size;
		if ((int64_t)st.st_mtime > v[i].used)
			v[i].used = (int64_t)st.st_mtime;
	}
	*out = v;
	*n = count;
	v = NULL;
done:
	closedir(d);
	free(v);
	pg_buf_release(&path);
	return err;
}

int pg_identity_index_cache_size(uint64_t *out, const char *home)
{
	pg_buf dir = PG_BUF_INIT;
	group *v = NULL;
	size_t n = 0;
	int err;

	*out = 0;
	if ((err = pg_buf_printf(&dir, "%s/identity", home)) == 0)
		err = list_groups(&v, &n, out, dir.ptr);
	free(v);
	pg_buf_release(&dir);
	return err;
}

/*
 * Remove the least recently used upstreams' files until dir holds at most
 * budget bytes; never keep's nor keep_ref's (the files of the ref in use).  Another verify may have one of them open:
 * unlink removes the name, not the file, which stays readable (mapped or
 * by its descriptor) until it is closed, and a verify that writes its
 * index again makes a new file.  Nothing is ever read half-removed.
 */
static int prune(const char *dir, uint64_t budget, const char *keep, const char *keep_ref,
		 size_t *removed)
{
	group *v = NULL;
	size_t n = 0, i;
	uint64_t total = 0;
	pg_buf path = PG_BUF_INIT;
	int err;

	*removed = 0;
	if ((err = list_groups(&v, &n, &total, dir)) < 0 || total <= budget)
		goto done;
	qsort(v, n, sizeof(*v), group_cmp);
	for (i = 0; i < n && total > budget; i++) {
		static const char *const exts[] = { ".idx", ".subj", ".chain", ".others" };
		size_t k;

		if (!strcmp(v[i].stem, keep) || !strcmp(v[i].stem, keep_ref))
			continue;
		for (k = 0; k < PG_ARRAY_SIZE(exts); k++) {
			pg_buf_clear(&path);
			if ((err = pg_buf_printf(&path, "%s/%s%s", dir, v[i].stem, exts[k])) < 0)
				goto done;
			(void)unlink(path.ptr);
		}
		total -= v[i].bytes;
		(*removed)++;
	}
done:
	free(v);
	pg_buf_release(&path);
	return err;
}

/* --- opening ---------------------------------------------------------------------- */

/*
 * The index file at path of this upstream and kind, checked: the header
 * and the table of segments always, the order of a sample of entries, and
 * with full every entry.  false with *why when it cannot be used.
 */
static bool load_checked(pg_identity_index *x, const char *name, uint64_t fingerprint,
			 bool full, const char **why)
{
	bool whole = false;

	if (!pg_identity_header_ok(x, name, fingerprint, why))
		return false;
	*why = "damaged";
	if (!check_order(x))
		return false;
	if (full) {
		if (pg_identity_check_all(&whole, x) < 0) {
			pg_error_clear();
			return false;
		}
		return whole;
	}
	return true;
}

int pg_identity_index_load(pg_identity_index **out, const char *path, const char *upstream,
			   bool subjects, bool full)
{
	pg_identity_index *x = NULL;
	uint64_t fingerprint;
	const char *why = NULL;
	bool exists = false;
	int err;

	*out = NULL;
	if (strlen(upstream) > NAME_MAX_LEN)
		return pg_error_set(PG_EINVALID, "identity index: upstream name too long");
	if (!(x = calloc(1, sizeof(*x))))
		return pg_error_oom();
	x->kind = &kinds[subjects ? 1 : 0];
	if ((err = key_fingerprint(&fingerprint, x->kind)) < 0 ||
	    (err = open_file(x, path, &exists)) < 0)
		goto done;
	if (!(x->path = pg_strdup(path))) {
		err = PG_ENOMEM;
		goto done;
	}
	if (!x->f)
		err = pg_error_set(exists ? PG_EINVALID : PG_ENOTFOUND, "identity index '%s' %s",
				   path, exists ? "is no regular file" : "does not exist");
	else if (!load_checked(x, upstream, fingerprint, full, &why))
		err = pg_error_set(PG_EINVALID, "identity index '%s' is %s", path,
				   !strcmp(why, "key") ? "of another format or key" : "damaged");
done:
	if (err < 0) {
		pg_identity_index_free(x);
		return err;
	}
	*out = x;
	return 0;
}

/* What the index took, once it was built or extended: a line of its own (a job's log keeps it). */
static void said_done(pg_repo *r, const pg_identity_index_info *info, const key_kind *kind,
		      size_t count, uint64_t t0)
{
	pg_progress p = { .stage = "index" };
	const char *what = kind == &kinds[0] ? "identity index" : "subject index";
	char line[160];
	uint64_t ms = pg_progress_now_ms() - t0;

	if (info->action == PG_IDENTITY_INDEX_EXTENDED)
		snprintf(line, sizeof(line), "%s extended by %zu commits to %zu, in %llu.%01llu s",
			 what, info->added, count, (unsigned long long)(ms / 1000),
			 (unsigned long long)(ms % 1000 / 100));
	else
		snprintf(line, sizeof(line), "%s built (%s): %zu commits, in %llu.%01llu s", what,
			 info->why, count, (unsigned long long)(ms / 1000),
			 (unsigned long long)(ms % 1000 / 100));
	p.line = line;
	p.elapsed_ms = ms;
	pg_repo_progress(r, &p);
}

/*
 * Whether the file at path is still the one seen (stat before it was
 * opened; none when !seen): every write renames a new file over it.
 */
static bool same_file(const char *path, bool seen, const struct stat *st)
{
	struct stat now;

	if (stat(path, &now) < 0)
		return !seen && errno == ENOENT;
	return seen && now.st_dev == st->st_dev && now.st_ino == st->st_ino &&
	       now.st_size == st->st_size;
}

/*
 * A format 2 index was one per ref, named for the upstream and the ref
 * (ref_stem, which the ref's .chain file keeps): once the ref is opened in
 * format 3 it is never read again, so it goes.  Only a file that says so
 * (an older format, that name) is removed.
 */
static void remove_per_ref(const char *dir, const char *ref_stem, const char *name,
			   const key_kind *kind)
{
	pg_buf path = PG_BUF_INIT;
	pg_pagefile *f = NULL;
	unsigned char h[HEADER];
	size_t len = strlen(name);
	char *stored = NULL;

	if (pg_buf_printf(&path, "%s/%s%s", dir, ref_stem, kind->ext) == 0 &&
	    pg_pagefile_open(&f, path.ptr, 4) == 0 && pg_pagefile_read(f, 0, h, HEADER) == 0 &&
	    !memcmp(h, MAGIC, 8) && pg_identity_get32(h + 8) < FORMAT && pg_identity_get32(h + 52) == len &&
	    (stored = malloc(len + 1)) && pg_pagefile_read(f, HEADER, stored, len) == 0 &&
	    !memcmp(stored, name, len))
		(void)unlink(path.ptr);
	pg_error_clear();
	free(stored);
	pg_pagefile_free(f);
	pg_buf_release(&path);
}

/* What an open read and meant to write, let go of: it starts again. */
static void drop_work(runs *add, unsigned char **old, pg_oid **from, tip_slot **tips,
		      size_t *ntips)
{
	pg_identity_runs_release(add);
	free(*old);
	free(*from);
	pg_identity_tips_free(*tips, *ntips);
	*old = NULL;
	*from = NULL;
	*tips = NULL;
	*ntips = 0;
}

static int open_kind(pg_identity_index **out, pg_repo *r, const char *home, const char *upstream,
		     const pg_oid *tip, const pg_identity_index_opts *opts,
		     pg_identity_index_info *info, const key_kind *kind)
{
	pg_identity_index *x = NULL;
	pg_identity_index_info dummy;
	pg_buf path = PG_BUF_INIT, dir = PG_BUF_INIT, lock = PG_BUF_INIT, refname = PG_BUF_INIT;
	unsigned char *old = NULL;
	runs add;
	build b;
	tip_slot *tips = NULL;
	pg_oid *from = NULL;
	size_t ntips = 0;
	uint64_t fingerprint, budget = opts && opts->cache_size ? opts->cache_size :
				       PG_IDENTITY_INDEX_CACHE_DEFAULT;
	uint64_t work = opts && opts->work_mem ? opts->work_mem : PG_IDENTITY_INDEX_WORK_DEFAULT;
	char stem[32], ref_stem[32];
	const char *why = "new", *ref = opts && opts->ref ? opts->ref : "";
	uint64_t t0 = pg_progress_now_ms();
	pg_oid graph;
	struct stat seen_st;
	bool extend = false, current = false, exists = false, has_graph = false, loaded = false;
	bool seen = false, retried = false, recorded = true, whole = false;
	int err, fd = -1;

	*out = NULL;
	pg_identity_runs_init(&add, NULL, 0);
	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	if (strlen(upstream) > NAME_MAX_LEN || strlen(ref) > NAME_MAX_LEN)
		return pg_error_set(PG_EINVALID, "identity index: upstream name too long");
	if ((err = key_fingerprint(&fingerprint, kind)) < 0 ||
	    (err = pg_repo_graph_id(&graph, &has_graph, r)) < 0)
		return err;
	snprintf(stem, sizeof(stem), "%016llx",
		 (unsigned long long)pg_hash_bytes(upstream, strlen(upstream)));
	if ((err = pg_buf_printf(&refname, "%s\n%s", upstream, ref)) < 0 ||
	    (err = pg_buf_printf(&dir, "%s/identity", home)) < 0 ||
	    (err = pg_mkdir_p(dir.ptr)) < 0 ||
	    (err = pg_buf_printf(&path, "%s/%s%s", dir.ptr, stem, kind->ext)) < 0)
		goto done;
	snprintf(ref_stem, sizeof(ref_stem), "%016llx",
		 (unsigned long long)pg_hash_bytes(refname.ptr, refname.len));
	/*
	 * Runs of both kinds are filled at once, and one is merged while the
	 * other waits (three runs' entries), and a first index lists its
	 * commits a share at a time, while the runs are filled: a quarter of
	 * work for each.  Beside them, the walk's bits and where each commit
	 * lies (8 bytes, pg_repo_reach_read) are the whole history's.
	 */
	b.dir = dir.ptr;
	b.cap = work / (4 * ENTRY) < RUN_MIN ? RUN_MIN : (size_t)(work / (4 * ENTRY));
	b.share = work / (4 * PG_REPO_READ_BYTES) < RUN_MIN ? RUN_MIN :
		  (size_t)(work / (4 * PG_REPO_READ_BYTES));
	remove_per_ref(dir.ptr, ref_stem, refname.ptr, kind);
again:
	/*
	 * Read without the lock: every write renames a whole file into place.
	 * A write takes the lock, and when another wrote meanwhile, all of it
	 * is done again under the lock, from what that one wrote.
	 */
	pg_identity_index_free(x);
	drop_work(&add, &old, &from, &tips, &ntips);
	memset(info, 0, sizeof(*info));
	why = "new";
	extend = current = exists = loaded = retried = false;
	recorded = true;
	if (!(x = calloc(1, sizeof(*x)))) {
		err = pg_error_oom();
		goto done;
	}
	x->kind = kind;
	memcpy(x->ref_stem, ref_stem, sizeof(ref_stem));
	if (!(x->path = pg_strdup(path.ptr))) {
		err = PG_ENOMEM;
		goto done;
	}
	seen = stat(path.ptr, &seen_st) == 0;
	if ((err = open_file(x, path.ptr, &exists)) < 0)
		goto done;
	if (exists)
		why = "damaged";
	if (opts && opts->remake) {
		why = "damaged";
	} else if (x->f && (loaded = load_checked(x, upstream, fingerprint,
						   opts && opts->full_check, &why))) {
		bool same_graph = x->has_graph == has_graph &&
				  (!has_graph || !pg_oid_cmp(&x->graph, &graph));
		const tip_slot *mine;
		size_t room;

		/*
		 * The ref's last tip gone or not below the new one: its history was
		 * rewritten, and what only the old tip reached must go.  So must
		 * what a tip no longer in the repository reached.
		 */
		why = "rewritten";
		if (pg_identity_tips_gone(x, r))
			goto build;
		mine = pg_identity_find_tip(x, ref);
		room = x->ntips - (mine != NULL);
		if (mine && pg_oid_cmp(&mine->tip, tip)) {
			err = pg_repo_is_ancestor(r, &mine->tip, tip);
			if (err < 0)
				pg_error_clear();
			if (err != 1) {
				err = 0;
				goto build;
			}
		}
		err = 0;
		if (same_graph && mine && !pg_oid_cmp(&mine->tip, tip)) {
			current = true;
		} else if (same_graph) {
			/* only what no tip reaches: a ref moved, or a new ref */
			if ((err = pg_identity_tip_ids(&from, x->tips, x->ntips)) < 0 ||
			    (err = read_new(&add, r, tip, 1, from, x->ntips, kind, &b)) < 0)
				goto done;
			/* a ref whose every commit is held (below another) needs no tip of its own */
			current = add.total == 0;
			extend = !current;
			/* a ref that brings commits, past the most refs recorded: the least recent goes */
			if (extend && room >= PG_IDENTITY_INDEX_TIPS) {
				why = "tips";
				extend = false;
				goto build;
			}
		} else {
			/*
			 * Read through another commit-graph (git wrote it again): what it
			 * was made from is gone, so what the index holds is compared with
			 * what the new graph reaches from the tips (reconcile).
			 */
			why = "graph";
			extend = true;
		}
		/* every entry checked before the index is extended: merged, each is read again */
		if (extend && (err = pg_identity_check_all(&whole, x)) < 0)
			goto done;
		if (extend && !whole) {
			extend = false;
			why = "damaged";
		}
		/* the ids it holds, against the new graph's (a rare walk: all of them) */
		if (extend && !same_graph && (err = all_entries(&old, x)) < 0)
			goto done;
		if (extend && !same_graph && !old) {
			extend = false;
			why = "damaged";
		}
		if (extend && !same_graph) {
			if ((err = pg_identity_record_tips(&tips, &ntips, &recorded, r, x->tips, x->ntips, ref,
					       tip, false)) < 0 ||
			    (err = pg_identity_tip_ids(&from, tips, ntips)) < 0 ||
			    (err = reconcile(&extend, &add, r, from, ntips, old, x->count, kind,
					     &b)) < 0)
				goto done;
			free(old);
			old = NULL;
		}
	}
build:
	if (current) {
		x->tip = *tip;
		if ((err = pg_identity_others_cached(x, r, tip, x->tips, &x->ntips, false,
					 &info->others_cached)) < 0)
			goto done;
		info->action = PG_IDENTITY_INDEX_CURRENT;
		info->others = x->nothers;
		/* its mtime says when it was last used: the budget removes the oldest */
		(void)utimensat(AT_FDCWD, path.ptr, NULL, 0);
		goto done;
	}
	if (!tips && (err = pg_identity_record_tips(&tips, &ntips, &recorded, r, loaded ? x->tips : NULL,
					loaded ? x->ntips : 0, ref, tip, extend)) < 0)
		goto done;
	if (!extend) {
		/* from every tip: the other refs' commits stay held */
		pg_identity_runs_release(&add);
		free(from);
		from = NULL;
		if ((err = pg_identity_tip_ids(&from, tips, ntips)) < 0 ||
		    (err = read_new(&add, r, from, ntips, NULL, 0, kind, &b)) < 0)
			goto done;
	}
	if ((err = pg_identity_others_cached(x, r, tip, tips, &ntips, recorded, &info->others_cached)) < 0)
		goto done;
	/* one writer at a time: of two refs extending it at once, neither loses the other's */
	if (fd < 0) {
		if ((err = pg_buf_printf(&lock, "%s/identity-locks", home)) < 0 ||
		    (err = pg_mkdir_p(lock.ptr)) < 0 ||
		    (err = pg_buf_printf(&lock, "/%s.lock", stem)) < 0 ||
		    (err = pg_lock_file(&fd, lock.ptr, true)) < 0)
			goto done;
		if (!same_file(path.ptr, seen, &seen_st))
			goto again;
	}
	info->runs = add.nruns;
	info->shares = add.shares;
	if ((err = pg_identity_write_index(x, path.ptr, upstream, fingerprint, tip,
					   has_graph ? &graph : NULL, extend, &add, &info->added,
					   tips, ntips)) < 0)
		goto done;
	tips = NULL; /* x's now */
	ntips = 0;
	info->action = extend ? PG_IDENTITY_INDEX_EXTENDED : PG_IDENTITY_INDEX_BUILT;
	info->why = extend ? NULL : why;
	info->others = x->nothers;
	said_done(r, info, kind, x->count, t0);
	/* the directory grew: back under the budget, this upstream's files and the ref's kept */
	if ((err = prune(dir.ptr, budget, stem, ref_stem, &info->pruned)) < 0)
		goto done;
done:
	if (err < 0 && loaded && !retried && pg_identity_drop_broken(x, r, tip, err)) {
		/* another ref's history can no longer be walked: made from the rest */
		retried = true;
		drop_work(&add, &old, &from, &tips, &ntips);
		extend = current = false;
		why = "rewritten";
		err = 0;
		goto build;
	}
	if (fd >= 0)
		close(fd);
	drop_work(&add, &old, &from, &tips, &ntips);
	pg_buf_release(&path);
	pg_buf_release(&dir);
	pg_buf_release(&lock);
	pg_buf_release(&refname);
	if (err < 0) {
		pg_identity_index_free(x);
		return err;
	}
	*out = x;
	return 0;
}

int pg_identity_index_ref_file(pg_buf *out, const pg_identity_index *x, const char *ext)
{
	const char *slash = strrchr(x->path, '/');

	return pg_buf_printf(out, "%.*s/%s%s", slash ? (int)(slash - x->path) : 1,
			     slash ? x->path : ".", x->ref_stem, ext);
}

int pg_identity_index_open_opts(pg_identity_index **out, pg_repo *r, const char *home,
				const char *upstream, const pg_oid *tip,
				const pg_identity_index_opts *opts, pg_identity_index_info *info)
{
	return open_kind(out, r, home, upstream, tip, opts, info,
			 &kinds[opts && opts->subjects ? 1 : 0]);
}

int pg_identity_index_open(pg_identity_index **out, pg_repo *r, const char *home,
			   const char *upstream, const pg_oid *tip, pg_identity_index_info *info)
{
	return open_kind(out, r, home, upstream, tip, NULL, info, &kinds[0]);
}

int pg_identity_index_open_subjects(pg_identity_index **out, pg_repo *r, const char *home,
				    const char *upstream, const pg_oid *tip,
				    pg_identity_index_info *info)
{
	return open_kind(out, r, home, upstream, tip, NULL, info, &kinds[1]);
}

bool pg_identity_index_damaged(const pg_identity_index *x)
{
	return x && x->damaged;
}

static int key_at(uint64_t *key, void *ctx, size_t i)
{
	unsigned char e[ENTRY];
	int err;

	if ((err = entry_at(ctx, i, e)) < 0)
		return err;
	*key = pg_identity_get64(e);
	return 0;
}

size_t pg_identity_index_probe(pg_identity_hit *out, size_t max, const pg_identity_index *x,
			       uint64_t key)
{
	size_t lo = 0, n = 0;
	unsigned char e[ENTRY];

	/* keys are hashes: an interpolation search reads two or three blocks, not a dozen */
	if (pg_search_uniform(&lo, 0, x->count, 0, UINT64_MAX, key, key_at, (void *)x) < 0)
		goto damaged;
	for (; lo < x->count; lo++) {
		if (entry_at(x, lo, e) < 0)
			goto damaged;
		if (pg_identity_get64(e) != key)
			break;
		if (pg_identity_is_other(x, e + 16))
			continue; /* another ref's alone: not this tip's history */
		if (n++ < max) {
			out[n - 1].author_time = (int64_t)pg_identity_get64(e + 8);
			memcpy(out[n - 1].id.id, e + 16, PG_OID_RAWSZ);
		}
	}
	return n;
damaged:
	/*
	 * A segment that does not hold (pg_identity_index_damaged), or the file
	 * went short under us: what was found in segments that hold.
	 */
	pg_error_clear();
	return n;
}

size_t pg_identity_index_count(const pg_identity_index *x)
{
	return x->count - x->nothers;
}

size_t pg_identity_index_total(const pg_identity_index *x)
{
	return x->count;
}

size_t pg_identity_index_ntips(const pg_identity_index *x)
{
	return x->ntips;
}

const char *pg_identity_index_path(const pg_identity_index *x)
{
	return x->path;
}

const pg_oid *pg_identity_index_tip(const pg_identity_index *x)
{
	return &x->tip;
}
