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
 * *len set; 0 when it must be read through libgit2 (not there, a delta, a
 * fault); PG_ENOMEM.
 */
int pg_repo_pack_commit(const char **data, size_t *len, pg_repo *r, const pg_oid *id);
void pg_packs_free(pg_packs *ps);

/*
 * Every pack index in objdir/pack is a regular file (stat: nothing is
 * opened).  libgit2 opens an index with a plain open, which waits for ever
 * on a FIFO: a repository whose objects libgit2 may read is checked before
 * it reads any.  PG_EINVALID naming the file.
 */
int pg_repo_check_packs(const char *objdir);

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
