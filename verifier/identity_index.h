/* identity_index.h - an upstream repository's commits by identity key, kept on disk, shared by its refs, extended as they move. */
#ifndef PG_IDENTITY_INDEX_H
#define PG_IDENTITY_INDEX_H

#include "common/buf.h"
#include "repo/repo.h"

/*
 * The identity index of one upstream repository (its location): for every
 * commit reachable from the refs it covers, its identity key
 * (pg_identity_hash, verifier/match.h), its id and its author date.  A
 * copy of an upstream commit, however old, is then one probe away: no walk
 * by date, no window, no cap.
 *
 * It lives in HOME/identity/, one file per repository, written atomically
 * (a temporary file, fsync, rename): readers never see half a file, and
 * read it without a lock.  A write takes a lock (HOME/identity-locks/),
 * and when the file changed since it was read, does its work again from
 * what the other wrote, so that a CLI's verify and a service's job extend
 * it one after the other, never one over the other.  (Waiting for the lock
 * cannot be cancelled: nothing in the verifier asks it to stop.)  It
 * records its tips, one per ref that brought commits no other ref's tip
 * reaches (at most PG_IDENTITY_INDEX_TIPS; a ref that brings none takes no
 * slot), and holds exactly the commits those tips reach.  Opened for a ref
 * at tip T:
 *  - made from scratch on first use, when the file is damaged, when the key
 *    changed (PG_IDENTITY_INDEX_KEY below, and a fingerprint of what
 *    pg_identity_hash gives for a set of sample commits, so that a changed
 *    key function is noticed even if nobody bumps the version), when the
 *    ref's history was rewritten (its recorded tip is no longer an ancestor
 *    of T, or a recorded tip, or its history, is no longer in the
 *    repository), or when T brings commits past PG_IDENTITY_INDEX_TIPS
 *    refs; from every recorded tip and T;
 *  - else extended with the commits T has that no recorded tip had (O(those
 *    commits), as git rev-list T ^TIP...), and written again with T as the
 *    ref's tip: a ref moved, or a new ref, reads only what is new;
 *  - else (T is the ref's tip, or every commit of T is already held: a
 *    release branch below master, say) only mapped.
 * The rule that keeps every answer the one an index of T's history alone
 * would give: the commits the other tips reach and T does not (git rev-list
 * TIP... ^T: a ref's own unmerged work, or what a newer ref has above an
 * older one) are computed exactly (clock skew without a commit-graph walks
 * T's history down to its roots: seconds for the kernel), and never
 * answered by a probe, nor counted.  So a commit on another branch is
 * never "upstream" for this one.  The set depends on T and the recorded
 * tips alone: it is kept beside the ref's .chain file (REFSTEM.others,
 * checked when read, shared by both kinds), and an open at the same T and
 * tips reads it instead of walking (info.others_cached).
 * It records what it was made from: the tips, and the commit-graph the
 * commits were read through (pg_repo_graph_id: its checksum, which git's
 * own is checked against).  A graph git wrote again is reconciled: what
 * the new graph reaches from the tips is compared with what the index holds.
 * Every open checks its header, the table of
 * its segments' checksums and the order of 64 evenly spaced adjacent pairs;
 * every probe checks the segments (128 entries) it reads, once, before
 * anything in them is used; extending it, and opts.full_check, check every
 * entry (each segment's checksum, the order).  A damaged index
 * is never used: it is made again.
 * The directory is kept under a budget (opts.cache_size): after a write,
 * the least recently used upstreams' files go, never the one in use.
 * Making it reads every commit of the history once, in the packs' order,
 * a share of them at a time (pg_repo_reach_read), its entries sorted in
 * runs, both within opts.work_mem (PG_IDENTITY_INDEX_WORK_DEFAULT), and
 * merged as the file is written;
 * extending it reads the new ones; a probe reads a few blocks of the
 * file.  The file holds 36 bytes a commit.
 */
typedef struct pg_identity_index pg_identity_index;

/*
 * Bump when pg_identity_hash changes what it hashes.  (The fingerprint of
 * sample commits catches most changes without it, not all.)
 */
#define PG_IDENTITY_INDEX_KEY 2 /* 2: quoted commit ids are one marker (issue 11) */

typedef struct pg_identity_hit {
	pg_oid id;
	int64_t author_time;
} pg_identity_hit;

/* Bump when pg_author_subject_hash changes what it hashes. */
#define PG_SUBJECT_INDEX_KEY 1

/* What pg_identity_index_open did. */
enum pg_identity_index_action {
	PG_IDENTITY_INDEX_CURRENT,  /* already at the tip */
	PG_IDENTITY_INDEX_EXTENDED, /* new commits added */
	PG_IDENTITY_INDEX_BUILT,    /* made from scratch (see why) */
};

typedef struct pg_identity_index_info {
	enum pg_identity_index_action action;
	size_t added;          /* commits read and indexed this time */
	size_t others;         /* commits held for other refs only: never answered */
	bool others_cached;    /* they were read from the ref's .others file, no commit walked */
	const char *why;       /* for BUILT: "new", "rewritten", "key", "graph" (read through
				  another commit-graph), "damaged", "tips" (a ref past
				  PG_IDENTITY_INDEX_TIPS let the least recent go) */
	size_t pruned;         /* other upstreams' indexes removed for the budget */
	size_t runs;           /* sorted runs of entries written to a file and merged
				  (opts.work_mem); 0: sorted in memory */
	size_t shares;         /* a first index: the shares of the packs its commits were
				  listed and read in (opts.work_mem); 0: none read so */
} pg_identity_index_info;

/* The most refs one index records a tip for; one more that brings commits makes it again. */
#define PG_IDENTITY_INDEX_TIPS 64

/*
 * The working memory making or extending an index may take for its
 * entries, and a first index for the list of the commits it reads, when
 * none is given: 16 MiB.  Past it the entries are sorted in runs kept in
 * files (in HOME/identity, unlinked as they are made) and merged from
 * there, and the commits are listed and read a share of the packs at a
 * time; the file written is the same.  (A first verify at 1,000,000
 * commits peaks at 40 MB with it, and at 52 MB with 32 MiB, in the same
 * time: docs/speed.md.)
 */
#define PG_IDENTITY_INDEX_WORK_DEFAULT ((uint64_t)16 << 20)

/* The budget of HOME/identity when none is given: 1 GiB. */
#define PG_IDENTITY_INDEX_CACHE_DEFAULT ((uint64_t)1 << 30)

typedef struct pg_identity_index_opts {
	bool subjects;       /* the index by author and subject (the .subj file) */
	bool full_check;     /* check every entry, not a sample (pullgate verify --verify-index) */
	bool remake;         /* make it again whatever is there (a probe found it damaged) */
	uint64_t cache_size; /* bytes HOME/identity may hold; 0: the default */
	uint64_t work_mem;   /* bytes of entries held while making it; 0: the default */
	const char *ref;     /* the ref whose tip is given (its recorded tip); NULL: "" */
} pg_identity_index_opts;

/*
 * The index of upstream (a name for the upstream repository, e.g. its
 * location: it names the file), brought up to tip in r, from home, for the
 * ref opts.ref (pg_identity_index_open: the ref "").  info
 * (optional) says what was done.  Errors: those of reading the commits
 * (PG_EINVALID naming a malformed one), PG_EIO when the file cannot be
 * written, PG_ENOMEM.  A damaged or stale file is never an error: it is
 * made again.
 */
int pg_identity_index_open(pg_identity_index **out, pg_repo *r, const char *home,
			   const char *upstream, const pg_oid *tip, pg_identity_index_info *info);
void pg_identity_index_free(pg_identity_index *x);

/*
 * Opening one kind of index that has to be made reads every commit once
 * for both kinds, and keeps the other kind's entries for the thread, for
 * its index to take (verify opens the identity index, then the subject
 * index).  Free them when the other will not be opened now.
 */
void pg_identity_index_drop_spare(void);

/* pg_identity_index_open or _open_subjects, with opts (may be NULL). */
int pg_identity_index_open_opts(pg_identity_index **out, pg_repo *r, const char *home,
				const char *upstream, const pg_oid *tip,
				const pg_identity_index_opts *opts, pg_identity_index_info *info);

/*
 * The index file at path, of upstream, as it is (nothing made or
 * written): checked as an open checks it, every entry too with full.
 * PG_ENOTFOUND, PG_EINVALID when it is damaged or of another format or
 * key.  For tests, tools and fuzzing.
 */
int pg_identity_index_load(pg_identity_index **out, const char *path, const char *upstream,
			   bool subjects, bool full);

/*
 * Whether a probe met a segment whose checksum or order does not hold:
 * the probe returned only what it found before it, and the index must be
 * made again (opts.remake) and probed again.
 */
bool pg_identity_index_damaged(const pg_identity_index *x);

/* The bytes HOME/identity holds (the service's /metrics). */
int pg_identity_index_cache_size(uint64_t *out, const char *home);

/*
 * The same index keyed by pg_author_subject_hash (verifier/match.h), the
 * date fallback's key, in a file of its own beside the identity index
 * (HOME/identity/HASH.subj): made, extended and remade as that one is.
 */
int pg_identity_index_open_subjects(pg_identity_index **out, pg_repo *r, const char *home,
				    const char *upstream, const pg_oid *tip,
				    pg_identity_index_info *info);

/*
 * The commits whose identity key is key: up to max of them in out, in the
 * order of their ids; returns how many there are.  Only entries of
 * segments that hold are returned (pg_identity_index_damaged).
 */
size_t pg_identity_index_probe(pg_identity_hit *out, size_t max, const pg_identity_index *x,
			       uint64_t key);

/*
 * How many commits of the tip's history it holds (what a probe may
 * answer), and the tip it was brought to.
 */
size_t pg_identity_index_count(const pg_identity_index *x);
const pg_oid *pg_identity_index_tip(const pg_identity_index *x);
/* How many commits the file holds, for every ref it covers. */
size_t pg_identity_index_total(const pg_identity_index *x);
/* How many refs it records a tip for. */
size_t pg_identity_index_ntips(const pg_identity_index *x);
/* The index's file: files derived from the same upstream go beside it. */
const char *pg_identity_index_path(const pg_identity_index *x);

/*
 * The path of the file beside it named for its upstream and the ref it
 * was opened for, ending in ext (upstream.c's first-parent line: ".chain"),
 * appended to out.  The budget keeps it while that ref's index is written.
 */
int pg_identity_index_ref_file(pg_buf *out, const pg_identity_index *x, const char *ext);

#endif
