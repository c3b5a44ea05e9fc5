/* stage_approve.c - approval: the integration branch moves to the tested merge; the sender gets a notice. */
#include "pipeline/stage.h"
#include "pipeline/attest.h"
#include "repo/object.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/testpoint.h"

#include <time.h>

/* The pr-tracker-bot style notice, written to <logs>/notice.txt. */
static int write_notice(pg_buf *path, const char *logs, const char *repo, const char *tagref,
			const char *tree, const char *branch_ref, const pg_report *r)
{
	pg_buf b = PG_BUF_INIT, date = PG_BUF_INIT;
	char hex[PG_OID_HEXSZ + 1];
	const char *tag = strncmp(tagref, "refs/tags/", 10) ? tagref : tagref + 10;
	int err;

	/* "sent on" the day the sender tagged it, in the sender's zone */
	pg_oid_tohex(hex, &r->merge_commit);
	if ((err = pg_time_format_mail(&date, r->tag_time ? r->tag_time : (int64_t)time(NULL),
				       r->tag_time ? r->tag_offset : 0)) < 0 ||
	    (err = pg_buf_printf(path, "%s/notice.txt", logs)) < 0)
		goto done;
	err = pg_buf_printf(&b, "The pull request you sent on %s:\n\n> %s tags/%s\n\n"
			    "has been merged into %s:%s:\n%s\n\nThank you!\n\n-- \npullgate\n",
			    date.ptr, repo, tag, tree, branch_ref + strlen("refs/heads/"), hex);
	if (err == 0)
		err = pg_write_file_atomic(path->ptr, b.ptr, b.len);
done:
	pg_buf_release(&b);
	pg_buf_release(&date);
	return err;
}

int pg_gate_expected_tag(const pg_report *r, const pg_oid *expect, const char *then)
{
	char hex[PG_OID_HEXSZ + 1], want[PG_OID_HEXSZ + 1];

	if (!expect || !pg_oid_cmp(&r->tag_object, expect))
		return 0;
	pg_oid_tohex(hex, &r->tag_object);
	pg_oid_tohex(want, expect);
	return pg_error_set(PG_ECONFLICT, "%s is %.12s, not the %.12s the push record names%s%s",
			    r->tag, hex, want, then ? ": " : "", then ? then : "");
}

/*
 * The evidence approval rests on, checked again at the last moment: the
 * tag's signature verified good by a trusted signer (the gate's rule,
 * whatever the policy says), the tag at the sender's repository still the
 * object that was verified (and that a push record named), and its
 * signature still good under the policy in force now: a key dropped from
 * the signers or revoked in the keyring since the test approves nothing.
 */
static int still_verified(pg_tree *tree, const pg_report *r, const pg_pull_spec *spec,
			  const pg_policy *policy, const pg_oid *expect, const char *home)
{
	int err;

	if (!r->tag_signer)
		return pg_error_set(PG_EINVALID, "'%s' has no signature verified good by a trusted "
				    "signer: it cannot be approved", r->tag);
	if ((err = pg_gate_expected_tag(r, expect, "nothing was changed")) < 0)
		return err;
	if ((err = pg_tree_fetch_tag(tree, spec->repo, r->tag, &r->tag_object)) == PG_ECONFLICT)
		return pg_error_wrap(err, "nothing was changed");
	if (err < 0)
		return err;
	if (!policy)
		return pg_error_set(PG_EINVALID, "'%s': no policy to verify its signature under: "
				    "nothing was changed", r->tag);
	/* PG_EINVALID, not PG_ECONFLICT: the pull is no better tested again, it waits */
	if ((err = pg_verify_signer(pg_tree_repo(tree), &r->tag_object, spec, policy,
				    r->tag_signer, home)) == PG_EINVALID)
		return pg_error_wrap(err, "'%s' is refused by the policy now, nothing was changed",
				     r->tag);
	return err;
}

/*
 * Move the tree's integration branch from r->merge_base to r->merge_commit
 * (a compare-and-swap), mark r approved and write the notice.  Once the
 * branch moved the approval stands: a notice that cannot be written is
 * only left out.  Refused because another approval moved the branch since
 * the merge was made, *moved (if given) says so: the pull must be tested
 * again on the new head, never approved onto it untested.
 */
static int approve(pg_buf *notice, pg_tree *tree, const char *tree_path, const char *logs,
		   pg_report *r, const char *repo, const char *why, bool *moved)
{
	pg_oid head;
	char msg[512];
	int err;

	pg_testpoint("approve", "before-cas");
	err = pg_tree_advance(tree, &r->merge_base, &r->merge_commit, why);
	pg_testpoint("approve", "after-cas");
	if (err < 0) {
		snprintf(msg, sizeof(msg), "%s", pg_error_last());
		/* refused because the branch is elsewhere now, not locked or checked out */
		if (err == PG_ECONFLICT && moved && pg_tree_head(&head, tree) == 0 &&
		    pg_oid_cmp(&head, &r->merge_base))
			*moved = true;
		return pg_error_set(err, "%s", msg);
	}
	r->approved = true;
	if (write_notice(notice, logs, repo, r->tag, tree_path, pg_tree_branch(tree), r) < 0) {
		pg_error_clear();
		pg_buf_clear(notice);
	}
	return 0;
}

int pg_stage_approve(pg_run *g, pg_stage *st)
{
	pg_buf notice = PG_BUF_INIT;
	char hex[PG_OID_HEXSZ + 1];
	const char *repo = g->spec->name ? g->spec->name : g->spec->repo;
	int err;

	pg_oid_tohex(hex, &g->report->merge_commit);
	if (!g->o->settings.approve) {
		g->keep_refs = true; /* the maintainer approves it later, from them */
		return pg_stage_set(st, PG_STAGE_WAITING, NULL, "merge %.12s waits for the "
				    "maintainer on refs/heads/pullgate/%s", hex, g->key.ptr);
	}
	pg_run_progress(g, "approve", "reading %s again from %s", g->report->tag, g->spec->repo);
	if ((err = still_verified(g->tree, g->report, g->spec, g->policy, g->o->expect_tag,
				  g->o->home)) == 0 &&
	    (err = approve(&notice, g->tree, g->tree_path.ptr, g->logs.ptr, g->report, repo,
			   "pullgate: approved", g->o->branch_moved)) == 0)
		err = pg_stage_set(st, PG_STAGE_PASSED, notice.len ? notice.ptr : NULL,
				   "%s moved to %.12s", pg_tree_branch(g->tree), hex);
	pg_buf_release(&notice);
	return err;
}

/* Where an approval's pieces are: the tree's path, the pull's key and its run's logs. */
static int approval_paths(pg_buf *path, pg_buf *key, pg_buf *logs, const pg_report *r,
			  const pg_gate_opts *o)
{
	int err;

	if ((err = pg_run_tree_path(path, o)) < 0 || (err = pg_gate_pull_key(key, r->tag)) < 0)
		return err;
	/* the notice goes beside the logs of the run that tested the merge */
	return r->run_dir ? pg_buf_puts(logs, r->run_dir) : pg_run_logs_dir(logs, o, key->ptr);
}

/*
 * What follows the branch's move: the pull's refs go (an approval stands
 * without that), and the attestation is signed over the report of the run
 * that tested the merge.
 */
static int after_the_move(pg_report *r, pg_tree *tree, const pg_gate_opts *o, const char *path,
			  const char *key, const char *logs)
{
	pg_buf home = PG_BUF_INIT, report = PG_BUF_INIT;
	const char *fpr = o->settings.attest_key;
	int err;

	if (pg_tree_drop_pull_refs(tree, key, r->tag) < 0)
		pg_error_clear(); /* approved; the refs are only left over */
	if ((err = pg_attest_plan(&home, r, fpr, o->settings.attest_gnupg_home, o->home)) > 0)
		err = pg_buf_printf(&report, "%s/report.json", logs) < 0 ? PG_ENOMEM :
		      pg_attest_sign(r, path, report.ptr, o->by_policy ? "gate" : "maintainer", fpr,
				     home.ptr);
	pg_testpoint("approve", "signed");
	pg_buf_release(&home);
	pg_buf_release(&report);
	return err < 0 ? err : 0;
}

int pg_gate_approve(pg_report *r, const pg_pull_spec *spec, const pg_gate_opts *o,
		    pg_buf *notice)
{
	pg_tree *tree = NULL;
	pg_buf key = PG_BUF_INIT, path = PG_BUF_INIT, logs = PG_BUF_INIT;
	int err;

	if (!r->has_merge)
		return pg_error_set(PG_EINVALID, "'%s' has no tested merge to approve", r->tag);
	if (r->approved)
		return pg_error_set(PG_EEXISTS, "'%s' is already approved", r->tag);
	if ((err = approval_paths(&path, &key, &logs, r, o)) == 0 &&
	    (err = pg_tree_open(&tree, path.ptr, o->settings.branch)) == 0 &&
	    (err = still_verified(tree, r, spec, o->policy, o->expect_tag, o->home)) == 0 &&
	    (!o->approving || (err = o->approving(o->approving_ctx)) == 0) &&
	    (err = approve(notice, tree, path.ptr, logs.ptr, r, spec->name ? spec->name : spec->repo,
			   o->by_policy ? "pullgate: approved" : "pullgate: approved by the maintainer",
			   o->branch_moved)) == 0)
		err = after_the_move(r, tree, o, path.ptr, key.ptr, logs.ptr);
	pg_tree_free(tree);
	pg_buf_release(&key);
	pg_buf_release(&path);
	pg_buf_release(&logs);
	return err;
}

int pg_gate_approve_resume(pg_report *r, const pg_pull_spec *spec, const pg_gate_opts *o,
			   pg_buf *notice)
{
	pg_tree *tree = NULL;
	pg_buf key = PG_BUF_INIT, path = PG_BUF_INIT, logs = PG_BUF_INIT;
	pg_oid head;
	int err, held = 0;

	if (!r->has_merge)
		return pg_error_set(PG_EINVALID, "'%s' has no tested merge to approve", r->tag);
	if ((err = approval_paths(&path, &key, &logs, r, o)) < 0 ||
	    (err = pg_tree_open(&tree, path.ptr, o->settings.branch)) < 0 ||
	    (err = held = pg_tree_holds(tree, &r->merge_commit)) < 0 ||
	    (!held && (err = pg_tree_head(&head, tree)) < 0))
		goto done;
	if (!held && pg_oid_cmp(&head, &r->merge_base)) {
		err = pg_error_set(PG_ECONFLICT, "%s holds neither the approved merge nor the head it "
				   "was made on", pg_tree_branch(tree));
		goto done;
	}
	if (!held)
		goto done; /* nothing moved */
	r->approved = true;
	if (write_notice(notice, logs.ptr, spec->name ? spec->name : spec->repo, r->tag, path.ptr,
			 pg_tree_branch(tree), r) < 0) {
		pg_error_clear();
		pg_buf_clear(notice);
	}
	if ((err = after_the_move(r, tree, o, path.ptr, key.ptr, logs.ptr)) == 0)
		err = 1;
done:
	pg_tree_free(tree);
	pg_buf_release(&key);
	pg_buf_release(&path);
	pg_buf_release(&logs);
	return err;
}
