/* buf.c - the capped string buffer, and strings copied with the error set on failure. */
#include "common/buf.h"
#include "common/error.h"
#include "common/str.h"

char pg_buf__empty[1];

void pg_buf_init(pg_buf *buf, size_t max)
{
	buf->ptr = pg_buf__empty;
	buf->len = 0;
	buf->alloc = 0;
	buf->max = max;
}

static size_t cap(const pg_buf *buf)
{
	return buf->max ? buf->max : PG_BUF_DEFAULT_MAX;
}

void pg_buf_release(pg_buf *buf)
{
	if (buf->alloc)
		free(buf->ptr);
	buf->ptr = pg_buf__empty;
	buf->len = 0;
	buf->alloc = 0;
}

void pg_buf_release_secret(pg_buf *buf)
{
	if (buf->alloc) {
		volatile char *p = buf->ptr;
		size_t i;

		for (i = 0; i < buf->alloc; i++)
			p[i] = 0;
	}
	pg_buf_release(buf);
}

void pg_free_secret(char *s)
{
	if (!s)
		return;
	/* volatile so that the zeroing is not optimised away before free() */
	for (volatile char *p = s; *p; p++)
		*p = '\0';
	free(s);
}

char *pg_buf_detach(pg_buf *buf)
{
	char *s = buf->alloc ? buf->ptr : calloc(1, 1);

	buf->ptr = pg_buf__empty;
	buf->len = 0;
	buf->alloc = 0;
	if (!s)
		pg_error_oom();
	return s;
}

int pg_buf_grow(pg_buf *buf, size_t extra)
{
	size_t want, n;
	char *p;

	if (extra > cap(buf) || buf->len > cap(buf) - extra)
		return pg_error_set(PG_ETOOBIG, "input exceeds %zu bytes", cap(buf));
	want = buf->len + extra + 1;
	if (want <= buf->alloc)
		return 0;
	n = buf->alloc ? buf->alloc : 64;
	while (n < want)
		n = n > SIZE_MAX / 2 ? want : n * 2;
	p = realloc(buf->alloc ? buf->ptr : NULL, n);
	if (!p)
		return pg_error_oom();
	if (!buf->alloc)
		p[0] = '\0';
	buf->ptr = p;
	buf->alloc = n;
	return 0;
}

int pg_buf_put(pg_buf *buf, const void *data, size_t len)
{
	int err;

	if (len == 0)
		return 0;
	if ((err = pg_buf_grow(buf, len)) < 0)
		return err;
	memmove(buf->ptr + buf->len, data, len);
	buf->len += len;
	buf->ptr[buf->len] = '\0';
	return 0;
}

int pg_buf_puts(pg_buf *buf, const char *s)
{
	return pg_buf_put(buf, s, strlen(s));
}

int pg_buf_putc(pg_buf *buf, char c)
{
	return pg_buf_put(buf, &c, 1);
}

int pg_buf_vprintf(pg_buf *buf, const char *fmt, va_list ap)
{
	va_list cp;
	int n, err;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return pg_error_set(PG_EINVALID, "bad format");
	if ((err = pg_buf_grow(buf, (size_t)n)) < 0)
		return err;
	vsnprintf(buf->ptr + buf->len, (size_t)n + 1, fmt, ap);
	buf->len += (size_t)n;
	return 0;
}

int pg_buf_printf(pg_buf *buf, const char *fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, fmt);
	err = pg_buf_vprintf(buf, fmt, ap);
	va_end(ap);
	return err;
}

void pg_buf_truncate(pg_buf *buf, size_t len)
{
	if (len >= buf->len)
		return;
	buf->len = len;
	buf->ptr[len] = '\0';
}

void pg_buf_clear(pg_buf *buf)
{
	pg_buf_truncate(buf, 0);
}

void pg_buf_rtrim(pg_buf *buf)
{
	size_t n = buf->len;

	pg_str_rtrim(buf->ptr, &n, " \t\n\r");
	pg_buf_truncate(buf, n);
}

char *pg_strdup(const char *s)
{
	char *r = strdup(s ? s : "");

	if (!r)
		pg_error_oom();
	return r;
}

char *pg_strndup(const char *s, size_t n)
{
	char *r = strndup(s, n);

	if (!r)
		pg_error_oom();
	return r;
}
