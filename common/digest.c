/* digest.c - SHA-256 and random nonces through libcrypto, in one place for the layers above. */
#include "common/digest.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/hex.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <unistd.h>

int pg_sha256_hex(char *out, const void *data, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;

	out[0] = '\0';
	if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != 32)
		return pg_error_set(PG_ERROR, "SHA-256 failed");
	pg_hex_encode(out, md, n);
	return 0;
}

int pg_sha256_file(char *out, const char *path)
{
	EVP_MD_CTX *ctx = NULL;
	unsigned char md[EVP_MAX_MD_SIZE], block[1 << 16];
	unsigned n = 0;
	ssize_t got;
	int fd, err = 0;

	out[0] = '\0';
	if ((err = pg_open_regular(&fd, NULL, path, PG_OPEN_READ, NULL)) < 0)
		return err;
	if (!(ctx = EVP_MD_CTX_new()) || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		err = pg_error_set(PG_ERROR, "SHA-256 failed");
		goto done;
	}
	while ((got = read(fd, block, sizeof(block))) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = pg_error_set(PG_EIO, "'%s': %s", path, strerror(errno));
			goto done;
		}
		if (!EVP_DigestUpdate(ctx, block, (size_t)got)) {
			err = pg_error_set(PG_ERROR, "SHA-256 failed");
			goto done;
		}
	}
	if (!EVP_DigestFinal_ex(ctx, md, &n) || n != 32) {
		err = pg_error_set(PG_ERROR, "SHA-256 failed");
		goto done;
	}
	pg_hex_encode(out, md, n);
done:
	EVP_MD_CTX_free(ctx);
	close(fd);
	return err;
}

int pg_sha1_fd(unsigned char out[20], int fd, uint64_t len, const char *what)
{
	EVP_MD_CTX *ctx = NULL;
	unsigned char md[EVP_MAX_MD_SIZE], block[1 << 16];
	unsigned n = 0;
	uint64_t off = 0;
	int err = 0;

	if (!(ctx = EVP_MD_CTX_new()) || !EVP_DigestInit_ex(ctx, EVP_sha1(), NULL)) {
		err = pg_error_set(PG_ERROR, "SHA-1 failed");
		goto done;
	}
	while (off < len) {
		size_t want = len - off < sizeof(block) ? (size_t)(len - off) : sizeof(block);
		ssize_t got = pread(fd, block, want, (off_t)off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			err = pg_error_set(PG_EIO, "'%s': %s", what, got < 0 ? strerror(errno) :
					   "shorter than it was");
			goto done;
		}
		if (!EVP_DigestUpdate(ctx, block, (size_t)got)) {
			err = pg_error_set(PG_ERROR, "SHA-1 failed");
			goto done;
		}
		off += (uint64_t)got;
	}
	if (!EVP_DigestFinal_ex(ctx, md, &n) || n != 20) {
		err = pg_error_set(PG_ERROR, "SHA-1 failed");
		goto done;
	}
	memcpy(out, md, 20);
done:
	EVP_MD_CTX_free(ctx);
	return err;
}

int pg_random_hex(pg_buf *out, size_t nbytes)
{
	unsigned char raw[64];
	int err;

	if (nbytes > sizeof(raw))
		return pg_error_set(PG_EINVALID, "at most %zu random bytes at once", sizeof(raw));
	if (RAND_bytes(raw, (int)nbytes) != 1)
		return pg_error_set(PG_ERROR, "the random number generator failed");
	err = pg_hex_put(out, raw, nbytes);
	/* the bytes may be a session id or a secret */
	OPENSSL_cleanse(raw, sizeof(raw));
	return err;
}
