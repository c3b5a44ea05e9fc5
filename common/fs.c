/* fs.c - making and removing directory trees; mapping files; files opened only when regular, read whole and written atomically; shared scratch directories; lock files. */
#include "common/fs.h"
#include "common/buf.h"
#include "common/error.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdatomic.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int pg_mkdir_p(const char *path)
{
	char tmp[4096];
	size_t i, n = strlen(path);

	if (n >= sizeof(tmp))
		return pg_error_set(PG_EINVALID, "'%s': path too long", path);
	memcpy(tmp, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return pg_error_set(PG_EIO, "'%s': %s", tmp, strerror(errno));
		tmp[i] = path[i];
	}
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

int pg_remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : pg_error_set(PG_EIO, "'%s': %s", path, strerror(errno));
	if (nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS) < 0)
		return pg_error_set(PG_EIO, "cannot remove '%s': %s", path, strerror(errno));
	return 0;
}

bool pg_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int pg_map_file(void **map, size_t *len, const char *path)
{
	off_t size;
	void *m;
	int fd, err;

	*map = NULL;
	*len = 0;
	if ((err = pg_open_regular(&fd, &size, path, PG_OPEN_READ, NULL)) < 0) {
		if (err == PG_ENOTFOUND)
			pg_error_set(PG_ENOTFOUND, "'%s' does not exist", path);
		return err;
	}
	if (size <= 0 || (uintmax_t)size > SIZE_MAX) {
		close(fd);
		return pg_error_set(PG_EINVALID, "'%s' is empty", path);
	}
	m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return pg_error_set(PG_EIO, "'%s': %s", path, strerror(errno));
	*map = m;
	*len = (size_t)size;
	return 0;
}

void pg_unmap_file(void *map, size_t len)
{
	if (map)
		munmap(map, len);
}

/* The kernel maps up to 64 KiB around a faulting page (fault_around_bytes). */
#define FAULT_AROUND ((size_t)64 << 10)

/* Let go of the whole pages of map in [lo, hi). */
static void let_go(const void *map, size_t lo, size_t hi, size_t page)
{
	lo = (lo + page - 1) / page * page;
	hi = hi / page * page;
	if (lo < hi)
		(void)madvise((unsigned char *)(uintptr_t)map + lo, hi - lo, MADV_DONTNEED);
}

/*
 * A fault may map a whole large folio of the page cache around the page
 * read (up to a PMD's 2 MiB), past the fault-around: what a window lets
 * go of reaches this far past what it touched.
 */
#define FOLIO_SLACK ((size_t)2 << 20)

void pg_map_drop(pg_map_window *w, const void *map, size_t map_len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), lo, hi;

	if (w->lo != w->hi && map) {
		lo = w->lo > FOLIO_SLACK ? w->lo - FOLIO_SLACK : 0;
		hi = map_len - w->hi > FOLIO_SLACK ? w->hi + FOLIO_SLACK : map_len;
		let_go(map, lo / page * page, hi + page - 1 < map_len ? hi + page - 1 : map_len,
		       page);
	}
	w->lo = w->hi = 0;
}

void pg_map_touch(pg_map_window *w, const void *map, size_t map_len, size_t off, size_t len)
{
	size_t lo, hi, page = (size_t)sysconf(_SC_PAGESIZE);

	if (!w->limit || off > map_len || len > map_len - off)
		return;
	lo = off > FAULT_AROUND ? off - FAULT_AROUND : 0;
	hi = map_len - off - len > FAULT_AROUND ? off + len + FAULT_AROUND : map_len;
	if (w->lo != w->hi) {
		size_t span_lo = lo < w->lo ? lo : w->lo, span_hi = hi > w->hi ? hi : w->hi;

		if (span_hi - span_lo <= w->limit) {
			w->lo = span_lo;
			w->hi = span_hi;
			return;
		}
		/*
		 * What was touched before, not the range just read (a read far
		 * from the last dropped the very pages it had read): the pages
		 * only the old range holds, none of the new one's.
		 */
		if (w->lo < lo) {
			size_t from = w->lo > FOLIO_SLACK ? w->lo - FOLIO_SLACK : 0;

			let_go(map, from / page * page,
			       w->hi + page - 1 < lo ? w->hi + page - 1 : lo, page);
		}
		if (w->hi > hi) {
			size_t to = map_len - w->hi > FOLIO_SLACK ? w->hi + FOLIO_SLACK : map_len;

			let_go(map, w->lo > hi ? w->lo : hi, to + page - 1 < map_len ? to + page - 1 :
			       map_len, page);
		}
	}
	w->lo = lo;
	w->hi = hi;
}

const char *pg_file_kind(mode_t mode)
{
	return S_ISDIR(mode) ? "a directory" : S_ISFIFO(mode) ? "a FIFO" :
	       S_ISSOCK(mode) ? "a socket" : S_ISLNK(mode) ? "a symbolic link" :
	       S_ISCHR(mode) || S_ISBLK(mode) ? "a device" : "not a file";
}

static int refuse(const char *path, const char *what, const char *kind)
{
	if (what)
		return pg_error_set(PG_EINVALID, "is %s, not %s", kind, what);
	return pg_error_set(PG_EINVALID, "'%s' is %s, not a regular file", path, kind);
}

static int open_failed(const char *path, const char *what, int flags, int e)
{
	int code = e == ENOENT ? PG_ENOTFOUND : e == EEXIST ? PG_EEXISTS : PG_EIO;
	struct stat st;

	/*
	 * What open said no to for being no regular file: a symlink under
	 * O_NOFOLLOW (ELOOP), a FIFO for writing that nobody reads or a device
	 * with no driver (ENXIO), a directory for writing (EISDIR).  lstat and
	 * stat never block.
	 */
	if ((e == ELOOP && (flags & PG_OPEN_NOFOLLOW) && lstat(path, &st) == 0) ||
	    ((e == ENXIO || e == EISDIR || e == ENODEV) && stat(path, &st) == 0))
		return refuse(path, what, pg_file_kind(st.st_mode));
	if (what)
		return pg_error_set(code, "cannot open: %s", strerror(e));
	return pg_error_set(code, "'%s': %s", path, strerror(e));
}

int pg_open_regular(int *out, off_t *size, const char *path, int flags, const char *what)
{
	/* O_NONBLOCK: opening a FIFO nobody writes (or reads) must not wait */
	int oflags = O_NONBLOCK | O_NOCTTY | O_CLOEXEC, fd, fl, e;
	mode_t perm = flags & PG_OPEN_PRIVATE ? 0600 : 0644;
	struct stat st;

	*out = -1;
	if (size)
		*size = 0;
	if (flags & PG_OPEN_NEW)
		oflags |= (flags & PG_OPEN_RDWR ? O_RDWR : O_WRONLY) | O_CREAT | O_EXCL;
	else if (flags & PG_OPEN_APPEND)
		oflags |= O_WRONLY | O_CREAT | O_APPEND;
	else if (flags & PG_OPEN_LOCK)
		oflags |= O_RDWR | O_CREAT;
	else
		oflags |= O_RDONLY;
	if (flags & PG_OPEN_NOFOLLOW)
		oflags |= O_NOFOLLOW;
	if ((fd = open(path, oflags, perm)) < 0)
		return open_failed(path, what, flags, errno);
	if (fstat(fd, &st) < 0)
		goto io;
	if (!S_ISREG(st.st_mode) && !((flags & PG_OPEN_STREAMS) && !(oflags & (O_WRONLY | O_RDWR)) &&
				      (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))) {
		close(fd);
		return refuse(path, what, pg_file_kind(st.st_mode));
	}
	if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		goto io;
	if (size)
		*size = S_ISREG(st.st_mode) ? st.st_size : 0;
	*out = fd;
	return 0;
io:
	e = errno;
	close(fd);
	return open_failed(path, what, 0, e);
}

int pg_buf_read_stream(pg_buf *buf, FILE *f, const char *what)
{
	char chunk[65536];
	size_t n;
	int err;

	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if ((err = pg_buf_put(buf, chunk, n)) < 0)
			return pg_error_wrap(err, "'%s'", what);
	}
	if (ferror(f))
		return pg_error_set(PG_EIO, "'%s': read failed: %s", what, strerror(errno));
	return 0;
}

int pg_buf_read_fd(pg_buf *buf, int fd, size_t max, bool *cut)
{
	char chunk[65536];
	size_t got = 0;
	int err;

	*cut = false;
	for (;;) {
		/* one byte past max, to tell a file of exactly max bytes from a longer one */
		size_t want = max - got < sizeof(chunk) ? max - got + 1 : sizeof(chunk);
		ssize_t n = read(fd, chunk, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return pg_error_set(PG_EIO, "read failed: %s", strerror(errno));
		if (n == 0)
			return 0;
		if ((size_t)n > max - got) {
			*cut = true;
			n = (ssize_t)(max - got);
		}
		if ((err = pg_buf_put(buf, chunk, (size_t)n)) < 0)
			return err;
		got += (size_t)n;
		if (*cut)
			return 0;
	}
}

int pg_buf_read_file(pg_buf *buf, const char *path)
{
	FILE *f;
	int fd, err;

	if ((err = pg_open_regular(&fd, NULL, path, PG_OPEN_READ, NULL)) < 0)
		return err;
	if (!(f = fdopen(fd, "rb"))) {
		close(fd);
		return pg_error_set(PG_EIO, "'%s': %s", path, strerror(errno));
	}
	err = pg_buf_read_stream(buf, f, path);
	fclose(f);
	return err;
}

static atomic_uint tmp_seq;

int pg_write_file_atomic(const char *path, const void *data, size_t len)
{
	pg_buf tmp = PG_BUF_INIT;
	const char *p = data;
	int fd = -1, err = 0;

	/* unique per thread too: server workers may write the same file at once */
	if ((err = pg_buf_printf(&tmp, "%s.tmp.%ld.%u", path, (long)getpid(),
				 atomic_fetch_add(&tmp_seq, 1u))) < 0)
		goto done;
	/*
	 * A new file, never what is there: a symlink or a FIFO planted under
	 * the name is not followed.  One left by a killed process of the same
	 * pid is removed (unlink removes a symlink, not what it names).
	 */
	err = pg_open_regular(&fd, NULL, tmp.ptr, PG_OPEN_NEW, NULL);
	if (err == PG_EEXISTS && unlink(tmp.ptr) == 0) {
		pg_error_clear();
		err = pg_open_regular(&fd, NULL, tmp.ptr, PG_OPEN_NEW, NULL);
	}
	if (err < 0) {
		fd = -1;
		pg_buf_clear(&tmp); /* not ours to remove */
		goto done;
	}
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			err = pg_error_set(PG_EIO, "'%s': %s", tmp.ptr, strerror(errno));
			goto done;
		}
		p += w;
		len -= (size_t)w;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		fd = -1;
		err = pg_error_set(PG_EIO, "'%s': %s", tmp.ptr, strerror(errno));
		goto done;
	}
	fd = -1;
	if (rename(tmp.ptr, path) < 0)
		err = pg_error_set(PG_EIO, "'%s': %s", path, strerror(errno));
done:
	if (fd >= 0)
		close(fd);
	if (err < 0 && tmp.len)
		unlink(tmp.ptr);
	pg_buf_release(&tmp);
	return err;
}

/* Remove every directory of ours in dir (not another user's). */
static size_t sweep(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	pg_buf path = PG_BUF_INIT;
	size_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		pg_buf_clear(&path);
		if (pg_buf_printf(&path, "%s/%s", dir, e->d_name) < 0 || lstat(path.ptr, &st) < 0 ||
		    !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (pg_remove_tree(path.ptr) == 0)
			n++;
		pg_error_clear();
	}
	closedir(d);
	pg_buf_release(&path);
	return n;
}

int pg_scratch_claim(int *fd, size_t *removed, const char *dir)
{
	pg_buf lock = PG_BUF_INIT;
	int err = 0, l = -1;

	*fd = -1;
	*removed = 0;
	/* beside dir, not in it: dir holds only what its users make */
	if ((err = pg_mkdir_p(dir)) < 0 || (err = pg_buf_printf(&lock, "%s.lock", dir)) < 0)
		goto done;
	if ((err = pg_open_regular(&l, NULL, lock.ptr,
				   PG_OPEN_LOCK | PG_OPEN_NOFOLLOW | PG_OPEN_PRIVATE, NULL)) < 0)
		goto done;
	/* alone: whatever is there was left by a process that is gone */
	if (flock(l, LOCK_EX | LOCK_NB) == 0)
		*removed = sweep(dir);
	while (flock(l, LOCK_SH) < 0) {
		if (errno != EINTR) {
			err = pg_error_set(PG_EIO, "'%s': %s", lock.ptr, strerror(errno));
			goto done;
		}
	}
	*fd = l;
	l = -1;
done:
	if (l >= 0)
		close(l);
	pg_buf_release(&lock);
	return err;
}

int pg_lock_file(int *fd, const char *path, bool wait)
{
	int l, err;

	*fd = -1;
	if ((err = pg_open_regular(&l, NULL, path, PG_OPEN_LOCK | PG_OPEN_NOFOLLOW, NULL)) < 0)
		return err;
	while (flock(l, wait ? LOCK_EX : LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		if (e == EINTR)
			continue;
		close(l);
		return e == EWOULDBLOCK ? 1 : pg_error_set(PG_EIO, "'%s': %s", path, strerror(e));
	}
	*fd = l;
	return 0;
}
