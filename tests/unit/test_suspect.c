/* test_suspect.c - unit tests for the suspect a stack's failure names (pipeline/suspect.c) and the bisection that tries it first (pg_queue_bisect). */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "common/fs.h"
#include "pipeline/queue.h"
#include "pipeline/suspect.h"
#include "tests/unit/run.h"

/* ---- the bisection ---------------------------------------------------------------------- */

/* A pull that fails on every stack from culprit up (0: on the head alone too). */
typedef struct stack_pull {
	size_t culprit;
	size_t calls;
	int seen[16];  /* per upto: -1 not run, else what the run said */
	int fail_at;   /* a run that cannot decide at this call (1-based); 0: none */
	bool any;      /* else: it fails on upto when bit upto of pattern is set */
	unsigned pattern;
} stack_pull;

static int fails(void *ctx, size_t upto)
{
	stack_pull *p = ctx;

	assert_true(upto < PG_ARRAY_SIZE(p->seen));
	assert_int_equal(p->seen[upto], -1); /* never the same stack twice */
	if (++p->calls == (size_t)p->fail_at)
		return pg_error_set(PG_EIO, "the run could not decide");
	return p->seen[upto] = p->any ? (int)((p->pattern >> upto) & 1) : upto >= p->culprit;
}

static void reset(stack_pull *p, size_t culprit)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	p->culprit = culprit;
	for (i = 0; i < PG_ARRAY_SIZE(p->seen); i++)
		p->seen[i] = -1;
}

static size_t log2_ceil(size_t n)
{
	size_t k = 0;

	while (((size_t)1 << k) < n)
		k++;
	return k;
}

/*
 * Every stack of 1 to 9 merges, every culprit, every suspect (right,
 * wrong, none): the culprit is found, each answer rests on runs that
 * showed it (by itself only after a run alone that failed; with j only
 * between a pass on j - 1 and a failure on j, the whole stack's failure
 * known), and a right suspect costs at most two runs.
 */
static void test_bisect_every_case(void **state)
{
	stack_pull p;
	size_t n, c, s, got;

	(void)state;
	for (n = 1; n <= 9; n++)
		for (c = 0; c <= n; c++)
			for (s = 0; s <= n; s++) {
				reset(&p, c);
				p.seen[n] = 1; /* the run on the whole stack failed */
				assert_int_equal(pg_queue_bisect(&got, n, s, fails, &p), 0);
				assert_int_equal(got, c);
				if (c == 0) {
					assert_int_equal(p.seen[0], 1);
				} else {
					assert_int_equal(p.seen[c - 1], 0);
					assert_int_equal(p.seen[c], 1);
				}
				if (s && s == c)
					assert_true(p.calls <= (c == n ? 1u : 2u));
				if (!s)
					assert_true(p.calls <= 1 + log2_ceil(n));
				/* a wrong suspect costs at most its two runs more */
				assert_true(p.calls <= 3 + log2_ceil(n));
			}
}

/*
 * A pull whose failures need not last (it fails on one stack, passes on a
 * longer one): whatever the pattern, an answer still rests on the runs
 * that showed it, and no stack is run twice, nor the whole one again.
 */
static void test_bisect_any_pattern(void **state)
{
	stack_pull p;
	size_t n, s, got;
	unsigned pattern;

	(void)state;
	for (n = 1; n <= 8; n++)
		for (pattern = 0; pattern < (1u << n); pattern++)
			for (s = 0; s <= n + 1; s++) {
				reset(&p, 0);
				p.any = true;
				p.pattern = pattern | (1u << n);
				p.seen[n] = 1;
				assert_int_equal(pg_queue_bisect(&got, n, s, fails, &p), 0);
				assert_true(got <= n);
				if (got == 0) {
					assert_int_equal(p.seen[0], 1);
				} else {
					assert_int_equal(p.seen[got - 1], 0);
					assert_int_equal(p.seen[got], 1);
				}
			}
}

static void test_bisect_cannot_decide(void **state)
{
	stack_pull p;
	size_t got = 7, at;

	(void)state;
	for (at = 1; at <= 3; at++) {
		reset(&p, 3);
		p.seen[6] = 1;
		p.fail_at = (int)at;
		assert_true(pg_queue_bisect(&got, 6, 2, fails, &p) < 0);
		assert_int_equal(pg_error_last_code(), PG_EIO);
		pg_error_clear();
	}
	reset(&p, 0);
	assert_int_equal(pg_queue_bisect(&got, 0, 0, fails, &p), 0);
	assert_int_equal(got, 0);
	assert_int_equal(p.calls, 0);
}

/* ---- the terms a failure names ---------------------------------------------------------- */

static bool has(char **list, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

static void test_terms(void **state)
{
	pg_report *r;
	pg_finding *f;
	pg_suspect_terms t;
	pg_buf many = PG_BUF_INIT;
	int i;

	(void)state;
	assert_int_equal(pg_report_new(&r), 0);
	assert_int_equal(pg_report_add(&f, r, PG_CHECK_BUILD_ERROR, PG_SEV_ERROR, NULL,
				       "../lib/kstrtox.c:412: implicit declaration of function "
				       "'bcd2bin_checked'; did you mean \xe2\x80\x98" "bcd2bin_strict"
				       "\xe2\x80\x99? [-Werror=implicit-function-declaration]"), 0);
	assert_int_equal(pg_report_add(&f, r, PG_CHECK_BUILD_ERROR, PG_SEV_ERROR, NULL,
				       "fs/x.c:3: 'struct inode' has no member named 'i_fancy'"), 0);
	assert_int_equal(pg_report_add(&f, r, PG_CHECK_KTAP_FAILURE, PG_SEV_ERROR, NULL,
				       "pullgate_window.rowsize failed"), 0);
	assert_int_equal(pg_finding_detail(f, "diagnostic",
					   "# rowsize: EXPECTATION FAILED at lib/pullgate_kunit.c:212\n"
					   "Expected rowsize == 16, but\nrowsize == 32 (0x20)", NULL), 0);
	assert_int_equal(pg_report_add(&f, r, PG_CHECK_BUILD_ERROR, PG_SEV_ERROR, NULL,
				       "the build failed without a compiler diagnostic"), 0);
	assert_int_equal(pg_finding_detail(f, "output",
					   "ld: lib/foo.o: in function `foo_probe': undefined reference "
					   "to `foo_reset'\nERROR: modpost: \"foo_export\" "
					   "[drivers/x.ko] undefined!\n"
					   "# ret: EXPECTATION FAILED at lib/y.c:1\nExpected ret == 0, but", NULL), 0);
	assert_int_equal(pg_report_add(&f, r, PG_CHECK_MERGE_CONFLICT, PG_SEV_ERROR, NULL,
				       "merging into master conflicts in 1 path"), 0);
	assert_int_equal(pg_finding_detail(f, "conflict", "drivers/tty/n_null.c", NULL), 0);
	/* prose with apostrophes names nothing; a warning does not fail the run */
	assert_int_equal(pg_report_add(&f, r, PG_CHECK_BUILD_ERROR, PG_SEV_ERROR, NULL,
				       "the build's end: it didn't say which pull's code"), 0);
	assert_int_equal(pg_report_add(&f, r, PG_CHECK_NEW_WARNING, PG_SEV_WARNING, NULL,
				       "mm/warned.c:1: unused variable 'warned_only'"), 0);
	assert_int_equal(pg_suspect_terms_of(&t, r), 0);

	assert_true(has(t.paths, t.npaths, "../lib/kstrtox.c"));
	assert_true(has(t.paths, t.npaths, "fs/x.c"));
	assert_true(has(t.paths, t.npaths, "lib/pullgate_kunit.c"));
	assert_true(has(t.paths, t.npaths, "drivers/tty/n_null.c"));
	assert_false(has(t.paths, t.npaths, "mm/warned.c"));
	assert_true(has(t.idents, t.nidents, "bcd2bin_checked"));
	assert_true(has(t.idents, t.nidents, "bcd2bin_strict"));
	assert_true(has(t.idents, t.nidents, "inode"));
	assert_true(has(t.idents, t.nidents, "i_fancy"));
	assert_true(has(t.idents, t.nidents, "rowsize"));
	assert_true(has(t.idents, t.nidents, "foo_probe"));
	assert_true(has(t.idents, t.nidents, "foo_reset"));
	assert_true(has(t.idents, t.nidents, "foo_export"));
	assert_false(has(t.idents, t.nidents, "ret"));
	assert_false(has(t.idents, t.nidents, "struct"));
	assert_false(has(t.idents, t.nidents, "Werror"));
	assert_false(has(t.idents, t.nidents, "implicit"));
	assert_false(has(t.idents, t.nidents, "warned_only"));
	assert_false(has(t.idents, t.nidents, "t"));
	assert_false(has(t.idents, t.nidents, "s"));
	assert_false(has(t.idents, t.nidents, "which"));
	pg_suspect_terms_release(&t);
	pg_report_free(r);

	/* bounded, each once */
	assert_int_equal(pg_report_new(&r), 0);
	for (i = 0; i < 200; i++)
		assert_int_equal(pg_buf_printf(&many, "d%d/f.c:1: 'name_%d' 'name_0' ", i % 100, i), 0);
	assert_int_equal(pg_report_add(&f, r, PG_CHECK_BUILD_ERROR, PG_SEV_ERROR, NULL, "%s",
				       many.ptr), 0);
	assert_int_equal(pg_suspect_terms_of(&t, r), 0);
	assert_int_equal(t.npaths, PG_SUSPECT_MAX_TERMS);
	assert_int_equal(t.nidents, PG_SUSPECT_MAX_TERMS);
	assert_true(has(t.idents, t.nidents, "name_0"));
	for (i = 0; i < (int)t.nidents; i++)
		assert_false(has(t.idents, (size_t)i, t.idents[i]));
	pg_suspect_terms_release(&t);
	pg_report_free(r);
	pg_buf_release(&many);
}

/* ---- the suspect on a stack ------------------------------------------------------------- */

typedef struct fixture {
	char dir[64];
	pg_repo *r;
	pg_oid tops[4];
} fixture;

/*
 * The head and three merges on it, each of a pull that changed:
 *	1  a.c: a call of shared_name
 *	2  lib/kstrtox.c: a call of bcd2bin_checked
 *	3  c.c: shared_name again, and a binary file naming bcd2bin_checked
 */
static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	const char *g = "git -c user.name=t -c user.email=t@example.org";
	char name[32];
	size_t i;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/pg-test-suspect-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	free(run_sh("cd %s && git init -q -b main . && mkdir lib && echo base >base.c && "
		    "echo 'int x;' >lib/kstrtox.c && git add . && %s commit -q -m base && "
		    "git checkout -q -b p1 main && echo 'shared_name();' >a.c && git add . && "
		    "%s commit -q -m p1 && "
		    "git checkout -q -b p2 main && echo 'y = bcd2bin_checked(x);' >>lib/kstrtox.c && "
		    "%s commit -q -a -m p2 && "
		    "git checkout -q -b p3 main && echo 'shared_name(1);' >c.c && "
		    "printf 'bcd2bin_checked\\000' >blob.bin && git add . && %s commit -q -m p3 && "
		    "git checkout -q main && %s merge -q --no-ff -m m1 p1 && "
		    "%s merge -q --no-ff -m m2 p2 && %s merge -q --no-ff -m m3 p3",
		    f->dir, g, g, g, g, g, g, g));
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "main~%zu", 3 - i);
		run_rev(&f->tops[i], f->dir, name);
	}
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

static size_t suspect_for(fixture *f, const char *message)
{
	pg_report *r;
	size_t s = 99;

	assert_int_equal(pg_report_new(&r), 0);
	assert_int_equal(pg_report_add(NULL, r, PG_CHECK_BUILD_ERROR, PG_SEV_ERROR, NULL, "%s",
				       message), 0);
	assert_int_equal(pg_suspect_find(&s, f->r, f->tops, 3, r), 0);
	pg_report_free(r);
	return s;
}

static void test_find(void **state)
{
	fixture *f = *state;
	pg_report *empty;
	size_t s = 99;

	/* an identifier on a line the pull added, in a file of another pull's */
	assert_int_equal(suspect_for(f, "drivers/x.c:1: implicit declaration of function "
				     "'bcd2bin_checked'"), 2);
	/* a path, as a compiler in a build dir prints it */
	assert_int_equal(suspect_for(f, "../lib/kstrtox.c:2: expected ';'"), 2);
	/* named by two: the first; by two terms of the third: the third */
	assert_int_equal(suspect_for(f, "z.c:1: 'shared_name' undeclared"), 1);
	assert_int_equal(suspect_for(f, "c.c:1: too many arguments to 'shared_name'"), 3);
	/* a word is whole: "bcd2bin" names nothing; nor does a path no pull changed */
	assert_int_equal(suspect_for(f, "q.c:1: 'bcd2bin' undeclared"), 0);
	assert_int_equal(suspect_for(f, "base.c:1: error"), 0);
	/* a path under a build dir's "../", or an absolute one, names it; another directory does not */
	assert_int_equal(suspect_for(f, "../../c.c:1: error"), 3);
	assert_int_equal(suspect_for(f, "/build/tree/c.c:1: error"), 3);
	assert_int_equal(suspect_for(f, "lib/c.c:1: error"), 0);
	assert_int_equal(suspect_for(f, "x/../c.c:1: error"), 0);

	assert_int_equal(pg_report_new(&empty), 0);
	assert_int_equal(pg_suspect_find(&s, f->r, f->tops, 3, empty), 0);
	assert_int_equal(s, 0);
	pg_report_free(empty);
}

/* The lines of a diff, within the budget, never a binary file's. */
typedef struct lines {
	size_t n, bytes;
	bool binary_seen;
} lines;

static int count_line(void *ctx, const char *path, const char *line, size_t len)
{
	lines *l = ctx;

	(void)line;
	l->n++;
	l->bytes += len + 1;
	l->binary_seen |= !strcmp(path, "blob.bin");
	return 0;
}

static void test_diff_lines(void **state)
{
	fixture *f = *state;
	lines l = { 0 };
	bool cut = true;

	assert_int_equal(pg_repo_diff_lines(f->r, &f->tops[0], &f->tops[3], 1 << 20, &cut,
					    count_line, &l), 0);
	assert_int_equal(l.n, 3);
	assert_false(l.binary_seen);
	assert_false(cut);
	memset(&l, 0, sizeof(l));
	assert_int_equal(pg_repo_diff_lines(f->r, &f->tops[0], &f->tops[3], 20, &cut,
					    count_line, &l), 0);
	assert_true(cut);
	assert_true(l.bytes <= 20);
	assert_true(l.n >= 1 && l.n < 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bisect_every_case),
		cmocka_unit_test(test_bisect_any_pattern),
		cmocka_unit_test(test_bisect_cannot_decide),
		cmocka_unit_test(test_terms),
		cmocka_unit_test_setup_teardown(test_find, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diff_lines, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
