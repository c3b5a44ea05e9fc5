/* fs.h - directories: make a path, remove a tree, tell one. */
#ifndef PG_FS_H
#define PG_FS_H

#include "common/compat.h"

/* mkdir -p: make path and its missing parents (0755). */
int pg_mkdir_p(const char *path);

/* rm -r: remove a directory tree, never following symlinks; absent is fine. */
int pg_remove_tree(const char *path);

/* Is path an existing directory (symlinks followed)? */
bool pg_is_dir(const char *path);

/*
 * Map the regular file at path whole, read-only (a file being replaced by
 * a rename stays mapped as it was).  PG_ENOTFOUND when it does not exist,
 * PG_EINVALID when it is not a regular file or is empty, PG_EIO otherwise.
 * Unmap with pg_unmap_file.
 */
int pg_map_file(void **map, size_t *len, const char *path);
void pg_unmap_file(void *map, size_t len);

#endif
