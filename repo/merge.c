/* merge.c - merge two commits' trees in memory, count a conflict's hunks, and write a commit with an extra header. */
#include "repo/internal.h"
#include "common/array.h"
#include "common/error.h"

/* Called with each conflict of an index: 0 goes on, non-zero stops and is returned. */
typedef int (*conflict_fn)(void *ctx, const git_index_entry *ancestor,
			   const git_index_entry *ours, const git_index_entry *theirs);

static int each_conflict(git_index *index, conflict_fn fn, void *ctx)
{
	git_index_conflict_iterator *it = NULL;
	const git_index_entry *ancestor, *ours, *theirs;
	int gerr, err = 0;

	if ((gerr = git_index_conflict_iterator_new(&it, index)) < 0)
		return pg_git_fail(gerr, "conflicts");
	while ((gerr = git_index_conflict_next(&ancestor, &ours, &theirs, it)) == 0)
		if ((err = fn(ctx, ancestor, ours, theirs)) != 0)
			break;
	if (err == 0 && gerr != GIT_ITEROVER)
		err = pg_git_fail(gerr, "conflicts");
	git_index_conflict_iterator_free(it);
	return err;
}

/* The path a conflict is named by: ours, else theirs (deleted on our side), else the ancestor's. */
static const char *conflict_path(const git_index_entry *ancestor, const git_index_entry *ours,
				 const git_index_entry *theirs)
{
	return (ours ? ours : theirs ? theirs : ancestor)->path;
}

typedef struct path_list {
	char **list;
	size_t n, alloc;
} path_list;

static int add_path(void *ctx, const git_index_entry *ancestor, const git_index_entry *ours,
		    const git_index_entry *theirs)
{
	path_list *l = ctx;
	int err;

	if ((err = PG_ARRAY_GROW(l->list, l->n + 1, l->alloc)) < 0)
		return err;
	if (!(l->list[l->n] = pg_strdup(conflict_path(ancestor, ours, theirs))))
		return PG_ENOMEM;
	l->n++;
	return 0;
}

static int collect_conflicts(char ***out, size_t *n, git_index *index)
{
	path_list l = { NULL, 0, 0 };
	int err = each_conflict(index, add_path, &l);

	if (err < 0) {
		pg_str_list_free(l.list, l.n);
		return err;
	}
	*out = l.list;
	*n = l.n;
	return 0;
}

/* git merge's index of theirs merged into ours, in memory; free with git_index_free. */
static int merge_index(git_index **index, pg_repo *r, const pg_oid *ours, const pg_oid *theirs)
{
	git_commit *a = NULL, *b = NULL;
	int gerr;

	*index = NULL;
	if ((gerr = git_commit_lookup(&a, r->git, pg_git_oid(ours))) == 0 &&
	    (gerr = git_commit_lookup(&b, r->git, pg_git_oid(theirs))) == 0)
		gerr = git_merge_commits(index, r->git, a, b, NULL);
	git_commit_free(b);
	git_commit_free(a);
	return gerr < 0 ? pg_git_fail(gerr, "merge") : 0;
}

int pg_repo_merge_trees(pg_oid *tree, char ***conflicts, size_t *nconflicts, pg_repo *r,
			const pg_oid *ours, const pg_oid *theirs)
{
	git_index *index = NULL;
	git_oid id;
	int gerr, err = 0;

	*conflicts = NULL;
	*nconflicts = 0;
	if ((err = merge_index(&index, r, ours, theirs)) < 0)
		goto done;
	if (git_index_has_conflicts(index)) {
		err = collect_conflicts(conflicts, nconflicts, index);
		goto done;
	}
	if ((gerr = git_index_write_tree_to(&id, index, r->git)) < 0) {
		err = pg_git_fail(gerr, "merge: write tree");
		goto done;
	}
	pg_oid_from_git(tree, &id);
done:
	git_index_free(index);
	return err;
}

/* --- conflicts with their hunks --------------------------------------------------- */

void pg_conflict_list_init(pg_conflict_list *l)
{
	memset(l, 0, sizeof(*l));
}

void pg_conflict_list_release(pg_conflict_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->items[i].path);
	free(l->items);
	pg_conflict_list_init(l);
}

/* A regular file's mode (not a link, a submodule or a directory). */
static bool is_file(const git_index_entry *e)
{
	return e->mode == GIT_FILEMODE_BLOB || e->mode == GIT_FILEMODE_BLOB_EXECUTABLE;
}

/* git's buffer_is_binary: a NUL byte among the first 8000. */
static bool is_binary(const pg_buf *b)
{
	return memchr(b->ptr, '\0', b->len < 8000 ? b->len : 8000) != NULL;
}

/* The longest run of '<' that opens a line of b. */
static size_t longest_open_run(const pg_buf *b)
{
	const char *p = b->ptr, *end = b->ptr + b->len;
	size_t best = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t run = 0;

		while (p + run < end && p[run] == '<')
			run++;
		if (run > best)
			best = run;
		p = nl ? nl + 1 : end;
	}
	return best;
}

/* The lines of text that are conflict markers of marker '<': the conflict regions. */
static unsigned count_regions(const char *text, size_t len, size_t marker)
{
	const char *p = text, *end = text + len;
	unsigned n = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t run = 0;

		while (p + run < end && p[run] == '<')
			run++;
		if (run == marker && (p + run == end || p[run] == ' ' || p[run] == '\n'))
			n++;
		p = nl ? nl + 1 : end;
	}
	return n;
}

/* A side's blob, read through the checked object store (repo/read.c), capped. */
static int read_side(pg_buf *out, git_merge_file_input *in, pg_repo *r,
		     const git_index_entry *e)
{
	enum pg_object_type type = PG_OBJ_NONE;
	pg_oid id;
	int err;

	pg_oid_from_git(&id, &e->id);
	if ((err = pg_repo_read_raw(out, &type, r, &id)) < 0)
		return err;
	if (type != PG_OBJ_BLOB)
		return pg_error_set(PG_EINVALID, "conflict '%s': its entry is a %s, not a blob",
				    e->path, pg_object_type_name(type));
	in->ptr = out->ptr;
	in->size = out->len;
	in->path = e->path;
	in->mode = e->mode;
	return 0;
}

/*
 * The conflict regions of a text conflict: the three sides merged as git
 * merge-file does, its markers counted.  The sides are the pull's text, so
 * the markers are made longer than any run of '<' that opens one of their
 * lines: a line of the file never counts as a marker.  0 for a conflict
 * that is not textual: a side deleted, a link or submodule, a binary file,
 * a file past PG_CONFLICT_FILE_MAX.
 */
static int count_hunks(unsigned *hunks, pg_repo *r, const git_index_entry *ancestor,
		       const git_index_entry *ours, const git_index_entry *theirs)
{
	git_merge_file_input in[3];
	git_merge_file_options opts;
	git_merge_file_result res;
	const git_index_entry *e[3] = { ancestor, ours, theirs };
	pg_buf text[3];
	size_t i, run, marker = 7;
	int gerr, err = 0;

	*hunks = 0;
	memset(&res, 0, sizeof(res));
	git_merge_file_options_init(&opts, GIT_MERGE_FILE_OPTIONS_VERSION);
	for (i = 0; i < 3; i++) {
		git_merge_file_input_init(&in[i], GIT_MERGE_FILE_INPUT_VERSION);
		pg_buf_init(&text[i], PG_CONFLICT_FILE_MAX);
	}
	if (!ours || !theirs || !is_file(ours) || !is_file(theirs) ||
	    (ancestor && !is_file(ancestor)))
		goto done;
	for (i = 0; i < 3; i++) {
		if (!e[i])
			continue; /* added on both sides: merged against nothing */
		if ((err = read_side(&text[i], &in[i], r, e[i])) < 0) {
			if (err == PG_ETOOBIG) {
				pg_error_clear();
				err = 0;
			}
			goto done;
		}
		if (is_binary(&text[i]))
			goto done;
		if ((run = longest_open_run(&text[i])) >= marker)
			marker = run + 1;
	}
	if (marker > PG_CONFLICT_MARKER_MAX)
		goto done;
	opts.marker_size = (unsigned short)marker;
	/* fixed labels: libgit2 would write the path after each marker, and a path is the pull's */
	opts.ancestor_label = "base";
	opts.our_label = "ours";
	opts.their_label = "theirs";
	if ((gerr = git_merge_file(&res, ancestor ? &in[0] : NULL, &in[1], &in[2], &opts)) < 0) {
		err = pg_git_fail(gerr, "merging '%s'", ours->path);
		goto done;
	}
	if (!res.automergeable && res.ptr)
		*hunks = count_regions(res.ptr, res.len, marker);
done:
	git_merge_file_result_free(&res);
	for (i = 0; i < 3; i++)
		pg_buf_release(&text[i]);
	return err;
}

typedef struct conflict_walk {
	pg_repo *r;
	pg_conflict_list *l;
	size_t max, alloc;
} conflict_walk;

static int add_conflict(void *ctx, const git_index_entry *ancestor, const git_index_entry *ours,
			const git_index_entry *theirs)
{
	conflict_walk *w = ctx;
	pg_conflict *c;
	int err;

	if (w->l->n >= w->max) {
		w->l->more++;
		return 0;
	}
	if ((err = PG_ARRAY_GROW(w->l->items, w->l->n + 1, w->alloc)) < 0)
		return err;
	c = &w->l->items[w->l->n];
	memset(c, 0, sizeof(*c));
	if (!(c->path = pg_strdup(conflict_path(ancestor, ours, theirs))))
		return PG_ENOMEM;
	w->l->n++;
	return count_hunks(&c->hunks, w->r, ancestor, ours, theirs);
}

int pg_repo_merge_conflicts(pg_conflict_list *out, pg_repo *r, const pg_oid *ours,
			    const pg_oid *theirs, size_t max)
{
	git_index *index = NULL;
	conflict_walk w = { r, out, max, 0 };
	int err;

	pg_conflict_list_release(out);
	if ((err = merge_index(&index, r, ours, theirs)) == 0 && git_index_has_conflicts(index))
		err = each_conflict(index, add_conflict, &w);
	git_index_free(index);
	if (err < 0)
		pg_conflict_list_release(out);
	return err;
}

/* The commit's text as libgit2 would write it, without the extra header. */
static int commit_buffer(git_buf *out, pg_repo *r, const pg_new_commit *c)
{
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_commit **parents = NULL;
	size_t i;
	int gerr = 0;

	if (!(parents = calloc(c->nparents + 1, sizeof(*parents))))
		return pg_error_oom();
	gerr = c->time ? git_signature_new(&sig, c->name, c->email, c->time, c->offset) :
			 git_signature_now(&sig, c->name, c->email);
	if (gerr < 0) {
		gerr = pg_git_fail(gerr, "identity '%s <%s>'", c->name, c->email);
		goto done;
	}
	for (i = 0; i < c->nparents && gerr == 0; i++)
		gerr = git_commit_lookup(&parents[i], r->git, pg_git_oid(&c->parents[i]));
	if (gerr < 0 || (gerr = git_tree_lookup(&tree, r->git, pg_git_oid(c->tree))) < 0 ||
	    (gerr = git_commit_create_buffer(out, r->git, sig, sig, NULL, c->message, tree,
					     c->nparents, (const git_commit **)parents)) < 0)
		gerr = pg_git_fail(gerr, "write commit");
done:
	for (i = 0; i < c->nparents; i++)
		git_commit_free(parents[i]);
	free(parents);
	git_tree_free(tree);
	git_signature_free(sig);
	return gerr;
}

int pg_repo_commit_write(pg_oid *out, pg_repo *r, const pg_new_commit *c)
{
	git_buf content = GIT_BUF_INIT;
	git_odb *odb = NULL;
	git_oid id;
	int gerr, err;

	if ((err = commit_buffer(&content, r, c)) < 0)
		goto done;
	if (c->header)
		gerr = git_commit_create_with_signature(&id, r->git, content.ptr, c->header_value,
							c->header);
	else if ((gerr = git_repository_odb(&odb, r->git)) == 0)
		gerr = git_odb_write(&id, odb, content.ptr, content.size, GIT_OBJECT_COMMIT);
	if (gerr < 0) {
		err = pg_git_fail(gerr, "write commit");
		goto done;
	}
	pg_oid_from_git(out, &id);
done:
	git_odb_free(odb);
	git_buf_dispose(&content);
	return err;
}
