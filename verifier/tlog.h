/* tlog.h - kernel.org's transparency log: its push records parsed, and a local clone of the log indexed. */
#ifndef PG_TLOG_H
#define PG_TLOG_H

#include "common/buf.h"
#include "common/oid.h"

#include <signal.h>

/*
 * The gitolite transparency log (docs/transparency.md) is a public-inbox
 * v2 archive: git/0.git, git/1.git... ("epochs"), each commit on an
 * epoch's master adding one message as the blob "m" at the root of its
 * tree.  A message is one push: RFC 822 headers (Message-Id, Date), a
 * text/plain body in YAML (service, repo, user, git_push_cert_status,
 * changes: ref, old, new, log), and, as further MIME parts, the push
 * certificate of a signed push and any log too long to inline.
 *
 * Everything in a record is hostile: it is read under the caps below and a
 * record that breaks a rule is PG_EINVALID (PG_ETOOBIG past a cap) with a
 * message saying why, never a crash.
 */
#define PG_TLOG_RECORD_MAX ((size_t)16 << 20) /* a message blob past this is not read */
#define PG_TLOG_LOG_MAX ((size_t)2 << 20)     /* an inline log (gitolite inlines < 1 MiB) */
#define PG_TLOG_MAX_CHANGES 4096              /* refs of one push */
#define PG_TLOG_MAX_PARTS 16                  /* MIME parts of one record */
#define PG_TLOG_CERT_MAX ((size_t)1 << 20)    /* a push certificate */

/* One ref a push changed. */
typedef struct pg_tlog_change {
	char *ref;          /* refs/heads/..., refs/tags/... */
	pg_oid old_id;      /* zero: the ref was created */
	pg_oid new_id;      /* zero: the ref was deleted */
	char *log_file;     /* the attachment the log was moved to, or NULL (inline or none) */
	size_t log_lines;   /* lines of the log, inline or attached (0: none, or not read) */
	bool log_unread;    /* the log names an attachment the record does not hold, or
			       one past the mail reader's cap */
} pg_tlog_change;

/* One push record.  Every string is owned by the record. */
typedef struct pg_tlog_record {
	char *message_id;   /* as written, squeezed; NULL when none */
	char *date;         /* the Date header: when gitolite received the push */
	char *service;      /* git-receive-pack */
	char *repo;         /* pub/scm/linux/kernel/git/kees/linux */
	char *user;         /* the account that pushed */
	char *cert_status;  /* git_push_cert_status (G, B, U, N, E...), or NULL: unsigned */
	char *cert;         /* the attached push certificate's text, or NULL */
	size_t cert_len;
	pg_tlog_change *changes;
	size_t nchanges;
} pg_tlog_record;

/* Parse one message blob data[0..len).  *out is the caller's (pg_tlog_record_free). */
int pg_tlog_record_parse(pg_tlog_record **out, const char *data, size_t len);
void pg_tlog_record_free(pg_tlog_record *r);

/* The change of ref in r, or NULL. Borrowed. */
const pg_tlog_change *pg_tlog_record_change(const pg_tlog_record *r, const char *ref);

/*
 * A repository location as a record names it: any "scheme://host[:port]"
 * or scp-like "host:" dropped, then leading and trailing '/' and one
 * trailing ".git".  "https://git.kernel.org/pub/scm/linux/kernel/git/
 * kees/linux.git" is "pub/scm/linux/kernel/git/kees/linux".
 */
int pg_tlog_repo_path(pg_buf *out, const char *location);

/*
 * Whether a record's repo is the repository at location: its path (as
 * pg_tlog_repo_path) ends location's path at a '/' (or is all of it), so
 * that a kernel.org path names a URL of it and a local clone kept under
 * the same path.  A repo of fewer than two components never matches.
 */
bool pg_tlog_repo_matches(const char *record_repo, const char *location);

/* A signed push certificate (git push --signed), split; pointers into the text. */
typedef struct pg_push_cert_cmd {
	pg_oid old_id, new_id;
	const char *ref;    /* NUL-terminated copy owned by the cert */
} pg_push_cert_cmd;

typedef struct pg_push_cert {
	char *pusher;       /* "Name <email> time zone" */
	char *pushee;       /* the URL pushed to, or NULL */
	char *nonce;        /* or NULL */
	pg_push_cert_cmd *cmds;
	size_t ncmds;
	size_t payload_len; /* the signed bytes: text[0..payload_len) */
	const char *sig;    /* the armored signature, into the text */
	size_t sig_len;
} pg_push_cert;

/*
 * Parse "certificate version 0.1", its header lines, a blank line, the
 * commands ("OLD NEW REF") and the signature.  PG_EINVALID when it is not
 * one.  Release with pg_push_cert_release (text must outlive cert).
 */
int pg_push_cert_parse(pg_push_cert *cert, const char *text, size_t len);
void pg_push_cert_release(pg_push_cert *cert);

/* --- the log and its index (tlog_index.c) --------------------------------- */

typedef struct pg_tlog pg_tlog;

/* What opening the log did to its index. */
typedef struct pg_tlog_info {
	size_t epochs;       /* git/N.git found */
	size_t records;      /* records the index has read, over all epochs */
	size_t added;        /* of which read this time */
	size_t unreadable;   /* records read this time that were not push records
				(too big, not YAML...): not indexed */
	bool rebuilt;        /* the index was made anew (none, damaged, an epoch rewritten) */
} pg_tlog_info;

#define PG_TLOG_MAX_EPOCHS 1000

/*
 * Open the log at path (a directory holding git/N.git) and bring its index
 * in home/tlog/ up to date: each epoch's master read from the last commit
 * indexed (made again from its root when that commit is no longer on it),
 * the index written atomically.  Only git/N.git for N = 0, 1, ... until
 * one is missing are read, through repo/.  Errors: PG_ENOTFOUND (no
 * git/0.git), what reading a repository gives.  *info may be NULL.
 */
int pg_tlog_open(pg_tlog **out, pg_tlog_info *info, const char *path, const char *home);
void pg_tlog_free(pg_tlog *t);

/* One indexed change: where its record is and what the ref became. */
typedef struct pg_tlog_hit {
	unsigned epoch;
	uint64_t seq;       /* the commit's place in its epoch, from its root */
	pg_oid commit;      /* the epoch's commit that added the record */
	pg_oid new_id;
} pg_tlog_hit;

/*
 * The indexed changes of ref in a repository at location (every record
 * repo that pg_tlog_repo_matches it), in log order, at most max of them
 * (the latest).  *out is malloc()ed (free it), NULL when *n is 0.  The
 * index only points: pg_tlog_read reads the record and the caller checks
 * it again.
 */
int pg_tlog_find(pg_tlog_hit **out, size_t *n, pg_tlog *t, const char *location,
		 const char *ref, size_t max);

/* The record a hit points to, parsed (as pg_tlog_record_parse). */
int pg_tlog_read(pg_tlog_record **out, pg_tlog *t, const pg_tlog_hit *hit);

/* --- following the log (tlog_follow.c) -------------------------------------- */

/*
 * Where a reader of the log stands: per epoch, the last commit of its
 * master read (zero: none yet, the epoch is read from its root).  The
 * text form, which a follower keeps (the service in its store), is
 *
 *   pullgate-tlog-cursor 1 EPOCHS
 *   EEEEEE TIP              one line per epoch, in order
 *
 * and is checked whole when read back: a cursor that does not parse is
 * PG_EINVALID, never a guess.
 */
typedef struct pg_tlog_cursor {
	pg_oid *tips;
	size_t nepochs;
} pg_tlog_cursor;

int pg_tlog_cursor_parse(pg_tlog_cursor *c, const char *text, size_t len);
int pg_tlog_cursor_format(pg_buf *out, const pg_tlog_cursor *c);
void pg_tlog_cursor_release(pg_tlog_cursor *c);

typedef struct pg_tlog_follower pg_tlog_follower;

/* Follow the log at path (git/N.git under it); its epochs are opened as they appear. */
int pg_tlog_follower_new(pg_tlog_follower **out, const char *path);
void pg_tlog_follower_free(pg_tlog_follower *f);

/* The log's absolute path, links resolved (borrowed). */
const char *pg_tlog_follower_path(const pg_tlog_follower *f);

/*
 * Fetch each epoch's master from the epoch's remote "origin", as a mirror
 * clone has it (pg_repo_fetch_mirror; an epoch without one is left as it
 * is), then the epochs the origin began since the newest here: epoch N's
 * URL made from epoch N - 1's (pg_tlog_next_epoch_url), cloned as
 * git/N.git once its master is fetched.  The first failure is the error,
 * after every epoch was tried; *fetched counts the epochs fetched, new
 * ones included.  *more: as many new epochs were cloned as one fetch
 * clones, and the origin may have more (the log's end is not here yet).
 */
int pg_tlog_fetch(size_t *fetched, bool *more, pg_tlog_follower *f);

/*
 * The URL of epoch e (> 0) from epoch e - 1's, prev, whose last path
 * segment is e - 1 with or without ".git" (and a final "/" or none), as
 * public-inbox names its epochs; PG_ENOTFOUND for a URL not named so.
 */
int pg_tlog_next_epoch_url(pg_buf *out, const char *prev, size_t e);

/* Set c to where the log ends now: each epoch's master (nothing before is to be read). */
int pg_tlog_cursor_at_end(pg_tlog_cursor *c, pg_tlog_follower *f);

/* One message of the log past the cursor, handed to a pg_tlog_follow callback. */
typedef struct pg_tlog_entry {
	unsigned epoch;
	pg_oid commit;               /* the epoch's commit that added it */
	const pg_tlog_record *rec;   /* the record, or NULL when it is none (err says why) */
	const char *raw;             /* the message as read (NULL when it could not be) */
	size_t raw_len;
	int err;                     /* 0, or why the message is no push record (its message
					in error, one line): PG_EINVALID, PG_ETOOBIG,
					PG_EUNSUPPORTED, PG_ENOTFOUND (no "m", or none
					that reads) */
	const char *error;
	bool deletion;               /* the commit is public-inbox's deletion of a message:
					a file "d" and no "m" (err PG_ENOTFOUND) */
} pg_tlog_entry;

/* Returns 0 to go on, a negative code to stop (the entry is then not past the cursor). */
typedef int (*pg_tlog_entry_fn)(void *ctx, const pg_tlog_entry *e);

/*
 * Called with the cursor after every batch of messages taken, and once at
 * the end when it moved since (read: the messages taken since the last
 * call, 0 when only an epoch was re-anchored): where a follower saves it.
 * A negative code stops the read.
 */
typedef int (*pg_tlog_batch_fn)(void *ctx, const pg_tlog_cursor *c, size_t read);

typedef struct pg_tlog_follow_opts {
	size_t batch;                         /* messages between two calls of batch_fn
						 (0: 1000) */
	pg_tlog_entry_fn entry;               /* each message, in log order */
	pg_tlog_batch_fn batch_fn;            /* NULL: none */
	const volatile sig_atomic_t *cancel;  /* set: the read stops soon, PG_ECANCELLED
						 (NULL: never) */
	void *ctx;
} pg_tlog_follow_opts;

#define PG_TLOG_FOLLOW_OPTS_INIT { 0, NULL, NULL, NULL, NULL }

typedef struct pg_tlog_follow_info {
	size_t epochs;         /* git/N.git found */
	size_t read;           /* messages entry took */
	size_t rewritten;      /* epochs whose cursor commit is no longer on master: taken
				  at master as it is, the messages it holds not read */
	size_t last_rewritten; /* the last of them */
	size_t unread;         /* epochs that could not be read (the error names the first):
				  their cursor stays, tried again at the next call */
} pg_tlog_follow_info;

/*
 * Hand o->entry each message added to the log since c, in log order
 * (epoch by epoch, oldest first), moving c past each one it took, and
 * o->batch_fn the cursor every o->batch of them.  An epoch c does not
 * know yet is read from its root; an epoch c knows that is not on disk
 * keeps its place in c.  Each epoch is walked once per call, from master
 * down to c's commit, so a call costs what the log gained since c.  An
 * epoch whose commit in c is no longer on its master (rewritten) is
 * re-anchored: c takes its master as it is and what the epoch holds is
 * not read (it may hold records never read).  A message that cannot be
 * read or is no record is handed over with its error.  An epoch that
 * cannot be walked (a commit that does not read, PG_ETOOBIG) or read (the
 * operating system's refusal) is left where c stands and the others are
 * read: its error, named by epoch, is returned at the end.  Errors that
 * stop at once: PG_ENOMEM, PG_ECANCELLED and entry's or batch_fn's; c
 * then stands after the last message entry took (batch_fn was given it
 * when it moved).
 */
int pg_tlog_follow(pg_tlog_follow_info *info, pg_tlog_follower *f, pg_tlog_cursor *c,
		   const pg_tlog_follow_opts *o);

#endif
