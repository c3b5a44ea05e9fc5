/* pack.c - commits read straight from a trusted repository's packs and loose files: one zlib stream, no copy, no hash. */
#include "repo/internal.h"
#include "common/array.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/pagefile.h"
#include "common/search.h"

#include <dirent.h>
#include <limits.h>
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
 * an untrusted one (the pull's) is always read through libgit2, which
 * checks every object against its id.  A loose commit of such a directory
 * (a fetch of fewer than 100 objects leaves them loose) is inflated with
 * the same stream.  Anything unusual (a delta, a damaged index, pack or
 * object file, a commit past 1 MiB) is left to libgit2:
 * every read is bounds-checked, and a fault only means "not here".  An
 * index or an object file that is no regular file (a FIFO, a device) is
 * an error instead: libgit2 would wait for ever on a FIFO.  The
 * index is read through a small block cache (common/pagefile.h), not
 * mapped: lookups land all over a 100 MiB index, and each would make 64
 * KiB resident.  The pack is mapped: commits of an era lie together.
 */

#define IDX_HEADER 8
#define IDX_FANOUT (256 * 4)
#define COMMIT_MAX ((size_t)1 << 20)
/* at most 32 MiB of an index held at once */
#define IDX_BLOCKS 8192

typedef struct pack {
	pg_pagefile *idx;
	unsigned char *data;  /* mapped: commits of an era lie together, so few pages */
	uint64_t idx_len;
	size_t data_len;
	unsigned char fanout[IDX_FANOUT];
	uint32_t n;
	uint64_t ids, offsets, large;
	size_t nlarge;
} pack;

struct pg_packs {
	pack *v;
	size_t n, alloc;
	z_stream z;
	bool z_ready;
	unsigned char *out;       /* the last commit inflated */
	size_t out_alloc;
	unsigned char *in;        /* the last loose object file read */
	size_t in_alloc;
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void pack_release(pack *p)
{
	pg_pagefile_free(p->idx);
	pg_unmap_file(p->data, p->data_len);
	memset(p, 0, sizeof(*p));
}

/*
 * A version 2 index and its pack, checked enough that every later read
 * stays inside: 1, or 0 when libgit2 is to read it instead.  An index that
 * is no regular file is an error: libgit2 would wait for ever on a FIFO.
 */
static int pack_open(pack *p, const char *idx_path)
{
	pg_buf data_path = PG_BUF_INIT;
	unsigned char head[IDX_HEADER];
	uint64_t tables;
	void *data;
	size_t i;
	int err;

	memset(p, 0, sizeof(*p));
	if ((err = pg_pagefile_open(&p->idx, idx_path, IDX_BLOCKS)) < 0) {
		if (err == PG_EINVALID || err == PG_ENOMEM)
			return pg_error_wrap(err, "pack index");
		goto bad;
	}
	p->idx_len = pg_pagefile_size(p->idx);
	if (p->idx_len < IDX_HEADER + IDX_FANOUT + 40 ||
	    pg_pagefile_read(p->idx, 0, head, IDX_HEADER) < 0 || memcmp(head, "\377tOc", 4) ||
	    be32(head + 4) != 2 || pg_pagefile_read(p->idx, IDX_HEADER, p->fanout, IDX_FANOUT) < 0)
		goto bad;
	for (i = 1; i < 256; i++)
		if (be32(p->fanout + 4 * (i - 1)) > be32(p->fanout + 4 * i))
			goto bad;
	p->n = be32(p->fanout + 4 * 255);
	/* ids, crcs and offsets, then large offsets, then two checksums */
	tables = IDX_HEADER + IDX_FANOUT;
	if (p->n > (p->idx_len - tables - 40) / (PG_OID_RAWSZ + 4 + 4))
		goto bad;
	p->ids = tables;
	p->offsets = p->ids + (uint64_t)p->n * (PG_OID_RAWSZ + 4);
	p->large = p->offsets + (uint64_t)p->n * 4;
	p->nlarge = (size_t)((p->idx_len - 40 - p->large) / 8);
	if (pg_buf_put(&data_path, idx_path, strlen(idx_path) - 4) < 0 ||
	    pg_buf_puts(&data_path, ".pack") < 0 ||
	    pg_map_file(&data, &p->data_len, data_path.ptr) < 0)
		goto bad;
	p->data = data;
	if (p->data_len < 12 + 20 || memcmp(p->data, "PACK", 4))
		goto bad;
	pg_buf_release(&data_path);
	return 1;
bad:
	pg_buf_release(&data_path);
	pack_release(p);
	pg_error_clear();
	return 0;
}

static int add_dir_packs(pg_packs *ps, const char *objdir)
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
		pack p;

		if (len < 5 || strcmp(e->d_name + len - 4, ".idx"))
			continue;
		pg_buf_clear(&path);
		if ((err = pg_buf_printf(&path, "%s/pack/%s", objdir, e->d_name)) < 0)
			break;
		if ((err = pack_open(&p, path.ptr)) <= 0)
			continue;
		if ((err = PG_ARRAY_GROW(ps->v, ps->n + 1, ps->alloc)) < 0) {
			pack_release(&p);
			break;
		}
		ps->v[ps->n++] = p;
	}
	closedir(d);
	pg_buf_release(&path);
	return err;
}

void pg_packs_free(pg_packs *ps)
{
	size_t i;

	if (!ps)
		return;
	for (i = 0; i < ps->n; i++)
		pack_release(&ps->v[i]);
	free(ps->v);
	if (ps->z_ready)
		inflateEnd(&ps->z);
	free(ps->out);
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

int pg_repo_check_packs(const char *objdir)
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
		struct stat st;

		if (len < 5 || strcmp(e->d_name + len - 4, ".idx"))
			continue;
		pg_buf_clear(&path);
		if ((err = pg_buf_printf(&path, "%s/pack/%s", objdir, e->d_name)) < 0)
			break;
		/* stat, not open: it never blocks, and follows a symlink as libgit2 will */
		if (stat(path.ptr, &st) == 0 && !S_ISREG(st.st_mode))
			err = pg_error_set(PG_EINVALID, "pack index '%s' is %s, not a regular file",
					   path.ptr, pg_file_kind(st.st_mode));
	}
	closedir(d);
	pg_buf_release(&path);
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

/* Room in ps->out for a commit of size bytes and a NUL. */
static int out_room(pg_packs *ps, size_t size)
{
	unsigned char *nb;

	if (size + 1 <= ps->out_alloc)
		return 0;
	if (!(nb = malloc(size + 1)))
		return pg_error_oom();
	free(ps->out);
	ps->out = nb;
	ps->out_alloc = size + 1;
	return 0;
}

/* The one zlib stream, ready for a new object; false if zlib cannot. */
static bool z_start(pg_packs *ps)
{
	if (ps->z_ready)
		return inflateReset(&ps->z) == Z_OK;
	memset(&ps->z, 0, sizeof(ps->z));
	if (inflateInit(&ps->z) != Z_OK)
		return false;
	ps->z_ready = true;
	return true;
}

/* Inflate the commit stored whole at off; 1 done, 0 not a whole commit (leave it to libgit2). */
static int inflate_commit(pg_packs *ps, const pack *p, uint64_t off, size_t *len)
{
	const unsigned char *h, *end = p->data + p->data_len - 20;
	size_t size, shift = 4;
	int zr, err;

	if (off < 12 || off >= p->data_len - 20)
		return 0;
	h = p->data + off;
	if (((*h >> 4) & 7) != 1) /* a commit, not a delta or another type */
		return 0;
	size = *h & 15;
	while (*h & 0x80) {
		if (++h >= end || shift > 60)
			return 0;
		size |= (size_t)(*h & 0x7f) << shift;
		shift += 7;
	}
	h++;
	if (size > COMMIT_MAX || h >= end)
		return 0;
	if ((err = out_room(ps, size)) < 0)
		return err;
	if (!z_start(ps))
		return 0;
	ps->z.next_in = (unsigned char *)h;
	ps->z.avail_in = (uInt)((size_t)(end - h) < UINT_MAX ? (size_t)(end - h) : UINT_MAX);
	ps->z.next_out = ps->out;
	ps->z.avail_out = (uInt)size + 1; /* one more, to see the stream end where it says */
	zr = inflate(&ps->z, Z_FINISH);
	if (zr != Z_STREAM_END || ps->z.total_out != size)
		return 0;
	ps->out[size] = '\0';
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
 * SIZE\0" and then SIZE bytes, all of the stream.  1 done, 0 not here or
 * not a commit to read here (libgit2 then reads it, and says what is wrong).
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
	if ((err = read_loose(&n, ps, path)) <= 0 || !z_start(ps))
		return err < 0 ? err : 0;
	ps->z.next_in = ps->in;
	ps->z.avail_in = (uInt)n;
	ps->z.next_out = head;
	ps->z.avail_out = sizeof(head);
	zr = inflate(&ps->z, Z_NO_FLUSH);
	if (zr != Z_OK && zr != Z_STREAM_END)
		return 0;
	k = sizeof(head) - ps->z.avail_out;
	if (k < 9 || memcmp(head, "commit ", 7) || !(nul = memchr(head, '\0', k)))
		return 0;
	for (p = head + 7; p < nul; p++) {
		if (*p < '0' || *p > '9' || (p == head + 7 && *p == '0' && p + 1 < nul))
			return 0;
		size = size * 10 + (size_t)(*p - '0');
		if (size > COMMIT_MAX)
			return 0;
	}
	if (p == head + 7)
		return 0;
	hlen = (size_t)(nul - head) + 1;
	if (k - hlen > size || (err = out_room(ps, size)) < 0)
		return err < 0 ? err : 0;
	memcpy(ps->out, head + hlen, k - hlen);
	if (zr != Z_STREAM_END) {
		ps->z.next_out = ps->out + (k - hlen);
		ps->z.avail_out = (uInt)(size - (k - hlen) + 1); /* one more, to see the end */
		zr = inflate(&ps->z, Z_FINISH);
	}
	if (zr != Z_STREAM_END || ps->z.total_out != hlen + size)
		return 0;
	ps->out[size] = '\0';
	*len = size;
	return 1;
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
		if ((err = inflate_commit(r->packs, &r->packs->v[i], off, len)) != 0) {
			if (err == 1)
				*data = (const char *)r->packs->out;
			return err;
		}
		return 0; /* there, but not whole: libgit2 resolves it */
	}
	for (i = 0; i < r->ngraph_dirs; i++) {
		if ((err = loose_commit(r->packs, r->graph_dirs[i], id, len)) != 0) {
			if (err == 1)
				*data = (const char *)r->packs->out;
			return err;
		}
	}
	return 0;
}
