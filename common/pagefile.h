/* pagefile.h - a big file read at random, a few bytes at a time, through a small block cache. */
#ifndef PG_PAGEFILE_H
#define PG_PAGEFILE_H

#include "common/compat.h"

/*
 * For the commit-graph, the pack indexes and the identity index: files of
 * tens or hundreds of MiB of which a walk reads a few bytes here and there.
 * Each such read is a pread of one 4 KiB block, kept in a direct-mapped
 * cache of at most max_blocks blocks, allocated as they are first used;
 * bytes that have been read stay in the kernel's page cache, not in the
 * process.  Mapped, each read would make resident what the page cache holds
 * around it: with large folios (Linux 6.18 here, ext4) touching one byte a
 * MiB of a 60 MB file made 29 MB resident, 510 KiB a touch.  So the file is
 * mapped only once the reads are dense (the blocks read reach a quarter of
 * the file's, or another share: pg_pagefile_map_after), where mapping costs less than the system calls and most of
 * it becomes resident anyway, or for a pass over most of it
 * (pg_pagefile_map), until it is let go of.
 * A pg_pagefile is used by one thread at a time.
 */
typedef struct pg_pagefile pg_pagefile;

#define PG_PAGEFILE_BLOCK 4096

/*
 * Open the regular file at path (pg_open_regular: a FIFO or a device is
 * refused without blocking).  PG_ENOTFOUND when it does not exist,
 * PG_EINVALID when it is not a regular file, PG_EIO otherwise.
 */
int pg_pagefile_open(pg_pagefile **out, const char *path, size_t max_blocks);
void pg_pagefile_free(pg_pagefile *f);

/*
 * Map it once the blocks read reach 1/share of its blocks (at least 256)
 * rather than a quarter: for a file whose reads turn dense early (a walk
 * of the commit-graph reads two or three blocks a commit).
 */
void pg_pagefile_map_after(pg_pagefile *f, unsigned share);

/*
 * Before a pass that reads most of the file at random: it is mapped and
 * read in place until pg_pagefile_let_go.  When it cannot be mapped, the
 * reads go on through the cache, slower, and nothing else changes.
 */
void pg_pagefile_map(pg_pagefile *f);

/*
 * After such a pass: the mapping is undone (its pages stay in the kernel's
 * page cache, out of the process) and later reads go through the cache
 * again, counted afresh, so that what reads little of the file later does
 * not keep the whole of it resident.  Nothing when it is not mapped.
 */
void pg_pagefile_let_go(pg_pagefile *f);
/* Its size when it was opened. */
uint64_t pg_pagefile_size(const pg_pagefile *f);

/*
 * Copy the len bytes at off into dst.  PG_EINVALID when they are not all
 * inside the file, PG_EIO when it cannot be read.
 */
int pg_pagefile_read(pg_pagefile *f, uint64_t off, void *dst, size_t len);

/*
 * The len bytes at off read straight into dst, neither through the cache
 * nor the mapping: for a pass over the file in order, which would make the
 * whole of it resident.  Errors as pg_pagefile_read's.
 */
int pg_pagefile_pread(pg_pagefile *f, uint64_t off, void *dst, size_t len);

/*
 * The bytes at off, up to len of them (fewer at a block's end): a pointer
 * into the cache, valid until the next call on f.  *got receives how many;
 * 0 past the end of the file.  PG_EIO when it cannot be read.
 */
int pg_pagefile_peek(const unsigned char **out, size_t *got, pg_pagefile *f, uint64_t off,
		     size_t len);

#endif
