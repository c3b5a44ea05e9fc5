/* fs.h - directories: make a path, remove a tree, tell one; open only regular files, read whole files, write atomically; shared scratch directories; lock files. */
#ifndef PG_FS_H
#define PG_FS_H

#include "common/buf.h"

#include <sys/types.h>

/* mkdir -p: make path and its missing parents (0755). */
int pg_mkdir_p(const char *path);

/* rm -r: remove a directory tree, never following symlinks; absent is fine. */
int pg_remove_tree(const char *path);

/* Is path an existing directory (symlinks followed)? */
bool pg_is_dir(const char *path);

/*
 * Map the regular file at path whole, read-only (a file being replaced by
 * a rename stays mapped as it was).  PG_ENOTFOUND when it does not exist,
 * PG_EINVALID when it is not a regular file or is empty, PG_EIO otherwise.
 * Unmap with pg_unmap_file.
 */
int pg_map_file(void **map, size_t *len, const char *path);
void pg_unmap_file(void *map, size_t len);

/*
 * The pages of a read-only file mapping that a reader has touched stay in
 * its resident set until it is unmapped, although the kernel's page cache
 * keeps them anyway: reading every commit of a pack made the whole pack
 * resident (137 of 229 MB peak for the first verify of a 300,000-commit
 * history, docs/speed.md).  A reader notes each range it reads in a
 * pg_map_window; once the span of what it touched (with the kernel's
 * fault-around on either side) passes limit bytes, the pages touched
 * before the read that passed it are let go of, not that read's own
 * (MADV_DONTNEED: a later read faults them in again from the page cache),
 * and the window starts again at that read.  Reads with locality (commits of an era lie together) drop
 * little they need again.
 */
typedef struct pg_map_window {
	size_t lo, hi; /* what was touched since the last drop; lo == hi: nothing */
	size_t limit;  /* 0: never drop */
} pg_map_window;

void pg_map_touch(pg_map_window *w, const void *map, size_t map_len, size_t off, size_t len);
/*
 * Let go of all a window touched (and of what a large folio may have
 * mapped around it): a reader that is done leaves nothing resident.
 */
void pg_map_drop(pg_map_window *w, const void *map, size_t map_len);

/* How pg_open_regular opens a file: one of the access kinds, with the modifiers. */
enum pg_open_flags {
	PG_OPEN_READ = 0,          /* read only; the file must exist */
	PG_OPEN_APPEND = 1 << 0,   /* write at the end (a log), made when missing */
	PG_OPEN_LOCK = 1 << 1,     /* read and write, made when missing: a file for flock */
	PG_OPEN_NEW = 1 << 2,      /* write a file that must not exist yet (O_EXCL): never
				    * opens what is there, a symlink included */
	PG_OPEN_NOFOLLOW = 1 << 3, /* a symlink as the last component is refused: a file of
				    * pullgate's own, in a directory another may write to */
	PG_OPEN_PRIVATE = 1 << 4,  /* made 0600 rather than 0644 */
	PG_OPEN_STREAMS = 1 << 5,  /* read only: a pipe or a character device is taken too */
	PG_OPEN_RDWR = 1 << 6      /* with PG_OPEN_NEW: read and write (a file read back) */
};

/*
 * The one way product code opens a file (scripts/check-code.sh refuses a
 * bare open elsewhere): path is opened without blocking, whatever it is,
 * and only a regular file is kept, so that a FIFO, a socket, a device or a
 * directory where a file should be is an error at once, never a wait (a
 * plain open of a FIFO nobody writes waits for ever; one for writing that
 * nobody reads fails with ENXIO, named the same way).  A symlink is
 * followed unless PG_OPEN_NOFOLLOW, and what it leads to must be a regular
 * file.  PG_OPEN_STREAMS takes a pipe or a character device too (its size
 * is 0: the caller reads to its cap; a FIFO nobody writes reads as empty).
 * Messages name the path ("'P' is a FIFO, not a regular file"), or, for a
 * caller that names it itself, what it wanted ("is a directory, not a
 * mail").  *out is the descriptor, close-on-exec and blocking again, and
 * *size, when given, the file's size.  PG_EINVALID for what is not a
 * regular file, PG_ENOTFOUND when it does not exist, PG_EEXISTS for
 * PG_OPEN_NEW when it does, PG_EIO otherwise.
 */
int pg_open_regular(int *out, off_t *size, const char *path, int flags, const char *what);

/* What a file of this mode is, for a message: "a FIFO", "a device", "a directory"... */
const char *pg_file_kind(mode_t mode);

/*
 * Read a whole regular file; fails with PG_ETOOBIG past buf->max,
 * PG_ENOTFOUND when it does not exist, PG_EINVALID when it is not a
 * regular file (a FIFO, a device, a directory: pg_open_regular, without
 * blocking), PG_EIO otherwise.
 */
int pg_buf_read_file(pg_buf *buf, const char *path);

/* Read a whole stream (e.g. stdin) with the same cap rules. */
int pg_buf_read_stream(pg_buf *buf, FILE *f, const char *what);

/*
 * Append at most max bytes of fd, from where it stands, to buf; *cut is
 * set when there was more (one byte past max is read to know: the size
 * a file had when it was opened says nothing of what was written since).
 * A read interrupted by a signal is read again.  PG_EIO when a read fails,
 * PG_ENOMEM, or buf's own cap (PG_ETOOBIG).
 */
int pg_buf_read_fd(pg_buf *buf, int fd, size_t max, bool *cut);

/*
 * Write atomically: a new temporary file beside path (O_EXCL: a symlink or
 * a FIFO planted under its name is never opened), fsync, rename.
 */
int pg_write_file_atomic(const char *path, const void *data, size_t len);

/*
 * A scratch directory that several processes share, such as
 * $PULLGATE_HOME/tmp: every process that makes directories in it holds a
 * shared lock on DIR.lock (beside it) for as long as it may use them (*fd:
 * keep it open; closing it lets go).  When no other process holds one, whatever
 * directory of ours is in dir was left by a process that was killed, and
 * is removed first (*removed counts them); a directory of a live process
 * is never touched.
 */
int pg_scratch_claim(int *fd, size_t *removed, const char *dir);

/*
 * Open path (made if missing, 0644, close-on-exec, so that no child keeps
 * it) into *fd and lock it exclusively with flock: 0 when locked; 1 when
 * another open file holds it and wait is false (*fd is then -1); with
 * wait, block until it is free.  The lock goes with *fd's close, or with
 * the process however it ends.  PG_EINVALID when path is no regular file
 * or is a symlink (a FIFO planted there is refused, never waited on),
 * PG_EIO.
 */
int pg_lock_file(int *fd, const char *path, bool wait);

#endif
