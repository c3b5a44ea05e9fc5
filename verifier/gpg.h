/* gpg.h - OpenPGP signatures made and verified: the one place pullgate uses gpgme. */
#ifndef PG_GPG_H
#define PG_GPG_H

#include "common/buf.h"
#include "common/compat.h"

/*
 * A pg_gpg verifies detached OpenPGP signatures against one keyring.  It
 * owns a gpgme context (gpg.c); no gpgme type or error code leaves gpg.c
 * and gpg_cache.c, which keeps verifiers for reuse.  gpg is run through
 * gpgme, never as a command.  Whether a key is *trusted* for a
 * pull is not decided here: the policy's signer list decides that
 * (verifier/check_signature.c).  Here a signature is judged only by its
 * cryptographic status and the key's flags, never by the web of trust.
 */
typedef struct pg_gpg pg_gpg;

enum pg_gpg_status {
	PG_GPG_GOOD = 0,
	PG_GPG_BAD,          /* the signed bytes or the signature were altered */
	PG_GPG_NO_KEY,       /* the signing key is not in the keyring */
	PG_GPG_EXPIRED_KEY,  /* good, but by a key that has expired */
	PG_GPG_REVOKED_KEY,  /* good, but by a key that has been revoked */
	PG_GPG_EXPIRED_SIG,  /* good, but the signature itself has expired */
	PG_GPG_ERROR,        /* not checkable: not a signature, several, unusable key */
};

/* "good", "bad", "no-key", "expired-key", "revoked-key", "expired-sig", "error". */
const char *pg_gpg_status_name(enum pg_gpg_status s);

/*
 * What one verification found.  Every string is owned by the result and
 * released with pg_gpg_result_release().
 */
typedef struct pg_gpg_result {
	enum pg_gpg_status status;
	/* the key's primary fingerprint (40 upper-case hex digits, even when a
	 * subkey signed), or NULL when the key is not in the keyring */
	char *fingerprint;
	/* the key id or fingerprint the signature names (may be a subkey's),
	 * or NULL when there is no signature at all */
	char *signer;
	/* the e-mail addresses of the key's user ids, revoked ones left out */
	char **emails;
	size_t nemails, emails_alloc;
	int64_t created;     /* when the signature says it was made; 0: unknown */
	char *detail;        /* what gpg said, for PG_GPG_ERROR; else NULL */
} pg_gpg_result;

void pg_gpg_result_release(pg_gpg_result *r);

/* Whether email is among the key's user ids (case-insensitive). */
bool pg_gpg_result_has_email(const pg_gpg_result *r, const char *email);

/* Where a verifier's public keys come from: exactly one of the three. */
typedef struct pg_gpg_keys {
	const char *keyring;    /* an armored (or binary) public keyring file */
	const char *pgpkeys;    /* a pgpkeys.git-style directory: keys/<FINGERPRINT>.asc */
	const char *gnupg_home; /* an existing GNUPGHOME */
} pg_gpg_keys;

/*
 * Open a verifier over exactly one source of keys:
 *  - keyring: the file is imported into a private GNUPGHOME created as
 *    tmpdir/gpg-XXXXXX (tmpdir is made when missing; its parent must
 *    exist), which pg_gpg_free() removes.  The private home never starts
 *    a gpg-agent.
 *  - pgpkeys: every keys/<FINGERPRINT>.asc of the directory (40 or 64 hex
 *    digits; other names are left alone) is imported the same way.  Each
 *    must be a regular file (opened without blocking, a symlink refused)
 *    and must give gpg the key its name says; each, and all together, at
 *    most 64 MiB.  A file that breaks a rule is an error naming it, never
 *    skipped: it may be a signer's key.
 *  - gnupg_home: used as it is; nothing is imported into it and the trust
 *    database is not consulted.
 * Errors: PG_EINVALID (no source or several; a keyring that holds no
 * key; a key file that is no regular file or holds no key of its name),
 * PG_ENOTFOUND (keyring file, pgpkeys directory or gnupg_home missing),
 * PG_ETOOBIG (keys past 64 MiB), PG_EIO, PG_EUNSUPPORTED (no usable gpg
 * engine), PG_ERROR (gpgme failed).
 */
int pg_gpg_open(pg_gpg **out, const pg_gpg_keys *keys, const char *tmpdir);

/* pg_gpg_open over a keyring file or a GNUPGHOME, for callers that take no pgpkeys. */
int pg_gpg_new(pg_gpg **out, const char *keyring, const char *gnupg_home, const char *tmpdir);

/*
 * Free the context and remove the private GNUPGHOME; NULL-safe.  A
 * verifier opened while this thread uses a cache (pg_gpg_cache_use) goes
 * back to the cache instead, keys imported, for the next pg_gpg_open.
 */
void pg_gpg_free(pg_gpg *g);

/*
 * Verifiers kept for reuse.  Importing keys costs a private GNUPGHOME
 * and several gpg processes (about 0.3 s for a small keyring, more for the
 * kernel's); a cache keeps the imported homes and their contexts, so that
 * each pg_gpg_open after the first costs nothing.  A kept verifier is
 * handed out again only while its keys are still what it imported: a
 * keyring file's size, times and inode are checked first, then its bytes;
 * a pgpkeys directory's identity (its HEAD commit when it is a git
 * checkout, else its key files' names, sizes and times) must be the one
 * read before the import.  Changed keys are imported afresh.  A GNUPGHOME
 * is used live, so it is always current.
 *
 * A cache belongs to one thread at a time (a worker: one cache, hence one
 * imported keyring and one gpgme context, per worker).  pg_gpg_cache_use
 * makes it the one pg_gpg_open and pg_gpg_free on this thread use; NULL
 * stops that.  pg_gpg_cache_free frees the kept verifiers and removes
 * their homes; the cache must no longer be in use by any thread.
 */
typedef struct pg_gpg_cache pg_gpg_cache;

int pg_gpg_cache_new(pg_gpg_cache **out);
void pg_gpg_cache_free(pg_gpg_cache *c);
void pg_gpg_cache_use(pg_gpg_cache *c);

/*
 * Signatures verified in the background while the caller does other work
 * (the walk).  pg_gpg_prefetch_start starts a thread that will verify with
 * a verifier over keys (as pg_gpg_open); each pg_gpg_prefetch_add queues
 * one signature.  On the calling thread, a pg_gpg over the same keys then
 * gets the result of a queued signature
 * from pg_gpg_verify (once, waiting for it if need be) instead of running
 * gpg again; anything else it verifies itself, as always.  What the
 * background could not verify (gpg failed) is verified again in the
 * foreground, so every error is reported where it always was.  The prefetch
 * uses the calling thread's cache, or installs one of its own until
 * pg_gpg_prefetch_finish, which waits for the thread, drops unused results
 * and frees what is not the caller's.  Errors: PG_EINVALID (no source of
 * keys or several), PG_ENOMEM, PG_ERROR (no thread).
 */
typedef struct pg_gpg_prefetch pg_gpg_prefetch;

int pg_gpg_prefetch_start(pg_gpg_prefetch **out, const pg_gpg_keys *keys, const char *tmpdir);
int pg_gpg_prefetch_add(pg_gpg_prefetch *pf, const char *payload, size_t payload_len,
			const char *sig, size_t sig_len);
void pg_gpg_prefetch_finish(pg_gpg_prefetch *pf);

/*
 * Verify sig (an armored detached signature) over payload and fill *out
 * (release it with pg_gpg_result_release, also after an error).  A bad,
 * unknown, expired or malformed signature is a status, not an error:
 * the call fails only when the check could not run at all (PG_ENOMEM,
 * PG_EIO, PG_ERROR when gpg could not be run).  Exactly one signature is
 * expected; a block with several is PG_GPG_ERROR.
 */
int pg_gpg_verify(pg_gpg_result *out, pg_gpg *g, const char *payload, size_t payload_len,
		  const char *sig, size_t sig_len);

/*
 * Sign payload with the secret key whose fingerprint is fpr (40 hex
 * digits, the primary key's) in g's GNUPGHOME, and append the armored
 * detached signature to out.  Never prompts: a key that needs a
 * passphrase fails.  PG_ENOTFOUND when the home holds no secret key fpr,
 * PG_EINVALID when fpr is not a fingerprint, PG_ERROR when gpg could not
 * sign (the message says why).
 */
int pg_gpg_sign(pg_buf *out, pg_gpg *g, const char *fpr, const char *payload,
		size_t payload_len);

#endif
