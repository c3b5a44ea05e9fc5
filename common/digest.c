/* digest.c - SHA-256 and random nonces through libcrypto, in one place for the layers above. */
#include "common/digest.h"
#include "common/error.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <unistd.h>

static void to_hex(char *out, const unsigned char *md, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[md[i] >> 4];
		out[2 * i + 1] = digits[md[i] & 15];
	}
	out[2 * n] = '\0';
}

int pg_sha256_hex(char *out, const void *data, size_t len)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned n = 0;

	out[0] = '\0';
	if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != 32)
		return pg_error_set(PG_ERROR, "SHA-256 failed");
	to_hex(out, md, n);
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
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return pg_error_set(errno == ENOENT ? PG_ENOTFOUND : PG_EIO, "'%s': %s", path,
				    strerror(errno));
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
	to_hex(out, md, n);
done:
	EVP_MD_CTX_free(ctx);
	close(fd);
	return err;
}

int pg_random_hex(pg_buf *out, size_t nbytes)
{
	unsigned char raw[64];
	char hex[2 * sizeof(raw) + 1];

	if (nbytes > sizeof(raw))
		return pg_error_set(PG_EINVALID, "at most %zu random bytes at once", sizeof(raw));
	if (RAND_bytes(raw, (int)nbytes) != 1)
		return pg_error_set(PG_ERROR, "the random number generator failed");
	to_hex(hex, raw, nbytes);
	return pg_buf_puts(out, hex);
}
