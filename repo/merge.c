/* merge.c - merge two commits' trees in memory, count a conflict's hunks, apply a resolution made by hand, and write a commit with an extra header. */
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

/* --- a resolution recorded by hand ------------------------------------------------ */

/* One conflict: its three index entries, copied (an absent side has path NULL). */
typedef struct side {
	char *path;
	uint32_t mode;
	git_oid id;
} side;

typedef struct triple {
	side s[3]; /* ancestor, ours, theirs */
} triple;

typedef struct triple_list {
	triple *items;
	size_t n, alloc;
} triple_list;

static void triples_release(triple_list *l)
{
	size_t i, k;

	for (i = 0; i < l->n; i++)
		for (k = 0; k < 3; k++)
			free(l->items[i].s[k].path);
	free(l->items);
	memset(l, 0, sizeof(*l));
}

static int add_triple(void *ctx, const git_index_entry *ancestor, const git_index_entry *ours,
		      const git_index_entry *theirs)
{
	const git_index_entry *e[3] = { ancestor, ours, theirs };
	triple_list *l = ctx;
	triple *t;
	size_t k;
	int err;

	if ((err = PG_ARRAY_GROW(l->items, l->n + 1, l->alloc)) < 0)
		return err;
	t = &l->items[l->n++];
	memset(t, 0, sizeof(*t));
	for (k = 0; k < 3; k++) {
		if (!e[k])
			continue;
		if (!(t->s[k].path = pg_strdup(e[k]->path)))
			return PG_ENOMEM;
		t->s[k].mode = e[k]->mode;
		t->s[k].id = e[k]->id;
	}
	return 0;
}

/* The same side: path, mode and blob; of the ancestor only its path (see find_triple). */
static bool same_side(const side *a, const side *b, bool content)
{
	if (!a->path || !b->path)
		return a->path == b->path;
	if (strcmp(a->path, b->path))
		return false;
	return !content || (a->mode == b->mode && git_oid_equal(&a->id, &b->id));
}

/*
 * The conflict of l that is t: ours and theirs the same versions, as git
 * rerere keys a resolution on the two sides it settled.  The ancestor's
 * version is not compared: with several merge bases it is a virtual one,
 * which differs with the order the bases are found in, and what the
 * maintainer settled is the two sides whatever their ancestor.
 */
static const triple *find_triple(const triple_list *l, const triple *t)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (same_side(&l->items[i].s[0], &t->s[0], false) &&
		    same_side(&l->items[i].s[1], &t->s[1], true) &&
		    same_side(&l->items[i].s[2], &t->s[2], true))
			return &l->items[i];
	return NULL;
}

static const char *triple_path(const triple *t)
{
	return t->s[1].path ? t->s[1].path : t->s[2].path ? t->s[2].path : t->s[0].path;
}

/*
 * Path p of the index takes the resolution's version: its conflict
 * entries go, and the tree's entry (if it has one) comes in at stage 0,
 * in place of whatever the merge put below p (a directory/file conflict
 * leaves the other side's files there, unconflicted).  A directory there
 * in the resolution would be a resolution of another shape than the
 * conflict's: it does not apply.
 */
static int take_path(pg_buf *why, git_index *index, git_tree *resolved, const char *p)
{
	git_tree_entry *te = NULL;
	git_index_entry e;
	git_object_t type;
	int gerr;

	if ((gerr = git_index_conflict_remove(index, p)) < 0 && gerr != GIT_ENOTFOUND)
		return pg_git_fail(gerr, "resolution: '%s'", p);
	if ((gerr = git_tree_entry_bypath(&te, resolved, p)) == GIT_ENOTFOUND)
		return 1; /* resolved by removing it */
	if (gerr < 0)
		return pg_git_fail(gerr, "resolution: '%s'", p);
	type = git_tree_entry_type(te);
	if (type == GIT_OBJECT_BLOB || type == GIT_OBJECT_COMMIT) {
		if ((gerr = git_index_remove_directory(index, p, 0)) < 0) {
			git_tree_entry_free(te);
			return pg_git_fail(gerr, "resolution: '%s'", p);
		}
	} else {
		const char *name = git_object_type2string(type);

		git_tree_entry_free(te);
		return pg_buf_printf(why, "it holds a %s at '%s', where the merge conflicts on a file",
				     name, p) < 0 ? PG_ENOMEM : 0;
	}
	memset(&e, 0, sizeof(e));
	e.mode = git_tree_entry_filemode(te);
	e.id = *git_tree_entry_id(te);
	e.path = p;
	gerr = git_index_add(index, &e);
	git_tree_entry_free(te);
	return gerr < 0 ? pg_git_fail(gerr, "resolution: '%s'", p) : 1;
}

/* Every path a conflict of l names, each side's (a path named twice is taken twice, alike). */
static int take_paths(pg_buf *why, git_index *index, git_tree *resolved, const triple_list *l)
{
	size_t i, k;
	int err;

	for (i = 0; i < l->n; i++)
		for (k = 0; k < 3; k++)
			if (l->items[i].s[k].path &&
			    (err = take_path(why, index, resolved, l->items[i].s[k].path)) <= 0)
				return err;
	return 1;
}

/* Whether a and b hold the same at path: both nothing, or the same type, mode and object. */
static int same_at(bool *same, git_tree *a, git_tree *b, const char *path)
{
	git_tree_entry *x = NULL, *y = NULL;
	int gx = git_tree_entry_bypath(&x, a, path), gy = git_tree_entry_bypath(&y, b, path);

	if ((gx < 0 && gx != GIT_ENOTFOUND) || (gy < 0 && gy != GIT_ENOTFOUND)) {
		git_tree_entry_free(x);
		git_tree_entry_free(y);
		return pg_git_fail(gx < 0 && gx != GIT_ENOTFOUND ? gx : gy, "resolution: '%s'", path);
	}
	*same = (!x && !y) || (x && y && git_tree_entry_filemode(x) == git_tree_entry_filemode(y) &&
			       git_oid_equal(git_tree_entry_id(x), git_tree_entry_id(y)));
	git_tree_entry_free(x);
	git_tree_entry_free(y);
	return 0;
}

/*
 * The tree written holds, at every path a conflict named, exactly what the
 * resolution holds there: what is published is what the maintainer
 * resolved, or it does not apply (1, or 0 with why).
 */
static int as_resolved(pg_buf *why, pg_repo *r, const git_oid *written, git_tree *resolved,
		       const triple_list *l)
{
	git_tree *t = NULL;
	size_t i, k;
	bool same = true;
	int gerr, err = 0;

	if ((gerr = git_tree_lookup(&t, r->git, written)) < 0)
		return pg_git_fail(gerr, "resolution: the tree written");
	for (i = 0; i < l->n && same && err == 0; i++)
		for (k = 0; k < 3 && same && err == 0; k++)
			if (l->items[i].s[k].path &&
			    (err = same_at(&same, t, resolved, l->items[i].s[k].path)) == 0 && !same)
				err = pg_buf_printf(why, "the merge cannot hold '%s' as it resolved it",
						    l->items[i].s[k].path) < 0 ? PG_ENOMEM : 0;
	git_tree_free(t);
	return err < 0 ? err : same;
}

int pg_repo_merge_resolved(pg_oid *tree, pg_buf *why, pg_repo *r, const pg_oid *ours,
			   const pg_oid *theirs, const pg_oid *resolution)
{
	git_index *index = NULL, *recorded = NULL;
	git_commit *res = NULL;
	git_tree *resolved = NULL;
	triple_list mine = { NULL, 0, 0 }, its = { NULL, 0, 0 };
	git_oid id;
	size_t i;
	int gerr, err;

	if ((gerr = git_commit_lookup(&res, r->git, pg_git_oid(resolution))) < 0) {
		err = pg_git_fail(gerr, "resolution");
		goto done;
	}
	if (git_commit_parentcount(res) != 2 ||
	    !git_oid_equal(git_commit_parent_id(res, 1), pg_git_oid(theirs))) {
		err = pg_buf_puts(why, "it is not a merge of the pull as its second parent") < 0 ?
		      PG_ENOMEM : 0;
		goto done;
	}
	if ((err = merge_index(&index, r, ours, theirs)) < 0 ||
	    (err = each_conflict(index, add_triple, &mine)) < 0)
		goto done;
	if (!mine.n) {
		err = pg_buf_puts(why, "the merge does not conflict") < 0 ? PG_ENOMEM : 0;
		goto done;
	}
	{
		pg_oid first;

		pg_oid_from_git(&first, git_commit_parent_id(res, 0));
		if ((err = merge_index(&recorded, r, &first, theirs)) < 0 ||
		    (err = each_conflict(recorded, add_triple, &its)) < 0)
			goto done;
	}
	/* each conflict here must be one the resolution's own merge had, side for side */
	for (i = 0; i < mine.n; i++)
		if (!find_triple(&its, &mine.items[i])) {
			err = pg_buf_printf(why, "it was made where '%s' conflicted otherwise",
					    triple_path(&mine.items[i])) < 0 ? PG_ENOMEM : 0;
			goto done;
		}
	if ((gerr = git_commit_tree(&resolved, res)) < 0) {
		err = pg_git_fail(gerr, "resolution: its tree");
		goto done;
	}
	if ((err = take_paths(why, index, resolved, &mine)) <= 0)
		goto done;
	if (git_index_has_conflicts(index)) {
		err = pg_buf_puts(why, "conflicts remain after it") < 0 ? PG_ENOMEM : 0;
		goto done;
	}
	if ((gerr = git_index_write_tree_to(&id, index, r->git)) < 0) {
		err = pg_git_fail(gerr, "resolution: write tree");
		goto done;
	}
	if ((err = as_resolved(why, r, &id, resolved, &mine)) <= 0)
		goto done;
	pg_oid_from_git(tree, &id);
	err = 1;
done:
	triples_release(&mine);
	triples_release(&its);
	git_tree_free(resolved);
	git_commit_free(res);
	git_index_free(recorded);
	git_index_free(index);
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
