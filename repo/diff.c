/* diff.c - tree-to-tree diffs: patch ids, the paths a diff touches and the lines it changes. */
#include "repo/internal.h"
#include "common/error.h"

/* The tree of commit id; NULL id: NULL, which libgit2 diffs as the empty tree. */
static int commit_tree(git_tree **out, pg_repo *r, const pg_oid *id)
{
	git_commit *c = NULL;
	int gerr;

	*out = NULL;
	if (!id)
		return 0;
	if ((gerr = git_commit_lookup(&c, r->git, pg_git_oid(id))) == 0)
		gerr = git_commit_tree(out, c);
	git_commit_free(c);
	return gerr;
}

int pg_repo_patch_id(pg_oid *out, pg_repo *r, const pg_commit *c)
{
	git_tree *old_tree = NULL, *new_tree = NULL;
	git_diff *diff = NULL;
	git_oid pid;
	int gerr = 0;

	if (c->nparents > 1)
		return pg_error_set(PG_EINVALID, "a merge has no patch id");
	if ((c->nparents == 1 && (gerr = commit_tree(&old_tree, r, &c->parents[0])) < 0) ||
	    (gerr = git_tree_lookup(&new_tree, r->git, pg_git_oid(&c->tree))) < 0 ||
	    (gerr = git_diff_tree_to_tree(&diff, r->git, old_tree, new_tree, NULL)) < 0 ||
	    (gerr = git_diff_patchid(&pid, diff, NULL)) < 0)
		gerr = pg_git_fail(gerr, "patch id");
	else
		pg_oid_from_git(out, &pid);
	git_diff_free(diff);
	git_tree_free(new_tree);
	git_tree_free(old_tree);
	return gerr;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The paths of the diff from tree a to tree b (NULL: the empty tree),
 * sorted and unique: both sides of every delta, or with old_only the old
 * side of every delta but an addition.
 */
static int diff_trees_paths(char ***paths, size_t *n, pg_repo *r, git_tree *a, git_tree *b,
			    bool old_only)
{
	git_diff *diff = NULL;
	size_t i, count = 0, ndeltas, uniq;
	char **list = NULL;
	int gerr, err = 0;

	if ((gerr = git_diff_tree_to_tree(&diff, r->git, a, b, NULL)) < 0) {
		err = pg_git_fail(gerr, "diff");
		goto done;
	}
	ndeltas = git_diff_num_deltas(diff);
	if (!(list = calloc(2 * ndeltas + 1, sizeof(*list)))) {
		err = pg_error_oom();
		goto done;
	}
	for (i = 0; i < ndeltas; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		const char *names[2] = { d->old_file.path, old_only ? NULL : d->new_file.path };
		size_t k;

		if (old_only && d->status == GIT_DELTA_ADDED)
			continue;
		for (k = 0; k < 2; k++) {
			if (!names[k] || (k == 1 && names[0] && !strcmp(names[0], names[1])))
				continue;
			if (!(list[count] = pg_strdup(names[k]))) {
				err = PG_ENOMEM;
				goto done;
			}
			count++;
		}
	}
	qsort(list, count, sizeof(*list), cmp_path);
	for (i = 0, uniq = 0; i < count; i++) {
		if (uniq && !strcmp(list[uniq - 1], list[i]))
			free(list[i]);
		else
			list[uniq++] = list[i];
	}
	*paths = list;
	*n = uniq;
	list = NULL;
	count = 0;
done:
	pg_str_list_free(list, count);
	git_diff_free(diff);
	return err;
}

int pg_repo_diff_paths(char ***paths, size_t *n, pg_repo *r, const pg_oid *from,
		       const pg_oid *to)
{
	git_tree *a = NULL, *b = NULL;
	int gerr, err;

	*paths = NULL;
	*n = 0;
	if ((gerr = commit_tree(&a, r, from)) < 0 || (gerr = commit_tree(&b, r, to)) < 0)
		err = pg_git_fail(gerr, "diff");
	else
		err = diff_trees_paths(paths, n, r, a, b, false);
	git_tree_free(b);
	git_tree_free(a);
	return err;
}

int pg_repo_diff_tree_changed(char ***paths, size_t *n, pg_repo *r, const pg_oid *a,
			      const pg_oid *b)
{
	git_tree *ta = NULL, *tb = NULL;
	int gerr, err;

	*paths = NULL;
	*n = 0;
	if ((gerr = git_tree_lookup(&ta, r->git, pg_git_oid(a))) < 0 ||
	    (gerr = git_tree_lookup(&tb, r->git, pg_git_oid(b))) < 0)
		err = pg_git_fail(gerr, "diff");
	else
		err = diff_trees_paths(paths, n, r, ta, tb, true);
	git_tree_free(tb);
	git_tree_free(ta);
	return err;
}

/* The walk of a diff's lines, and where it stopped. */
typedef struct line_walk {
	pg_repo_line_fn fn;
	void *ctx;
	size_t left;     /* bytes of lines still to hand over */
	bool cut;        /* the budget ran out */
	int stop;        /* fn's nonzero return */
} line_walk;

static int on_diff_line(const git_diff_delta *delta, const git_diff_hunk *hunk,
			const git_diff_line *line, void *payload)
{
	line_walk *w = payload;
	size_t n = line->content_len;
	const char *path = delta->new_file.path ? delta->new_file.path : delta->old_file.path;

	(void)hunk;
	if (line->origin != GIT_DIFF_LINE_ADDITION && line->origin != GIT_DIFF_LINE_DELETION)
		return 0;
	if (n > w->left) {
		w->cut = true;
		return 1;
	}
	w->left -= n;
	if (n && line->content[n - 1] == '\n')
		n--;
	if ((w->stop = w->fn(w->ctx, path ? path : "", line->content, n)) != 0)
		return 1;
	return 0;
}

int pg_repo_diff_lines(pg_repo *r, const pg_oid *from, const pg_oid *to, size_t budget,
		       bool *cut, pg_repo_line_fn fn, void *ctx)
{
	git_diff_options opts;
	git_tree *a = NULL, *b = NULL;
	git_diff *diff = NULL;
	line_walk w = { fn, ctx, budget, false, 0 };
	int gerr, err = 0;

	if ((gerr = git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION)) < 0)
		return pg_git_fail(gerr, "diff");
	opts.context_lines = 0;
	opts.interhunk_lines = 0;
	opts.max_size = budget > INT64_MAX ? INT64_MAX : (git_off_t)budget;
	if ((gerr = commit_tree(&a, r, from)) < 0 || (gerr = commit_tree(&b, r, to)) < 0 ||
	    (gerr = git_diff_tree_to_tree(&diff, r->git, a, b, &opts)) < 0)
		err = pg_git_fail(gerr, "diff");
	else if ((gerr = git_diff_foreach(diff, NULL, NULL, NULL, on_diff_line, &w)) < 0 &&
		 !w.cut && !w.stop)
		err = pg_git_fail(gerr, "diff");
	else
		err = w.stop;
	if (cut)
		*cut = w.cut;
	git_diff_free(diff);
	git_tree_free(b);
	git_tree_free(a);
	return err;
}
