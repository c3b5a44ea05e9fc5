/* test_provenance.c - unit tests for telling the shipped kernel scripts from stand-ins. */
#include "tests/unit/unit.h"

#include "pipeline/provenance.h"
#include "common/buf.h"
#include "common/fs.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* The checkout these tests run in: make check-unit runs them from its top. */
#define SOURCE_TOP "."

/* A data directory with scripts/kernel/ under a fresh temporary directory. */
static char *datadir(void)
{
	char tmpl[] = "/tmp/pg-prov-XXXXXX", *d;
	pg_buf p = PG_BUF_INIT;

	assert_non_null(mkdtemp(tmpl));
	d = strdup(tmpl);
	assert_int_equal(pg_buf_printf(&p, "%s/scripts/kernel", d), 0);
	assert_int_equal(pg_mkdir_p(p.ptr), 0);
	pg_buf_release(&p);
	return d;
}

static void put(const char *dir, const char *file, const char *from_datadir, const char *extra)
{
	pg_buf src = PG_BUF_INIT, dst = PG_BUF_INIT, text = PG_BUF_INIT;

	assert_int_equal(pg_buf_printf(&dst, "%s/%s", dir, file), 0);
	if (from_datadir) {
		assert_int_equal(pg_buf_printf(&src, "%s/%s", from_datadir, file), 0);
		assert_int_equal(pg_buf_read_file(&text, src.ptr), 0);
	}
	if (extra)
		assert_int_equal(pg_buf_puts(&text, extra), 0);
	assert_int_equal(pg_write_file_atomic(dst.ptr, text.ptr, text.len), 0);
	pg_buf_release(&src);
	pg_buf_release(&dst);
	pg_buf_release(&text);
}

static pg_provenance *record(pg_report *r, const char *dir, const char *const *files)
{
	pg_provenance *p = NULL;

	assert_int_equal(pg_report_add_provenance(&p, r, "build"), 0);
	assert_int_equal(pg_prov_files(r, p, dir, files), 0);
	return p;
}

static void test_the_shipped_scripts(void **state)
{
	pg_report *r = NULL;
	pg_provenance *p;
	size_t i;

	(void)state;
	assert_int_equal(pg_report_new(&r), 0);
	/* the source tree (make check-unit runs from its top) holds the shipped scripts */
	p = record(r, SOURCE_TOP, pg_boot_files);
	assert_int_equal(p->nfiles, 5);
	for (i = 0; i < p->nfiles; i++) {
		assert_true(p->files[i].shipped);
		assert_int_equal(strlen(p->files[i].sha256), 64);
	}
	assert_false(p->simulated);
	assert_false(r->simulated);
	pg_report_free(r);
}

static void test_stand_ins(void **state)
{
	pg_report *r = NULL;
	pg_provenance *p;
	char *d = datadir();

	(void)state;
	/* a stand-in: its own build.sh, none of the shipped one's inputs */
	put(d, "scripts/kernel/build.sh", NULL, "#!/bin/sh\nexit 0\n");
	assert_int_equal(pg_report_new(&r), 0);
	p = record(r, d, pg_build_files);
	assert_int_equal(p->nfiles, 1);
	assert_false(p->files[0].shipped);
	/* printf '#!/bin/sh\nexit 0\n' | sha256sum */
	assert_string_equal(p->files[0].sha256,
			    "306c6ca7407560340797866e077e053627ad409277d1b9da58106fce4cf717cb");
	assert_true(p->simulated);
	assert_true(r->simulated);
	pg_report_free(r);

	/* the shipped build.sh changed by one line is no longer the shipped one */
	put(d, "scripts/kernel/build.sh", SOURCE_TOP, "# changed\n");
	put(d, "scripts/kernel/lib.sh", SOURCE_TOP, NULL);
	assert_int_equal(pg_report_new(&r), 0);
	p = record(r, d, pg_build_files);
	assert_false(p->files[0].shipped);
	assert_true(p->files[1].shipped);
	assert_true(r->simulated);
	pg_report_free(r);

	/* the shipped script without one of its inputs: recorded as unreadable, not shipped */
	put(d, "scripts/kernel/build.sh", SOURCE_TOP, NULL);
	assert_int_equal(pg_report_new(&r), 0);
	p = record(r, d, pg_build_files);
	assert_int_equal(p->nfiles, 3);
	assert_true(p->files[0].shipped);
	assert_null(p->files[2].sha256);
	assert_false(p->files[2].shipped);
	assert_true(r->simulated);
	pg_report_free(r);
	assert_int_equal(pg_remove_tree(d), 0);
	free(d);
}

static void test_tool_versions(void **state)
{
	char *v = NULL, *dir, *path = NULL;
	const char *old_path = getenv("PATH");
	pg_buf p = PG_BUF_INIT;

	(void)state;
	assert_int_equal(pg_prov_tool_version(&v, "sh-that-does-not-exist-anywhere"), 0);
	assert_true(!strncmp(v, "unavailable: ", 13));
	free(v);
	/* a tool that answers gives its first line */
	assert_int_equal(pg_prov_tool_version(&v, "cat"), 0);
	assert_non_null(v);
	/* coreutils' first line names the program, its second the copyright */
	assert_true(!strncmp(v, "cat (GNU coreutils) ", 20));
	assert_null(strchr(v, '\n'));
	free(v);

	/* tools of known answers on PATH: two lines, and a --version that fails */
	dir = datadir();
	put(dir, "pg-two-lines", NULL, "#!/bin/sh\necho 'pg-two-lines 1.2.3'\necho 'second line'\n");
	put(dir, "pg-fails", NULL, "#!/bin/sh\necho 'pg-fails 9'\nexit 3\n");
	assert_int_equal(pg_buf_printf(&p, "%s/pg-two-lines", dir), 0);
	assert_int_equal(chmod(p.ptr, 0755), 0);
	pg_buf_clear(&p);
	assert_int_equal(pg_buf_printf(&p, "%s/pg-fails", dir), 0);
	assert_int_equal(chmod(p.ptr, 0755), 0);
	pg_buf_clear(&p);
	assert_non_null(old_path);
	path = strdup(old_path);
	assert_non_null(path);
	assert_int_equal(pg_buf_printf(&p, "%s:%s", dir, path), 0);
	assert_int_equal(setenv("PATH", p.ptr, 1), 0);
	assert_int_equal(pg_prov_tool_version(&v, "pg-two-lines"), 0);
	assert_string_equal(v, "pg-two-lines 1.2.3");
	free(v);
	assert_int_equal(pg_prov_tool_version(&v, "pg-fails"), 0);
	assert_string_equal(v, "unavailable: pg-fails --version failed");
	free(v);
	assert_int_equal(setenv("PATH", path, 1), 0);
	free(path);
	pg_buf_release(&p);
	assert_int_equal(pg_remove_tree(dir), 0);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_shipped_scripts),
		cmocka_unit_test(test_stand_ins),
		cmocka_unit_test(test_tool_versions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
