/* stage_approve.c - approval: the integration branch moves to the tested merge; the sender gets a notice. */
#include "pipeline/stage.h"
#include "common/error.h"

#include <time.h>

/* The pr-tracker-bot style notice, written to <logs>/notice.txt. */
static int write_notice(pg_buf *path, const char *logs, const char *repo, const char *tagref,
			const char *tree, const char *branch_ref, const pg_report *r)
{
	pg_buf b = PG_BUF_INIT;
	char hex[PG_OID_HEXSZ + 1], date[64];
	const char *tag = strncmp(tagref, "refs/tags/", 10) ? tagref : tagref + 10;
	int offset = r->tag_time ? r->tag_offset : 0;
	time_t when = r->tag_time ? (time_t)(r->tag_time + offset * 60) : time(NULL);
	struct tm tm;
	int err;

	/* "sent on" the day the sender tagged it, in the sender's zone */
	pg_oid_tohex(hex, &r->merge_commit);
	gmtime_r(&when, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S", &tm);
	snprintf(date + strlen(date), sizeof(date) - strlen(date), " %c%02d%02d",
		 offset < 0 ? '-' : '+', abs(offset) / 60, abs(offset) % 60);
	if ((err = pg_buf_printf(path, "%s/notice.txt", logs)) < 0)
		goto done;
	err = pg_buf_printf(&b, "The pull request you sent on %s:\n\n> %s tags/%s\n\n"
			    "has been merged into %s:%s:\n%s\n\nThank you!\n\n-- \npullgate\n",
			    date, repo, tag, tree, branch_ref + strlen("refs/heads/"), hex);
	if (err == 0)
		err = pg_write_file_atomic(path->ptr, b.ptr, b.len);
done:
	pg_buf_release(&b);
	return err;
}

/*
 * Move the tree's integration branch from r->merge_base to r->merge_commit
 * (a compare-and-swap), mark r approved and write the notice.
 */
static int approve(pg_buf *notice, pg_tree *tree, const char *tree_path, const char *logs,
		   pg_report *r, const char *repo, const char *why)
{
	int err;

	if ((err = pg_tree_advance(tree, &r->merge_base, &r->merge_commit, why)) < 0)
		return err;
	r->approved = true;
	return write_notice(notice, logs, repo, r->tag, tree_path, pg_tree_branch(tree), r);
}

int pg_stage_approve(pg_run *g, pg_stage *st)
{
	pg_buf notice = PG_BUF_INIT;
	char hex[PG_OID_HEXSZ + 1];
	const char *repo = g->spec->name ? g->spec->name : g->spec->repo;
	int err;

	g->keep_refs = true;
	pg_oid_tohex(hex, &g->report->merge_commit);
	if (!g->o->approve)
		return pg_stage_set(st, PG_STAGE_WAITING, NULL, "merge %.12s waits for the "
				    "maintainer on refs/heads/pullgate/%s", hex, g->key.ptr);
	if ((err = approve(&notice, g->tree, g->tree_path.ptr, g->logs.ptr, g->report, repo,
			   "pullgate: approved")) == 0)
		err = pg_stage_set(st, PG_STAGE_PASSED, notice.ptr, "%s moved to %.12s",
				   pg_tree_branch(g->tree), hex);
	pg_buf_release(&notice);
	return err;
}

int pg_gate_approve(pg_report *r, const pg_gate_opts *o, const char *repo, pg_buf *notice)
{
	pg_tree *tree = NULL;
	pg_buf key = PG_BUF_INIT, path = PG_BUF_INIT, logs = PG_BUF_INIT;
	int err;

	if (!r->has_merge)
		return pg_error_set(PG_EINVALID, "'%s' has no tested merge to approve", r->tag);
	if (r->approved)
		return pg_error_set(PG_EEXISTS, "'%s' is already approved", r->tag);
	if ((err = pg_run_tree_path(&path, o)) == 0 &&
	    (err = pg_gate_pull_key(&key, r->tag)) == 0 &&
	    (err = pg_run_logs_dir(&logs, o, key.ptr)) == 0 &&
	    (err = pg_tree_open(&tree, path.ptr, o->branch ? o->branch : "master")) == 0)
		err = approve(notice, tree, path.ptr, logs.ptr, r, repo,
			      "pullgate: approved by the maintainer");
	pg_tree_free(tree);
	pg_buf_release(&key);
	pg_buf_release(&path);
	pg_buf_release(&logs);
	return err;
}
