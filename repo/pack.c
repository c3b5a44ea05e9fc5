/* pack.c - commits read straight from a trusted repository's packs and loose files (one zlib stream, no copy, no hash); pack indexes checked; loose objects read and checked. */
#include "repo/internal.h"
#include "common/array.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/pagefile.h"
#include "common/search.h"

#include <dirent.h>
#include <git2/sys/odb_backend.h>
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/*
 * The upstream side and the date window read commits by the thousand.
 * libgit2 starts a zlib stream for each object (its setup costs as much as
 * the inflating), copies, caches and hashes it.  Here a commit stored whole
 * (not as a delta) in a pack of a trusted object directory (the same
 * directories whose commit-graphs are trusted: pg_repo_trust_graph) is
 * inflated with one stream kept for the repository.  The object is not
 * hashed, as git does not hash what it reads: the directory is trusted, and
 * an untrusted one (the pull's) is always read through the object store,
 * which checks every object against its id.  A loose commit of such a
 * directory (a fetch of fewer than 100 objects leaves them loose) is
 * inflated with the same stream.  A delta, another type or a commit past
 * 1 MiB is left to the object store (libgit2's pack reader, our loose
 * reader below).  What is found damaged here (an entry or a stream cut
 * short, a size its header lies about, an index out of its pack) is an
 * error naming the object and the file, never passed on: libgit2 1.5.1
 * loops for ever on a loose object cut short.  The index is read through
 * a small block cache (common/pagefile.h), not mapped: lookups land all
 * over a 100 MiB index, and each would make 64 KiB resident.  The pack is
 * mapped: commits of an era lie together.
 *
 * This file also checks every pack index before libgit2 may open it
 * (idx_check), and reads any loose object for the object stores of odb.c
 * (pg_loose_read): zlib is read here only.
 */

#define IDX_HEADER 8
#define IDX_FANOUT (256 * 4)
#define COMMIT_MAX ((size_t)1 << 20)
/* at most 4 MiB of an index held at once */
#define IDX_BLOCKS 1024
/*
 * At most about this much of a mapped pack resident (pg_map_touch): the
 * first verify reads every commit of the history, and would otherwise keep
 * the pack's every page.
 */
#define PACK_RESIDENT ((size_t)2 << 20)

typedef struct pack {
	char *path;           /* the .pack, for messages */
	pg_pagefile *idx;
	unsigned char *data;  /* mapped: commits of an era lie together, so few pages */
	pg_map_window win;    /* what of data was read since its pages were let go of */
	uint64_t idx_len;
	size_t data_len;
	unsigned char fanout[IDX_FANOUT];
	uint32_t n;
	uint64_t ids, offsets, large;
	size_t nlarge;
} pack;

/* A zlib stream and the last commit it inflated: a thread's own. */
typedef struct inflater {
	z_stream z;
	bool ready;
	unsigned char *out;
	size_t out_alloc;
} inflater;

struct pg_packs {
	pack *v;
	size_t n, alloc;
	inflater zi;              /* the repository's: its caller's thread */
	unsigned char *in;        /* the last loose object file read */
	size_t in_alloc;
};

/*
 * Another thread's reading of the same packs (pg_pack_reader_new): its
 * own stream, and its own window on each pack, so that neither thread
 * lets go of what the other reads through its window's bookkeeping (the
 * pages themselves are the file's, faulted in again by whoever reads).
 */
struct pg_pack_reader {
	const pg_packs *ps;
	inflater zi;
	pg_map_window *win;       /* one a pack */
	unsigned char *pool;      /* zlib's state and window (zpool_alloc) */
	size_t pool_used;
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* --- pack indexes, checked before libgit2 opens one ------------------------------ */

/*
 * libgit2 1.5 trusts an index's fanout: one claiming 2^32-1 objects makes
 * it read far past the file (a SIGSEGV).  Every index of a directory it
 * may read is checked first: the layout its fanout implies must be the
 * file's size, and the pack beside it must say the same count.  A few
 * hundred bytes of each are read, nothing is hashed; a pair found good is
 * remembered by path, device, inode, size and mtime, so that the opens of
 * a run (and the jobs of a service) do not check it again.
 */
typedef struct file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	time_t sec;
	long nsec;
} file_id;

#define SEEN_SLOTS 512

static struct {
	char *path;
	file_id idx, pack;
} seen[SEEN_SLOTS];
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static void file_id_of(file_id *out, const struct stat *st)
{
	memset(out, 0, sizeof(*out));
	out->dev = st->st_dev;
	out->ino = st->st_ino;
	out->size = st->st_size;
	out->sec = st->st_mtim.tv_sec;
	out->nsec = st->st_mtim.tv_nsec;
}

static bool same_file(const file_id *a, const file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->sec == b->sec &&
	       a->nsec == b->nsec;
}

static size_t seen_slot(const char *path)
{
	return (size_t)(pg_hash_bytes(path, strlen(path)) % SEEN_SLOTS);
}

static bool seen_good(const char *path, const file_id *idx, const file_id *data)
{
	size_t s = seen_slot(path);
	bool good;

	pthread_mutex_lock(&seen_lock);
	good = seen[s].path && !strcmp(seen[s].path, path) && same_file(&seen[s].idx, idx) &&
	       same_file(&seen[s].pack, data);
	pthread_mutex_unlock(&seen_lock);
	return good;
}

/* Remember a good pair; a slot taken by another path is given up (a cache, not a list). */
static void seen_set(const char *path, const file_id *idx, const file_id *data)
{
	size_t s = seen_slot(path);
	char *copy = pg_strdup(path);

	if (!copy) {
		pg_error_clear();
		return;
	}
	pthread_mutex_lock(&seen_lock);
	free(seen[s].path);
	seen[s].path = copy;
	seen[s].idx = *idx;
	seen[s].pack = *data;
	pthread_mutex_unlock(&seen_lock);
}

static int read_at(int fd, void *buf, size_t len, off_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = pread(fd, (char *)buf + got, len - got, off + (off_t)got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* The layout of a version 1 or 2 index of size bytes; NULL when it holds, else what is wrong. */
static const char *idx_layout(char *why, size_t whylen, const unsigned char *fanout,
			      uint32_t version, uint64_t size)
{
	uint64_t n, min;
	size_t i;

	for (i = 1; i < 256; i++)
		if (be32(fanout + 4 * (i - 1)) > be32(fanout + 4 * i))
			return "its fanout table is out of order";
	n = be32(fanout + 4 * 255);
	/* v2: ids, crcs and offsets, large offsets (at most one an object), two checksums */
	min = version == 2 ? IDX_HEADER + IDX_FANOUT + n * (PG_OID_RAWSZ + 4 + 4) + 40 :
	      IDX_FANOUT + n * (4 + PG_OID_RAWSZ) + 40;
	if (size < min || (version == 1 && size != min) ||
	    (version == 2 && ((size - min) % 8 || (size - min) / 8 > n))) {
		snprintf(why, whylen, "it claims %llu objects, which its %llu bytes cannot hold",
			 (unsigned long long)n, (unsigned long long)size);
		return why;
	}
	return NULL;
}

/*
 * The index idx_path and the pack beside it, as libgit2 will read them:
 * 1 good, 0 no pack beside it (git and libgit2 leave such an index out),
 * PG_EINVALID naming the file and what is wrong.  No file is opened in a
 * way that waits: a FIFO is an error at once.
 */
static int idx_check(const char *idx_path)
{
	pg_buf pack_path = PG_BUF_INIT;
	unsigned char head[IDX_HEADER + IDX_FANOUT], ph[12];
	const unsigned char *fanout = head;
	struct stat ist, pst;
	file_id iid, pid;
	uint32_t version = 1, n;
	const char *why = NULL;
	char whybuf[128];
	int ifd = -1, pfd = -1, err;

	if ((err = pg_buf_put(&pack_path, idx_path, strlen(idx_path) - 4)) < 0 ||
	    (err = pg_buf_puts(&pack_path, ".pack")) < 0)
		goto done;
	/* stat never waits: a pair as it was when found good is not read again */
	if (stat(idx_path, &ist) == 0 && stat(pack_path.ptr, &pst) == 0 &&
	    S_ISREG(ist.st_mode) && S_ISREG(pst.st_mode)) {
		file_id_of(&iid, &ist);
		file_id_of(&pid, &pst);
		if (seen_good(idx_path, &iid, &pid)) {
			err = 1;
			goto done;
		}
	}
	if ((err = pg_open_regular(&ifd, NULL, idx_path, PG_OPEN_READ, NULL)) < 0) {
		err = pg_error_wrap(err, "pack index");
		goto done;
	}
	if ((err = pg_open_regular(&pfd, NULL, pack_path.ptr, PG_OPEN_READ, NULL)) < 0) {
		if (err == PG_ENOTFOUND) {
			pg_error_clear();
			err = 0;
		} else {
			err = pg_error_wrap(err, "pack");
		}
		goto done;
	}
	if (fstat(ifd, &ist) < 0 || fstat(pfd, &pst) < 0) {
		err = pg_error_set(PG_EIO, "pack index '%s': %s", idx_path, strerror(errno));
		goto done;
	}
	/* the smallest index (version 1, no object) is longer than what is read here */
	if ((uint64_t)ist.st_size < IDX_FANOUT + 40 || read_at(ifd, head, sizeof(head), 0) < 0) {
		why = "it is cut short";
	} else if (!memcmp(head, "\377tOc", 4)) {
		/* version 1 has no header: its fanout starts the file */
		version = be32(head + 4);
		fanout = head + IDX_HEADER;
		if (version != 2) {
			snprintf(whybuf, sizeof(whybuf), "its version is %u, not 1 or 2", version);
			why = whybuf;
		} else if ((uint64_t)ist.st_size < IDX_HEADER + IDX_FANOUT + 40) {
			why = "it is cut short";
		}
	}
	if (!why)
		why = idx_layout(whybuf, sizeof(whybuf), fanout, version, (uint64_t)ist.st_size);
	if (why) {
		err = pg_error_set(PG_EINVALID, "pack index '%s' is damaged: %s", idx_path, why);
		goto done;
	}
	n = be32(fanout + 4 * 255);
	if (pst.st_size < 12 + 20 || read_at(pfd, ph, sizeof(ph), 0) < 0 ||
	    memcmp(ph, "PACK", 4) || (be32(ph + 4) != 2 && be32(ph + 4) != 3)) {
		err = pg_error_set(PG_EINVALID, "pack '%s' is damaged: its header is not a pack's",
				   pack_path.ptr);
		goto done;
	}
	if (be32(ph + 8) != n) {
		err = pg_error_set(PG_EINVALID, "pack '%s' holds %u objects, its index '%s' %u",
				   pack_path.ptr, be32(ph + 8), idx_path, n);
		goto done;
	}
	file_id_of(&iid, &ist);
	file_id_of(&pid, &pst);
	seen_set(idx_path, &iid, &pid);
	err = 1;
done:
	if (ifd >= 0)
		close(ifd);
	if (pfd >= 0)
		close(pfd);
	pg_buf_release(&pack_path);
	return err;
}

/* fn(ctx, path) for every pack index in objdir/pack, until one returns an error. */
static int each_index(const char *objdir, int (*fn)(void *ctx, const char *idx_path), void *ctx)
{
	pg_buf path = PG_BUF_INIT;
	DIR *d;
	struct dirent *e;
	int err = 0;

	if ((err = pg_buf_printf(&path, "%s/pack", objdir)) < 0)
		return err;
	if (!(d = opendir(path.ptr))) {
		pg_buf_release(&path);
		return 0;
	}
	while (err == 0 && (e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len < 5 || strcmp(e->d_name + len - 4, ".idx"))
			continue;
		pg_buf_clear(&path);
		if ((err = pg_buf_printf(&path, "%s/pack/%s", objdir, e->d_name)) == 0)
			err = fn(ctx, path.ptr);
	}
	closedir(d);
	pg_buf_release(&path);
	return err;
}

typedef struct check_each {
	int (*each)(void *ctx, const char *idx_path);
	void *ctx;
} check_each;

static int check_one(void *ctx, const char *idx_path)
{
	const check_each *c = ctx;
	int err;

	if ((err = idx_check(idx_path)) == 1)
		err = c->each ? c->each(c->ctx, idx_path) : 0;
	return err;
}

int pg_repo_check_packs(const char *objdir, int (*each)(void *ctx, const char *idx_path),
			void *ctx)
{
	check_each c = { each, ctx };

	return each_index(objdir, check_one, &c);
}

static void pack_release(pack *p)
{
	free(p->path);
	pg_pagefile_free(p->idx);
	pg_unmap_file(p->data, p->data_len);
	memset(p, 0, sizeof(*p));
}

/*
 * A version 2 index and its pack, checked (idx_check) and then held so
 * that every later read stays inside: 1; 0 when there is no pack beside
 * it, or it is a version 1 index (libgit2 reads those); PG_EINVALID when
 * it is damaged, never left to libgit2.
 */
static int pack_open(pack *p, const char *idx_path)
{
	pg_buf data_path = PG_BUF_INIT;
	unsigned char head[IDX_HEADER];
	void *data;
	int err;

	memset(p, 0, sizeof(*p));
	if ((err = idx_check(idx_path)) <= 0)
		return err;
	if ((err = pg_buf_put(&data_path, idx_path, strlen(idx_path) - 4)) < 0 ||
	    (err = pg_buf_puts(&data_path, ".pack")) < 0 ||
	    (err = pg_pagefile_open(&p->idx, idx_path, IDX_BLOCKS)) < 0 ||
	    (err = pg_pagefile_read(p->idx, 0, head, IDX_HEADER)) < 0)
		goto fail;
	if (memcmp(head, "\377tOc", 4)) {
		pg_buf_release(&data_path);
		pack_release(p);
		return 0;
	}
	p->idx_len = pg_pagefile_size(p->idx);
	if ((err = pg_pagefile_read(p->idx, IDX_HEADER, p->fanout, IDX_FANOUT)) < 0 ||
	    (err = pg_map_file(&data, &p->data_len, data_path.ptr)) < 0)
		goto fail;
	p->data = data;
	p->win.limit = PACK_RESIDENT;
	p->n = be32(p->fanout + 4 * 255);
	/* the layout idx_check found: ids, crcs and offsets, large offsets, two checksums */
	if (p->idx_len < IDX_HEADER + IDX_FANOUT + (uint64_t)p->n * (PG_OID_RAWSZ + 4 + 4) + 40 ||
	    p->data_len < 12 + 20) {
		err = pg_error_set(PG_EINVALID, "it changed while it was read");
		goto fail;
	}
	p->ids = IDX_HEADER + IDX_FANOUT;
	p->offsets = p->ids + (uint64_t)p->n * (PG_OID_RAWSZ + 4);
	p->large = p->offsets + (uint64_t)p->n * 4;
	p->nlarge = (size_t)((p->idx_len - 40 - p->large) / 8);
	p->path = pg_buf_detach(&data_path);
	if (!p->path) {
		err = PG_ENOMEM;
		goto fail;
	}
	return 1;
fail:
	pg_buf_release(&data_path);
	pack_release(p);
	return pg_error_wrap(err, "pack index '%s'", idx_path);
}

static int add_pack(void *ctx, const char *idx_path)
{
	pg_packs *ps = ctx;
	pack p;
	int err;

	if ((err = pack_open(&p, idx_path)) <= 0)
		return err;
	if ((err = PG_ARRAY_GROW(ps->v, ps->n + 1, ps->alloc)) < 0) {
		pack_release(&p);
		return err;
	}
	ps->v[ps->n++] = p;
	return 0;
}

static int add_dir_packs(pg_packs *ps, const char *objdir)
{
	return each_index(objdir, add_pack, ps);
}

static void inflater_release(inflater *zi)
{
	if (zi->ready)
		inflateEnd(&zi->z);
	free(zi->out);
	memset(zi, 0, sizeof(*zi));
}

void pg_packs_free(pg_packs *ps)
{
	size_t i;

	if (!ps)
		return;
	for (i = 0; i < ps->n; i++)
		pack_release(&ps->v[i]);
	free(ps->v);
	inflater_release(&ps->zi);
	free(ps->in);
	free(ps);
}

static int load_packs(pg_repo *r)
{
	size_t i;
	int err = 0;

	if (r->packs)
		return 0;
	if (!(r->packs = calloc(1, sizeof(*r->packs))))
		return pg_error_oom();
	for (i = 0; i < r->ngraph_dirs && err == 0; i++)
		err = add_dir_packs(r->packs, r->graph_dirs[i]);
	if (err < 0) {
		/* not half loaded: the next read meets the same error, not libgit2 */
		pg_packs_free(r->packs);
		r->packs = NULL;
	}
	return err;
}

/* The search's view of a pack index's id table: each id's first 8 bytes. */
static int idx_key_at(uint64_t *key, void *ctx, size_t i)
{
	const pack *p = ctx;
	unsigned char b[8];
	int err;

	if ((err = pg_pagefile_read(p->idx, p->ids + (uint64_t)i * PG_OID_RAWSZ, b, 8)) < 0)
		return err;
	*key = pg_key_prefix64(b);
	return 0;
}

/*
 * Where id is in p's pack, or 0 (not there, or the index cannot be read).
 * SHA-1s are uniform: an interpolation search (common/search.h) lands a
 * block or two away, where a binary search would read a dozen blocks.
 */
static uint64_t find(const pack *p, const pg_oid *id)
{
	uint32_t lo = id->id[0] ? be32(p->fanout + 4 * (id->id[0] - 1)) : 0;
	uint32_t hi = be32(p->fanout + 4 * id->id[0]), off;
	uint64_t first = (uint64_t)id->id[0] << 56;
	unsigned char b[PG_OID_RAWSZ];
	size_t at;
	int c = 1;

	if (hi > p->n || lo > hi ||
	    pg_search_uniform(&at, lo, hi, first, first | 0x00ffffffffffffffULL,
			      pg_key_prefix64(id->id), idx_key_at, (void *)p) < 0)
		goto none;
	for (; at < hi; at++) {
		if (pg_pagefile_read(p->idx, p->ids + (uint64_t)at * PG_OID_RAWSZ, b,
				     PG_OID_RAWSZ) < 0 || (c = memcmp(b, id->id, PG_OID_RAWSZ)) >= 0)
			break;
	}
	if (c != 0 || at >= hi ||
	    pg_pagefile_read(p->idx, p->offsets + (uint64_t)at * 4, b, 4) < 0)
		goto none;
	off = be32(b);
	if (!(off & 0x80000000u))
		return off;
	off &= 0x7fffffffu;
	if (off >= p->nlarge || pg_pagefile_read(p->idx, p->large + (uint64_t)off * 8, b, 8) < 0)
		goto none;
	return (uint64_t)be32(b) << 32 | be32(b + 4);
none:
	pg_error_clear();
	return 0;
}

/*
 * Output room past a pack's commit: zlib decodes in its fast loop only
 * while 258 bytes of output are left, and byte by byte after; with an
 * object's exact size as room, its last 258 bytes (a third of a kernel
 * commit) went the slow way.  A stream longer than its header says fills
 * part of it, and is damaged as before.
 */
#define Z_SLACK 320

/* Room in zi->out for a commit of size bytes, a NUL and Z_SLACK. */
static int out_room(inflater *zi, size_t size)
{
	unsigned char *nb;

	if (size + 1 + Z_SLACK <= zi->out_alloc)
		return 0;
	if (!(nb = malloc(size + 1 + Z_SLACK)))
		return pg_error_oom();
	free(zi->out);
	zi->out = nb;
	zi->out_alloc = size + 1 + Z_SLACK;
	return 0;
}

/* The thread's one zlib stream, ready for a new object; false if zlib cannot. */
static bool z_start(inflater *zi)
{
	if (zi->ready)
		return inflateReset(&zi->z) == Z_OK;
	memset(&zi->z, 0, sizeof(zi->z));
	if (inflateInit(&zi->z) != Z_OK)
		return false;
	zi->ready = true;
	return true;
}

/*
 * What zlib's answer to the inflating of an object says is wrong with it,
 * for "object X in F is damaged: ...".
 */
static const char *z_damage(int zr, const z_stream *z)
{
	if (zr == Z_STREAM_END)
		return "it is shorter than its header says";
	if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT)
		return "its zlib stream is corrupt";
	if (z->avail_out == 0)
		return "it is longer than its header says";
	return "its zlib stream is cut short";
}

/* deflate's best ratio is about 1032 to 1: a size past it is a header that lies */
static bool size_possible(uint64_t size, uint64_t stored)
{
	return size <= stored * 1032 + 64;
}

static int damaged(const pg_oid *id, const char *where, const char *why)
{
	char hex[PG_OID_HEXSZ + 1];

	pg_oid_tohex(hex, id);
	return pg_error_set(PG_EINVALID, "object %s in '%s' is damaged: %s", hex, where, why);
}

/*
 * Inflate the commit id stored whole at off: 1 done; 0 not a whole commit
 * of at most COMMIT_MAX (a delta, another type: libgit2 resolves it);
 * PG_EINVALID when the entry is damaged, never left to libgit2.
 */
static int inflate_commit(inflater *zi, const pack *p, pg_map_window *win, const pg_oid *id,
			  uint64_t off, size_t *len)
{
	const unsigned char *h, *end = p->data + p->data_len - 20;
	size_t size, shift = 4;
	int zr, err;

	if (off < 12 || off >= p->data_len - 20)
		return damaged(id, p->path, "its index places it outside the pack");
	h = p->data + off;
	if (((*h >> 4) & 7) != 1) /* a commit, not a delta or another type */
		return 0;
	size = *h & 15;
	while (*h & 0x80) {
		if (++h >= end || shift > 60)
			return damaged(id, p->path, "its entry header is cut short");
		size |= (size_t)(*h & 0x7f) << shift;
		shift += 7;
	}
	h++;
	if (h >= end || !size_possible(size, (uint64_t)(end - h)))
		return damaged(id, p->path, "its entry claims more than the pack holds");
	if (size > COMMIT_MAX)
		return 0;
	if ((err = out_room(zi, size)) < 0)
		return err;
	if (!z_start(zi))
		return pg_error_oom();
	zi->z.next_in = (unsigned char *)h;
	zi->z.avail_in = (uInt)((size_t)(end - h) < UINT_MAX ? (size_t)(end - h) : UINT_MAX);
	zi->z.next_out = zi->out;
	zi->z.avail_out = (uInt)(size + 1 + Z_SLACK); /* more, to see the stream end where it says */
	zr = inflate(&zi->z, Z_FINISH);
	pg_map_touch(win, p->data, p->data_len, (size_t)off,
		     (size_t)(h - (p->data + off)) + zi->z.total_in);
	if (zi->z.total_out > size)
		return damaged(id, p->path, "it is longer than its header says");
	if (zr != Z_STREAM_END || zi->z.total_out != size)
		return damaged(id, p->path, z_damage(zr, &zi->z));
	zi->out[size] = '\0';
	*len = size;
	return 1;
}


/*
 * The whole of a loose object's file, into ps->in: 1, or 0 if it is not
 * one to read.  A file there that is no regular file is an error, never
 * left to libgit2, whose plain open waits for ever on a FIFO.
 */
static int read_loose(size_t *n, pg_packs *ps, const char *path)
{
	off_t size;
	size_t got = 0;
	int fd, err = 0;

	*n = 0;
	if ((err = pg_open_regular(&fd, &size, path, PG_OPEN_READ, NULL)) < 0) {
		if (err == PG_EINVALID)
			return pg_error_wrap(err, "loose object");
		pg_error_clear();
		return 0;
	}
	if (size <= 0 || (uint64_t)size > COMMIT_MAX + 64)
		goto done;
	if ((size_t)size > ps->in_alloc) {
		unsigned char *nb = malloc((size_t)size);

		if (!nb) {
			err = pg_error_oom();
			goto done;
		}
		free(ps->in);
		ps->in = nb;
		ps->in_alloc = (size_t)size;
	}
	while (got < (size_t)size) {
		ssize_t r = read(fd, ps->in + got, (size_t)size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got == (size_t)size) {
		*n = got;
		err = 1;
	}
done:
	close(fd);
	return err;
}

/*
 * The loose commit id of the trusted directory objdir, inflated: "commit
 * SIZE\0" and then SIZE bytes, all of the stream.  1 done; 0 not here, or
 * not a commit of at most COMMIT_MAX (the object store's own reader,
 * pg_loose_read, then reads it); PG_EINVALID when the file is damaged,
 * never left to another reader.
 */
static int loose_commit(pg_packs *ps, const char *objdir, const pg_oid *id, size_t *len)
{
	char hex[PG_OID_HEXSZ + 1], path[PATH_MAX];
	unsigned char head[32], *nul, *p;
	size_t n, size = 0, hlen, k;
	int zr, err;

	pg_oid_tohex(hex, id);
	if ((size_t)snprintf(path, sizeof(path), "%s/%.2s/%s", objdir, hex, hex + 2) >=
	    sizeof(path))
		return 0;
	if ((err = read_loose(&n, ps, path)) <= 0)
		return err;
	if (!z_start(&ps->zi))
		return pg_error_oom();
	ps->zi.z.next_in = ps->in;
	ps->zi.z.avail_in = (uInt)n;
	ps->zi.z.next_out = head;
	ps->zi.z.avail_out = sizeof(head);
	zr = inflate(&ps->zi.z, Z_NO_FLUSH);
	if (zr != Z_OK && zr != Z_STREAM_END)
		return damaged(id, objdir, z_damage(zr, &ps->zi.z));
	k = sizeof(head) - ps->zi.z.avail_out;
	if (k < 9 || memcmp(head, "commit ", 7) || !(nul = memchr(head, '\0', k)))
		return 0;
	for (p = head + 7; p < nul; p++) {
		if (*p < '0' || *p > '9' || (p == head + 7 && *p == '0' && p + 1 < nul))
			return damaged(id, objdir, "its header is not \"type size\"");
		size = size * 10 + (size_t)(*p - '0');
		if (size > COMMIT_MAX)
			return 0;
	}
	if (p == head + 7)
		return damaged(id, objdir, "its header is not \"type size\"");
	hlen = (size_t)(nul - head) + 1;
	if (k - hlen > size)
		return damaged(id, objdir, "it is longer than its header says");
	if ((err = out_room(&ps->zi, size)) < 0)
		return err;
	memcpy(ps->zi.out, head + hlen, k - hlen);
	if (zr != Z_STREAM_END) {
		ps->zi.z.next_out = ps->zi.out + (k - hlen);
		ps->zi.z.avail_out = (uInt)(size - (k - hlen) + 1); /* one more, to see the end */
		zr = inflate(&ps->zi.z, Z_FINISH);
	}
	/* one byte more than the header says, and the stream's end with it: longer, not shorter */
	if (ps->zi.z.total_out > hlen + size)
		return damaged(id, objdir, "it is longer than its header says");
	if (zr != Z_STREAM_END || ps->zi.z.total_out != hlen + size)
		return damaged(id, objdir, z_damage(zr, &ps->zi.z));
	ps->zi.out[size] = '\0';
	*len = size;
	return 1;
}

/* A pack index read in order, a window at a time (pg_pagefile_pread: nothing mapped). */
#define IDX_WINDOW ((size_t)1 << 20)

typedef struct idx_window {
	pg_pagefile *f;
	unsigned char *buf;
	size_t room;  /* buf's, LOCATE_BLOCK at least */
	uint64_t start;
	size_t len;
	size_t fill;  /* how much a read past it takes: a window, or a block after a jump */
} idx_window;

static int idx_at(const unsigned char **out, idx_window *w, uint64_t off, size_t len)
{
	uint64_t size = pg_pagefile_size(w->f);
	size_t want;
	int err;

	if (off >= w->start && off + len <= w->start + w->len) {
		*out = w->buf + (off - w->start);
		return 0;
	}
	if (off > size || len > size - off)
		return pg_error_set(PG_EINVALID, "a pack index read past its end");
	want = size - off < w->fill ? (size_t)(size - off) : w->fill;
	if (want < len)
		want = len;
	w->len = 0;
	if ((err = pg_pagefile_pread(w->f, off, w->buf, want)) < 0)
		return err;
	w->start = off;
	w->len = want;
	*out = w->buf;
	return 0;
}

/*
 * When the next id should lie past this many entries of the index (its
 * place guessed within its bucket) and past the window read, locate_in
 * searches rather than steps, and reads a block where it lands rather
 * than a window: a few ids among millions of objects (a run's worth of a
 * big history, located again for each run) read a few blocks each, not
 * the whole table each time.  Nothing of it is cached (the pack index's
 * block cache would grow by megabytes): each guess is a pread of 8 bytes.
 */
#define LOCATE_STEPS 64
#define LOCATE_BLOCK ((size_t)4096)

/* idx_key_at, read past the cache. */
static int idx_key_pread(uint64_t *key, void *ctx, size_t i)
{
	const pack *p = ctx;
	unsigned char b[8];
	int err;

	if ((err = pg_pagefile_pread(p->idx, p->ids + (uint64_t)i * PG_OID_RAWSZ, b, 8)) < 0)
		return err;
	*key = pg_key_prefix64(b);
	return 0;
}

/*
 * locs[0..n) of one pack, by a walk of its index along their ids, from
 * the entry *start on (where the last walk of ids before them stopped).
 */
static int locate_in(pg_pack_loc *locs, size_t n, const pack *p, uint32_t j, const pg_oid *ids,
		     idx_window *ws, uint32_t *start)
{
	const unsigned char *b;
	uint32_t pos = *start, lo, hi, off, guess;
	size_t k;
	int c = 1, err = 0;

	ws[0].f = ws[1].f = p->idx;
	for (k = 0; k < n; k++) {
		const pg_oid *id = &ids[locs[k].i];

		if (locs[k].off)
			continue;
		lo = id->id[0] ? be32(p->fanout + 4 * (id->id[0] - 1)) : 0;
		hi = be32(p->fanout + 4 * id->id[0]);
		if (hi > p->n || lo > hi)
			return pg_error_set(PG_EINVALID, "pack index of '%s' is damaged", p->path);
		if (pos < lo)
			pos = lo;
		/* where the id should be, ids being uniform within the bucket */
		guess = lo + (uint32_t)(((uint64_t)(hi - lo) * (pg_key_prefix64(id->id) >> 24 &
							      0xffffffffu)) >> 32);
		ws[0].fill = ws[0].room;
		ws[1].fill = ws[1].room;
		if (guess > pos + LOCATE_STEPS &&
		    p->ids + (uint64_t)guess * PG_OID_RAWSZ >= ws[0].start + ws[0].len) {
			uint64_t first = (uint64_t)id->id[0] << 56;
			size_t at;

			if ((err = pg_search_uniform(&at, pos, hi, first, first | 0x00ffffffffffffffULL,
						     pg_key_prefix64(id->id), idx_key_pread,
						     (void *)p)) < 0)
				return err;
			pos = (uint32_t)at;
			ws[0].fill = ws[1].fill = LOCATE_BLOCK;
		}
		for (c = 1; pos < hi; pos++) {
			if ((err = idx_at(&b, &ws[0], p->ids + (uint64_t)pos * PG_OID_RAWSZ,
					  PG_OID_RAWSZ)) < 0)
				return err;
			if ((c = memcmp(b, id->id, PG_OID_RAWSZ)) >= 0)
				break;
		}
		if (c || pos >= hi)
			continue;
		if ((err = idx_at(&b, &ws[1], p->offsets + (uint64_t)pos * 4, 4)) < 0)
			return err;
		off = be32(b);
		if (!(off & 0x80000000u)) {
			locs[k].off = off;
		} else {
			unsigned char large[8];

			off &= 0x7fffffffu;
			if (off >= p->nlarge ||
			    pg_pagefile_read(p->idx, p->large + (uint64_t)off * 8, large, 8) < 0)
				return pg_error_set(PG_EINVALID, "pack index of '%s' is damaged",
						    p->path);
			locs[k].off = (uint64_t)be32(large) << 32 | be32(large + 4);
		}
		locs[k].pack = j;
	}
	*start = pos;
	return 0;
}

/*
 * Each pack's walk of its index: where it stopped, and its two windows
 * (ids, offsets), which keep what they read for the next call.
 */
struct pg_pack_locator {
	pg_repo *r;
	size_t npacks;
	uint32_t *at;
	idx_window *ws;
	unsigned char *bufs;
};

void pg_pack_locator_free(pg_pack_locator *lc)
{
	if (!lc)
		return;
	free(lc->at);
	free(lc->ws);
	free(lc->bufs);
	free(lc);
}

/*
 * The windows take IDX_WINDOW each for one pack, and share twice that
 * among more, LOCATE_BLOCK each at least (2 MiB in all up to 256 packs).
 */
int pg_pack_locator_new(pg_pack_locator **out, pg_repo *r)
{
	pg_pack_locator *lc;
	size_t room, j, n;
	int err;

	*out = NULL;
	if ((err = load_packs(r)) < 0)
		return err;
	n = r->packs->n;
	room = n ? IDX_WINDOW / n : IDX_WINDOW;
	room = room < LOCATE_BLOCK ? LOCATE_BLOCK : room;
	if (!(lc = calloc(1, sizeof(*lc))) || !(lc->at = calloc(n + 1, sizeof(*lc->at))) ||
	    !(lc->ws = calloc(2 * n + 2, sizeof(*lc->ws))) ||
	    (n && !(lc->bufs = malloc(2 * n * room)))) {
		pg_pack_locator_free(lc);
		return pg_error_oom();
	}
	lc->r = r;
	lc->npacks = n;
	for (j = 0; j < 2 * n; j++) {
		lc->ws[j].buf = lc->bufs + j * room;
		lc->ws[j].room = room;
	}
	*out = lc;
	return 0;
}

int pg_pack_locator_next(pg_pack_locator *lc, pg_pack_loc *locs, size_t n, const pg_oid *ids)
{
	size_t k;
	uint32_t j;
	int err = 0;

	for (k = 0; k < n; k++)
		locs[k].off = 0;
	for (j = 0; j < lc->npacks && err == 0 && n; j++)
		err = locate_in(locs, n, &lc->r->packs->v[j], j, ids, &lc->ws[2 * j], &lc->at[j]);
	return err;
}

int pg_repo_pack_locate(pg_pack_loc *locs, size_t n, pg_repo *r, const pg_oid *ids)
{
	idx_window ws[2];
	unsigned char *bufs = NULL;
	size_t k;
	uint32_t j, at;
	int err;

	for (k = 0; k < n; k++)
		locs[k].off = 0;
	if ((err = load_packs(r)) < 0)
		return err;
	if (!n || !r->packs->n)
		return 0;
	if (!(bufs = malloc(2 * IDX_WINDOW)))
		return pg_error_oom();
	memset(ws, 0, sizeof(ws));
	ws[0].buf = bufs;
	ws[1].buf = bufs + IDX_WINDOW;
	ws[0].room = ws[1].room = IDX_WINDOW;
	for (j = 0, err = 0; j < r->packs->n && err == 0; j++) {
		/* each pack's walk from its start, in windows of its own */
		ws[0].len = ws[1].len = 0;
		at = 0;
		err = locate_in(locs, n, &r->packs->v[j], j, ids, ws, &at);
	}
	free(bufs);
	return err;
}

int pg_repo_pack_lens(uint64_t **out, uint32_t *n, pg_repo *r)
{
	size_t j;
	int err;

	*out = NULL;
	*n = 0;
	if ((err = load_packs(r)) < 0)
		return err;
	if (r->packs->n > UINT32_MAX - 1 || !(*out = malloc((r->packs->n + 1) * sizeof(**out))))
		return pg_error_oom();
	for (j = 0; j < r->packs->n; j++)
		(*out)[j] = r->packs->v[j].data_len;
	*n = (uint32_t)r->packs->n;
	return 0;
}

int pg_repo_pack_commit_at(const char **data, size_t *len, pg_repo *r, const pg_pack_loc *loc,
			   const pg_oid *id)
{
	int err;

	if ((err = load_packs(r)) < 0)
		return err;
	if (loc->pack >= r->packs->n)
		return 0;
	if ((err = inflate_commit(&r->packs->zi, &r->packs->v[loc->pack], &r->packs->v[loc->pack].win,
				  id, loc->off, len)) == 1)
		*data = (const char *)r->packs->zi.out;
	return err;
}

/*
 * A reader's thread never calls malloc: glibc would give it an arena of
 * its own, 64 MiB of address space, which a verify run under a memory
 * limit (RLIMIT_AS) may not have.  So zlib takes its state and its window
 * from a pool the reader was given (freed with it: zpool_free frees
 * nothing), and the output has room for the largest commit read here.
 */
#define ZPOOL_SIZE ((size_t)64 << 10)

static voidpf zpool_alloc(voidpf opaque, uInt items, uInt size)
{
	pg_pack_reader *rd = opaque;
	size_t want = ((size_t)items * size + 15) & ~(size_t)15;

	if (items && size > ZPOOL_SIZE / items)
		return Z_NULL;
	if (want > ZPOOL_SIZE - rd->pool_used)
		return Z_NULL;
	rd->pool_used += want;
	return rd->pool + rd->pool_used - want;
}

static void zpool_free(voidpf opaque, voidpf address)
{
	(void)opaque;
	(void)address;
}

int pg_pack_reader_new(pg_pack_reader **out, pg_repo *r)
{
	pg_pack_reader *rd;
	size_t i;
	int err;

	*out = NULL;
	if ((err = load_packs(r)) < 0)
		return err;
	if (!(rd = calloc(1, sizeof(*rd))))
		return pg_error_oom();
	if ((r->packs->n && !(rd->win = calloc(r->packs->n, sizeof(*rd->win)))) ||
	    !(rd->pool = malloc(ZPOOL_SIZE)) || out_room(&rd->zi, COMMIT_MAX) < 0) {
		pg_pack_reader_free(rd);
		return pg_error_oom();
	}
	rd->ps = r->packs;
	for (i = 0; i < r->packs->n; i++)
		rd->win[i].limit = PACK_RESIDENT;
	rd->zi.z.zalloc = zpool_alloc;
	rd->zi.z.zfree = zpool_free;
	rd->zi.z.opaque = rd;
	if (inflateInit(&rd->zi.z) != Z_OK) {
		pg_pack_reader_free(rd);
		return pg_error_oom();
	}
	rd->zi.ready = true;
	*out = rd;
	return 0;
}

int pg_pack_reader_commit(const char **data, size_t *len, pg_pack_reader *rd,
			  const pg_pack_loc *loc, const pg_oid *id)
{
	int err;

	if (loc->pack >= rd->ps->n)
		return 0;
	if ((err = inflate_commit(&rd->zi, &rd->ps->v[loc->pack], &rd->win[loc->pack], id, loc->off,
				  len)) == 1)
		*data = (const char *)rd->zi.out;
	return err;
}

void pg_pack_reader_free(pg_pack_reader *rd)
{
	size_t j;

	if (!rd)
		return;
	/* what this reader read of each pack, let go of: a reading makes one a share */
	for (j = 0; rd->win && rd->ps && j < rd->ps->n; j++)
		pg_map_drop(&rd->win[j], rd->ps->v[j].data, rd->ps->v[j].data_len);
	inflater_release(&rd->zi);
	free(rd->pool);
	free(rd->win);
	free(rd);
}

int pg_repo_pack_commit(const char **data, size_t *len, pg_repo *r, const pg_oid *id)
{
	size_t i;
	int err;

	if ((err = load_packs(r)) < 0)
		return err;
	for (i = 0; i < r->packs->n; i++) {
		uint64_t off = find(&r->packs->v[i], id);

		if (!off)
			continue;
		if ((err = inflate_commit(&r->packs->zi, &r->packs->v[i], &r->packs->v[i].win, id,
					  off, len)) != 0) {
			if (err == 1)
				*data = (const char *)r->packs->zi.out;
			return err;
		}
		return 0; /* there, but not whole: libgit2 resolves it */
	}
	for (i = 0; i < r->ngraph_dirs; i++) {
		if ((err = loose_commit(r->packs, r->graph_dirs[i], id, len)) != 0) {
			if (err == 1)
				*data = (const char *)r->packs->zi.out;
			return err;
		}
	}
	return 0;
}

/* --- any loose object, for the object store's loose backend (odb.c) ---------------- */

typedef struct loose_in {
	z_stream z;
	int fd;
	bool eof;
	unsigned char buf[8192];
} loose_in;

/*
 * Inflate more of the file into z's output until it is full (Z_OK), the
 * stream ends (Z_STREAM_END) or it is damaged (*why set, -1).  Every
 * round reads more of the file or ends: a stream cut short is an error,
 * never a loop (libgit2 1.5's own reader loops there for ever).
 */
static int loose_pull(loose_in *in, const char **why)
{
	for (;;) {
		int zr;

		if (in->z.avail_in == 0 && !in->eof) {
			ssize_t r = read(in->fd, in->buf, sizeof(in->buf));

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0) {
				*why = "it cannot be read";
				return -1;
			}
			in->eof = r == 0;
			in->z.next_in = in->buf;
			in->z.avail_in = (uInt)r;
		}
		zr = inflate(&in->z, Z_NO_FLUSH);
		if (zr == Z_STREAM_END)
			return zr;
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			*why = z_damage(zr, &in->z);
			return -1;
		}
		if (in->z.avail_out == 0)
			return Z_OK;
		if (in->z.avail_in == 0 && in->eof) {
			*why = "its zlib stream is cut short";
			return -1;
		}
		if (zr == Z_BUF_ERROR && in->z.avail_in) {
			*why = "its zlib stream is corrupt";
			return -1;
		}
	}
}

/* "type size\0" at the start of head (k bytes): 0 with the header's length, or -1. */
static int loose_header(git_object_t *type, size_t *size, size_t *hlen, const unsigned char *head,
			size_t k)
{
	static const struct {
		const char *name;
		git_object_t type;
	} types[] = {
		{ "commit", GIT_OBJECT_COMMIT }, { "tree", GIT_OBJECT_TREE },
		{ "blob", GIT_OBJECT_BLOB }, { "tag", GIT_OBJECT_TAG },
	};
	const unsigned char *sp = memchr(head, ' ', k), *nul = memchr(head, '\0', k), *p;
	size_t i;

	if (!sp || !nul || nul < sp + 2 || (sp[1] == '0' && nul > sp + 2))
		return -1;
	*type = GIT_OBJECT_INVALID;
	for (i = 0; i < PG_ARRAY_SIZE(types); i++)
		if ((size_t)(sp - head) == strlen(types[i].name) &&
		    !memcmp(head, types[i].name, (size_t)(sp - head)))
			*type = types[i].type;
	if (*type == GIT_OBJECT_INVALID)
		return -1;
	*size = 0;
	for (p = sp + 1; p < nul; p++) {
		if (*p < '0' || *p > '9' || *size > (SIZE_MAX - 9) / 10)
			return -1;
		*size = *size * 10 + (size_t)(*p - '0');
	}
	*hlen = (size_t)(nul - head) + 1;
	return 0;
}

int pg_loose_read(pg_loose *out, git_odb_backend *b, const char *objdir, const git_oid *id,
		  bool header_only)
{
	char hex[PG_OID_HEXSZ + 1], path[PATH_MAX], whybuf[128];
	unsigned char head[64];
	const char *why = NULL;
	loose_in *in = NULL;
	unsigned char *data = NULL;
	pg_oid pid;
	git_oid got;
	off_t fsize;
	size_t k, hlen, have;
	int zr = Z_OK, err;

	memset(out, 0, sizeof(*out));
	pg_oid_from_git(&pid, id);
	pg_oid_tohex(hex, &pid);
	if ((size_t)snprintf(path, sizeof(path), "%s/%.2s/%s", objdir, hex, hex + 2) >=
	    sizeof(path))
		return pg_error_set(PG_ENOTFOUND, "object %s is not in '%s'", hex, objdir);
	if (!(in = calloc(1, sizeof(*in))))
		return pg_error_oom();
	in->fd = -1;
	if ((err = pg_open_regular(&in->fd, &fsize, path, PG_OPEN_READ, NULL)) < 0) {
		if (err == PG_EINVALID)
			err = pg_error_wrap(err, "loose object");
		free(in);
		return err;
	}
	if (inflateInit(&in->z) != Z_OK) {
		close(in->fd);
		free(in);
		return pg_error_oom();
	}
	in->z.next_out = head;
	in->z.avail_out = sizeof(head);
	if ((zr = loose_pull(in, &why)) < 0)
		goto done;
	k = sizeof(head) - in->z.avail_out;
	if (loose_header(&out->type, &out->size, &hlen, head, k) < 0) {
		why = "its header is not \"type size\"";
		goto done;
	}
	if (!size_possible(out->size, (uint64_t)fsize)) {
		snprintf(whybuf, sizeof(whybuf), "its header claims %zu bytes, more than its "
			 "%lld-byte file can hold", out->size, (long long)fsize);
		why = whybuf;
		goto done;
	}
	if (out->size > PG_LOOSE_MAX) {
		snprintf(whybuf, sizeof(whybuf), "its header claims %zu bytes, more than the %zu read",
			 out->size, (size_t)PG_LOOSE_MAX);
		why = whybuf;
		goto done;
	}
	if (header_only)
		goto done;
	have = k - hlen;
	if (have > out->size) {
		why = "it is longer than its header says";
		goto done;
	}
	if (!(data = b ? git_odb_backend_data_alloc(b, out->size + 1) : malloc(out->size + 1))) {
		err = pg_error_oom();
		goto done;
	}
	memcpy(data, head + hlen, have);
	if (zr != Z_STREAM_END) {
		in->z.next_out = data + have;
		in->z.avail_out = (uInt)(out->size - have + 1); /* one more, to see the end */
		zr = loose_pull(in, &why);
		if (zr == Z_OK)
			why = "it is longer than its header says";
		if (zr != Z_STREAM_END)
			goto done;
	}
	if (in->z.total_out != hlen + out->size) {
		why = in->z.total_out > hlen + out->size ? "it is longer than its header says"
							   : "it is shorter than its header says";
		goto done;
	}
	data[out->size] = '\0';
	/* libgit2 hashes what git_odb_read gives, not what read_header or a prefix read does */
	if (git_odb_hash(&got, data, out->size, out->type) < 0 || !git_oid_equal(&got, id)) {
		why = "its contents are another object's";
		goto done;
	}
	out->data = data;
	data = NULL;
done:
	if (why)
		err = damaged(&pid, objdir, why);
	if (data && b)
		git_odb_backend_data_free(b, data);
	else
		free(data);
	inflateEnd(&in->z);
	close(in->fd);
	free(in);
	return err;
}
