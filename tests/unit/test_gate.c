/* test_gate.c - unit tests for the gate's pull keys, stage sets, the expected tag, run directories and build worktrees. */
#include "tests/unit/unit.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "pipeline/run.h"

#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

static char *key(const char *tag)
{
	pg_buf b = PG_BUF_INIT;

	assert_int_equal(pg_gate_pull_key(&b, tag), 0);
	return pg_buf_detach(&b);
}

static void test_plain_tags_keep_their_name(void **state)
{
	char *k;

	(void)state;
	k = key("hardening-v6.16-rc1-fix1-take2");
	assert_string_equal(k, "hardening-v6.16-rc1-fix1-take2");
	free(k);
	k = key("refs/tags/for-linus_6.16");
	assert_string_equal(k, "for-linus_6.16");
	free(k);
}

static void test_changed_names_do_not_collide(void **state)
{
	char *slash, *dash, *again, *long1, *long2, *empty, *dot;
	char a[200], b[200];

	(void)state;
	slash = key("a/b");
	dash = key("a-b");
	again = key("a/b");
	assert_string_equal(dash, "a-b");
	assert_string_not_equal(slash, dash);
	assert_true(!strncmp(slash, "a-b-pull-", 9) && strlen(slash) == 9 + 16);
	assert_string_equal(slash, again); /* the same tag, the same key */

	memset(a, 'x', sizeof(a) - 1);
	a[sizeof(a) - 1] = '\0';
	memcpy(b, a, sizeof(b));
	b[150] = 'y'; /* differs after the 80 characters a key keeps */
	long1 = key(a);
	long2 = key(b);
	assert_string_not_equal(long1, long2);
	assert_true(strlen(long1) <= 80 + 6 + 16);

	empty = key("refs/tags/");
	assert_true(!strncmp(empty, "pull-", 5));
	dot = key(".hidden");
	assert_int_equal(dot[0], '-');
	assert_non_null(strstr(dot, "-pull-"));
	free(slash);
	free(dash);
	free(again);
	free(long1);
	free(long2);
	free(empty);
	free(dot);
}

static void test_stage_sets(void **state)
{
	(void)state;
	assert_int_equal(pg_gate_stage_flag("build", 5), PG_GATE_BUILD);
	assert_int_equal(pg_gate_stage_flag("buildx", 5), PG_GATE_BUILD);
	assert_int_equal(pg_gate_stage_flag("buil", 4), 0);
	assert_int_equal(pg_gate_stage_flag("deploy", 6), 0);
	assert_true(pg_gate_stages_valid(0));
	assert_true(pg_gate_stages_valid(PG_GATE_MERGE));
	assert_true(pg_gate_stages_valid(PG_GATE_MERGE | PG_GATE_BUILD | PG_GATE_BOOT));
	assert_true(pg_gate_stages_valid(PG_GATE_ALL));
	assert_false(pg_gate_stages_valid(PG_GATE_MERGE | PG_GATE_APPROVE));
	assert_false(pg_gate_stages_valid(PG_GATE_BOOT));
	assert_false(pg_gate_stages_valid(PG_GATE_BUILD | PG_GATE_BOOT | PG_GATE_APPROVE));
	assert_false(pg_gate_stages_valid(PG_GATE_ALL + 1));
}

static void test_the_tag_a_push_record_named(void **state)
{
	pg_report *r = NULL;
	pg_oid named;

	(void)state;
	assert_int_equal(pg_report_new(&r), 0);
	r->tag = strdup("refs/tags/v1");
	memset(r->tag_object.id, 0xab, sizeof(r->tag_object.id));
	named = r->tag_object;
	/* none named: any tag object is right; the one named is */
	assert_int_equal(pg_gate_expected_tag(r, NULL, "nothing was merged"), 0);
	assert_int_equal(pg_gate_expected_tag(r, &named, "nothing was merged"), 0);
	/* another is not, by its whole id, not its first digits */
	named.id[PG_OID_RAWSZ - 1] = 0xac;
	assert_int_equal(pg_gate_expected_tag(r, &named, NULL), PG_ECONFLICT);
	named.id[0] = 0x12;
	assert_int_equal(pg_gate_expected_tag(r, &named, NULL), PG_ECONFLICT);
	assert_string_equal(pg_error_last(), "refs/tags/v1 is abababababab, not the 12abababab"
			    "ab the push record names");
	assert_int_equal(pg_gate_expected_tag(r, &named, "nothing was changed"), PG_ECONFLICT);
	assert_string_equal(pg_error_last(), "refs/tags/v1 is abababababab, not the 12abababab"
			    "ab the push record names: nothing was changed");
	pg_error_clear();
	pg_report_free(r);
}

static void test_run_dirs_are_fresh(void **state)
{
	char home[] = "/tmp/pg-gate-XXXXXX", link[PATH_MAX];
	pg_gate_opts o = PG_GATE_OPTS_INIT;
	pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT, c = PG_BUF_INIT, want = PG_BUF_INIT;
	ssize_t n;

	(void)state;
	assert_non_null(mkdtemp(home));
	o.home = home;
	assert_int_equal(pg_run_logs_dir(&a, &o, "k"), 0);
	assert_int_equal(pg_run_logs_dir(&b, &o, "k"), 0);
	assert_int_equal(pg_buf_printf(&want, "%s/logs/k/run-1", home), 0);
	assert_string_equal(a.ptr, want.ptr);
	pg_buf_clear(&want);
	assert_int_equal(pg_buf_printf(&want, "%s/logs/k/run-2", home), 0);
	assert_string_equal(b.ptr, want.ptr);
	pg_buf_clear(&want);
	/* latest names the newest */
	assert_int_equal(pg_buf_printf(&want, "%s/logs/k/latest", home), 0);
	n = readlink(want.ptr, link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_string_equal(link, "run-2");
	/* a directory someone else made is never taken for this run's */
	pg_buf_clear(&want);
	assert_int_equal(pg_buf_printf(&want, "%s/logs/k/run-3", home), 0);
	assert_int_equal(mkdir(want.ptr, 0755), 0);
	o.run_name = "job-7";
	assert_int_equal(pg_run_logs_dir(&c, &o, "k"), 0);
	assert_non_null(strstr(c.ptr, "/logs/job-7/run-1"));
	o.run_name = NULL;
	pg_buf_clear(&c);
	assert_int_equal(pg_run_logs_dir(&c, &o, "k"), 0);
	assert_non_null(strstr(c.ptr, "/logs/k/run-4"));
	assert_int_equal(pg_remove_tree(home), 0);
	pg_buf_release(&a);
	pg_buf_release(&b);
	pg_buf_release(&c);
	pg_buf_release(&want);
}

static void test_recover_without_journal(void **state)
{
	char home[] = "/tmp/pg-gate-XXXXXX";
	pg_buf what = PG_BUF_INIT, path = PG_BUF_INIT;

	(void)state;
	assert_non_null(mkdtemp(home));
	/* no run died: nothing to say, nothing done */
	assert_int_equal(pg_gate_recover(home, &what), 0);
	assert_int_equal(what.len, 0);
	/* a journal that does not parse is removed, and said so */
	assert_int_equal(pg_buf_printf(&path, "%s/work", home), 0);
	assert_int_equal(pg_mkdir_p(path.ptr), 0);
	assert_int_equal(pg_buf_puts(&path, "/run.journal"), 0);
	assert_int_equal(pg_write_file_atomic(path.ptr, "garbage", 7), 0);
	assert_int_equal(pg_gate_recover(home, &what), 0);
	assert_non_null(strstr(what.ptr, "a run journal that does not parse"));
	assert_int_equal(access(path.ptr, F_OK), -1);
	/* one naming a tree that is gone: nothing to clean there, the journal goes */
	pg_buf_clear(&what);
	assert_int_equal(pg_write_file_atomic(path.ptr, "pullgate-run 1\0tree\0/nonexistent/tree\0"
					      "key\0k\0tag\0refs/tags/t\0", 60), 0);
	assert_int_equal(pg_gate_recover(home, &what), 0);
	assert_string_equal(what.ptr, "a run of 'refs/tags/t' died; its tree '/nonexistent/tree' is gone");
	assert_int_equal(access(path.ptr, F_OK), -1);
	assert_int_equal(pg_remove_tree(home), 0);
	pg_buf_release(&path);
	pg_buf_release(&what);
}

/* A run of the pull tag as the runner has it when it takes a build worktree. */
static void run_for(pg_run *g, pg_report **r, const pg_gate_opts *o, const char *tag)
{
	memset(g, 0, sizeof(*g));
	g->o = o;
	g->lock_fd = g->pull_lock_fd = -1;
	pg_buf_init(&g->key, 0);
	pg_buf_init(&g->worktree, 0);
	pg_buf_init(&g->build_dir, 0);
	assert_int_equal(pg_report_new(r), 0);
	assert_non_null((*r)->tag = strdup(tag));
	g->report = *r;
	assert_int_equal(pg_gate_pull_key(&g->key, tag), 0);
}

static void run_done(pg_run *g, pg_report *r)
{
	if (g->lock_fd >= 0)
		close(g->lock_fd);
	if (g->pull_lock_fd >= 0)
		close(g->pull_lock_fd);
	pg_buf_release(&g->key);
	pg_buf_release(&g->worktree);
	pg_buf_release(&g->build_dir);
	pg_buf_release(&g->tree_path);
	pg_report_free(r);
}

/* path is home/rel */
static void assert_under(const char *path, const char *home, const char *rel)
{
	size_t n = strlen(home);

	assert_true(!strncmp(path, home, n) && path[n] == '/');
	assert_string_equal(path + n + 1, rel);
}

static void test_build_worktrees(void **state)
{
	char home[] = "/tmp/pg-gate-XXXXXX", name[PG_SLOT_NAME_MAX], other[PG_SLOT_NAME_MAX];
	volatile sig_atomic_t cancel = 0;
	pg_gate_opts o = PG_GATE_OPTS_INIT;
	pg_buf root = PG_BUF_INIT, want = PG_BUF_INIT;
	pg_report *ra = NULL, *rb = NULL, *rc = NULL;
	pg_run a, b, c;

	(void)state;
	assert_non_null(mkdtemp(home));
	/* the first keeps home's paths; the others live under home/slots/<k>, laid out alike */
	assert_int_equal(pg_slot_root(&root, home, 1), 0);
	assert_string_equal(root.ptr, home);
	pg_buf_clear(&root);
	assert_int_equal(pg_slot_root(&root, home, 2), 0);
	assert_int_equal(pg_buf_printf(&want, "%s/slots/2", home), 0);
	assert_string_equal(root.ptr, want.ptr);
	assert_int_equal(pg_slot_root(&root, home, 0), PG_EINVALID);
	assert_int_equal(pg_slot_root(&root, home, PG_GATE_MAX_WORKTREES + 1), PG_EINVALID);
	pg_buf_clear(&want);
	assert_int_equal(pg_buf_printf(&want, "%s/linux", home), 0);
	assert_int_equal(pg_slot_worktree_name(name, home, want.ptr, 1), 0);
	assert_string_equal(name, "build");
	assert_int_equal(pg_slot_worktree_name(name, home, want.ptr, 16), 0);
	assert_string_equal(name, "build-16");
	/* a tree from elsewhere (--tree), which other homes may share: the home's own names */
	assert_int_equal(pg_slot_worktree_name(name, home, "/srv/linux", 1), 0);
	assert_int_equal(strlen(name), strlen("build-h") + 8);
	assert_memory_equal(name, "build-h", 7);
	assert_int_equal(pg_slot_worktree_name(other, "/another/home", "/srv/linux", 1), 0);
	assert_string_not_equal(name, other);
	assert_int_equal(pg_slot_worktree_name(name, home, "/srv/linux", 16), 0);
	assert_memory_equal(name, "build-16-h", 10);
	assert_int_equal(pg_buf_printf(&want, "2"), 0); /* home/linux2 is no home's own tree */
	assert_int_equal(pg_slot_worktree_name(name, home, want.ptr, 1), 0);
	assert_string_not_equal(name, "build");
	pg_buf_clear(&want);

	/* two runs of two pulls with two build worktrees: one each */
	o.home = home;
	o.settings.build_worktrees = 2;
	o.cancel = &cancel;
	run_for(&a, &ra, &o, "refs/tags/one");
	run_for(&b, &rb, &o, "refs/tags/two");
	assert_int_equal(pg_run_take_slot(&a), 0);
	assert_int_equal(a.slot, 1);
	assert_string_equal(a.wt_name, "build");
	assert_under(a.worktree.ptr, home, "work/build");
	assert_under(a.build_dir.ptr, home, "build/arm64-gcc");
	assert_int_equal(pg_run_take_slot(&b), 0);
	assert_int_equal(b.slot, 2);
	assert_string_equal(b.wt_name, "build-2");
	assert_under(b.worktree.ptr, home, "slots/2/work/build");
	assert_under(b.build_dir.ptr, home, "slots/2/build/arm64-gcc");

	/* a third waits for one to free, until it is cancelled */
	cancel = 1;
	run_for(&c, &rc, &o, "refs/tags/three");
	assert_int_equal(pg_run_take_slot(&c), PG_ECANCELLED);
	assert_non_null(strstr(pg_error_last(), "waiting for a free build worktree"));
	run_done(&c, rc);
	/* a second run of a running pull waits for it, whatever worktree is free */
	run_done(&b, rb);
	run_for(&c, &rc, &o, "refs/tags/one");
	assert_int_equal(pg_run_take_slot(&c), PG_ECANCELLED);
	assert_non_null(strstr(pg_error_last(), "another run of the pull"));
	run_done(&c, rc);
	/* and a run of another pull takes the worktree that freed */
	cancel = 0;
	run_for(&c, &rc, &o, "refs/tags/three");
	assert_int_equal(pg_run_take_slot(&c), 0);
	assert_int_equal(c.slot, 2);
	run_done(&c, rc);
	run_done(&a, ra);
	/* more than there can be is refused */
	o.settings.build_worktrees = PG_GATE_MAX_WORKTREES + 1;
	run_for(&c, &rc, &o, "refs/tags/three");
	assert_int_equal(pg_run_take_slot(&c), PG_EINVALID);
	run_done(&c, rc);

	assert_int_equal(pg_remove_tree(home), 0);
	pg_buf_release(&root);
	pg_buf_release(&want);
}

static void test_recover_every_build_worktree(void **state)
{
	char home[] = "/tmp/pg-gate-XXXXXX";
	pg_buf what = PG_BUF_INIT, path = PG_BUF_INIT, lock = PG_BUF_INIT;
	int fd = -1;

	(void)state;
	assert_non_null(mkdtemp(home));
	/* a dead run's journal in the second build worktree is found and said so */
	assert_int_equal(pg_buf_printf(&path, "%s/slots/2/work", home), 0);
	assert_int_equal(pg_mkdir_p(path.ptr), 0);
	assert_int_equal(pg_buf_puts(&path, "/run.journal"), 0);
	assert_int_equal(pg_write_file_atomic(path.ptr, "pullgate-run 1\0tree\0/nonexistent/tree\0"
					      "key\0k\0tag\0refs/tags/t\0", 60), 0);
	/* not while a live run holds that worktree */
	assert_int_equal(pg_buf_printf(&lock, "%s/slots/2/.kernel.lock", home), 0);
	assert_int_equal(pg_lock_file(&fd, lock.ptr, false), 0);
	assert_int_equal(pg_gate_recover(home, &what), 0);
	assert_int_equal(what.len, 0);
	assert_int_equal(access(path.ptr, F_OK), 0);
	close(fd);
	assert_int_equal(pg_gate_recover(home, &what), 0);
	assert_string_equal(what.ptr, "a run of 'refs/tags/t' died in build worktree 2; its tree "
			    "'/nonexistent/tree' is gone");
	assert_int_equal(access(path.ptr, F_OK), -1);
	/* a journal naming a key that is no file name is not followed */
	pg_buf_clear(&what);
	assert_int_equal(pg_write_file_atomic(path.ptr, "pullgate-run 1\0tree\0/nonexistent/tree\0"
					      "key\0../k\0tag\0refs/tags/t\0", 63), 0);
	assert_int_equal(pg_gate_recover(home, &what), 0);
	assert_non_null(strstr(what.ptr, "a run journal that does not parse"));
	assert_int_equal(pg_remove_tree(home), 0);
	pg_buf_release(&what);
	pg_buf_release(&path);
	pg_buf_release(&lock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_tags_keep_their_name),
		cmocka_unit_test(test_changed_names_do_not_collide),
		cmocka_unit_test(test_stage_sets),
		cmocka_unit_test(test_the_tag_a_push_record_named),
		cmocka_unit_test(test_run_dirs_are_fresh),
		cmocka_unit_test(test_recover_without_journal),
		cmocka_unit_test(test_build_worktrees),
		cmocka_unit_test(test_recover_every_build_worktree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
