/* identity_internal.h - what the identity index's three files share: its format, its struct, runs (private). */
#ifndef PG_IDENTITY_INTERNAL_H
#define PG_IDENTITY_INTERNAL_H

#include "common/buf.h"
#include "common/pagefile.h"
#include "verifier/identity_index.h"

/*
 * The file, all numbers little-endian:
 *	0   "PGIDENT1"
 *	8   u32 format, u32 the key's version (PG_IDENTITY_INDEX_KEY, PG_SUBJECT_INDEX_KEY)
 *	16  u64 fingerprint of the key function
 *	24  u64 count of entries
 *	32  the tip indexed (20 bytes), u32 length of the name
 *	56  u64 0 (format 3: the entries' checksum, which their segments'
 *	    checksums below and the table's at 88 already cover: computing it
 *	    made every extension checksum the whole file twice more)
 *	64  the commit-graph the commits were read through (20 bytes:
 *	    pg_repo_graph_id), u32 1 when there was one, else 0
 *	88  u64 checksum of the table of segments
 *	96  u64 checksum of bytes 0..95
 *	104 the name, then count entries sorted by (key, id):
 *	    u64 key, i64 author date, the id (20 bytes)
 *	    then the table: u64 checksum of each SEGMENT entries (the last may be short)
 *	    then the tips: u32 how many, each its id (20 bytes), u32 length of
 *	    its ref's name, the name; u64 checksum of the tips
 * The tips come last so that the entries stay where a format 2 file had them.
 */
#define MAGIC "PGIDENT1"
#define FORMAT 4 /* 4: the checksum mixes 32 bytes a step; 56 is 0 */
#define HEADER 104
#define ENTRY 36
#define NAME_MAX_LEN 4096
/*
 * A probe checks the segments it reads (4.5 KiB each) against the table,
 * once: what it finds was written so, without reading the whole file on
 * every open (36 MiB for the kernel's history: docs/speed.md).
 */
#define SEGMENT 128
/*
 * Adjacent pairs checked in order on every open, evenly spaced: each is a
 * block read, and past 256 of them the file is mapped (common/pagefile.c),
 * after which every read faults in 64 KiB: 256 samples cost a verify of
 * the kernel 14 MB of RSS and 10 ms (bench/verify.sh, oldauthor7).
 */
#define SAMPLES 64

/* A probe reads a few entries of a file of 36 MiB: through a small block cache. */
#define CACHE_BLOCKS 1024

/* The tip a ref was last brought to (an index records one per ref with commits of its own). */
typedef struct tip_slot {
	pg_oid tip;
	char *ref;
} tip_slot;

struct pg_identity_index {
	pg_pagefile *f;         /* the file, when read from disk */
	unsigned char head[HEADER];
	uint64_t entries_off;   /* where its entries start */
	size_t count;
	pg_oid tip;
	pg_oid graph;           /* what it was built through (has_graph) */
	bool has_graph;
	uint64_t *segments;     /* the table of the file's segments' checksums */
	unsigned char *checked; /* one bit per segment: checked */
	size_t nsegments;
	bool damaged;           /* a probe met a segment that does not hold */
	char *path;             /* the file's */
	const struct key_kind *kind;
	tip_slot *tips;         /* the refs' tips, the most recently moved first */
	size_t ntips;
	pg_oid *others;         /* sorted: commits only other refs reach, never answered */
	size_t nothers;
	char ref_stem[32];      /* names the files of the ref it was opened for */
};

/*
 * What an index is keyed by.  The identity index and the date fallback's
 * index of author and subject are the same machinery over another key
 * function, each in a file of its own.
 */
typedef struct key_kind {
	const char *ext;   /* the file's name after the upstream's hash */
	uint32_t version;  /* stored: a changed key makes the file again */
	uint64_t (*key)(const pg_commit_keys *c);
	uint64_t (*of_commit)(const pg_commit *c); /* the same, of a parsed commit (a probe's) */
} key_kind;

/*
 * A first index of a big history has 36 bytes a commit of each kind to
 * sort (36 MiB for a million commits, and as much for the other kind): they
 * are sorted in runs of at most cap entries, each written to a file of its
 * kind once full (made in the index's directory and unlinked at once:
 * nothing is left however the process ends), and merged from there as the
 * index is written (write_index).  A build that fits in one run never
 * touches a file: its entries are sorted in memory, as they always were.
 */
typedef struct runs {
	unsigned char *mem;  /* the run being filled, up to cap entries; the last, sorted */
	size_t nmem, cap;
	int fd;              /* the runs written, one after another, when file */
	bool file;
	size_t *ends;        /* each written run's end in the file, in entries */
	size_t nruns, ends_alloc;
	size_t total;        /* entries in all runs (a commit twice in one run: once) */
	size_t shares;       /* the shares a first index's commits were read in (pg_repo_reach_read) */
	const char *dir;     /* where the file is made, while runs are added */
	char *where;         /* the file, named in errors: "a run file in 'dir'" */
} runs;

/* identity_index.c: the numbers of the file, its checksum, entries, tips, the header read back */
void pg_identity_put64(unsigned char *p, uint64_t v);
uint64_t pg_identity_get64(const unsigned char *p);
void pg_identity_put32(unsigned char *p, uint32_t v);
uint32_t pg_identity_get32(const unsigned char *p);
/* qsort/bsearch order of raw object ids */
int pg_identity_oid_cmp(const void *a, const void *b);
uint64_t pg_identity_checksum_start(uint64_t n);
uint64_t pg_identity_checksum_more(uint64_t h, const unsigned char *p, size_t n);
uint64_t pg_identity_checksum(const unsigned char *p, size_t n);
int pg_identity_entry_cmp(const void *a, const void *b);
void pg_identity_entry_put(unsigned char *e, uint64_t key, int64_t author_time, const pg_oid *id);
size_t pg_identity_unique_entries(unsigned char *e, size_t n);
void pg_identity_unmap(pg_identity_index *x);
void pg_identity_tips_free(tip_slot *v, size_t n);
size_t pg_identity_tips_size(const tip_slot *v, size_t n);
void pg_identity_put_tips(unsigned char *p, const tip_slot *v, size_t n);
bool pg_identity_header_ok(pg_identity_index *x, const char *name, uint64_t fingerprint,
	       const char **why);

/* identity_runs.c: a build's entries sorted in runs, and the files they and the index are written to */
void pg_identity_runs_init(runs *r, const char *dir, size_t cap);
void pg_identity_runs_release(runs *r);
void pg_identity_runs_move(runs *to, runs *from);
int pg_identity_io_all(int fd, const char *what, unsigned char *p, size_t len, uint64_t off,
	   bool write_it);
int pg_identity_scratch_file(int *fd, pg_buf *path, const char *dir, const char *name);
int pg_identity_runs_add(runs *r, uint64_t key, int64_t author_time, const pg_oid *id);
void pg_identity_runs_finish(runs *r);
int pg_identity_runs_merge(runs *r, int (*emit)(void *ctx, const unsigned char *e), void *ctx);

/* identity_write.c: the index written, merged with the old entries; the old entries checked */
int pg_identity_check_all(bool *ok, pg_identity_index *x);
int pg_identity_write_index(pg_identity_index *x, const char *path, const char *name,
		uint64_t fingerprint, const pg_oid *tip, const pg_oid *graph,
		bool merge, runs *add, size_t *added, tip_slot *tips, size_t ntips);

/* identity_tips.c: the refs' tips the index records, and the commits of other tips (HASH.others) */
const tip_slot *pg_identity_find_tip(const pg_identity_index *x, const char *ref);
bool pg_identity_tips_gone(pg_identity_index *x, pg_repo *r);
int pg_identity_tip_ids(pg_oid **out, const tip_slot *tips, size_t n);
int pg_identity_record_tips(tip_slot **out, size_t *n, bool *recorded, pg_repo *r,
			    const tip_slot *from, size_t nfrom, const char *ref, const pg_oid *tip,
			    bool brings);
bool pg_identity_is_other(const pg_identity_index *x, const unsigned char *id);
int pg_identity_others_cached(pg_identity_index *x, pg_repo *r, const pg_oid *tip, tip_slot *tips,
			      size_t *ntips, bool drop, bool *cached);
bool pg_identity_drop_broken(pg_identity_index *x, pg_repo *r, const pg_oid *tip, int err);

#endif
