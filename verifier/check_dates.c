/* check_dates.c - recent-rebase and date-anomaly: what commit dates say about a pull. */
#include "verifier/pull.h"
#include "common/error.h"

#include <time.h>

#define HOUR 3600
#define DAY (24 * HOUR)

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
 * History re-stamped just before sending, which
 * Documentation/maintainer/rebasing-and-merging.rst warns about: a series
 * reparented shortly before the pull request, so untested where it now
 * sits.  Dates show it when every commit the pull carries was committed in
 * the hours before the tag and yet each had been written weeks before: the
 * newest of them too, so the branch sat unchanged and was then replayed at
 * once.  Applying patches and tagging on the same day is normal and does
 * not fire: a batch of patches has recent ones, written days before.
 * Rewritten copies of upstream commits are rewritten-upstream's (and the
 * summary's) business, not this check's.
 */
int pg_check_recent_rebase(pg_pull *p)
{
	enum pg_severity sev = pg_pull_severity(p, PG_CHECK_RECENT_REBASE);
	const pg_ident *tagger = pg_pull_sender(p);
	const pg_commit *newest_author = NULL, *first_commit = NULL, *last_commit = NULL;
	int64_t window = (int64_t)p->policy->recent_rebase_hours * HOUR, start;
	int64_t age = (int64_t)p->policy->recent_rebase_min_age_days * DAY;
	size_t i, n = 0;
	pg_finding *f = NULL;
	int err;

	if (sev == PG_SEV_OFF || !tagger || !window)
		return 0;
	start = tagger->time - window;
	for (i = 0; i < p->ncommits; i++) {
		const pg_commit *c = p->commits[i];

		if (c->nparents > 1 || p->original[i])
			continue;
		if (c->committer.time < start || c->committer.time > tagger->time)
			return 0; /* committed before the window (or after the tag): not replayed at once */
		if (c->committer.time - c->author.time < age)
			return 0; /* a recent patch: applied, not re-stamped */
		n++;
		if (!newest_author || c->author.time > newest_author->author.time)
			newest_author = c;
		if (!first_commit || c->committer.time < first_commit->committer.time)
			first_commit = c;
		if (!last_commit || c->committer.time > last_commit->committer.time)
			last_commit = c;
	}
	if (n < 2)
		return 0; /* one old patch applied late is no series */
	err = pg_report_add(&f, p->report, PG_CHECK_RECENT_REBASE, sev, NULL,
			    "%zu commits written %u+ days earlier were all committed in the %u "
			    "hours before the tag", n, p->policy->recent_rebase_min_age_days,
			    p->policy->recent_rebase_hours);
	if (err == 0)
		err = date_detail(f, "first committed", first_commit->committer.time,
				  first_commit->committer.offset);
	if (err == 0)
		err = date_detail(f, "last committed", last_commit->committer.time,
				  last_commit->committer.offset);
	if (err == 0)
		err = date_detail(f, "newest authored", newest_author->author.time,
				  newest_author->author.offset);
	if (err == 0)
		err = date_detail(f, "tagged", tagger->time, tagger->offset);
	if (err == 0)
		err = pg_finding_detail(f, "see", "Documentation/maintainer/rebasing-and-merging.rst",
					NULL);
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
