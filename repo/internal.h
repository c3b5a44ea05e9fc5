/* internal.h - what the repo/ files share: libgit2, the handle, error and id conversions. */
#ifndef PG_REPO_INTERNAL_H
#define PG_REPO_INTERNAL_H

#include "common/map.h"
#include "common/progress.h"
#include "repo/graph.h"
#include "repo/repo.h"

#include <git2.h>
#include <signal.h>

/*
 * Only the .c files of repo/ include this header (check-code.sh refuses git2.h
 * anywhere else), so libgit2 types never appear in another header.
 */

typedef struct pg_packs pg_packs;

struct pg_repo {
	git_repository *git;
	char *path;             /* as it was opened, for messages */
	pg_map attached;        /* object directories attached as alternates */
	char **attached_keys;   /* the map's keys, owned here */
	size_t nattached, attached_alloc;
	/*
	 * The object directories whose commit-graphs the walks may read: the
	 * repository's own and those of repositories attached as trusted,
	 * never one whose files a pull's sender controls (a graph is not
	 * checked against the objects: a lying one would hide commits).
	 */
	char **graph_dirs;
	size_t ngraph_dirs, graph_dirs_alloc;
	pg_graph **graphs;      /* opened on first use (repo/commits.c) */
	size_t ngraphs, graphs_alloc;
	bool graphs_loaded;
	enum pg_graph_gen gen;  /* the generation kind every loaded graph has */
	char *graph_checks;     /* where checked graph files are remembered, or NULL */
	char *graph_warning;    /* why a trusted graph was left out, or NULL */
	pg_packs *packs;        /* the trusted directories' packs (pack.c), on first use */
	git_odb *untrusted;     /* the untrusted attached directories alone (read.c), or NULL */
	pg_read_ahead read_ahead; /* pg_repo_set_read_ahead's; zeros: the defaults */
	size_t read_ahead_batches; /* the last reading's batches inflated by other threads */
	pg_progress_fn progress; /* a fetch's transfer progress, or NULL */
	void *progress_ctx;
	uint64_t progress_shown_ms, progress_started_ms;
};

/*
 * Let the walks read the commit-graph of objdir (and of the directories
 * its info/alternates names); commits.c.  Nothing when objdir does not
 * exist.
 */
int pg_repo_trust_graph(pg_repo *r, const char *objdir);
/* Unmap the graphs and packs; the next walk opens them again. */
void pg_repo_graphs_release(pg_repo *r);

/*
 * The bytes of commit id when a pack of a trusted directory holds it whole
 * (pack.c): 1 with *data (valid until the next call, NUL-terminated) and
 * *len set; 0 when it must be read through the object store (not there, a
 * delta, past the size this reader takes); PG_EINVALID naming the file when
 * what is there is damaged (a stream cut short, a header that lies): an
 * error, never handed on; PG_EIO, PG_ENOMEM.
 */
int pg_repo_pack_commit(const char **data, size_t *len, pg_repo *r, const pg_oid *id);

/* Where a commit is in the trusted packs (pg_repo_pack_locate). */
typedef struct pg_pack_loc {
	uint64_t off;  /* in its pack; 0: in none */
	uint32_t pack;
	uint32_t i;    /* which of the ids */
} pg_pack_loc;

/*
 * Where each commit locs[k].i of ids is, locs sorted by their ids: each
 * pack's index is read in order, a window at a time (not made resident),
 * stepped through where the ids are dense and searched to the next id
 * where they are far apart (a few ids among many objects).
 */
int pg_repo_pack_locate(pg_pack_loc *locs, size_t n, pg_repo *r, const pg_oid *ids);

/*
 * pg_repo_pack_locate over many calls whose ids come in order, one after
 * another (a history listed in a commit-graph's order, a chunk at a
 * time): each pack's index is walked once along all of them, not from its
 * start each call.  Ids out of that order are located in none.
 */
typedef struct pg_pack_locator pg_pack_locator;
int pg_pack_locator_new(pg_pack_locator **out, pg_repo *r);
int pg_pack_locator_next(pg_pack_locator *lc, pg_pack_loc *locs, size_t n, const pg_oid *ids);
void pg_pack_locator_free(pg_pack_locator *lc);

/*
 * pg_repo_read_commits_raw of commits already located: locs[k].i names
 * one of ids, .pack and .off where it lies (.off 0: in no trusted pack);
 * locs are sorted by place here.
 */
int pg_repo_read_located(pg_repo *r, const pg_oid *ids, pg_pack_loc *locs, size_t n,
			 pg_repo_commit_bytes_fn fn, void *ctx);

/* qsort_r's order of pg_pack_loc by their ids (ids, the array .i numbers): read.c */
int pg_repo_loc_by_id(const void *a, const void *b, void *ids);

/*
 * The length of each trusted pack, in the order pg_pack_loc.pack numbers
 * them: *n of them in *out (malloc()ed).
 */
int pg_repo_pack_lens(uint64_t **out, uint32_t *n, pg_repo *r);

/* pg_repo_pack_commit for a commit located (loc->off not 0). */
int pg_repo_pack_commit_at(const char **data, size_t *len, pg_repo *r, const pg_pack_loc *loc,
			   const pg_oid *id);
void pg_packs_free(pg_packs *ps);

/*
 * The bytes of commit id: from a trusted pack (pack.c's buffer, until its
 * next read) or from the object store (*obj, the caller's to free);
 * read.c.
 */
int pg_repo_commit_bytes(const char **data, size_t *len, git_odb_object **obj, pg_repo *r,
			 const pg_oid *id);

/*
 * pg_repo_read_commits_raw's reading of locs (sorted by place) with other
 * threads inflating ahead (read_ahead.c), when r's settings and the CPUs
 * say so and the threads could be started: *ran then, and the reading's
 * result (0, or negative: fn's or the reading's error).  Otherwise *ran
 * is false, nothing was read, and the caller reads them alone.
 */
int pg_repo_read_ahead(bool *ran, pg_repo *r, const pg_oid *ids, const pg_pack_loc *locs,
		       size_t n, pg_repo_commit_bytes_fn fn, void *ctx);

/*
 * A reading of r's packs for another thread (pg_repo_read_commits_raw's
 * inflating ahead, read_ahead.c): pg_pack_reader_commit is
 * pg_repo_pack_commit_at with a zlib stream and pack windows of the
 * reader's own, so that it may run beside the repository's own reads on
 * its caller's thread, and it allocates nothing (a new thread's first
 * malloc costs it an arena).  r's packs are loaded by pg_pack_reader_new
 * (on the caller's thread) and must stay (r neither freed nor its packs
 * let go of) until the reader is freed.  *data is the reader's until its
 * next read.
 */
typedef struct pg_pack_reader pg_pack_reader;
int pg_pack_reader_new(pg_pack_reader **out, pg_repo *r);
int pg_pack_reader_commit(const char **data, size_t *len, pg_pack_reader *rd,
			  const pg_pack_loc *loc, const pg_oid *id);
void pg_pack_reader_free(pg_pack_reader *rd);

/*
 * Check every pack index in objdir/pack, and the pack beside it, before
 * libgit2 may open them (pack.c): a regular file (opened without waiting:
 * libgit2's plain open waits for ever on a FIFO), a version 1 or 2 index
 * whose fanout is in order and whose size is what its object count makes,
 * a pack whose header says "PACK", version 2 or 3, and the same count.
 * libgit2 1.5 trusts the fanout, and one claiming 2^32-1 objects makes it
 * read past the file.  A pair found good is remembered by path, device,
 * inode, size and mtime, and not read again.  each (may be NULL) is called
 * with every good index that has its pack.  PG_EINVALID naming the file
 * and what is wrong.
 */
int pg_repo_check_packs(const char *objdir, int (*each)(void *ctx, const char *idx_path),
			void *ctx);

/* The largest loose object read: what a pg_buf can hold. */
#define PG_LOOSE_MAX PG_BUF_DEFAULT_MAX

typedef struct pg_loose {
	git_object_t type;
	size_t size;
	unsigned char *data; /* size bytes and a NUL; NULL for a header read */
} pg_loose;

/*
 * The loose object id of the object directory objdir, inflated and
 * checked (pack.c), for the object store's loose backend (odb.c): a
 * regular file, a "type size" header of one of the four types, a size at
 * most PG_LOOSE_MAX that its file can hold; unless header_only, exactly
 * that many bytes, hashing to id.  out->data comes from
 * git_odb_backend_data_alloc(b) (malloc when b is NULL).  PG_ENOTFOUND when
 * there is no such file; PG_EINVALID "object X in 'objdir' is damaged: why"
 * (or naming a file that is no regular file); PG_ENOMEM.
 */
int pg_loose_read(pg_loose *out, git_odb_backend *b, const char *objdir, const git_oid *id,
		  bool header_only);

/* How pg_git_odb_add adds a directory. */
enum pg_odb_flags {
	PG_ODB_ALTERNATE = 1 << 0, /* after the store's own directories */
	PG_ODB_UNTRUSTED = 1 << 1, /* a sender's: only the packs checked now are read,
				    * one by one, never a pack that appears later */
	PG_ODB_OWN_ONLY = 1 << 2   /* not the directories its info/alternates names */
};

/*
 * Add the object directory objdir to odb (odb.c): its packs, checked first
 * (pg_repo_check_packs), through libgit2's pack reader; its loose objects
 * through pullgate's (pg_loose_read), never libgit2's, which loops for ever
 * on a file cut short; then, unless PG_ODB_OWN_ONLY, the directories its
 * info/alternates names, as git does (relative to objdir, 5 levels).
 */
int pg_git_odb_add(git_odb *odb, const char *objdir, unsigned flags);

/*
 * Give git, just opened, an object store of pg_git_odb_add's making in
 * place of libgit2's own: its objects directory and their alternates.
 */
int pg_git_odb_setup(git_repository *git, unsigned flags);

/*
 * Before libgit2 reads id: its loose file in r's object directories (its
 * own and those attached), where there is one, is a regular file (stat:
 * nothing is opened).  libgit2 reads a loose object with a plain open,
 * which waits for ever on a FIFO.  PG_EINVALID naming the file (read.c).
 */
int pg_repo_loose_check(pg_repo *r, const pg_oid *id);

/* Convert a libgit2 failure to one of ours, keeping its message after "what: " (error.c). */
int pg_git_fail(int gerr, const char *fmt, ...) PG_PRINTF(2, 3);

static inline const git_oid *pg_git_oid(const pg_oid *id)
{
	/* both are the 20 raw bytes of a SHA-1 */
	return (const git_oid *)(const void *)id->id;
}

static inline void pg_oid_from_git(pg_oid *out, const git_oid *id)
{
	memcpy(out->id, id->id, PG_OID_RAWSZ);
}

/*
 * stream.c: the network stream that honours this thread's fetch limits.
 * Register it (once per process) before a fetch; begin a fetch with its
 * limits, and end it to learn whether they stopped it.  check is what the
 * stream and the transfer callbacks ask: 0, or -1 with libgit2's error set
 * once the deadline passed or the flag was set.
 */
int pg_git_stream_register(void);
/*
 * A commit the trusted reader (pack.c) did not have, through libgit2, which
 * hashes it against its id: the untrusted attached directories first
 * (read.c).  A libgit2 error code; the caller says what failed.
 */
int pg_git_read_commit(git_odb_object **obj, pg_repo *r, git_odb *odb, const pg_oid *id);
/* Ask an attached directory that is not trusted first for commits (read.c). */
int pg_git_add_untrusted(pg_repo *r, const char *objects);
/* Parse the CA bundle libgit2's init was spared (tls.c); before any fetch by URL. */
int pg_git_tls_load(void);
void pg_git_fetch_begin(unsigned timeout_s, const volatile sig_atomic_t *cancel);
int pg_git_fetch_check(void);
int pg_git_fetch_end(bool *timed_out, bool *cancelled);

/*
 * The object the ref `name` of git points at, symbolic refs followed.
 * Messages name the ref as `shown` in the repository `where`, so that a
 * ref fetched under another name is reported as the user wrote it.
 */
int pg_git_ref_target(pg_oid *out, git_repository *git, const char *name, const char *shown,
		      const char *where);

/* Unlink a stale lock file; 0 when it is not there. */
int pg_repo_unlink_stale(const char *path);

#endif
