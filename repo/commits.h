/* commits.h - the commit source of the walks: parents, dates and generations by id. */
#ifndef PG_REPO_COMMITS_H
#define PG_REPO_COMMITS_H

#include "repo/internal.h"

/*
 * For the files of repo/ only.  A walk asks the source for commits by id and gets
 * nodes that know their parents (as nodes), committer date and generation.
 * A commit in one of the repository's trusted commit-graphs is read from
 * the graph, and its parents come by position, without a lookup; any other
 * commit is read from the object database, parsing only the header lines a
 * walk needs, as libgit2's revwalk does (and as strictly: a commit it would
 * refuse is refused here, named).  Nodes live as long as the source.
 */

/* The generation of a commit no graph holds: above every other. */
#define PG_GEN_INFINITY UINT64_MAX

typedef struct pg_cnode {
	pg_oid id;
	int64_t time;          /* committer date */
	uint64_t gen;          /* generation, or PG_GEN_INFINITY */
	struct pg_cnode **parents;
	uint32_t nparents;
	uint32_t flags;        /* the walk's own */
	uint32_t aux;          /* the walk's own */
	uint32_t graph;        /* 1 + the graph holding it, 0: none or not looked up */
	uint32_t pos;          /* its position there */
	bool looked_up;        /* graphs searched (or the position known) */
	bool parsed;
	struct pg_cnode *two[2]; /* parents' storage for up to two */
} pg_cnode;

typedef struct pg_csrc {
	pg_repo *r;
	git_odb *odb;
	pg_cnode **table;      /* open addressing by id */
	uint64_t *keys;        /* each slot's id's first 8 bytes: no pointer chased to miss */
	size_t cap, count;
	pg_cnode **chunks;     /* node storage; nodes never move */
	size_t nchunks, chunks_alloc;
	size_t from_graph, from_odb; /* how each parsed node was read */
} pg_csrc;

int pg_csrc_init(pg_csrc *s, pg_repo *r);
void pg_csrc_release(pg_csrc *s);

/* The node for id, created unparsed when new. */
int pg_csrc_node(pg_cnode **out, pg_csrc *s, const pg_oid *id);

/*
 * Fill n's parents, date and generation (once).  PG_EINVALID naming the
 * commit when it is malformed or not a commit, PG_ENOTFOUND when the
 * repository does not have it, PG_EINVALID for a corrupt graph entry.
 */
int pg_csrc_parse(pg_csrc *s, pg_cnode *n);

/* pg_csrc_node and pg_csrc_parse in one. */
int pg_csrc_get(pg_cnode **out, pg_csrc *s, const pg_oid *id);

/* Call fn for every node the source holds, in no particular order. */
void pg_csrc_each(pg_csrc *s, void (*fn)(void *ctx, pg_cnode *n), void *ctx);

/*
 * The commit of the tips' history, then of each hidden one's, that
 * stopped a walk with err (PG_ENOTFOUND: a shallow clone's history ends
 * there): named in the error; err when none is found (walk.c).
 */
int pg_repo_walk_diagnose(pg_repo *r, const pg_oid *tips, size_t ntips, const pg_oid *hide,
			  size_t nhide, int err);

#endif
