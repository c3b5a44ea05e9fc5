/* kcidb.c - a pull's KCIDB document as the service serves it: its stored report, with what the service knows of the job. */
#include "server/web.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/json.h"
#include "pipeline/kcidb.h"
#include "pipeline/settings.h"
#include "verifier/mail.h"

#include <unistd.h>

/*
 * The report of j's newest finished run, read back as untrusted.  The
 * store keeps so many findings per check and so many bytes (its "stored"
 * member says what it left out), and a report it cut no longer adds up:
 * that pull has no document (PG_EINVALID), rather than one from a file
 * the stored report names.
 */
static int read_report(pg_report **out, const pg_job *j)
{
	pg_json *stored = NULL;
	bool cut;
	int err;

	*out = NULL;
	if (!j->report)
		return pg_error_set(PG_ENOTFOUND, "pull %lld has no finished report yet",
				    (long long)j->id);
	err = pg_report_parse_json(out, j->report, strlen(j->report));
	if (err != PG_EINVALID)
		return err < 0 ? pg_error_wrap(err, "pull %lld: its stored report", (long long)j->id) : 0;
	if (pg_json_parse(&stored, j->report, strlen(j->report)) == PG_ENOMEM) {
		pg_error_clear();
		return pg_error_oom();
	}
	cut = stored && pg_json_get(stored, "stored");
	pg_json_free(stored);
	if (!cut)
		return pg_error_wrap(err, "pull %lld: its stored report", (long long)j->id);
	pg_error_clear();
	return pg_error_set(PG_EINVALID, "the stored report of pull %lld was cut (limits.report-size "
			    "/ findings-per-check): no KCIDB document", (long long)j->id);
}

/* As much of a console as one request reads. */
#define CONSOLE_READ_MAX ((size_t)4 << 20)

/*
 * Whether dir is job id's own run directory: HOME/logs/job-ID, then '/'
 * (its run-N) or '-' (a named run of it), never a way up.
 */
static bool own_run_dir(const pg_server *s, const char *dir, int64_t id)
{
	char prefix[48];
	size_t n = strlen(s->home);
	int k = snprintf(prefix, sizeof(prefix), "/logs/job-%lld", (long long)id);

	return dir && k > 0 && !strncmp(dir, s->home, n) && !strncmp(dir + n, prefix, (size_t)k) &&
	       (dir[n + (size_t)k] == '/' || dir[n + (size_t)k] == '-') && !strstr(dir, "/../");
}

/*
 * The boot console of j's run, from the run directory the job row names
 * (a path in the stored report is data): its first CONSOLE_READ_MAX
 * bytes (*cut: there was more), no link followed, only a regular file.
 * path gets its name when the directory is allowed (the boot's log_url);
 * text stays empty when the console is not there or not a regular file;
 * PG_ENOMEM, PG_EIO when it is there and cannot be read (no document of
 * part of it).
 */
static int read_console(pg_buf *path, pg_buf *text, bool *cut, const pg_server *s, const pg_job *j)
{
	int fd = -1, err = 0;

	*cut = false;
	if (!own_run_dir(s, j->run_dir, j->id))
		return 0;
	if ((err = pg_buf_printf(path, "%s/boot.log", j->run_dir)) < 0)
		return err;
	if (strstr(path->ptr, "/../")) {
		pg_buf_clear(path);
		return 0;
	}
	if (pg_open_regular(&fd, NULL, path->ptr, PG_OPEN_READ | PG_OPEN_NOFOLLOW, NULL) < 0) {
		pg_error_clear();
		return 0;
	}
	err = pg_buf_read_fd(text, fd, CONSOLE_READ_MAX, cut);
	close(fd);
	return err;
}

/* The mail's subject and Message-Id for the checkout; a mail that does not parse gives neither. */
static int mail_of(pg_pull_request **out, const pg_job *j)
{
	int err;

	*out = NULL;
	if (!j->mail || (err = pg_mail_parse(out, j->mail, j->mail_len)) == 0)
		return 0;
	if (err == PG_ENOMEM)
		return err;
	pg_error_clear();
	return 0;
}

int pg_server_kcidb(pg_buf *doc, const pg_server *s, const pg_job *j)
{
	const pg_config *c = s->config;
	pg_kcidb_opts o = { .origin = c->kcidb_origin, .console_given = true };
	pg_gate_given given = { .branch = c->branch };
	pg_gate_settings gs;
	pg_pull_request *pr = NULL;
	pg_report *r = NULL;
	pg_buf url = PG_BUF_INIT, console = PG_BUF_INIT, text = PG_BUF_INIT;
	size_t i;
	int err;

	if ((err = read_report(&r, j)) < 0)
		return err;
	/* the console is the job row's run's, whatever path the stored report names */
	pg_buf_init(&text, CONSOLE_READ_MAX);
	if ((err = read_console(&console, &text, &o.console_cut, s, j)) < 0)
		goto done;
	if (text.len) {
		o.console = text.ptr;
		o.console_len = text.len;
	}
	for (i = 0; i < r->nprovenance; i++) {
		pg_provenance *p = &r->provenance[i];
		const char *log = !strcmp(p->stage, "boot") ? (console.len ? console.ptr : NULL) :
				  pg_server_owns_log(s, p->log) ? p->log : NULL;

		if (log != p->log && (err = pg_provenance_set(&p->log, log)) < 0)
			goto done;
	}
	/* the repository as the merge message names it, else the location fetched */
	if ((err = pg_worker_public_url(&url, j, c->public_base)) < 0)
		goto done;
	o.repo_url = url.len ? url.ptr : j->repo;
	pg_gate_settings_resolve(&gs, &given, s->policy);
	o.branch = gs.branch;
	if ((err = mail_of(&pr, j)) < 0)
		goto done;
	if (pr) {
		o.subject = pr->subject;
		o.message_id = pr->message_id;
	}
	err = pg_kcidb_format(doc, r, &o);
done:
	if (err < 0)
		err = pg_error_wrap(err, "pull %lld: its KCIDB document", (long long)j->id);
	pg_pull_request_free(pr);
	pg_report_free(r);
	pg_buf_release(&url);
	pg_buf_release(&console);
	pg_buf_release(&text);
	return err;
}
