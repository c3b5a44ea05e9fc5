/* object.h - commits and tags parsed from their raw git object text. */
#ifndef PG_OBJECT_H
#define PG_OBJECT_H

#include "common/buf.h"
#include "common/oid.h"

/*
 * pullgate parses commit and tag objects itself, from the bytes libgit2
 * reads, so that every header (mergetag, gpgsig, encoding, unknown ones) is
 * seen exactly as it is stored, and so that the checks work on plain data
 * that unit tests can build without a repository.  Parsing is lenient: a
 * hostile object gives odd field values, never a crash.  What git itself
 * would never write (a parent listed twice, a second tree, author or
 * committer header, no tree) is kept in the commit's malformed, for the
 * caller to refuse: the parser does not, as an upstream history may hold
 * such a commit and still be read.
 */

/* An author, committer or tagger line: "Name <email> 1234567890 +0200". */
typedef struct pg_ident {
	char *name;
	char *email;
	int64_t time;   /* seconds since the epoch */
	int offset;     /* minutes east of UTC */
} pg_ident;

void pg_ident_release(pg_ident *id);
int pg_ident_parse(pg_ident *out, const char *s, size_t len);
/* Same name and email (email compared case-insensitively). */
bool pg_ident_same_person(const pg_ident *a, const pg_ident *b);
/* Append "Name <email>". */
int pg_ident_format(pg_buf *out, const pg_ident *id);
/* Append "2025-05-30 15:20:52 -0700". */
int pg_time_format(pg_buf *out, int64_t time, int offset);
/* Append it as a mail's Date writes it, whatever the locale: "Sun, 01 Jun 2025 09:00:00 -0700". */
int pg_time_format_mail(pg_buf *out, int64_t time, int offset);

/* A header other than tree/parent/author/committer, continuation lines joined. */
typedef struct pg_header {
	char *name;
	char *value;
	size_t value_len;
} pg_header;

typedef struct pg_trailer {
	char *key;    /* "Signed-off-by", or "(cherry picked from commit" */
	char *value;  /* everything after the separator, continuation joined */
	char *line;   /* the trailer as written, continuation lines included */
} pg_trailer;

typedef struct pg_commit {
	pg_oid id;
	pg_oid tree;
	pg_oid *parents;
	size_t nparents;
	pg_ident author;
	pg_ident committer;
	pg_header *headers; /* the extra headers, in order */
	size_t nheaders;
	char *message;      /* NUL-terminated copy; may contain earlier NULs */
	size_t message_len;
	char *subject;      /* the first line, trimmed */
	pg_trailer *trailers;
	size_t ntrailers;
	size_t body_len;    /* message length without the trailer block */
	char *malformed;    /* the first way the object breaks git's format, or NULL:
			       "parent <id> listed twice" */
} pg_commit;

/* Parse the body of a commit object (without the "commit <len>\0" prefix). */
int pg_commit_parse(pg_commit **out, const pg_oid *id, const char *data, size_t len);
void pg_commit_free(pg_commit *c);

/*
 * What a commit's identity keys need (verifier/match.h), read in one pass
 * over its headers and pointing into its bytes: nothing copied, nothing
 * allocated.  Each field is what pg_commit_parse makes of the same bytes:
 * the author's name and email and the subject end at a NUL, as its copies
 * do, the message is its message (body_len bytes of it before the trailer
 * block); an error where it gives one (a tree or parent id that is none).
 */
typedef struct pg_commit_keys {
	const char *name, *email;  /* the author's */
	size_t name_len, email_len;
	int64_t time;              /* the author's date */
	int offset;
	const char *message;
	size_t body_len;
	const char *subject;
	size_t subject_len;
} pg_commit_keys;

int pg_commit_keys_parse(pg_commit_keys *out, const char *data, size_t len);
/* The same of a parsed commit (whose fields it points into). */
void pg_commit_keys_of(pg_commit_keys *out, const pg_commit *c);

/* Count the headers called name (e.g. "mergetag"). */
size_t pg_commit_count_header(const pg_commit *c, const char *name);

typedef struct pg_tagobj {
	pg_oid object;
	char *type;       /* "commit", "tree"... */
	char *tag;        /* the name the tagger gave it */
	pg_ident tagger;
	bool has_tagger;
	char *message;    /* without the signature */
	size_t message_len;
	char *signature;  /* armored signature block, or NULL */
	size_t signature_len;
	char *payload;    /* the signed bytes: everything before the signature */
	size_t payload_len;
} pg_tagobj;

/* Parse a tag object body, or the value of a mergetag header. */
int pg_tagobj_parse(pg_tagobj **out, const char *data, size_t len);
void pg_tagobj_free(pg_tagobj *t);

#endif
