/* test_farm.c - unit tests for reading build.sh's farm file into what the report says of the farm. */
#include "tests/unit/unit.h"

#include "pipeline/farm.h"
#include "common/error.h"
#include "common/fs.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define ENV "061fbd5764d1c3a1c1adf83ba8239f89"
#define CARRIES "aarch64-linux-gnu-gcc (Debian 12.2.0-14) 12.2.0; " \
	"scripts/gcc-plugins/randomize_layout_plugin.so sha256 " \
	"3f2a0000000000000000000000000000000000000000000000000000000000ff"

static int line(pg_farm *f, const char *s)
{
	return pg_farm_line(f, s, strlen(s));
}

/* The provenance f makes, in a report of its own (freed by the caller). */
static pg_provenance *record(pg_report **r, const pg_farm *f)
{
	pg_provenance *p = NULL;

	assert_int_equal(pg_report_new(r), 0);
	assert_int_equal(pg_report_add_provenance(&p, *r, "build"), 0);
	assert_int_equal(pg_farm_record(p, f), 0);
	return p;
}

/* Each kind of line build.sh writes, in the order it writes them: a farm file whole. */
static void test_every_kind(void **state)
{
	static const char file[] =
		"environment " ENV ": " CARRIES "\n"
		"127.0.0.1:18771 compiled 812 objects\n"
		"build2 compiled 640 objects\n"
		"127.0.0.1:18772 failed 3 jobs (connection refused), compiled here instead\n"
		"build2: 4 objects compiled here again for their warnings (stderr of a remote job)\n"
		"101 objects compiled here\n"
		"warning: the scheduler saw 1 host down\n"
		"farm compiled 1452 of 1556 objects\n";
	pg_farm f;
	pg_report *r = NULL;
	pg_provenance *p;

	(void)state;
	pg_farm_init(&f);
	assert_int_equal(pg_farm_parse(&f, file, sizeof(file) - 1), 0);
	assert_true(f.has_total);
	assert_int_equal(f.farm_objects, 1452);
	assert_int_equal(f.total_objects, 1556);
	assert_int_equal(f.kept, 8);
	assert_int_equal(f.dropped, 0);

	p = record(&r, &f);
	assert_string_equal(p->farm_env, ENV ": " CARRIES);
	assert_string_equal(p->farm, "127.0.0.1:18771 compiled 812 objects; build2 compiled 640 "
			    "objects; 127.0.0.1:18772 failed 3 jobs (connection refused), compiled "
			    "here instead; build2: 4 objects compiled here again for their warnings "
			    "(stderr of a remote job); 101 objects compiled here; warning: the "
			    "scheduler saw 1 host down; farm compiled 1452 of 1556 objects");
	pg_report_free(r);
	pg_farm_release(&f);
}

/* Empty text, blank lines and a last line without its newline: nothing made of nothing. */
static void test_blank_and_unended(void **state)
{
	static const char blank[] = "\n\n \r\n\033[0m\n\t\n";
	static const char unended[] = "\n1 objects compiled here\r\nfarm compiled 0 of 1 objects";
	pg_farm f;
	pg_report *r = NULL;
	pg_provenance *p;

	(void)state;
	pg_farm_init(&f);
	assert_int_equal(pg_farm_parse(&f, "", 0), 0);
	assert_int_equal(pg_farm_parse(&f, blank, sizeof(blank) - 1), 0);
	assert_false(f.has_total);
	assert_int_equal(f.kept, 0);
	p = record(&r, &f);
	assert_null(p->farm_env);
	assert_null(p->farm);
	pg_report_free(r);

	assert_int_equal(pg_farm_parse(&f, unended, sizeof(unended) - 1), 0);
	assert_true(f.has_total);
	assert_int_equal(f.farm_objects, 0);
	assert_int_equal(f.total_objects, 1);
	p = record(&r, &f);
	assert_null(p->farm_env);
	assert_string_equal(p->farm, "1 objects compiled here; farm compiled 0 of 1 objects");
	pg_report_free(r);
	pg_farm_release(&f);
}

/* What is not the contract's is kept as text, never taken for an environment or a total. */
static void test_near_misses(void **state)
{
	static const char *const texts[] = {
		"environment 061fbd5764d1c3a1c1adf83ba8239f8: short by a digit",
		"environment 061fbd5764d1c3a1c1adf83ba8239f8g: not hex",
		"environment " ENV " no colon",
		" environment " ENV ": a space first",
		"build.sh: icecc: environment " ENV ": the stream's prefix",
		"farm compiled 5 of 4 objects",              /* more than the total */
		"farm compiled -1 of 4 objects",
		"farm compiled 1 of 4 objects, roughly",
		"farm compiled 99999999999999999999999 of 99999999999999999999999 objects",
		"farm compiled  1 of 4 objects",
		"something build.sh does not say yet",
	};
	pg_buf want = PG_BUF_INIT;
	pg_farm f;
	pg_report *r = NULL;
	pg_provenance *p;
	size_t i;

	(void)state;
	pg_farm_init(&f);
	for (i = 0; i < PG_ARRAY_SIZE(texts); i++) {
		assert_int_equal(line(&f, texts[i]), 0);
		assert_int_equal(pg_buf_printf(&want, "%s%s", i ? "; " : "", texts[i]), 0);
	}
	assert_false(f.has_total);
	p = record(&r, &f);
	assert_null(p->farm_env);
	assert_string_equal(p->farm, want.ptr);
	pg_report_free(r);

	/* one environment a build: a second is a line like the others, and the last total counts */
	pg_farm_release(&f);
	assert_int_equal(line(&f, "environment " ENV ":"), 0);
	assert_int_equal(line(&f, "environment 00000000000000000000000000000000: another"), 0);
	assert_int_equal(line(&f, "farm compiled 1 of 9 objects"), 0);
	assert_int_equal(line(&f, "farm compiled 2 of 3 objects"), 0);
	assert_int_equal(f.farm_objects, 2);
	assert_int_equal(f.total_objects, 3);
	p = record(&r, &f);
	assert_string_equal(p->farm_env, ENV ":");
	assert_string_equal(p->farm, "environment 00000000000000000000000000000000: another; "
			    "farm compiled 1 of 9 objects; farm compiled 2 of 3 objects");
	pg_report_free(r);
	pg_farm_release(&f);
	pg_buf_release(&want);
}

/* A script's text is untrusted: escapes and control characters go, lines are cut and counted. */
static void test_hostile_and_bounded(void **state)
{
	static const char hostile[] = "warning: \033[31mred\033[0m\a bell\0\r\t nl \xff bad\n"
				      "farm compiled 1 of 1 objects\n";
	pg_buf big = PG_BUF_INIT, want = PG_BUF_INIT;
	pg_farm f;
	pg_report *r = NULL;
	pg_provenance *p;
	size_t i;

	(void)state;
	pg_farm_init(&f);
	/* the NUL, the escapes, the bell and the carriage return are gone; bad UTF-8 is U+FFFD */
	assert_int_equal(pg_farm_parse(&f, hostile, sizeof(hostile) - 1), 0);
	assert_string_equal(f.lines.ptr, "warning: red bell  nl \xEF\xBF\xBD bad; "
			    "farm compiled 1 of 1 objects");
	for (i = 0; f.lines.ptr[i]; i++)
		assert_true((unsigned char)f.lines.ptr[i] >= 0x20);
	pg_farm_release(&f);

	/* a long line is cut at PG_FARM_LINE_MAX bytes, never inside a character */
	assert_int_equal(pg_buf_puts(&big, "warning: "), 0);
	while (big.len < 4000)
		assert_int_equal(pg_buf_puts(&big, "\xC3\xA9"), 0);
	assert_int_equal(pg_farm_line(&f, big.ptr, big.len), 0);
	assert_true(f.lines.len <= PG_FARM_LINE_MAX);
	assert_true(f.lines.len >= PG_FARM_LINE_MAX - 1);
	assert_int_equal(((unsigned char)f.lines.ptr[f.lines.len - 1]), 0xA9);
	pg_farm_release(&f);

	/* at most PG_FARM_LINES_MAX lines kept, the rest counted; a late total still counts */
	pg_buf_clear(&big);
	for (i = 0; i < PG_FARM_LINES_MAX + 10; i++) {
		assert_int_equal(pg_buf_printf(&big, "host%zu compiled 1 objects\n", i), 0);
		if (i < PG_FARM_LINES_MAX)
			assert_int_equal(pg_buf_printf(&want, "%shost%zu compiled 1 objects",
						       i ? "; " : "", i), 0);
	}
	assert_int_equal(pg_buf_puts(&big, "farm compiled 74 of 80 objects\n"), 0);
	assert_int_equal(pg_farm_parse(&f, big.ptr, big.len), 0);
	assert_int_equal(f.kept, PG_FARM_LINES_MAX);
	assert_int_equal(f.dropped, 11);
	assert_true(f.has_total);
	assert_int_equal(f.farm_objects, 74);
	assert_int_equal(pg_buf_puts(&want, "; 11 more lines not kept"), 0);
	p = record(&r, &f);
	assert_string_equal(p->farm, want.ptr);
	pg_report_free(r);
	pg_farm_release(&f);
	pg_buf_release(&big);
	pg_buf_release(&want);
}

/* The file beside a log, named as build.sh names it: ${log%.log}-farm.txt. */
static void test_path(void **state)
{
	static const char *const pairs[][2] = {
		{ "/h/logs/k/1/build.log", "/h/logs/k/1/build-farm.txt" },
		{ "build.log.log", "build.log-farm.txt" },
		{ "build.txt", "build.txt-farm.txt" },
		{ ".log", "-farm.txt" },
		{ "log", "log-farm.txt" },
	};
	pg_buf out = PG_BUF_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < PG_ARRAY_SIZE(pairs); i++) {
		pg_buf_clear(&out);
		assert_int_equal(pg_farm_path(&out, pairs[i][0]), 0);
		assert_string_equal(out.ptr, pairs[i][1]);
	}
	pg_buf_release(&out);
}

/* A scratch directory for the farm file; the alarm ends a read that would block. */
typedef struct scratch {
	char dir[32];
	char path[64], other[64];
} scratch;

static int scratch_setup(void **state)
{
	scratch *s = calloc(1, sizeof(*s));

	if (!s)
		return -1;
	snprintf(s->dir, sizeof(s->dir), "/tmp/pg-farm-XXXXXX");
	if (!mkdtemp(s->dir))
		return -1;
	snprintf(s->path, sizeof(s->path), "%s/build-farm.txt", s->dir);
	snprintf(s->other, sizeof(s->other), "%s/other.txt", s->dir);
	alarm(20);
	*state = s;
	return 0;
}

static int scratch_teardown(void **state)
{
	scratch *s = *state;

	alarm(0);
	pg_remove_tree(s->dir);
	free(s);
	return 0;
}

static void write_file(const char *path, const char *text, size_t len)
{
	assert_int_equal(pg_write_file_atomic(path, text, len), 0);
}

/* The farm's lines read and recorded; no file is no farm. */
static void test_read(void **state)
{
	static const char file[] = "environment " ENV ": gcc\nfarm compiled 2 of 3 objects\n";
	scratch *s = *state;
	pg_farm f;
	pg_report *r = NULL;
	pg_provenance *p;

	pg_farm_init(&f);
	assert_int_equal(pg_farm_read(&f, s->path), 0);
	assert_int_equal(pg_error_last_code(), PG_OK);
	assert_int_equal(f.kept, 0);
	assert_false(f.has_total);

	write_file(s->path, file, sizeof(file) - 1);
	assert_int_equal(pg_farm_read(&f, s->path), 0);
	assert_true(f.has_total);
	assert_int_equal(f.farm_objects, 2);
	p = record(&r, &f);
	assert_string_equal(p->farm_env, ENV ": gcc");
	assert_string_equal(p->farm, "farm compiled 2 of 3 objects");
	pg_report_free(r);
	pg_farm_release(&f);
}

/* What f says when the file was refused: one warning, no environment, no total. */
static void assert_refused(pg_farm *f, const char *why)
{
	pg_buf want = PG_BUF_INIT;

	assert_int_equal(pg_error_last_code(), PG_OK);
	assert_int_equal(pg_buf_printf(&want, "warning: build.sh's farm file not read: %s", why), 0);
	assert_string_equal(f->lines.ptr, want.ptr);
	assert_int_equal(f->env.len, 0);
	assert_false(f->has_total);
	pg_farm_release(f);
	pg_buf_release(&want);
}

/* Only a regular file of its own, bounded, is read: a link, a FIFO, a directory, a huge file are not. */
static void test_read_refused(void **state)
{
	static const char forged[] = "environment " ENV ": forged\nfarm compiled 9 of 9 objects\n";
	scratch *s = *state;
	pg_buf big = PG_BUF_INIT;
	pg_farm f;

	pg_farm_init(&f);
	/* a symlink to a file of forged lines: never followed */
	write_file(s->other, forged, sizeof(forged) - 1);
	assert_int_equal(symlink(s->other, s->path), 0);
	assert_int_equal(pg_farm_read(&f, s->path), 0);
	assert_refused(&f, "is a symbolic link, not a regular file");
	assert_int_equal(unlink(s->path), 0);

	/* a FIFO nobody writes: refused at once (the alarm would end a wait) */
	assert_int_equal(mkfifo(s->path, 0644), 0);
	assert_int_equal(pg_farm_read(&f, s->path), 0);
	assert_refused(&f, "is a FIFO, not a regular file");
	assert_int_equal(unlink(s->path), 0);

	assert_int_equal(mkdir(s->path, 0755), 0);
	assert_int_equal(pg_farm_read(&f, s->path), 0);
	assert_refused(&f, "is a directory, not a regular file");
	assert_int_equal(rmdir(s->path), 0);

	/* PG_FARM_FILE_MAX bytes are read; one more and nothing of it is */
	assert_int_equal(pg_buf_puts(&big, forged), 0);
	while (big.len < PG_FARM_FILE_MAX)
		assert_int_equal(pg_buf_putc(&big, '\n'), 0);
	write_file(s->path, big.ptr, big.len);
	assert_int_equal(pg_farm_read(&f, s->path), 0);
	assert_int_equal(f.farm_objects, 9);
	pg_farm_release(&f);
	assert_int_equal(pg_buf_putc(&big, '\n'), 0);
	write_file(s->path, big.ptr, big.len);
	assert_int_equal(pg_farm_read(&f, s->path), 0);
	assert_refused(&f, "is larger than 64 KiB");
	pg_buf_release(&big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind),
		cmocka_unit_test(test_blank_and_unended),
		cmocka_unit_test(test_near_misses),
		cmocka_unit_test(test_hostile_and_bounded),
		cmocka_unit_test(test_path),
		cmocka_unit_test_setup_teardown(test_read, scratch_setup, scratch_teardown),
		cmocka_unit_test_setup_teardown(test_read_refused, scratch_setup, scratch_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
