/* verify.c - resolve the pull, load it, run each check, produce the report. */
#include "verifier/verify.h"
#include "verifier/gpg.h"
#include "verifier/mail.h"
#include "verifier/pull.h"
#include "common/error.h"
#include "common/fs.h"

typedef int (*check_fn)(pg_pull *p);

/* rewritten-upstream runs before the checks that may use what it matched */
static const check_fn checks[] = {
	pg_check_signature,
	pg_check_rewritten_upstream,
	pg_check_foreign_committer,
	pg_check_range_size,
	pg_check_signoff,
	pg_check_fixes_tag,
	pg_check_back_merge,
	pg_check_recent_rebase,
	pg_check_date_anomaly,
	pg_check_pull_request,
	pg_check_transparency, /* after tag-signature: the signer it names */
};

int pg_split_location(char **repo, char **branch, const char *arg)
{
	const char *colon = strrchr(arg, ':');
	char *prefix = NULL;

	*repo = NULL;
	*branch = NULL;
	if (colon && colon[1] && strncmp(colon, "://", 3)) {
		if (!(prefix = pg_strndup(arg, (size_t)(colon - arg))))
			return PG_ENOMEM;
		/* a path or URL with a plain branch, or a local directory: "up.git:for-next/core" */
		if ((!strchr(colon + 1, '/') && strchr(prefix, '/')) || pg_is_dir(prefix)) {
			if (!(*branch = pg_strdup(colon + 1))) {
				free(prefix);
				return PG_ENOMEM;
			}
			*repo = prefix;
			return 0;
		}
		free(prefix);
	}
	*repo = pg_strdup(arg);
	return *repo ? 0 : PG_ENOMEM;
}

#define MAX_TAG_CHAIN 8

/*
 * Follow tags from *at until something other than a tag: *at and *type are
 * then that object.  The outermost tag is kept in *outer when it is given
 * (the one the sender signed).  Returns 1 when the chain is longer than
 * MAX_TAG_CHAIN: *at is where the walk stopped.
 */
static int peel_tags(pg_oid *at, enum pg_object_type *type, pg_tagobj **outer, pg_repo *repo)
{
	int depth, err;

	for (depth = 0; depth < MAX_TAG_CHAIN; depth++) {
		pg_tagobj *t = NULL;

		if ((err = pg_repo_object_type(type, repo, at)) < 0)
			return err;
		if (*type != PG_OBJ_TAG)
			return 0;
		if ((err = pg_repo_read_tag(&t, repo, at)) < 0)
			return err;
		*at = t->object;
		if (outer && !*outer)
			*outer = t;
		else
			pg_tagobj_free(t);
	}
	return 1;
}

/*
 * Peel the tag ref: an annotated tag to its commit, a lightweight tag as is.
 * Returns 1 when the tag reaches no commit: that is a finding, not an error.
 */
static int resolve_tag(pg_pull *p, const pg_oid *target)
{
	enum pg_object_type type = PG_OBJ_NONE;
	pg_oid at = *target;
	char hex[PG_OID_HEXSZ + 1];
	int chain, err;

	if ((chain = peel_tags(&at, &type, &p->tag, p->repo)) < 0)
		return chain;
	if (!chain && type == PG_OBJ_COMMIT) {
		p->tag_commit = at;
		return 0;
	}
	pg_oid_tohex(hex, &at);
	/* an error whatever the policy says: there is nothing to merge */
	err = pg_report_add(NULL, p->report, PG_CHECK_TAG_SIGNATURE, PG_SEV_ERROR, NULL,
			    "tag '%s' points to %s %s, not to a commit", p->report->tag,
			    chain ? "a chain of tags at" : pg_object_type_name(type), hex);
	return err < 0 ? err : 1;
}

static int resolve_upstream(pg_pull *p, const char *location, const char *branch)
{
	enum pg_object_type type = PG_OBJ_NONE;
	/* the upstream's commit-graph is read in place; the pull's never is */
	pg_fetch_opts opts = PG_FETCH_OPTS_INIT;
	pg_oid at;
	int err;

	opts.trust_graph = true;
	if ((err = pg_repo_resolve(&at, &p->report->upstream_ref, p->repo, location,
				   PG_REF_BRANCH, branch, &opts)) < 0)
		return err;
	if ((err = peel_tags(&at, &type, NULL, p->repo)) == 0 && type == PG_OBJ_COMMIT) {
		p->upstream_tip = at;
		return 0;
	}
	if (err < 0)
		return pg_error_wrap(err, "upstream '%s'", p->report->upstream_ref);
	return pg_error_set(PG_EINVALID, "upstream '%s' does not name a commit",
			    p->report->upstream_ref);
}

static const char *index_action_name(const pg_identity_index_info *info)
{
	if (info->action == PG_IDENTITY_INDEX_CURRENT)
		return "current";
	if (info->action == PG_IDENTITY_INDEX_EXTENDED)
		return "extended";
	if (!info->why || !strcmp(info->why, "new"))
		return "built (new)";
	if (!strcmp(info->why, "rewritten"))
		return "built (rewritten)";
	if (!strcmp(info->why, "key"))
		return "built (key)";
	if (!strcmp(info->why, "graph"))
		return "built (graph)";
	return "built (damaged)";
}

/* Load the pull's commits and the upstream side; count them in the report. */
static int load(pg_pull *p)
{
	const pg_identity_index_info *info;
	size_t i;
	int err;

	if ((err = pg_pull_load(p)) < 0 || (err = pg_upstream_build(&p->upstream, p)) < 0)
		return err;
	p->report->ncommits = p->ncommits;
	for (i = 0; i < p->ncommits; i++)
		if (p->commits[i]->nparents > 1)
			p->report->nmerges++;
	p->report->upstream_examined = pg_upstream_examined(p->upstream);
	p->report->upstream_since = pg_upstream_since(p->upstream);
	if ((info = pg_upstream_index_info(p->upstream, &p->report->upstream_indexed))) {
		p->report->upstream_index = index_action_name(info);
		p->report->upstream_index_added = info->added;
	}
	return 0;
}

/* Commit-graph files whose checksum held are remembered in home: checked once, not per verify. */
static int set_graph_checks(pg_repo *r, const char *home)
{
	pg_buf path = PG_BUF_INIT;
	int err;

	if ((err = pg_buf_printf(&path, "%s/repos/graph-checks", home)) == 0)
		err = pg_repo_set_graph_checks(r, path.ptr);
	pg_buf_release(&path);
	return err;
}

int pg_verify(pg_report **out, const pg_pull_spec *spec, const pg_policy *policy,
	      const char *home)
{
	pg_pull p;
	pg_oid target;
	char *abs = NULL;
	const char *location = spec->repo;
	const char *up = spec->upstream ? spec->upstream : policy->upstream_url;
	const char *branch = spec->upstream ? spec->upstream_branch : policy->upstream_branch;
	pg_gpg_keys keys;
	size_t i;
	bool no_commit;
	int err;

	*out = NULL;
	if (!up)
		return pg_error_set(PG_EINVALID, "no upstream: give --upstream or a policy "
				    "that names one");
	memset(&p, 0, sizeof(p));
	/* a local repository is known by its absolute path, however it was given */
	if (!strstr(spec->repo, "://") && (abs = realpath(spec->repo, NULL)))
		location = abs;
	p.policy = policy;
	p.home = home;
	p.repo_location = location;
	p.repo_name = spec->name ? spec->name : location;
	p.request = spec->request;
	p.verify_index = spec->verify_index;
	p.index_cache_size = spec->index_cache_size;
	p.index_memory = spec->index_memory;
	if ((err = pg_report_new(&p.report)) < 0) {
		free(abs);
		return err;
	}
	p.report->max_per_check = policy->max_findings_per_check;
	p.report->no_keyring = !pg_pull_gpg_keys(&keys, policy);
	if (!(p.report->repo = pg_strdup(location)) || !(p.report->upstream = pg_strdup(up)) ||
	    !(p.report->policy_sha256 = pg_strdup(policy->sha256))) {
		err = PG_ENOMEM;
		goto done;
	}
	/* the allow-list is also the guard against fetching from anywhere (SSRF) */
	if (!pg_policy_repository_allowed(policy, location) &&
	    !(spec->name && pg_policy_repository_allowed(policy, spec->name))) {
		err = pg_error_set(PG_EINVALID, "repository '%s' is not in the policy's list of "
				   "repositories", spec->repo);
		goto done;
	}
	if ((err = pg_repo_open_cache(&p.repo, home)) < 0 ||
	    (err = set_graph_checks(p.repo, home)) < 0)
		goto done;
	if (spec->progress)
		pg_repo_set_progress(p.repo, spec->progress, spec->progress_ctx);
	if ((err = pg_repo_resolve(&target, &p.report->tag, p.repo, location, PG_REF_TAG,
				   spec->tag, NULL)) < 0)
		goto done;
	p.report->tag_object = target;
	if ((err = resolve_tag(&p, &target)) < 0)
		goto done;
	no_commit = err == 1;
	if ((err = resolve_upstream(&p, up, branch)) < 0)
		goto done;
	p.report->tag_commit = p.tag_commit;
	if (p.tag && p.tag->has_tagger) {
		p.report->tag_time = p.tag->tagger.time;
		p.report->tag_offset = p.tag->tagger.offset;
	}
	p.report->upstream_tip = p.upstream_tip;
	if (no_commit) {
		/* a tag of a tree or a blob: nothing to merge, only the tag to judge */
		err = pg_check_signature(&p);
		goto done;
	}

	if ((err = load(&p)) < 0)
		goto done;

	for (i = 0; i < PG_ARRAY_SIZE(checks); i++)
		if ((err = checks[i](&p)) < 0)
			goto done;
	if (pg_upstream_truncated(p.upstream))
		err = pg_report_add(NULL, p.report, PG_CHECK_REWRITTEN_UPSTREAM, PG_SEV_WARNING,
				    NULL, "the search for copies of upstream commits stopped at "
				    "the policy's cap of %zu commits", policy->max_upstream_commits);
	if (err == 0)
		err = pg_pull_story(&p);
done:
	pg_pull_release(&p);
	pg_tagobj_free(p.tag);
	pg_repo_free(p.repo);
	free(abs);
	if (err < 0) {
		pg_report_free(p.report);
		return err;
	}
	*out = p.report;
	return 0;
}

int pg_verify_copies(pg_report **out, pg_repo *repo, const pg_oid *tip, const pg_oid *upstream,
		     const pg_oid *hide, size_t nhide, const pg_policy *policy)
{
	pg_pull p;
	int err;

	*out = NULL;
	memset(&p, 0, sizeof(p));
	p.repo = repo;
	p.policy = policy;
	p.tag_commit = *tip;
	p.upstream_tip = *upstream;
	p.hide = hide;
	p.nhide = nhide;
	if ((err = pg_report_new(&p.report)) < 0)
		return err;
	p.report->max_per_check = policy->max_findings_per_check;
	p.report->tag_commit = *tip;
	p.report->upstream_tip = *upstream;
	if ((err = load(&p)) < 0)
		goto done;
	if ((err = pg_check_rewritten_upstream(&p)) == 0)
		err = pg_pull_story(&p);
done:
	pg_pull_release(&p);
	if (err < 0) {
		pg_report_free(p.report);
		return err;
	}
	*out = p.report;
	return 0;
}
