/* test_identity_index.c - the identity index: made, extended, remade when history, the graph or the file changed; shared by a repository's refs; its budget. */
#include "tests/unit/unit.h"

#include "common/array.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/map.h"
#include "repo/repo.h"
#include "tests/unit/run.h"
#include "verifier/identity_index.h"
#include "verifier/identity_internal.h"
#include "verifier/match.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#define UPSTREAM "/srv/up.git:master"

typedef struct fixture {
	char dir[64];
	char repo[128], other[128], home[128];
} fixture;

static void sh(const char *fmt, ...) PG_PRINTF(1, 2);

static void sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	free(run_sh("%s", cmd));
}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/pg-test-index-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->repo, sizeof(f->repo), "%s/up.git", f->dir);
	snprintf(f->other, sizeof(f->other), "%s/other.git", f->dir);
	snprintf(f->home, sizeof(f->home), "%s/home", f->dir);
	sh("tests/unit/make-history.sh %s 200 5 600 && "
	   "git --git-dir=%s commit-graph write --reachable && "
	   "tests/unit/make-history.sh %s 50 9 600", f->repo, f->repo, f->other);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	pg_remove_tree(f->dir);
	free(f);
	return 0;
}

/* Every commit tip reaches is found by its key, with its author date, and nothing else is. */
static void check_complete(pg_repo *r, const char *repo, const char *ref,
			   const pg_identity_index *x)
{
	const char *argv[] = { "git", "--git-dir", repo, "rev-list", ref, NULL };
	char *list = run_must(argv), *line;
	size_t n = 0;

	for (line = list; *line; line += PG_OID_HEXSZ + 1) {
		pg_oid id;
		pg_commit *c = NULL;
		pg_identity_hit hits[8];
		size_t k, nhits;
		bool found = false;

		assert_int_equal(pg_oid_fromhex(&id, line, PG_OID_HEXSZ), 0);
		assert_int_equal(pg_repo_read_commit(&c, r, &id), 0);
		nhits = pg_identity_index_probe(hits, 8, x, pg_identity_hash(c));
		assert_true(nhits >= 1 && nhits <= 8);
		for (k = 0; k < nhits; k++)
			if (!pg_oid_cmp(&hits[k].id, &id)) {
				found = true;
				assert_true(hits[k].author_time == c->author.time);
			}
		assert_true(found);
		pg_commit_free(c);
		n++;
	}
	assert_int_equal(pg_identity_index_count(x), n);
	free(list);
}

static void open_index(pg_identity_index **x, pg_identity_index_info *info, pg_repo *r,
		       const fixture *f, const char *ref)
{
	pg_oid tip;

	assert_int_equal(pg_repo_ref_target(&tip, r, ref), 0);
	assert_int_equal(pg_identity_index_open(x, r, f->home, UPSTREAM, &tip, info), 0);
	assert_memory_equal(pg_identity_index_tip(*x)->id, tip.id, PG_OID_RAWSZ);
}

/* The one index file of the fixture's home, and nothing left beside it. */
static void index_path(char *out, size_t len, const fixture *f)
{
	char dir[256];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/identity", f->home);
	assert_non_null(d = opendir(dir));
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(out, len, "%s/%s", dir, e->d_name);
			n++;
		}
	closedir(d);
	assert_int_equal(n, 1);
}

static void test_build_probe_reopen(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	pg_identity_hit hit;
	char path[512];

	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	open_index(&x, &info, r, f, "refs/heads/main");
	assert_int_equal(info.action, PG_IDENTITY_INDEX_BUILT);
	assert_string_equal(info.why, "new");
	assert_true(info.added > 100);
	check_complete(r, f->repo, "main", x);
	/* a key nobody has */
	assert_int_equal(pg_identity_index_probe(&hit, 1, x, 42), 0);
	pg_identity_index_free(x);
	index_path(path, sizeof(path), f);
	/* made as any file of the home is (0644): only the runs' files are private */
	{
		struct stat st;
		mode_t mask = umask(022);

		umask(mask);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0644 & ~mask);
	}

	/* the same tip: mapped, nothing read */
	open_index(&x, &info, r, f, "refs/heads/main");
	assert_int_equal(info.action, PG_IDENTITY_INDEX_CURRENT);
	assert_int_equal(info.added, 0);
	check_complete(r, f->repo, "main", x);
	pg_identity_index_free(x);
	pg_repo_free(r);
}

static void test_extend_from_the_last_tip(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	size_t before;

	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	open_index(&x, &info, r, f, "refs/heads/main");
	before = pg_identity_index_count(x);
	pg_identity_index_free(x);
	/* upstream moves on: a topic merged in and two more commits */
	sh("cd %s && git merge-base --is-ancestor t1 main || true; "
	   "m=$(git commit-tree -p main -p t1 -m 'Merge t1' main^{tree}) && "
	   "a=$(git commit-tree -p $m -m 'one more' main^{tree}) && "
	   "b=$(GIT_AUTHOR_DATE='2001-01-01 00:00 +0000' git commit-tree -p $a -m 'old author' "
	   "main^{tree}) && git update-ref refs/heads/main $b", f->repo);
	pg_repo_free(r);
	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	open_index(&x, &info, r, f, "refs/heads/main");
	assert_int_equal(info.action, PG_IDENTITY_INDEX_EXTENDED);
	assert_null(info.why);
	assert_true(info.added >= 3);
	assert_int_equal(pg_identity_index_count(x), before + info.added);
	check_complete(r, f->repo, "main", x);
	pg_identity_index_free(x);
	pg_repo_free(r);
}

static void test_rewritten_history_is_indexed_again(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL, *o = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	char path[512];

	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	open_index(&x, &info, r, f, "refs/heads/main");
	pg_identity_index_free(x);
	/* main rewound and rebuilt: the last tip indexed is no longer below it */
	sh("cd %s && c=$(git commit-tree -p main~5 -m 'rewritten' main^{tree}) && "
	   "git update-ref refs/heads/main $c", f->repo);
	pg_repo_free(r);
	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	open_index(&x, &info, r, f, "refs/heads/main");
	assert_int_equal(info.action, PG_IDENTITY_INDEX_BUILT);
	assert_string_equal(info.why, "rewritten");
	check_complete(r, f->repo, "main", x);
	pg_identity_index_free(x);

	/* another repository, where the last tip does not even exist */
	assert_int_equal(pg_repo_open(&o, f->other), 0);
	open_index(&x, &info, o, f, "refs/heads/main");
	assert_int_equal(info.action, PG_IDENTITY_INDEX_BUILT);
	assert_string_equal(info.why, "rewritten");
	check_complete(o, f->other, "main", x);
	pg_identity_index_free(x);
	/* written atomically: one file, no temporary left */
	index_path(path, sizeof(path), f);
	pg_repo_free(o);
	pg_repo_free(r);
}

/* The index (subjects: the subject index) of repo's ref at rev (a revision of repo), for ref, in home. */
static void open_ref_kind(pg_identity_index **x, pg_identity_index_info *info, pg_repo *r,
			  const char *repo, const char *home, const char *ref, const char *rev,
			  bool subjects)
{
	const char *argv[] = { "git", "--git-dir", repo, "rev-parse", rev, NULL };
	pg_identity_index_opts opts = { 0 };
	char *hex = run_must(argv);
	pg_oid tip;

	assert_int_equal(pg_oid_fromhex(&tip, hex, PG_OID_HEXSZ), 0);
	free(hex);
	opts.ref = ref;
	opts.subjects = subjects;
	assert_int_equal(pg_identity_index_open_opts(x, r, home, UPSTREAM, &tip, &opts, info), 0);
}

static void open_ref(pg_identity_index **x, pg_identity_index_info *info, pg_repo *r,
		     const char *repo, const char *home, const char *ref, const char *rev)
{
	open_ref_kind(x, info, r, repo, home, ref, rev, false);
}

/* Whether a probe for the commit at rev answers it. */
static bool answers(pg_repo *r, const char *repo, const pg_identity_index *x, const char *rev)
{
	const char *argv[] = { "git", "--git-dir", repo, "rev-parse", rev, NULL };
	char *hex = run_must(argv);
	pg_identity_hit hits[8];
	pg_commit *c = NULL;
	pg_oid id;
	size_t n, i;
	bool found = false;

	assert_int_equal(pg_oid_fromhex(&id, hex, PG_OID_HEXSZ), 0);
	free(hex);
	assert_int_equal(pg_repo_read_commit(&c, r, &id), 0);
	n = pg_identity_index_probe(hits, 8, x, pg_identity_hash(c));
	for (i = 0; i < n && i < 8; i++)
		found |= !pg_oid_cmp(&hits[i].id, &id);
	pg_commit_free(c);
	return found;
}

/* git rev-list --count rev [also] */
static size_t rev_count(const char *repo, const char *rev, const char *also)
{
	const char *argv[] = { "git", "--git-dir", repo, "rev-list", "--count", rev, also, NULL };
	char *out = run_must(argv);
	size_t n = strtoul(out, NULL, 10);

	free(out);
	return n;
}

/*
 * Two refs of one repository share its one index: the second reads only
 * the commits the first's tip does not reach, a ref below another reads
 * none, and each is answered from its own history alone: a commit only the
 * other ref reaches is never a hit, nor counted.
 */
static void test_refs_share_one_index(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	char repo[160], home[160], first[512];

	snprintf(repo, sizeof(repo), "%s/refs.git", f->dir);
	snprintf(home, sizeof(home), "%s/home-refs", f->dir);
	/* fixes: two commits of its own on main~10 */
	sh("rm -rf %s && git clone -q --bare %s %s && cd %s && "
	   "a=$(git commit-tree -p main~10 -m 'fixes: one' main~10^{tree}) && "
	   "b=$(git commit-tree -p $a -m 'fixes: two' main~10^{tree}) && "
	   "git update-ref refs/heads/fixes $b && git commit-graph write --reachable",
	   repo, f->repo, repo, repo);
	assert_int_equal(pg_repo_open(&r, repo), 0);

	open_ref(&x, &info, r, repo, home, "main", "main");
	assert_int_equal(info.action, PG_IDENTITY_INDEX_BUILT);
	assert_int_equal(info.added, rev_count(repo, "main", NULL));
	snprintf(first, sizeof(first), "%s", pg_identity_index_path(x));
	pg_identity_index_free(x);

	/* the second ref: its own two commits read, in the same file */
	open_ref(&x, &info, r, repo, home, "fixes", "fixes");
	assert_int_equal(info.action, PG_IDENTITY_INDEX_EXTENDED);
	assert_int_equal(info.added, 2);
	assert_string_equal(pg_identity_index_path(x), first);
	assert_int_equal(pg_identity_index_ntips(x), 2);
	assert_int_equal(pg_identity_index_total(x), rev_count(repo, "main", NULL) + 2);
	check_complete(r, repo, "fixes", x);
	assert_false(answers(r, repo, x, "main"));
	assert_int_equal(info.others, rev_count(repo, "main", "^fixes"));
	pg_identity_index_free(x);

	/* main again: nothing read, fixes' own commits never answered */
	open_ref(&x, &info, r, repo, home, "main", "main");
	assert_int_equal(info.action, PG_IDENTITY_INDEX_CURRENT);
	assert_int_equal(info.added, 0);
	assert_int_equal(info.others, 2);
	check_complete(r, repo, "main", x);
	assert_false(answers(r, repo, x, "fixes"));
	assert_true(answers(r, repo, x, "main~10"));
	pg_identity_index_free(x);

	/* a ref below main (a release branch): held already, no tip of its own, nothing read */
	open_ref(&x, &info, r, repo, home, "v1", "main~20");
	assert_int_equal(info.action, PG_IDENTITY_INDEX_CURRENT);
	assert_int_equal(info.added, 0);
	assert_int_equal(pg_identity_index_ntips(x), 2);
	check_complete(r, repo, "main~20", x);
	assert_false(answers(r, repo, x, "main~19"));
	pg_identity_index_free(x);

	/* fixes merged into main: one commit read, and fixes' tip, now below main's, let go */
	sh("cd %s && m=$(git commit-tree -p main -p fixes -m 'Merge fixes' main^{tree}) && "
	   "git update-ref refs/heads/main $m", repo);
	pg_repo_free(r);
	assert_int_equal(pg_repo_open(&r, repo), 0);
	open_ref(&x, &info, r, repo, home, "main", "main");
	assert_int_equal(info.action, PG_IDENTITY_INDEX_EXTENDED);
	assert_int_equal(info.added, 1);
	assert_int_equal(info.others, 0);
	assert_int_equal(pg_identity_index_ntips(x), 1);
	check_complete(r, repo, "main", x);
	pg_identity_index_free(x);

	/* fixes at the same tip: below main now, nothing read, main's merge not its */
	open_ref(&x, &info, r, repo, home, "fixes", "fixes");
	assert_int_equal(info.action, PG_IDENTITY_INDEX_CURRENT);
	check_complete(r, repo, "fixes", x);
	assert_false(answers(r, repo, x, "main"));
	pg_identity_index_free(x);
	pg_repo_free(r);
}

/*
 * A ref rewritten makes the index again from every tip: the other refs'
 * commits stay, what only the old tip reached goes.
 */
static void test_rewritten_ref_keeps_the_others(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	char repo[160], home[160];

	snprintf(repo, sizeof(repo), "%s/rewrite.git", f->dir);
	snprintf(home, sizeof(home), "%s/home-rewrite", f->dir);
	sh("rm -rf %s && git clone -q --bare %s %s && cd %s && "
	   "a=$(git commit-tree -p main~10 -m 'next: one' main~10^{tree}) && "
	   "git update-ref refs/heads/next $a", repo, f->repo, repo, repo);
	assert_int_equal(pg_repo_open(&r, repo), 0);
	open_ref(&x, &info, r, repo, home, "main", "main");
	pg_identity_index_free(x);
	open_ref(&x, &info, r, repo, home, "next", "next");
	assert_int_equal(info.added, 1);
	pg_identity_index_free(x);
	/* next rebased: its old commit is nobody's */
	sh("cd %s && old=$(git rev-parse next) && echo $old >old && "
	   "a=$(git commit-tree -p main~5 -m 'next: one again' main~5^{tree}) && "
	   "git update-ref refs/heads/next $a", repo);
	open_ref(&x, &info, r, repo, home, "next", "next");
	assert_int_equal(info.action, PG_IDENTITY_INDEX_BUILT);
	assert_string_equal(info.why, "rewritten");
	assert_int_equal(pg_identity_index_total(x), rev_count(repo, "main", "next"));
	check_complete(r, repo, "next", x);
	pg_identity_index_free(x);
	open_ref(&x, &info, r, repo, home, "main", "main");
	assert_int_equal(info.action, PG_IDENTITY_INDEX_CURRENT);
	check_complete(r, repo, "main", x);
	pg_identity_index_free(x);
	pg_repo_free(r);
}

/* Change the index file ($f) with a shell command in the repository, reopen, expect a rebuild. */
static void expect_rebuilt(const fixture *f, pg_repo **r, const char *change, const char *why)
{
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	char path[512];

	index_path(path, sizeof(path), f);
	sh("f=%s; cd %s && %s", path, f->repo, change);
	/* the repository may have moved on: open it again */
	pg_repo_free(*r);
	assert_int_equal(pg_repo_open(r, f->repo), 0);
	open_index(&x, &info, *r, f, "refs/heads/main");
	assert_int_equal(info.action, PG_IDENTITY_INDEX_BUILT);
	if (strcmp(info.why, why))
		fail_msg("after '%s': rebuilt as '%s', not '%s'", change, info.why, why);
	check_complete(*r, f->repo, "main", x);
	pg_identity_index_free(x);
}

/*
 * A shell command that inverts LEN bytes of $f at OFFSET: damage that
 * changes them whatever they were (writing a fixed byte over a tip id made
 * this run is no damage when the id has that byte there already).
 */
#define FLIP(offset, len) \
	"perl -e 'open(F, \"+<\", $ARGV[0]) or die; seek(F, $ARGV[1], 0); " \
	"read(F, $b, $ARGV[2]) == $ARGV[2] or die; seek(F, $ARGV[1], 0); " \
	"print F ($b ^ (\"\\377\" x $ARGV[2]))' $f " #offset " " #len

static void test_damaged_file_is_made_again(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;

	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	open_index(&x, &info, r, f, "refs/heads/main");
	pg_identity_index_free(x);
	expect_rebuilt(f, &r, "head -c 100 $f >$f.cut && mv $f.cut $f", "damaged");
	expect_rebuilt(f, &r, "truncate -s -1 $f", "damaged");
	expect_rebuilt(f, &r, "printf garbage >$f", "damaged");
	expect_rebuilt(f, &r, ": >$f", "damaged");
	/* a byte of the tip in the header: the header's checksum no longer matches */
	expect_rebuilt(f, &r, FLIP(40, 1), "damaged");
	/* another key version */
	expect_rebuilt(f, &r, "printf '\\377' | dd of=$f bs=1 seek=12 conv=notrunc 2>/dev/null",
		       "key");
	/* an index of key 1, made before quoted ids were one marker of the key */
	expect_rebuilt(f, &r, "printf '\\001' | dd of=$f bs=1 seek=12 conv=notrunc 2>/dev/null",
		       "key");
	/* a damaged entry is found when the index is next extended */
	expect_rebuilt(f, &r, FLIP(200, 4) " && "
		       "c=$(git commit-tree -p main -m more main^{tree}) && "
		       "git update-ref refs/heads/main $c", "damaged");
	pg_repo_free(r);
}

/*
 * The date fallback's index: every commit is found by its author and
 * subject, and so is a copy whose author date alone was changed, which
 * the identity index does not find.  It is a file of its own.
 */
static void test_subjects_find_a_new_date(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL, *ids = NULL;
	pg_identity_index_info info;
	pg_identity_hit hits[8];
	pg_commit *c = NULL, *redated = NULL;
	pg_oid tip, copy;
	char home[160], *hex;
	size_t n, k;
	bool found = false;

	snprintf(home, sizeof(home), "%s/home-subjects", f->dir);
	hex = run_sh("cd %s && git cat-file commit main | "
		     "sed '1,/^$/s/^\\(author .*>\\) [0-9]* /\\1 1000000000 /' | "
		     "git hash-object -t commit -w --stdin | tr -d '\\n'", f->repo);
	assert_int_equal(pg_oid_fromhex(&copy, hex, strlen(hex)), 0);
	free(hex);
	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	assert_int_equal(pg_repo_ref_target(&tip, r, "refs/heads/main"), 0);
	assert_int_equal(pg_repo_read_commit(&c, r, &tip), 0);
	assert_int_equal(pg_repo_read_commit(&redated, r, &copy), 0);
	assert_true(redated->author.time == 1000000000 && c->author.time != 1000000000);

	assert_int_equal(pg_identity_index_open_subjects(&x, r, home, UPSTREAM, &tip, &info), 0);
	assert_int_equal(info.action, PG_IDENTITY_INDEX_BUILT);
	assert_int_equal(pg_identity_index_count(x), info.added);
	assert_non_null(strstr(pg_identity_index_path(x), ".subj"));
	n = pg_identity_index_probe(hits, 8, x, pg_author_subject_hash(redated));
	for (k = 0; k < n && k < 8; k++)
		found |= !pg_oid_cmp(&hits[k].id, &tip) && hits[k].author_time == c->author.time;
	assert_true(found);

	/* beside the identity index, which does not know the copy */
	assert_int_equal(pg_identity_index_open(&ids, r, home, UPSTREAM, &tip, &info), 0);
	assert_int_equal(info.action, PG_IDENTITY_INDEX_BUILT);
	assert_string_not_equal(pg_identity_index_path(ids), pg_identity_index_path(x));
	n = pg_identity_index_probe(hits, 8, ids, pg_identity_hash(redated));
	for (k = 0; k < n && k < 8; k++)
		assert_true(pg_oid_cmp(&hits[k].id, &tip) != 0);
	pg_identity_index_free(ids);
	pg_identity_index_free(x);

	/* reopened at the same tip: mapped, nothing read */
	assert_int_equal(pg_identity_index_open_subjects(&x, r, home, UPSTREAM, &tip, &info), 0);
	assert_int_equal(info.action, PG_IDENTITY_INDEX_CURRENT);
	pg_identity_index_free(x);
	pg_commit_free(c);
	pg_commit_free(redated);
	pg_repo_free(r);
}

/* Both kinds made from one reading of the commits are the files each makes alone. */
static void test_one_reading_for_both_kinds(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT;
	pg_oid tip;
	char home[2][160], path[2][2][512];
	int h, k;

	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	assert_int_equal(pg_repo_ref_target(&tip, r, "refs/heads/main"), 0);
	for (h = 0; h < 2; h++) {
		snprintf(home[h], sizeof(home[h]), "%s/home-%s", f->dir, h ? "alone" : "both");
		pg_identity_index_drop_spare();
		for (k = 0; k < 2; k++) {
			/* alone: what one kind's reading kept for the other is dropped */
			if (h)
				pg_identity_index_drop_spare();
			assert_int_equal(k ? pg_identity_index_open_subjects(&x, r, home[h], UPSTREAM,
									     &tip, &info) :
					 pg_identity_index_open(&x, r, home[h], UPSTREAM, &tip, &info), 0);
			assert_int_equal(info.action, PG_IDENTITY_INDEX_BUILT);
			snprintf(path[h][k], sizeof(path[h][k]), "%s", pg_identity_index_path(x));
			pg_identity_index_free(x);
		}
	}
	pg_identity_index_drop_spare();
	for (k = 0; k < 2; k++) {
		pg_buf_clear(&a);
		pg_buf_clear(&b);
		assert_int_equal(pg_buf_read_file(&a, path[0][k]), 0);
		assert_int_equal(pg_buf_read_file(&b, path[1][k]), 0);
		assert_true(a.len > 104);
		assert_int_equal(a.len, b.len);
		assert_memory_equal(a.ptr, b.ptr, a.len);
	}
	pg_buf_release(&a);
	pg_buf_release(&b);
	pg_repo_free(r);
}

/*
 * A working memory of a few entries sorts them in many runs, written to
 * files and merged, and the commits inflated ahead by other threads: the
 * index files are the bytes an index sorted in memory and read on one
 * thread has, made and extended, both kinds, and no run file is left.
 */
static void test_small_work_mem_gives_the_same_files(void **state)
{
	/* read ahead in batches of 8 by 3 threads, whatever the count of commits */
	static const pg_read_ahead alone = { SIZE_MAX, 0, 0, 0 }, ahead = { 1, 3, 8, 0 };
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info, first;
	pg_identity_index_opts opts = { 0 };
	pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT;
	pg_oid tip[2];
	char home[2][160], path[2][512], *hex;
	struct dirent *de;
	DIR *d;
	int h, k, t;

	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	/* made at main~40, then extended to main */
	hex = run_sh("git --git-dir=%s rev-parse main~40", f->repo);
	assert_int_equal(pg_oid_fromhex(&tip[0], hex, PG_OID_HEXSZ), 0);
	free(hex);
	assert_int_equal(pg_repo_ref_target(&tip[1], r, "refs/heads/main"), 0);
	opts.ref = "small";
	for (k = 0; k < 2; k++) {
		opts.subjects = k == 1;
		for (t = 0; t < 2; t++) {
			for (h = 0; h < 2; h++) {
				snprintf(home[h], sizeof(home[h]), "%s/home-work-%d", f->dir, h);
				/*
				 * 0: the default (in memory), read on one thread; 1: runs
				 * of 16 entries, the commits inflated ahead by others
				 */
				opts.work_mem = h ? 1 : 0;
				pg_repo_set_read_ahead(r, h ? &ahead : &alone);
				pg_identity_index_drop_spare();
				assert_int_equal(pg_identity_index_open_opts(&x, r, home[h], UPSTREAM,
									     &tip[t], &opts, &info),
						 0);
				assert_int_equal(info.action, t ? PG_IDENTITY_INDEX_EXTENDED :
							      PG_IDENTITY_INDEX_BUILT);
				/* the commits it read came from the threads, or from this one */
				if (h)
					assert_true(pg_repo_read_ahead_batches(r) > 0);
				else
					assert_int_equal(pg_repo_read_ahead_batches(r), 0);
				if (h) {
					assert_true(info.runs > 2);
					assert_int_equal(info.added, first.added);
				} else {
					assert_int_equal(info.runs, 0);
					first = info;
				}
				/* a first index reads its commits in shares of 16, or at once */
				if (!t)
					assert_true(h ? info.shares >= info.added / 16 && info.shares > 1 :
							info.shares == 1);
				else
					assert_int_equal(info.shares, 0);
				assert_true(info.added > 30);
				snprintf(path[h], sizeof(path[h]), "%s", pg_identity_index_path(x));
				if (h && !k)
					check_complete(r, f->repo, t ? "main" : "main~40", x);
				pg_identity_index_free(x);
			}
			pg_buf_clear(&a);
			pg_buf_clear(&b);
			assert_int_equal(pg_buf_read_file(&a, path[0]), 0);
			assert_int_equal(pg_buf_read_file(&b, path[1]), 0);
			assert_true(a.len > 104);
			assert_int_equal(a.len, b.len);
			assert_memory_equal(a.ptr, b.ptr, a.len);
		}
	}
	pg_identity_index_drop_spare();
	/* the runs' files were unlinked as they were made; nothing of a write is left */
	snprintf(path[0], sizeof(path[0]), "%s/identity", home[1]);
	assert_non_null(d = opendir(path[0]));
	while ((de = readdir(d)))
		assert_null(strstr(de->d_name, ".tmp."));
	closedir(d);
	pg_buf_release(&a);
	pg_buf_release(&b);
	pg_repo_free(r);
}

/* The offset of the first entry: the header (104 bytes) and the upstream's name. */
#define ENTRIES_AT (104 + sizeof(UPSTREAM) - 1)
#define ENTRY_LEN 36

static void open_in(pg_identity_index **x, pg_identity_index_info *info, pg_repo *r,
		    const char *home, const pg_identity_index_opts *opts)
{
	pg_oid tip;

	assert_int_equal(pg_repo_ref_target(&tip, r, "refs/heads/main"), 0);
	assert_int_equal(pg_identity_index_open_opts(x, r, home, UPSTREAM, &tip, opts, info), 0);
}

/* How many commits of main the index does not find by their key. */
static size_t misses(pg_repo *r, const char *repo, const pg_identity_index *x)
{
	const char *argv[] = { "git", "--git-dir", repo, "rev-list", "main", NULL };
	char *list = run_must(argv), *line;
	size_t missed = 0;

	for (line = list; *line; line += PG_OID_HEXSZ + 1) {
		pg_oid id;
		pg_commit *c = NULL;
		pg_identity_hit hits[8];
		size_t k, n;
		bool found = false;

		assert_int_equal(pg_oid_fromhex(&id, line, PG_OID_HEXSZ), 0);
		assert_int_equal(pg_repo_read_commit(&c, r, &id), 0);
		n = pg_identity_index_probe(hits, 8, x, pg_identity_hash(c));
		for (k = 0; k < n && k < 8; k++)
			found |= !pg_oid_cmp(&hits[k].id, &id);
		missed += !found;
		pg_commit_free(c);
	}
	free(list);
	return missed;
}

/*
 * One bit of one key flipped in an index at the tip: the open (header,
 * order) does not see it, the probe that reads its segment does, finds
 * nothing there, and says the index is damaged; made again it finds
 * every commit.  A full check sees it when the index is opened.
 */
static void test_flipped_key_bit_in_a_current_index(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	pg_identity_index_opts opts = { 0 };
	char home[160], path[512];

	snprintf(home, sizeof(home), "%s/home-flip", f->dir);
	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	open_in(&x, &info, r, home, NULL);
	assert_int_equal(info.action, PG_IDENTITY_INDEX_BUILT);
	snprintf(path, sizeof(path), "%s", pg_identity_index_path(x));
	pg_identity_index_free(x);
	/* the lowest bit of entry 100's key: its neighbours stay in order */
	sh("perl -e 'open(F, \"+<\", $ARGV[0]) or die; seek(F, $ARGV[1], 0); read(F, $b, 1); "
	   "seek(F, $ARGV[1], 0); print F chr(ord($b) ^ 1)' %s %zu", path,
	   ENTRIES_AT + 100 * ENTRY_LEN);

	open_in(&x, &info, r, home, NULL);
	assert_int_equal(info.action, PG_IDENTITY_INDEX_CURRENT);
	assert_false(pg_identity_index_damaged(x));
	assert_true(misses(r, f->repo, x) >= 1);
	assert_true(pg_identity_index_damaged(x));
	pg_identity_index_free(x);

	opts.full_check = true;
	open_in(&x, &info, r, home, &opts);
	assert_int_equal(info.action, PG_IDENTITY_INDEX_BUILT);
	assert_string_equal(info.why, "damaged");
	assert_int_equal(misses(r, f->repo, x), 0);
	assert_false(pg_identity_index_damaged(x));
	pg_identity_index_free(x);

	/* what upstream.c does when a probe found it: made again on request */
	opts.full_check = false;
	opts.remake = true;
	open_in(&x, &info, r, home, &opts);
	assert_int_equal(info.action, PG_IDENTITY_INDEX_BUILT);
	assert_int_equal(misses(r, f->repo, x), 0);
	pg_identity_index_free(x);
	pg_repo_free(r);
}

/* Reverse LEN-byte records from OFFSET to the table of segments of $f ($2: how many). */
#define REVERSE \
	"perl -e 'open(F, \"+<\", $ARGV[0]) or die; seek(F, $ARGV[1], 0); " \
	"read(F, $b, 36 * $ARGV[2]) == 36 * $ARGV[2] or die; " \
	"@e = unpack(\"(a36)*\", $b); seek(F, $ARGV[1], 0); print F join(\"\", reverse @e)' "

static void test_entries_in_reverse_order_are_seen(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	char home[160], path[512];
	size_t n;

	snprintf(home, sizeof(home), "%s/home-reverse", f->dir);
	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	open_in(&x, &info, r, home, NULL);
	n = pg_identity_index_count(x);
	snprintf(path, sizeof(path), "%s", pg_identity_index_path(x));
	pg_identity_index_free(x);
	sh(REVERSE "%s %zu %zu", path, ENTRIES_AT, n);
	open_in(&x, &info, r, home, NULL);
	assert_int_equal(info.action, PG_IDENTITY_INDEX_BUILT);
	assert_string_equal(info.why, "damaged");
	assert_int_equal(misses(r, f->repo, x), 0);
	pg_identity_index_free(x);

	/* the file as it is, without a repository: refused as damaged */
	sh(REVERSE "%s %zu %zu", path, ENTRIES_AT, n);
	assert_int_equal(pg_identity_index_load(&x, path, UPSTREAM, false, false), PG_EINVALID);
	assert_null(x);
	assert_non_null(strstr(pg_error_last(), "damaged"));
	pg_repo_free(r);
}

static void test_tampered_header_is_seen(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	char home[160], path[512];
	static const int offsets[] = { 24, 56, 70, 88, 96 };
	size_t i;

	snprintf(home, sizeof(home), "%s/home-header", f->dir);
	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	for (i = 0; i < PG_ARRAY_SIZE(offsets); i++) {
		open_in(&x, &info, r, home, NULL);
		snprintf(path, sizeof(path), "%s", pg_identity_index_path(x));
		pg_identity_index_free(x);
		/* the count, the entries' checksum, the graph, the table's checksum, its own */
		sh("perl -e 'open(F, \"+<\", $ARGV[0]) or die; seek(F, $ARGV[1], 0); read(F, $b, 1);"
		   " seek(F, $ARGV[1], 0); print F chr(ord($b) ^ 0x10)' %s %d", path, offsets[i]);
		open_in(&x, &info, r, home, NULL);
		assert_int_equal(info.action, PG_IDENTITY_INDEX_BUILT);
		assert_string_equal(info.why, "damaged");
		pg_identity_index_free(x);
	}
	pg_repo_free(r);
}

/*
 * git wrote the commit-graph again (another checksum): the index made
 * through the old one is not current, at the same tip.  It is compared
 * with what the new graph reaches, and kept when it holds exactly that:
 * nothing read again; a tip that moved meanwhile adds only its new
 * commits.
 */
static void test_another_graph_is_not_current(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	char home[160];

	snprintf(home, sizeof(home), "%s/home-graph", f->dir);
	sh("git --git-dir=%s commit-graph write --reachable", f->repo);
	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	open_in(&x, &info, r, home, NULL);
	pg_identity_index_free(x);
	open_in(&x, &info, r, home, NULL);
	assert_int_equal(info.action, PG_IDENTITY_INDEX_CURRENT);
	pg_identity_index_free(x);
	pg_repo_free(r);

	sh("git --git-dir=%s -c commitGraph.generationVersion=1 commit-graph write --reachable",
	   f->repo);
	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	open_in(&x, &info, r, home, NULL);
	assert_int_equal(info.action, PG_IDENTITY_INDEX_EXTENDED);
	assert_int_equal(info.added, 0);
	check_complete(r, f->repo, "main", x);
	pg_identity_index_free(x);
	open_in(&x, &info, r, home, NULL);
	assert_int_equal(info.action, PG_IDENTITY_INDEX_CURRENT);
	pg_identity_index_free(x);
	pg_repo_free(r);

	/* a graph whose checksum does not hold is not used: the commits are walked without it */
	sh("f=%s/objects/info/commit-graph; chmod u+w $f; "
	   "perl -e 'open(F, \"+<\", $ARGV[0]) or die; seek(F, -1, 2); read(F, $b, 1); "
	   "seek(F, -1, 2); print F chr(ord($b) ^ 1)' $f", f->repo);
	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	open_in(&x, &info, r, home, NULL);
	assert_int_equal(info.action, PG_IDENTITY_INDEX_EXTENDED);
	assert_int_equal(info.added, 0);
	assert_non_null(pg_repo_graph_warning(r));
	assert_non_null(strstr(pg_repo_graph_warning(r), "checksum"));
	check_complete(r, f->repo, "main", x);
	pg_identity_index_free(x);
	pg_repo_free(r);

	/* the tip moved on and git wrote the graph again: only the new commits are added */
	sh("cd %s && a=$(git commit-tree -p main -m 'graph one' main^{tree}) && "
	   "b=$(git commit-tree -p $a -m 'graph two' main^{tree}) && git update-ref refs/heads/main $b && "
	   "git commit-graph write --reachable", f->repo);
	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	open_in(&x, &info, r, home, NULL);
	assert_int_equal(info.action, PG_IDENTITY_INDEX_EXTENDED);
	assert_int_equal(info.added, 2);
	check_complete(r, f->repo, "main", x);
	pg_identity_index_free(x);
	pg_repo_free(r);
	sh("cd %s && git update-ref refs/heads/main main~2 && git commit-graph write --reachable",
	   f->repo);
}

static bool exists(const char *home, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/identity/%s", home, name);
	return access(path, F_OK) == 0;
}

/*
 * Over the budget, the least recently used upstreams' files go first,
 * both kinds together; the one in use stays whatever its age or size.
 */
static void test_budget_removes_the_oldest_first(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	pg_identity_index_opts opts = { 0 };
	char home[160];
	uint64_t size = 0, own;

	snprintf(home, sizeof(home), "%s/home-budget", f->dir);
	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	open_in(&x, &info, r, home, NULL);
	pg_identity_index_free(x);
	assert_int_equal(pg_identity_index_cache_size(&own, home), 0);
	/* three other upstreams of 400 KiB a file, used 3, 2 and 1 days ago */
	sh("cd %s/identity && for u in 3 2 1; do for e in idx subj; do "
	   "head -c 409600 /dev/zero >000000000000000$u.$e; "
	   "touch -d \"$u days ago\" 000000000000000$u.$e; done; done; "
	   "touch -d '10 days ago' *", home);
	assert_int_equal(pg_identity_index_cache_size(&size, home), 0);
	assert_true(size == own + 6 * 409600);

	/* 1 MiB besides ours: the two oldest go, the newest stays */
	opts.remake = true;
	opts.cache_size = (1u << 20) + own;
	sh("cd %s/identity && for u in 3 2 1; do touch -d \"$u days ago\" 000000000000000$u.*; "
	   "done", home);
	open_in(&x, &info, r, home, &opts);
	pg_identity_index_free(x);
	assert_int_equal(info.pruned, 2);
	assert_false(exists(home, "0000000000000003.idx") || exists(home, "0000000000000003.subj"));
	assert_false(exists(home, "0000000000000002.idx") || exists(home, "0000000000000002.subj"));
	assert_true(exists(home, "0000000000000001.idx") && exists(home, "0000000000000001.subj"));
	assert_int_equal(pg_identity_index_cache_size(&size, home), 0);
	assert_true(size <= opts.cache_size);

	/* a budget smaller than the index in use: everything else goes, it stays */
	opts.cache_size = 1;
	open_in(&x, &info, r, home, &opts);
	assert_int_equal(info.pruned, 1);
	assert_true(access(pg_identity_index_path(x), F_OK) == 0);
	assert_false(exists(home, "0000000000000001.idx"));
	pg_identity_index_free(x);
	pg_repo_free(r);
}

/*
 * At PG_IDENTITY_INDEX_TIPS refs, a ref that brings nothing of its own
 * (below another) is only opened: no rebuild, no tip let go of.  One more
 * that brings commits makes it again ("tips"), the least recent let go of.
 */
static void test_tip_limit_only_for_a_ref_with_commits(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	char home[160], ref[32], rev[32];
	int i;

	snprintf(home, sizeof(home), "%s/home-limit", f->dir);
	/* 65 branches, each one commit of its own on main */
	sh("cd %s && t=$(git rev-parse 'main^{tree}') && for i in $(seq 1 %d); do "
	   "c=$(echo b$i | GIT_AUTHOR_NAME=B GIT_AUTHOR_EMAIL=b@example.org "
	   "GIT_COMMITTER_NAME=B GIT_COMMITTER_EMAIL=b@example.org git commit-tree -p main $t) && "
	   "git update-ref refs/heads/b$i $c || exit 1; done", f->repo, PG_IDENTITY_INDEX_TIPS + 1);
	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	for (i = 1; i <= PG_IDENTITY_INDEX_TIPS; i++) {
		snprintf(ref, sizeof(ref), "b%d", i);
		open_ref(&x, &info, r, f->repo, home, ref, ref);
		assert_int_not_equal(info.action, PG_IDENTITY_INDEX_CURRENT);
		pg_identity_index_free(x);
	}
	open_ref(&x, &info, r, f->repo, home, "old", "main~3");
	assert_int_equal(info.action, PG_IDENTITY_INDEX_CURRENT);
	assert_int_equal(pg_identity_index_ntips(x), PG_IDENTITY_INDEX_TIPS);
	assert_int_equal(pg_identity_index_count(x), rev_count(f->repo, "main~3", NULL));
	pg_identity_index_free(x);

	snprintf(rev, sizeof(rev), "b%d", PG_IDENTITY_INDEX_TIPS + 1);
	open_ref(&x, &info, r, f->repo, home, rev, rev);
	assert_int_equal(info.action, PG_IDENTITY_INDEX_BUILT);
	assert_string_equal(info.why, "tips");
	assert_int_equal(pg_identity_index_ntips(x), PG_IDENTITY_INDEX_TIPS);
	/* b1, the least recent, was let go of: main's commits and b2..b65's are held */
	assert_int_equal(pg_identity_index_total(x),
			 rev_count(f->repo, "main", NULL) + PG_IDENTITY_INDEX_TIPS);
	assert_true(answers(r, f->repo, x, rev));
	pg_identity_index_free(x);
	pg_repo_free(r);
}

/*
 * A ref whose index is current opens while a writer holds the lock: only
 * a write takes it.  (A regression blocks here: the alarm ends the test.)
 */
static void test_reader_needs_no_lock(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	pg_buf lock = PG_BUF_INIT;
	char home[160];
	DIR *d;
	struct dirent *e;
	int fd = -1;

	snprintf(home, sizeof(home), "%s/home-lock", f->dir);
	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	open_ref(&x, &info, r, f->repo, home, "main", "main");
	pg_identity_index_free(x);
	assert_int_equal(pg_buf_printf(&lock, "%s/identity-locks", home), 0);
	assert_non_null(d = opendir(lock.ptr));
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			assert_int_equal(pg_buf_printf(&lock, "/%s", e->d_name), 0);
	closedir(d);
	assert_int_equal(pg_lock_file(&fd, lock.ptr, false), 0);
	alarm(60);
	open_ref(&x, &info, r, f->repo, home, "main", "main");
	alarm(0);
	assert_int_equal(info.action, PG_IDENTITY_INDEX_CURRENT);
	pg_identity_index_free(x);
	close(fd);
	pg_buf_release(&lock);
	pg_repo_free(r);
}

/*
 * A format 2 index was per ref, named for the upstream and the ref: the
 * ref's first open in format 3 removes it (another's stays), and a write's
 * budget keeps the ref's own file beside the index (its .chain).
 */
static void test_per_ref_files(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	pg_identity_index_opts opts = { 0 };
	pg_buf chain = PG_BUF_INIT;
	char home[160], stem[32], other[32], name[256];
	unsigned char head[104 + 64];
	size_t len;
	pg_oid tip;

	snprintf(home, sizeof(home), "%s/home-old", f->dir);
	sh("mkdir -p %s/identity", home);
	snprintf(name, sizeof(name), "%s\nmain", UPSTREAM);
	snprintf(stem, sizeof(stem), "%016llx",
		 (unsigned long long)pg_hash_bytes(name, strlen(name)));
	snprintf(other, sizeof(other), "%016llx",
		 (unsigned long long)pg_hash_bytes("x\nmain", 6));
	/* a format 2 header naming the upstream and the ref */
	len = strlen(name);
	memset(head, 0, sizeof(head));
	memcpy(head, "PGIDENT1", 8);
	head[8] = 2;
	head[52] = (unsigned char)len;
	memcpy(head + 104, name, len);
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/identity/%s.idx", home, stem);
		assert_int_equal(pg_write_file_atomic(path, head, 104 + len), 0);
		snprintf(path, sizeof(path), "%s/identity/%s.idx", home, other);
		assert_int_equal(pg_write_file_atomic(path, head, 104 + len), 0);
	}
	snprintf(name, sizeof(name), "%s.idx", stem);
	assert_true(exists(home, name));

	assert_int_equal(pg_repo_open(&r, f->repo), 0);
	assert_int_equal(pg_repo_ref_target(&tip, r, "refs/heads/main"), 0);
	opts.ref = "main";
	assert_int_equal(pg_identity_index_open_opts(&x, r, home, UPSTREAM, &tip, &opts, &info), 0);
	assert_false(exists(home, name));
	snprintf(name, sizeof(name), "%s.idx", other);
	assert_true(exists(home, name));

	/* the ref's .chain, the oldest file there: a write's budget keeps it */
	assert_int_equal(pg_identity_index_ref_file(&chain, x, ".chain"), 0);
	assert_non_null(strstr(chain.ptr, stem));
	pg_identity_index_free(x);
	sh("head -c 409600 /dev/zero >%s && touch -d '10 days ago' %s", chain.ptr, chain.ptr);
	opts.remake = true;
	opts.cache_size = 1;
	assert_int_equal(pg_identity_index_open_opts(&x, r, home, UPSTREAM, &tip, &opts, &info), 0);
	assert_true(info.pruned >= 1);
	assert_false(exists(home, name));
	assert_true(access(chain.ptr, F_OK) == 0);
	pg_identity_index_free(x);
	pg_buf_release(&chain);
	pg_repo_free(r);
}

/*
 * main opened again (subjects: its subject index): current, its others
 * set read from its kept file (cached) or walked, n commits, fixes' never
 * answered.
 */
static void expect_main(pg_repo *r, const char *repo, const char *home, bool subjects,
			bool cached, size_t n)
{
	pg_identity_index *x = NULL;
	pg_identity_index_info info;

	open_ref_kind(&x, &info, r, repo, home, "main", "main", subjects);
	assert_int_equal(info.action, PG_IDENTITY_INDEX_CURRENT);
	assert_int_equal(info.others_cached, cached);
	assert_int_equal(info.others, n);
	assert_int_equal(pg_identity_index_count(x), rev_count(repo, "main", NULL));
	if (!subjects) {
		check_complete(r, repo, "main", x);
		assert_false(answers(r, repo, x, "fixes"));
	}
	pg_identity_index_free(x);
}

/*
 * The commits only other refs reach are walked once for a ref's tip and
 * the tips recorded, then read from the ref's .others file by both kinds;
 * a damaged one is walked again, never trusted.
 */
static void test_others_kept_beside_the_ref(void **state)
{
	fixture *f = *state;
	pg_repo *r = NULL;
	pg_identity_index *x = NULL;
	pg_identity_index_info info;
	pg_buf others = PG_BUF_INIT;
	char repo[160], home[160];
	int k;

	snprintf(repo, sizeof(repo), "%s/others.git", f->dir);
	snprintf(home, sizeof(home), "%s/home-others", f->dir);
	/* no commit-graph: as a URL upstream's cache.git, where the walk costs most */
	sh("rm -rf %s && git clone -q --bare %s %s && cd %s && "
	   "a=$(git commit-tree -p main~10 -m 'fixes: one' main~10^{tree}) && "
	   "git update-ref refs/heads/fixes $a && rm -rf objects/info/commit-graph*",
	   repo, f->repo, repo, repo);
	assert_int_equal(pg_repo_open(&r, repo), 0);
	/* as a verify does: the identity index, then the subject index */
	for (k = 0; k < 2; k++) {
		open_ref_kind(&x, &info, r, repo, home, "main", "main", k);
		pg_identity_index_free(x);
		open_ref_kind(&x, &info, r, repo, home, "fixes", "fixes", k);
		assert_int_equal(info.action, PG_IDENTITY_INDEX_EXTENDED);
		pg_identity_index_free(x);
	}
	pg_identity_index_drop_spare();

	/* main at new tips: walked once, then read by both kinds */
	expect_main(r, repo, home, false, false, 1);
	expect_main(r, repo, home, true, true, 1);
	expect_main(r, repo, home, false, true, 1);
	open_ref(&x, &info, r, repo, home, "main", "main");
	assert_int_equal(pg_identity_index_ref_file(&others, x, ".others"), 0);
	pg_identity_index_free(x);

	/* one byte of the kept id changed: the checksum says so, it is walked and kept again */
	sh("printf x | dd of=%s bs=1 seek=60 conv=notrunc 2>/dev/null", others.ptr);
	expect_main(r, repo, home, false, false, 1);
	/* cut short: the same */
	sh("truncate -s 50 %s", others.ptr);
	expect_main(r, repo, home, false, false, 1);
	expect_main(r, repo, home, false, true, 1);

	/* fixes moved: other tips, the kept set is stale and walked again */
	sh("cd %s && b=$(git commit-tree -p fixes -m 'fixes: two' main~10^{tree}) && "
	   "git update-ref refs/heads/fixes $b", repo);
	pg_repo_free(r);
	assert_int_equal(pg_repo_open(&r, repo), 0);
	open_ref(&x, &info, r, repo, home, "fixes", "fixes");
	pg_identity_index_free(x);
	expect_main(r, repo, home, false, false, 2);
	expect_main(r, repo, home, false, true, 2);
	pg_identity_index_drop_spare();
	pg_buf_release(&others);
	pg_repo_free(r);
}

/*
 * The files' checksum: given in parts of whole blocks (a segment, 4,608
 * bytes, as the writer and the readers stream it), the same as at once;
 * and any one bit of the bytes flipped, in a block, a word or the bytes
 * after, changes it.
 */
static void test_checksum_streams_and_sees_every_bit(void **state)
{
	unsigned char b[3 * 4608 + 13];
	uint64_t whole, h, x = 0x2545f4914f6cdd1dULL;
	size_t i, n = sizeof(b), bit;

	(void)state;
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (unsigned char)x;
	}
	whole = pg_identity_checksum(b, n);
	h = pg_identity_checksum_start(n);
	for (i = 0; i < n; i += 4608)
		h = pg_identity_checksum_more(h, b + i, n - i < 4608 ? n - i : 4608);
	assert_true(h == whole);
	/* the last 45 bytes: a block, a word, 5 bytes; and every bit of the first block */
	for (i = 0; i < n; i++) {
		if (i >= 32 && i < n - 45)
			continue;
		for (bit = 0; bit < 8; bit++) {
			b[i] ^= (unsigned char)(1u << bit);
			assert_true(pg_identity_checksum(b, n) != whole);
			b[i] ^= (unsigned char)(1u << bit);
		}
	}
	/* two words of a block changed together */
	b[40] ^= 1;
	b[48] ^= 1;
	assert_true(pg_identity_checksum(b, n) != whole);
	/* the length is in it: the same bytes, one fewer */
	assert_true(pg_identity_checksum(b, n - 1) != whole);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checksum_streams_and_sees_every_bit),
		cmocka_unit_test(test_build_probe_reopen),
		cmocka_unit_test(test_one_reading_for_both_kinds),
		cmocka_unit_test(test_small_work_mem_gives_the_same_files),
		cmocka_unit_test(test_extend_from_the_last_tip),
		cmocka_unit_test(test_rewritten_history_is_indexed_again),
		cmocka_unit_test(test_damaged_file_is_made_again),
		cmocka_unit_test(test_subjects_find_a_new_date),
		cmocka_unit_test(test_flipped_key_bit_in_a_current_index),
		cmocka_unit_test(test_entries_in_reverse_order_are_seen),
		cmocka_unit_test(test_tampered_header_is_seen),
		cmocka_unit_test(test_another_graph_is_not_current),
		cmocka_unit_test(test_budget_removes_the_oldest_first),
		cmocka_unit_test(test_refs_share_one_index),
		cmocka_unit_test(test_rewritten_ref_keeps_the_others),
		cmocka_unit_test(test_tip_limit_only_for_a_ref_with_commits),
		cmocka_unit_test(test_reader_needs_no_lock),
		cmocka_unit_test(test_per_ref_files),
		cmocka_unit_test(test_others_kept_beside_the_ref),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
