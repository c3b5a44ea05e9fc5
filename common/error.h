/* error.h - return codes and the thread-local last error message. */
#ifndef PG_ERROR_H
#define PG_ERROR_H

#include "common/compat.h"

/*
 * Every library function returns 0 (or a non-negative count) on success and
 * one of these negative codes on failure.  The message describing the most
 * recent failure on this thread is kept by pg_error_set() and read back with
 * pg_error_last().  Foreign codes (libgit2, gpgme, SQLite...) are converted
 * at the wrapper that called the foreign library and never travel upward.
 */
enum pg_error_code {
	PG_OK = 0,
	PG_ERROR = -1,     /* generic failure */
	PG_ENOMEM = -2,    /* out of memory */
	PG_ENOTFOUND = -3, /* a repository, ref, object or file does not exist */
	PG_EINVALID = -4,  /* malformed input: bad YAML, bad mail, bad argument */
	PG_EIO = -5,       /* the operating system refused (disk, network) */
	PG_ETIMEOUT = -6,  /* a child or a request ran out of time */
	PG_ETOOBIG = -7,   /* input exceeded its size cap */
	PG_EEXISTS = -8,   /* something that must be new already exists */
	PG_ECONFLICT = -9, /* a concurrent change won (ref moved, lock held) */
	PG_ECANCELLED = -10, /* the operation was cancelled on request */
	PG_EUNSUPPORTED = -11 /* valid input that pullgate does not handle */
};

/* Record a message for the current thread and return code (always < 0). */
int pg_error_set(int code, const char *fmt, ...) PG_PRINTF(2, 3);

/* Prefix the current message with "what: " and return code. */
int pg_error_wrap(int code, const char *fmt, ...) PG_PRINTF(2, 3);

/* The last message on this thread; never NULL. Borrowed. */
const char *pg_error_last(void);

/* The code that went with the last message (PG_OK when none). */
int pg_error_last_code(void);

void pg_error_clear(void);

/* Report allocation failure; returns PG_ENOMEM. */
int pg_error_oom(void);

/* A short name for a code, e.g. "not found". */
const char *pg_error_name(int code);

#endif
