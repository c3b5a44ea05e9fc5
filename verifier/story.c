/* story.c - the summary a report leads with, and which findings follow from a rewritten copy. */
#include "verifier/match.h"
#include "verifier/pull.h"
#include "common/error.h"

static int count_copy(pg_summary *s, const pg_commit *c, const pg_commit *o)
{
	pg_commit_delta d;
	size_t had = pg_commit_count_header(o, "mergetag"), has = pg_commit_count_header(c, "mergetag");
	int err;

	s->rewritten++;
	if (c->nparents > 1)
		s->rewritten_merges++;
	if (had > has)
		s->dropped_mergetags += had - has;
	if ((err = pg_commit_delta_compute(&d, c, o)) < 0)
		return err;
	s->quoted_ids += d.nquoted;
	pg_commit_delta_release(&d);
	return 0;
}

int pg_pull_story(pg_pull *p)
{
	pg_report *r = p->report;
	pg_map root = PG_MAP_INIT; /* copy's id -> 1 + index of its rewritten-upstream finding */
	size_t i;
	int err = 0;

	memset(&r->summary, 0, sizeof(r->summary));
	/* a labelled backport is the pull's own: its message says where it came from */
	for (i = 0; i < p->ncommits && err == 0; i++)
		if (p->original[i] && !(p->labelled && p->labelled[i]))
			err = count_copy(&r->summary, p->commits[i], p->original[i]);
	r->summary.own = p->ncommits - r->summary.rewritten;
	for (i = 0; i < r->nnotes; i++)
		if (r->notes[i].check == PG_CHECK_REWRITTEN_UPSTREAM && r->notes[i].has_commit)
			r->summary.reapplied++;
	r->has_summary = true;

	for (i = 0; i < r->nfindings && err == 0; i++) {
		const pg_finding *f = &r->findings[i];

		if (f->check == PG_CHECK_REWRITTEN_UPSTREAM && f->has_commit && f->has_upstream &&
		    !pg_map_get(&root, f->commit.id, PG_OID_RAWSZ) &&
		    (err = pg_report_mark_copy(r, &f->commit, f->severity)) == 0)
			err = pg_map_set(&root, f->commit.id, PG_OID_RAWSZ, (void *)(uintptr_t)(i + 1));
	}
	/*
	 * A rewritten copy of an upstream commit carries that commit's
	 * committer, sign-offs, merges and dates: a foreign committer, a
	 * missing sign-off, a back-merge or an odd date on it are what the
	 * rewrite did, not separate problems.  They stay in the report, under
	 * their copy's finding, or marked as following from it when the cap
	 * left that finding unlisted.  A finding that would raise its copy's
	 * severity (an error under a copy reported as a warning) stays a root
	 * cause.
	 */
	for (i = 0; i < r->nfindings && err == 0; i++) {
		pg_finding *f = &r->findings[i];
		unsigned copy;
		uintptr_t at;

		if (!f->has_commit || !pg_check_follows_from_copy(f->check) ||
		    !(copy = pg_report_copy_severity(r, &f->commit)) || f->severity > copy - 1)
			continue;
		if ((at = (uintptr_t)pg_map_get(&root, f->commit.id, PG_OID_RAWSZ)))
			f->implied_by = at;
		else
			f->implied_unlisted = true;
	}
	pg_map_release(&root);
	return err;
}
