/* gate.c - the stage runner: each stage records its timing and findings; the first rejection stops it. */
#include "pipeline/gate.h"
#include "pipeline/boot.h"
#include "pipeline/tree.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/map.h"

#include <fcntl.h>
#include <ftw.h>
#include <openssl/evp.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_BUILD_FINDINGS 20

typedef struct gate {
	const pg_pull_spec *spec;
	const pg_policy *policy;
	const pg_gate_opts *o;
	pg_report *report;
	pg_tree *tree;
	pg_buf key, tree_path, work, logs, build_dir;
	pg_oid base;          /* the integration head the merge was made on */
	pg_buf home_env;      /* PULLGATE_HOME=..., for the scripts */
	const char *env[3];   /* what the build and boot scripts get on top */
	bool keep_refs;       /* the merge waits for approval, or was approved */
	int lock_fd;
} gate;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void progress(gate *g, const char *stage, const char *fmt, ...) PG_PRINTF(3, 4);
static void progress(gate *g, const char *stage, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!g->o->progress)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	g->o->progress(g->o->ctx, stage, line);
}

int pg_gate_pull_key(pg_buf *out, const char *tag)
{
	const char *p = strncmp(tag, "refs/tags/", 10) ? tag : tag + 10;
	size_t start = out->len;
	bool exact = *p != '\0';
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	int err = 0;

	for (; *p && err == 0 && out->len - start < 80; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '-' || c == '_' ||
			  (c == '.' && out->len > start);
		exact = exact && ok;
		err = pg_buf_putc(out, ok ? c : '-');
	}
	if (err < 0 || (exact && !*p))
		return err;
	/*
	 * The name was changed (a character replaced, cut at 80, or empty):
	 * tell it apart from the names it could now be confused with by 16
	 * hex digits of the SHA-256 of the whole tag name.
	 */
	if (!EVP_Digest(tag, strlen(tag), md, &mdlen, EVP_sha256(), NULL) || mdlen < 8)
		return pg_error_set(PG_ERROR, "SHA-256 of a tag name failed");
	return pg_buf_printf(out, "%spull-%02x%02x%02x%02x%02x%02x%02x%02x",
			     out->len > start ? "-" : "", md[0], md[1], md[2], md[3], md[4], md[5],
			     md[6], md[7]);
}

/* One kernel job at a time per $PULLGATE_HOME; the lock dies with the process. */
static int take_lock(gate *g)
{
	pg_buf path = PG_BUF_INIT;
	int err;

	if ((err = pg_buf_printf(&path, "%s/.kernel.lock", g->o->home)) < 0)
		return err;
	g->lock_fd = open(path.ptr, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (g->lock_fd < 0 || flock(g->lock_fd, LOCK_EX) < 0)
		err = pg_error_set(PG_EIO, "'%s': %s", path.ptr, strerror(errno));
	pg_buf_release(&path);
	return err;
}

static void release_lock(gate *g)
{
	if (g->lock_fd >= 0)
		close(g->lock_fd);
	g->lock_fd = -1;
}

/* --- stages ---------------------------------------------------------------- */

static int stage_merge(gate *g, pg_stage *st)
{
	pg_merge_result m;
	pg_merge_opts mo;
	pg_finding *f = NULL;
	size_t i;
	int err;

	pg_merge_result_init(&m);
	if (!pg_oid_cmp(&g->report->tag_object, &g->report->tag_commit)) {
		err = pg_error_set(PG_EINVALID, "'%s' is a lightweight tag: only a signed tag "
				   "can be merged with its mergetag", g->report->tag);
		goto done;
	}
	if ((err = pg_tree_head(&g->base, g->tree)) < 0)
		goto done;
	progress(g, "merge", "fetching %s into %s", g->report->tag, g->tree_path.ptr);
	if ((err = pg_tree_fetch_tag(g->tree, g->spec->repo, g->report->tag,
				     &g->report->tag_object)) < 0)
		goto done;
	memset(&mo, 0, sizeof(mo));
	mo.tag_name = strncmp(g->report->tag, "refs/tags/", 10) ? g->report->tag :
		      g->report->tag + 10;
	mo.url = g->spec->name ? g->spec->name : g->spec->repo;
	mo.name = g->o->merge_name ? g->o->merge_name : "pullgate";
	mo.email = g->o->merge_email ? g->o->merge_email : "pullgate@localhost";
	if ((err = pg_tree_merge(&m, g->tree, &g->base, &g->report->tag_object, &mo)) < 0)
		goto done;
	if (m.up_to_date) {
		err = pg_stage_set(st, PG_STAGE_SKIPPED, NULL, "%s is already in %s",
				   g->report->tag, pg_tree_branch(g->tree));
		goto done;
	}
	if (m.conflicted) {
		err = pg_report_add(&f, g->report, PG_CHECK_MERGE_CONFLICT,
				    g->policy->severity[PG_CHECK_MERGE_CONFLICT], NULL,
				    "merging into %s conflicts in %zu path%s", pg_tree_branch(g->tree),
				    m.nconflicts, m.nconflicts == 1 ? "" : "s");
		for (i = 0; i < m.nconflicts && err == 0; i++)
			err = pg_finding_detail(f, "conflict", m.conflicts[i], NULL);
		if (err == 0)
			err = pg_stage_set(st, PG_STAGE_FAILED, NULL, "%zu conflicted path%s",
					   m.nconflicts, m.nconflicts == 1 ? "" : "s");
		goto done;
	}
	if ((err = pg_tree_set_pull_branch(g->tree, g->key.ptr, &m.commit)) < 0)
		goto done;
	g->report->has_merge = true;
	g->report->merge_base = g->base;
	g->report->merge_commit = m.commit;
	{
		char hex[PG_OID_HEXSZ + 1];
		pg_buf msg = PG_BUF_INIT;

		/* the merge's message is the stage's log: the dashboard's merge preview */
		pg_oid_tohex(hex, &m.commit);
		if ((err = pg_buf_printf(&msg, "%s/merge.txt", g->logs.ptr)) == 0)
			err = pg_write_file_atomic(msg.ptr, m.message.ptr, m.message.len);
		if (err == 0)
			err = pg_stage_set(st, PG_STAGE_PASSED, msg.ptr,
					   "merge %.12s on refs/heads/pullgate/%s", hex, g->key.ptr);
		pg_buf_release(&msg);
	}
done:
	pg_merge_result_release(&m);
	return err;
}

/* Objects written by a build that was killed may be truncated: drop them. */
static int drop_interrupted_objects(const char *build_dir, const char *stamp);

static int read_lines_into(pg_map *set, char ***store, size_t *n, const char *path)
{
	pg_buf b = PG_BUF_INIT;
	char *p, *nl;
	int err = pg_buf_read_file(&b, path);

	if (err < 0)
		goto done;
	for (p = b.ptr; *p; p = nl + 1) {
		char **grown;

		if (!(nl = strchr(p, '\n')))
			break;
		*nl = '\0';
		if (!(grown = realloc(*store, (*n + 1) * sizeof(*grown)))) {
			err = pg_error_oom();
			break;
		}
		*store = grown;
		if (!(grown[*n] = pg_strdup(p))) {
			err = PG_ENOMEM;
			break;
		}
		if ((err = pg_map_sets(set, grown[*n], grown[*n])) < 0)
			break;
		(*n)++;
	}
done:
	pg_buf_release(&b);
	return err;
}

static int write_warnings(const char *path, const pg_build_result *r)
{
	pg_buf b = PG_BUF_INIT, k = PG_BUF_INIT;
	size_t i;
	int err = 0;

	for (i = 0; i < r->ndiags && err == 0; i++) {
		if (r->diags[i].error)
			continue;
		pg_buf_clear(&k);
		if ((err = pg_diag_key(&k, &r->diags[i])) == 0)
			err = pg_buf_printf(&b, "%s\n", k.ptr);
	}
	if (err == 0)
		err = pg_write_file_atomic(path, b.ptr, b.len);
	pg_buf_release(&b);
	pg_buf_release(&k);
	return err;
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

static int run_build(gate *g, pg_build_result *r, const char *log)
{
	pg_buf script = PG_BUF_INIT, stamp = PG_BUF_INIT, hint = PG_BUF_INIT;
	pg_build_opts bo;
	const char *argv[6];
	int err;

	if ((err = pg_buf_printf(&script, "%s/scripts/kernel/build.sh", g->o->datadir)) < 0 ||
	    (err = pg_buf_printf(&stamp, "%s/.pullgate-building", g->build_dir.ptr)) < 0 ||
	    (err = pg_mkdir_p(g->build_dir.ptr)) < 0 ||
	    (err = drop_interrupted_objects(g->build_dir.ptr, stamp.ptr)) < 0 ||
	    (err = pg_write_file_atomic(stamp.ptr, "", 0)) < 0 ||
	    (err = pg_buf_printf(&hint, "%s/.pullgate-objects", g->build_dir.ptr)) < 0)
		goto done;
	argv[0] = script.ptr;
	argv[1] = g->work.ptr;
	argv[2] = g->build_dir.ptr;
	argv[3] = log;
	argv[4] = NULL;
	memset(&bo, 0, sizeof(bo));
	bo.argv = argv;
	bo.env = g->env;
	bo.log = log;
	bo.timeout_s = g->o->build_timeout_s ? g->o->build_timeout_s : 3600;
	bo.objects_hint = read_objects_hint(hint.ptr);
	bo.progress = g->o->progress;
	bo.ctx = g->o->ctx;
	bo.cancel = g->o->cancel;
	if ((err = pg_build_run(r, &bo)) < 0)
		goto done;
	if (r->cancelled) {
		/* a cancelled build says nothing about the pull: no verdict */
		err = pg_error_set(PG_ECANCELLED, "the build was cancelled");
		goto done;
	}
	if (r->ok)
		unlink(stamp.ptr); /* a complete build: nothing to distrust next time */
	if (r->ok && r->objects > bo.objects_hint) {
		char n[32];

		snprintf(n, sizeof(n), "%zu\n", r->objects);
		err = pg_write_file_atomic(hint.ptr, n, strlen(n));
	}
done:
	pg_buf_release(&script);
	pg_buf_release(&stamp);
	pg_buf_release(&hint);
	return err;
}

static int build_failure_findings(gate *g, const pg_build_result *r)
{
	pg_finding *f = NULL;
	size_t i, n = 0;
	int err = 0;

	for (i = 0; i < r->ndiags && err == 0; i++) {
		if (!r->diags[i].error)
			continue;
		if (++n > MAX_BUILD_FINDINGS)
			continue;
		err = pg_report_add(&f, g->report, PG_CHECK_BUILD_ERROR,
				    g->policy->severity[PG_CHECK_BUILD_ERROR], NULL, "%s:%u: %s",
				    r->diags[i].file, r->diags[i].line, r->diags[i].message);
	}
	if (err == 0 && n > MAX_BUILD_FINDINGS)
		err = pg_report_add(NULL, g->report, PG_CHECK_BUILD_ERROR,
				    g->policy->severity[PG_CHECK_BUILD_ERROR], NULL,
				    "and %zu more errors (see the build log)", n - MAX_BUILD_FINDINGS);
	if (err == 0 && n == 0) {
		const char *tail = r->tail.ptr, *last = tail;
		size_t k = 0;

		/* no diagnostic: quote the end of the output */
		for (i = r->tail.len; i > 0 && k < 6; i--)
			if (tail[i - 1] == '\n' && ++k)
				last = tail + i;
		err = pg_report_add(&f, g->report, PG_CHECK_BUILD_ERROR,
				    g->policy->severity[PG_CHECK_BUILD_ERROR], NULL, "%s",
				    r->timed_out ? "the build did not finish in time" :
				    "the build failed without a compiler diagnostic");
		if (err == 0 && *last)
			err = pg_finding_detail(f, "output", last, NULL);
	}
	return err;
}

static int stage_build(gate *g, pg_stage *st)
{
	pg_build_result base, merged;
	pg_buf log = PG_BUF_INIT, baseline = PG_BUF_INIT, k = PG_BUF_INIT;
	pg_map known = PG_MAP_INIT;
	char **lines = NULL, hex[PG_OID_HEXSZ + 1], base_hex[PG_OID_HEXSZ + 1];
	char merge_hex[PG_OID_HEXSZ + 1];
	pg_oid base_tree, merge_tree;
	size_t nlines = 0, i, fresh = 0, errors = 0, touched;
	int err;

	pg_build_result_init(&base);
	pg_build_result_init(&merged);
	/*
	 * A warning is new when the base does not print it.  The base build is
	 * incremental, so it prints the warnings of what it compiles: the files
	 * the merge changes are touched first, so that it compiles what the
	 * merge build will.  The baseline is therefore a function of the base's
	 * and the merge's trees (the config is the build dir's) and is kept per
	 * pair: a pull re-created with the same content (a rebuilt fixture, a
	 * re-signed tag) is not built twice, and the worktree stays on the merge.
	 */
	if ((err = pg_tree_commit_tree(&base_tree, g->tree, &g->base)) < 0 ||
	    (err = pg_tree_commit_tree(&merge_tree, g->tree, &g->report->merge_commit)) < 0)
		goto done;
	pg_oid_tohex(base_hex, &base_tree);
	pg_oid_tohex(merge_hex, &merge_tree);
	pg_oid_tohex(hex, &g->base);
	if ((err = pg_buf_printf(&log, "%s/build.log", g->logs.ptr)) < 0 ||
	    (err = pg_buf_printf(&baseline, "%s/warnings-%s-%s", g->build_dir.ptr, base_hex,
				 merge_hex)) < 0 ||
	    (err = pg_write_file_atomic(log.ptr, "", 0)) < 0)
		goto done;
	if (access(baseline.ptr, R_OK) != 0) {
		/* no warnings recorded for this base: build it first, in the same tree */
		if ((err = pg_tree_worktree_checkout(g->tree, g->key.ptr, g->work.ptr, &g->base)) < 0 ||
		    (err = pg_tree_touch_changed(g->tree, g->work.ptr, &base_tree, &merge_tree,
						 &touched)) < 0)
			goto done;
		progress(g, "build", "building the base %.12s for its warnings, with the %zu file%s "
			 "the pull changes touched", hex, touched, touched == 1 ? "" : "s");
		if ((err = run_build(g, &base, log.ptr)) < 0)
			goto done;
		if (!base.ok) {
			err = pg_error_set(PG_EIO, "the base %.12s of %s does not build (%s)", hex,
					   pg_tree_branch(g->tree), log.ptr);
			goto done;
		}
		if ((err = write_warnings(baseline.ptr, &base)) < 0)
			goto done;
	}
	if ((err = read_lines_into(&known, &lines, &nlines, baseline.ptr)) < 0 ||
	    (err = pg_tree_worktree_checkout(g->tree, g->key.ptr, g->work.ptr,
					     &g->report->merge_commit)) < 0)
		goto done;
	progress(g, "build", "building the merge");
	if ((err = run_build(g, &merged, log.ptr)) < 0)
		goto done;
	if (!merged.ok) {
		for (i = 0; i < merged.ndiags; i++)
			errors += merged.diags[i].error;
		if ((err = build_failure_findings(g, &merged)) == 0)
			err = pg_stage_set(st, PG_STAGE_FAILED, log.ptr, "%s",
					   merged.timed_out ? "timed out" : "failed");
		goto done;
	}
	for (i = 0; i < merged.ndiags && err == 0; i++) {
		pg_finding *f = NULL;

		if (merged.diags[i].error)
			continue;
		pg_buf_clear(&k);
		if ((err = pg_diag_key(&k, &merged.diags[i])) < 0 || pg_map_gets(&known, k.ptr))
			continue;
		if (++fresh > MAX_BUILD_FINDINGS)
			continue;
		err = pg_report_add(&f, g->report, PG_CHECK_NEW_WARNING,
				    g->policy->severity[PG_CHECK_NEW_WARNING], NULL, "%s:%u: %s",
				    merged.diags[i].file, merged.diags[i].line, merged.diags[i].message);
	}
	if (err == 0)
		err = pg_stage_set(st, pg_report_verdict(g->report) == PG_VERDICT_ACCEPT ?
				   PG_STAGE_PASSED : PG_STAGE_FAILED, log.ptr,
				   "%zu objects compiled, %zu new warning%s", merged.objects, fresh,
				   fresh == 1 ? "" : "s");
done:
	for (i = 0; i < nlines; i++)
		free(lines[i]);
	free(lines);
	pg_map_release(&known);
	pg_build_result_release(&base);
	pg_build_result_release(&merged);
	pg_buf_release(&log);
	pg_buf_release(&baseline);
	pg_buf_release(&k);
	return err;
}

static int stage_boot(gate *g, pg_stage *st)
{
	pg_boot_run run;
	pg_boot_opts bo;
	pg_buf script = PG_BUF_INIT, console = PG_BUF_INIT, log = PG_BUF_INIT;
	char timeout[16];
	const char *argv[5];
	unsigned t = g->o->boot_timeout_s ? g->o->boot_timeout_s : 300;
	enum pg_severity sev;
	size_t i;
	int err;

	memset(&run, 0, sizeof(run));
	snprintf(timeout, sizeof(timeout), "%u", t);
	if ((err = pg_buf_printf(&script, "%s/scripts/kernel/boot.sh", g->o->datadir)) < 0 ||
	    (err = pg_buf_printf(&console, "%s/boot.log", g->logs.ptr)) < 0 ||
	    (err = pg_buf_printf(&log, "%s/boot-script.log", g->logs.ptr)) < 0 ||
	    (err = pg_write_file_atomic(log.ptr, "", 0)) < 0)
		goto done;
	argv[0] = script.ptr;
	argv[1] = g->build_dir.ptr;
	argv[2] = console.ptr;
	argv[3] = timeout;
	argv[4] = NULL;
	memset(&bo, 0, sizeof(bo));
	bo.argv = argv;
	bo.env = g->env;
	bo.console_log = console.ptr;
	bo.log = log.ptr;
	bo.timeout_s = t + 120; /* boot.sh packs the initramfs, then gives QEMU t */
	bo.cancel = g->o->cancel;
	progress(g, "boot", "booting in qemu-system-aarch64 (timeout %u s)", t);
	if ((err = pg_boot(&run, &bo)) < 0)
		goto done;
	if (run.cancelled) {
		err = pg_error_set(PG_ECANCELLED, "the boot was cancelled");
		goto done;
	}
	if (run.timed_out) {
		sev = g->policy->severity[PG_CHECK_BOOT_TIMEOUT];
		err = pg_report_add(NULL, g->report, PG_CHECK_BOOT_TIMEOUT, sev, NULL,
				    "the kernel did not power off within %u s", t);
	}
	sev = g->policy->severity[PG_CHECK_KTAP_FAILURE];
	if (err == 0 && (!run.result || !run.result->saw_ktap))
		err = pg_report_add(NULL, g->report, PG_CHECK_KTAP_FAILURE, sev, NULL,
				    "the console shows no KTAP results");
	for (i = 0; err == 0 && run.result && i < run.result->ntests; i++) {
		const pg_ktap_test *tc = &run.result->tests[i];
		pg_finding *f = NULL;

		if (tc->has_subtests || (tc->status != PG_KTAP_FAIL && tc->status != PG_KTAP_CRASHED))
			continue;
		err = pg_report_add(&f, g->report, PG_CHECK_KTAP_FAILURE, sev, NULL, "%s %s",
				    tc->path, tc->status == PG_KTAP_FAIL ? "failed" : "crashed");
		if (err == 0 && tc->reason)
			err = pg_finding_detail(f, "reason", tc->reason, NULL);
	}
	sev = g->policy->severity[PG_CHECK_KERNEL_SPLAT];
	for (i = 0; err == 0 && run.result && i < run.result->nsplats; i++) {
		const pg_splat *s = &run.result->splats[i];
		const char *nl = strchr(s->text, '\n');
		pg_finding *f = NULL;

		err = pg_report_add(&f, g->report, PG_CHECK_KERNEL_SPLAT, sev, NULL, "%s: %.*s",
				    pg_splat_kind_name(s->kind),
				    (int)(nl ? (size_t)(nl - s->text) : strlen(s->text)), s->text);
		if (err == 0)
			err = pg_finding_detail(f, "console", s->text, NULL);
	}
	if (err == 0 && run.result)
		err = pg_stage_set(st, pg_report_verdict(g->report) == PG_VERDICT_ACCEPT ?
				   PG_STAGE_PASSED : PG_STAGE_FAILED, console.ptr,
				   "%zu passed, %zu failed, %zu skipped, %zu crashed, %zu splats; "
				   "booted in %.1f s", run.result->passed, run.result->failed,
				   run.result->skipped, run.result->crashed, run.result->nsplats,
				   run.result->boot_time);
	else if (err == 0)
		err = pg_stage_set(st, PG_STAGE_FAILED, console.ptr, "no console output");
done:
	pg_boot_run_release(&run);
	pg_buf_release(&script);
	pg_buf_release(&console);
	pg_buf_release(&log);
	return err;
}

/* The pr-tracker-bot style notice, written to logs/<key>/notice.txt. */
static int write_notice(pg_buf *path, const char *logs, const char *repo, const char *tagref,
			const char *tree, const char *branch_ref, const pg_report *r)
{
	pg_buf b = PG_BUF_INIT;
	char hex[PG_OID_HEXSZ + 1], date[64];
	const char *tag = strncmp(tagref, "refs/tags/", 10) ? tagref : tagref + 10;
	int offset = r->tag_time ? r->tag_offset : 0;
	time_t when = r->tag_time ? (time_t)(r->tag_time + offset * 60) : time(NULL);
	struct tm tm;
	int err;

	/* "sent on" the day the sender tagged it, in the sender's zone */
	pg_oid_tohex(hex, &r->merge_commit);
	gmtime_r(&when, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S", &tm);
	snprintf(date + strlen(date), sizeof(date) - strlen(date), " %c%02d%02d",
		 offset < 0 ? '-' : '+', abs(offset) / 60, abs(offset) % 60);
	if ((err = pg_buf_printf(path, "%s/notice.txt", logs)) < 0)
		goto done;
	err = pg_buf_printf(&b, "The pull request you sent on %s:\n\n> %s tags/%s\n\n"
			    "has been merged into %s:%s:\n%s\n\nThank you!\n\n-- \npullgate\n",
			    date, repo, tag, tree, branch_ref + strlen("refs/heads/"), hex);
	if (err == 0)
		err = pg_write_file_atomic(path->ptr, b.ptr, b.len);
done:
	pg_buf_release(&b);
	return err;
}

static int stage_approve(gate *g, pg_stage *st)
{
	pg_buf notice = PG_BUF_INIT;
	char hex[PG_OID_HEXSZ + 1];
	int err;

	g->keep_refs = true;
	pg_oid_tohex(hex, &g->report->merge_commit);
	if (!g->o->approve)
		return pg_stage_set(st, PG_STAGE_WAITING, NULL, "merge %.12s waits for the "
				    "maintainer on refs/heads/pullgate/%s", hex, g->key.ptr);
	if ((err = pg_tree_advance(g->tree, &g->base, &g->report->merge_commit,
				   "pullgate: approved")) < 0)
		return err;
	g->report->approved = true;
	if ((err = write_notice(&notice, g->logs.ptr, g->spec->name ? g->spec->name : g->spec->repo,
				g->report->tag, g->tree_path.ptr, pg_tree_branch(g->tree),
				g->report)) == 0)
		err = pg_stage_set(st, PG_STAGE_PASSED, notice.ptr, "%s moved to %.12s",
				   pg_tree_branch(g->tree), hex);
	pg_buf_release(&notice);
	return err;
}

/* --- the runner -------------------------------------------------------------- */

typedef int (*stage_fn)(gate *g, pg_stage *st);

static const struct {
	const char *name;
	unsigned flag;
	stage_fn run;
} stages[] = {
	{ "merge", PG_GATE_MERGE, stage_merge },
	{ "build", PG_GATE_BUILD, stage_build },
	{ "boot", PG_GATE_BOOT, stage_boot },
	{ "approve", PG_GATE_APPROVE, stage_approve },
};

/*
 * Record the verdict: the report as JSON (docs/report-schema.md), replaced
 * atomically, in the pull's log directory beside the stage logs.
 */
static int write_report(const char *logs, const pg_report *r)
{
	pg_buf path = PG_BUF_INIT, json = PG_BUF_INIT;
	int err;

	if ((err = pg_buf_printf(&path, "%s/report.json", logs)) == 0 &&
	    (err = pg_report_format_json(&json, r)) == 0)
		err = pg_write_file_atomic(path.ptr, json.ptr, json.len);
	pg_buf_release(&path);
	pg_buf_release(&json);
	return err;
}

unsigned pg_gate_stage_flag(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < PG_ARRAY_SIZE(stages); i++)
		if (strlen(stages[i].name) == len && !memcmp(stages[i].name, name, len))
			return stages[i].flag;
	return 0;
}

bool pg_gate_stages_valid(unsigned set)
{
	/* 0, 1, 3, 7 or 15: the lowest bits, with no gap */
	return set <= PG_GATE_ALL && (set & (set + 1)) == 0;
}

static int prepare(gate *g)
{
	const pg_gate_opts *o = g->o;
	int err;

	if ((err = pg_gate_pull_key(&g->key, g->report->tag)) < 0 ||
	    (err = pg_buf_printf(&g->home_env, "PULLGATE_HOME=%s", o->home)) < 0)
		return err;
	/* the scripts share our state directory and stream make's output to us */
	g->env[0] = g->home_env.ptr;
	g->env[1] = "PG_BUILD_STREAM=1";
	g->env[2] = NULL;
	if (o->tree)
		err = pg_buf_puts(&g->tree_path, o->tree);
	else
		err = pg_buf_printf(&g->tree_path, "%s/linux", o->home);
	if (err == 0)
		err = pg_buf_printf(&g->work, "%s/work/build", o->home);
	if (err == 0)
		err = pg_buf_printf(&g->logs, "%s/logs/%s", o->home,
				    o->run_name ? o->run_name : g->key.ptr);
	if (err == 0)
		err = pg_buf_printf(&g->build_dir, "%s/build/arm64-gcc", o->home);
	if (err == 0)
		err = pg_mkdir_p(g->logs.ptr);
	if (err == 0) {
		/* the worktree itself is made by libgit2, its parent by us */
		char *slash = strrchr(g->work.ptr, '/');

		*slash = '\0';
		err = pg_mkdir_p(g->work.ptr);
		*slash = '/';
	}
	if (err == 0)
		err = take_lock(g);
	if (err == 0)
		err = pg_tree_open(&g->tree, g->tree_path.ptr, o->branch ? o->branch : "master");
	/* find out now, not after a build, that approval could not move the branch */
	if (err == 0 && o->approve && (o->stages & PG_GATE_APPROVE))
		err = pg_tree_can_advance(g->tree);
	return err;
}

static void cleanup(gate *g)
{
	if (!g->tree)
		return;
	if (!g->keep_refs && pg_tree_drop_pull_refs(g->tree, g->key.ptr, g->report->tag) < 0)
		pg_error_clear();
}

int pg_gate_run(pg_report **out, const pg_pull_spec *spec, const pg_policy *policy,
		const pg_gate_opts *o)
{
	gate g;
	pg_stage *st = NULL;
	char msg[1024];
	uint64_t t0 = now_ms();
	size_t i;
	int err;

	*out = NULL;
	if (!pg_gate_stages_valid(o->stages))
		return pg_error_set(PG_EINVALID, "the stages must run in order from merge, without a gap "
				    "(merge, build, boot, approve): nothing is booted unbuilt or approved untested");
	memset(&g, 0, sizeof(g));
	g.spec = spec;
	g.policy = policy;
	g.o = o;
	g.lock_fd = -1;
	pg_buf_init(&g.key, 0);
	pg_buf_init(&g.tree_path, 0);
	pg_buf_init(&g.work, 0);
	pg_buf_init(&g.logs, 0);
	pg_buf_init(&g.build_dir, 0);
	pg_buf_init(&g.home_env, 0);

	progress(&g, "verify", "verifying %s", spec->tag);
	if ((err = pg_verify(&g.report, spec, policy, o->home)) < 0)
		return err;
	if ((err = pg_report_add_stage(&st, g.report, "verify")) < 0)
		goto done;
	st->elapsed_ms = now_ms() - t0;
	if (pg_report_verdict(g.report) != PG_VERDICT_ACCEPT) {
		err = pg_stage_set(st, PG_STAGE_FAILED, NULL, "%zu error%s",
				   pg_report_count(g.report, PG_SEV_ERROR),
				   pg_report_count(g.report, PG_SEV_ERROR) == 1 ? "" : "s");
		goto done;
	}
	if ((err = pg_stage_set(st, PG_STAGE_PASSED, NULL, "%zu commits", g.report->ncommits)) < 0)
		goto done;
	if (!(o->stages & PG_GATE_ALL))
		goto done;
	if ((err = prepare(&g)) < 0)
		goto done;

	for (i = 0; i < PG_ARRAY_SIZE(stages); i++) {
		uint64_t ts = now_ms();
		enum pg_stage_status status;

		if (!(o->stages & stages[i].flag))
			continue;
		if (o->cancel && *o->cancel) {
			err = pg_error_set(PG_ECANCELLED, "cancelled before the %s stage", stages[i].name);
			break;
		}
		if ((err = pg_report_add_stage(&st, g.report, stages[i].name)) < 0)
			break;
		progress(&g, stages[i].name, "starting");
		err = stages[i].run(&g, st);
		st->elapsed_ms = now_ms() - ts;
		if (err < 0) {
			pg_stage_set(st, PG_STAGE_ERROR, NULL, "%s", pg_error_last());
			break;
		}
		status = st->status;
		progress(&g, stages[i].name, "%s", pg_stage_status_name(status));
		if (status != PG_STAGE_PASSED)
			break; /* failed, skipped (already merged) or waiting */
	}
done:
	/* the verdict is recorded, also for a pull that stopped at verify */
	if (err == 0 && !g.logs.len &&
	    (err = pg_gate_pull_key(&g.key, g.report->tag)) == 0 &&
	    (err = pg_buf_printf(&g.logs, "%s/logs/%s", o->home,
				 o->run_name ? o->run_name : g.key.ptr)) == 0)
		err = pg_mkdir_p(g.logs.ptr);
	if (err == 0)
		err = write_report(g.logs.ptr, g.report);
	/* cleanup may meet errors of its own: keep the message of the one that stopped us */
	snprintf(msg, sizeof(msg), "%s", err < 0 ? pg_error_last() : "");
	cleanup(&g);
	pg_tree_free(g.tree);
	release_lock(&g);
	pg_buf_release(&g.key);
	pg_buf_release(&g.tree_path);
	pg_buf_release(&g.work);
	pg_buf_release(&g.logs);
	pg_buf_release(&g.build_dir);
	pg_buf_release(&g.home_env);
	if (err < 0) {
		pg_report_free(g.report);
		return pg_error_set(err, "%s", msg);
	}
	*out = g.report;
	return 0;
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

int pg_gate_approve(pg_report *r, const pg_gate_opts *o, const char *repo, pg_buf *notice)
{
	pg_tree *tree = NULL;
	pg_buf key = PG_BUF_INIT, path = PG_BUF_INIT, logs = PG_BUF_INIT;
	int err;

	if (!r->has_merge)
		return pg_error_set(PG_EINVALID, "'%s' has no tested merge to approve", r->tag);
	if (r->approved)
		return pg_error_set(PG_EEXISTS, "'%s' is already approved", r->tag);
	if (o->tree)
		err = pg_buf_puts(&path, o->tree);
	else
		err = pg_buf_printf(&path, "%s/linux", o->home);
	if (err == 0 && (err = pg_gate_pull_key(&key, r->tag)) == 0)
		err = pg_buf_printf(&logs, "%s/logs/%s", o->home, o->run_name ? o->run_name : key.ptr);
	if (err == 0 && (err = pg_mkdir_p(logs.ptr)) == 0 &&
	    (err = pg_tree_open(&tree, path.ptr, o->branch ? o->branch : "master")) == 0 &&
	    (err = pg_tree_advance(tree, &r->merge_base, &r->merge_commit,
				   "pullgate: approved by the maintainer")) == 0) {
		r->approved = true;
		err = write_notice(notice, logs.ptr, repo, r->tag, path.ptr, pg_tree_branch(tree), r);
	}
	pg_tree_free(tree);
	pg_buf_release(&key);
	pg_buf_release(&path);
	pg_buf_release(&logs);
	return err;
}
