/* test_gpg.c - unit tests for the gpgme wrapper: statuses, keys, private GNUPGHOME, pgpkeys directories. */
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

/* Run argv (tests may use the gpg and git CLIs), its output into out when given; it must succeed. */
static void run_ok(char *const argv[], const char *out)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int status;

	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	if (out)
		assert_int_equal(posix_spawn_file_actions_addopen(&fa, 1, out,
								  O_WRONLY | O_CREAT | O_TRUNC,
								  0644), 0);
	assert_int_equal(posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0), 0);
	assert_int_equal(posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	posix_spawn_file_actions_destroy(&fa);
}

/* Fill a GNUPGHOME the way a maintainer would. */
static void gpg_import(const char *home, const char *file)
{
	char *argv[] = { (char *)"gpg", (char *)"--batch", (char *)"--quiet",
			 (char *)"--homedir", (char *)home, (char *)"--import",
			 (char *)file, NULL };

	run_ok(argv, NULL);
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
	assert_int_equal(pg_gpg_prefetch_start(&pf, &(pg_gpg_keys){ 0 }, s->tmp), PG_EINVALID);
	assert_int_equal(pg_gpg_prefetch_start(&pf, &(pg_gpg_keys){ .keyring = s->keyring },
					       s->tmp), 0);
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

/* Verify sig over TAG_V1: gpg's status, by name, and the key's fingerprint when fpr is given. */
static void expect(pg_gpg *g, const char *sig, const char *status, const char *fpr)
{
	pg_gpg_result r;

	verify(&r, g, TAG_V1, sig);
	assert_string_equal(pg_gpg_status_name(r.status), status);
	if (fpr)
		assert_string_equal(r.fingerprint, fpr);
	pg_gpg_result_release(&r);
}

/*
 * A pgpkeys.git-style directory at s->dir/pgpkeys, keys/ empty, with a
 * README; home is a GNUPGHOME holding the vectors' keys to export from.
 */
static void make_pgpkeys(char pgpkeys[160], char home[160], const scratch *s)
{
	char path[256];

	snprintf(pgpkeys, 160, "%s/pgpkeys", s->dir);
	snprintf(home, 160, "%s/source-gnupg", s->dir);
	snprintf(path, sizeof(path), "%s/gpg.conf", home);
	assert_int_equal(mkdir(home, 0700), 0);
	assert_int_equal(write_file(path, "no-autostart\n"), 0);
	gpg_import(home, s->keyring);
	snprintf(path, sizeof(path), "%s/keys", pgpkeys);
	assert_int_equal(pg_mkdir_p(path), 0);
	snprintf(path, sizeof(path), "%s/README", pgpkeys);
	assert_int_equal(write_file(path, "not a key\n"), 0);
}

/* pgpkeys/keys/FPR.asc: the key as its owner exports it (Rex's with his revocation). */
static void add_key_file(const char *pgpkeys, const char *home, const char *fpr)
{
	char *argv[] = { (char *)"gpg", (char *)"--batch", (char *)"--homedir", (char *)home,
			 (char *)"--armor", (char *)"--export", (char *)fpr, NULL };
	char path[256];

	snprintf(path, sizeof(path), "%s/keys/%s.asc", pgpkeys, fpr);
	run_ok(argv, path);
}

static void git_commit_all(const char *dir)
{
	char *add[] = { (char *)"git", (char *)"-C", (char *)dir, (char *)"add", (char *)".",
			NULL };
	char *commit[] = { (char *)"git", (char *)"-C", (char *)dir, (char *)"-c",
			   (char *)"user.name=Keeper", (char *)"-c",
			   (char *)"user.email=keeper@example.org", (char *)"commit", (char *)"-q",
			   (char *)"-m", (char *)"keys", NULL };

	run_ok(add, NULL);
	run_ok(commit, NULL);
}

static pg_gpg *open_pgpkeys(const char *pgpkeys, const scratch *s)
{
	pg_gpg *g = NULL;

	if (pg_gpg_open(&g, &(pg_gpg_keys){ .pgpkeys = pgpkeys }, s->tmp) < 0)
		fail_msg("pgpkeys '%s': %s", pgpkeys, pg_error_last());
	return g;
}

/* Each key file imported; what gpg says of expired and revoked keys comes through. */
static void test_pgpkeys_directory(void **state)
{
	scratch *s = *state;
	char pgpkeys[160], home[160];
	pg_gpg *g;

	make_pgpkeys(pgpkeys, home, s);
	add_key_file(pgpkeys, home, FPR_GINA);
	add_key_file(pgpkeys, home, FPR_OLGA);
	add_key_file(pgpkeys, home, FPR_REX);
	g = open_pgpkeys(pgpkeys, s);
	expect(g, SIG_GINA, "good", FPR_GINA);
	expect(g, SIG_OLGA, "expired-key", FPR_OLGA);
	expect(g, SIG_REX, "revoked-key", FPR_REX);
	/* Sid's key is in the keyring file, not in the directory */
	expect(g, SIG_SID, "no-key", NULL);
	pg_gpg_free(g);
	assert_int_equal(count_entries(s->tmp), 0);
}

/* What is wrong with the directory or a key file is an error that names it. */
static void test_pgpkeys_refused(void **state)
{
	scratch *s = *state;
	char pgpkeys[160], home[160], path[256], other[256];
	pg_gpg_keys keys = { 0 };
	pg_gpg *g = NULL;

	make_pgpkeys(pgpkeys, home, s);
	keys.pgpkeys = pgpkeys;
	assert_int_equal(pg_gpg_open(&g, &keys, s->tmp), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "holds no key file"));
	assert_int_equal(pg_gpg_open(&g, &keys, NULL), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "no directory for a private GNUPGHOME"));
	keys.keyring = s->keyring;
	assert_int_equal(pg_gpg_open(&g, &keys, s->tmp), PG_EINVALID);
	keys.keyring = NULL;
	keys.pgpkeys = s->dir;
	assert_int_equal(pg_gpg_open(&g, &keys, s->tmp), PG_ENOTFOUND);
	assert_non_null(strstr(pg_error_last(), "has no keys/ directory"));
	keys.pgpkeys = pgpkeys;

	add_key_file(pgpkeys, home, FPR_GINA);
	snprintf(path, sizeof(path), "%s/keys/%s.asc", pgpkeys, FPR_OLGA);
	/* a key file whose name is not its key's */
	snprintf(other, sizeof(other), "%s/keys/%s.asc", pgpkeys, FPR_GINA);
	assert_int_equal(link(other, path), 0);
	assert_int_equal(pg_gpg_open(&g, &keys, s->tmp), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), path));
	assert_non_null(strstr(pg_error_last(), "gives gpg no usable key"));
	assert_int_equal(unlink(path), 0);
	/* a damaged one: the armor cut short */
	assert_int_equal(write_file(path, "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEZ\n"), 0);
	assert_int_equal(pg_gpg_open(&g, &keys, s->tmp), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), path));
	assert_int_equal(unlink(path), 0);
	/* neither waited on nor followed */
	assert_int_equal(mkfifo(path, 0644), 0);
	assert_int_equal(pg_gpg_open(&g, &keys, s->tmp), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "is a FIFO, not a regular file"));
	assert_non_null(strstr(pg_error_last(), path));
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(s->keyring, path), 0);
	assert_int_equal(pg_gpg_open(&g, &keys, s->tmp), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "is a symbolic link, not a regular file"));
	assert_int_equal(unlink(path), 0);
	assert_null(g);
	/* nothing is left behind by the failures */
	assert_int_equal(count_entries(s->tmp), 0);
}

/*
 * A cache keeps the imported keys while the directory's identity stands:
 * in a git checkout its HEAD commit, so a key file added and committed is
 * imported by the next verifier, and one only added is not.
 */
static void test_cache_sees_a_new_pgpkeys_commit(void **state)
{
	scratch *s = *state;
	char pgpkeys[160], home[160];
	char *init[] = { (char *)"git", (char *)"init", (char *)"-q", pgpkeys, NULL };
	pg_gpg_cache *c = NULL;
	pg_gpg *g;

	make_pgpkeys(pgpkeys, home, s);
	run_ok(init, NULL);
	add_key_file(pgpkeys, home, FPR_GINA);
	git_commit_all(pgpkeys);

	assert_int_equal(pg_gpg_cache_new(&c), 0);
	pg_gpg_cache_use(c);
	g = open_pgpkeys(pgpkeys, s);
	expect(g, SIG_OLGA, "no-key", NULL);
	pg_gpg_free(g);
	assert_int_equal(count_entries(s->tmp), 1);

	/* a file added but not committed: the same commit, the same keys */
	add_key_file(pgpkeys, home, FPR_OLGA);
	g = open_pgpkeys(pgpkeys, s);
	expect(g, SIG_OLGA, "no-key", NULL);
	pg_gpg_free(g);

	/* committed: another commit, the keys imported afresh */
	git_commit_all(pgpkeys);
	g = open_pgpkeys(pgpkeys, s);
	assert_int_equal(count_entries(s->tmp), 1);
	expect(g, SIG_OLGA, "expired-key", NULL);
	expect(g, SIG_GINA, "good", NULL);
	pg_gpg_free(g);

	pg_gpg_cache_use(NULL);
	pg_gpg_cache_free(c);
	assert_int_equal(count_entries(s->tmp), 0);
}

/* Outside git, the key files' names, sizes and times say whether the set changed. */
static void test_cache_sees_a_new_pgpkeys_file(void **state)
{
	scratch *s = *state;
	char pgpkeys[160], home[160];
	pg_gpg_cache *c = NULL;
	pg_gpg *g;

	make_pgpkeys(pgpkeys, home, s);
	add_key_file(pgpkeys, home, FPR_GINA);
	assert_int_equal(pg_gpg_cache_new(&c), 0);
	pg_gpg_cache_use(c);
	g = open_pgpkeys(pgpkeys, s);
	expect(g, SIG_SID, "no-key", NULL);
	pg_gpg_free(g);

	add_key_file(pgpkeys, home, FPR_SID);
	g = open_pgpkeys(pgpkeys, s);
	expect(g, SIG_SID, "expired-sig", NULL);
	pg_gpg_free(g);
	assert_int_equal(count_entries(s->tmp), 1);
	pg_gpg_cache_use(NULL);
	pg_gpg_cache_free(c);
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
		cmocka_unit_test_setup_teardown(test_pgpkeys_directory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pgpkeys_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_sees_a_new_pgpkeys_commit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_cache_sees_a_new_pgpkeys_file, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
