/* trailers.h - find the trailer block at the end of a commit message. */
#ifndef PG_TRAILERS_H
#define PG_TRAILERS_H

#include "repo/object.h"

/*
 * The trailer block is the last paragraph of the message, when that is not
 * also the first (the subject is never a trailer block), and when every line
 * of it is a "Token: value" trailer, a continuation line (leading
 * whitespace) or a "(cherry picked from commit ...)" note.  As in git, a
 * block that mixes in other lines still counts when at least a quarter of
 * its lines are trailers and one of them is a Signed-off-by or a
 * cherry-pick note.
 *
 * On success *out holds *n trailers (free with pg_trailers_free) and
 * *body_len is the length of the message before the block with trailing
 * whitespace removed; with no block, *n is 0 and *body_len is the trimmed
 * message length.
 */
int pg_trailers_parse(pg_trailer **out, size_t *n, size_t *body_len,
		      const char *msg, size_t len);
void pg_trailers_free(pg_trailer *t, size_t n);

/* The *body_len pg_trailers_parse gives, without the trailers: nothing allocated. */
size_t pg_trailers_body_len(const char *msg, size_t len);

/* Whether two trailers say the same thing (keys case-insensitive, values trimmed). */
bool pg_trailer_equal(const pg_trailer *a, const pg_trailer *b);

#endif
