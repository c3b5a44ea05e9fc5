/* graph.h - git's commit-graph files, read in place: parents, dates and generations by position. */
#ifndef PG_GRAPH_H
#define PG_GRAPH_H

#include "common/oid.h"

/*
 * A pg_graph is the commit-graph of one object directory, as git writes it
 * (Documentation/gitformat-commit-graph.txt): the single file
 * info/commit-graph, else the chain info/commit-graphs/commit-graph-chain
 * with its layers.  The files are read in place, a few bytes at a time
 * through a small cache (common/pagefile.h: a walk touches a few bytes per
 * commit, and mapping would make 64 KiB of each touch resident), never
 * copied.  The trailing checksum of every file (git's SHA-1 of the rest of
 * it) is checked when a repository's graph is opened (pg_graph_open), once
 * per file: a file is known by its path, device, inode, size and mtime,
 * remembered in the process and, given a checks file, across processes.
 * A file whose checksum does not hold is refused like a truncated one.
 * Chunks this reader does not use (BIDX, BDAT, the old GDAT and GDOV, unknown ones) are skipped.
 *
 * A position is a commit's index in the whole chain (a layer's positions
 * follow those of the layers below it).  Every read is bounds-checked: a
 * truncated or hostile file is refused when it is opened (PG_EINVALID,
 * saying what is wrong), and an entry that points outside the file is
 * PG_EINVALID when it is read; nothing is ever read past the file.  A
 * pg_graph is used by one thread at a time.
 *
 * No libgit2 here: the repository layer decides which object directories
 * are trusted enough to have their graphs read (repo/commits.c).
 */
typedef struct pg_graph pg_graph;

/*
 * Which generation numbers a graph holds: corrected commit dates (v2) when
 * every layer has a GDA2 chunk, else topological levels (v1, in CDAT).  A
 * graph written before git 2.18 stores level 0, "not computed": such a
 * commit's generation is unknown (pg_graph_generation gives 0).
 */
enum pg_graph_gen {
	PG_GRAPH_GEN_LEVEL = 1,
	PG_GRAPH_GEN_DATE = 2,
};

/*
 * Open the commit-graph of the object directory objdir ("<repo>/objects").
 * 0 with *out NULL when there is none; PG_EINVALID (the message names the
 * file and the fault) when the single file, or the first layer of a chain,
 * is unusable.  A chain whose later layers are missing or do not fit is
 * cut before the first of them, as git does.  PG_ENOMEM, PG_EIO.
 */
int pg_graph_open(pg_graph **out, const char *objdir);

/*
 * pg_graph_open, remembering the files whose checksum held in the file
 * checks (NULL: in the process only), so that the next process does not
 * read them whole again.
 */
int pg_graph_open_checked(pg_graph **out, const char *objdir, const char *checks);

/*
 * Open one commit-graph file that has no base layers (for tests, tools and
 * fuzzing): its checksum is not checked, so that damage reaches the parser.
 */
int pg_graph_open_file(pg_graph **out, const char *path);

/* What the graph is: its top layer's checksum, which names its bases too. */
void pg_graph_id(pg_oid *out, const pg_graph *g);

/* Why upper layers of a chain were left out (a message), or NULL. */
const char *pg_graph_warning(const pg_graph *g);

void pg_graph_free(pg_graph *g);

/*
 * Its files mapped for a pass over most of its commits, and let go of after
 * it (pg_pagefile_map, pg_pagefile_let_go): other reads go through a cache.
 */
void pg_graph_map(pg_graph *g);
void pg_graph_let_go(pg_graph *g);

/* The number of commits in the graph (all layers). */
uint32_t pg_graph_count(const pg_graph *g);

/* The generation numbers g holds for every commit. */
enum pg_graph_gen pg_graph_gen_kind(const pg_graph *g);

/* Whether id is in g; *pos receives its position. */
bool pg_graph_find(const pg_graph *g, const pg_oid *id, uint32_t *pos);

/* The id at pos: PG_EINVALID past the graph, PG_EIO when the file cannot be read. */
int pg_graph_oid(pg_oid *out, const pg_graph *g, uint32_t pos);
/*
 * The ids at pos .. pos + n - 1 into out, read straight from the files
 * (neither cached nor mapped): for a listing in the graph's order.  Errors
 * as pg_graph_oid's.
 */
int pg_graph_oids(pg_oid *out, const pg_graph *g, uint32_t pos, uint32_t n);

/* One commit as the graph records it. */
typedef struct pg_graph_commit {
	int64_t time;        /* committer date, seconds since the epoch */
	uint64_t level;      /* topological level (v1); 0 when not computed */
	uint64_t date_gen;   /* corrected commit date (v2); 0 without GDA2 */
	uint32_t nparents;
	uint32_t first[2];   /* the first two parents' positions */
	uint32_t edge;       /* for nparents > 2: where parents 2.. start in EDGE */
	uint32_t pos;        /* where it was read */
} pg_graph_commit;

/*
 * Read the commit at pos.  Every parent position is checked to be in the
 * graph (an octopus's whole EDGE list is followed once): PG_EINVALID
 * naming the file when the entry is corrupt.
 */
int pg_graph_read(pg_graph_commit *out, const pg_graph *g, uint32_t pos);
/*
 * The two words of parents the entries of the commits at [pos, pos + n)
 * hold, 2 * n of them into out, read along the file (pread: neither
 * mapped nor through the cache): a walk of a whole history holds its
 * graph's parents in 8 bytes a commit, not the 36-byte entries mapped
 * (on a kernel with large folios, all of them resident).
 */
int pg_graph_parent_words(uint32_t *out, const pg_graph *g, uint32_t pos, uint32_t n);
/*
 * pg_graph_read of the commit at pos from the words pg_graph_parent_words
 * read: its parents alone, checked as pg_graph_read checks them (its date
 * and generation are neither read nor checked: a walk of all needs none).
 */
int pg_graph_read_parents(pg_graph_commit *out, const pg_graph *g, uint32_t pos,
			  const uint32_t words[2]);

/*
 * The position of parent i (< c->nparents) of a commit pg_graph_read
 * accepted (checked then to be in the graph); PG_EIO when the file cannot
 * be read.
 */
int pg_graph_parent(uint32_t *out, const pg_graph *g, const pg_graph_commit *c, uint32_t i);

/*
 * The generation of c of the given kind (a graph set whose graphs differ
 * uses the weakest, LEVEL, for all); 0 when it is unknown.
 */
uint64_t pg_graph_generation(const pg_graph_commit *c, enum pg_graph_gen as);

#endif
