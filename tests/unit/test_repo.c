/* test_repo.c - unit tests for the repository layer's one local-or-URL decision and its configuration reads. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "common/fs.h"
#include "repo/repo.h"
#include "tests/unit/run.h"

#include <pthread.h>
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

static void write_text(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	fputs(text, f);
	fclose(f);
}

/* A repository made by hand: HEAD on main, which tracks origin's master. */
static void make_repo(char *dir, const char *extra_config)
{
	char path[4200];
	static const char *const dirs[] = { ".git", ".git/objects", ".git/refs", ".git/refs/heads" };
	size_t i;

	assert_non_null(mkdtemp(dir));
	for (i = 0; i < PG_ARRAY_SIZE(dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, dirs[i]);
		assert_int_equal(mkdir(path, 0755), 0);
	}
	write_text(dir, ".git/HEAD", "ref: refs/heads/main\n");
	snprintf(path, sizeof(path), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
		 "[remote \"origin\"]\n\turl = /nowhere\n"
		 "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
		 "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/master\n%s",
		 extra_config);
	write_text(dir, ".git/config", path);
}

static void test_configuration_reads(void **state)
{
	char dir[] = "/tmp/pg-test-repo-XXXXXX";
	pg_repo *r = NULL;
	char *s = NULL;
	pg_oid id;

	(void)state;
	make_repo(dir, "[pullgate]\n\tupstream = linus/master\n"
		  "[branch \"local\"]\n\tremote = .\n\tmerge = refs/heads/main\n"
		  "[remote \"two\"]\n\turl = /elsewhere\n"
		  "\tfetch = +refs/heads/a:refs/remotes/two/a\n\tfetch = +refs/heads/*:refs/two/*\n"
		  "[branch \"second\"]\n\tremote = two\n\tmerge = refs/heads/b\n"
		  "[branch \"tagged\"]\n\tremote = origin\n\tmerge = refs/tags/t\n"
		  "[branch \"gone\"]\n\tremote = gone\n\tmerge = refs/heads/master\n"
		  "[remote \"gone\"]\n\tfetch = +refs/heads/*:refs/remotes/gone/*\n");
	assert_int_equal(pg_repo_open(&r, dir), 0);
	assert_int_equal(pg_repo_config_string(&s, r, "pullgate.upstream"), 0);
	assert_string_equal(s, "linus/master");
	free(s);
	assert_int_equal(pg_repo_config_string(&s, r, "pullgate.nothing"), 0);
	assert_null(s);
	assert_int_equal(pg_repo_head_branch(&s, r), 0);
	assert_string_equal(s, "refs/heads/main");
	free(s);
	/* the @{upstream} name comes from the configuration and the remote's refspec */
	assert_int_equal(pg_repo_branch_upstream(&s, r, "refs/heads/main"), 0);
	assert_string_equal(s, "refs/remotes/origin/master");
	free(s);
	assert_int_equal(pg_repo_branch_upstream(&s, r, "refs/heads/other"), 0);
	assert_null(s);
	/* "." is this repository: the merged ref itself */
	assert_int_equal(pg_repo_branch_upstream(&s, r, "refs/heads/local"), 0);
	assert_string_equal(s, "refs/heads/main");
	free(s);
	/* the first refspec whose source matches */
	assert_int_equal(pg_repo_branch_upstream(&s, r, "refs/heads/second"), 0);
	assert_string_equal(s, "refs/two/b");
	free(s);
	/* none matches; a remote without a URL is no remote (as git_branch_upstream_name) */
	assert_int_equal(pg_repo_branch_upstream(&s, r, "refs/heads/tagged"), 0);
	assert_null(s);
	assert_int_equal(pg_repo_branch_upstream(&s, r, "refs/heads/gone"), 0);
	assert_null(s);
	assert_int_equal(pg_repo_branch_upstream(&s, r, "refs/tags/t"), PG_EINVALID);
	assert_int_equal(pg_repo_hooks_dir(&s, r), 0);
	assert_non_null(strstr(s, "/.git/hooks"));
	free(s);
	assert_int_equal(pg_repo_revparse_commit(&id, r, "origin/master"), PG_ENOTFOUND);
	assert_int_equal(pg_oid_fromhex(&id, "0123456789012345678901234567890123456789", 40), 0);
	assert_false(pg_repo_has_object(r, &id));
	pg_repo_free(r);
	assert_int_equal(pg_remove_tree(dir), 0);
}

static void test_hooks_path_is_configured_relative_to_the_working_tree(void **state)
{
	char dir[] = "/tmp/pg-test-repo-XXXXXX", want[4200], real[4096];
	pg_repo *r = NULL;
	char *s = NULL;

	(void)state;
	make_repo(dir, "[core]\n\thooksPath = my-hooks\n");
	assert_int_equal(pg_repo_open(&r, dir), 0);
	assert_int_equal(pg_repo_hooks_dir(&s, r), 0);
	assert_non_null(realpath(dir, real));
	snprintf(want, sizeof(want), "%s/my-hooks", real);
	assert_string_equal(s, want);
	free(s);
	pg_repo_free(r);
	assert_int_equal(pg_remove_tree(dir), 0);
}

typedef struct adder {
	const char *repo, *name, *path, *ref;
	pthread_barrier_t *go;
	int err;
} adder;

static void *add_worktree(void *p)
{
	adder *a = p;
	pg_repo *r = NULL;

	a->err = pg_repo_open(&r, a->repo);
	pthread_barrier_wait(a->go);
	if (a->err == 0)
		a->err = pg_repo_worktree_add(r, a->name, a->path, a->ref);
	pg_repo_free(r);
	return NULL;
}

/* Two build worktrees added at once, as two pulls gated in parallel do: both are made. */
static void test_worktrees_added_at_once(void **state)
{
	char dir[] = "/tmp/pg-test-worktrees-XXXXXX";
	char repo[64], w1[64], w2[64];
	pthread_barrier_t go;
	int round;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(repo, sizeof(repo), "%s/tree.git", dir);
	snprintf(w1, sizeof(w1), "%s/w1", dir);
	snprintf(w2, sizeof(w2), "%s/w2", dir);
	free(run_sh("git init -q --bare %s && t=$(git --git-dir=%s mktree </dev/null) && "
		    "c=$(git --git-dir=%s commit-tree -m base $t) && "
		    "git --git-dir=%s update-ref refs/heads/b1 $c && "
		    "git --git-dir=%s update-ref refs/heads/b2 $c", repo, repo, repo, repo, repo));
	for (round = 0; round < 30; round++) {
		adder a[2] = { { repo, "w1", w1, "refs/heads/b1", &go, -1 },
			       { repo, "w2", w2, "refs/heads/b2", &go, -1 } };
		pthread_t t[2];
		int i;

		free(run_sh("rm -rf %s/worktrees %s %s", repo, w1, w2));
		assert_int_equal(pthread_barrier_init(&go, NULL, 2), 0);
		for (i = 0; i < 2; i++)
			assert_int_equal(pthread_create(&t[i], NULL, add_worktree, &a[i]), 0);
		for (i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		pthread_barrier_destroy(&go);
		assert_int_equal(a[0].err, 0);
		assert_int_equal(a[1].err, 0);
	}
	assert_int_equal(pg_remove_tree(dir), 0);
}

/* repo/tls.c's definition, which libgit2's call reaches first */
int mbedtls_x509_crt_parse_file(void *chain, const char *path);

/*
 * libgit2's init leaves the CA bundle unparsed; a fetch by URL parses it
 * first, and any call made outside the init reaches mbedTLS's own parser.
 */
static void test_ca_bundle_is_parsed_for_the_first_fetch_by_url(void **state)
{
	char home[] = "/tmp/pg-test-tls-XXXXXX";
	const char *path = NULL;
	pg_repo *r = NULL;
	pg_oid id;
	int err;

	(void)state;
	assert_non_null(mkdtemp(home));
	assert_int_equal(pg_repo_open_cache(&r, home), 0);
	/* Debian 12's libgit2 is built on mbedTLS: its init asked for the bundle */
	assert_true(pg_repo_tls_deferred(&path));
	assert_non_null(path);
	assert_int_equal(access(path, R_OK), 0);
	/* outside the init, mbedTLS's parser answers: no such file is an error */
	assert_true(mbedtls_x509_crt_parse_file(NULL, "/nonexistent/ca.crt") < 0);
	assert_true(pg_repo_tls_deferred(NULL));
	/* port 1 on loopback refuses; the bundle is parsed before the connect */
	err = pg_repo_fetch(&id, r, "https://127.0.0.1:1/linux.git", "refs/heads/master", NULL);
	assert_true(err < 0);
	pg_error_clear();
	assert_false(pg_repo_tls_deferred(NULL));
	pg_repo_free(r);
	assert_int_equal(pg_remove_tree(home), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_urls_are_remote),
		cmocka_unit_test(test_paths_and_file_urls_are_local),
		cmocka_unit_test(test_scp_like_is_local_only_when_the_directory_exists),
		cmocka_unit_test(test_configuration_reads),
		cmocka_unit_test(test_hooks_path_is_configured_relative_to_the_working_tree),
		cmocka_unit_test(test_ca_bundle_is_parsed_for_the_first_fetch_by_url),
		cmocka_unit_test(test_worktrees_added_at_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
