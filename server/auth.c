/* auth.c - HMAC hook signatures, PBKDF2 passwords and the session table, over libcrypto. */
#include "server/auth.h"
#include "common/digest.h"
#include "common/error.h"
#include "common/hex.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <pthread.h>

#define SESSION_BYTES 32
#define SALT_BYTES 16
#define HASH_BYTES 32
#define USER_MAX 128

int pg_auth_hmac_hex(pg_buf *out, const char *secret, const void *data, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	int err;

	if (!HMAC(EVP_sha256(), secret, (int)strlen(secret), data, len, md, &mdlen))
		return pg_error_set(PG_ERROR, "HMAC-SHA256 failed");
	err = pg_hex_put(out, md, mdlen);
	OPENSSL_cleanse(md, sizeof(md));
	return err;
}

bool pg_auth_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	if (la != lb)
		return false;
	return CRYPTO_memcmp(a, b, la) == 0;
}

/* The hex HMAC-SHA256 of "TIMESTAMP.BODY", fed in pieces (the body is not copied). */
static int hmac_signed(pg_buf *out, const char *secret, const char *timestamp, const void *body,
		       size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	size_t mdlen = 0;
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	int err = 0;

	if (!ctx || !EVP_MAC_init(ctx, (const unsigned char *)secret, strlen(secret), params) ||
	    !EVP_MAC_update(ctx, (const unsigned char *)timestamp, strlen(timestamp)) ||
	    !EVP_MAC_update(ctx, (const unsigned char *)".", 1) ||
	    !EVP_MAC_update(ctx, body, len) || !EVP_MAC_final(ctx, md, &mdlen, sizeof(md)))
		err = pg_error_set(PG_ERROR, "HMAC-SHA256 failed");
	else
		err = pg_hex_put(out, md, mdlen);
	OPENSSL_cleanse(md, sizeof(md));
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	return err;
}

int pg_auth_hook_verify(const char *secret, const char *header, const char *timestamp,
			const void *body, size_t len)
{
	pg_buf want = PG_BUF_INIT;
	char got[65];
	size_t i;
	int err;

	if (!header)
		return pg_error_set(PG_EINVALID, "the request carries no signature");
	if (!timestamp)
		return pg_error_set(PG_EINVALID, "the request carries no X-Pullgate-Timestamp: "
				    "sign 'TIMESTAMP.BODY' and send the timestamp with it");
	if (strncmp(header, "sha256=", 7) || strlen(header + 7) != 64)
		return pg_error_set(PG_EINVALID, "the signature is not 'sha256=<64 hex digits>'");
	for (i = 0; i < 64; i++) {
		char c = header[7 + i];

		got[i] = c >= 'A' && c <= 'F' ? (char)(c + 32) : c;
	}
	got[64] = '\0';
	if ((err = hmac_signed(&want, secret, timestamp, body, len)) < 0)
		return err;
	err = pg_auth_equal(want.ptr, got) ? 0 :
		pg_error_set(PG_EINVALID, "the signature does not match the timestamp and the body");
	pg_buf_release_secret(&want);
	return err;
}

static int pbkdf2(unsigned char out[HASH_BYTES], const char *password, const unsigned char *salt,
		  size_t saltlen, unsigned iterations)
{
	if (PKCS5_PBKDF2_HMAC(password, (int)strlen(password), salt, (int)saltlen, (int)iterations,
			      EVP_sha256(), HASH_BYTES, out) != 1)
		return pg_error_set(PG_ERROR, "PBKDF2 failed");
	return 0;
}

int pg_auth_password_hash(pg_buf *out, const char *password, unsigned iterations)
{
	unsigned char salt[SALT_BYTES], hash[HASH_BYTES];
	int err;

	if (!iterations)
		iterations = PG_AUTH_PBKDF2_ITERATIONS;
	if (RAND_bytes(salt, sizeof(salt)) != 1)
		return pg_error_set(PG_EIO, "the random number generator failed");
	if ((err = pbkdf2(hash, password, salt, sizeof(salt), iterations)) == 0 &&
	    (err = pg_buf_printf(out, "pbkdf2-sha256$%u$", iterations)) == 0 &&
	    (err = pg_hex_put(out, salt, sizeof(salt))) == 0 &&
	    (err = pg_buf_putc(out, '$')) == 0)
		err = pg_hex_put(out, hash, sizeof(hash));
	OPENSSL_cleanse(hash, sizeof(hash));
	return err;
}

int pg_auth_password_check(const char *stored, const char *password)
{
	unsigned char salt[SALT_BYTES], want[HASH_BYTES], got[HASH_BYTES];
	const char *p = stored, *salt_end;
	unsigned long iterations;
	char *end;
	int err = PG_EINVALID;

	if (strncmp(p, "pbkdf2-sha256$", 14))
		return pg_error_set(PG_EINVALID, "not a pbkdf2-sha256 hash");
	p += 14;
	iterations = strtoul(p, &end, 10);
	if (end == p || *end != '$' || iterations < 1000 || iterations > 10000000)
		return pg_error_set(PG_EINVALID, "malformed password hash");
	p = end + 1;
	if (!(salt_end = strchr(p, '$')) ||
	    pg_hex_decode(salt, sizeof(salt), p, (size_t)(salt_end - p)) < 0 ||
	    pg_hex_decode(want, sizeof(want), salt_end + 1, strlen(salt_end + 1)) < 0)
		return pg_error_set(PG_EINVALID, "malformed password hash");
	if ((err = pbkdf2(got, password, salt, sizeof(salt), (unsigned)iterations)) == 0)
		err = CRYPTO_memcmp(got, want, sizeof(got)) == 0 ? 0 :
			pg_error_set(PG_EINVALID, "wrong password");
	OPENSSL_cleanse(got, sizeof(got));
	OPENSSL_cleanse(want, sizeof(want));
	return err;
}

/* --- sessions ---------------------------------------------------------------- */

typedef struct session {
	char id[2 * SESSION_BYTES + 1];   /* "" when the slot is free */
	char csrf[2 * SESSION_BYTES + 1];
	char user[USER_MAX];
	time_t expires;
} session;

struct pg_sessions {
	pthread_mutex_t lock;
	unsigned max_age;
	session slots[PG_SESSIONS_MAX];
};

int pg_sessions_new(pg_sessions **out, unsigned max_age)
{
	pg_sessions *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return pg_error_oom();
	pthread_mutex_init(&s->lock, NULL);
	s->max_age = max_age ? max_age : 12 * 3600;
	*out = s;
	return 0;
}

void pg_sessions_free(pg_sessions *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	OPENSSL_cleanse(s, sizeof(*s));
	free(s);
}

static void copy_hex(char *dst, size_t cap, const pg_buf *src)
{
	size_t n = src->len < cap - 1 ? src->len : cap - 1;

	memcpy(dst, src->ptr, n);
	dst[n] = '\0';
}

int pg_sessions_create(pg_sessions *s, pg_buf *id, pg_buf *csrf, const char *user, time_t now)
{
	pg_buf sid = PG_BUF_INIT, tok = PG_BUF_INIT;
	session *slot = NULL;
	size_t i;
	int err;

	if (strlen(user) >= USER_MAX)
		return pg_error_set(PG_EINVALID, "user name too long");
	if ((err = pg_random_hex(&sid, SESSION_BYTES)) < 0 ||
	    (err = pg_random_hex(&tok, SESSION_BYTES)) < 0)
		goto done;
	pthread_mutex_lock(&s->lock);
	/* a free or expired slot, else the one closest to expiry */
	for (i = 0; i < PG_SESSIONS_MAX; i++) {
		session *c = &s->slots[i];

		if (!c->id[0] || c->expires <= now) {
			slot = c;
			break;
		}
		if (!slot || c->expires < slot->expires)
			slot = c;
	}
	copy_hex(slot->id, sizeof(slot->id), &sid);
	copy_hex(slot->csrf, sizeof(slot->csrf), &tok);
	snprintf(slot->user, sizeof(slot->user), "%s", user);
	slot->expires = now + (time_t)s->max_age;
	pthread_mutex_unlock(&s->lock);
	if ((err = pg_buf_put(id, sid.ptr, sid.len)) == 0)
		err = pg_buf_put(csrf, tok.ptr, tok.len);
done:
	pg_buf_release_secret(&sid);
	pg_buf_release_secret(&tok);
	return err;
}

int pg_sessions_find(pg_sessions *s, pg_buf *user, pg_buf *csrf, const char *id, time_t now)
{
	size_t i;
	int err = PG_ENOTFOUND;

	if (!id || strlen(id) != 2 * SESSION_BYTES)
		return pg_error_set(PG_ENOTFOUND, "no session");
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < PG_SESSIONS_MAX; i++) {
		session *c = &s->slots[i];

		/* every slot is compared, in constant time, so timing tells nothing */
		if (c->id[0] && CRYPTO_memcmp(c->id, id, 2 * SESSION_BYTES) == 0 &&
		    c->expires > now && err == PG_ENOTFOUND) {
			err = pg_buf_puts(user, c->user);
			if (err == 0 && csrf)
				err = pg_buf_puts(csrf, c->csrf);
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (err == PG_ENOTFOUND)
		return pg_error_set(PG_ENOTFOUND, "no session");
	return err;
}

void pg_sessions_end(pg_sessions *s, const char *id)
{
	size_t i;

	if (!id || strlen(id) != 2 * SESSION_BYTES)
		return;
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < PG_SESSIONS_MAX; i++)
		if (s->slots[i].id[0] && CRYPTO_memcmp(s->slots[i].id, id, 2 * SESSION_BYTES) == 0)
			OPENSSL_cleanse(&s->slots[i], sizeof(s->slots[i]));
	pthread_mutex_unlock(&s->lock);
}
