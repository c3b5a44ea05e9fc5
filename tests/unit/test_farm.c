/* test_farm.c - unit tests for reading build.sh's icecc lines into what the report says of the farm. */
#include "tests/unit/unit.h"

#include "pipeline/farm.h"

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

/* Each kind of line build.sh prints, in the order it prints them. */
static void test_every_kind(void **state)
{
	pg_farm f;
	pg_report *r = NULL;
	pg_provenance *p;

	(void)state;
	pg_farm_init(&f);
	assert_int_equal(line(&f, "build.sh: icecc: environment " ENV ": " CARRIES), 1);
	assert_int_equal(line(&f, "  CC      lib/a.o"), 0);
	assert_int_equal(line(&f, "build.sh: icecc: 127.0.0.1:18771 compiled 812 objects"), 1);
	assert_int_equal(line(&f, "build.sh: icecc: build2 compiled 640 objects"), 1);
	assert_int_equal(line(&f, "lib/old.c:1:1: warning: an old warning [-Wold]"), 0);
	assert_int_equal(line(&f, "build.sh: icecc: 127.0.0.1:18772 failed 3 jobs (connection "
				  "refused), compiled here instead"), 1);
	assert_int_equal(line(&f, "build.sh: icecc: 101 objects compiled here"), 1);
	assert_int_equal(line(&f, "build.sh: icecc: warning: the scheduler saw 1 host down"), 1);
	assert_false(f.has_total);
	assert_int_equal(line(&f, "build.sh: icecc: farm compiled 1452 of 1556 objects"), 1);
	assert_true(f.has_total);
	assert_int_equal(f.farm_objects, 1452);
	assert_int_equal(f.total_objects, 1556);
	assert_int_equal(f.kept, 7);
	assert_int_equal(f.dropped, 0);

	p = record(&r, &f);
	assert_string_equal(p->farm_env, ENV ": " CARRIES);
	assert_string_equal(p->farm, "127.0.0.1:18771 compiled 812 objects; build2 compiled 640 "
			    "objects; 127.0.0.1:18772 failed 3 jobs (connection refused), compiled "
			    "here instead; 101 objects compiled here; warning: the scheduler saw 1 "
			    "host down; farm compiled 1452 of 1556 objects");
	pg_report_free(r);
	pg_farm_release(&f);
}

/* Lines of other scripts and of make are not the farm's; a build without icecc records nothing. */
static void test_other_lines(void **state)
{
	static const char *const others[] = {
		"",
		"build.sh: icecc:",                         /* the prefix cut short */
		"build.sh: distcc: build1 built 3 objects",
		"boot.sh: icecc: farm compiled 1 of 1 objects",
		" build.sh: icecc: farm compiled 1 of 1 objects",
		"BUILD.SH: ICECC: farm compiled 1 of 1 objects",
		"make[1]: build.sh: icecc: farm compiled 1 of 1 objects",
	};
	pg_farm f;
	pg_report *r = NULL;
	pg_provenance *p;
	size_t i;

	(void)state;
	pg_farm_init(&f);
	for (i = 0; i < PG_ARRAY_SIZE(others); i++)
		assert_int_equal(line(&f, others[i]), 0);
	assert_false(f.has_total);
	assert_int_equal(f.kept, 0);
	p = record(&r, &f);
	assert_null(p->farm_env);
	assert_null(p->farm);
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
		"farm compiled 5 of 4 objects",              /* more than the total */
		"farm compiled -1 of 4 objects",
		"farm compiled 1 of 4 objects, roughly",
		"farm compiled 99999999999999999999999 of 99999999999999999999999 objects",
		"farm compiled  1 of 4 objects",
		"something build.sh does not say yet",
	};
	pg_buf want = PG_BUF_INIT, l = PG_BUF_INIT;
	pg_farm f;
	pg_report *r = NULL;
	pg_provenance *p;
	size_t i;

	(void)state;
	pg_farm_init(&f);
	for (i = 0; i < PG_ARRAY_SIZE(texts); i++) {
		pg_buf_clear(&l);
		assert_int_equal(pg_buf_printf(&l, "%s%s", PG_FARM_PREFIX, texts[i]), 0);
		assert_int_equal(pg_farm_line(&f, l.ptr, l.len), 1);
		assert_int_equal(pg_buf_printf(&want, "%s%s", i ? "; " : "", texts[i]), 0);
	}
	assert_false(f.has_total);
	p = record(&r, &f);
	assert_null(p->farm_env);
	assert_string_equal(p->farm, want.ptr);
	pg_report_free(r);

	/* one environment a build: a second is a line like the others, and the last total counts */
	pg_farm_release(&f);
	assert_int_equal(line(&f, "build.sh: icecc: environment " ENV ":"), 1);
	assert_int_equal(line(&f, "build.sh: icecc: environment 00000000000000000000000000000000: "
				  "another"), 1);
	assert_int_equal(line(&f, "build.sh: icecc: farm compiled 1 of 9 objects"), 1);
	assert_int_equal(line(&f, "build.sh: icecc: farm compiled 2 of 3 objects"), 1);
	assert_int_equal(f.farm_objects, 2);
	assert_int_equal(f.total_objects, 3);
	p = record(&r, &f);
	assert_string_equal(p->farm_env, ENV ":");
	assert_string_equal(p->farm, "environment 00000000000000000000000000000000: another; "
			    "farm compiled 1 of 9 objects; farm compiled 2 of 3 objects");
	pg_report_free(r);
	pg_farm_release(&f);
	pg_buf_release(&want);
	pg_buf_release(&l);
}

/* A script's text is untrusted: escapes and control characters go, lines are cut and counted. */
static void test_hostile_and_bounded(void **state)
{
	static const char hostile[] = "build.sh: icecc: warning: \033[31mred\033[0m\a bell\0\r\n"
				      "\tnl \xff bad";
	pg_buf big = PG_BUF_INIT, want = PG_BUF_INIT;
	pg_farm f;
	pg_report *r = NULL;
	pg_provenance *p;
	size_t i;

	(void)state;
	pg_farm_init(&f);
	/* the NUL, the escapes, the bell and the carriage return are gone; bad UTF-8 is U+FFFD */
	assert_int_equal(pg_farm_line(&f, hostile, sizeof(hostile) - 1), 1);
	assert_string_equal(f.lines.ptr, "warning: red bell  nl \xEF\xBF\xBD bad");
	for (i = 0; f.lines.ptr[i]; i++)
		assert_true((unsigned char)f.lines.ptr[i] >= 0x20);
	pg_farm_release(&f);

	/* a long line is cut at PG_FARM_LINE_MAX bytes, never inside a character */
	assert_int_equal(pg_buf_puts(&big, PG_FARM_PREFIX "warning: "), 0);
	while (big.len < 4000)
		assert_int_equal(pg_buf_puts(&big, "\xC3\xA9"), 0);
	assert_int_equal(pg_farm_line(&f, big.ptr, big.len), 1);
	assert_true(f.lines.len <= PG_FARM_LINE_MAX);
	assert_true(f.lines.len >= PG_FARM_LINE_MAX - 1);
	assert_int_equal(((unsigned char)f.lines.ptr[f.lines.len - 1]), 0xA9);
	pg_farm_release(&f);

	/* at most PG_FARM_LINES_MAX lines kept, the rest counted; a late total still counts */
	for (i = 0; i < PG_FARM_LINES_MAX + 10; i++) {
		pg_buf_clear(&big);
		assert_int_equal(pg_buf_printf(&big, PG_FARM_PREFIX "host%zu compiled 1 objects", i),
				 0);
		assert_int_equal(pg_farm_line(&f, big.ptr, big.len), 1);
		if (i < PG_FARM_LINES_MAX)
			assert_int_equal(pg_buf_printf(&want, "%shost%zu compiled 1 objects",
						       i ? "; " : "", i), 0);
	}
	assert_int_equal(line(&f, "build.sh: icecc: farm compiled 74 of 80 objects"), 1);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind),
		cmocka_unit_test(test_other_lines),
		cmocka_unit_test(test_near_misses),
		cmocka_unit_test(test_hostile_and_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
