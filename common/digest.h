/* digest.h - SHA-256 of bytes and of files, and random nonces, as lower-case hex. */
#ifndef PG_DIGEST_H
#define PG_DIGEST_H

#include "common/buf.h"

/* 64 hex digits and a NUL. */
#define PG_SHA256_HEXSZ 64

/* The SHA-256 of data[0..len) into out (PG_SHA256_HEXSZ + 1 bytes). */
int pg_sha256_hex(char *out, const void *data, size_t len);

/*
 * The SHA-256 of the regular file at path, read in blocks.  PG_ENOTFOUND
 * when it does not exist, PG_EINVALID when it is no regular file (a FIFO,
 * a device: refused without blocking, pg_open_regular), PG_EIO when it
 * cannot be read.
 */
int pg_sha256_file(char *out, const char *path);

/*
 * The SHA-1 of the first len bytes of the open file fd (from offset 0, by
 * pread) into out (20 raw bytes): git's trailing checksum of its own files.
 * PG_EIO naming what when it cannot be read or is shorter.
 */
int pg_sha1_fd(unsigned char out[20], int fd, uint64_t len, const char *what);

/* Append nbytes from the system's CSPRNG to out as 2 * nbytes hex digits. */
int pg_random_hex(pg_buf *out, size_t nbytes);

#endif
