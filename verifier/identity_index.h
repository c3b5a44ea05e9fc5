/* identity_index.h - an upstream's commits by identity key, kept on disk and extended as upstream moves. */
#ifndef PG_IDENTITY_INDEX_H
#define PG_IDENTITY_INDEX_H

#include "repo/repo.h"

/*
 * The identity index of one upstream (a location and a branch): for every
 * commit reachable from the last tip indexed, its identity key
 * (pg_identity_hash, verifier/match.h), its id and its author date.  A
 * copy of an upstream commit, however old, is then one probe away: no walk
 * by date, no window, no cap.
 *
 * It lives in HOME/identity/, one file per upstream, written atomically
 * (a temporary file, fsync, rename): readers never see half a file, and of
 * two writers the last one wins with a whole index.  pg_identity_index_open
 * brings it up to the tip it is given:
 *  - made from scratch on first use, when the file is damaged, when the key
 *    changed (PG_IDENTITY_INDEX_KEY below, and a fingerprint of what
 *    pg_identity_hash gives for a set of sample commits, so that a changed
 *    key function is noticed even if nobody bumps the version), or when
 *    upstream's history was rewritten (the last tip indexed is no longer
 *    an ancestor of the tip, or no longer in the repository);
 *  - else extended with the commits the tip has that the last tip had not
 *    (O(those commits), as git rev-list TIP ^LAST), and written again;
 *  - else, at the same tip, only mapped.
 * Making it reads every commit of the history once (minutes for the
 * kernel's million); extending it reads the new ones; a probe reads a few
 * pages of the mapped file.  The file holds 36 bytes a commit.
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
	const char *why;       /* for BUILT: "new", "rewritten", "key", "damaged" */
} pg_identity_index_info;

/*
 * The index of upstream (a name for the upstream, e.g. its location and
 * branch: it names the file), brought up to tip in r, from home.  info
 * (optional) says what was done.  Errors: those of reading the commits
 * (PG_EINVALID naming a malformed one), PG_EIO when the file cannot be
 * written, PG_ENOMEM.  A damaged or stale file is never an error: it is
 * made again.
 */
int pg_identity_index_open(pg_identity_index **out, pg_repo *r, const char *home,
			   const char *upstream, const pg_oid *tip, pg_identity_index_info *info);
void pg_identity_index_free(pg_identity_index *x);

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
 * order of their ids; returns how many there are.
 */
size_t pg_identity_index_probe(pg_identity_hit *out, size_t max, const pg_identity_index *x,
			       uint64_t key);

/* How many commits it holds, and the tip it was brought to. */
size_t pg_identity_index_count(const pg_identity_index *x);
const pg_oid *pg_identity_index_tip(const pg_identity_index *x);
/* The index's file: files derived from the same upstream go beside it. */
const char *pg_identity_index_path(const pg_identity_index *x);

#endif
