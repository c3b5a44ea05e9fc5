/* isolate.c - a job's run of the gate in a child process: `pullgate gate`, bounded, its progress and report read back as untrusted JSON. */
#include "server/isolate.h"
#include "common/array.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/json.h"
#include "common/spawn.h"
#include "pipeline/gate.h"

#include <limits.h>
#include <unistd.h>

/* Past the policy's deadline, which the child keeps itself, before it is killed. */
#define KILL_AFTER_S 15
/* A kernel run's merge, fetches and waits besides its build and boots. */
#define KERNEL_SLACK_S 1800
/* Between SIGTERM and SIGKILL: a cancelled gate stops its build and cleans up first. */
#define KERNEL_GRACE_MS 60000

/* What the child said: the last "error: " line, else the last line. */
typedef struct said {
	const pg_isolate_opts *o;
	char error[512];
	char last[512];
} said;

static void keep_line(char *dst, size_t cap, const char *line, size_t len)
{
	snprintf(dst, cap, "%.*s", (int)(len < cap - 1 ? len : cap - 1), line);
}

static uint64_t count(const pg_json *v, const char *key)
{
	int64_t n = 0;

	return pg_json_get_int(v, key, &n) == 0 && n > 0 ? (uint64_t)n : 0;
}

/* One event of the child's --progress-json, handed on; a line that is none is ignored. */
static void progress_line(said *s, const char *line, size_t len)
{
	pg_json *v = NULL;
	pg_progress p = { 0 };

	if (pg_json_parse(&v, line, len) < 0) {
		pg_error_clear();
		return;
	}
	p.stage = pg_json_get_str(v, "stage");
	p.line = pg_json_get_str(v, "line");
	if (p.stage && p.line && strlen(p.stage) < 32) {
		p.transient = pg_json_get_bool(v, "transient");
		p.done = count(v, "done");
		p.total = count(v, "total");
		p.unit = pg_json_get_str(v, "unit");
		p.bytes = count(v, "bytes");
		p.elapsed_ms = count(v, "elapsed_ms");
		s->o->progress(s->o->ctx, &p);
	}
	pg_json_free(v);
}

/* A JSON line is the child's progress, "error: " its reason; the last other line is kept. */
static int on_line(void *ctx, const char *line, size_t len)
{
	said *s = ctx;

	if (!len)
		return 0;
	if (len > 7 && !memcmp(line, "error: ", 7)) {
		keep_line(s->error, sizeof(s->error), line + 7, len - 7);
		return 0;
	}
	if (line[0] == '{') {
		if (s->o->progress)
			progress_line(s, line, len);
		return 0;
	}
	keep_line(s->last, sizeof(s->last), line, len);
	return 0;
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGABRT: return "SIGABRT";
	case SIGFPE: return "SIGFPE";
	case SIGILL: return "SIGILL";
	case SIGKILL: return "SIGKILL";
	case SIGTERM: return "SIGTERM";
	default: return "a signal";
	}
}

/* The report the child left: read as untrusted, and it must say what the exit status said. */
static int read_report(pg_report **out, const char *path, int exit_code, const char *what)
{
	pg_buf text = PG_BUF_INIT;
	pg_report *r = NULL;
	int err;

	pg_buf_init(&text, PG_REPORT_JSON_MAX);
	if ((err = pg_buf_read_file(&text, path)) < 0) {
		err = pg_error_set(err, "the %s exited %d without its report: %s", what,
				   exit_code, pg_error_last());
		goto done;
	}
	if ((err = pg_report_parse_json(&r, text.ptr, text.len)) < 0) {
		err = pg_error_set(err, "the %s left a damaged report: %s", what,
				   pg_error_last());
		goto done;
	}
	if ((pg_report_verdict(r) == PG_VERDICT_ACCEPT) != (exit_code == 0)) {
		err = pg_error_set(PG_EINVALID, "the %s exited %d, but its report says %s",
				   what, exit_code, pg_report_verdict(r) == PG_VERDICT_ACCEPT ?
				   "accept" : "reject");
		goto done;
	}
	*out = r;
	r = NULL;
done:
	pg_report_free(r);
	pg_buf_release(&text);
	return err;
}

/* Why the child ended without a report. */
static int child_failed(const pg_spawn_result *res, const said *s, const char *what,
			unsigned deadline_s, bool verify)
{
	const char *words = s->error[0] ? s->error : s->last;

	if (res->cancelled)
		return pg_error_set(PG_ECANCELLED, "cancelled while running");
	if (res->timed_out && verify)
		return pg_error_set(PG_EIO, "verify did not finish within %u s (the policy's "
				    "verify-timeout-seconds): its process was killed", deadline_s);
	if (res->timed_out)
		return pg_error_set(PG_EIO, "the %s did not finish within %u s (the deadlines of "
				    "its verify, build and boots, and %u s more): its process was "
				    "killed", what, deadline_s, KERNEL_SLACK_S);
	if (res->signal)
		return pg_error_set(PG_EIO, "the %s died of %s (signal %d) reading the pull%s%s",
				    what, signal_name(res->signal), res->signal,
				    words[0] ? "; its last words: " : "", words);
	if (res->exit_code == 3 && s->error[0])
		return pg_error_set(PG_EIO, "%s", s->error);
	return pg_error_set(PG_EIO, "the %s exited %d%s%s", what, res->exit_code,
			    words[0] ? ": " : "", words);
}

/* "merge,build,boot,approve" from the flags (pg_gate_stage). */
static int stage_list(pg_buf *out, unsigned stages)
{
	static const struct {
		unsigned flag;
		const char *name;
	} names[] = { { PG_GATE_MERGE, "merge" }, { PG_GATE_BUILD, "build" },
		      { PG_GATE_BOOT, "boot" }, { PG_GATE_APPROVE, "approve" } };
	size_t i;
	int err = 0;

	for (i = 0; i < PG_ARRAY_SIZE(names) && err == 0; i++)
		if (stages & names[i].flag)
			err = pg_buf_printf(out, "%s%s", out->len ? "," : "", names[i].name);
	return err == 0 && !out->len ? pg_buf_puts(out, "verify") : err;
}

/* The pullgate binary this service runs: the child is the same program. */
static int self_exe(char *path, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", path, cap - 1);

	if (n <= 0 || (size_t)n >= cap - 1)
		return pg_error_set(PG_EIO, "cannot find this program (/proc/self/exe): %s",
				    n < 0 ? strerror(errno) : "too long");
	path[n] = '\0';
	return 0;
}

/* OPT and ID's hex as two arguments: hex holds the text the argv points into. */
static int oid_arg(const char **argv, size_t *n, pg_buf *hex, const char *opt, const pg_oid *id)
{
	char s[PG_OID_HEXSZ + 1];
	int err;

	pg_oid_tohex(s, id);
	if ((err = pg_buf_puts(hex, s)) < 0)
		return err;
	argv[(*n)++] = opt;
	argv[(*n)++] = hex->ptr;
	return 0;
}

/* The file the service read, and only as it read it: the child refuses a changed file. */
static void policy_args(const char **argv, size_t *n, const pg_policy *policy)
{
	if (strcmp(policy->source, PG_POLICY_BUILT_IN)) {
		argv[(*n)++] = "--policy";
		argv[(*n)++] = policy->source;
		argv[(*n)++] = "--policy-sha256";
		argv[(*n)++] = policy->sha256;
	}
}

/* A directory of the child's own under home/tmp, which exists: the service holds its share of it (pg_scratch_claim). */
static int scratch_dir(pg_buf *dir, const char *home)
{
	int err;

	if ((err = pg_buf_printf(dir, "%s/tmp/gate-XXXXXX", home)) < 0)
		return err;
	if (!mkdtemp(dir->ptr))
		return pg_error_set(PG_EIO, "'%s': %s", dir->ptr, strerror(errno));
	return 0;
}

/* The kernel stages' settings as the child's options: the service's, resolved (pipeline/settings.h). */
static int kernel_args(const char **argv, size_t *n, pg_buf *worktrees, pg_buf *expect,
		       pg_buf *onto, const pg_isolate_pull *pull, const pg_gate_settings *gs)
{
	int err;

	argv[(*n)++] = "--no-approve"; /* the service approves, as the maintainer does */
	if (gs->tree) {
		argv[(*n)++] = "--tree";
		argv[(*n)++] = gs->tree;
	}
	argv[(*n)++] = "--branch";
	argv[(*n)++] = gs->branch;
	if (gs->merge_name) {
		argv[(*n)++] = "--merge-name";
		argv[(*n)++] = gs->merge_name;
	}
	if (gs->merge_email) {
		argv[(*n)++] = "--merge-email";
		argv[(*n)++] = gs->merge_email;
	}
	if ((err = pg_buf_printf(worktrees, "%u", gs->build_worktrees)) < 0)
		return err;
	argv[(*n)++] = "--build-worktrees";
	argv[(*n)++] = worktrees->ptr;
	if (pull->expect && (err = oid_arg(argv, n, expect, "--expect-tag", pull->expect)) < 0)
		return err;
	if (pull->onto && (err = oid_arg(argv, n, onto, "--onto", pull->onto)) < 0)
		return err;
	return 0;
}

int pg_isolated_gate(pg_report **out, const pg_isolate_pull *pull, const pg_isolate_opts *o)
{
	const pg_policy *policy = o->policy;
	const pg_gate_settings *gs = o->settings;
	const char *what = pull->stages ? "gate process" : "verify process";
	pg_spawn_opts so = PG_SPAWN_OPTS_INIT;
	pg_spawn_result res;
	pg_buf dir = PG_BUF_INIT, mail = PG_BUF_INIT, report = PG_BUF_INIT, cache = PG_BUF_INIT,
	       home_env = PG_BUF_INIT, datadir_env = PG_BUF_INIT, stages = PG_BUF_INIT,
	       worktrees = PG_BUF_INIT, expect = PG_BUF_INIT, onto = PG_BUF_INIT,
	       memory = PG_BUF_INIT;
	const char *argv[48], *env[3];
	char exe[PATH_MAX];
	said s = { .o = o };
	unsigned deadline_s = policy->verify_timeout_seconds;
	size_t n = 0, e = 0;
	bool made = false;
	int err;

	*out = NULL;
	pg_spawn_result_init(&res);
	if (pull->stages && !gs)
		return pg_error_set(PG_EINVALID, "the kernel stages want their settings");
	if ((err = self_exe(exe, sizeof(exe))) < 0 ||
	    (err = stage_list(&stages, pull->stages)) < 0 ||
	    (err = scratch_dir(&dir, o->home)) < 0)
		goto done;
	made = true;
	if ((err = pg_buf_printf(&report, "%s/report.json", dir.ptr)) < 0 ||
	    (err = pg_buf_printf(&cache, "%llu", (unsigned long long)o->index_cache_size)) < 0 ||
	    (err = pg_buf_printf(&memory, "%llu", (unsigned long long)o->index_memory)) < 0 ||
	    (err = pg_buf_printf(&home_env, "PULLGATE_HOME=%s", o->home)) < 0)
		goto done;
	argv[n++] = exe;
	argv[n++] = "gate";
	argv[n++] = "--stages";
	argv[n++] = stages.ptr;
	argv[n++] = "--progress-json";
	argv[n++] = "--report-file";
	argv[n++] = report.ptr;
	argv[n++] = "--run-name";
	argv[n++] = pull->run_name;
	if (o->index_cache_size) {
		argv[n++] = "--index-cache-size";
		argv[n++] = cache.ptr;
	}
	if (o->index_memory) {
		argv[n++] = "--index-memory";
		argv[n++] = memory.ptr;
	}
	policy_args(argv, &n, policy);
	if (pull->name) {
		argv[n++] = "--url";
		argv[n++] = pull->name;
	}
	if (pull->mail) {
		if ((err = pg_buf_printf(&mail, "%s/request.mbox", dir.ptr)) < 0 ||
		    (err = pg_write_file_atomic(mail.ptr, pull->mail, pull->mail_len)) < 0)
			goto done;
		argv[n++] = "--pull-request";
		argv[n++] = mail.ptr;
	}
	if (pull->stages &&
	    (err = kernel_args(argv, &n, &worktrees, &expect, &onto, pull, gs)) < 0)
		goto done;
	argv[n++] = "--"; /* a repository or a tag may start with '-' */
	argv[n++] = pull->repo;
	argv[n++] = pull->tag;
	argv[n] = NULL;
	env[e++] = home_env.ptr;
	if (o->datadir) {
		if ((err = pg_buf_printf(&datadir_env, "PULLGATE_DATADIR=%s", o->datadir)) < 0)
			goto done;
		env[e++] = datadir_env.ptr;
	}
	env[e] = NULL;

	so.env = env;
	so.tail_max = 4096;
	so.on_line = on_line;
	so.ctx = &s;
	so.cancel = o->cancel;
	so.no_core = true;
	so.die_with_parent = true;
	if (pull->stages) {
		/* verify, the build, the base's boot and the merge's, and the rest */
		deadline_s += gs->build_timeout_s + 2 * gs->boot_timeout_s;
		so.timeout_ms = (deadline_s + KERNEL_SLACK_S) * 1000U;
		so.grace_ms = KERNEL_GRACE_MS;
	} else {
		so.timeout_ms = (deadline_s + KILL_AFTER_S) * 1000U;
#if defined(__SANITIZE_ADDRESS__)
		/* AddressSanitizer reserves terabytes of shadow address space: no RLIMIT_AS under it */
		so.max_memory = 0;
#else
		so.max_memory = o->max_memory;
#endif
	}
	if ((err = pg_spawn_run(&res, argv, &so)) < 0)
		goto done;
	if (!res.cancelled && !res.timed_out && !res.signal &&
	    (res.exit_code == 0 || res.exit_code == 1))
		err = read_report(out, report.ptr, res.exit_code, what);
	else
		err = child_failed(&res, &s, what, deadline_s, !pull->stages);
done:
	/* what cannot be removed now, the next start of the service sweeps (pg_scratch_claim) */
	if (made && pg_remove_tree(dir.ptr) < 0 && err == 0)
		pg_error_clear();
	pg_spawn_result_release(&res);
	pg_buf_release(&dir);
	pg_buf_release(&mail);
	pg_buf_release(&report);
	pg_buf_release(&cache);
	pg_buf_release(&memory);
	pg_buf_release(&home_env);
	pg_buf_release(&datadir_env);
	pg_buf_release(&stages);
	pg_buf_release(&worktrees);
	pg_buf_release(&expect);
	pg_buf_release(&onto);
	return err;
}

/* The conflicts child's output: its JSON document, its "error: " line. */
typedef struct heard {
	pg_buf out;
	bool over;
	char error[512];
} heard;

#define CONFLICTS_OUTPUT_MAX (4U << 20)

static int on_output(void *ctx, const char *line, size_t len)
{
	heard *h = ctx;

	if (len > 7 && !memcmp(line, "error: ", 7)) {
		keep_line(h->error, sizeof(h->error), line + 7, len - 7);
		return 0;
	}
	if (h->out.len + len + 1 > CONFLICTS_OUTPUT_MAX) {
		h->over = true;
		return 0;
	}
	return pg_buf_put(&h->out, line, len) < 0 || pg_buf_putc(&h->out, '\n') < 0 ?
	       pg_error_oom() : 0;
}

int pg_isolated_conflicts(pg_json **out, const pg_isolate_pull *pull, const char *ahead,
			  size_t ahead_len, const pg_isolate_opts *o)
{
	const pg_gate_settings *gs = o->settings;
	pg_spawn_opts so = PG_SPAWN_OPTS_INIT;
	pg_spawn_result res;
	heard h = { .out = PG_BUF_INIT };
	pg_buf home_env = PG_BUF_INIT, expect = PG_BUF_INIT, onto = PG_BUF_INIT, dir = PG_BUF_INIT,
	       file = PG_BUF_INIT;
	const char *argv[32], *env[2], *doc;
	bool made = false;
	char exe[PATH_MAX];
	unsigned deadline_s = o->policy->verify_timeout_seconds;
	size_t n = 0;
	int err;

	*out = NULL;
	pg_spawn_result_init(&res);
	if (!gs)
		return pg_error_set(PG_EINVALID, "the conflict check wants the kernel stages' settings");
	if ((err = self_exe(exe, sizeof(exe))) < 0 ||
	    (err = pg_buf_printf(&home_env, "PULLGATE_HOME=%s", o->home)) < 0 ||
	    (err = scratch_dir(&dir, o->home)) < 0)
		goto done;
	/* in a directory under home/tmp: what a kill leaves, the next start sweeps */
	made = true;
	if ((err = pg_buf_printf(&file, "%s/ahead", dir.ptr)) < 0 ||
	    (err = pg_write_file_atomic(file.ptr, ahead, ahead_len)) < 0)
		goto done;
	argv[n++] = exe;
	argv[n++] = "conflicts";
	argv[n++] = "--json";
	policy_args(argv, &n, o->policy);
	if (gs->tree) {
		argv[n++] = "--tree";
		argv[n++] = gs->tree;
	}
	argv[n++] = "--branch";
	argv[n++] = gs->branch;
	argv[n++] = "--ahead";
	argv[n++] = file.ptr;
	if ((pull->expect && (err = oid_arg(argv, &n, &expect, "--expect-tag", pull->expect)) < 0) ||
	    (pull->onto && (err = oid_arg(argv, &n, &onto, "--onto", pull->onto)) < 0))
		goto done;
	argv[n++] = "--";
	argv[n++] = pull->repo;
	argv[n++] = pull->tag;
	argv[n] = NULL;
	env[0] = home_env.ptr;
	env[1] = NULL;

	so.env = env;
	so.on_line = on_output;
	so.ctx = &h;
	so.cancel = o->cancel;
	so.no_core = true;
	so.die_with_parent = true;
	so.timeout_ms = (deadline_s + KILL_AFTER_S) * 1000U;
#if !defined(__SANITIZE_ADDRESS__)
	so.max_memory = o->max_memory;
#endif
	if ((err = pg_spawn_run(&res, argv, &so)) < 0)
		goto done;
	if (res.cancelled)
		err = pg_error_set(PG_ECANCELLED, "cancelled while running");
	else if (res.timed_out)
		err = pg_error_set(PG_EIO, "the conflict check did not finish within %u s: its "
				   "process was killed", deadline_s);
	else if (res.signal)
		err = pg_error_set(PG_EIO, "the conflict check died of %s (signal %d)",
				   signal_name(res.signal), res.signal);
	else if (res.exit_code != 0 && res.exit_code != 1)
		err = pg_error_set(PG_EIO, "the conflict check exited %d%s%s", res.exit_code,
				   h.error[0] ? ": " : "", h.error);
	else if (h.over)
		err = pg_error_set(PG_EIO, "the conflict check said more than %u bytes",
				   CONFLICTS_OUTPUT_MAX);
	else if (!h.out.len || !(doc = strchr(h.out.ptr, '{')))
		err = pg_error_set(PG_EIO, "the conflict check exited %d without its JSON",
				   res.exit_code);
	else if ((err = pg_json_parse(out, doc, h.out.len - (size_t)(doc - h.out.ptr))) < 0 ||
		 pg_json_type(*out) != PG_JSON_OBJECT) {
		pg_json_free(*out);
		*out = NULL;
		err = pg_error_set(PG_EIO, "the conflict check's JSON is damaged%s%s",
				   err < 0 ? ": " : "", err < 0 ? pg_error_last() : "");
	}
done:
	if (made && pg_remove_tree(dir.ptr) < 0 && err == 0)
		pg_error_clear();
	pg_buf_release(&dir);
	pg_buf_release(&file);
	pg_spawn_result_release(&res);
	pg_buf_release(&h.out);
	pg_buf_release(&home_env);
	pg_buf_release(&expect);
	pg_buf_release(&onto);
	return err;
}
