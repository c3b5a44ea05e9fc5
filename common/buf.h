/* buf.h - the one growable string buffer: never NULL, always NUL-terminated, capped. */
#ifndef PG_BUF_H
#define PG_BUF_H

#include "common/compat.h"

/*
 * Invariants (as git's strbuf): ptr is never NULL and ptr[len] == '\0'.
 * A buffer fed from outside is given a cap when it is created; an append
 * that would take len past max fails with PG_ETOOBIG and leaves the buffer
 * as it was.  max == 0 means PG_BUF_DEFAULT_MAX.
 */
typedef struct pg_buf {
	char *ptr;
	size_t len;
	size_t alloc;
	size_t max;
} pg_buf;

#define PG_BUF_DEFAULT_MAX ((size_t)256 << 20)

extern char pg_buf__empty[];
#define PG_BUF_INIT { pg_buf__empty, 0, 0, 0 }

void pg_buf_init(pg_buf *buf, size_t max);

/* Free the memory; the buffer is left empty and usable. */
void pg_buf_release(pg_buf *buf);

/* As pg_buf_release, but zero the contents first (secrets). */
void pg_buf_release_secret(pg_buf *buf);

/* Zero a NUL-terminated secret, then free it; NULL is allowed. */
void pg_free_secret(char *s);

/* Hand the string to the caller (free() it); the buffer is left empty. */
char *pg_buf_detach(pg_buf *buf);

int pg_buf_grow(pg_buf *buf, size_t extra);
int pg_buf_put(pg_buf *buf, const void *data, size_t len);
int pg_buf_puts(pg_buf *buf, const char *s);
int pg_buf_putc(pg_buf *buf, char c);
int pg_buf_printf(pg_buf *buf, const char *fmt, ...) PG_PRINTF(2, 3);
int pg_buf_vprintf(pg_buf *buf, const char *fmt, va_list ap);

void pg_buf_truncate(pg_buf *buf, size_t len);
void pg_buf_clear(pg_buf *buf);
/* Remove trailing whitespace. */
void pg_buf_rtrim(pg_buf *buf);

/* strdup/strndup that set the last error on failure. */
char *pg_strdup(const char *s);
char *pg_strndup(const char *s, size_t n);

#endif
