/* pgpkeys.c - a pgpkeys.git-style directory: its keys/<FINGERPRINT>.asc files read and checked, and what names the set. */
#include "verifier/pgpkeys.h"
#include "common/array.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/hex.h"
#include "common/oid.h"
#include "common/str.h"
#include "repo/repo.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether name is "<40 or 64 hex digits>.asc"; fpr (may be NULL) gets the digits upper case. */
static bool key_file_name(const char *name, char fpr[65])
{
	size_t len = strlen(name), n = len - 4, i;

	if ((len != 44 && len != 68) || strcmp(name + n, ".asc") || !pg_hex_is(name, n))
		return false;
	for (i = 0; fpr && i < n; i++)
		fpr[i] = (char)(name[i] >= 'a' && name[i] <= 'f' ? name[i] - 'a' + 'A' : name[i]);
	if (fpr)
		fpr[n] = '\0';
	return true;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The names of the key files in dir/keys, sorted; keys gets that
 * directory's path.  Free *names with pg_str_list_free.
 */
static int list_key_files(char ***names, size_t *n, pg_buf *keys, const char *dir)
{
	size_t alloc = 0;
	struct dirent *e;
	DIR *d;
	int err = 0;

	*names = NULL;
	*n = 0;
	pg_buf_clear(keys);
	if ((err = pg_buf_printf(keys, "%s/keys", dir)) < 0)
		return err;
	/* opendir neither blocks nor opens what is not a directory */
	if (!(d = opendir(keys->ptr))) {
		if (errno == ENOENT && !pg_is_dir(dir))
			return pg_error_set(PG_ENOTFOUND, "pgpkeys '%s' does not exist", dir);
		if (errno == ENOENT)
			return pg_error_set(PG_ENOTFOUND, "pgpkeys '%s' has no keys/ directory: it is "
					    "no pgpkeys.git checkout", dir);
		return pg_error_set(errno == ENOTDIR ? PG_EINVALID : PG_EIO, "pgpkeys '%s': %s",
				    keys->ptr, strerror(errno));
	}
	for (errno = 0; (e = readdir(d)); errno = 0) {
		if (!key_file_name(e->d_name, NULL))
			continue;
		if (*n == PG_PGPKEYS_MAX_FILES) {
			err = pg_error_set(PG_EINVALID, "pgpkeys '%s' holds more than %d key files",
					   keys->ptr, PG_PGPKEYS_MAX_FILES);
			goto done;
		}
		if ((err = PG_ARRAY_GROW(*names, *n + 1, alloc)) < 0)
			goto done;
		if (!((*names)[*n] = pg_strdup(e->d_name))) {
			err = PG_ENOMEM;
			goto done;
		}
		(*n)++;
	}
	if (errno)
		err = pg_error_set(PG_EIO, "pgpkeys '%s': %s", keys->ptr, strerror(errno));
	else if (*n)
		qsort(*names, *n, sizeof(**names), by_name);
done:
	closedir(d);
	if (err < 0) {
		pg_str_list_free(*names, *n);
		*names = NULL;
		*n = 0;
	}
	return err;
}

void pg_pgpkeys_release(pg_pgpkeys *k)
{
	size_t i;

	if (!k)
		return;
	for (i = 0; i < k->nfiles; i++)
		free(k->files[i].path);
	free(k->files);
	pg_buf_release(&k->bytes);
	k->files = NULL;
	k->nfiles = k->alloc = 0;
}

/* Append the file at path (a key file) to k->bytes, within max bytes in all. */
static int read_key_file(pg_pgpkeys *k, const char *path, size_t max)
{
	off_t size = 0;
	FILE *f;
	int fd, err;

	/* a symlink could lead out of the directory: a key file is one */
	if ((err = pg_open_regular(&fd, &size, path, PG_OPEN_READ | PG_OPEN_NOFOLLOW, NULL)) < 0)
		return pg_error_wrap(err, "pgpkeys");
	if ((uintmax_t)size > max - k->bytes.len) {
		close(fd);
		if ((uintmax_t)size > max)
			return pg_error_set(PG_ETOOBIG, "pgpkeys: key file '%s' has %jd bytes, more "
					    "than the %zu a keyring may have", path, (intmax_t)size,
					    max);
		return pg_error_set(PG_ETOOBIG, "pgpkeys: the key files up to '%s' come to more "
				    "than the %zu bytes a keyring may have", path, max);
	}
	if (!(f = fdopen(fd, "rb"))) {
		close(fd);
		return pg_error_set(PG_EIO, "pgpkeys: '%s': %s", path, strerror(errno));
	}
	k->bytes.max = max; /* a file that grows while read stops at the cap too */
	err = pg_buf_read_stream(&k->bytes, f, path);
	fclose(f);
	return err;
}

int pg_pgpkeys_read(pg_pgpkeys *out, const char *dir, size_t max)
{
	pg_buf keys = PG_BUF_INIT, path = PG_BUF_INIT;
	char **names = NULL;
	size_t n = 0, i;
	int err;

	pg_pgpkeys_release(out);
	pg_buf_init(&out->bytes, max);
	if ((err = list_key_files(&names, &n, &keys, dir)) < 0)
		goto done;
	if (!n) {
		err = pg_error_set(PG_EINVALID, "pgpkeys '%s' holds no key file (<FINGERPRINT>.asc)",
				   keys.ptr);
		goto done;
	}
	if ((err = PG_ARRAY_GROW(out->files, n, out->alloc)) < 0)
		goto done;
	for (i = 0; i < n; i++) {
		pg_pgpkey *k = &out->files[out->nfiles];

		memset(k, 0, sizeof(*k));
		pg_buf_clear(&path);
		if ((err = pg_buf_printf(&path, "%s/%s", keys.ptr, names[i])) < 0)
			goto done;
		if (!(k->path = pg_strdup(path.ptr))) {
			err = PG_ENOMEM;
			goto done;
		}
		key_file_name(names[i], k->fpr);
		out->nfiles++;
		k->off = out->bytes.len;
		if ((err = read_key_file(out, path.ptr, max)) < 0)
			goto done;
		k->len = out->bytes.len - k->off;
	}
done:
	pg_str_list_free(names, n);
	pg_buf_release(&keys);
	pg_buf_release(&path);
	return err;
}

/* The key files' names, sizes and times: what says the set changed without git. */
static int listing(pg_buf *out, const char *dir)
{
	pg_buf keys = PG_BUF_INIT, path = PG_BUF_INIT;
	char **names = NULL;
	size_t n = 0, i;
	struct stat st;
	int err;

	if ((err = list_key_files(&names, &n, &keys, dir)) < 0)
		goto done;
	for (i = 0; i < n && err == 0; i++) {
		pg_buf_clear(&path);
		if ((err = pg_buf_printf(&path, "%s/%s", keys.ptr, names[i])) < 0)
			break;
		/* gone since the listing: it is not there to import either */
		if (lstat(path.ptr, &st) < 0)
			memset(&st, 0, sizeof(st));
		err = pg_buf_printf(out, "%s %jd %jd.%09ld\n", names[i], (intmax_t)st.st_size,
				    (intmax_t)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
	}
done:
	pg_str_list_free(names, n);
	pg_buf_release(&keys);
	pg_buf_release(&path);
	return err;
}

int pg_pgpkeys_identity(pg_buf *out, const char *dir)
{
	char hex[PG_OID_HEXSZ + 1];
	pg_repo *r = NULL;
	pg_oid head;
	int err;

	pg_buf_clear(out);
	if ((err = pg_repo_open(&r, dir)) == 0) {
		err = pg_repo_ref_target(&head, r, "HEAD");
		pg_repo_free(r);
		if (err == 0) {
			pg_oid_tohex(hex, &head);
			return pg_buf_printf(out, "commit %s", hex);
		}
	}
	/* no repository, or one without a commit yet: the files say it */
	if (err != PG_ENOTFOUND)
		return pg_error_wrap(err, "pgpkeys '%s'", dir);
	pg_error_clear();
	return listing(out, dir);
}
