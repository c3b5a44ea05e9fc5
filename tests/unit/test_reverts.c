/* test_reverts.c - unit tests for reading what a revert's message says it undoes. */
#include "tests/unit/unit.h"

#include "verifier/reverts.h"

#define ID40 "1970fcef93adcc5a35f6468d00a5a634d5af2b3c"
#define PAR40 "26986f4cbaf38d84a82b0b35da211389ce49552c"

typedef struct want {
	const char *msg;
	const char *id;     /* NULL: no revert line */
	const char *parent; /* "" unless the merge form */
} want;

static void test_revert_line_forms(void **state)
{
	static const want cases[] = {
		{ "Revert \"x\"\n\nThis reverts commit " ID40 ".\n", ID40, "" },
		/* git's merge form, wrapped where git wraps it */
		{ "Revert \"Merge\"\n\nThis reverts commit " ID40 ", reversing\nchanges made to "
		  PAR40 ".\n", ID40, PAR40 },
		/* abbreviated, and the sentence broken over lines by an editor */
		{ "Revert\n\nThis reverts\ncommit 1970fcef93ad; let's not.\n", "1970fcef93ad", "" },
		{ "x\n\nThis reverts commit 1970fcef93ad, reversing changes made to 26986f4.\n",
		  "1970fcef93ad", "26986f4" },
		/* not an id: too short, too long, upper case, glued to a word */
		{ "x\n\nThis reverts commit 1970fc.\n", NULL, NULL },
		{ "x\n\nThis reverts commit " ID40 "ab.\n", NULL, NULL },
		{ "x\n\nThis reverts commit 1970FCEF93AD.\n", NULL, NULL },
		{ "x\n\nThis reverts commit 1970fcef93adzz.\n", NULL, NULL },
		/* the words must start one: "NotThis reverts" is not git's sentence */
		{ "x\n\nNotThis reverts commit " ID40 ".\n", NULL, NULL },
		{ "x\n\nThis revert commit " ID40 ".\n", NULL, NULL },
		{ "", NULL, NULL },
		{ "This reverts commit ", NULL, NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *m = cases[i].msg;
		size_t id = 0, id_len = 0, par = 0, par_len = 0;
		int got = pg_revert_line_next(&id, &id_len, &par, &par_len, m, strlen(m), 0);

		if (!cases[i].id) {
			assert_int_equal(got, 0);
			continue;
		}
		assert_int_equal(got, 1);
		assert_int_equal(id_len, strlen(cases[i].id));
		assert_memory_equal(m + id, cases[i].id, id_len);
		assert_int_equal(par_len, strlen(cases[i].parent));
		if (par_len)
			assert_memory_equal(m + par, cases[i].parent, par_len);
	}
}

static void test_revert_lines_in_turn(void **state)
{
	static const char m[] = "Revert two\n\nThis reverts commit " ID40 ".\n"
				"This reverts commit " PAR40 ".\n";
	size_t id, id_len, par, par_len, from = 0;

	(void)state;
	assert_int_equal(pg_revert_line_next(&id, &id_len, &par, &par_len, m, strlen(m), from), 1);
	assert_memory_equal(m + id, ID40, 40);
	from = id + id_len;
	assert_int_equal(pg_revert_line_next(&id, &id_len, &par, &par_len, m, strlen(m), from), 1);
	assert_memory_equal(m + id, PAR40, 40);
	from = id + id_len;
	assert_int_equal(pg_revert_line_next(&id, &id_len, &par, &par_len, m, strlen(m), from), 0);
	/* a message cut inside the sentence reads nothing past its end */
	assert_int_equal(pg_revert_line_next(&id, &id_len, &par, &par_len, m, 30, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_revert_line_forms),
		cmocka_unit_test(test_revert_lines_in_turn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
