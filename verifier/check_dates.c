/* check_dates.c - recent-rebase and date-anomaly: what commit dates say about a pull. */
#include "verifier/pull.h"
#include "common/error.h"

#include <time.h>

#define HOUR 3600

static int date_detail(pg_finding *f, const char *field, int64_t t, int offset)
{
	pg_buf b = PG_BUF_INIT;
	int err = pg_time_format(&b, t, offset);

	if (err == 0)
		err = pg_finding_detail(f, field, b.ptr, NULL);
	pg_buf_release(&b);
	return err;
}

/*
 * The whole pull committed in the hours before the tag, though written
 * earlier: a rebase just before sending, which the maintainer documents
 * discourage (Documentation/maintainer/rebasing-and-merging.rst).
 */
int pg_check_recent_rebase(pg_pull *p)
{
	enum pg_severity sev = pg_pull_severity(p, PG_CHECK_RECENT_REBASE);
	const pg_ident *tagger = pg_pull_sender(p);
	const pg_commit *oldest_author = NULL, *first_commit = NULL;
	int64_t window = (int64_t)p->policy->recent_rebase_hours * HOUR, start;
	size_t i, n = 0;
	pg_finding *f = NULL;
	int err;

	if (sev == PG_SEV_OFF || !tagger || !window)
		return 0;
	start = tagger->time - window;
	for (i = 0; i < p->ncommits; i++) {
		const pg_commit *c = p->commits[i];

		if (c->nparents > 1)
			continue;
		if (c->committer.time < start)
			return 0; /* some commit is older than the window: no rebase of it all */
		n++;
		if (!oldest_author || c->author.time < oldest_author->author.time)
			oldest_author = c;
		if (!first_commit || c->committer.time < first_commit->committer.time)
			first_commit = c;
	}
	if (!n || oldest_author->author.time >= start)
		return 0;
	err = pg_report_add(&f, p->report, PG_CHECK_RECENT_REBASE, sev, NULL,
			    "all %zu commits were committed in the %u hours before the tag, "
			    "though authored earlier", n, p->policy->recent_rebase_hours);
	if (err == 0)
		err = date_detail(f, "first committed", first_commit->committer.time,
				  first_commit->committer.offset);
	if (err == 0)
		err = date_detail(f, "oldest authored", oldest_author->author.time,
				  oldest_author->author.offset);
	if (err == 0)
		err = date_detail(f, "tagged", tagger->time, tagger->offset);
	return err;
}

int pg_check_date_anomaly(pg_pull *p)
{
	enum pg_severity sev = pg_pull_severity(p, PG_CHECK_DATE_ANOMALY);
	int64_t slack = (int64_t)p->policy->future_slack_minutes * 60;
	int64_t now = (int64_t)time(NULL);
	size_t i;
	int err = 0;

	for (i = 0; i < p->ncommits && err == 0 && sev != PG_SEV_OFF; i++) {
		const pg_commit *c = p->commits[i];
		pg_finding *f = NULL;
		bool before = c->committer.time + slack < c->author.time;
		bool future = c->author.time > now + slack || c->committer.time > now + slack;

		if (!before && !future)
			continue;
		err = pg_report_add(&f, p->report, PG_CHECK_DATE_ANOMALY, sev, c, "%s%s%s",
				    before ? "committed before it was authored" : "",
				    before && future ? ", and " : "",
				    future ? "dated in the future" : "");
		if (err == 0)
			err = date_detail(f, "author-date", c->author.time, c->author.offset);
		if (err == 0)
			err = date_detail(f, "committer-date", c->committer.time, c->committer.offset);
	}
	return err;
}
