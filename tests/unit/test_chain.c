/* test_chain.c - upstream's first-parent committers: walked, kept, extended from an older tip, walked again when damaged. */
#include "tests/unit/unit.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "repo/repo.h"
#include "tests/unit/run.h"
#include "verifier/chain.h"

#include <unistd.h>

typedef struct fixture {
	char dir[64];
	char repo[128], cache[128];
	char *want;        /* git log --first-parent of main: "id time email" lines */
	pg_repo *r;
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/pg-test-chain-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->repo, sizeof(f->repo), "%s/up.git", f->dir);
	snprintf(f->cache, sizeof(f->cache), "%s/up.chain", f->dir);
	/* a line longer than PG_CHAIN_MAX */
	free(run_sh("tests/unit/make-history.sh %s 1400 21 600", f->repo));
	f->want = run_sh("git --git-dir=%s log --first-parent -n %d --format='%%H %%ct %%ce' main",
			 f->repo, PG_CHAIN_MAX);
	assert_int_equal(pg_repo_open(&f->r, f->repo), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	pg_repo_free(f->r);
	pg_remove_tree(f->dir);
	free(f->want);
	free(f);
	return 0;
}

static void tip(pg_oid *out, const fixture *f, const char *rev)
{
	char *hex = run_sh("git --git-dir=%s rev-parse %s", f->repo, rev);

	assert_int_equal(pg_oid_fromhex(out, hex, PG_OID_HEXSZ), 0);
	free(hex);
}

/* c as the lines git log prints, from line `from` of them on */
static void assert_git_s(const fixture *f, const pg_chain *c, size_t from)
{
	pg_buf got = PG_BUF_INIT;
	const char *want = f->want;
	char hex[PG_OID_HEXSZ + 1];
	size_t i;

	for (i = 0; i < from; i++)
		want = strchr(want, '\n') + 1;
	/* git's lines end at PG_CHAIN_MAX below main: compare as far as they go */
	for (i = 0; i < c->n && i + from < PG_CHAIN_MAX; i++) {
		pg_oid_tohex(hex, &c->v[i].id);
		assert_int_equal(pg_buf_printf(&got, "%s %lld %s\n", hex, (long long)c->v[i].time,
					       c->v[i].email), 0);
	}
	assert_string_equal(got.ptr, want);
	pg_buf_release(&got);
}

static void test_walked_kept_and_read_back(void **state)
{
	fixture *f = *state;
	pg_buf file = PG_BUF_INIT;
	pg_chain c;
	pg_oid t;

	tip(&t, f, "main");
	unlink(f->cache);
	assert_int_equal(pg_chain_load(&c, f->r, &t, NULL), 0);
	assert_int_equal(c.n, PG_CHAIN_MAX);
	assert_git_s(f, &c, 0);
	pg_chain_release(&c);
	assert_int_equal(access(f->cache, F_OK), -1);
	/* kept: the file is the answer, as git prints it */
	assert_int_equal(pg_chain_load(&c, f->r, &t, f->cache), 0);
	pg_chain_release(&c);
	assert_int_equal(pg_buf_read_file(&file, f->cache), 0);
	assert_string_equal(file.ptr, f->want);
	/* read back: an edit of the file shows that it was read, not walked */
	free(run_sh("sed -i '3s/ [^ ]*$/ kept@example.org/' %s", f->cache));
	assert_int_equal(pg_chain_load(&c, f->r, &t, f->cache), 0);
	assert_string_equal(c.v[2].email, "kept@example.org");
	pg_chain_release(&c);
	pg_buf_release(&file);
}

static void test_an_older_tip_is_extended(void **state)
{
	fixture *f = *state;
	pg_chain c;
	pg_oid t, old;

	tip(&old, f, "main~40");
	tip(&t, f, "main");
	unlink(f->cache);
	assert_int_equal(pg_chain_load(&c, f->r, &old, f->cache), 0);
	assert_git_s(f, &c, 0 + 40);
	pg_chain_release(&c);
	/* the older line's own commits are not read again: an edit below main~40 stays */
	free(run_sh("sed -i '2s/ [^ ]*$/ kept@example.org/' %s", f->cache));
	assert_int_equal(pg_chain_load(&c, f->r, &t, f->cache), 0);
	assert_int_equal(c.n, PG_CHAIN_MAX);
	assert_string_equal(c.v[41].email, "kept@example.org");
	pg_chain_release(&c);
}

/* The cache at path damaged the k-th way; false past the last way. */
static bool damage(const char *path, int k)
{
	switch (k) {
	case 0: free(run_sh("sed -i '5s/^./x/' %s", path)); break;            /* not an id */
	case 1: free(run_sh("sed -i '7s/ [0-9]* / 12x4 /' %s", path)); break; /* not a time */
	case 2: free(run_sh("sed -i '9s/ [^ ]*$/ /' %s", path)); break;       /* no e-mail */
	case 3: free(run_sh("sed -i '11s/@/\\x01/' %s", path)); break;      /* a control character */
	case 4: free(run_sh("printf 'cut short' >> %s", path)); break;      /* no last newline */
	case 5: /* more lines than a line is kept for */
		free(run_sh("for i in $(seq 1 600); do "
			    "echo 0123456789012345678901234567890123456789 1 a@b; done > %s", path));
		break;
	case 6: free(run_sh(": > %s", path)); break;                        /* empty */
	default: return false;
	}
	return true;
}

static void test_damage_and_other_lines_are_walked_again(void **state)
{
	fixture *f = *state;
	pg_chain c;
	pg_oid t, other;
	int k;

	tip(&t, f, "main");
	for (k = 0;; k++) {
		unlink(f->cache);
		assert_int_equal(pg_chain_load(&c, f->r, &t, f->cache), 0);
		pg_chain_release(&c);
		if (!damage(f->cache, k))
			break;
		assert_int_equal(pg_chain_load(&c, f->r, &t, f->cache), 0);
		assert_git_s(f, &c, 0);
		pg_chain_release(&c);
	}
	assert_int_equal(k, 7);
	/* another branch's line never meets main's cached tip: walked whole */
	tip(&other, f, "t1");
	assert_int_equal(pg_chain_load(&c, f->r, &other, f->cache), 0);
	assert_true(c.n > 0);
	assert_true(pg_oid_cmp(&c.v[0].id, &other) == 0);
	pg_chain_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walked_kept_and_read_back),
		cmocka_unit_test(test_an_older_tip_is_extended),
		cmocka_unit_test(test_damage_and_other_lines_are_walked_again),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
