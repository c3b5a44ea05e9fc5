/* test_digest.c - unit tests for SHA-256 of bytes and files, and random nonces. */
#include "tests/unit/unit.h"

#include "common/digest.h"
#include "common/error.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_known_vectors(void **state)
{
	char hex[PG_SHA256_HEXSZ + 1];

	(void)state;
	/* FIPS 180-2, appendix B.1 */
	assert_int_equal(pg_sha256_hex(hex, "abc", 3), 0);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_int_equal(pg_sha256_hex(hex, "", 0), 0);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_files(void **state)
{
	char path[] = "/tmp/pg-digest-XXXXXX", a[PG_SHA256_HEXSZ + 1], b[PG_SHA256_HEXSZ + 1];
	static char big[200000];
	int fd;

	(void)state;
	memset(big, 'x', sizeof(big));
	fd = mkstemp(path);
	assert_true(fd >= 0);
	/* more than one read block: the file's hash is the bytes' hash */
	assert_int_equal(write(fd, big, sizeof(big)), (ssize_t)sizeof(big));
	close(fd);
	assert_int_equal(pg_sha256_file(a, path), 0);
	assert_int_equal(pg_sha256_hex(b, big, sizeof(big)), 0);
	assert_string_equal(a, b);
	unlink(path);
	assert_int_equal(pg_sha256_file(a, path), PG_ENOTFOUND);
	assert_string_equal(a, "");
	pg_error_clear();
}

/* An attested report.json that is a FIFO or a device: refused at once (the alarm ends a wait). */
static void test_file_refuses_a_fifo_and_a_device(void **state)
{
	char dir[] = "/tmp/pg-digest-XXXXXX", fifo[64], a[PG_SHA256_HEXSZ + 1];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/report.json", dir);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	alarm(20);
	assert_int_equal(pg_sha256_file(a, fifo), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "is a FIFO, not a regular file"));
	assert_int_equal(pg_sha256_file(a, "/dev/zero"), PG_EINVALID);
	assert_string_equal(pg_error_last(), "'/dev/zero' is a device, not a regular file");
	alarm(0);
	unlink(fifo);
	rmdir(dir);
	pg_error_clear();
}

static void test_random(void **state)
{
	pg_buf x = PG_BUF_INIT, y = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_random_hex(&x, 16), 0);
	assert_int_equal(pg_random_hex(&y, 16), 0);
	assert_int_equal(x.len, 32);
	assert_int_equal(strspn(x.ptr, "0123456789abcdef"), 32);
	assert_string_not_equal(x.ptr, y.ptr);
	/* a session id: 32 bytes */
	pg_buf_clear(&x);
	assert_int_equal(pg_random_hex(&x, 32), 0);
	assert_int_equal(x.len, 64);
	assert_int_equal(strspn(x.ptr, "0123456789abcdef"), 64);
	assert_int_equal(pg_random_hex(&x, 65), PG_EINVALID);
	pg_error_clear();
	pg_buf_release(&x);
	pg_buf_release(&y);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_vectors),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_file_refuses_a_fifo_and_a_device),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
