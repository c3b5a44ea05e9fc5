/* test_select.c - unit tests for the pull-aware KUnit selection on a small synthetic kernel tree. */
#include "tests/unit/unit.h"

#include "pipeline/select.h"
#include "common/error.h"

/* The synthetic tree: path -> content. */
static const char *const files[][2] = {
	{ "Kconfig", "source \"fs/Kconfig\"\nconfig ROOT_KUNIT_TEST\n\tbool\n" },
	{ "Documentation/kunit.rst", "KUnit\n" },
	{ "fs/Kconfig", "config FS_THING\n\tbool\n" },
	{ "fs/ext4/.kunitconfig", "CONFIG_KUNIT=y\nCONFIG_EXT4_FS=y\nCONFIG_EXT4_KUNIT_TESTS=y\n" },
	{ "fs/ext4/Kconfig",
	  "config EXT4_FS\n\ttristate \"ext4\"\n"
	  "config EXT4_KUNIT_TESTS\n\ttristate \"KUnit tests for ext4\"\n"
	  "\tdepends on EXT4_FS && KUNIT\n\thelp\n\t  depends on nothing said here\n" },
	{ "fs/ext4/inode.c", "int x;\n" },
	{ "fs/ext4/Makefile", "ext4-y := inode.o mballoc.o\n"
	  "ext4-inode-test-objs += inode-test.o\n"
	  "obj-$(CONFIG_EXT4_KUNIT_TESTS) += \\\n\text4-inode-test.o\n" },
	{ "fs/ext4/inode-test.c", "extern struct kunit_suite *p;\n"
	  "static struct kunit_suite ext4_inode_test_suite = {\n\t.name = \"ext4_inode_test\",\n};\n" },
	{ "fs/ext4/mballoc.c", "#ifdef CONFIG_EXT4_KUNIT_TESTS\n#include \"mballoc-test.c\"\n#endif\n" },
	{ "fs/ext4/mballoc-test.c", "static struct kunit_suite mbt = {\n\t.init = i,\n"
	  "\t.name = \"ext4_mballoc_test\",\n};\n" },
	{ "fs/ext4/other-test.c", "static struct kunit_suite o = {\n\t.name = \"not_built\",\n};\n" },
	{ "fs/ext4/sub/deep.c", "int y;\n" },
	{ "lib/Kconfig", "config STRING_KUNIT_TEST\n\ttristate\n\tdepends on KUNIT\n"
	  "config LIST_KUNIT_TEST\n\ttristate\n" },
	{ "lib/Kconfig.debug",
	  "config OVERFLOW_KUNIT_TEST\n\ttristate\n"
	  "menuconfig BITFIELD_KUNIT\n\ttristate\n\tdepends on KUNIT\n\tdepends on !UML\n"
	  "config HASH_KUNIT_TEST\n\ttristate\n"
	  "config NOT_A_TEST\n\tbool\n"
	  "config KUNIT_DEBUGFS\n\tbool\n" },
	{ "lib/string.c", "int s;\n" },
	{ "lib/Makefile", "obj-y += string.o\n" },
	{ "drivers/x/.kunitconfig",
	  "# comment\nCONFIG_X_KUNIT_TEST=m\nCONFIG_CMDLINE=\"evil\"\n# CONFIG_FORTIFY_SOURCE is not set\n"
	  "CONFIG_FORTIFY_SOURCE=n\n" },
	{ "drivers/x/x.c", "int x;\n" },
};

static const char base[] = "CONFIG_KUNIT=y\nCONFIG_OVERFLOW_KUNIT_TEST=y\n"
			   "# CONFIG_MODULES is not set\n";

static int t_read(void *ctx, const char *path, pg_buf *out)
{
	size_t i;

	(void)ctx;
	for (i = 0; i < PG_ARRAY_SIZE(files); i++)
		if (!strcmp(files[i][0], path))
			return pg_buf_puts(out, files[i][1]);
	return pg_error_set(PG_ENOTFOUND, "no %s", path);
}

static int t_list(void *ctx, const char *dir, char ***names, size_t *n)
{
	size_t i, len = strlen(dir), count = 0;
	char **list = calloc(PG_ARRAY_SIZE(files) + 1, sizeof(*list));
	bool is_dir = !len;

	(void)ctx;
	assert_non_null(list);
	for (i = 0; i < PG_ARRAY_SIZE(files); i++) {
		const char *p = files[i][0], *rest;

		if (len && (strncmp(p, dir, len) || p[len] != '/'))
			continue;
		rest = len ? p + len + 1 : p;
		is_dir = true;
		if (!strchr(rest, '/'))
			assert_non_null(list[count++] = strdup(rest));
	}
	if (!is_dir) {
		free(list);
		return pg_error_set(PG_ENOTFOUND, "no dir %s", dir);
	}
	*names = list;
	*n = count;
	return 0;
}

static const pg_select_src src = { t_read, t_list, NULL };

static pg_report *selection(const char **paths, size_t n, unsigned cap)
{
	pg_report *r = NULL;

	assert_int_equal(pg_report_new(&r), 0);
	assert_int_equal(pg_select(r, &src, paths, n, base, cap), 0);
	assert_true(r->has_selection);
	return r;
}

static const pg_selected *row(const pg_report *r, const char *option)
{
	size_t i;

	for (i = 0; i < r->nselected; i++)
		if (!strcmp(r->selected[i].option, option))
			return &r->selected[i];
	return NULL;
}

static size_t count(const pg_report *r, enum pg_selected_status st)
{
	size_t i, n = 0;

	for (i = 0; i < r->nselected; i++)
		n += r->selected[i].status == st;
	return n;
}

static void test_nearest_kunitconfig(void **state)
{
	const char *paths[] = { "fs/ext4/sub/deep.c" };
	pg_report *r = selection(paths, 1, 8);
	const pg_selected *s = row(r, "CONFIG_EXT4_KUNIT_TESTS");
	pg_buf frag = PG_BUF_INIT;

	(void)state;
	assert_non_null(s);
	assert_int_equal(s->status, PG_SELECTED_ADDED);
	assert_string_equal(s->path, "fs/ext4/sub/deep.c");
	/* found up the tree, from the directory of the kunitconfig */
	assert_string_equal(s->source, "fs/ext4/.kunitconfig");
	assert_true(s->test);
	/* its suites: the Makefile's object (through ext4-inode-test-objs) and the test mballoc.c includes */
	assert_string_equal(s->suites, "ext4_inode_test ext4_mballoc_test");
	assert_int_equal(row(r, "CONFIG_EXT4_FS")->status, PG_SELECTED_ADDED);
	assert_null(row(r, "CONFIG_EXT4_FS")->suites);
	assert_false(row(r, "CONFIG_EXT4_FS")->test);
	/* the base's line holds */
	assert_int_equal(row(r, "CONFIG_KUNIT")->status, PG_SELECTED_IN_BASE);
	assert_int_equal(pg_select_fragment(&frag, r), 0);
	assert_string_equal(frag.ptr, "CONFIG_EXT4_FS=y\nCONFIG_EXT4_KUNIT_TESTS=y\n");
	assert_non_null(strstr(r->selection_note, "1 KUnit test option added"));
	pg_buf_release(&frag);
	pg_report_free(r);
}

static void test_kconfig_symbols_of_the_directory(void **state)
{
	const char *paths[] = { "lib/string.c" };
	pg_report *r = selection(paths, 1, 8);
	const pg_selected *s;

	(void)state;
	/* every test symbol of lib/'s Kconfig files, none of fs/ or the root's */
	assert_non_null(s = row(r, "CONFIG_STRING_KUNIT_TEST"));
	assert_int_equal(s->status, PG_SELECTED_ADDED);
	assert_string_equal(s->source, "lib/Kconfig");
	assert_string_equal(s->depends, "KUNIT");
	assert_non_null(s = row(r, "CONFIG_BITFIELD_KUNIT"));
	assert_string_equal(s->source, "lib/Kconfig.debug");
	assert_string_equal(s->depends, "KUNIT && !UML");
	assert_non_null(row(r, "CONFIG_LIST_KUNIT_TEST"));
	assert_non_null(row(r, "CONFIG_HASH_KUNIT_TEST"));
	assert_int_equal(row(r, "CONFIG_OVERFLOW_KUNIT_TEST")->status, PG_SELECTED_IN_BASE);
	assert_null(row(r, "CONFIG_NOT_A_TEST"));
	assert_null(row(r, "CONFIG_KUNIT_DEBUGFS"));
	assert_null(row(r, "CONFIG_ROOT_KUNIT_TEST"));
	assert_null(row(r, "CONFIG_EXT4_KUNIT_TESTS"));
	assert_int_equal(count(r, PG_SELECTED_ADDED), 4);
	/* the one named like the changed file comes first */
	assert_string_equal(r->selected[0].option, "CONFIG_STRING_KUNIT_TEST");
	pg_report_free(r);
}

static void test_cap(void **state)
{
	const char *paths[] = { "fs/ext4/inode.c", "lib/string.c" };
	pg_report *r = selection(paths, 2, 2);
	const pg_selected *s;

	(void)state;
	/* ext4's .kunitconfig (one test option) first, then string: 2 */
	assert_int_equal(row(r, "CONFIG_EXT4_KUNIT_TESTS")->status, PG_SELECTED_ADDED);
	assert_int_equal(row(r, "CONFIG_STRING_KUNIT_TEST")->status, PG_SELECTED_ADDED);
	assert_non_null(s = row(r, "CONFIG_LIST_KUNIT_TEST"));
	assert_int_equal(s->status, PG_SELECTED_CAPPED);
	assert_non_null(strstr(s->reason, "kunit-select-max (2"));
	assert_int_equal(count(r, PG_SELECTED_CAPPED), 3);
	assert_non_null(strstr(r->selection_note, "3 more over the policy's cap"));
	pg_report_free(r);

	/* cap 0: nothing added, and said so */
	r = selection(paths, 2, 0);
	assert_int_equal(count(r, PG_SELECTED_ADDED), 0);
	assert_int_equal(row(r, "CONFIG_EXT4_FS")->status, PG_SELECTED_CAPPED);
	assert_non_null(strstr(r->selection_note, "over the policy's cap"));
	pg_report_free(r);
}

static void test_documentation_only_selects_nothing(void **state)
{
	const char *paths[] = { "Documentation/kunit.rst", "README" };
	pg_report *r = selection(paths, 2, 8);
	pg_buf frag = PG_BUF_INIT;

	(void)state;
	assert_int_equal(r->nselected, 0);
	assert_int_equal(pg_select_fragment(&frag, r), 0);
	assert_int_equal(frag.len, 0);
	assert_string_equal(r->selection_note, "nothing added beyond the baseline: no .kunitconfig "
			    "or Kconfig test option covers the 2 changed paths");
	pg_buf_release(&frag);
	pg_report_free(r);
}

static void test_pull_lines_refused(void **state)
{
	const char *paths[] = { "drivers/x/x.c" };
	pg_report *r = selection(paths, 1, 8);
	pg_buf frag = PG_BUF_INIT;

	(void)state;
	/* =m is built in; a string value and "=n" are refused, the comment ignored */
	assert_int_equal(row(r, "CONFIG_X_KUNIT_TEST")->status, PG_SELECTED_ADDED);
	assert_int_equal(row(r, "CONFIG_CMDLINE=\"evil\"")->status, PG_SELECTED_REFUSED);
	assert_int_equal(row(r, "CONFIG_FORTIFY_SOURCE=n")->status, PG_SELECTED_REFUSED);
	assert_int_equal(pg_select_fragment(&frag, r), 0);
	assert_string_equal(frag.ptr, "CONFIG_X_KUNIT_TEST=y\n");
	pg_buf_release(&frag);
	pg_report_free(r);
}

static void test_check_config(void **state)
{
	const char *paths[] = { "lib/string.c" };
	pg_report *r = selection(paths, 1, 8);
	const pg_selected *s;

	(void)state;
	assert_int_equal(pg_select_check_config(r, "CONFIG_STRING_KUNIT_TEST=y\n"
						"CONFIG_LIST_KUNIT_TEST=y\n"
						"# CONFIG_BITFIELD_KUNIT is not set\n"
						"CONFIG_HASH_KUNIT_TEST_X=y\n"), 0);
	assert_int_equal(row(r, "CONFIG_STRING_KUNIT_TEST")->status, PG_SELECTED_ENABLED);
	assert_int_equal(row(r, "CONFIG_LIST_KUNIT_TEST")->status, PG_SELECTED_ENABLED);
	s = row(r, "CONFIG_BITFIELD_KUNIT");
	assert_int_equal(s->status, PG_SELECTED_SKIPPED);
	assert_string_equal(s->reason, "Kconfig left it unset for arm64 virt: depends on KUNIT && !UML");
	/* a longer name is not the option */
	assert_int_equal(row(r, "CONFIG_HASH_KUNIT_TEST")->status, PG_SELECTED_SKIPPED);
	assert_string_equal(pg_selected_status_name(PG_SELECTED_SKIPPED), "skipped");
	pg_report_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nearest_kunitconfig),
		cmocka_unit_test(test_kconfig_symbols_of_the_directory),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_documentation_only_selects_nothing),
		cmocka_unit_test(test_pull_lines_refused),
		cmocka_unit_test(test_check_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
