/* dashboard_html.c - the dashboard's HTML writer: every stored string escaped, the page frame, the badges. */
#include "server/dashboard.h"
#include "common/error.h"
#include "common/sanitize.h"
#include "pipeline/provenance.h"

#include <time.h>

void pg_dash_esc(pg_buf *out, const char *s)
{
	pg_buf clean = PG_BUF_INIT;

	if (!s)
		return;
	if (pg_sanitize_utf8(&clean, s, strlen(s)) == 0)
		pg_html_escape(out, clean.ptr, clean.len);
	pg_buf_release(&clean);
}

void pg_dash_html(pg_buf *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	while (*fmt) {
		size_t n = strcspn(fmt, "%");

		pg_buf_put(out, fmt, n);
		fmt += n;
		if (!*fmt)
			break;
		if (fmt[1] == 's')
			pg_dash_esc(out, va_arg(ap, const char *));
		else if (fmt[1])
			pg_buf_putc(out, fmt[1]);
		fmt += fmt[1] ? 2 : 1;
	}
	va_end(ap);
}

void pg_dash_short_id(pg_buf *out, const char *hex)
{
	if (hex)
		pg_buf_printf(out, "<code title=\"%.40s\">%.12s</code>",
			      strspn(hex, "0123456789abcdef") >= 40 ? hex : "",
			      strspn(hex, "0123456789abcdef") >= 12 ? hex : "");
}

void pg_dash_short_oid(pg_buf *out, bool has, const pg_oid *id)
{
	char hex[PG_OID_HEXSZ + 1];

	if (!has)
		return;
	pg_oid_tohex(hex, id);
	pg_dash_short_id(out, hex);
}

const char *pg_dash_tag_name(const char *tag)
{
	return tag && !strncmp(tag, "refs/tags/", 10) ? tag + 10 : tag;
}

void pg_dash_when(pg_buf *out, int64_t t)
{
	char s[32];
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(s, sizeof(s), "%Y-%m-%d %H:%M:%S UTC", &tm);
	pg_buf_puts(out, s);
}

void pg_dash_page_start(pg_buf *out, pg_req *rq, const char *title, const char *body_attrs)
{
	pg_buf user = PG_BUF_INIT, csrf = PG_BUF_INIT;
	bool in = pg_req_session(rq, &user, &csrf) == 0;

	pg_error_clear();
	pg_dash_html(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
		     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		     "<title>%s - pullgate</title>\n<link rel=\"stylesheet\" href=\"/static/style.css\">\n"
		     "<script src=\"/static/app.js\" defer></script>\n", title);
	if (in)
		pg_dash_html(out, "<meta name=\"csrf-token\" content=\"%s\">\n", csrf.ptr);
	pg_buf_printf(out, "</head>\n<body %s>\n<header><a class=\"brand\" href=\"/\">pullgate</a>"
		      "<nav><a href=\"/\">queue</a> <a href=\"/metrics\">metrics</a> ",
		      body_attrs ? body_attrs : "");
	if (in)
		pg_dash_html(out, "<span class=\"user\" id=\"user\">%s</span> "
			     "<button type=\"button\" id=\"logout\">log out</button>", user.ptr);
	else
		pg_buf_puts(out, "<a id=\"login-link\" href=\"/login\">maintainer log in</a>");
	pg_buf_puts(out, "</nav></header>\n<main>\n");
	pg_buf_release(&user);
	pg_buf_release_secret(&csrf);
}

int pg_dash_page_end(pg_buf *out, pg_resp *rs)
{
	pg_buf_puts(out, "</main>\n<footer>pullgate " PG_VERSION "</footer>\n</body></html>\n");
	rs->status = 200;
	rs->type = "text/html; charset=utf-8";
	return 0;
}

void pg_dash_state_badge(pg_buf *out, enum pg_job_state st)
{
	const char *state = pg_job_state_name(st);

	pg_dash_html(out, "<span class=\"state state-%s\" data-state=\"%s\">%s</span>", state, state,
		     state);
}

void pg_dash_simulated_badge(pg_buf *out, const char *id)
{
	pg_buf_puts(out, " <span class=\"simulated\"");
	if (id)
		pg_dash_html(out, " id=\"%s\"", id);
	pg_buf_puts(out, " title=\"stand-in build and boot scripts ran: nothing was really compiled "
		    "or booted\">simulated</span>");
}

bool pg_dash_stand_ins(const pg_server *srv)
{
	const pg_policy *policy = srv->policy;
	pg_report *r = NULL;
	pg_provenance *p = NULL;
	bool yes = false;

	/* the files as the gate will judge them, in a report of their own */
	if (pg_report_new(&r) == 0 && pg_report_add_provenance(&p, r, "build") == 0 &&
	    pg_prov_files(r, p, srv->datadir, pg_build_files) == 0 &&
	    pg_report_add_provenance(&p, r, "boot") == 0 &&
	    pg_prov_files(r, p, srv->datadir, policy->boot_on_lava ? pg_lava_boot_files :
			  pg_boot_files) == 0)
		yes = r->simulated;
	pg_error_clear();
	pg_report_free(r);
	return yes;
}

bool pg_dash_simulated(const pg_server *srv, const pg_job *j, int *stand_ins)
{
	if (j->simulated)
		return true;
	/* the build stage picks its script as it starts: from then on the run is the scripts' */
	if (j->state != PG_JOB_BUILDING && j->state != PG_JOB_BOOTING)
		return false;
	if (*stand_ins < 0)
		*stand_ins = pg_dash_stand_ins(srv);
	return *stand_ins;
}
