/* check_size.c - range-size: a pull larger than its request-pull mail says or the policy allows. */
#include "verifier/mail.h"
#include "verifier/pull.h"
#include "common/error.h"

/*
 * The size a pull announces is its request-pull mail's shortlog, one line
 * per commit (merges included, as git shortlog counts them).  A tag
 * message is no count: its bullets describe topics, and a topic is often
 * many commits.  Without a mail only the policy's max-commits limits the
 * size; what a rewrite added is the summary's business (verifier/story.c).
 */
/* "commits: pull 39; limit 10 in the mail's shortlog" */
static int detail(pg_finding *f, size_t have, size_t limit, const char *what)
{
	char a[32], b[96];

	snprintf(a, sizeof(a), "%zu", have);
	snprintf(b, sizeof(b), "%zu%s", limit, what);
	return pg_finding_detail(f, "commits", a, b);
}

int pg_check_range_size(pg_pull *p)
{
	enum pg_severity sev = pg_pull_severity(p, PG_CHECK_RANGE_SIZE);
	pg_finding *f = NULL;
	int err = 0;

	if (p->ncommits == 0)
		return pg_report_add(NULL, p->report, PG_CHECK_RANGE_SIZE, sev, NULL,
				     "the pull is empty: upstream already contains the tagged commit");
	if (p->request && p->request->nshortlog && p->ncommits > p->request->nshortlog) {
		err = pg_report_add(&f, p->report, PG_CHECK_RANGE_SIZE, sev, NULL,
				    "the pull has %zu commits, its request-pull mail's shortlog "
				    "lists %zu", p->ncommits, p->request->nshortlog);
		if (err == 0)
			err = detail(f, p->ncommits, p->request->nshortlog, " in the mail's shortlog");
	}
	if (err == 0 && p->policy->max_commits && p->ncommits > p->policy->max_commits) {
		err = pg_report_add(&f, p->report, PG_CHECK_RANGE_SIZE, sev, NULL,
				    "the pull has %zu commits, the policy allows %zu",
				    p->ncommits, p->policy->max_commits);
		if (err == 0)
			err = detail(f, p->ncommits, p->policy->max_commits, " (the policy's max-commits)");
	}
	return err;
}
