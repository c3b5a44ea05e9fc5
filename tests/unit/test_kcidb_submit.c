/* test_kcidb_submit.c - unit tests for kcidb.submit's rules: the receiver's URL and the token file. */
#include "tests/unit/unit.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "server/kcidb_submit.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_https_anywhere_http_only_to_this_machine(void **state)
{
	static const char *const good[] = {
		"https://kcidb.example.org/submit", "https://kcidb.example.org:8443/submit",
		"https://kcidb.example.org", "https://[2001:db8::1]:443/submit",
		"http://127.0.0.1:8080/submit", "http://127.1.2.3/", "http://localhost:9/x",
		"http://LOCALHOST/x", "http://[::1]:8080/submit",
	};
	static const char *const bad[] = {
		"http://kcidb.example.org/submit", "http://128.0.0.1/", "http://127.0.0.1.example.org/",
		"http://127.0.0/", "http://127.0.0.256/", "http://127.0.0.01/", "http://[::2]/",
		"http://localhost.example.org/", "http://10.0.0.1/", "ftp://kcidb.example.org/",
		"kcidb.example.org/submit", "https://user:pw@kcidb.example.org/",
		"https://127.0.0.1@evil.example.org/", "http://localhost@evil.example.org/",
		"https:///submit", "https://kcidb.example.org/a b", "https://kcidb.example.org/\x01",
		"https://kcidb.example.org/\"x", "https://[::1/", "https://host:port/x",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(*good); i++)
		if (pg_submit_why_url(good[i]))
			fail_msg("'%s' refused: %s", good[i], pg_submit_why_url(good[i]));
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		if (!pg_submit_why_url(bad[i]))
			fail_msg("'%s' taken", bad[i]);
	assert_non_null(strstr(pg_submit_why_url("http://kcidb.example.org/"),
			       "the token never goes over plain http beyond this machine"));
}

typedef struct scratch {
	char dir[32];
	char path[96];
} scratch;

static int scratch_setup(void **state)
{
	scratch *s = calloc(1, sizeof(*s));

	if (!s)
		return -1;
	snprintf(s->dir, sizeof(s->dir), "/tmp/pg-token-XXXXXX");
	if (!mkdtemp(s->dir))
		return -1;
	snprintf(s->path, sizeof(s->path), "%s/token", s->dir);
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

/* The token file holds len bytes of text. */
static void put(const scratch *s, const char *text, size_t len)
{
	int fd;

	unlink(s->path);
	assert_true((fd = creat(s->path, 0600)) >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

/* What reading the token file gives: the token, or the error's message starting with "!". */
static void read_token(pg_buf *out, const scratch *s)
{
	char *token = NULL;
	int err = pg_submit_token_read(&token, s->path);

	pg_buf_clear(out);
	if (err < 0) {
		assert_null(token);
		pg_buf_printf(out, "!%s", pg_error_last());
	} else
		pg_buf_puts(out, token);
	pg_free_secret(token);
	pg_error_clear();
}

static void test_a_token_file_is_one_line_of_a_regular_file(void **state)
{
	scratch *s = *state;
	pg_buf got = PG_BUF_INIT, big = PG_BUF_INIT;
	char link[64];

	put(s, "abc.DEF-123_x~+/=\n", 18);
	read_token(&got, s);
	assert_string_equal(got.ptr, "abc.DEF-123_x~+/=");
	put(s, "no-newline", 10);
	read_token(&got, s);
	assert_string_equal(got.ptr, "no-newline");
	put(s, "first\nsecond\n", 13);
	read_token(&got, s);
	assert_non_null(strstr(got.ptr, "holds more than one line"));
	assert_null(strstr(got.ptr, "first"));
	put(s, "a\r\nHost: evil\n", 14);
	read_token(&got, s);
	assert_true(got.ptr[0] == '!');
	assert_null(strstr(got.ptr, "evil"));
	put(s, "tok\r\n", 5);
	read_token(&got, s);
	assert_non_null(strstr(got.ptr, "holds a control character"));
	put(s, "two words\n", 10);
	read_token(&got, s);
	assert_non_null(strstr(got.ptr, "a blank"));
	put(s, "tok\0en\n", 7);
	read_token(&got, s);
	assert_true(got.ptr[0] == '!');
	put(s, "", 0);
	read_token(&got, s);
	assert_non_null(strstr(got.ptr, "is empty"));
	put(s, "\n", 1);
	read_token(&got, s);
	assert_non_null(strstr(got.ptr, "is empty"));
	/* a token of the most bytes is read, one more is too long */
	assert_int_equal(pg_buf_grow(&big, PG_SUBMIT_TOKEN_MAX + 1), 0);
	memset(big.ptr, 'x', PG_SUBMIT_TOKEN_MAX + 1);
	put(s, big.ptr, PG_SUBMIT_TOKEN_MAX);
	read_token(&got, s);
	assert_int_equal(got.len, PG_SUBMIT_TOKEN_MAX);
	put(s, big.ptr, PG_SUBMIT_TOKEN_MAX + 1);
	read_token(&got, s);
	assert_non_null(strstr(got.ptr, "is longer than"));
	/* a symlink is not followed, a FIFO is not waited on, a missing file is named */
	put(s, "tok\n", 4);
	snprintf(link, sizeof(link), "%s/link", s->dir);
	assert_int_equal(symlink("token", link), 0);
	snprintf(s->path, sizeof(s->path), "%s", link);
	read_token(&got, s);
	assert_non_null(strstr(got.ptr, "is a symbolic link, not a regular file"));
	snprintf(s->path, sizeof(s->path), "%s/fifo", s->dir);
	assert_int_equal(mkfifo(s->path, 0600), 0);
	read_token(&got, s);
	assert_non_null(strstr(got.ptr, "is a FIFO, not a regular file"));
	snprintf(s->path, sizeof(s->path), "%s/none", s->dir);
	read_token(&got, s);
	assert_true(got.ptr[0] == '!');
	pg_buf_release(&got);
	pg_buf_release(&big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_https_anywhere_http_only_to_this_machine),
		cmocka_unit_test_setup_teardown(test_a_token_file_is_one_line_of_a_regular_file,
						scratch_setup, scratch_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
