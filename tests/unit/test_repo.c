/* test_repo.c - unit tests for the repository layer's one local-or-URL decision. */
#include "tests/unit/unit.h"

#include "common/fs.h"
#include "repo/repo.h"

#include <sys/stat.h>
#include <unistd.h>

static void test_urls_are_remote(void **state)
{
	(void)state;
	assert_false(pg_repo_is_local("https://git.kernel.org/pub/scm/linux.git"));
	assert_false(pg_repo_is_local("git://git.kernel.org/linux.git"));
	assert_false(pg_repo_is_local("ssh://git@example.org/linux.git"));
	assert_false(pg_repo_is_local("git@example.org:linux.git"));
}

static void test_paths_and_file_urls_are_local(void **state)
{
	(void)state;
	assert_true(pg_repo_is_local("file:///srv/git/linux.git"));
	assert_true(pg_repo_is_local("/srv/git/linux.git"));
	assert_true(pg_repo_is_local("linux.git"));
	/* a colon after the first slash is part of a path, not a host */
	assert_true(pg_repo_is_local("./mirror:linux"));
	assert_true(pg_repo_is_local("/srv/a:b"));
}

static void test_scp_like_is_local_only_when_the_directory_exists(void **state)
{
	char dir[] = "/tmp/pg-test-repo-XXXXXX", cwd[4096];

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chdir(dir), 0);
	assert_false(pg_repo_is_local("mirror:linux"));
	assert_int_equal(mkdir("mirror:linux", 0755), 0);
	assert_true(pg_repo_is_local("mirror:linux"));
	assert_false(pg_repo_is_local("mirror:other"));
	assert_int_equal(chdir(cwd), 0);
	assert_int_equal(pg_remove_tree(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_urls_are_remote),
		cmocka_unit_test(test_paths_and_file_urls_are_local),
		cmocka_unit_test(test_scp_like_is_local_only_when_the_directory_exists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
