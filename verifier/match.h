/* match.h - commit identity (who, when, what message) and field-by-field deltas. */
#ifndef PG_MATCH_H
#define PG_MATCH_H

#include "repo/object.h"

/*
 * Two commits share an identity when they have the same author (name,
 * e-mail, time and zone) and the same message apart from the trailer
 * block and the commit ids it quotes.  A rewrite keeps this identity while
 * changing the id: a filter-repo copy, an amend, a rebase, a cherry-pick or
 * a date rewrite.  The committer is deliberately not part of it: a rebase
 * changes it.  Quoted ids are not either: git-filter-repo (and so b4
 * trailers -u) rewrites every id it knows in the messages it copies, in
 * "This reverts commit X", "Commit X (...)" or a Fixes: alike.
 */
uint64_t pg_identity_hash(const pg_commit *c);
/* The same of a commit's keys read without parsing it whole (repo/object.h). */
uint64_t pg_identity_hash_keys(const pg_commit_keys *k);
bool pg_identity_equal(const pg_commit *a, const pg_commit *b);

/*
 * The looser key of the date fallback: the author's name and e-mail and the
 * subject (its quoted ids as one marker), without the author date or the
 * rest of the message.  `git commit --amend --date`, `rebase --ignore-date`
 * and `--reset-author-date` change the date and keep these; an upstream
 * commit that shares them with a pull commit, and not its identity, is a
 * copy only when the patch says so (a merge: its tree and parents), so the
 * patch ids are computed only for the few pull commits that share this key.
 */
uint64_t pg_author_subject_hash(const pg_commit *c);
uint64_t pg_author_subject_hash_keys(const pg_commit_keys *k);
bool pg_author_subject_equal(const pg_commit *a, const pg_commit *b);

/*
 * A line of a message that names the commit it was picked from, as the
 * backport workflows write it: "(cherry picked from commit X)" (git
 * cherry-pick -x), "commit X upstream." and "[ Upstream commit X ]" (the
 * stable trees), "Backported-from: X".  X is 7 to 40 hex digits.
 */
typedef struct pg_backport_label {
	size_t id, id_len;     /* X, in the message */
	size_t line, line_len; /* the whole line, its newline excluded */
} pg_backport_label;

/* The next label in s[from..len): 1 with *out set, or 0 when there is none. */
int pg_backport_label_next(pg_backport_label *out, const char *s, size_t len, size_t from);

/*
 * A quoted commit id, as filter-repo finds them: a word (letters, digits,
 * '_') made only of 7 or more hex digits 0-9a-f.  Finds the next one in
 * s[from..len): 1 with *start and *n set, or 0 when there is none.
 */
int pg_quoted_id_next(const char *s, size_t len, size_t from, size_t *start, size_t *n);

/* Whether a and b are equal once every quoted id is taken as the same word. */
bool pg_text_equal_but_ids(const char *a, size_t alen, const char *b, size_t blen);

enum pg_header_change_kind {
	PG_HEADER_REMOVED, /* upstream has it, the pull copy lost it */
	PG_HEADER_ADDED,   /* the pull copy has it, upstream did not */
	PG_HEADER_CHANGED,
};

typedef struct pg_header_change {
	enum pg_header_change_kind kind;
	const char *name;
	const pg_header *pull;     /* NULL when removed */
	const pg_header *upstream; /* NULL when added */
} pg_header_change;

/* A quoted id that differs between a copy and its original, in the same place. */
typedef struct pg_quoted_id {
	const char *pull;      /* borrowed from the pull commit's message or trailers */
	size_t pull_len;
	const char *upstream;  /* borrowed from the upstream commit */
	size_t upstream_len;
} pg_quoted_id;

/* What differs between a pull commit and the upstream commit it copies. */
typedef struct pg_commit_delta {
	bool parents;
	bool tree;
	bool author;          /* name, e-mail, time or zone */
	bool author_date;     /* time or zone (only the date fallback finds such a copy) */
	bool committer;
	bool committer_date;  /* time or zone */
	bool body;            /* the message before the trailers, quoted ids included */
	bool message;         /* that body beyond its quoted ids (the date fallback) */
	const pg_trailer **trailers_added;   /* borrowed from the pull commit */
	size_t ntrailers_added;
	const pg_trailer **trailers_removed; /* borrowed from the upstream commit */
	size_t ntrailers_removed;
	pg_header_change *headers;
	size_t nheaders, headers_alloc;
	/*
	 * Quoted ids that changed, in the body and in trailers that are
	 * otherwise equal (such a trailer is neither added nor removed), each
	 * pair once, in the order they appear.
	 */
	pg_quoted_id *quoted;
	size_t nquoted, quoted_alloc;
} pg_commit_delta;

/* Fill *out (pointers borrowed from the two commits); release with _release. */
int pg_commit_delta_compute(pg_commit_delta *out, const pg_commit *pull,
			    const pg_commit *upstream);
void pg_commit_delta_release(pg_commit_delta *d);

#endif
