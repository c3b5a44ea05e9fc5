/* conflicts.c - a pull merged in memory onto the base alone and with each pull ahead of it, each conflict with its hunks. */
#include "pipeline/conflicts.h"
#include "pipeline/tree.h"
#include "common/error.h"
#include "common/json.h"
#include "common/str.h"

#include <signal.h>
#include <unistd.h>

/* Where a check keeps the tags it fetched: <pid>/0 the pull's, <pid>/<position> the others'. */
#define CONFLICTS_REFS "refs/pullgate/conflicts/"

const char *pg_conflicts_status_name(enum pg_conflicts_status s)
{
	switch (s) {
	case PG_CONFLICTS_CLEAN: return "clean";
	case PG_CONFLICTS_CONFLICTS: return "conflicts";
	case PG_CONFLICTS_SKIPPED: return "skipped";
	case PG_CONFLICTS_IN_BASE: return "in-base";
	case PG_CONFLICTS_UNKNOWN: return "unknown";
	case PG_CONFLICTS_RESOLVED: return "resolved";
	}
	return "?";
}

void pg_conflicts_result_free(pg_conflicts_result *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nahead; i++) {
		free(r->ahead[i].repo);
		free(r->ahead[i].tag);
		free(r->ahead[i].why);
		free(r->ahead[i].resolution);
		pg_conflict_list_release(&r->ahead[i].conflicts);
	}
	free(r->ahead);
	free(r->branch);
	free(r->repo);
	free(r->tag);
	free(r->alone_resolution);
	pg_conflict_list_release(&r->alone);
	free(r);
}

bool pg_conflicts_found(const pg_conflicts_result *r)
{
	size_t i;

	if ((r->alone.n || r->alone.more) && !r->alone_resolution)
		return true;
	for (i = 0; i < r->nahead; i++)
		if (r->ahead[i].status == PG_CONFLICTS_CONFLICTS)
			return true;
	return false;
}

static int result_new(pg_conflicts_result **out, const pg_conflicts_pull *pull,
		      const pg_conflicts_pull *ahead, size_t nahead, const char *branch)
{
	pg_conflicts_result *r;
	size_t i;

	*out = NULL;
	if (!(r = calloc(1, sizeof(*r))))
		return pg_error_oom();
	pg_conflict_list_init(&r->alone);
	if (nahead && !(r->ahead = calloc(nahead, sizeof(*r->ahead)))) {
		free(r);
		return pg_error_oom();
	}
	r->nahead = nahead;
	for (i = 0; i < nahead; i++) {
		r->ahead[i].position = i + 1;
		pg_conflict_list_init(&r->ahead[i].conflicts);
		if (!(r->ahead[i].repo = pg_strdup(ahead[i].repo)) ||
		    !(r->ahead[i].tag = pg_strdup(ahead[i].tag)))
			goto oom;
	}
	if (!(r->repo = pg_strdup(pull->repo)) || !(r->tag = pg_strdup(pull->tag)) ||
	    !(r->branch = pg_strdup(branch)))
		goto oom;
	*out = r;
	return 0;
oom:
	pg_conflicts_result_free(r);
	return PG_ENOMEM;
}

static int cancelled(const pg_conflicts_opts *o)
{
	return o->cancel && *o->cancel ?
		pg_error_set(PG_ECANCELLED, "conflicts: stopped by a signal") : 0;
}

/*
 * Drop the refs of checks that were killed (their process no longer
 * runs): a check drops its own when it ends, but SIGKILL ends it first.
 * Best effort: what cannot be dropped now is for the next check.
 */
static void drop_dead(pg_tree *t)
{
	pg_buf prefix = PG_BUF_INIT;
	char **refs = NULL;
	size_t i, n = 0, len = strlen(CONFLICTS_REFS);
	long last = -1;

	if (pg_tree_list_refs(&refs, &n, t, CONFLICTS_REFS) < 0)
		goto done;
	for (i = 0; i < n; i++) {
		const char *p = refs[i] + len;
		char *end;
		long pid = strtol(p, &end, 10);

		if (end == p || *end != '/' || pid <= 0 || pid == last || pid == (long)getpid())
			continue;
		last = pid;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		pg_buf_clear(&prefix);
		if (pg_buf_printf(&prefix, "%s%ld/", CONFLICTS_REFS, pid) == 0)
			pg_tree_drop_refs(t, prefix.ptr);
	}
done:
	pg_error_clear();
	pg_str_list_free(refs, n);
	pg_buf_release(&prefix);
}

/* The base: the caller's commit, which must be one in the tree, else the branch's head. */
static int find_base(pg_oid *base, pg_tree *t, const char *tree_path, const pg_oid *onto)
{
	enum pg_object_type type = PG_OBJ_NONE;
	char hex[PG_OID_HEXSZ + 1];
	int err;

	if (!onto)
		return pg_tree_head(base, t);
	pg_oid_tohex(hex, onto);
	if ((err = pg_repo_object_type(&type, pg_tree_repo(t), onto)) == PG_ENOTFOUND)
		return pg_error_set(err, "--onto %s is not in the tree '%s'", hex, tree_path);
	if (err < 0)
		return pg_error_wrap(err, "--onto %s", hex);
	if (type != PG_OBJ_COMMIT)
		return pg_error_set(PG_EINVALID, "--onto %s is a %s, not a commit", hex,
				    pg_object_type_name(type));
	*base = *onto;
	return 0;
}

/*
 * Whether the tree holds the tag object expected of pull p ahead, by the
 * tag's name: an object is named by its contents, so it is the one the
 * pull's verify read, fetched by an earlier run or check; it is not
 * fetched again (a sender's repository that is slow or gone costs
 * nothing).  The pull itself is always fetched: its tag must still be it.
 */
static bool held(pg_tree *t, const pg_conflicts_pull *p)
{
	const char *name = strncmp(p->tag, "refs/tags/", 10) ? p->tag : p->tag + 10;
	pg_tagobj *obj = NULL;
	bool same;

	if (!p->expect || pg_repo_read_tag(&obj, pg_tree_repo(t), p->expect) < 0) {
		pg_error_clear();
		return false;
	}
	same = obj->tag && !strcmp(obj->tag, name);
	pg_tagobj_free(obj);
	return same;
}

/* Fetch a pull's tag into refs/pullgate/conflicts/<pid>/<n> and peel it to its commit. */
static int fetch(pg_oid *commit, pg_tree *t, const char *prefix, size_t n,
		 const pg_conflicts_pull *p)
{
	pg_buf ref = PG_BUF_INIT;
	pg_oid tag;
	int err;

	if (n && held(t, p))
		return pg_repo_peel_commit(commit, pg_tree_repo(t), p->expect);
	if ((err = pg_buf_printf(&ref, "%s%zu", prefix, n)) == 0 &&
	    (err = pg_tree_fetch_tag_into(&tag, t, p->repo, p->tag, ref.ptr, p->expect)) == 0)
		err = pg_repo_peel_commit(commit, pg_tree_repo(t), &tag);
	pg_buf_release(&ref);
	return err;
}

/*
 * Whether a resolution recorded for a pull settles its conflicts on base:
 * 1 with *tree merged through it, *name (to free) and *id naming it.
 */
static int settled(pg_oid *tree, char **name, pg_oid *id, pg_tree *t, const pg_oid *base,
		   const pg_oid *commit)
{
	return pg_tree_resolution(tree, name, id, NULL, t, base, commit);
}

/*
 * j's merge onto the base, written as a commit (no ref), through j's
 * resolution where it conflicts there, as the stack would merge it;
 * *skipped when j conflicts there by itself and none settles it.  Dated
 * as the later of its parents, so that the same check writes the same
 * object, and no commit is older than its parents for the merge-base walk.
 */
static int merge_ahead(pg_oid *merge, bool *skipped, pg_tree *t, const pg_oid *base,
		       const pg_oid *commit, const pg_conflicts_opts *o)
{
	pg_repo *repo = pg_tree_repo(t);
	pg_commit *a = NULL, *b = NULL;
	char **paths = NULL, *name = NULL;
	size_t npaths = 0;
	pg_oid tree, parents[2], id;
	pg_new_commit c;
	int err;

	*skipped = false;
	if ((err = pg_repo_merge_trees(&tree, &paths, &npaths, repo, base, commit)) < 0)
		goto done;
	if (npaths && (err = settled(&tree, &name, &id, t, base, commit)) <= 0) {
		*skipped = err == 0;
		goto done;
	}
	if ((err = pg_repo_read_commit(&a, repo, base)) < 0 ||
	    (err = pg_repo_read_commit(&b, repo, commit)) < 0)
		goto done;
	parents[0] = *base;
	parents[1] = *commit;
	memset(&c, 0, sizeof(c));
	c.tree = &tree;
	c.parents = parents;
	c.nparents = 2;
	c.name = o->settings.merge_name;
	c.email = o->settings.merge_email;
	c.time = a->committer.time > b->committer.time ? a->committer.time : b->committer.time;
	if (c.time <= 0)
		c.time = 1; /* 0 is "now" */
	c.message = "pullgate conflicts: a pull ahead merged onto the base\n";
	err = pg_repo_commit_write(merge, repo, &c);
done:
	free(name);
	pg_commit_free(a);
	pg_commit_free(b);
	pg_str_list_free(paths, npaths);
	return err;
}

/* Pull j ahead could not be read or merged: said, and the others are checked. */
static int unknown(pg_conflicts_ahead *j, int err)
{
	if (err == PG_ECANCELLED || err == PG_ENOMEM)
		return err;
	j->status = PG_CONFLICTS_UNKNOWN;
	pg_conflict_list_release(&j->conflicts);
	free(j->why);
	j->why = pg_strdup(pg_error_last());
	pg_error_clear();
	return j->why ? 0 : PG_ENOMEM;
}

/*
 * Whether what the pull conflicts in on j's merge is only its conflict
 * with the base, settled as there: the same paths, by the same
 * resolution (which applied on both, so the two sides were the same).
 */
static bool base_alone(const pg_conflicts_result *r, const pg_conflicts_ahead *j)
{
	size_t i;

	if (!r->alone_resolution || strcmp(r->alone_resolution, j->resolution) ||
	    r->alone.n != j->conflicts.n || r->alone.more != j->conflicts.more)
		return false;
	for (i = 0; i < r->alone.n; i++)
		if (strcmp(r->alone.items[i].path, j->conflicts.items[i].path))
			return false;
	return true;
}

/* The pull against each pull ahead, once it merges cleanly alone or its resolution settles it. */
static int check_ahead(pg_conflicts_result *r, pg_tree *t, const pg_conflicts_opts *o)
{
	pg_repo *repo = pg_tree_repo(t);
	size_t i;
	int err, in;

	for (i = 0; i < r->nahead; i++) {
		pg_conflicts_ahead *j = &r->ahead[i];
		pg_oid merge, tree;
		bool skipped;

		if ((err = cancelled(o)) < 0)
			return err;
		if (j->status == PG_CONFLICTS_UNKNOWN)
			continue;
		if ((err = in = pg_repo_is_ancestor(repo, &j->commit, &r->base)) < 0) {
			if ((err = unknown(j, err)) < 0)
				return err;
			continue;
		}
		if (in) {
			j->status = PG_CONFLICTS_IN_BASE;
			continue;
		}
		if ((err = merge_ahead(&merge, &skipped, t, &r->base, &j->commit, o)) < 0 ||
		    (!skipped && (err = pg_repo_merge_conflicts(&j->conflicts, repo, &merge,
								&r->commit,
								PG_CONFLICTS_MAX_PATHS)) < 0)) {
			if ((err = unknown(j, err)) < 0)
				return err;
			continue;
		}
		if (skipped) {
			j->status = PG_CONFLICTS_SKIPPED;
			continue;
		}
		j->status = j->conflicts.n || j->conflicts.more ? PG_CONFLICTS_CONFLICTS :
			    PG_CONFLICTS_CLEAN;
		if (j->status == PG_CONFLICTS_CONFLICTS &&
		    (err = settled(&tree, &j->resolution, &j->resolution_commit, t, &merge,
				   &r->commit)) != 0) {
			if (err < 0 && (err = unknown(j, err)) < 0)
				return err;
			if (err > 0)
				j->status = PG_CONFLICTS_RESOLVED;
			if (err > 0 && base_alone(r, j)) {
				/* the pull's conflicts with the base, settled: none is j's */
				j->status = PG_CONFLICTS_CLEAN;
				pg_conflict_list_release(&j->conflicts);
				free(j->resolution);
				j->resolution = NULL;
			}
		}
	}
	return 0;
}

static int run(pg_conflicts_result *r, pg_tree *t, const char *tree_path, const char *prefix,
	       const pg_conflicts_pull *pull, const pg_conflicts_pull *ahead,
	       const pg_conflicts_opts *o)
{
	pg_repo *repo = pg_tree_repo(t);
	size_t i;
	pg_oid tree;
	int err;

	if ((err = find_base(&r->base, t, tree_path, o->onto)) < 0)
		return err;
	if ((err = fetch(&r->commit, t, prefix, 0, pull)) < 0)
		return err;
	for (i = 0; i < r->nahead; i++) {
		if ((err = cancelled(o)) < 0)
			return err;
		if ((err = fetch(&r->ahead[i].commit, t, prefix, i + 1, &ahead[i])) < 0 &&
		    (err = unknown(&r->ahead[i], err)) < 0)
			return err;
	}
	if ((err = cancelled(o)) < 0 ||
	    (err = pg_repo_merge_conflicts(&r->alone, repo, &r->base, &r->commit,
					   PG_CONFLICTS_MAX_PATHS)) < 0)
		return err;
	if ((r->alone.n || r->alone.more) &&
	    (err = settled(&tree, &r->alone_resolution, &r->alone_resolution_commit, t, &r->base,
			   &r->commit)) <= 0) {
		for (i = 0; i < r->nahead; i++)
			r->ahead[i].status = PG_CONFLICTS_SKIPPED;
		return err;
	}
	return check_ahead(r, t, o);
}

int pg_conflicts_check(pg_conflicts_result **out, const pg_conflicts_pull *pull,
		       const pg_conflicts_pull *ahead, size_t nahead,
		       const pg_conflicts_opts *o)
{
	pg_conflicts_result *r = NULL;
	pg_tree *t = NULL;
	pg_buf path = PG_BUF_INIT, prefix = PG_BUF_INIT;
	bool made = false;
	int err, drop;

	*out = NULL;
	if ((err = result_new(&r, pull, ahead, nahead, o->settings.branch)) < 0 ||
	    (err = pg_gate_settings_tree_path(&path, &o->settings, o->home)) < 0 ||
	    (err = pg_buf_printf(&prefix, "%s%ld/", CONFLICTS_REFS, (long)getpid())) < 0 ||
	    (err = pg_tree_open(&t, path.ptr, o->settings.branch)) < 0)
		goto done;
	r->onto = o->onto != NULL;
	drop_dead(t);
	made = true;
	err = run(r, t, path.ptr, prefix.ptr, pull, ahead, o);
done:
	/* the refs go whatever happened; a failure to drop them is the result's only if it had none */
	if (made && (drop = pg_tree_drop_refs(t, prefix.ptr)) < 0 && err == 0)
		err = drop;
	pg_tree_free(t);
	pg_buf_release(&path);
	pg_buf_release(&prefix);
	if (err < 0) {
		pg_conflicts_result_free(r);
		return err;
	}
	*out = r;
	return 0;
}

/* --- JSON ------------------------------------------------------------------------ */

static void put_conflicts(pg_json_writer *w, const char *key, const pg_conflict_list *l)
{
	size_t i;

	pg_json_open_array(w, key);
	for (i = 0; i < l->n; i++) {
		pg_json_open_object(w, NULL);
		pg_json_put_str(w, "path", l->items[i].path);
		pg_json_put_int(w, "hunks", l->items[i].hunks);
		pg_json_close(w);
	}
	pg_json_close(w);
}

/* {"ref": "refs/pullgate/resolutions/x", "commit": ...}, or null */
static void put_resolution(pg_json_writer *w, const char *key, const char *ref, const pg_oid *id)
{
	if (!ref) {
		pg_json_put_null(w, key);
		return;
	}
	pg_json_open_object(w, key);
	pg_json_put_str(w, "ref", ref);
	pg_json_put_oid(w, "commit", id);
	pg_json_close(w);
}

int pg_conflicts_format_json(pg_buf *out, const pg_conflicts_result *r)
{
	pg_json_writer *w = NULL;
	size_t i;
	int err;

	if ((err = pg_json_writer_new(&w)) < 0)
		return err;
	pg_json_put_oid(w, "base", &r->base);
	pg_json_open_object(w, "pull");
	pg_json_put_str(w, "repo", r->repo);
	pg_json_put_str(w, "tag", r->tag);
	pg_json_put_oid(w, "commit", &r->commit);
	pg_json_close(w);
	put_conflicts(w, "alone", &r->alone);
	pg_json_put_int(w, "alone_more", (int64_t)r->alone.more);
	put_resolution(w, "alone_resolution", r->alone_resolution, &r->alone_resolution_commit);
	pg_json_open_array(w, "ahead");
	for (i = 0; i < r->nahead; i++) {
		const pg_conflicts_ahead *j = &r->ahead[i];

		pg_json_open_object(w, NULL);
		pg_json_put_int(w, "position", (int64_t)j->position);
		pg_json_put_str(w, "repo", j->repo);
		pg_json_put_str(w, "tag", j->tag);
		if (j->status == PG_CONFLICTS_UNKNOWN)
			pg_json_put_null(w, "commit");
		else
			pg_json_put_oid(w, "commit", &j->commit);
		pg_json_put_str(w, "status", pg_conflicts_status_name(j->status));
		pg_json_put_str(w, "why", j->why);
		put_conflicts(w, "conflicts", &j->conflicts);
		pg_json_put_int(w, "more", (int64_t)j->conflicts.more);
		put_resolution(w, "resolution", j->resolution, &j->resolution_commit);
		pg_json_close(w);
	}
	pg_json_close(w);
	if ((err = pg_json_write(out, w, PG_JSON_INDENT)) == 0)
		err = pg_buf_putc(out, '\n');
	pg_json_writer_free(w);
	return err;
}
