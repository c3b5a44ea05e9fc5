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

#endif
