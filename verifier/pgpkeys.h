/* pgpkeys.h - a pgpkeys.git-style directory (keys/<FINGERPRINT>.asc): its key files read and checked, and what names the set. */
#ifndef PG_PGPKEYS_H
#define PG_PGPKEYS_H

#include "common/buf.h"

/* More key files than this in keys/ is refused (the kernel's has under a thousand). */
#define PG_PGPKEYS_MAX_FILES 65536

/* One key file: keys/<fpr>.asc. */
typedef struct pg_pgpkey {
	char *path;        /* DIR/keys/NAME.asc */
	char fpr[65];      /* NAME upper case: the primary key the file must hold */
	size_t off, len;   /* its bytes within pg_pgpkeys.bytes */
	bool imported;     /* for the importer (gpg.c): gpg took the key */
} pg_pgpkey;

/* The key files of one directory, read whole, in name order. */
typedef struct pg_pgpkeys {
	pg_buf bytes;      /* every file's bytes, one after the other */
	pg_pgpkey *files;
	size_t nfiles, alloc;
} pg_pgpkeys;

#define PG_PGPKEYS_INIT { PG_BUF_INIT, NULL, 0, 0 }

/*
 * Read every key file of dir: each entry of dir/keys whose name is 40 or
 * 64 hex digits and ".asc" (other names are not keys, and are left
 * alone).  Each must be a regular file, opened without blocking and
 * without following a symlink, and at most max bytes; all together at
 * most max bytes too.  Errors name the file: PG_ENOTFOUND (dir or
 * dir/keys missing), PG_EINVALID (a key file that is a symlink, a FIFO, a
 * directory...; no key file at all; more than PG_PGPKEYS_MAX_FILES),
 * PG_ETOOBIG (past max), PG_EIO.  Release *out with pg_pgpkeys_release,
 * also after an error.
 */
int pg_pgpkeys_read(pg_pgpkeys *out, const char *dir, size_t max);
void pg_pgpkeys_release(pg_pgpkeys *k);

/*
 * What identifies dir's key set now, written over *out: when dir is a git
 * checkout (a pgpkeys.git clone), "commit <id>" of its HEAD, read through
 * repo/; otherwise the key files' names, sizes and modification times.
 * Equal identities mean the same keys were there to import.  Errors as
 * pg_pgpkeys_read's for the directory, or a repository that cannot be read.
 */
int pg_pgpkeys_identity(pg_buf *out, const char *dir);

#endif
