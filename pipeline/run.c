/* run.c - what the runner and its stages share: progress, the tree's path, the run's log directory, the pull's key. */
#include "pipeline/run.h"
#include "common/digest.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/testpoint.h"

#include <sys/stat.h>
#include <unistd.h>

void pg_run_progress(const pg_run *run, const char *stage, const char *fmt, ...)
{
	char line[512];
	pg_progress p = { 0 };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (run->o->progress) {
		p.stage = stage;
		p.line = line;
		run->o->progress(run->o->ctx, &p);
	}
	/* after the line is out, so that a test stopped here has read it */
	pg_testpoint(stage, line);
}

void pg_run_progress_count(const pg_run *run, const char *stage, uint64_t done, uint64_t total,
			   const char *unit, uint64_t elapsed_ms)
{
	pg_progress p = { .stage = stage, .transient = true, .done = done, .total = total,
			  .unit = unit, .elapsed_ms = elapsed_ms };
	pg_buf line = PG_BUF_INIT;

	if (!run->o->progress)
		return;
	p.line = "";
	if (pg_progress_format(&line, &p) == 0)
		p.line = line.ptr;
	run->o->progress(run->o->ctx, &p);
	pg_buf_release(&line);
}

int pg_run_tree_path(pg_buf *out, const pg_gate_opts *o)
{
	return pg_gate_settings_tree_path(out, &o->settings, o->home);
}

int pg_run_logs_dir(pg_buf *out, const pg_gate_opts *o, const char *key)
{
	pg_buf dir = PG_BUF_INIT, link = PG_BUF_INIT, latest = PG_BUF_INIT;
	char name[32];
	unsigned n;
	int err;

	if ((err = pg_buf_printf(&dir, "%s/logs/%s", o->home, o->run_name ? o->run_name : key)) < 0 ||
	    (err = pg_mkdir_p(dir.ptr)) < 0)
		goto done;
	/* mkdir, not mkdir -p: a directory that exists is an earlier run's, never this one's */
	for (n = 1;; n++) {
		snprintf(name, sizeof(name), "run-%u", n);
		pg_buf_clear(out);
		if ((err = pg_buf_printf(out, "%s/%s", dir.ptr, name)) < 0)
			goto done;
		if (mkdir(out->ptr, 0755) == 0)
			break;
		if (errno != EEXIST || n == 1000000) {
			err = pg_error_set(PG_EIO, "'%s': %s", out->ptr, strerror(errno));
			goto done;
		}
	}
	/* latest -> run-N, replaced in one rename: what a reader of the logs follows */
	if ((err = pg_buf_printf(&link, "%s/latest.%ld", dir.ptr, (long)getpid())) < 0 ||
	    (err = pg_buf_printf(&latest, "%s/latest", dir.ptr)) < 0)
		goto done;
	unlink(link.ptr);
	if (symlink(name, link.ptr) < 0 || rename(link.ptr, latest.ptr) < 0) {
		err = pg_error_set(PG_EIO, "'%s': %s", latest.ptr, strerror(errno));
		unlink(link.ptr);
	}
done:
	pg_buf_release(&dir);
	pg_buf_release(&link);
	pg_buf_release(&latest);
	return err;
}

int pg_gate_pull_key(pg_buf *out, const char *tag)
{
	const char *p = strncmp(tag, "refs/tags/", 10) ? tag : tag + 10;
	size_t start = out->len;
	bool exact = *p != '\0';
	char hex[PG_SHA256_HEXSZ + 1];
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
	if ((err = pg_sha256_hex(hex, tag, strlen(tag))) < 0)
		return err;
	return pg_buf_printf(out, "%spull-%.16s", out->len > start ? "-" : "", hex);
}
