/* identity_runs.c - an index build's entries sorted in bounded memory: runs, spilled to files, merged. */
#include "verifier/identity_internal.h"
#include "common/array.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/testpoint.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void pg_identity_runs_init(runs *r, const char *dir, size_t cap)
{
	memset(r, 0, sizeof(*r));
	r->dir = dir;
	r->cap = cap ? cap : 1;
}

void pg_identity_runs_release(runs *r)
{
	free(r->mem);
	free(r->ends);
	free(r->where);
	if (r->file)
		close(r->fd);
	pg_identity_runs_init(r, NULL, 0);
}

/* Take what *from holds; *from is left empty. */
void pg_identity_runs_move(runs *to, runs *from)
{
	pg_identity_runs_release(to);
	*to = *from;
	pg_identity_runs_init(from, NULL, 0);
}

/* len bytes at off of fd, which what names ("'path'", "a run file in 'dir'"). */
int pg_identity_io_all(int fd, const char *what, unsigned char *p, size_t len, uint64_t off,
	   bool write_it)
{
	while (len) {
		ssize_t k = write_it ? pwrite(fd, p, len, (off_t)off) : pread(fd, p, len, (off_t)off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return pg_error_set(PG_EIO, "identity index: cannot %s %s: %s",
					    write_it ? "write" : "read", what,
					    k < 0 ? strerror(errno) : "shorter than written");
		p += k;
		len -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

static atomic_uint scratch_seq;

/*
 * A new file in dir, for reading and writing: *path (its name until it is
 * renamed; empty when none was made) or, without path, unlinked at once
 * and made 0600 (a run file: no one else's to read while it is open).
 */
int pg_identity_scratch_file(int *fd, pg_buf *path, const char *dir, const char *name)
{
	pg_buf own = PG_BUF_INIT, *p = path ? path : &own;
	int flags = PG_OPEN_NEW | PG_OPEN_RDWR | (path ? 0 : PG_OPEN_PRIVATE);
	int err;

	*fd = -1;
	if ((err = pg_buf_printf(p, "%s/%s.tmp.%ld.%u", dir, name, (long)getpid(),
				 atomic_fetch_add(&scratch_seq, 1u))) == 0) {
		err = pg_open_regular(fd, NULL, p->ptr, flags, NULL);
		/* one left by a killed process of the same pid */
		if (err == PG_EEXISTS && unlink(p->ptr) == 0) {
			pg_error_clear();
			err = pg_open_regular(fd, NULL, p->ptr, flags, NULL);
		}
	}
	if (err == 0 && !path)
		(void)unlink(own.ptr);
	/* not ours to unlink: the caller removes the name it is given */
	if (err < 0 && path)
		pg_buf_clear(path);
	pg_buf_release(&own);
	return err < 0 ? pg_error_wrap(err, "identity index") : 0;
}

static void entry_swap(unsigned char *a, unsigned char *b)
{
	unsigned char t[ENTRY];

	memcpy(t, a, ENTRY);
	memcpy(a, b, ENTRY);
	memcpy(b, t, ENTRY);
}

/*
 * pg_identity_entry_cmp, inlined and its key read in one load: the sort's
 * comparisons were a twelfth of a first index's time through the call.
 */
static inline uint64_t key_at(const unsigned char *e)
{
	return (uint64_t)e[0] | (uint64_t)e[1] << 8 | (uint64_t)e[2] << 16 |
	       (uint64_t)e[3] << 24 | (uint64_t)e[4] << 32 | (uint64_t)e[5] << 40 |
	       (uint64_t)e[6] << 48 | (uint64_t)e[7] << 56;
}

static inline int entry_cmp(const unsigned char *a, uint64_t ka, const unsigned char *b,
			    uint64_t kb)
{
	if (ka != kb)
		return ka < kb ? -1 : 1;
	return memcmp(a + 16, b + 16, PG_OID_RAWSZ);
}

/*
 * Sort e[0..n) as qsort with entry_cmp would, in place: glibc's qsort
 * sorts records past 32 bytes through an array of pointers, and was an
 * eighth of a first index's time.  A quicksort on the middle entry (the
 * keys are hashes), qsort's below depth levels.
 */
static void sort_entries(unsigned char *e, size_t n, unsigned depth)
{
	unsigned char p[ENTRY];
	uint64_t kp;
	size_t i, j;

	while (n > 12) {
		if (!depth--) {
			qsort(e, n, ENTRY, pg_identity_entry_cmp);
			return;
		}
		/* Hoare's partition around the middle entry: both sides hold one at least */
		memcpy(p, e + (n - 1) / 2 * ENTRY, ENTRY);
		kp = key_at(p);
		i = (size_t)-1;
		j = n;
		for (;;) {
			while (++i, entry_cmp(e + i * ENTRY, key_at(e + i * ENTRY), p, kp) < 0)
				;
			while (--j, entry_cmp(e + j * ENTRY, key_at(e + j * ENTRY), p, kp) > 0)
				;
			if (i >= j)
				break;
			entry_swap(e + i * ENTRY, e + j * ENTRY);
		}
		/* the smaller side first, the larger in the loop: a stack of log n */
		if (j + 1 < n - j - 1) {
			sort_entries(e, j + 1, depth);
			e += (j + 1) * ENTRY;
			n -= j + 1;
		} else {
			sort_entries(e + (j + 1) * ENTRY, n - j - 1, depth);
			n = j + 1;
		}
	}
	for (i = 1; i < n; i++)
		for (j = i; j && entry_cmp(e + (j - 1) * ENTRY, key_at(e + (j - 1) * ENTRY),
					   e + j * ENTRY, key_at(e + j * ENTRY)) > 0; j--)
			entry_swap(e + (j - 1) * ENTRY, e + j * ENTRY);
}

/* Sort the run in memory, each commit once. */
static size_t run_sort(runs *r)
{
	sort_entries(r->mem, r->nmem, 2 * 64);
	return pg_identity_unique_entries(r->mem, r->nmem);
}

/* The full run in memory, sorted, written after the others. */
static int run_spill(runs *r)
{
	size_t n = run_sort(r), start = r->nruns ? r->ends[r->nruns - 1] : 0;
	int err = 0;

	/* named with a dot first: no upstream's file to the budget (list_groups) */
	if (!r->file && (err = pg_identity_scratch_file(&r->fd, NULL, r->dir, ".run")) == 0) {
		pg_buf where = PG_BUF_INIT;

		r->file = true;
		if ((err = pg_buf_printf(&where, "a run file in '%s'", r->dir)) == 0)
			r->where = pg_buf_detach(&where);
		pg_buf_release(&where);
	}
	/* a test's proof that a build went through runs: its first run's write fails */
	if (err == 0 && pg_testfault("index", "run written"))
		err = pg_error_set(PG_EIO, "identity index: cannot write %s: a test's fault",
				   r->where);
	if (err < 0 || (err = PG_ARRAY_GROW(r->ends, r->nruns + 1, r->ends_alloc)) < 0 ||
	    (err = pg_identity_io_all(r->fd, r->where, r->mem, n * ENTRY, (uint64_t)start * ENTRY,
				      true)) < 0)
		return err;
	r->ends[r->nruns++] = start + n;
	r->total += n;
	r->nmem = 0;
	return 0;
}

int pg_identity_runs_add(runs *r, uint64_t key, int64_t author_time, const pg_oid *id)
{
	int err;

	if (!r->mem && !(r->mem = malloc(r->cap * ENTRY)))
		return pg_error_oom();
	if (r->nmem == r->cap && (err = run_spill(r)) < 0)
		return err;
	pg_identity_entry_put(r->mem + r->nmem++ * ENTRY, key, author_time, id);
	return 0;
}

/* No more entries: the last run sorted, kept in memory. */
void pg_identity_runs_finish(runs *r)
{
	r->nmem = run_sort(r);
	r->total += r->nmem;
	r->dir = NULL;
}

/* Where a merge reads one run: a buffer refilled from the file, or the run in memory. */
typedef struct cursor {
	const unsigned char *at, *end;
	unsigned char *buf;
	size_t room;         /* the buffer's, in entries */
	uint64_t next, stop; /* the entries of the file still to read */
} cursor;

static int cursor_fill(cursor *c, int fd, const char *what)
{
	size_t n = c->stop - c->next < c->room ? (size_t)(c->stop - c->next) : c->room;
	int err;

	c->at = c->end = NULL;
	if (!n)
		return 0;
	if ((err = pg_identity_io_all(fd, what, c->buf, n * ENTRY, c->next * ENTRY, false)) < 0)
		return err;
	c->next += n;
	c->at = c->buf;
	c->end = c->buf + n * ENTRY;
	return 0;
}

/* The cursors of a merge that still hold entries, the least entry first: a binary heap. */
static void heap_down(size_t *h, size_t n, const cursor *c, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i, t;

		if (l < n && pg_identity_entry_cmp(c[h[l]].at, c[h[m]].at) < 0)
			m = l;
		if (l + 1 < n && pg_identity_entry_cmp(c[h[l + 1]].at, c[h[m]].at) < 0)
			m = l + 1;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/*
 * Each entry of the runs once, in order, to emit: the runs' buffers share
 * cap entries.  A commit in two runs (listed twice by a walk) comes once.
 * The least of the runs' next entries is kept at the top of a heap: a
 * small working memory makes hundreds of runs of a big history.
 */
int pg_identity_runs_merge(runs *r, int (*emit)(void *ctx, const unsigned char *e), void *ctx)
{
	cursor *c = NULL;
	unsigned char *bufs = NULL, last[ENTRY];
	size_t k = r->nruns + 1, room = r->cap / k < 64 ? 64 : r->cap / k, i, n = 0, *h = NULL;
	bool have_last = false;
	int err = 0;

	if (!(c = calloc(k, sizeof(*c))) || !(h = calloc(k, sizeof(*h))) ||
	    (r->nruns && !(bufs = malloc(r->nruns * room * ENTRY)))) {
		err = pg_error_oom();
		goto done;
	}
	for (i = 0; i < r->nruns; i++) {
		c[i].buf = bufs + i * room * ENTRY;
		c[i].room = room;
		c[i].next = i ? r->ends[i - 1] : 0;
		c[i].stop = r->ends[i];
		if ((err = cursor_fill(&c[i], r->fd, r->where)) < 0)
			goto done;
	}
	c[r->nruns].at = r->mem;
	c[r->nruns].end = r->nmem ? r->mem + r->nmem * ENTRY : r->mem;
	for (i = 0; i < k; i++)
		if (c[i].at != c[i].end)
			h[n++] = i;
	for (i = n / 2; i-- > 0;)
		heap_down(h, n, c, i);
	while (n) {
		cursor *min = &c[h[0]];

		if (!have_last || pg_identity_entry_cmp(last, min->at)) {
			memcpy(last, min->at, ENTRY);
			have_last = true;
			if ((err = emit(ctx, last)) < 0)
				goto done;
		}
		min->at += ENTRY;
		if (min->at == min->end && min->buf && (err = cursor_fill(min, r->fd, r->where)) < 0)
			goto done;
		if (min->at == min->end)
			h[0] = h[--n];
		heap_down(h, n, c, 0);
	}
done:
	free(h);
	free(c);
	free(bufs);
	return err;
}
