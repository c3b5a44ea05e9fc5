/* gate.c - the stage runner: each stage records its timing and findings; the first rejection stops it. */
#include "pipeline/stage.h"
#include "common/error.h"
#include "common/fs.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

/*
 * The stages after verify, in the order they run.  A stage is a file
 * (stage_<name>.c), a declaration in stage.h and a row here; its flag is
 * how --stages and the server's config select it.
 */
static const struct stage {
	const char *name;     /* in the report, progress and --stages */
	unsigned flag;        /* enum pg_gate_stage */
	pg_stage_fn run;
} stages[] = {
	{ "merge", PG_GATE_MERGE, pg_stage_merge },
	{ "build", PG_GATE_BUILD, pg_stage_build },
	{ "boot", PG_GATE_BOOT, pg_stage_boot },
	{ "approve", PG_GATE_APPROVE, pg_stage_approve },
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void pg_run_progress(const pg_run *run, const char *stage, const char *fmt, ...)
{
	char line[512];
	pg_progress p = { 0 };
	va_list ap;

	if (!run->o->progress)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	p.stage = stage;
	p.line = line;
	run->o->progress(run->o->ctx, &p);
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
	return o->tree ? pg_buf_puts(out, o->tree) : pg_buf_printf(out, "%s/linux", o->home);
}

int pg_run_logs_dir(pg_buf *out, const pg_gate_opts *o, const char *key)
{
	int err = pg_buf_printf(out, "%s/logs/%s", o->home, o->run_name ? o->run_name : key);

	return err < 0 ? err : pg_mkdir_p(out->ptr);
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

/* One kernel job at a time per $PULLGATE_HOME; the lock dies with the process. */
static int take_lock(pg_run *g)
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

static void run_init(pg_run *g, const pg_pull_spec *spec, const pg_policy *policy,
		     const pg_gate_opts *o)
{
	memset(g, 0, sizeof(*g));
	g->spec = spec;
	g->policy = policy;
	g->o = o;
	g->lock_fd = -1;
	pg_buf_init(&g->key, 0);
	pg_buf_init(&g->logs, 0);
	pg_buf_init(&g->tree_path, 0);
	pg_buf_init(&g->worktree, 0);
	pg_buf_init(&g->build_dir, 0);
	pg_buf_init(&g->home_env, 0);
}

/* Everything a stage needs, before the first one: paths, the lock, the tree. */
static int prepare(pg_run *g)
{
	const pg_gate_opts *o = g->o;
	int err;

	if ((err = pg_buf_printf(&g->home_env, "PULLGATE_HOME=%s", o->home)) < 0)
		return err;
	/* the scripts share our state directory and stream make's output to us */
	g->env[0] = g->home_env.ptr;
	g->env[1] = "PG_BUILD_STREAM=1";
	g->env[2] = NULL;
	/* the worktree itself is made by libgit2, its parent by us */
	if ((err = pg_run_tree_path(&g->tree_path, o)) < 0 ||
	    (err = pg_buf_printf(&g->worktree, "%s/work", o->home)) < 0 ||
	    (err = pg_mkdir_p(g->worktree.ptr)) < 0 ||
	    (err = pg_buf_puts(&g->worktree, "/build")) < 0 ||
	    (err = pg_buf_printf(&g->build_dir, "%s/build/arm64-gcc", o->home)) < 0 ||
	    (err = take_lock(g)) < 0 ||
	    (err = pg_tree_open(&g->tree, g->tree_path.ptr, o->branch ? o->branch : "master")) < 0)
		return err;
	/* find out now, not after a build, that approval could not move the branch */
	if (o->approve && (o->stages & PG_GATE_APPROVE))
		return pg_tree_can_advance(g->tree);
	return 0;
}

static void run_release(pg_run *g)
{
	if (g->tree && !g->keep_refs &&
	    pg_tree_drop_pull_refs(g->tree, g->key.ptr, g->report->tag) < 0)
		pg_error_clear();
	pg_tree_free(g->tree);
	if (g->lock_fd >= 0)
		close(g->lock_fd);
	pg_buf_release(&g->key);
	pg_buf_release(&g->logs);
	pg_buf_release(&g->tree_path);
	pg_buf_release(&g->worktree);
	pg_buf_release(&g->build_dir);
	pg_buf_release(&g->home_env);
}

/*
 * Record the verdict: the report as JSON (docs/report-schema.md), replaced
 * atomically, in the run's log directory beside the stage logs.
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

/* Run the selected stages in order until one does not pass. */
static int run_stages(pg_run *g)
{
	const pg_gate_opts *o = g->o;
	pg_stage *st = NULL;
	size_t i;
	int err = 0;

	for (i = 0; i < PG_ARRAY_SIZE(stages); i++) {
		uint64_t ts = now_ms();

		if (!(o->stages & stages[i].flag))
			continue;
		if (o->cancel && *o->cancel)
			return pg_error_set(PG_ECANCELLED, "cancelled before the %s stage",
					    stages[i].name);
		if ((err = pg_report_add_stage(&st, g->report, stages[i].name)) < 0)
			return err;
		pg_run_progress(g, stages[i].name, "starting");
		err = stages[i].run(g, st);
		st->elapsed_ms = now_ms() - ts;
		if (err < 0) {
			pg_stage_set(st, PG_STAGE_ERROR, NULL, "%s", pg_error_last());
			return err;
		}
		pg_run_progress(g, stages[i].name, "%s", pg_stage_status_name(st->status));
		if (st->status != PG_STAGE_PASSED)
			break; /* failed, skipped (already merged) or waiting */
	}
	return 0;
}

int pg_gate_run(pg_report **out, const pg_pull_spec *spec, const pg_policy *policy,
		const pg_gate_opts *o)
{
	pg_run g;
	pg_stage *st = NULL;
	char msg[1024];
	uint64_t t0 = now_ms();
	int err;

	*out = NULL;
	if (!pg_gate_stages_valid(o->stages))
		return pg_error_set(PG_EINVALID, "the stages must run in order from merge, without a gap "
				    "(merge, build, boot, approve): nothing is booted unbuilt or approved untested");
	run_init(&g, spec, policy, o);

	pg_run_progress(&g, "verify", "verifying %s", spec->tag);
	if ((err = pg_verify(&g.report, spec, policy, o->home)) < 0)
		return err;
	/* the verdict is recorded in the run's log directory, also for a pull stopped at verify */
	if ((err = pg_gate_pull_key(&g.key, g.report->tag)) < 0 ||
	    (err = pg_run_logs_dir(&g.logs, o, g.key.ptr)) < 0 ||
	    (err = pg_report_add_stage(&st, g.report, "verify")) < 0)
		goto done;
	st->elapsed_ms = now_ms() - t0;
	if (pg_report_verdict(g.report) != PG_VERDICT_ACCEPT)
		err = pg_stage_set(st, PG_STAGE_FAILED, NULL, "%zu error%s",
				   pg_report_count(g.report, PG_SEV_ERROR),
				   pg_report_count(g.report, PG_SEV_ERROR) == 1 ? "" : "s");
	else
		err = pg_stage_set(st, PG_STAGE_PASSED, NULL, "%zu commits", g.report->ncommits);
	if (err == 0 && st->status == PG_STAGE_PASSED && (o->stages & PG_GATE_ALL) &&
	    (err = prepare(&g)) == 0)
		err = run_stages(&g);
	if (err == 0)
		err = write_report(g.logs.ptr, g.report);
done:
	/* cleanup may meet errors of its own: keep the message of the one that stopped us */
	snprintf(msg, sizeof(msg), "%s", err < 0 ? pg_error_last() : "");
	run_release(&g);
	if (err < 0) {
		pg_report_free(g.report);
		return pg_error_set(err, "%s", msg);
	}
	*out = g.report;
	return 0;
}
