/* fs.h - directories: make a path, remove a tree. */
#ifndef PG_FS_H
#define PG_FS_H

#include "common/compat.h"

/* mkdir -p: make path and its missing parents (0755). */
int pg_mkdir_p(const char *path);

/* rm -r: remove a directory tree, never following symlinks; absent is fine. */
int pg_remove_tree(const char *path);

#endif
