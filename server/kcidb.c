/* kcidb.c - a pull's KCIDB document as the service serves it: its stored report, with what the service knows of the job. */
#include "server/web.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/json.h"
#include "pipeline/kcidb.h"
#include "pipeline/settings.h"
#include "verifier/mail.h"

/*
 * The run's own report in the log directory the stored one names: the
 * same run's, whole.  Only a file under home/logs is read.
 */
static int run_report(pg_report **out, const pg_server *s, const pg_json *stored, int64_t id)
{
	const char *dir = pg_json_get_str(stored, "run_dir");
	pg_buf path = PG_BUF_INIT, text = PG_BUF_INIT;
	int err;

	pg_buf_init(&text, PG_REPORT_JSON_MAX);
	if (!dir || (err = pg_buf_printf(&path, "%s/report.json", dir)) < 0 ||
	    !pg_server_owns_log(s, path.ptr)) {
		err = pg_error_set(PG_ENOTFOUND, "pull %lld: its stored report was cut to the "
				   "service's limits, and its run left none whole", (long long)id);
		goto done;
	}
	if ((err = pg_buf_read_file(&text, path.ptr)) < 0 ||
	    (err = pg_report_parse_json(out, text.ptr, text.len)) < 0) {
		err = pg_error_wrap(err, "pull %lld: its stored report was cut to the service's "
				    "limits, and its run's %s", (long long)id, path.ptr);
		goto done;
	}
	if (!(*out)->run_dir || strcmp((*out)->run_dir, dir)) {
		pg_report_free(*out);
		*out = NULL;
		err = pg_error_set(PG_EINVALID, "pull %lld: %s is another run's report",
				   (long long)id, path.ptr);
	}
done:
	pg_buf_release(&path);
	pg_buf_release(&text);
	return err;
}

/*
 * The report of j's newest finished run, read back as untrusted.  The
 * store keeps so many findings per check (its "stored" member says what it
 * left out), and a report it cut no longer adds up: then the run's own.
 */
static int read_report(pg_report **out, const pg_server *s, const pg_job *j)
{
	pg_json *stored = NULL;
	int err;

	*out = NULL;
	if (!j->report)
		return pg_error_set(PG_ENOTFOUND, "pull %lld has no finished report yet",
				    (long long)j->id);
	err = pg_report_parse_json(out, j->report, strlen(j->report));
	if (err != PG_EINVALID)
		return err < 0 ? pg_error_wrap(err, "pull %lld: its stored report", (long long)j->id) : 0;
	if (pg_json_parse(&stored, j->report, strlen(j->report)) < 0 ||
	    !pg_json_get(stored, "stored")) {
		err = pg_error_wrap(err, "pull %lld: its stored report", (long long)j->id);
		goto done;
	}
	pg_error_clear();
	err = run_report(out, s, stored, j->id);
done:
	pg_json_free(stored);
	return err;
}

/* The mail's subject and Message-Id for the checkout; a mail that does not parse gives neither. */
static pg_pull_request *mail_of(const pg_job *j)
{
	pg_pull_request *pr = NULL;

	if (j->mail && pg_mail_parse(&pr, j->mail, j->mail_len) < 0)
		pg_error_clear();
	return pr;
}

int pg_server_kcidb(pg_buf *doc, pg_buf *checkout_id, const pg_server *s, const pg_job *j)
{
	const pg_config *c = s->config;
	pg_kcidb_opts o = { .origin = c->kcidb_origin };
	pg_gate_given given = { .branch = c->branch };
	pg_gate_settings gs;
	pg_pull_request *pr = NULL;
	pg_report *r = NULL;
	pg_buf url = PG_BUF_INIT;
	size_t i;
	int err;

	if ((err = read_report(&r, s, j)) < 0)
		return err;
	if (checkout_id && (err = pg_kcidb_checkout_id(checkout_id, r, o.origin)) < 0)
		goto done;
	if (!doc)
		goto done;
	/* a stored path is data: the console read for the KUnit cases is one the gate wrote */
	for (i = 0; i < r->nprovenance; i++)
		if (!pg_server_owns_log(s, r->provenance[i].log) &&
		    (err = pg_provenance_set(&r->provenance[i].log, NULL)) < 0)
			goto done;
	/* the repository as the merge message names it, else the location fetched */
	if ((err = pg_worker_public_url(&url, j, c->public_base)) < 0)
		goto done;
	o.repo_url = url.len ? url.ptr : j->repo;
	pg_gate_settings_resolve(&gs, &given, s->policy);
	o.branch = gs.branch;
	if ((pr = mail_of(j))) {
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
	return err;
}
