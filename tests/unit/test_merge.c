/* test_merge.c - unit tests for repo/merge.c: a merge's conflicts, each with its conflict regions counted, and a resolution made by hand. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "common/fs.h"
#include "repo/repo.h"
#include "tests/unit/run.h"

typedef struct fixture {
	char dir[64];
	pg_repo *r;
	pg_oid base, ours, theirs;
} fixture;

/*
 * A base and two branches on it, ours and theirs, which change, in each
 * file:
 *	same.c    line 3, each its own way: one region
 *	two.c     lines 2 and 8, each its own way: two regions
 *	gone.c    ours changes a line, theirs deletes the file: not textual
 *	bin.dat   both change a binary file: not textual
 *	tricky.c  line 3 each its own way, under a line of the file that looks
 *	          like a marker: one region, the file's line not counted
 *	clean.c   ours alone: merged
 *	"evil\n<<<<<<< x"  line 3 each its own way, in a file whose name holds
 *	          a marker: one region, the name not counted
 */
static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	const char *g = "git -c user.name=t -c user.email=t@example.org";

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/pg-test-merge-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	free(run_sh("cd %s && git init -q -b main . && f=\"$(printf 'evil\\n<<<<<<< x')\" && "
		    "seq 1 10 >\"$f\" && "
		    "seq 1 10 >same.c && seq 1 10 >two.c && seq 1 10 >gone.c && seq 1 10 >clean.c && "
		    "printf 'a\\000b\\n' >bin.dat && "
		    "printf '<<<<<<< a line of the file\\n1\\n2\\n3\\n4\\n' >tricky.c && "
		    "git add . && %s commit -q -m base && git branch base && "
		    "git checkout -q -b ours && sed -i 3s/.*/ours/ same.c && "
		    "sed -i -e 2s/.*/ours-2/ -e 8s/.*/ours-8/ two.c && sed -i 5s/.*/ours/ gone.c && "
		    "sed -i 5s/.*/ours/ clean.c && printf 'a\\000ours\\n' >bin.dat && "
		    "sed -i 3s/.*/ours/ tricky.c && sed -i 3s/.*/ours/ \"$f\" && "
		    "%s commit -q -a -m ours && "
		    "git checkout -q -b theirs base && sed -i 3s/.*/theirs/ same.c && "
		    "sed -i -e 2s/.*/theirs-2/ -e 8s/.*/theirs-8/ two.c && git rm -q gone.c && "
		    "printf 'a\\000theirs\\n' >bin.dat && sed -i 3s/.*/theirs/ tricky.c && "
		    "sed -i 3s/.*/theirs/ \"$f\" && "
		    "%s commit -q -a -m theirs", f->dir, g, g, g));
	run_rev(&f->base, f->dir, "base");
	run_rev(&f->ours, f->dir, "ours");
	run_rev(&f->theirs, f->dir, "theirs");
	assert_int_equal(pg_repo_open(&f->r, f->dir), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	pg_repo_free(f->r);
	assert_int_equal(pg_remove_tree(f->dir), 0);
	free(f);
	return 0;
}

static const pg_conflict *find(const pg_conflict_list *l, const char *path)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->items[i].path, path))
			return &l->items[i];
	fail_msg("no conflict on '%s'", path);
	return NULL;
}

static void test_each_conflict_with_its_regions(void **state)
{
	fixture *f = *state;
	pg_conflict_list l;

	pg_conflict_list_init(&l);
	assert_int_equal(pg_repo_merge_conflicts(&l, f->r, &f->ours, &f->theirs, 100), 0);
	assert_int_equal(l.n, 6);
	assert_int_equal(find(&l, "evil\n<<<<<<< x")->hunks, 1);
	assert_int_equal(l.more, 0);
	assert_int_equal(find(&l, "same.c")->hunks, 1);
	assert_int_equal(find(&l, "two.c")->hunks, 2);
	assert_int_equal(find(&l, "gone.c")->hunks, 0);
	assert_int_equal(find(&l, "bin.dat")->hunks, 0);
	assert_int_equal(find(&l, "tricky.c")->hunks, 1);
	/* the other way round: theirs deleted, ours modified, still not textual */
	assert_int_equal(pg_repo_merge_conflicts(&l, f->r, &f->theirs, &f->ours, 100), 0);
	assert_int_equal(l.n, 6);
	assert_int_equal(find(&l, "gone.c")->hunks, 0);
	assert_int_equal(find(&l, "two.c")->hunks, 2);
	pg_conflict_list_release(&l);
}

static void test_paths_past_the_max_are_counted_not_listed(void **state)
{
	fixture *f = *state;
	pg_conflict_list l;

	pg_conflict_list_init(&l);
	assert_int_equal(pg_repo_merge_conflicts(&l, f->r, &f->ours, &f->theirs, 2), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.more, 4);
	/* in index order */
	assert_string_equal(l.items[0].path, "bin.dat");
	assert_string_equal(l.items[1].path, "evil\n<<<<<<< x");
	assert_int_equal(pg_repo_merge_conflicts(&l, f->r, &f->ours, &f->theirs, 0), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(l.more, 6);
	pg_conflict_list_release(&l);
}

static void test_a_clean_merge_has_none(void **state)
{
	fixture *f = *state;
	pg_conflict_list l;
	char **paths = NULL;
	size_t n = 0;
	pg_oid tree;

	pg_conflict_list_init(&l);
	assert_int_equal(pg_repo_merge_conflicts(&l, f->r, &f->base, &f->ours, 100), 0);
	assert_int_equal(l.n + l.more, 0);
	/* the conflicts pg_repo_merge_trees names are the same paths */
	assert_int_equal(pg_repo_merge_trees(&tree, &paths, &n, f->r, &f->ours, &f->theirs), 0);
	assert_int_equal(n, 6);
	pg_str_list_free(paths, n);
	pg_conflict_list_release(&l);
}

/* The blob at path in tree, as git names it; "" when there is none. */
static char *blob_at(const fixture *f, const pg_oid *tree, const char *path)
{
	char hex[PG_OID_HEXSZ + 1];

	pg_oid_tohex(hex, tree);
	return run_sh("git -C %s rev-parse -q --verify %s:%s || true", f->dir, hex, path);
}

static void assert_same_blob(const fixture *f, const pg_oid *tree, const char *path,
			     const char *rev)
{
	char *a = blob_at(f, tree, path);
	char *b = run_sh("git -C %s rev-parse -q --verify %s:%s || true", f->dir, rev, path);

	assert_string_equal(a, b);
	free(a);
	free(b);
}

/*
 * The merge of theirs into ours resolved by hand ("resolved": every
 * conflict settled, clean.c changed besides), and two stacks under
 * theirs: ours with same.c changed again ("ours2"), and ours with a file
 * of its own ("ours3").
 */
static void make_resolution(fixture *f, pg_oid *resolved, pg_oid *ours2, pg_oid *ours3)
{
	const char *g = "git -c user.name=t -c user.email=t@example.org";

	free(run_sh("cd %s && f=\"$(printf 'evil\\n<<<<<<< x')\" && "
		    "git checkout -q -b resolved ours && (%s merge -q theirs >/dev/null 2>&1 || true) && "
		    "echo resolved >same.c && seq 1 10 >two.c && git rm -q gone.c && "
		    "printf 'a\\000resolved\\n' >bin.dat && echo resolved >tricky.c && "
		    "echo resolved >\"$f\" && echo besides >>clean.c && git add -A && "
		    "%s commit -q -m resolved && "
		    "git checkout -q -b ours2 ours && sed -i 3s/.*/ours2/ same.c && "
		    "%s commit -q -a -m ours2 && "
		    "git checkout -q -b ours3 ours && echo mine >other.c && git add other.c && "
		    "%s commit -q -m ours3", f->dir, g, g, g, g));
	run_rev(resolved, f->dir, "resolved");
	run_rev(ours2, f->dir, "ours2");
	run_rev(ours3, f->dir, "ours3");
}

static void test_a_resolution_applies_where_it_was_made(void **state)
{
	fixture *f = *state;
	pg_oid resolved, ours2, ours3, tree;
	pg_buf why = PG_BUF_INIT;
	char *gone;

	make_resolution(f, &resolved, &ours2, &ours3);
	/* on the merge it was made on: its versions of the conflicted paths, the merge's of the rest */
	assert_int_equal(pg_repo_merge_resolved(&tree, &why, f->r, &f->ours, &f->theirs, &resolved), 1);
	assert_int_equal(why.len, 0);
	assert_same_blob(f, &tree, "same.c", "resolved");
	assert_same_blob(f, &tree, "two.c", "resolved");
	assert_same_blob(f, &tree, "bin.dat", "resolved");
	assert_same_blob(f, &tree, "tricky.c", "resolved");
	/* its change outside the conflicts is not taken */
	assert_same_blob(f, &tree, "clean.c", "ours");
	gone = blob_at(f, &tree, "gone.c");
	assert_string_equal(gone, "");
	free(gone);

	/* on a stack that differs elsewhere: applies, and the stack's own file stays */
	assert_int_equal(pg_repo_merge_resolved(&tree, &why, f->r, &ours3, &f->theirs, &resolved), 1);
	assert_same_blob(f, &tree, "same.c", "resolved");
	assert_same_blob(f, &tree, "other.c", "ours3");

	/* on a stack where a conflicted file is not what it was made on: does not apply */
	assert_int_equal(pg_repo_merge_resolved(&tree, &why, f->r, &ours2, &f->theirs, &resolved), 0);
	assert_string_equal(why.ptr, "it was made where 'same.c' conflicted otherwise");
	pg_buf_clear(&why);

	/* a commit that is not a merge of theirs */
	assert_int_equal(pg_repo_merge_resolved(&tree, &why, f->r, &f->ours, &f->theirs, &f->ours), 0);
	assert_string_equal(why.ptr, "it is not a merge of the pull as its second parent");
	pg_buf_clear(&why);

	/* a merge that does not conflict needs none */
	assert_int_equal(pg_repo_merge_resolved(&tree, &why, f->r, &f->base, &f->theirs, &resolved), 0);
	assert_string_equal(why.ptr, "the merge does not conflict");
	pg_buf_release(&why);
}

/* A resolution made where a side's mode differed (same blob, executable) does not apply. */
static void test_a_resolution_keys_on_modes(void **state)
{
	fixture *f = *state;
	const char *g = "git -c user.name=t -c user.email=t@example.org";
	pg_oid resolved, exec, tree;
	pg_buf why = PG_BUF_INIT;

	free(run_sh("cd %s && git checkout -q -b exec ours && chmod +x same.c && "
		    "%s commit -q -a -m exec", f->dir, g));
	run_rev(&exec, f->dir, "exec");
	run_rev(&resolved, f->dir, "resolved");
	assert_int_equal(pg_repo_merge_resolved(&tree, &why, f->r, &exec, &f->theirs, &resolved), 0);
	assert_string_equal(why.ptr, "it was made where 'same.c' conflicted otherwise");
	pg_buf_release(&why);
}

/*
 * A directory/file conflict: ours adds the file x, theirs files below
 * x/.  A resolution keeping the file gives a tree with the file and
 * nothing below it; one keeping the directory does not apply.
 */
static void test_a_directory_file_conflict(void **state)
{
	fixture *f = *state;
	const char *g = "git -c user.name=t -c user.email=t@example.org";
	pg_oid file, dir, keep_file, keep_dir, tree;
	pg_buf why = PG_BUF_INIT;
	char *x, *y;

	/* the resolutions written with plumbing: git merge leaves x~HEAD behind in this case */
	free(run_sh("cd %s && git checkout -q -b df-file base && echo file >x && git add x && "
		    "%s commit -q -m file && git checkout -q -b df-dir base && rm -f x && mkdir x && "
		    "echo y >x/y && echo z >x/z && git add x && %s commit -q -m dir && "
		    "export GIT_INDEX_FILE=$PWD/.git/df.index && "
		    "git read-tree df-file && b=$(echo settled | git hash-object -w --stdin) && "
		    "git update-index --cacheinfo 100644,$b,x && "
		    "git branch keep-file $(%s commit-tree -p df-file -p df-dir -m keep-file "
		    "$(git write-tree)) && git read-tree df-dir && git update-index --force-remove x/z && "
		    "git branch keep-dir $(%s commit-tree -p df-file -p df-dir -m keep-dir "
		    "$(git write-tree))", f->dir, g, g, g, g));
	run_rev(&file, f->dir, "df-file");
	run_rev(&dir, f->dir, "df-dir");
	run_rev(&keep_file, f->dir, "keep-file");
	run_rev(&keep_dir, f->dir, "keep-dir");
	assert_int_equal(pg_repo_merge_resolved(&tree, &why, f->r, &file, &dir, &keep_file), 1);
	x = blob_at(f, &tree, "x");
	y = blob_at(f, &tree, "x/y");
	assert_string_not_equal(x, "");
	assert_string_equal(y, "");
	free(x);
	free(y);
	assert_same_blob(f, &tree, "x", "keep-file");
	assert_int_equal(pg_repo_merge_resolved(&tree, &why, f->r, &file, &dir, &keep_dir), 0);
	assert_string_equal(why.ptr, "it holds a tree at 'x', where the merge conflicts on a file");
	pg_buf_release(&why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_conflict_with_its_regions),
		cmocka_unit_test(test_paths_past_the_max_are_counted_not_listed),
		cmocka_unit_test(test_a_clean_merge_has_none),
		cmocka_unit_test(test_a_resolution_applies_where_it_was_made),
		cmocka_unit_test(test_a_resolution_keys_on_modes),
		cmocka_unit_test(test_a_directory_file_conflict),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
