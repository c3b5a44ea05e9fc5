/* stage_build.c - the build stage: the merge built, its warnings compared with the base's (kept per tree). */
#include "pipeline/stage.h"
#include "pipeline/diag.h"
#include "pipeline/farm.h"
#include "pipeline/provenance.h"
#include "pipeline/select.h"
#include "repo/repo.h"
#include "common/array.h"
#include "common/digest.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/map.h"
#include "common/spawn.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_BUILD_FINDINGS 20
#define MAX_DIAGS 1000      /* diagnostics kept of one build */
#define TAIL_MAX 8192       /* the end of the output, quoted when there is no diagnostic */

/* One run of build.sh: how it ended and what it printed. */
typedef struct build {
	pg_run *run;
	size_t objects_hint;    /* objects in a full build, for progress; 0: unknown */
	pg_spawn_result proc;   /* how it ended, and the end of its output */
	bool ok;
	size_t objects;         /* compile steps seen ("  CC  foo.o" lines) */
	uint64_t started_ms;    /* when this build began, for the ETA */
	uint64_t shown_ms;      /* when progress was last reported */
	pg_diag *diags;         /* at most MAX_DIAGS */
	size_t ndiags, alloc;
	pg_farm farm;           /* the merge's: what build.sh's farm file says (PG_ICECC) */
} build;

static void build_init(build *b, pg_run *g)
{
	memset(b, 0, sizeof(*b));
	b->run = g;
	pg_spawn_result_init(&b->proc);
	pg_farm_init(&b->farm);
}

static void build_release(build *b)
{
	while (b->ndiags)
		pg_diag_release(&b->diags[--b->ndiags]);
	free(b->diags);
	pg_spawn_result_release(&b->proc);
	pg_farm_release(&b->farm);
	build_init(b, b->run);
}

/* Kbuild's quiet lines: two spaces, an upper-case verb, spaces, a path. */
static bool is_step(const char *line, size_t len, const char *verb)
{
	size_t n = strlen(verb);

	return len > n + 3 && line[0] == ' ' && line[1] == ' ' && !memcmp(line + 2, verb, n) &&
	       line[2 + n] == ' ';
}

static int on_line(void *ctx, const char *line, size_t len)
{
	build *b = ctx;
	pg_diag d;
	int rc;

	if (is_step(line, len, "CC") || is_step(line, len, "AS")) {
		uint64_t now = pg_progress_now_ms();

		b->objects++;
		/*
		 * The total is the previous full build's count for this build dir
		 * (an incremental build compiles fewer and ends early); at most
		 * four reports a second.
		 */
		if (now - b->shown_ms >= 250 || b->objects % 25 == 0) {
			b->shown_ms = now;
			pg_run_progress_count(b->run, "build", b->objects,
					      b->objects_hint >= b->objects ? b->objects_hint : 0,
					      "objects", now - b->started_ms);
		}
		return 0;
	}
	if ((rc = pg_diag_parse(&d, line, len)) <= 0)
		return rc;
	if (b->ndiags == MAX_DIAGS) {
		pg_diag_release(&d);
		return 0;
	}
	if ((rc = PG_ARRAY_GROW(b->diags, b->ndiags + 1, b->alloc)) < 0) {
		pg_diag_release(&d);
		return rc;
	}
	b->diags[b->ndiags++] = d;
	return 0;
}

/* The journal names the build while it runs: a recovery stops it if we die. */
static void started(void *ctx, int pid)
{
	pg_journal_child(((build *)ctx)->run, pid);
}

/* Unlink object files under build_dir as new as the stamp (nftw has no context). */
static _Thread_local time_t stamp_mtime;

static int drop_newer(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	size_t n = strlen(path);

	if (flag == FTW_F && st->st_mtime >= stamp_mtime && n > 2 && !strcmp(path + n - 2, ".o"))
		unlink(path);
	return 0;
}

/* Objects written by a build that was killed may be truncated: drop them. */
static int drop_interrupted_objects(const char *build_dir, const char *stamp)
{
	struct stat st;

	if (stat(stamp, &st) < 0)
		return 0; /* the last build finished */
	stamp_mtime = st.st_mtime;
	if (nftw(build_dir, drop_newer, 32, FTW_PHYS) < 0)
		return pg_error_set(PG_EIO, "'%s': %s", build_dir, strerror(errno));
	return 0;
}

/*
 * How many objects a full build of this build dir compiles: the most any
 * build here compiled.  It is the "total" of the progress line.
 */
static size_t read_objects_hint(const char *path)
{
	pg_buf b = PG_BUF_INIT;
	size_t n = 0;

	if (pg_buf_read_file(&b, path) == 0)
		n = (size_t)strtoul(b.ptr, NULL, 10);
	else
		pg_error_clear();
	pg_buf_release(&b);
	return n;
}

/* Build what the worktree holds into the build dir, appending to log. */
static int run_build(build *b, const char *log)
{
	pg_run *g = b->run;
	pg_spawn_opts so = PG_SPAWN_OPTS_INIT;
	pg_buf script = PG_BUF_INIT, stamp = PG_BUF_INIT, hint = PG_BUF_INIT;
	const char *argv[7];
	size_t k = 0;
	int err;

	if ((err = pg_buf_printf(&script, "%s/scripts/kernel/build.sh", g->o->datadir)) < 0 ||
	    (err = pg_buf_printf(&stamp, "%s/.pullgate-building", g->build_dir.ptr)) < 0 ||
	    (err = pg_mkdir_p(g->build_dir.ptr)) < 0 ||
	    (err = drop_interrupted_objects(g->build_dir.ptr, stamp.ptr)) < 0 ||
	    (err = pg_write_file_atomic(stamp.ptr, "", 0)) < 0 ||
	    (err = pg_buf_printf(&hint, "%s/.pullgate-objects", g->build_dir.ptr)) < 0)
		goto done;
	argv[k++] = script.ptr;
	if (g->select_path.len) {
		argv[k++] = "--select";
		argv[k++] = g->select_path.ptr;
	}
	argv[k++] = g->worktree.ptr;
	argv[k++] = g->build_dir.ptr;
	argv[k++] = log;
	argv[k] = NULL;
	b->objects_hint = read_objects_hint(hint.ptr);
	b->started_ms = pg_progress_now_ms();
	so.env = g->env;
	so.log_path = log;
	so.tail_max = TAIL_MAX;
	so.timeout_ms = g->o->settings.build_timeout_s * 1000u;
	so.on_line = on_line;
	so.ctx = b;
	so.cancel = g->o->cancel;
	so.on_start = started;
	err = pg_spawn_run(&b->proc, argv, &so);
	pg_journal_child(g, 0);
	b->ok = err == 0 && pg_spawn_succeeded(&b->proc);
	if (err < 0)
		goto done;
	if (b->proc.cancelled) {
		/* a cancelled build says nothing about the pull: no verdict */
		err = pg_error_set(PG_ECANCELLED, "the build was cancelled");
		goto done;
	}
	if (b->ok)
		unlink(stamp.ptr); /* a complete build: nothing to distrust next time */
	if (b->ok && b->objects > b->objects_hint) {
		char n[32];

		snprintf(n, sizeof(n), "%zu\n", b->objects);
		err = pg_write_file_atomic(hint.ptr, n, strlen(n));
	}
done:
	pg_buf_release(&script);
	pg_buf_release(&stamp);
	pg_buf_release(&hint);
	return err;
}

/*
 * What build.sh wrote of the farm once make had ended, beside the log
 * (pipeline/farm.h), when the run asked for icecream: never its stream,
 * where make's output could print a farm that did not run.  Without icecc
 * a file there is not build.sh's and is not read.
 */
static int read_farm(pg_run *g, build *b, const char *log)
{
	pg_buf path = PG_BUF_INIT;
	int err;

	if (!g->o->settings.icecc)
		return 0;
	if ((err = pg_farm_path(&path, log)) == 0)
		err = pg_farm_read(&b->farm, path.ptr);
	pg_buf_release(&path);
	return err;
}

/* The base's warnings, one key (pg_diag_key) a line. */
static int write_warnings(const char *path, const build *b)
{
	pg_buf out = PG_BUF_INIT;
	size_t i;
	int err = 0;

	for (i = 0; i < b->ndiags && err == 0; i++)
		if (!b->diags[i].error && (err = pg_diag_key(&out, &b->diags[i])) == 0)
			err = pg_buf_putc(&out, '\n');
	if (err == 0)
		err = pg_write_file_atomic(path, out.ptr, out.len);
	pg_buf_release(&out);
	return err;
}

/* Read the keys write_warnings wrote into a set; the set borrows from buf. */
static int read_warnings(pg_map *known, pg_buf *buf, const char *path)
{
	char *p, *nl;
	int err;

	if ((err = pg_buf_read_file(buf, path)) < 0)
		return err;
	for (p = buf->ptr; err == 0 && (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = '\0';
		err = pg_map_sets(known, p, p);
	}
	return err;
}

static int failure_findings(pg_run *g, const build *b)
{
	enum pg_severity sev = g->policy->severity[PG_CHECK_BUILD_ERROR];
	pg_finding *f = NULL;
	size_t i, n = 0;
	int err = 0;

	for (i = 0; i < b->ndiags && err == 0; i++) {
		if (!b->diags[i].error)
			continue;
		if (++n > MAX_BUILD_FINDINGS)
			continue;
		err = pg_report_add(&f, g->report, PG_CHECK_BUILD_ERROR, sev, NULL, "%s:%u: %s",
				    b->diags[i].file, b->diags[i].line, b->diags[i].message);
	}
	if (err == 0 && n > MAX_BUILD_FINDINGS)
		err = pg_report_add(NULL, g->report, PG_CHECK_BUILD_ERROR, sev, NULL,
				    "and %zu more errors (see the build log)", n - MAX_BUILD_FINDINGS);
	if (err == 0 && n == 0) {
		const char *tail = b->proc.tail.ptr, *last = tail;
		size_t k = 0;

		/* no diagnostic: quote the end of the output */
		for (i = b->proc.tail.len; i > 0 && k < 6; i--)
			if (tail[i - 1] == '\n' && ++k)
				last = tail + i;
		err = pg_report_add(&f, g->report, PG_CHECK_BUILD_ERROR, sev, NULL, "%s",
				    b->proc.timed_out ? "the build did not finish in time" :
				    "the build failed without a compiler diagnostic");
		if (err == 0 && *last)
			err = pg_finding_detail(f, "output", last, NULL);
	}
	return err;
}

/* A warning of the merge build that the base did not print is new. */
static int new_warnings(pg_run *g, const build *b, const pg_map *known, size_t *fresh)
{
	pg_buf k = PG_BUF_INIT;
	size_t i;
	int err = 0;

	for (i = 0; i < b->ndiags && err == 0; i++) {
		if (b->diags[i].error)
			continue;
		pg_buf_clear(&k);
		if ((err = pg_diag_key(&k, &b->diags[i])) < 0 || pg_map_gets(known, k.ptr))
			continue;
		if (++*fresh > MAX_BUILD_FINDINGS)
			continue;
		err = pg_report_add(NULL, g->report, PG_CHECK_NEW_WARNING,
				    g->policy->severity[PG_CHECK_NEW_WARNING], NULL, "%s:%u: %s",
				    b->diags[i].file, b->diags[i].line, b->diags[i].message);
	}
	pg_buf_release(&k);
	return err;
}

/*
 * A warning is new when the base does not print it.  The base build is
 * incremental, so it prints the warnings of what it compiles: the files
 * the merge changes are touched first, so that it compiles what the
 * merge build will.  The baseline is therefore a function of the base's
 * and the merge's trees (the config is the build dir's) and is kept per
 * pair: a pull re-created with the same content (a rebuilt fixture, a
 * re-signed tag) is not built twice, and the worktree stays on the merge.
 *
 * The base is booted too, while its Image is in the build dir, for the
 * boot stage to compare the merge's KUnit results and splats with; that
 * boot is kept per base tree, scripts and tools (pg_run_base_boot).
 */
static int baseline(pg_run *g, pg_buf *path, const char *log)
{
	pg_oid base_tree, merge_tree;
	char base_hex[PG_OID_HEXSZ + 1], merge_hex[PG_OID_HEXSZ + 1], hex[PG_OID_HEXSZ + 1];
	bool need_warnings, need_boot;
	build base;
	size_t touched;
	int err;

	build_init(&base, g);
	if ((err = pg_tree_commit_tree(&base_tree, g->tree, &g->base)) < 0 ||
	    (err = pg_tree_commit_tree(&merge_tree, g->tree, &g->report->merge_commit)) < 0)
		goto done;
	pg_oid_tohex(base_hex, &base_tree);
	pg_oid_tohex(merge_hex, &merge_tree);
	pg_oid_tohex(hex, &g->base);
	/* the selection changes the config, and so what is compiled: it is part of the key */
	if ((err = pg_buf_printf(path, "%s/warnings-%s-%s%s%.16s", g->build_dir.ptr, base_hex,
				 merge_hex, g->select_key.len ? "-" : "", g->select_key.ptr)) < 0)
		goto done;
	need_warnings = access(path->ptr, R_OK) != 0;
	need_boot = pg_run_base_boot_needed(g, &base_tree);
	if (!need_warnings && !need_boot)
		goto done;
	/* build the base first, in the same tree */
	if ((err = pg_tree_worktree_checkout(g->tree, g->wt_name, g->key.ptr, g->worktree.ptr,
					     &g->base)) < 0 ||
	    (err = pg_tree_touch_changed(g->tree, g->worktree.ptr, &base_tree, &merge_tree,
					 &touched)) < 0)
		goto done;
	pg_run_progress(g, "build", "building the base %.12s for its %s, with the %zu file%s "
			"the pull changes touched", hex,
			need_warnings && need_boot ? "warnings and its boot" :
			need_warnings ? "warnings" : "boot", touched, touched == 1 ? "" : "s");
	if ((err = run_build(&base, log)) < 0)
		goto done;
	if (!base.ok) {
		err = pg_error_set(PG_EIO, "the base %.12s of %s does not build (%s)", hex,
				   pg_tree_branch(g->tree), log);
		goto done;
	}
	if (need_warnings && (err = write_warnings(path->ptr, &base)) < 0)
		goto done;
	if (need_boot)
		err = pg_run_base_boot(g, &base_tree);
done:
	build_release(&base);
	return err;
}

/* --- the pull-aware KUnit selection ------------------------------------------------ */

typedef struct tree_src {
	pg_tree *tree;
	pg_oid root;           /* the merge's tree */
} tree_src;

static int src_read(void *ctx, const char *path, pg_buf *out)
{
	tree_src *t = ctx;

	return pg_tree_read_file(out, t->tree, &t->root, path);
}

static int src_list(void *ctx, const char *dir, char ***names, size_t *n)
{
	tree_src *t = ctx;

	return pg_tree_list_files(names, n, t->tree, &t->root, dir);
}

/* The base fragment; a stand-in's datadir may have none (then nothing is in the base). */
static int read_base_config(pg_buf *out, const char *path)
{
	int err = pg_buf_read_file(out, path);

	if (err == PG_ENOTFOUND) {
		pg_error_clear();
		err = 0;
	}
	return err;
}

int pg_run_select(pg_run *g)
{
	pg_buf base = PG_BUF_INIT, frag = PG_BUF_INIT, path = PG_BUF_INIT;
	tree_src ts = { g->tree, { { 0 } } };
	pg_select_src src = { src_read, src_list, &ts };
	char **paths = NULL;
	char hex[PG_SHA256_HEXSZ + 1];
	size_t n = 0;
	int err;

	pg_buf_clear(&g->select_path);
	pg_buf_clear(&g->select_key);
	if ((err = pg_tree_commit_tree(&ts.root, g->tree, &g->report->merge_commit)) < 0 ||
	    (err = pg_tree_changed_paths(&paths, &n, g->tree, &g->base,
					 &g->report->merge_commit)) < 0 ||
	    (err = pg_buf_printf(&path, "%s/qemu-images/kernel.config", g->o->datadir)) < 0 ||
	    (err = read_base_config(&base, path.ptr)) < 0 ||
	    (err = pg_select(g->report, &src, (const char *const *)paths, n, base.ptr,
			     g->policy->kunit_select_max)) < 0 ||
	    (err = pg_select_fragment(&frag, g->report)) < 0 || !frag.len)
		goto done;
	if ((err = pg_buf_printf(&g->select_path, "%s/kunit-select.config", g->logs.ptr)) < 0 ||
	    (err = pg_write_file_atomic(g->select_path.ptr, frag.ptr, frag.len)) < 0 ||
	    (err = pg_sha256_hex(hex, frag.ptr, frag.len)) < 0)
		goto done;
	err = pg_buf_puts(&g->select_key, hex);
done:
	if (err < 0)
		pg_buf_clear(&g->select_path);
	pg_str_list_free(paths, n);
	pg_buf_release(&base);
	pg_buf_release(&frag);
	pg_buf_release(&path);
	return err;
}

/* Which added options the built config holds: the rest Kconfig refused (skipped). */
static int check_selection(pg_run *g)
{
	pg_buf path = PG_BUF_INIT, config;
	int err;

	if (!g->select_path.len)
		return 0;
	pg_buf_init(&config, (size_t)16 << 20);
	if ((err = pg_buf_printf(&path, "%s/.config", g->build_dir.ptr)) == 0 &&
	    (err = pg_buf_read_file(&config, path.ptr)) == 0)
		err = pg_select_check_config(g->report, config.ptr);
	pg_buf_release(&path);
	pg_buf_release(&config);
	return err;
}

/*
 * What ran and what it made: the scripts, the compiler, the config and the
 * Image, and what the farm did when it compiled (b is the merge's build:
 * the base's farm lines are not the Image's).
 */
static int provenance(pg_run *g, const build *b, const char *log)
{
	pg_provenance *p = NULL;
	pg_buf path = PG_BUF_INIT;
	pg_oid tree;
	char hex[PG_OID_HEXSZ + 1];
	int err;

	if ((err = pg_report_add_provenance(&p, g->report, "build")) < 0 ||
	    (err = pg_prov_files(g->report, p, g->o->datadir, pg_build_files)) < 0 ||
	    (err = pg_provenance_set(&p->toolchain, g->toolchain)) < 0 ||
	    (err = pg_provenance_set(&p->log, log)) < 0 ||
	    (err = pg_farm_record(p, &b->farm)) < 0 ||
	    (err = pg_tree_commit_tree(&tree, g->tree, &g->report->merge_commit)) < 0)
		goto done;
	pg_oid_tohex(hex, &tree);
	p->exit_status = b->proc.exit_code;
	if ((err = pg_provenance_set(&p->tree, hex)) < 0 ||
	    (err = pg_buf_printf(&path, "%s/.config", g->build_dir.ptr)) < 0 ||
	    (err = pg_prov_file_sha256(&p->config_sha256, path.ptr)) < 0)
		goto done;
	pg_buf_clear(&path);
	if ((err = pg_buf_printf(&path, "%s/arch/arm64/boot/Image", g->build_dir.ptr)) == 0)
		err = pg_prov_file_sha256(&p->image_sha256, path.ptr);
done:
	pg_buf_release(&path);
	return err;
}

int pg_stage_build(pg_run *g, pg_stage *st)
{
	pg_buf log = PG_BUF_INIT, path = PG_BUF_INIT, lines = PG_BUF_INIT;
	pg_map known = PG_MAP_INIT;
	build merged;
	size_t fresh = 0;
	int err;

	build_init(&merged, g);
	if ((err = pg_buf_printf(&log, "%s/build.log", g->logs.ptr)) < 0 ||
	    (err = pg_write_file_atomic(log.ptr, "", 0)) < 0 ||
	    (err = pg_run_select(g)) < 0 ||
	    (err = baseline(g, &path, log.ptr)) < 0 ||
	    (err = read_warnings(&known, &lines, path.ptr)) < 0 ||
	    (err = pg_tree_worktree_checkout(g->tree, g->wt_name, g->key.ptr, g->worktree.ptr,
					     &g->report->merge_commit)) < 0)
		goto done;
	pg_run_progress(g, "build", "building the merge");
	if ((err = run_build(&merged, log.ptr)) < 0 ||
	    (err = read_farm(g, &merged, log.ptr)) < 0 ||
	    (err = provenance(g, &merged, log.ptr)) < 0 ||
	    (merged.ok && (err = check_selection(g)) < 0))
		goto done;
	if (!merged.ok) {
		if ((err = failure_findings(g, &merged)) == 0)
			err = pg_stage_set(st, PG_STAGE_FAILED, log.ptr, "%s",
					   merged.proc.timed_out ? "timed out" : "failed");
		goto done;
	}
	if ((err = new_warnings(g, &merged, &known, &fresh)) == 0) {
		size_t i, on = 0, off = 0;
		char sel[96] = "", farm[80] = "";

		for (i = 0; i < g->report->nselected; i++) {
			on += g->report->selected[i].status == PG_SELECTED_ENABLED;
			off += g->report->selected[i].status == PG_SELECTED_SKIPPED;
		}
		if (on || off)
			snprintf(sel, sizeof(sel), "; KUnit selection: %zu option%s enabled, %zu "
				 "skipped", on, on == 1 ? "" : "s", off);
		/* build.sh's M of T: the compiles icecc saw, not kbuild's count (ccache hits too) */
		if (merged.farm.has_total)
			snprintf(farm, sizeof(farm), ", %zu of %zu on the icecc farm",
				 merged.farm.farm_objects, merged.farm.total_objects);
		err = pg_stage_set(st, pg_report_verdict(g->report) == PG_VERDICT_ACCEPT ?
				   PG_STAGE_PASSED : PG_STAGE_FAILED, log.ptr,
				   "%zu objects compiled%s, %zu new warning%s%s", merged.objects, farm,
				   fresh, fresh == 1 ? "" : "s", sel);
	}
done:
	pg_map_release(&known);
	pg_buf_release(&lines);
	build_release(&merged);
	pg_buf_release(&log);
	pg_buf_release(&path);
	return err;
}
