/* match.h - commit identity (who, when, what message) and field-by-field deltas. */
#ifndef PG_MATCH_H
#define PG_MATCH_H

#include "repo/object.h"

/*
 * Two commits share an identity when they have the same author (name,
 * e-mail, time and zone) and the same message apart from the trailer
 * block.  A rewrite keeps this identity while changing the id: a
 * filter-repo copy, an amend, a rebase, a cherry-pick or a date rewrite.
 * The committer is deliberately not part of it: a rebase changes it.
 */
uint64_t pg_identity_hash(const pg_commit *c);
bool pg_identity_equal(const pg_commit *a, const pg_commit *b);

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

/* What differs between a pull commit and the upstream commit it copies. */
typedef struct pg_commit_delta {
	bool parents;
	bool tree;
	bool author;
	bool committer;
	bool committer_date;  /* time or zone */
	bool body;            /* the message before the trailers */
	const pg_trailer **trailers_added;   /* borrowed from the pull commit */
	size_t ntrailers_added;
	const pg_trailer **trailers_removed; /* borrowed from the upstream commit */
	size_t ntrailers_removed;
	pg_header_change *headers;
	size_t nheaders, headers_alloc;
} pg_commit_delta;

/* Fill *out (pointers borrowed from the two commits); release with _release. */
int pg_commit_delta_compute(pg_commit_delta *out, const pg_commit *pull,
			    const pg_commit *upstream);
void pg_commit_delta_release(pg_commit_delta *d);

#endif
