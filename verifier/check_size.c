/* check_size.c - range-size: a pull larger than its description or the policy allows. */
#include "verifier/pull.h"
#include "common/error.h"

/*
 * Kernel tag messages describe a pull as a list of top-level bullets
 * ("- subsystem: change", or "* ..."), one per change.  Nested bullets are
 * indented further and belong to the bullet above them.
 */
size_t pg_count_described(const char *msg, size_t len)
{
	const char *p = msg, *end = msg + len;
	size_t n = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p), indent = 0;

		while (indent < l && p[indent] == ' ')
			indent++;
		if (indent <= 1 && l >= indent + 3 && (p[indent] == '-' || p[indent] == '*') &&
		    p[indent + 1] == ' ' && p[indent + 2] != ' ')
			n++;
		p = nl ? nl + 1 : end;
	}
	return n;
}

int pg_check_range_size(pg_pull *p)
{
	enum pg_severity sev = pg_pull_severity(p, PG_CHECK_RANGE_SIZE);
	size_t i, merges = 0, described = 0;
	pg_finding *f = NULL;
	char a[32], b[32];
	int err = 0;

	for (i = 0; i < p->ncommits; i++)
		if (p->commits[i]->nparents > 1)
			merges++;
	if (p->tag)
		described = pg_count_described(p->tag->message, p->tag->message_len);

	if (p->ncommits == 0)
		return pg_report_add(NULL, p->report, PG_CHECK_RANGE_SIZE, sev, NULL,
				     "the pull is empty: upstream already contains the tagged commit");
	if (described && p->ncommits - merges > described) {
		err = pg_report_add(&f, p->report, PG_CHECK_RANGE_SIZE, sev, NULL,
				    "the pull has %zu commits (%zu merges), the tag message "
				    "describes %zu change%s", p->ncommits, merges, described,
				    described == 1 ? "" : "s");
		snprintf(a, sizeof(a), "%zu", p->ncommits - merges);
		snprintf(b, sizeof(b), "%zu", described);
		if (err == 0)
			err = pg_finding_detail(f, "non-merge commits", a, b);
	}
	if (err == 0 && p->policy->max_commits && p->ncommits > p->policy->max_commits) {
		err = pg_report_add(&f, p->report, PG_CHECK_RANGE_SIZE, sev, NULL,
				    "the pull has %zu commits, the policy allows %zu",
				    p->ncommits, p->policy->max_commits);
		snprintf(a, sizeof(a), "%zu", p->ncommits);
		snprintf(b, sizeof(b), "%zu", p->policy->max_commits);
		if (err == 0)
			err = pg_finding_detail(f, "commits", a, b);
	}
	return err;
}
