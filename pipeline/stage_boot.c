/* stage_boot.c - the boot stage: the build booted in QEMU, judged by its console's KTAP results and splats. */
#include "pipeline/stage.h"
#include "pipeline/ktap.h"
#include "common/error.h"
#include "common/spawn.h"

#include <inttypes.h>

/* The console of a runaway kernel is capped before it is parsed. */
#define CONSOLE_MAX ((size_t)64 << 20)

/* One run of boot.sh and what its console showed. */
typedef struct boot {
	pg_spawn_result proc;     /* boot.sh: 0 powered off, 1 no marker, 124 timeout */
	bool timed_out;           /* boot.sh's timeout or ours */
	pg_boot_result *result;   /* the parsed console; NULL when there was none */
	pg_run *run;
	unsigned timeout_s;
	uint64_t started_ms, shown_ms; /* for the seconds booted */
} boot;

/* Seconds booted so far, at most once a second, whenever boot.sh prints. */
static int boot_tick(void *ctx, const char *line, size_t len)
{
	boot *b = ctx;
	uint64_t now = pg_progress_now_ms();
	char text[96];
	pg_progress p = { .stage = "boot", .line = text, .transient = true };

	(void)line;
	(void)len;
	if (now - b->shown_ms >= 1000 && b->run->o->progress) {
		b->shown_ms = now;
		p.elapsed_ms = now - b->started_ms;
		snprintf(text, sizeof(text), "%" PRIu64 " s of at most %u s", p.elapsed_ms / 1000,
			 b->timeout_s);
		b->run->o->progress(b->run->o->ctx, &p);
	}
	return 0;
}

/*
 * Boot the kernel in build_dir with boot.sh, its console to console and
 * its own messages to log; 0 when it ran (judge b), negative when it could
 * not run.
 */
static int run_boot(boot *b, pg_run *g, const char *build_dir, const char *console,
		    const char *log, unsigned timeout_s)
{
	pg_spawn_opts so = PG_SPAWN_OPTS_INIT;
	pg_buf script = PG_BUF_INIT, text;
	char timeout[16];
	const char *argv[5];
	int err;

	pg_buf_init(&text, CONSOLE_MAX);
	snprintf(timeout, sizeof(timeout), "%u", timeout_s);
	if ((err = pg_buf_printf(&script, "%s/scripts/kernel/boot.sh", g->o->datadir)) < 0)
		goto done;
	argv[0] = script.ptr;
	argv[1] = build_dir;
	argv[2] = console;
	argv[3] = timeout;
	argv[4] = NULL;
	so.env = g->env;
	so.log_path = log;
	/* boot.sh packs the initramfs, then gives QEMU timeout_s */
	so.timeout_ms = (timeout_s + 120) * 1000u;
	so.cancel = g->o->cancel;
	so.on_line = boot_tick;
	so.ctx = b;
	b->run = g;
	b->timeout_s = timeout_s;
	b->started_ms = b->shown_ms = pg_progress_now_ms();
	if ((err = pg_spawn_run(&b->proc, argv, &so)) < 0)
		goto done;
	b->timed_out = b->proc.timed_out || b->proc.exit_code == 124;
	err = pg_buf_read_file(&text, console);
	if (err == PG_ENOTFOUND) {
		pg_error_clear();
		err = 0;
		goto done;
	}
	if (err == PG_ETOOBIG) {
		/* judge what fits: a kernel printing 64 MiB is itself the finding */
		pg_error_clear();
		err = 0;
	}
	if (err == 0)
		err = pg_ktap_parse(&b->result, text.ptr, text.len);
done:
	pg_buf_release(&script);
	pg_buf_release(&text);
	return err;
}

/* One finding per failed or crashed test and per splat; one when there are no results. */
static int findings(pg_run *g, const pg_boot_result *res)
{
	enum pg_severity sev = g->policy->severity[PG_CHECK_KTAP_FAILURE];
	size_t i;
	int err = 0;

	if (!res || !res->saw_ktap)
		err = pg_report_add(NULL, g->report, PG_CHECK_KTAP_FAILURE, sev, NULL,
				    "the console shows no KTAP results");
	for (i = 0; err == 0 && res && i < res->ntests; i++) {
		const pg_ktap_test *tc = &res->tests[i];
		pg_finding *f = NULL;

		if (tc->has_subtests || (tc->status != PG_KTAP_FAIL && tc->status != PG_KTAP_CRASHED))
			continue;
		err = pg_report_add(&f, g->report, PG_CHECK_KTAP_FAILURE, sev, NULL, "%s %s",
				    tc->path, tc->status == PG_KTAP_FAIL ? "failed" : "crashed");
		if (err == 0 && tc->reason)
			err = pg_finding_detail(f, "reason", tc->reason, NULL);
	}
	sev = g->policy->severity[PG_CHECK_KERNEL_SPLAT];
	for (i = 0; err == 0 && res && i < res->nsplats; i++) {
		const pg_splat *s = &res->splats[i];
		const char *nl = strchr(s->text, '\n');
		pg_finding *f = NULL;

		err = pg_report_add(&f, g->report, PG_CHECK_KERNEL_SPLAT, sev, NULL, "%s: %.*s",
				    pg_splat_kind_name(s->kind),
				    (int)(nl ? (size_t)(nl - s->text) : strlen(s->text)), s->text);
		if (err == 0)
			err = pg_finding_detail(f, "console", s->text, NULL);
	}
	return err;
}

int pg_stage_boot(pg_run *g, pg_stage *st)
{
	pg_buf console = PG_BUF_INIT, log = PG_BUF_INIT;
	unsigned t = g->o->boot_timeout_s ? g->o->boot_timeout_s : 300;
	const pg_boot_result *res;
	boot b;
	int err;

	memset(&b, 0, sizeof(b));
	pg_spawn_result_init(&b.proc);
	if ((err = pg_buf_printf(&console, "%s/boot.log", g->logs.ptr)) < 0 ||
	    (err = pg_buf_printf(&log, "%s/boot-script.log", g->logs.ptr)) < 0 ||
	    (err = pg_write_file_atomic(log.ptr, "", 0)) < 0)
		goto done;
	pg_run_progress(g, "boot", "booting in qemu-system-aarch64 (timeout %u s)", t);
	if ((err = run_boot(&b, g, g->build_dir.ptr, console.ptr, log.ptr, t)) < 0)
		goto done;
	if (b.proc.cancelled) {
		err = pg_error_set(PG_ECANCELLED, "the boot was cancelled");
		goto done;
	}
	if (b.timed_out)
		err = pg_report_add(NULL, g->report, PG_CHECK_BOOT_TIMEOUT,
				    g->policy->severity[PG_CHECK_BOOT_TIMEOUT], NULL,
				    "the kernel did not power off within %u s", t);
	res = b.result;
	if (err == 0)
		err = findings(g, res);
	if (err == 0 && res)
		err = pg_stage_set(st, pg_report_verdict(g->report) == PG_VERDICT_ACCEPT ?
				   PG_STAGE_PASSED : PG_STAGE_FAILED, console.ptr,
				   "%zu passed, %zu failed, %zu skipped, %zu crashed, %zu splats; "
				   "booted in %.1f s", res->passed, res->failed, res->skipped,
				   res->crashed, res->nsplats, res->boot_time);
	else if (err == 0)
		err = pg_stage_set(st, PG_STAGE_FAILED, console.ptr, "no console output");
done:
	pg_boot_result_free(b.result);
	pg_spawn_result_release(&b.proc);
	pg_buf_release(&console);
	pg_buf_release(&log);
	return err;
}
