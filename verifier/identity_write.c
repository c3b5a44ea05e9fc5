/* identity_write.c - an index file written a segment at a time, an extension's old entries merged in. */
#include "verifier/identity_internal.h"
#include "common/array.h"
#include "common/error.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file being written: entries go out a segment at a time, each segment's checksum kept. */
/* Segments read or written at once (about 1 MiB: whole words, whole segments). */
#define WRITE_SEGMENTS 227

/*
 * The entries of an open index, a window at a time, as an extension
 * merges them: each segment checked against the table as it is read, and
 * the order (old_peek).
 */
typedef struct old_reader {
	pg_identity_index *x;
	unsigned char *buf;
	size_t n, at;            /* entries in buf; the one the reader is at */
	size_t next;             /* the file's next entry to read */
	unsigned char last[ENTRY];
} old_reader;

static int old_open(old_reader *o, pg_identity_index *x)
{
	memset(o, 0, sizeof(*o));
	o->x = x;
	return (o->buf = malloc(WRITE_SEGMENTS * SEGMENT * ENTRY)) ? 0 : pg_error_oom();
}

/* The entry o is at (NULL past the last), or PG_EINVALID when the file does not hold. */
static int old_peek(const unsigned char **out, old_reader *o)
{
	pg_identity_index *x = o->x;
	size_t n, s, i;

	*out = NULL;
	if (o->at < o->n) {
		*out = o->buf + o->at * ENTRY;
		return 0;
	}
	if (o->next >= x->count)
		return 0;
	n = x->count - o->next < WRITE_SEGMENTS * SEGMENT ? x->count - o->next :
							      WRITE_SEGMENTS * SEGMENT;
	if (pg_pagefile_pread(x->f, x->entries_off + (uint64_t)o->next * ENTRY, o->buf,
			      n * ENTRY) < 0)
		goto damaged;
	for (s = 0; s * SEGMENT < n; s++)
		if (pg_identity_checksum(o->buf + s * SEGMENT * ENTRY,
			     (n - s * SEGMENT < SEGMENT ? n - s * SEGMENT : SEGMENT) * ENTRY) !=
		    x->segments[o->next / SEGMENT + s])
			goto damaged;
	for (i = 0; i < n; i++)
		if ((i || o->next) &&
		    pg_identity_entry_cmp(i ? o->buf + (i - 1) * ENTRY : o->last, o->buf + i * ENTRY) >= 0)
			goto damaged;
	memcpy(o->last, o->buf + (n - 1) * ENTRY, ENTRY);
	o->next += n;
	o->n = n;
	o->at = 0;
	*out = o->buf;
	return 0;
damaged:
	pg_error_clear();
	return pg_error_set(PG_EINVALID, "identity index '%s' is damaged (entries %zu to %zu)",
			    x->path, o->next, o->next + n);
}

/* Whether every entry of the open file holds (old_peek's checks), read a window at a time. */
int pg_identity_check_all(bool *ok, pg_identity_index *x)
{
	old_reader o;
	const unsigned char *e = NULL;
	int err;

	*ok = false;
	if ((err = old_open(&o, x)) == 0)
		while ((err = old_peek(&e, &o)) == 0 && e)
			o.at = o.n;
	free(o.buf);
	if (err == PG_EINVALID) {
		pg_error_clear();
		return 0;
	}
	if (err == 0) {
		*ok = true;
		memset(x->checked, 0xff, x->nsegments / 8 + 1);
	}
	return err;
}

typedef struct writer {
	int fd;
	const char *what;                    /* the file, quoted, named in errors */
	uint64_t off;                        /* where buf goes */
	unsigned char buf[WRITE_SEGMENTS * SEGMENT * ENTRY];
	size_t nbuf;                         /* entries in buf, the last segment's maybe short */
	uint64_t *table;                     /* the checksums of the segments sealed */
	size_t ntable, table_alloc;
	size_t count;                        /* entries written */
	old_reader *old;                     /* the index's entries, merged in as add's come */
	size_t added;                        /* add's entries (each commit once) */
} writer;

/* The segment at the end of buf (SEGMENT entries, or the last one, shorter): its checksum. */
static int writer_seal(writer *w)
{
	size_t n = w->nbuf % SEGMENT ? w->nbuf % SEGMENT : SEGMENT;
	const unsigned char *s = w->buf + (w->nbuf - n) * ENTRY;
	int err;

	if ((err = PG_ARRAY_GROW(w->table, w->ntable + 1, w->table_alloc)) < 0)
		return err;
	w->table[w->ntable++] = pg_identity_checksum(s, n * ENTRY);
	return 0;
}

static int writer_out(writer *w)
{
	int err;

	if ((err = pg_identity_io_all(w->fd, w->what, w->buf, w->nbuf * ENTRY, w->off, true)) < 0)
		return err;
	w->off += w->nbuf * ENTRY;
	w->nbuf = 0;
	return 0;
}

static int writer_put(writer *w, const unsigned char *e)
{
	int err;

	memcpy(w->buf + w->nbuf++ * ENTRY, e, ENTRY);
	w->count++;
	if (w->nbuf % SEGMENT == 0 && (err = writer_seal(w)) < 0)
		return err;
	return w->nbuf == WRITE_SEGMENTS * SEGMENT ? writer_out(w) : 0;
}

/* The last segment sealed (when short), and buf written out. */
static int writer_flush(writer *w)
{
	int err;

	if (w->nbuf % SEGMENT && (err = writer_seal(w)) < 0)
		return err;
	return writer_out(w);
}

/* The old entries before e (all of them for NULL), then e unless it is one of them. */
static int writer_merge(void *ctx, const unsigned char *e)
{
	writer *w = ctx;
	const unsigned char *o;
	int c = 1, err;

	if (e)
		w->added++;
	while (w->old) {
		if ((err = old_peek(&o, w->old)) < 0)
			return err;
		if (!o || (e && (c = pg_identity_entry_cmp(o, e)) > 0))
			break;
		if ((err = writer_put(w, o)) < 0)
			return err;
		w->old->at++;
		if (e && !c)
			return 0; /* the same commit twice: once */
	}
	return e ? writer_put(w, e) : 0;
}

/*
 * Merge x's entries (with merge: read from its file as they are written,
 * each checked again) with add's runs under a header, the tips after
 * them, into a temporary file beside path, renamed over it once whole and
 * synced; x is then the file written (as an open reads it, its header and
 * table checked).  *added says how many entries add had.  x takes tips
 * when it is written; else they stay the caller's.
 */
int pg_identity_write_index(pg_identity_index *x, const char *path, const char *name,
		uint64_t fingerprint, const pg_oid *tip, const pg_oid *graph,
		bool merge, runs *add, size_t *added, tip_slot *tips, size_t ntips)
{
	old_reader old;
	size_t name_len = strlen(name), tlen = pg_identity_tips_size(tips, ntips), i;
	unsigned char head[HEADER], *tail = NULL;
	const char *slash = strrchr(path, '/'), *why = NULL;
	pg_buf tmp = PG_BUF_INIT, dir = PG_BUF_INIT;
	writer *w = NULL;
	int err;

	*added = 0;
	memset(&old, 0, sizeof(old));
	if ((merge && (err = old_open(&old, x)) < 0) ||
	    (err = pg_buf_put(&dir, path, slash ? (size_t)(slash - path) : 0)) < 0 ||
	    (err = pg_buf_puts(&dir, slash ? "" : ".")) < 0)
		goto done;
	if (!(w = calloc(1, sizeof(*w)))) {
		err = pg_error_oom();
		goto done;
	}
	w->fd = -1;
	if ((err = pg_identity_scratch_file(&w->fd, &tmp, dir.ptr, slash ? slash + 1 : path)) < 0)
		goto done;
	w->what = tmp.ptr;
	w->off = HEADER + name_len;
	w->old = merge ? &old : NULL;
	if ((err = pg_identity_runs_merge(add, writer_merge, w)) < 0 ||
	    (err = writer_merge(w, NULL)) < 0 || (err = writer_flush(w)) < 0)
		goto done;
	if (!(tail = malloc(w->ntable * 8 + tlen))) {
		err = pg_error_oom();
		goto done;
	}
	for (i = 0; i < w->ntable; i++)
		pg_identity_put64(tail + i * 8, w->table[i]);
	pg_identity_put_tips(tail + w->ntable * 8, tips, ntips);
	memset(head, 0, sizeof(head));
	memcpy(head, MAGIC, 8);
	pg_identity_put32(head + 8, FORMAT);
	pg_identity_put32(head + 12, x->kind->version);
	pg_identity_put64(head + 16, fingerprint);
	pg_identity_put64(head + 24, w->count);
	memcpy(head + 32, tip->id, PG_OID_RAWSZ);
	pg_identity_put32(head + 52, (uint32_t)name_len);
	if (graph)
		memcpy(head + 64, graph->id, PG_OID_RAWSZ);
	pg_identity_put32(head + 84, graph ? 1 : 0);
	pg_identity_put64(head + 88, pg_identity_checksum(tail, w->ntable * 8));
	if ((err = pg_identity_io_all(w->fd, w->what, tail, w->ntable * 8 + tlen, w->off, true)) < 0)
		goto done;
	pg_identity_put64(head + 96, pg_identity_checksum(head, 96));
	if ((err = pg_identity_io_all(w->fd, w->what, head, HEADER, 0, true)) < 0 ||
	    (err = pg_identity_io_all(w->fd, w->what, (unsigned char *)(uintptr_t)name, name_len, HEADER,
			  true)) < 0)
		goto done;
	if (fsync(w->fd) < 0 || close(w->fd) < 0) {
		w->fd = -1;
		err = pg_error_set(PG_EIO, "'%s': %s", tmp.ptr, strerror(errno));
		goto done;
	}
	w->fd = -1;
	if (rename(tmp.ptr, path) < 0) {
		err = pg_error_set(PG_EIO, "'%s': %s", path, strerror(errno));
		goto done;
	}
	pg_buf_clear(&tmp);
	/* what was written, read as any open reads it (the writers' lock is held) */
	pg_identity_unmap(x);
	pg_identity_tips_free(x->tips, x->ntips);
	x->tips = NULL;
	x->ntips = 0;
	x->damaged = false;
	if ((err = pg_pagefile_open(&x->f, path, CACHE_BLOCKS)) < 0)
		goto done;
	if (!pg_identity_header_ok(x, name, fingerprint, &why)) {
		err = pg_error_set(PG_EIO, "identity index '%s' changed as it was written", path);
		goto done;
	}
	*added = w->added;
	pg_identity_tips_free(tips, ntips);
done:
	if (w && w->fd >= 0)
		close(w->fd);
	if (tmp.len)
		(void)unlink(tmp.ptr);
	if (w)
		free(w->table);
	free(w);
	free(old.buf);
	free(tail);
	pg_buf_release(&tmp);
	pg_buf_release(&dir);
	return err;
}
