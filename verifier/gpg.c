/* gpg.c - one gpgme context over a keyring, a pgpkeys directory or a GNUPGHOME: detached OpenPGP signatures verified and made. */
#include "verifier/gpg_internal.h"
#include "common/array.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/hex.h"
#include "common/map.h"
#include "common/str.h"
#include "verifier/pgpkeys.h"

#include <ftw.h>
#include <pthread.h>
#include <unistd.h>

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static bool init_ok;

static void init_gpgme(void)
{
	/* also makes gpgme ignore SIGPIPE, so a gpg that exits early cannot kill us */
	init_ok = gpgme_check_version(NULL) != NULL &&
		  gpgme_engine_check_version(GPGME_PROTOCOL_OpenPGP) == 0;
}

/* Convert a gpgme error at the boundary: "what: gpgme's message". */
static int fail(gpgme_error_t e, const char *what)
{
	char msg[256];
	gpgme_err_code_t code = gpgme_err_code(e);
	int pg = code == GPG_ERR_ENOMEM ? PG_ENOMEM :
		 (code & GPG_ERR_SYSTEM_ERROR) ? PG_EIO : PG_ERROR;

	if (gpgme_strerror_r(e, msg, sizeof(msg)) != 0)
		snprintf(msg, sizeof(msg), "gpgme error %u", (unsigned)code);
	return pg_error_set(pg, "%s: %s", what, msg);
}

const char *pg_gpg_status_name(enum pg_gpg_status s)
{
	switch (s) {
	case PG_GPG_GOOD: return "good";
	case PG_GPG_BAD: return "bad";
	case PG_GPG_NO_KEY: return "no-key";
	case PG_GPG_EXPIRED_KEY: return "expired-key";
	case PG_GPG_REVOKED_KEY: return "revoked-key";
	case PG_GPG_EXPIRED_SIG: return "expired-sig";
	case PG_GPG_ERROR: return "error";
	}
	return "error";
}

void pg_gpg_result_release(pg_gpg_result *r)
{
	if (!r)
		return;
	pg_str_list_free(r->emails, r->nemails);
	free(r->fingerprint);
	free(r->signer);
	free(r->detail);
	memset(r, 0, sizeof(*r));
}

bool pg_gpg_result_has_email(const pg_gpg_result *r, const char *email)
{
	size_t i;

	for (i = 0; email && i < r->nemails; i++)
		if (!strcasecmp(r->emails[i], email))
			return true;
	return false;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

/* Back to no context: the gpgme context and the private home go. */
static void close_ctx(pg_gpg *g)
{
	if (g->ctx)
		gpgme_release(g->ctx);
	if (g->tmp_home)
		nftw(g->tmp_home, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
	free(g->tmp_home);
	g->ctx = NULL;
	g->tmp_home = NULL;
	pg_buf_clear(&g->ring);
	pg_buf_clear(&g->ring_id);
}

void pg_gpg_destroy(pg_gpg *g)
{
	if (!g)
		return;
	close_ctx(g);
	pg_gpg_source_release(&g->src);
	free(g->tmpdir);
	pg_buf_release(&g->ring);
	pg_buf_release(&g->ring_id);
	free(g);
}

/*
 * A private home: gpg.conf keeps gpg from starting an agent (importing
 * public keys would otherwise start one that outlives us).
 */
static int make_tmp_home(char **out, const char *tmpdir)
{
	static const char conf[] = "no-autostart\n";
	pg_buf path = PG_BUF_INIT;
	char *home = NULL;
	int err;

	*out = NULL;
	if (mkdir(tmpdir, 0700) < 0 && errno != EEXIST)
		return pg_error_set(PG_EIO, "'%s': %s", tmpdir, strerror(errno));
	if ((err = pg_buf_printf(&path, "%s/gpg-XXXXXX", tmpdir)) < 0)
		goto done;
	if (!mkdtemp(path.ptr)) {
		err = pg_error_set(PG_EIO, "'%s': %s", path.ptr, strerror(errno));
		goto done;
	}
	if (!(home = pg_strdup(path.ptr))) {
		rmdir(path.ptr);
		err = PG_ENOMEM;
		goto done;
	}
	*out = home; /* from here on pg_gpg_free removes it */
	if ((err = pg_buf_puts(&path, "/gpg.conf")) < 0)
		goto done;
	err = pg_write_file_atomic(path.ptr, conf, sizeof(conf) - 1);
done:
	pg_buf_release(&path);
	return err;
}

int pg_gpg_read_keyring(pg_buf *bytes, struct stat *st, const char *keyring)
{
	int err;

	pg_buf_clear(bytes);
	bytes->max = PG_GPG_KEYRING_MAX;
	if (stat(keyring, st) < 0)
		memset(st, 0, sizeof(*st));
	if ((err = pg_buf_read_file(bytes, keyring)) < 0)
		return pg_error_wrap(err, "keyring");
	return 0;
}

/*
 * Import len bytes of keys into g's home; *res (NULL when gpg refused
 * them all) lasts until the next operation on g's context.  Only a
 * failure of the system is an error: what the bytes hold is the caller's
 * to judge from *res.
 */
static int import_bytes(gpgme_import_result_t *res, pg_gpg *g, const char *bytes, size_t len)
{
	gpgme_data_t dh = NULL;
	gpgme_error_t e;
	int err = 0;

	*res = NULL;
	if ((e = gpgme_data_new_from_mem(&dh, bytes, len, 0)) != 0)
		return fail(e, "gpgme_data_new_from_mem");
	e = gpgme_op_import(g->ctx, dh);
	*res = e ? NULL : gpgme_op_import_result(g->ctx);
	if (gpgme_err_code(e) == GPG_ERR_ENOMEM || (gpgme_err_code(e) & GPG_ERR_SYSTEM_ERROR))
		err = fail(e, "importing the keyring");
	gpgme_data_release(dh);
	return err;
}

static int import_keyring(pg_gpg *g)
{
	gpgme_import_result_t res;
	int err;

	if ((err = pg_gpg_read_keyring(&g->ring, &g->ring_st, g->src.keyring)) < 0 ||
	    (err = import_bytes(&res, g, g->ring.ptr, g->ring.len)) < 0)
		return err;
	if (!res || res->considered == 0 || res->imported + res->unchanged == 0)
		return pg_error_set(PG_EINVALID, "keyring '%s' holds no OpenPGP public key",
				    g->src.keyring);
	return 0;
}

/* Mark the key files whose key res says gpg took (imported now or before). */
static int mark_imported(pg_pgpkeys *keys, gpgme_import_result_t res)
{
	pg_map by_fpr = PG_MAP_INIT;
	gpgme_import_status_t st;
	char fpr[65];
	size_t i, n;
	int err = 0;

	for (i = 0; i < keys->nfiles && err == 0; i++)
		err = pg_map_sets(&by_fpr, keys->files[i].fpr, &keys->files[i]);
	for (st = res ? res->imports : NULL; st && err == 0; st = st->next) {
		pg_pgpkey *k;

		if (st->result || !st->fpr || (n = strlen(st->fpr)) >= sizeof(fpr))
			continue;
		for (i = 0; i <= n; i++)
			fpr[i] = (char)(st->fpr[i] >= 'a' && st->fpr[i] <= 'f' ?
					st->fpr[i] - 'a' + 'A' : st->fpr[i]);
		if ((k = pg_map_gets(&by_fpr, fpr)))
			k->imported = true;
	}
	pg_map_release(&by_fpr);
	return err;
}

/*
 * Every key file of the directory, imported in one go.  A file whose key
 * gpg did not take is imported again alone, so that a file damaged in a
 * way that spoils the rest of the import is the one named, and none is
 * passed over: it may hold a signer's key.
 */
static int import_pgpkeys(pg_gpg *g)
{
	pg_pgpkeys keys = PG_PGPKEYS_INIT;
	gpgme_import_result_t res;
	size_t i;
	int err;

	/* named before the files are read: a change meanwhile is seen the next time */
	if ((err = pg_pgpkeys_identity(&g->ring_id, g->src.pgpkeys)) < 0 ||
	    (err = pg_pgpkeys_read(&keys, g->src.pgpkeys, PG_GPG_KEYRING_MAX)) < 0 ||
	    (err = import_bytes(&res, g, keys.bytes.ptr, keys.bytes.len)) < 0 ||
	    (err = mark_imported(&keys, res)) < 0)
		goto done;
	for (i = 0; i < keys.nfiles; i++) {
		pg_pgpkey *k = &keys.files[i];

		if (k->imported)
			continue;
		if ((err = import_bytes(&res, g, keys.bytes.ptr + k->off, k->len)) < 0 ||
		    (err = mark_imported(&keys, res)) < 0)
			goto done;
		if (!k->imported) {
			err = pg_error_set(PG_EINVALID, "pgpkeys: key file '%s' gives gpg no "
					   "usable key %s: it is damaged or holds another key",
					   k->path, k->fpr);
			goto done;
		}
	}
done:
	pg_pgpkeys_release(&keys);
	return err;
}

int pg_gpg_open_ctx(pg_gpg *g)
{
	bool private = g->src.keyring || g->src.pgpkeys;
	gpgme_error_t e;
	int err = 0;

	if ((e = gpgme_new(&g->ctx)) != 0) {
		g->ctx = NULL;
		return fail(e, "gpgme_new");
	}
	if (private && (err = make_tmp_home(&g->tmp_home, g->tmpdir)) < 0)
		goto done;
	if ((e = gpgme_set_protocol(g->ctx, GPGME_PROTOCOL_OpenPGP)) != 0 ||
	    (e = gpgme_ctx_set_engine_info(g->ctx, GPGME_PROTOCOL_OpenPGP, NULL,
					   private ? g->tmp_home : g->src.gnupg_home)) != 0 ||
	    /* trust comes from the policy; "always" also leaves the trustdb alone */
	    (e = gpgme_set_ctx_flag(g->ctx, "trust-model", "always")) != 0) {
		err = fail(e, "setting up gpgme");
		goto done;
	}
	gpgme_set_offline(g->ctx, 1);
	if (g->src.keyring)
		err = import_keyring(g);
	else if (g->src.pgpkeys)
		err = import_pgpkeys(g);
done:
	if (err < 0)
		close_ctx(g);
	return err;
}

int pg_gpg_source_copy(pg_gpg_source *out, const pg_gpg_keys *keys, const char *tmpdir)
{
	const char *private = keys->keyring ? "keyring" : keys->pgpkeys ? "pgpkeys" : NULL;
	int n = !!keys->keyring + !!keys->pgpkeys + !!keys->gnupg_home;

	memset(out, 0, sizeof(*out));
	if (n != 1)
		return pg_error_set(PG_EINVALID, "give one of a keyring file, a pgpkeys directory "
				    "and a GNUPGHOME, not %s", n ? "several" : "none");
	if (private && !tmpdir)
		return pg_error_set(PG_EINVALID, "%s '%s': no directory for a private GNUPGHOME",
				    private, keys->keyring ? keys->keyring : keys->pgpkeys);
	if ((keys->keyring && !(out->keyring = pg_strdup(keys->keyring))) ||
	    (keys->pgpkeys && !(out->pgpkeys = pg_strdup(keys->pgpkeys))) ||
	    (keys->gnupg_home && !(out->gnupg_home = pg_strdup(keys->gnupg_home)))) {
		pg_gpg_source_release(out);
		return PG_ENOMEM;
	}
	return 0;
}

void pg_gpg_source_release(pg_gpg_source *s)
{
	free(s->keyring);
	free(s->pgpkeys);
	free(s->gnupg_home);
	memset(s, 0, sizeof(*s));
}

static bool same_path(const char *a, const char *b)
{
	return a ? b && !strcmp(a, b) : !b;
}

bool pg_gpg_source_same(const pg_gpg_source *a, const pg_gpg_source *b)
{
	return same_path(a->keyring, b->keyring) && same_path(a->pgpkeys, b->pgpkeys) &&
	       same_path(a->gnupg_home, b->gnupg_home);
}

int pg_gpg_shell(pg_gpg **out, const pg_gpg_keys *keys, const char *tmpdir)
{
	pg_gpg *g;
	struct stat st;
	int err;

	*out = NULL;
	if (!(g = calloc(1, sizeof(*g))))
		return pg_error_oom();
	pg_buf_init(&g->ring, PG_GPG_KEYRING_MAX);
	pg_buf_init(&g->ring_id, 0);
	if ((err = pg_gpg_source_copy(&g->src, keys, tmpdir)) < 0)
		goto fail;
	if (keys->gnupg_home && (stat(keys->gnupg_home, &st) < 0 || !S_ISDIR(st.st_mode))) {
		err = pg_error_set(PG_ENOTFOUND, "GNUPGHOME '%s' is not a directory",
				   keys->gnupg_home);
		goto fail;
	}
	pthread_once(&init_once, init_gpgme);
	if (!init_ok) {
		err = pg_error_set(PG_EUNSUPPORTED, "gpgme found no usable OpenPGP engine (gpg)");
		goto fail;
	}
	if (tmpdir && !(g->tmpdir = pg_strdup(tmpdir))) {
		err = PG_ENOMEM;
		goto fail;
	}
	*out = g;
	return 0;
fail:
	pg_gpg_destroy(g);
	return err;
}

static int add_email(pg_gpg_result *r, const char *email)
{
	int err;

	if (!email || !*email || pg_gpg_result_has_email(r, email))
		return 0;
	if ((err = PG_ARRAY_GROW(r->emails, r->nemails + 1, r->emails_alloc)) < 0)
		return err;
	if (!(r->emails[r->nemails] = pg_strdup(email)))
		return PG_ENOMEM;
	r->nemails++;
	return 0;
}

static int set_error(pg_gpg_result *r, const char *what, gpgme_error_t e)
{
	char msg[256] = "";
	pg_buf b = PG_BUF_INIT;
	int err;

	r->status = PG_GPG_ERROR;
	if (e && gpgme_strerror_r(e, msg, sizeof(msg)) != 0)
		snprintf(msg, sizeof(msg), "gpgme error %u", (unsigned)gpgme_err_code(e));
	if ((err = pg_buf_printf(&b, "%s%s%s", what, *msg ? ": " : "", msg)) == 0)
		r->detail = pg_buf_detach(&b);
	pg_buf_release(&b);
	return r->detail ? 0 : err < 0 ? err : PG_ENOMEM;
}

/* The key behind the signature: primary fingerprint, e-mails, revoked/expired flags. */
static int describe_key(pg_gpg_result *r, pg_gpg *g, const char *signer)
{
	gpgme_key_t key = NULL;
	gpgme_user_id_t uid;
	gpgme_error_t e;
	int err = 0;

	e = gpgme_get_key(g->ctx, signer, &key, 0);
	if (gpgme_err_code(e) == GPG_ERR_EOF || gpgme_err_code(e) == GPG_ERR_AMBIGUOUS_NAME ||
	    (e == 0 && (!key || !key->subkeys || !key->subkeys->fpr))) {
		/* without the key's fingerprint nobody can say who signed */
		gpgme_key_unref(key);
		return set_error(r, "the signing key cannot be listed", 0);
	}
	if (e)
		return fail(e, "looking up the signing key");
	if (!(r->fingerprint = pg_strdup(key->subkeys->fpr))) {
		err = PG_ENOMEM;
		goto done;
	}
	/* a revoked key's uids all show as revoked; they still say whose it was */
	for (uid = key->uids; uid && err == 0; uid = uid->next)
		if ((!uid->revoked && !uid->invalid) || key->revoked || key->expired)
			err = add_email(r, uid->email);
	/* gpg says so in the status already; the key's own flags are the backstop */
	if (r->status == PG_GPG_GOOD && key->revoked)
		r->status = PG_GPG_REVOKED_KEY;
	else if (r->status == PG_GPG_GOOD && key->expired)
		r->status = PG_GPG_EXPIRED_KEY;
done:
	gpgme_key_unref(key);
	return err;
}

static enum pg_gpg_status status_of(gpgme_signature_t s)
{
	switch (gpgme_err_code(s->status)) {
	case GPG_ERR_NO_ERROR:
		break;
	case GPG_ERR_BAD_SIGNATURE:
		return PG_GPG_BAD;
	case GPG_ERR_NO_PUBKEY:
		return PG_GPG_NO_KEY;
	case GPG_ERR_CERT_REVOKED:
		return PG_GPG_REVOKED_KEY;
	case GPG_ERR_KEY_EXPIRED:
		return PG_GPG_EXPIRED_KEY;
	case GPG_ERR_SIG_EXPIRED:
		return PG_GPG_EXPIRED_SIG;
	default:
		return PG_GPG_ERROR;
	}
	if (s->summary & GPGME_SIGSUM_RED)
		return PG_GPG_BAD;
	if (s->summary & GPGME_SIGSUM_KEY_MISSING)
		return PG_GPG_NO_KEY;
	if (s->summary & GPGME_SIGSUM_KEY_REVOKED)
		return PG_GPG_REVOKED_KEY;
	if (s->summary & GPGME_SIGSUM_KEY_EXPIRED)
		return PG_GPG_EXPIRED_KEY;
	if (s->summary & GPGME_SIGSUM_SIG_EXPIRED)
		return PG_GPG_EXPIRED_SIG;
	if (s->wrong_key_usage)
		return PG_GPG_ERROR;
	return PG_GPG_GOOD;
}

int pg_gpg_verify_now(pg_gpg_result *out, pg_gpg *g, const char *payload, size_t payload_len,
		      const char *sig, size_t sig_len)
{
	gpgme_data_t sigdata = NULL, text = NULL;
	gpgme_verify_result_t res;
	gpgme_signature_t s;
	gpgme_error_t e;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if ((e = gpgme_data_new_from_mem(&sigdata, sig, sig_len, 0)) != 0 ||
	    (e = gpgme_data_new_from_mem(&text, payload, payload_len, 0)) != 0) {
		err = fail(e, "gpgme_data_new_from_mem");
		goto done;
	}
	e = gpgme_op_verify(g->ctx, sigdata, text, NULL);
	if (gpgme_err_code(e) == GPG_ERR_ENOMEM || (gpgme_err_code(e) & GPG_ERR_SYSTEM_ERROR)) {
		err = fail(e, "running gpg");
		goto done;
	}
	/* anything else wrong comes from the signature bytes: a status, not an error */
	if (e) {
		err = set_error(out, "not a usable OpenPGP signature", e);
		goto done;
	}
	res = gpgme_op_verify_result(g->ctx);
	if (!res || !(s = res->signatures)) {
		err = set_error(out, "no signature found", 0);
		goto done;
	}
	if (s->next) {
		err = set_error(out, "more than one signature: pullgate expects exactly one", 0);
		goto done;
	}
	out->status = status_of(s);
	out->created = (int64_t)s->timestamp;
	if (s->fpr && !(out->signer = pg_strdup(s->fpr))) {
		err = PG_ENOMEM;
		goto done;
	}
	if (out->status == PG_GPG_ERROR) {
		err = set_error(out, s->wrong_key_usage ? "the key may not be used for signing" :
				"the signature could not be checked", s->status);
		goto done;
	}
	if (out->signer && out->status != PG_GPG_NO_KEY)
		err = describe_key(out, g, out->signer);
done:
	gpgme_data_release(sigdata);
	gpgme_data_release(text);
	return err;
}

static bool is_fingerprint(const char *s)
{
	size_t n = strlen(s);

	return (n == 40 || n == 64) && pg_hex_is(s, n);
}

/* Asked for a passphrase: say no, and remember it was asked. */
static gpgme_error_t no_passphrase(void *hook, const char *uid_hint, const char *info,
				   int prev_bad, int fd)
{
	(void)uid_hint;
	(void)info;
	(void)prev_bad;
	(void)fd;
	*(bool *)hook = true;
	return gpg_error(GPG_ERR_CANCELED);
}

int pg_gpg_sign(pg_buf *out, pg_gpg *g, const char *fpr, const char *payload,
		size_t payload_len)
{
	bool asked = false;
	gpgme_data_t text = NULL, sig = NULL;
	gpgme_key_t key = NULL;
	gpgme_sign_result_t res;
	gpgme_error_t e;
	char *armored = NULL;
	size_t len = 0;
	int err = 0;

	if (!is_fingerprint(fpr))
		return pg_error_set(PG_EINVALID, "'%s' is not a key fingerprint (40 hex digits)", fpr);
	e = gpgme_get_key(g->ctx, fpr, &key, 1);
	if (gpgme_err_code(e) == GPG_ERR_EOF || (e == 0 && (!key || !key->can_sign)))
		err = pg_error_set(PG_ENOTFOUND, "no secret key %s that can sign in the GNUPGHOME",
				   fpr);
	else if (e)
		err = fail(e, "looking up the signing key");
	if (err < 0)
		goto done;
	gpgme_signers_clear(g->ctx);
	gpgme_set_armor(g->ctx, 1);
	gpgme_set_textmode(g->ctx, 0);
	/* a service never waits for a pinentry: a protected key fails here */
	gpgme_set_passphrase_cb(g->ctx, no_passphrase, &asked);
	if ((e = gpgme_set_pinentry_mode(g->ctx, GPGME_PINENTRY_MODE_LOOPBACK)) != 0 ||
	    (e = gpgme_signers_add(g->ctx, key)) != 0 ||
	    (e = gpgme_data_new_from_mem(&text, payload, payload_len, 0)) != 0 ||
	    (e = gpgme_data_new(&sig)) != 0) {
		err = fail(e, "setting up the signature");
		goto done;
	}
	if ((e = gpgme_op_sign(g->ctx, text, sig, GPGME_SIG_MODE_DETACH)) != 0) {
		err = asked ? pg_error_set(PG_ERROR, "key %s needs a passphrase: pullgate signs "
					   "without prompting, with a key that has none", fpr) :
			      fail(e, "gpg could not sign");
		goto done;
	}
	res = gpgme_op_sign_result(g->ctx);
	if (!res || !res->signatures || res->signatures->next || res->invalid_signers) {
		err = pg_error_set(PG_ERROR, "signing with key %s: gpg made no single signature",
				   fpr);
		goto done;
	}
	armored = gpgme_data_release_and_get_mem(sig, &len);
	sig = NULL;
	err = armored ? pg_buf_put(out, armored, len) : pg_error_oom();
done:
	gpgme_free(armored);
	gpgme_set_passphrase_cb(g->ctx, NULL, NULL);
	gpgme_signers_clear(g->ctx);
	gpgme_data_release(text);
	gpgme_data_release(sig);
	gpgme_key_unref(key);
	return err;
}
