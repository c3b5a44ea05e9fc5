/* files.h - for the targets whose readers read files: an input split into files, laid out in a scratch object directory. */
#ifndef PG_FUZZ_FILES_H
#define PG_FUZZ_FILES_H

#include "tests/fuzz/fuzz.h"
#include "common/fs.h"

#include <fcntl.h>
#include <unistd.h>

/*
 * The files of an input are joined by this line (tests/fuzz/make-repo-seeds.sh
 * writes the seeds so): a separator, not lengths, so that libFuzzer's
 * mutations of one file leave the others whole.
 */
#define FUZZ_FILE_SEP "\n=pgfuzz-file=\n"

typedef struct fuzz_part {
	const uint8_t *data;
	size_t len;
} fuzz_part;

/* data split at each separator into at most max parts (the last takes the rest); how many. */
static inline size_t fuzz_split(fuzz_part *parts, size_t max, const uint8_t *data, size_t size)
{
	const size_t seplen = sizeof(FUZZ_FILE_SEP) - 1;
	size_t n = 0;

	while (n + 1 < max) {
		const uint8_t *at = memmem(data, size, FUZZ_FILE_SEP, seplen);

		if (!at)
			break;
		parts[n].data = data;
		parts[n++].len = (size_t)(at - data);
		size -= (size_t)(at - data) + seplen;
		data = at + seplen;
	}
	parts[n].data = data;
	parts[n++].len = size;
	return n;
}

/* A scratch directory of the process, DIR/objects emptied for each input. */
typedef struct fuzz_dir {
	char top[256];
	char objects[300];
} fuzz_dir;

static fuzz_dir *fuzz_dir_made;

static void fuzz_dir_remove(void)
{
	if (fuzz_dir_made)
		pg_remove_tree(fuzz_dir_made->top);
}

/* A path under d->objects; the target's own names, never too long. */
static inline void fuzz_path(char *out, size_t n, const fuzz_dir *d, const char *rel)
{
	FUZZ_ASSERT((size_t)snprintf(out, n, "%s/%s", d->objects, rel) < n);
}

/* An empty d->objects with the directory sub in it (made on the first call). */
static inline void fuzz_dir_reset(fuzz_dir *d, const char *name, const char *sub)
{
	char path[512];

	if (!d->top[0]) {
		const char *tmp = getenv("TMPDIR");

		snprintf(d->top, sizeof(d->top), "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
		FUZZ_ASSERT(mkdtemp(d->top));
		snprintf(d->objects, sizeof(d->objects), "%s/objects", d->top);
		fuzz_dir_made = d;
		atexit(fuzz_dir_remove);
	}
	FUZZ_ASSERT(pg_remove_tree(d->objects) == 0);
	fuzz_path(path, sizeof(path), d, sub);
	FUZZ_ASSERT(pg_mkdir_p(path) == 0);
	pg_error_clear();
}

/* data[0..len) as the file rel under d->objects (its directory made). */
static inline void fuzz_write(const fuzz_dir *d, const char *rel, const void *data, size_t len)
{
	char path[512], *slash;
	const char *p = data;
	int fd;

	fuzz_path(path, sizeof(path), d, rel);
	slash = strrchr(path, '/');
	*slash = '\0';
	FUZZ_ASSERT(pg_mkdir_p(path) == 0);
	*slash = '/';
	FUZZ_ASSERT((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) >= 0);
	while (len) {
		ssize_t w = write(fd, p, len);

		FUZZ_ASSERT(w > 0);
		p += w;
		len -= (size_t)w;
	}
	close(fd);
}

#endif
