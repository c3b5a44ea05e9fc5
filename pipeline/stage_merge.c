/* stage_merge.c - the merge stage: the signed tag merged onto the integration head, on the pull's branch. */
#include "pipeline/stage.h"
#include "common/error.h"
#include "common/fs.h"
#include "verifier/mail.h"

/* The merge's message is the stage's log: the dashboard's merge preview. */
static int passed(pg_run *g, pg_stage *st, const pg_merge_result *m)
{
	char hex[PG_OID_HEXSZ + 1];
	pg_buf path = PG_BUF_INIT;
	int err;

	pg_oid_tohex(hex, &m->commit);
	if ((err = pg_buf_printf(&path, "%s/merge.txt", g->logs.ptr)) == 0)
		err = pg_write_file_atomic(path.ptr, m->message.ptr, m->message.len);
	if (err == 0 && !m->resolved)
		err = pg_stage_set(st, PG_STAGE_PASSED, path.ptr,
				   "merge %.12s on refs/heads/pullgate/%s", hex, g->key.ptr);
	else if (err == 0) {
		char res[PG_OID_HEXSZ + 1];

		pg_oid_tohex(res, &m->resolution);
		err = pg_stage_set(st, PG_STAGE_PASSED, path.ptr,
				   "merge %.12s on refs/heads/pullgate/%s, its %zu conflicted path%s "
				   "resolved by %s (%.12s)", hex, g->key.ptr, m->nconflicts,
				   m->nconflicts == 1 ? "" : "s", m->resolution_ref, res);
	}
	pg_buf_release(&path);
	return err;
}

static int conflicted(pg_run *g, pg_stage *st, const pg_merge_result *m)
{
	pg_finding *f = NULL;
	char hex[PG_OID_HEXSZ + 1];
	size_t i;
	int err;

	pg_oid_tohex(hex, &g->base);
	hex[12] = '\0';
	err = pg_report_add(&f, g->report, PG_CHECK_MERGE_CONFLICT,
			    g->policy->severity[PG_CHECK_MERGE_CONFLICT], NULL,
			    "merging into %s%s%s conflicts in %zu path%s", pg_tree_branch(g->tree),
			    g->o->onto ? " at " : "", g->o->onto ? hex : "",
			    m->nconflicts, m->nconflicts == 1 ? "" : "s");
	for (i = 0; i < m->nconflicts && err == 0; i++)
		err = pg_finding_detail(f, "conflict", m->conflicts[i], NULL);
	if (err == 0 && m->unresolved.len)
		err = pg_finding_detail(f, "resolution", m->unresolved.ptr, NULL);
	if (err == 0)
		err = pg_stage_set(st, PG_STAGE_FAILED, NULL, "%zu conflicted path%s",
				   m->nconflicts, m->nconflicts == 1 ? "" : "s");
	return err;
}

/*
 * What the pull is merged onto: the integration head, or the caller's
 * commit above it (a queue's stack).  One that does not hold the head
 * would test a tree the branch can never reach by fast-forward.
 */
static int merge_base(pg_run *g)
{
	char onto[PG_OID_HEXSZ + 1], head[PG_OID_HEXSZ + 1];
	int err;

	if ((err = pg_tree_head(&g->base, g->tree)) < 0 || !g->o->onto ||
	    !pg_oid_cmp(g->o->onto, &g->base))
		return err;
	pg_oid_tohex(onto, g->o->onto);
	pg_oid_tohex(head, &g->base);
	if ((err = pg_repo_is_ancestor(pg_tree_repo(g->tree), &g->base, g->o->onto)) < 0) {
		char why[512];

		snprintf(why, sizeof(why), "%s", pg_error_last());
		return pg_error_set(err, "cannot merge onto %s: %s", onto, why);
	}
	if (err == 0)
		return pg_error_set(PG_EINVALID, "cannot merge onto %s: it does not descend from "
				    "%s's head %s", onto, pg_tree_branch(g->tree), head);
	g->base = *g->o->onto;
	return 0;
}

int pg_stage_merge(pg_run *g, pg_stage *st)
{
	pg_report *r = g->report;
	pg_merge_result m;
	char merge[PG_OID_HEXSZ + 1], base[PG_OID_HEXSZ + 1];
	pg_merge_opts mo = PG_MERGE_OPTS_INIT;
	int err;

	pg_merge_result_init(&m);
	if (!pg_oid_cmp(&r->tag_object, &r->tag_commit)) {
		err = pg_error_set(PG_EINVALID, "'%s' is a lightweight tag: only a signed tag "
				   "can be merged with its mergetag", r->tag);
		goto done;
	}
	if ((err = merge_base(g)) < 0)
		goto done;
	pg_run_progress(g, "merge", "fetching %s into %s", r->tag, g->tree_path.ptr);
	if ((err = pg_tree_fetch_tag(g->tree, g->spec->repo, r->tag, &r->tag_object)) < 0)
		goto done;
	mo.tag_name = strncmp(r->tag, "refs/tags/", 10) ? r->tag : r->tag + 10;
	mo.url = g->spec->name ? g->spec->name : g->spec->repo;
	/* the pull mail, as the merge's Link: trailer, when the pull came by one */
	mo.message_id = g->spec->request ? g->spec->request->message_id : NULL;
	/* the maintainer's identity: the service's, else the policy's, else pullgate's own */
	mo.name = g->o->settings.merge_name;
	mo.email = g->o->settings.merge_email;
	if ((err = pg_tree_merge(&m, g->tree, &g->base, &r->tag_object, &mo)) < 0)
		goto done;
	if (m.up_to_date) {
		pg_oid head;
		bool stacked = g->o->onto && pg_tree_head(&head, g->tree) == 0 &&
			       pg_oid_cmp(&head, &g->base);

		pg_error_clear();
		pg_oid_tohex(base, &g->base);
		err = stacked ?
		      pg_stage_set(st, PG_STAGE_SKIPPED, NULL, "%s is already in %.12s, the stack it "
				   "was merged onto", r->tag, base) :
		      pg_stage_set(st, PG_STAGE_SKIPPED, NULL, "%s is already in %s", r->tag,
				   pg_tree_branch(g->tree));
		goto done;
	}
	if (m.conflicted) {
		err = conflicted(g, st, &m);
		goto done;
	}
	if ((err = pg_tree_set_pull_branch(g->tree, g->key.ptr, &m.commit)) < 0)
		goto done;
	r->has_merge = true;
	r->merge_base = g->base;
	r->merge_commit = m.commit;
	/* said at once, whole: the service's queue stacks the next pull on it while this one builds */
	pg_oid_tohex(merge, &m.commit);
	pg_oid_tohex(base, &g->base);
	pg_run_progress(g, "merge", "merged %s onto %s", merge, base);
	err = passed(g, st, &m);
done:
	pg_merge_result_release(&m);
	return err;
}
