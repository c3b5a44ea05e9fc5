/* gpg_internal.h - the verifier that gpg.c and gpg_cache.c share (private): gpgme stays in these two. */
#ifndef PG_GPG_INTERNAL_H
#define PG_GPG_INTERNAL_H

#include "verifier/gpg.h"

#include <gpgme.h>
#include <sys/stat.h>

/* the kernel's whole pgpkeys keyring is a few MiB */
#define PG_GPG_KEYRING_MAX ((size_t)64 << 20)

/* A verifier's source of keys, its own copy: exactly one is set. */
typedef struct pg_gpg_source {
	char *keyring, *pgpkeys, *gnupg_home;
} pg_gpg_source;

/* Check keys (one source; a directory for a private home when one is needed) and copy them. */
int pg_gpg_source_copy(pg_gpg_source *out, const pg_gpg_keys *keys, const char *tmpdir);
void pg_gpg_source_release(pg_gpg_source *s);
/* Whether two sources name the same keys. */
bool pg_gpg_source_same(const pg_gpg_source *a, const pg_gpg_source *b);

struct pg_gpg {
	gpgme_ctx_t ctx;     /* NULL until needed, while a prefetch verifies for it */
	char *tmp_home;      /* our private GNUPGHOME, removed on free; NULL for the policy's */
	pg_gpg_cache *cache; /* where pg_gpg_free leaves it, or NULL */
	pg_gpg_source src;   /* what it verifies with */
	char *tmpdir;
	pg_buf ring;         /* the keyring's bytes, as imported */
	struct stat ring_st; /* the keyring file when they were read */
	pg_buf ring_id;      /* pgpkeys: the identity of the set imported (pgpkeys.h) */
};

/* gpg.c: a verifier's context, made and unmade. */

/* A verifier without a context yet, or an error for arguments pg_gpg_open refuses. */
int pg_gpg_shell(pg_gpg **out, const pg_gpg_keys *keys, const char *tmpdir);

/*
 * The context, its private home and the imported keys, for a verifier
 * that has none; on failure it has none again.
 */
int pg_gpg_open_ctx(pg_gpg *g);

/* Free g and its context, whatever cache it came from. */
void pg_gpg_destroy(pg_gpg *g);

/* Read the keyring and its identity; it is kept to tell a changed keyring later. */
int pg_gpg_read_keyring(pg_buf *bytes, struct stat *st, const char *keyring);

/* pg_gpg_verify with the context g has, never a result verified ahead. */
int pg_gpg_verify_now(pg_gpg_result *out, pg_gpg *g, const char *payload, size_t payload_len,
		      const char *sig, size_t sig_len);

#endif
