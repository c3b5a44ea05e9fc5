/* test_fs.c - unit tests for files read whole and written atomically. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "common/fs.h"

#include <stdlib.h>
#include <unistd.h>

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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
