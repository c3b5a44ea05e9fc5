/* test_gpg.c - unit tests for the gpgme wrapper: statuses, keys, private GNUPGHOME. */
#include "tests/unit/unit.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "tests/unit/gpg_vectors.h"
#include "verifier/gpg.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct scratch {
	char dir[64];
	char keyring[128];
	char tmp[128];
} scratch;

static int write_file(const char *path, const char *s)
{
	return pg_write_file_atomic(path, s, strlen(s));
}

static int setup(void **state)
{
	scratch *s = calloc(1, sizeof(*s));
	const char *t = getenv("TMPDIR");

	assert_non_null(s);
	snprintf(s->dir, sizeof(s->dir), "%s/pg-gpg.XXXXXX", t && *t && strlen(t) < 32 ? t : "/tmp");
	assert_non_null(mkdtemp(s->dir));
	snprintf(s->keyring, sizeof(s->keyring), "%s/keyring.asc", s->dir);
	snprintf(s->tmp, sizeof(s->tmp), "%s/tmp", s->dir);
	assert_int_equal(write_file(s->keyring, KEYRING), 0);
	*state = s;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static int teardown(void **state)
{
	scratch *s = *state;

	nftw(s->dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	free(s);
	return 0;
}

/* Entries in a directory, "." and ".." left out; -1 when it cannot be read. */
static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void verify(pg_gpg_result *r, pg_gpg *g, const char *payload, const char *sig)
{
	assert_int_equal(pg_gpg_verify(r, g, payload, strlen(payload), sig, strlen(sig)), 0);
}

static void test_good_signature_by_a_subkey(void **state)
{
	scratch *s = *state;
	pg_gpg *g = NULL;
	pg_gpg_result r;

	assert_int_equal(pg_gpg_new(&g, s->keyring, NULL, s->tmp), 0);
	verify(&r, g, TAG_V1, SIG_GINA);
	assert_string_equal(pg_gpg_status_name(r.status), "good");
	/* the primary key's fingerprint, though the subkey made the signature */
	assert_string_equal(r.fingerprint, FPR_GINA);
	assert_non_null(r.signer);
	assert_string_equal(r.signer, FPR_GINA_SUB);
	assert_int_equal(r.nemails, 2);
	assert_true(pg_gpg_result_has_email(&r, "gina@example.org"));
	assert_true(pg_gpg_result_has_email(&r, "GINA@kernel.example"));
	assert_false(pg_gpg_result_has_email(&r, "mallory@example.org"));
	assert_true(r.created > 1700000000);
	assert_null(r.detail);
	pg_gpg_result_release(&r);
	pg_gpg_free(g);
}

static void test_changed_payload_is_bad(void **state)
{
	scratch *s = *state;
	pg_gpg *g = NULL;
	pg_gpg_result r;
	char *changed = pg_strdup(TAG_V1);

	assert_non_null(changed);
	changed[strlen(changed) - 2] = 'W'; /* "...merge windoW\n" */
	assert_int_equal(pg_gpg_new(&g, s->keyring, NULL, s->tmp), 0);
	verify(&r, g, changed, SIG_GINA);
	assert_int_equal(r.status, PG_GPG_BAD);
	assert_string_equal(pg_gpg_status_name(r.status), "bad");
	pg_gpg_result_release(&r);
	/* the same context goes on verifying after a bad one */
	verify(&r, g, TAG_V1, SIG_GINA);
	assert_int_equal(r.status, PG_GPG_GOOD);
	pg_gpg_result_release(&r);
	pg_gpg_free(g);
	free(changed);
}

static void test_key_states(void **state)
{
	scratch *s = *state;
	pg_gpg *g = NULL;
	pg_gpg_result r;

	assert_int_equal(pg_gpg_new(&g, s->keyring, NULL, s->tmp), 0);

	verify(&r, g, TAG_V1, SIG_UMA);
	assert_int_equal(r.status, PG_GPG_NO_KEY);
	assert_null(r.fingerprint);
	assert_non_null(r.signer);
	/* the signature names Uma's key (her fingerprint or its key id) */
	assert_non_null(strstr(FPR_UMA, r.signer));
	assert_int_equal(r.nemails, 0);
	pg_gpg_result_release(&r);

	verify(&r, g, TAG_V1, SIG_OLGA);
	assert_string_equal(pg_gpg_status_name(r.status), "expired-key");
	assert_string_equal(r.fingerprint, FPR_OLGA);
	assert_true(pg_gpg_result_has_email(&r, "olga@example.org"));
	pg_gpg_result_release(&r);

	verify(&r, g, TAG_V1, SIG_REX);
	assert_string_equal(pg_gpg_status_name(r.status), "revoked-key");
	assert_string_equal(r.fingerprint, FPR_REX);
	/* whose key it was, though every uid of a revoked key shows as revoked */
	assert_true(pg_gpg_result_has_email(&r, "rex@example.org"));
	pg_gpg_result_release(&r);

	verify(&r, g, TAG_V1, SIG_SID);
	assert_string_equal(pg_gpg_status_name(r.status), "expired-sig");
	assert_string_equal(r.fingerprint, FPR_SID);
	pg_gpg_result_release(&r);

	pg_gpg_free(g);
}

static void test_garbage_is_a_status(void **state)
{
	scratch *s = *state;
	pg_gpg *g = NULL;
	pg_gpg_result r;
	pg_buf two = PG_BUF_INIT;
	static const char *const junk[] = {
		"",
		"-----BEGIN PGP SIGNATURE-----\n\nnot base64 at all\n-----END PGP SIGNATURE-----\n",
		"-----BEGIN SSH SIGNATURE-----\nU1NIU0lH\n-----END SSH SIGNATURE-----\n",
		"\x89\x01\x02garbage",
	};
	size_t i;

	assert_int_equal(pg_gpg_new(&g, s->keyring, NULL, s->tmp), 0);
	for (i = 0; i < PG_ARRAY_SIZE(junk); i++) {
		assert_int_equal(pg_gpg_verify(&r, g, TAG_V1, strlen(TAG_V1), junk[i],
					       strlen(junk[i])), 0);
		assert_int_equal(r.status, PG_GPG_ERROR);
		assert_non_null(r.detail);
		assert_null(r.fingerprint);
		pg_gpg_result_release(&r);
	}
	/* two signatures in one block: refused rather than judged by the first */
	assert_int_equal(pg_buf_puts(&two, SIG_GINA), 0);
	assert_int_equal(pg_buf_puts(&two, SIG_REX), 0);
	verify(&r, g, TAG_V1, two.ptr);
	assert_int_equal(r.status, PG_GPG_ERROR);
	assert_non_null(strstr(r.detail, "more than one"));
	pg_gpg_result_release(&r);
	pg_buf_release(&two);
	pg_gpg_free(g);
}

/* Whether a gpg-agent socket sits in the one private home under tmp. */
static bool agent_socket_in(const char *tmp)
{
	DIR *d = opendir(tmp);
	struct dirent *e;
	char path[512];
	bool found = false;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "gpg-", 4)) {
			snprintf(path, sizeof(path), "%.200s/%.200s/S.gpg-agent", tmp, e->d_name);
			found = access(path, F_OK) == 0;
		}
	closedir(d);
	return found;
}

static void test_private_home_is_removed(void **state)
{
	scratch *s = *state;
	pg_gpg *g = NULL, *h = NULL;

	assert_int_equal(pg_gpg_new(&g, s->keyring, NULL, s->tmp), 0);
	/* importing would start an agent that outlives us; the private home forbids it */
	assert_false(agent_socket_in(s->tmp));
	assert_int_equal(pg_gpg_new(&h, s->keyring, NULL, s->tmp), 0);
	assert_int_equal(count_entries(s->tmp), 2);
	pg_gpg_free(g);
	assert_int_equal(count_entries(s->tmp), 1);
	pg_gpg_free(h);
	assert_int_equal(count_entries(s->tmp), 0);
	pg_gpg_free(NULL);
}

static void test_bad_arguments(void **state)
{
	scratch *s = *state;
	pg_gpg *g = NULL;
	char path[160];

	assert_int_equal(pg_gpg_new(&g, NULL, NULL, s->tmp), PG_EINVALID);
	assert_int_equal(pg_gpg_new(&g, s->keyring, s->dir, s->tmp), PG_EINVALID);
	assert_int_equal(pg_gpg_new(&g, s->keyring, NULL, NULL), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "no directory"));
	assert_null(g);

	snprintf(path, sizeof(path), "%s/missing.asc", s->dir);
	assert_int_equal(pg_gpg_new(&g, path, NULL, s->tmp), PG_ENOTFOUND);
	assert_non_null(strstr(pg_error_last(), "missing.asc"));

	snprintf(path, sizeof(path), "%s/empty.asc", s->dir);
	assert_int_equal(write_file(path, "this is no keyring\n"), 0);
	assert_int_equal(pg_gpg_new(&g, path, NULL, s->tmp), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "no OpenPGP public key"));

	assert_int_equal(pg_gpg_new(&g, NULL, path, NULL), PG_ENOTFOUND);
	assert_null(g);
	/* nothing is left behind by the failures */
	assert_int_equal(count_entries(s->tmp), 0);
}

/* Tests may use the gpg CLI: fill a GNUPGHOME the way a maintainer would. */
static void gpg_import(const char *home, const char *file)
{
	char *argv[] = { (char *)"gpg", (char *)"--batch", (char *)"--quiet",
			 (char *)"--homedir", (char *)home, (char *)"--import",
			 (char *)file, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status;

	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	assert_int_equal(posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0), 0);
	assert_int_equal(posix_spawnp(&pid, "gpg", &fa, NULL, argv, environ), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	posix_spawn_file_actions_destroy(&fa);
}

static void test_existing_gnupg_home_is_used_as_is(void **state)
{
	scratch *s = *state;
	pg_gpg *g = NULL;
	pg_gpg_result r;
	char home[160], conf[192];
	int before;

	snprintf(home, sizeof(home), "%s/gnupg", s->dir);
	snprintf(conf, sizeof(conf), "%s/gpg.conf", home);
	assert_int_equal(mkdir(home, 0700), 0);
	assert_int_equal(write_file(conf, "no-autostart\n"), 0);
	gpg_import(home, s->keyring);
	before = count_entries(home);

	assert_int_equal(pg_gpg_new(&g, NULL, home, NULL), 0);
	verify(&r, g, TAG_V1, SIG_GINA);
	assert_int_equal(r.status, PG_GPG_GOOD);
	assert_string_equal(r.fingerprint, FPR_GINA);
	pg_gpg_result_release(&r);
	verify(&r, g, TAG_V1, SIG_UMA);
	assert_int_equal(r.status, PG_GPG_NO_KEY);
	pg_gpg_result_release(&r);
	pg_gpg_free(g);
	/* no private home was made, and the given one gained nothing */
	assert_int_equal(count_entries(home), before);
	assert_int_equal(access(s->tmp, F_OK), -1);
}

/* With a cache, the keyring is imported once and the verifier kept; a changed one again. */
static void test_cache_keeps_the_imported_keyring(void **state)
{
	scratch *s = *state;
	pg_gpg_cache *c = NULL;
	pg_gpg *g = NULL;
	pg_gpg_result r;

	assert_int_equal(pg_gpg_cache_new(&c), 0);
	pg_gpg_cache_use(c);
	assert_int_equal(pg_gpg_new(&g, s->keyring, NULL, s->tmp), 0);
	verify(&r, g, TAG_V1, SIG_GINA);
	assert_int_equal(r.status, PG_GPG_GOOD);
	pg_gpg_result_release(&r);
	pg_gpg_free(g);
	/* kept, with its home */
	assert_int_equal(count_entries(s->tmp), 1);
	assert_int_equal(pg_gpg_new(&g, s->keyring, NULL, s->tmp), 0);
	assert_int_equal(count_entries(s->tmp), 1);
	verify(&r, g, TAG_V1, SIG_OLGA);
	assert_int_equal(r.status, PG_GPG_EXPIRED_KEY);
	pg_gpg_result_release(&r);
	pg_gpg_free(g);

	/* the same bytes written again: still current, nothing imported */
	assert_int_equal(write_file(s->keyring, KEYRING), 0);
	assert_int_equal(pg_gpg_new(&g, s->keyring, NULL, s->tmp), 0);
	assert_int_equal(count_entries(s->tmp), 1);
	pg_gpg_free(g);

	/* other bytes: the kept one is dropped and the new keyring imported (and refused) */
	assert_int_equal(write_file(s->keyring, "this is no keyring\n"), 0);
	assert_int_equal(pg_gpg_new(&g, s->keyring, NULL, s->tmp), PG_EINVALID);
	assert_null(g);
	assert_int_equal(count_entries(s->tmp), 0);
	assert_int_equal(write_file(s->keyring, KEYRING), 0);
	assert_int_equal(pg_gpg_new(&g, s->keyring, NULL, s->tmp), 0);
	verify(&r, g, TAG_V1, SIG_GINA);
	assert_int_equal(r.status, PG_GPG_GOOD);
	pg_gpg_result_release(&r);
	pg_gpg_free(g);

	pg_gpg_cache_use(NULL);
	pg_gpg_cache_free(c);
	assert_int_equal(count_entries(s->tmp), 0);
	pg_gpg_cache_free(NULL);
}

/*
 * Signatures queued for the background come back from pg_gpg_verify
 * without running gpg in the foreground: the last one is answered after
 * the keyring file is gone, which the foreground could not do.
 */
static void test_prefetch_answers_in_the_foreground(void **state)
{
	scratch *s = *state;
	pg_gpg_prefetch *pf = NULL;
	pg_gpg *g = NULL;
	pg_gpg_result r;
	char moved[192];

	snprintf(moved, sizeof(moved), "%s/keyring.moved", s->dir);
	assert_int_equal(pg_gpg_prefetch_start(&pf, NULL, NULL, s->tmp), PG_EINVALID);
	assert_int_equal(pg_gpg_prefetch_start(&pf, s->keyring, NULL, s->tmp), 0);
	assert_int_equal(pg_gpg_prefetch_add(pf, TAG_V1, strlen(TAG_V1), SIG_GINA,
					     strlen(SIG_GINA)), 0);
	assert_int_equal(pg_gpg_prefetch_add(pf, TAG_V1, strlen(TAG_V1), SIG_OLGA,
					     strlen(SIG_OLGA)), 0);
	/* never asked for: dropped by finish */
	assert_int_equal(pg_gpg_prefetch_add(pf, TAG_V1, strlen(TAG_V1), SIG_SID,
					     strlen(SIG_SID)), 0);
	assert_int_equal(pg_gpg_new(&g, s->keyring, NULL, s->tmp), 0);
	verify(&r, g, TAG_V1, SIG_GINA);
	assert_int_equal(r.status, PG_GPG_GOOD);
	assert_string_equal(r.fingerprint, FPR_GINA);
	assert_int_equal(r.nemails, 2);
	pg_gpg_result_release(&r);

	assert_int_equal(rename(s->keyring, moved), 0);
	verify(&r, g, TAG_V1, SIG_OLGA);
	assert_int_equal(r.status, PG_GPG_EXPIRED_KEY);
	assert_string_equal(r.fingerprint, FPR_OLGA);
	pg_gpg_result_release(&r);
	/* the prefetch's results are used once: the foreground finds no keyring now */
	assert_int_equal(pg_gpg_verify(&r, g, TAG_V1, strlen(TAG_V1), SIG_OLGA, strlen(SIG_OLGA)),
			 PG_ENOTFOUND);
	pg_gpg_result_release(&r);
	assert_int_equal(rename(moved, s->keyring), 0);

	/* a changed payload is not the one queued: verified afresh, and bad */
	verify(&r, g, TAG_SUB, SIG_GINA);
	assert_int_equal(r.status, PG_GPG_BAD);
	pg_gpg_result_release(&r);
	pg_gpg_free(g);
	pg_gpg_prefetch_finish(pf);
	/* the prefetch's own cache went with it */
	assert_int_equal(count_entries(s->tmp), 0);
	pg_gpg_prefetch_finish(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_good_signature_by_a_subkey, setup, teardown),
		cmocka_unit_test_setup_teardown(test_changed_payload_is_bad, setup, teardown),
		cmocka_unit_test_setup_teardown(test_key_states, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_is_a_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_private_home_is_removed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_arguments, setup, teardown),
		cmocka_unit_test_setup_teardown(test_existing_gnupg_home_is_used_as_is, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cache_keeps_the_imported_keyring, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_prefetch_answers_in_the_foreground, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
