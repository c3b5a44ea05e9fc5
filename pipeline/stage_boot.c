/* stage_boot.c - the boot stage: the merge booted in QEMU, judged on this run's evidence against the base's boot. */
#include "pipeline/stage.h"
#include "pipeline/evidence.h"
#include "pipeline/lava.h"
#include "pipeline/provenance.h"
#include "common/digest.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/spawn.h"

#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

/* The console of a runaway kernel is capped before it is parsed. */
#define CONSOLE_MAX ((size_t)64 << 20)

/* One run of boot.sh and what its console showed. */
typedef struct boot {
	pg_spawn_result proc;     /* boot.sh: 0 the marker with its nonce and a power-off */
	pg_boot_result *result;   /* the parsed console; NULL when there was none */
	pg_boot_run run;          /* what the judge reads */
	char *image_sha256;       /* the Image it booted */
	pg_run *g;                /* while boot.sh runs: for the journal and progress */
	const char *stage;        /* the stage its progress is shown under */
	unsigned timeout_s;
	uint64_t started_ms, shown_ms; /* for the seconds booted */
} boot;

static void boot_init(boot *b)
{
	memset(b, 0, sizeof(*b));
	pg_spawn_result_init(&b->proc);
}

static void boot_release(boot *b)
{
	pg_spawn_result_release(&b->proc);
	pg_boot_result_free(b->result);
	free(b->image_sha256);
	boot_init(b);
}

const char *const *pg_run_boot_files(const pg_run *g)
{
	return g->o->settings.boot_on_lava ? pg_lava_boot_files : pg_boot_files;
}

/*
 * lava.sh wrote the LAVA job's log beside the console (lava_log): the
 * console is its target records, for the same parser and judge as a
 * local boot's.  No log (the job did not run) leaves no console.
 */
static int lava_console(const char *lava_log, const char *console)
{
	pg_buf log, text;
	int err;

	pg_buf_init(&log, CONSOLE_MAX);
	pg_buf_init(&text, CONSOLE_MAX);
	err = pg_buf_read_file(&log, lava_log);
	if (err == PG_ENOTFOUND) {
		pg_error_clear();
		err = 0;
	} else if (err == 0 && (err = pg_lava_console(&text, NULL, log.ptr, log.len)) == 0) {
		err = pg_write_file_atomic(console, text.ptr, text.len);
	}
	pg_buf_release(&log);
	pg_buf_release(&text);
	return err;
}

static int image_path(pg_buf *out, const pg_run *g)
{
	return pg_buf_printf(out, "%s/arch/arm64/boot/Image", g->build_dir.ptr);
}

/* Read and parse a console; a missing one leaves b->result NULL. */
static int read_console(boot *b, const char *console)
{
	pg_buf text;
	int err;

	pg_buf_init(&text, CONSOLE_MAX);
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
	pg_buf_release(&text);
	b->run.result = b->result;
	return err;
}

/* Seconds booted so far, at most once a second, whenever boot.sh prints. */
static int boot_tick(void *ctx, const char *line, size_t len)
{
	boot *b = ctx;
	uint64_t now = pg_progress_now_ms();
	char text[96];
	pg_progress p = { .stage = b->stage, .line = text, .transient = true };

	(void)line;
	(void)len;
	if (now - b->shown_ms >= 1000 && b->g->o->progress) {
		b->shown_ms = now;
		p.elapsed_ms = now - b->started_ms;
		snprintf(text, sizeof(text), "%" PRIu64 " s of at most %u s", p.elapsed_ms / 1000,
			 b->timeout_s);
		b->g->o->progress(b->g->o->ctx, &p);
	}
	return 0;
}

static void boot_started(void *ctx, int pid)
{
	pg_journal_child(((boot *)ctx)->g, pid);
}

/*
 * Boot the Image in the build dir with boot.sh (BUILD_DIR LOG TIMEOUT
 * NONCE), its console to console and its own messages to log; 0 when it
 * ran (judge b), negative when it could not run or was cancelled.
 */
static int run_boot(boot *b, pg_run *g, const char *console, const char *log,
		    const char *nonce, unsigned timeout_s)
{
	pg_spawn_opts so = PG_SPAWN_OPTS_INIT;
	pg_buf script = PG_BUF_INIT, image = PG_BUF_INIT, lava_log = PG_BUF_INIT;
	bool lava = g->o->settings.boot_on_lava;
	char timeout[16];
	const char *argv[6];
	int err;

	snprintf(timeout, sizeof(timeout), "%u", timeout_s);
	if ((err = pg_buf_printf(&script, "%s/%s", g->o->datadir, pg_run_boot_files(g)[0])) < 0 ||
	    (err = image_path(&image, g)) < 0 ||
	    (err = pg_prov_file_sha256(&b->image_sha256, image.ptr)) < 0 ||
	    (lava && (err = pg_buf_printf(&lava_log, "%.*s/lava.log",
					  (int)(strrchr(console, '/') - console), console)) < 0))
		goto done;
	argv[0] = script.ptr;
	argv[1] = g->build_dir.ptr;
	argv[2] = lava ? lava_log.ptr : console;
	argv[3] = timeout;
	argv[4] = nonce;
	argv[5] = NULL;
	so.env = g->env;
	so.log_path = log;
	/* boot.sh packs the initramfs, then gives QEMU timeout_s */
	so.timeout_ms = (timeout_s + 120) * 1000u;
	so.cancel = g->o->cancel;
	so.on_start = boot_started;
	so.on_line = boot_tick;
	so.ctx = b;
	b->g = g;
	b->timeout_s = timeout_s;
	b->started_ms = b->shown_ms = pg_progress_now_ms();
	if ((err = pg_spawn_run(&b->proc, argv, &so)) < 0)
		goto done;
	pg_journal_child(g, 0);
	if (b->proc.cancelled) {
		err = pg_error_set(PG_ECANCELLED, "the boot was cancelled");
		goto done;
	}
	/* exported, not run: nothing was booted, so there is nothing to judge */
	if (lava && !b->proc.timed_out && b->proc.exit_code == 3) {
		err = pg_error_set(PG_EUNSUPPORTED, "the LAVA job is written to %.*s/lava-job.yaml "
				   "and was not run (the policy names no pipeline.lava.url or "
				   "lava.device): no boot, "
				   "no verdict", (int)(strrchr(console, '/') - console), console);
		goto done;
	}
	/* the lab could not run it (down, refusing, cancelled, never started): not the pull's boot */
	if (lava && !b->proc.timed_out && b->proc.exit_code == 4) {
		err = pg_error_set(PG_EIO, "the LAVA lab could not run the job (see %s): no boot, "
				   "no verdict", log);
		goto done;
	}
	if (lava && (err = lava_console(lava_log.ptr, console)) < 0)
		goto done;
	b->run.timed_out = b->proc.timed_out || b->proc.exit_code == 124;
	b->run.exit_status = b->proc.exit_code;
	b->run.nonce = nonce;
	err = read_console(b, console);
done:
	pg_buf_release(&script);
	pg_buf_release(&image);
	pg_buf_release(&lava_log);
	return err;
}

/* --- the base's boot, kept per base tree, scripts and tools ---------------------- */

/*
 * build_dir/base-boot-<key>: console.log, boot-script.log and meta
 * ("nonce N\nexit E\nimage SHA\n").  The key hashes the base's tree,
 * run->tools_key (every build and boot script and input by content, the
 * compiler's and QEMU's versions) and the pull's KUnit selection, if any,
 * which with the fragment fix the config.
 */
static int base_dir(pg_buf *out, const pg_run *g, const pg_oid *base_tree)
{
	char tree[PG_OID_HEXSZ + 1], key[PG_SHA256_HEXSZ + 1];
	pg_buf text = PG_BUF_INIT;
	int err;

	pg_oid_tohex(tree, base_tree);
	if ((err = pg_buf_printf(&text, "%s %s", tree, g->tools_key.ptr)) == 0 &&
	    (!g->select_key.len || (err = pg_buf_printf(&text, " %s", g->select_key.ptr)) == 0) &&
	    (err = pg_sha256_hex(key, text.ptr, text.len)) == 0)
		err = pg_buf_printf(out, "%s/base-boot-%.24s", g->build_dir.ptr, key);
	pg_buf_release(&text);
	return err;
}

bool pg_run_base_boot_needed(pg_run *g, const pg_oid *base_tree)
{
	pg_buf meta = PG_BUF_INIT;
	bool needed = true;

	pg_buf_clear(&g->base_boot);
	if (base_dir(&g->base_boot, g, base_tree) == 0 &&
	    pg_buf_printf(&meta, "%s/meta", g->base_boot.ptr) == 0)
		needed = access(meta.ptr, R_OK) != 0;
	pg_error_clear();
	pg_buf_release(&meta);
	return needed;
}

int pg_run_base_boot(pg_run *g, const pg_oid *base_tree)
{
	pg_buf tmp = PG_BUF_INIT, console = PG_BUF_INIT, log = PG_BUF_INIT, meta = PG_BUF_INIT,
	       nonce = PG_BUF_INIT, path = PG_BUF_INIT;
	unsigned t = g->o->settings.boot_timeout_s;
	boot b;
	int err;

	boot_init(&b);
	pg_buf_clear(&g->base_boot);
	if ((err = base_dir(&g->base_boot, g, base_tree)) < 0 ||
	    (err = pg_buf_printf(&tmp, "%s.tmp", g->base_boot.ptr)) < 0 ||
	    (err = pg_remove_tree(tmp.ptr)) < 0 || (err = pg_mkdir_p(tmp.ptr)) < 0 ||
	    (err = pg_buf_printf(&console, "%s/console.log", tmp.ptr)) < 0 ||
	    (err = pg_buf_printf(&log, "%s/boot-script.log", tmp.ptr)) < 0 ||
	    (err = pg_random_hex(&nonce, 16)) < 0)
		goto done;
	pg_run_progress(g, "build", "booting the base for its KUnit results (timeout %u s)", t);
	b.stage = "build";
	if ((err = run_boot(&b, g, console.ptr, log.ptr, nonce.ptr, t)) < 0)
		goto done;
	if ((err = pg_buf_printf(&meta, "nonce %s\nexit %d\nimage %s\n", nonce.ptr,
				 b.run.timed_out ? 124 : b.proc.exit_code,
				 b.image_sha256 ? b.image_sha256 : "-")) < 0 ||
	    (err = pg_buf_printf(&path, "%s/meta", tmp.ptr)) < 0 ||
	    (err = pg_write_file_atomic(path.ptr, meta.ptr, meta.len)) < 0 ||
	    (err = pg_remove_tree(g->base_boot.ptr)) < 0)
		goto done;
	if (rename(tmp.ptr, g->base_boot.ptr) < 0)
		err = pg_error_set(PG_EIO, "'%s': %s", g->base_boot.ptr, strerror(errno));
	else
		g->base_booted = true;
done:
	boot_release(&b);
	pg_buf_release(&tmp);
	pg_buf_release(&console);
	pg_buf_release(&log);
	pg_buf_release(&meta);
	pg_buf_release(&nonce);
	pg_buf_release(&path);
	return err;
}

/* "name value" of the base's meta file (value up to the end of the line). */
static char *meta_value(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, name, n) && p[n] == ' ')
			return pg_strndup(p + n + 1, strcspn(p + n + 1, "\n"));
	return NULL;
}

/*
 * Load the base's kept boot into b and record its provenance; a copy of
 * its console goes into the run's logs.  Nothing to load (the build stage
 * did not run) leaves b empty: the merge is judged on its own.
 */
static int load_base(boot *b, char **nonce, pg_run *g)
{
	pg_buf meta = PG_BUF_INIT, console = PG_BUF_INIT, copy = PG_BUF_INIT, text;
	pg_provenance *p = NULL;
	char *exit_s = NULL;
	int err;

	*nonce = NULL;
	pg_buf_init(&text, CONSOLE_MAX);
	if (!g->base_boot.len)
		return 0;
	if ((err = pg_buf_printf(&meta, "%s/meta", g->base_boot.ptr)) < 0 ||
	    (err = pg_buf_read_file(&text, meta.ptr)) < 0)
		goto done;
	*nonce = meta_value(text.ptr, "nonce");
	exit_s = meta_value(text.ptr, "exit");
	b->image_sha256 = meta_value(text.ptr, "image");
	b->run.exit_status = exit_s ? (int)strtol(exit_s, NULL, 10) : -1;
	b->run.timed_out = b->run.exit_status == 124;
	b->run.nonce = *nonce;
	pg_buf_clear(&text);
	if ((err = pg_buf_printf(&console, "%s/console.log", g->base_boot.ptr)) < 0 ||
	    (err = read_console(b, console.ptr)) < 0 ||
	    (err = pg_buf_printf(&copy, "%s/base-boot.log", g->logs.ptr)) < 0)
		goto done;
	/* the run's own record of the base's console, beside the merge's */
	if (pg_buf_read_file(&text, console.ptr) == 0)
		err = pg_write_file_atomic(copy.ptr, text.ptr, text.len);
	pg_error_clear();
	if (err < 0 || (err = pg_report_add_provenance(&p, g->report, "base-boot")) < 0 ||
	    (err = pg_prov_files(g->report, p, g->o->datadir, pg_run_boot_files(g))) < 0 ||
	    (err = pg_provenance_set(&p->qemu, g->qemu)) < 0 ||
	    (err = pg_provenance_set(&p->image_sha256, b->image_sha256)) < 0 ||
	    (err = pg_provenance_set(&p->nonce, *nonce)) < 0 ||
	    (err = pg_provenance_set(&p->log, copy.ptr)) < 0)
		goto done;
	p->exit_status = b->run.exit_status;
	p->cached = !g->base_booted;
done:
	free(exit_s);
	pg_buf_release(&meta);
	pg_buf_release(&console);
	pg_buf_release(&copy);
	pg_buf_release(&text);
	return err;
}

/* One line on the base's boot for the report: what it showed, or why it shows nothing. */
static int base_summary(pg_run *g, const boot *base)
{
	pg_buf line = PG_BUF_INIT, why = PG_BUF_INIT;
	const pg_boot_result *r = base->result;
	int gaps, err;

	if (!g->base_boot.len)
		return 0;
	if ((gaps = pg_boot_run_gaps(&why, &base->run)) < 0)
		return gaps;
	pg_buf_rtrim(&why);
	if (gaps)
		err = pg_buf_printf(&line, "no evidence, so the merge is judged on its own: %s",
				    why.ptr);
	else
		err = pg_buf_printf(&line, "%zu passed, %zu failed, %zu skipped, %zu crashed, "
				    "%zu splats", r->passed, r->failed, r->skipped, r->crashed,
				    r->nsplats);
	if (err == 0)
		err = pg_provenance_set(&g->report->base_boot, line.ptr);
	pg_buf_release(&line);
	pg_buf_release(&why);
	return err;
}

int pg_stage_boot(pg_run *g, pg_stage *st)
{
	pg_buf console = PG_BUF_INIT, log = PG_BUF_INIT;
	unsigned t = g->o->settings.boot_timeout_s;
	pg_provenance *p = NULL;
	char *base_nonce = NULL;
	const pg_boot_result *res;
	size_t at;
	boot b, base;
	int err;

	boot_init(&b);
	boot_init(&base);
	/* a fresh run directory: neither file exists until this run's boot.sh writes it */
	if ((err = pg_buf_printf(&console, "%s/boot.log", g->logs.ptr)) < 0 ||
	    (err = pg_buf_printf(&log, "%s/boot-script.log", g->logs.ptr)) < 0 ||
	    (err = pg_report_add_provenance(&p, g->report, "boot")) < 0)
		goto done;
	/* the array may move when the base's is added: keep the index */
	at = g->report->nprovenance - 1;
	if ((err = pg_prov_files(g->report, p, g->o->datadir, pg_run_boot_files(g))) < 0 ||
	    (err = pg_provenance_set(&p->qemu, g->qemu)) < 0 ||
	    (err = pg_provenance_set(&p->nonce, g->nonce.ptr)) < 0 ||
	    (err = pg_provenance_set(&p->log, console.ptr)) < 0)
		goto done;
	/* a stand-in's boot never passes for QEMU's or a lab's, even while it runs */
	pg_run_progress(g, "boot", "booting %s (timeout %u s)", p->simulated ?
			"with a stand-in script, SIMULATED: nothing is really booted" :
			!g->o->settings.boot_on_lava ? "in qemu-system-aarch64" : g->policy->lava_device ?
			"with LAVA's dispatcher (lava-run) on this machine" : "on the LAVA lab", t);
	b.stage = "boot";
	if ((err = run_boot(&b, g, console.ptr, log.ptr, g->nonce.ptr, t)) < 0)
		goto done;
	p = &g->report->provenance[at];
	p->exit_status = b.run.timed_out ? 124 : b.proc.exit_code;
	if ((err = pg_provenance_set(&p->image_sha256, b.image_sha256)) < 0 ||
	    (err = load_base(&base, &base_nonce, g)) < 0 ||
	    (err = base_summary(g, &base)) < 0 ||
	    (err = pg_boot_judge(g->report, g->policy, &b.run,
				 g->base_boot.len ? &base.run : NULL, t)) < 0)
		goto done;
	res = b.result;
	if (res)
		err = pg_stage_set(st, pg_report_verdict(g->report) == PG_VERDICT_ACCEPT ?
				   PG_STAGE_PASSED : PG_STAGE_FAILED, console.ptr,
				   "%zu passed, %zu failed, %zu skipped, %zu crashed, %zu splats; "
				   "booted in %.1f s", res->passed, res->failed, res->skipped,
				   res->crashed, res->nsplats, res->boot_time);
	else
		err = pg_stage_set(st, PG_STAGE_FAILED, NULL, "no console output");
done:
	free(base_nonce);
	boot_release(&b);
	boot_release(&base);
	pg_buf_release(&console);
	pg_buf_release(&log);
	return err;
}
