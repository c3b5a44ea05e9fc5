/* test_fs.c - unit tests for files opened only when regular, read whole and written atomically. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "common/fs.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A scratch directory holding a regular file "f", a FIFO "fifo" nobody
 * opens, a symlink "zero" to /dev/zero and "link" to f.  A call that blocks
 * on the FIFO is ended by the alarm: the test dies rather than hangs.
 */
typedef struct scratch {
	char dir[32];
	char f[64], fifo[64], zero[64], link[64];
} scratch;

static int scratch_setup(void **state)
{
	scratch *s = calloc(1, sizeof(*s));
	int fd;

	if (!s)
		return -1;
	snprintf(s->dir, sizeof(s->dir), "/tmp/pg-fs-XXXXXX");
	if (!mkdtemp(s->dir))
		return -1;
	snprintf(s->f, sizeof(s->f), "%s/f", s->dir);
	snprintf(s->fifo, sizeof(s->fifo), "%s/fifo", s->dir);
	snprintf(s->zero, sizeof(s->zero), "%s/zero", s->dir);
	snprintf(s->link, sizeof(s->link), "%s/link", s->dir);
	if ((fd = creat(s->f, 0644)) < 0 || write(fd, "hello", 5) != 5 || close(fd) < 0 ||
	    mkfifo(s->fifo, 0644) < 0 || symlink("/dev/zero", s->zero) < 0 ||
	    symlink("f", s->link) < 0)
		return -1;
	alarm(20);
	*state = s;
	return 0;
}

static int scratch_teardown(void **state)
{
	scratch *s = *state;

	alarm(0);
	pg_error_clear();
	pg_remove_tree(s->dir);
	free(s);
	return 0;
}

static void test_open_regular_file(void **state)
{
	scratch *s = *state;
	char text[8] = "";
	off_t size = -1;
	int fd;

	assert_int_equal(pg_open_regular(&fd, &size, s->f, PG_OPEN_READ, NULL), 0);
	assert_int_equal(size, 5);
	/* blocking again, and not passed to children */
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(read(fd, text, sizeof(text) - 1), 5);
	assert_string_equal(text, "hello");
	close(fd);
	/* a symlink to a regular file is followed unless the caller says not */
	assert_int_equal(pg_open_regular(&fd, &size, s->link, PG_OPEN_READ, NULL), 0);
	assert_int_equal(size, 5);
	close(fd);
	assert_int_equal(pg_open_regular(&fd, NULL, s->link, PG_OPEN_READ | PG_OPEN_NOFOLLOW, NULL),
			 PG_EINVALID);
	assert_int_equal(fd, -1);
	assert_non_null(strstr(pg_error_last(), "is a symbolic link, not a regular file"));
}

static void test_open_refuses_a_fifo(void **state)
{
	scratch *s = *state;
	char want[128];
	int fd = 0;

	snprintf(want, sizeof(want), "'%s' is a FIFO, not a regular file", s->fifo);
	assert_int_equal(pg_open_regular(&fd, NULL, s->fifo, PG_OPEN_READ, NULL), PG_EINVALID);
	assert_int_equal(fd, -1);
	assert_string_equal(pg_error_last(), want);
	/* for writing, nobody reading it: ENXIO, named the same way */
	assert_int_equal(pg_open_regular(&fd, NULL, s->fifo, PG_OPEN_APPEND, NULL), PG_EINVALID);
	assert_string_equal(pg_error_last(), want);
	assert_int_equal(pg_open_regular(&fd, NULL, s->fifo, PG_OPEN_LOCK, NULL), PG_EINVALID);
	assert_string_equal(pg_error_last(), want);
	/* a caller that names the file itself */
	assert_int_equal(pg_open_regular(&fd, NULL, s->fifo, PG_OPEN_READ, "a mail"), PG_EINVALID);
	assert_string_equal(pg_error_last(), "is a FIFO, not a mail");
	/* a stream reader takes it (nobody writes: it reads as empty) */
	assert_int_equal(pg_open_regular(&fd, NULL, s->fifo, PG_OPEN_STREAMS, NULL), 0);
	close(fd);
}

static void test_open_refuses_devices_and_directories(void **state)
{
	scratch *s = *state;
	char want[128];
	int fd;

	assert_int_equal(pg_open_regular(&fd, NULL, "/dev/null", PG_OPEN_READ, NULL), PG_EINVALID);
	assert_string_equal(pg_error_last(), "'/dev/null' is a device, not a regular file");
	assert_int_equal(pg_open_regular(&fd, NULL, "/dev/null", PG_OPEN_APPEND, NULL), PG_EINVALID);
	/* a symlink to a device: what it leads to decides */
	snprintf(want, sizeof(want), "'%s' is a device, not a regular file", s->zero);
	assert_int_equal(pg_open_regular(&fd, NULL, s->zero, PG_OPEN_READ, NULL), PG_EINVALID);
	assert_string_equal(pg_error_last(), want);
	snprintf(want, sizeof(want), "'%s' is a directory, not a regular file", s->dir);
	assert_int_equal(pg_open_regular(&fd, NULL, s->dir, PG_OPEN_READ, NULL), PG_EINVALID);
	assert_string_equal(pg_error_last(), want);
	assert_int_equal(pg_open_regular(&fd, NULL, s->dir, PG_OPEN_APPEND, NULL), PG_EINVALID);
	assert_string_equal(pg_error_last(), want);
	assert_int_equal(pg_open_regular(&fd, NULL, "/nonexistent/pullgate", PG_OPEN_READ, NULL),
			 PG_ENOTFOUND);
}

static void test_open_new_never_opens_what_is_there(void **state)
{
	scratch *s = *state;
	char path[80], text[8] = "";
	int fd;

	/* a symlink planted under the name is neither followed nor replaced */
	assert_int_equal(pg_open_regular(&fd, NULL, s->link, PG_OPEN_NEW, NULL), PG_EEXISTS);
	assert_int_equal(pg_open_regular(&fd, NULL, s->fifo, PG_OPEN_NEW, NULL), PG_EEXISTS);
	snprintf(path, sizeof(path), "%s/new", s->dir);
	assert_int_equal(pg_open_regular(&fd, NULL, path, PG_OPEN_NEW | PG_OPEN_PRIVATE, NULL), 0);
	close(fd);
	assert_int_equal(pg_open_regular(&fd, NULL, s->f, PG_OPEN_READ, NULL), 0);
	assert_int_equal(read(fd, text, sizeof(text) - 1), 5);
	close(fd);
	assert_string_equal(text, "hello");
}

static void test_readers_refuse_a_fifo(void **state)
{
	scratch *s = *state;
	pg_buf b = PG_BUF_INIT;
	void *map = NULL;
	size_t len = 1;
	int fd;

	assert_int_equal(pg_buf_read_file(&b, s->fifo), PG_EINVALID);
	assert_int_equal(pg_map_file(&map, &len, s->fifo), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "is a FIFO, not a regular file"));
	assert_null(map);
	assert_int_equal(pg_map_file(&map, &len, s->zero), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "is a device, not a regular file"));
	/* a lock file that is a FIFO, or a symlink to one: refused, never waited on */
	assert_int_equal(pg_lock_file(&fd, s->fifo, true), PG_EINVALID);
	assert_int_equal(pg_lock_file(&fd, s->zero, true), PG_EINVALID);
	assert_int_equal(fd, -1);
	pg_buf_release(&b);
}

/* The resident kilobytes of the mapping that starts at map (/proc/self/smaps). */
static long resident_kb(const void *map)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512], start[32];
	long kb = -1;
	bool in = false;

	assert_non_null(f);
	snprintf(start, sizeof(start), "%lx-", (unsigned long)(uintptr_t)map);
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, '-') < strchr(line, ' '))
			in = !strncmp(line, start, strlen(start));
		else if (in && !strncmp(line, "Rss:", 4))
			kb = strtol(line + 4, NULL, 10);
	}
	fclose(f);
	return kb;
}

/*
 * A read-only mapping read through, noted in a window of 1 MiB: what was
 * read is let go of (the resident set stays near the window), and read
 * again it is the file's bytes, not zeros.  PG_OPEN_RDWR reads back.
 */
static void test_map_window_lets_go(void **state)
{
	scratch *s = *state;
	char path[80];
	unsigned char *block = malloc(1 << 16), back[4];
	pg_map_window w = { 0, 0, (size_t)1 << 20 };
	void *map = NULL;
	size_t len = 0, off, i;
	int fd;

	assert_non_null(block);
	snprintf(path, sizeof(path), "%s/big", s->dir);
	assert_int_equal(pg_open_regular(&fd, NULL, path, PG_OPEN_NEW | PG_OPEN_RDWR, NULL), 0);
	for (off = 0; off < (size_t)16 << 20; off += 1 << 16) {
		for (i = 0; i < (1 << 16); i++)
			block[i] = (unsigned char)((off + i) * 7 / 5);
		assert_int_equal(write(fd, block, 1 << 16), 1 << 16);
	}
	assert_int_equal(pread(fd, back, 4, 70000), 4);
	assert_int_equal(back[0], (unsigned char)(70000 * 7 / 5));
	close(fd);
	assert_int_equal(pg_map_file(&map, &len, path), 0);
	for (off = 0; off < len; off += 4096) {
		const unsigned char *p = (const unsigned char *)map + off;

		assert_int_equal(p[17], (unsigned char)((off + 17) * 7 / 5));
		pg_map_touch(&w, map, len, off, 4096);
	}
	/* 16 MiB read, at most the window and its fault-around resident */
	assert_true(resident_kb(map) >= 0 && resident_kb(map) <= 2048);
	/* reads far apart: each lets go of the one before, never of the page it read */
	for (off = 0; off < len; off += (size_t)5 << 20) {
		assert_int_equal(((const unsigned char *)map)[off + 9],
				 (unsigned char)((off + 9) * 7 / 5));
		pg_map_touch(&w, map, len, off + 9, 1);
		assert_true(resident_kb(map) >= 4 && resident_kb(map) <= 2048);
	}
	for (off = 0; off < len; off += 1 << 20)
		assert_int_equal(((const unsigned char *)map)[off + 5],
				 (unsigned char)((off + 5) * 7 / 5));
	/*
	 * A reader that is done drops all its window touched: 6 MiB read
	 * through a window of 8 in a mapping of its own (nothing let go of
	 * yet), then nothing resident; read again, the file's bytes.
	 */
	pg_map_drop(&w, map, len);
	pg_unmap_file(map, len);
	assert_int_equal(pg_map_file(&map, &len, path), 0);
	assert_int_equal(resident_kb(map), 0);
	w.limit = (size_t)8 << 20;
	for (off = (size_t)4 << 20; off < (size_t)10 << 20; off += 4096) {
		assert_int_equal(((const unsigned char *)map)[off + 3],
				 (unsigned char)((off + 3) * 7 / 5));
		pg_map_touch(&w, map, len, off + 3, 1);
	}
	assert_true(resident_kb(map) >= 6 * 1024);
	pg_map_drop(&w, map, len);
	assert_int_equal(resident_kb(map), 0);
	assert_int_equal(w.lo, w.hi);
	assert_int_equal(((const unsigned char *)map)[(size_t)5 << 20],
			 (unsigned char)(((size_t)5 << 20) * 7 / 5));
	pg_unmap_file(map, len);
	free(block);
}

static void test_read_missing_file(void **state)
{
	pg_buf b = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_buf_read_file(&b, "/nonexistent/pullgate"), PG_ENOTFOUND);
	assert_non_null(strstr(pg_error_last(), "/nonexistent/pullgate"));
}

static void test_write_then_read(void **state)
{
	char dir[] = "/tmp/pg-fs-XXXXXX", path[64];
	pg_buf b = PG_BUF_INIT;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	assert_int_equal(pg_write_file_atomic(path, "one\n", 4), 0);
	/* written again: replaced whole, no temporary file left beside it */
	assert_int_equal(pg_write_file_atomic(path, "two\0x", 5), 0);
	assert_int_equal(pg_buf_read_file(&b, path), 0);
	assert_int_equal(b.len, 5);
	assert_memory_equal(b.ptr, "two\0x", 5);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	pg_buf_release(&b);
}

static void test_read_is_capped(void **state)
{
	char path[] = "/tmp/pg-fs-XXXXXX";
	pg_buf b;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0123456789", 10), 10);
	close(fd);
	pg_buf_init(&b, 9);
	assert_int_equal(pg_buf_read_file(&b, path), PG_ETOOBIG);
	pg_error_clear();
	pg_buf_init(&b, 10);
	assert_int_equal(pg_buf_read_file(&b, path), 0);
	assert_string_equal(b.ptr, "0123456789");
	pg_buf_release(&b);
	unlink(path);
}

/* At most max bytes, and whether there was more: exactly max is not cut, max + 1 is, from where fd stands. */
static void test_read_fd_bounded(void **state)
{
	char path[] = "/tmp/pg-fs-XXXXXX";
	pg_buf b = PG_BUF_INIT;
	bool cut = true;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0123456789", 10), 10);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(pg_buf_read_fd(&b, fd, 10, &cut), 0);
	assert_false(cut);
	assert_string_equal(b.ptr, "0123456789");
	pg_buf_clear(&b);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(pg_buf_read_fd(&b, fd, 9, &cut), 0);
	assert_true(cut);
	assert_string_equal(b.ptr, "012345678");
	pg_buf_clear(&b);
	assert_int_equal(lseek(fd, 7, SEEK_SET), 7);
	assert_int_equal(pg_buf_read_fd(&b, fd, 3, &cut), 0);
	assert_false(cut);
	assert_string_equal(b.ptr, "789");
	/* buf's own cap still holds */
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	pg_buf_release(&b);
	pg_buf_init(&b, 4);
	assert_int_equal(pg_buf_read_fd(&b, fd, 10, &cut), PG_ETOOBIG);
	pg_error_clear();
	pg_buf_release(&b);
	/* a descriptor that cannot be read: an error, not an empty file */
	assert_int_equal(pg_buf_read_fd(&b, -1, 10, &cut), PG_EIO);
	pg_error_clear();
	close(fd);
	unlink(path);
}

static void test_read_refuses_a_directory(void **state)
{
	pg_buf b = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_buf_read_file(&b, "/tmp"), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "is a directory"));
	pg_error_clear();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_missing_file),
		cmocka_unit_test(test_write_then_read),
		cmocka_unit_test(test_read_is_capped),
		cmocka_unit_test(test_read_refuses_a_directory),
		cmocka_unit_test_setup_teardown(test_open_regular_file, scratch_setup,
						scratch_teardown),
		cmocka_unit_test_setup_teardown(test_open_refuses_a_fifo, scratch_setup,
						scratch_teardown),
		cmocka_unit_test(test_read_fd_bounded),
		cmocka_unit_test_setup_teardown(test_open_refuses_devices_and_directories,
						scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_map_window_lets_go, scratch_setup,
						scratch_teardown),
		cmocka_unit_test_setup_teardown(test_open_new_never_opens_what_is_there,
						scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_readers_refuse_a_fifo, scratch_setup,
						scratch_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
