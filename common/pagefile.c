/* pagefile.c - random reads of a big file through pread and a direct-mapped cache of 4 KiB blocks. */
#include "common/pagefile.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"

#include <sys/mman.h>
#include <unistd.h>

/*
 * Reads are dense enough to map the file once the blocks read (since it
 * was last let go of) reach a quarter of its blocks, and at least this
 * many (pg_pagefile_map_after sets another share).  At 1M commits
 * (bench/verify.sh, paired runs, 2026-12-06): the incident's verify reads
 * 627 blocks of a 60 MB commit-graph, 1,728 of a 110 MB pack index and 915
 * of a 36 MB subject index, and stays at 44 MB peak RSS unmapped, against
 * 97 MB mapped after 256; the walk of 10,500 commits to an old base reads
 * 26,353 blocks of the graph, 40 ms through the cache, 10 to 20 ms mapped
 * (71 MB).  A pread of a block costs ~2 us here.
 */
#define MAP_AFTER_MIN 256
#define MAP_AFTER_SHARE 4

typedef struct slot {
	uint64_t block;          /* which block it holds, when buf is not NULL */
	size_t len;              /* its bytes (the last block is short) */
	unsigned char *buf;
} slot;

struct pg_pagefile {
	int fd;
	uint64_t size;
	slot *slots;
	size_t nslots;           /* a power of two */
	size_t misses;           /* blocks read since it was last let go of */
	size_t map_after;        /* misses that make it mapped */
	unsigned char *map;      /* the whole file, while mapped */
	char *path;              /* for messages */
};

int pg_pagefile_open(pg_pagefile **out, const char *path, size_t max_blocks)
{
	pg_pagefile *f;
	off_t size;
	size_t n = 1;
	int err;

	*out = NULL;
	while (n < max_blocks && n < ((size_t)1 << 20))
		n <<= 1;
	if (!(f = calloc(1, sizeof(*f))))
		return pg_error_oom();
	f->fd = -1;
	if (!(f->slots = calloc(n, sizeof(*f->slots))) || !(f->path = pg_strdup(path))) {
		pg_pagefile_free(f);
		return pg_error_oom();
	}
	f->nslots = n;
	if ((err = pg_open_regular(&f->fd, &size, path, PG_OPEN_READ, NULL)) < 0) {
		pg_pagefile_free(f);
		return err == PG_ENOTFOUND ? pg_error_set(PG_ENOTFOUND, "'%s' does not exist", path) :
		       err;
	}
	f->size = (uint64_t)size;
	pg_pagefile_map_after(f, MAP_AFTER_SHARE);
	*out = f;
	return 0;
}

void pg_pagefile_free(pg_pagefile *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; f->slots && i < f->nslots; i++)
		free(f->slots[i].buf);
	free(f->slots);
	if (f->map)
		munmap(f->map, (size_t)f->size);
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f);
}

void pg_pagefile_map_after(pg_pagefile *f, unsigned share)
{
	uint64_t n = f->size / PG_PAGEFILE_BLOCK / (share ? share : 1);

	f->map_after = n < MAP_AFTER_MIN ? MAP_AFTER_MIN : n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

void pg_pagefile_map(pg_pagefile *f)
{
	void *m;
	size_t i;

	if (!f || f->map || !f->size || f->size > SIZE_MAX)
		return;
	m = mmap(NULL, (size_t)f->size, PROT_READ, MAP_PRIVATE, f->fd, 0);
	if (m == MAP_FAILED) {
		f->misses = 0; /* asked again only after as many reads */
		return;
	}
	f->map = m;
	/* the mapping serves every read until it is let go of */
	for (i = 0; i < f->nslots; i++) {
		free(f->slots[i].buf);
		f->slots[i].buf = NULL;
	}
}

void pg_pagefile_let_go(pg_pagefile *f)
{
	if (!f)
		return;
	f->misses = 0;
	if (!f->map)
		return;
	munmap(f->map, (size_t)f->size);
	f->map = NULL;
}

uint64_t pg_pagefile_size(const pg_pagefile *f)
{
	return f->size;
}

/* The cached block number b, read when it is not there. */
static int block(slot **out, pg_pagefile *f, uint64_t b)
{
	slot *s = &f->slots[b & (f->nslots - 1)];
	uint64_t off = b * PG_PAGEFILE_BLOCK;
	size_t want, got = 0;

	if (s->buf && s->block == b) {
		*out = s;
		return 0;
	}
	f->misses++;
	if (!s->buf && !(s->buf = malloc(PG_PAGEFILE_BLOCK)))
		return pg_error_oom();
	want = f->size - off < PG_PAGEFILE_BLOCK ? (size_t)(f->size - off) : PG_PAGEFILE_BLOCK;
	while (got < want) {
		ssize_t r = pread(f->fd, s->buf + got, want - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			s->len = 0;
			s->block = UINT64_MAX;
			return pg_error_set(PG_EIO, "'%s': %s", f->path,
					    r < 0 ? strerror(errno) : "shorter than it was");
		}
		got += (size_t)r;
	}
	s->block = b;
	s->len = got;
	*out = s;
	return 0;
}

int pg_pagefile_peek(const unsigned char **out, size_t *got, pg_pagefile *f, uint64_t off,
		     size_t len)
{
	slot *s = NULL;
	size_t in;
	int err;

	*out = NULL;
	*got = 0;
	if (off >= f->size)
		return 0;
	if (!f->map && f->misses >= f->map_after)
		pg_pagefile_map(f);
	if (f->map) {
		*out = f->map + off;
		*got = f->size - off < len ? (size_t)(f->size - off) : len;
		return 0;
	}
	if ((err = block(&s, f, off / PG_PAGEFILE_BLOCK)) < 0)
		return err;
	in = (size_t)(off % PG_PAGEFILE_BLOCK);
	*out = s->buf + in;
	*got = s->len - in < len ? s->len - in : len;
	return 0;
}

int pg_pagefile_pread(pg_pagefile *f, uint64_t off, void *dst, size_t len)
{
	unsigned char *d = dst;

	if (off > f->size || len > f->size - off)
		return pg_error_set(PG_EINVALID, "'%s': a read past its end", f->path);
	while (len) {
		ssize_t r = pread(f->fd, d, len, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return pg_error_set(PG_EIO, "'%s': %s", f->path,
					    r < 0 ? strerror(errno) : "shorter than it was");
		d += r;
		off += (uint64_t)r;
		len -= (size_t)r;
	}
	return 0;
}

int pg_pagefile_read(pg_pagefile *f, uint64_t off, void *dst, size_t len)
{
	unsigned char *d = dst;
	int err;

	if (off > f->size || len > f->size - off)
		return pg_error_set(PG_EINVALID, "'%s': a read past its end", f->path);
	while (len) {
		const unsigned char *p;
		size_t got;

		if ((err = pg_pagefile_peek(&p, &got, f, off, len)) < 0)
			return err;
		if (!got)
			return pg_error_set(PG_EIO, "'%s': shorter than it was", f->path);
		memcpy(d, p, got);
		d += got;
		off += got;
		len -= got;
	}
	return 0;
}
