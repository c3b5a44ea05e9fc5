/* select.h - pull-aware KUnit selection: the config options that cover a pull's changed paths. */
#ifndef PG_SELECT_H
#define PG_SELECT_H

#include "common/buf.h"
#include "report/report.h"

/*
 * Where the kernel tree is read from: the merge's tree in the gate, a
 * table in the unit tests.  read appends the file at path ("fs/ext4/Kconfig")
 * to out and returns PG_ENOTFOUND when there is none; list gives the names
 * of the files directly in dir ("" the root), PG_ENOTFOUND when dir is not
 * a directory (freed with pg_str_list_free).
 */
typedef struct pg_select_src {
	int (*read)(void *ctx, const char *path, pg_buf *out);
	int (*list)(void *ctx, const char *dir, char ***names, size_t *n);
	void *ctx;
} pg_select_src;

/* A Kconfig or .kunitconfig file larger than this is not read (a finding-free skip). */
#define PG_SELECT_FILE_MAX ((size_t)1 << 20)
/* Options looked at per pull, whatever its size: the rest are not considered. */
#define PG_SELECT_MAX_OPTIONS 2000

/*
 * Select for the changed paths (sorted or not; repeats are fine):
 *  - the nearest .kunitconfig up each path's directory tree, taken whole;
 *  - the test options (*_KUNIT_TEST, *_KUNIT_TESTS, *_KUNIT, KUNIT_TEST)
 *    declared in the Kconfig files (Kconfig, Kconfig.*) of each path's
 *    directory, or of its nearest parent below the root that has any.
 * Only "CONFIG_X=y" and "=m" (built in: the QEMU kernel has no modules) are
 * taken from a .kunitconfig; anything else is refused.  An option
 * base_config (the fragment's text) sets either way keeps the base's
 * value.  At most cap test options are added (a .kunitconfig counts with
 * all its test options, or is capped whole); Kconfig options whose name
 * matches a changed file's come first.  The rows go into r (has_selection,
 * selected, selection_note, selection_paths, selection_cap).
 */
int pg_select(pg_report *r, const pg_select_src *src, const char *const *paths, size_t npaths,
	      const char *base_config, unsigned cap);

/* The fragment of the added options, "CONFIG_X=y" a line; empty when none. */
int pg_select_fragment(pg_buf *out, const pg_report *r);

/*
 * After the build: each added option the built .config (its text) has as
 * "=y" is enabled, any other is skipped, with Kconfig's reason.
 */
int pg_select_check_config(pg_report *r, const char *config);

#endif
