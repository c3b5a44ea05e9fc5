/* fs.c - making and removing directory trees; mapping files. */
#include "common/fs.h"
#include "common/error.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int pg_mkdir_p(const char *path)
{
	char tmp[4096];
	size_t i, n = strlen(path);

	if (n >= sizeof(tmp))
		return pg_error_set(PG_EINVALID, "'%s': path too long", path);
	memcpy(tmp, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return pg_error_set(PG_EIO, "'%s': %s", tmp, strerror(errno));
		tmp[i] = path[i];
	}
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

int pg_remove_tree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : pg_error_set(PG_EIO, "'%s': %s", path, strerror(errno));
	if (nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS) < 0)
		return pg_error_set(PG_EIO, "cannot remove '%s': %s", path, strerror(errno));
	return 0;
}

bool pg_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int pg_map_file(void **map, size_t *len, const char *path)
{
	struct stat st;
	void *m;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*map = NULL;
	*len = 0;
	if (fd < 0)
		return errno == ENOENT ? pg_error_set(PG_ENOTFOUND, "'%s' does not exist", path) :
		       pg_error_set(PG_EIO, "'%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uintmax_t)st.st_size > SIZE_MAX) {
		close(fd);
		return pg_error_set(PG_EINVALID, "'%s' is not a regular file with data", path);
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return pg_error_set(PG_EIO, "'%s': %s", path, strerror(errno));
	*map = m;
	*len = (size_t)st.st_size;
	return 0;
}

void pg_unmap_file(void *map, size_t len)
{
	if (map)
		munmap(map, len);
}
