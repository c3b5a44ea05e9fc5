/* isolate.c - a job's verify in a child process: `pullgate gate --stages verify`, bounded, its JSON report read back as untrusted. */
#include "server/isolate.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/spawn.h"

#include <limits.h>
#include <unistd.h>

/* Past the policy's deadline, which the child keeps itself, before it is killed. */
#define KILL_AFTER_S 15

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

/* "[stage] text" is the child's progress (cli/term.c without a terminal); "error: " its reason. */
static int on_line(void *ctx, const char *line, size_t len)
{
	said *s = ctx;
	const char *close;
	char stage[32], text[512];
	pg_progress p = { 0 };

	if (!len)
		return 0;
	if (len > 7 && !memcmp(line, "error: ", 7)) {
		keep_line(s->error, sizeof(s->error), line + 7, len - 7);
		return 0;
	}
	keep_line(s->last, sizeof(s->last), line, len);
	if (!s->o->progress || line[0] != '[' ||
	    !(close = memchr(line, ']', len < sizeof(stage) ? len : sizeof(stage))) ||
	    close == line + 1 || (size_t)(close - line) + 2 > len || close[1] != ' ')
		return 0;
	keep_line(stage, sizeof(stage), line + 1, (size_t)(close - line - 1));
	keep_line(text, sizeof(text), close + 2, len - (size_t)(close - line) - 2);
	p.stage = stage;
	p.line = text;
	/* the stage's own events stay; a fetch's counts replace each other */
	p.transient = strcmp(stage, "verify") != 0;
	s->o->progress(s->o->ctx, &p);
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
static int read_report(pg_report **out, const char *path, int exit_code)
{
	pg_buf text = PG_BUF_INIT;
	pg_report *r = NULL;
	int err;

	pg_buf_init(&text, PG_REPORT_JSON_MAX);
	if ((err = pg_buf_read_file(&text, path)) < 0) {
		err = pg_error_set(err, "the verify process exited %d without its report: %s",
				   exit_code, pg_error_last());
		goto done;
	}
	if ((err = pg_report_parse_json(&r, text.ptr, text.len)) < 0) {
		err = pg_error_set(err, "the verify process left a damaged report: %s",
				   pg_error_last());
		goto done;
	}
	if ((pg_report_verdict(r) == PG_VERDICT_ACCEPT) != (exit_code == 0)) {
		err = pg_error_set(PG_EINVALID, "the verify process exited %d, but its report "
				   "says %s", exit_code, pg_report_verdict(r) == PG_VERDICT_ACCEPT ?
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
static int child_failed(const pg_spawn_result *res, const said *s, unsigned deadline_s)
{
	const char *words = s->error[0] ? s->error : s->last;

	if (res->cancelled)
		return pg_error_set(PG_ECANCELLED, "cancelled while verifying");
	if (res->timed_out)
		return pg_error_set(PG_EIO, "verify did not finish within %u s (the policy's "
				    "verify-timeout-seconds): its process was killed", deadline_s);
	if (res->signal)
		return pg_error_set(PG_EIO, "the verify process died of %s (signal %d) reading the "
				    "pull%s%s", signal_name(res->signal), res->signal,
				    words[0] ? "; its last words: " : "", words);
	if (res->exit_code == 3 && s->error[0])
		return pg_error_set(PG_EIO, "%s", s->error);
	return pg_error_set(PG_EIO, "the verify process exited %d%s%s", res->exit_code,
			    words[0] ? ": " : "", words);
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

int pg_isolated_verify(pg_report **out, const pg_isolate_pull *pull, const pg_isolate_opts *o)
{
	const pg_policy *policy = o->policy;
	pg_spawn_opts so = PG_SPAWN_OPTS_INIT;
	pg_spawn_result res;
	pg_buf dir = PG_BUF_INIT, mail = PG_BUF_INIT, report = PG_BUF_INIT, cache = PG_BUF_INIT,
	       home_env = PG_BUF_INIT, datadir_env = PG_BUF_INIT;
	const char *argv[32], *env[3];
	char exe[PATH_MAX];
	said s = { .o = o };
	size_t n = 0, e = 0;
	bool made = false;
	int err;

	*out = NULL;
	pg_spawn_result_init(&res);
	if ((err = self_exe(exe, sizeof(exe))) < 0 ||
	    (err = pg_buf_printf(&dir, "%s/tmp/verify-XXXXXX", o->home)) < 0)
		goto done;
	/* home/tmp exists: the service holds its share of it (pg_scratch_claim) */
	if (!mkdtemp(dir.ptr)) {
		err = pg_error_set(PG_EIO, "'%s': %s", dir.ptr, strerror(errno));
		goto done;
	}
	made = true;
	if ((err = pg_buf_printf(&report, "%s/report.json", dir.ptr)) < 0 ||
	    (err = pg_buf_printf(&cache, "%llu", (unsigned long long)o->index_cache_size)) < 0 ||
	    (err = pg_buf_printf(&home_env, "PULLGATE_HOME=%s", o->home)) < 0)
		goto done;
	argv[n++] = exe;
	argv[n++] = "gate";
	argv[n++] = "--stages";
	argv[n++] = "verify";
	argv[n++] = "--report-file";
	argv[n++] = report.ptr;
	argv[n++] = "--run-name";
	argv[n++] = pull->run_name;
	if (o->index_cache_size) {
		argv[n++] = "--index-cache-size";
		argv[n++] = cache.ptr;
	}
	/* the file the service read, and only as it read it: a changed file is refused */
	if (strcmp(policy->source, PG_POLICY_BUILT_IN)) {
		argv[n++] = "--policy";
		argv[n++] = policy->source;
		argv[n++] = "--policy-sha256";
		argv[n++] = policy->sha256;
	}
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
	so.timeout_ms = (policy->verify_timeout_seconds + KILL_AFTER_S) * 1000U;
	so.no_core = true;
	so.die_with_parent = true;
#if defined(__SANITIZE_ADDRESS__)
	/* AddressSanitizer reserves terabytes of shadow address space: no RLIMIT_AS under it */
	so.max_memory = 0;
#else
	so.max_memory = o->max_memory;
#endif
	if ((err = pg_spawn_run(&res, argv, &so)) < 0)
		goto done;
	if (!res.cancelled && !res.timed_out && !res.signal &&
	    (res.exit_code == 0 || res.exit_code == 1))
		err = read_report(out, report.ptr, res.exit_code);
	else
		err = child_failed(&res, &s, policy->verify_timeout_seconds);
done:
	/* what cannot be removed now, the next start of the service sweeps (pg_scratch_claim) */
	if (made && pg_remove_tree(dir.ptr) < 0 && err == 0)
		pg_error_clear();
	pg_spawn_result_release(&res);
	pg_buf_release(&dir);
	pg_buf_release(&mail);
	pg_buf_release(&report);
	pg_buf_release(&cache);
	pg_buf_release(&home_env);
	pg_buf_release(&datadir_env);
	return err;
}
