/* tree.c - libgit2 behind the maintainer's tree: fetch, merge with mergetag, worktrees, CAS advance. */
#include "pipeline/tree.h"
#include "common/error.h"
#include "common/fs.h"
#include "repo/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct pg_tree {
	git_repository *git;
	char *path;
	char *branch_ref;
};

int pg_tree_open(pg_tree **out, const char *path, const char *branch)
{
	pg_tree *t = NULL;
	pg_buf ref = PG_BUF_INIT;
	int valid = 0, gerr, err;

	*out = NULL;
	if ((err = pg_repo_lib_init()) < 0)
		return err;
	if (!(t = calloc(1, sizeof(*t)))) {
		err = pg_error_oom();
		goto fail;
	}
	if ((err = pg_buf_printf(&ref, "refs/heads/%s", branch)) < 0)
		goto fail;
	if (git_reference_name_is_valid(&valid, ref.ptr) < 0 || !valid) {
		err = pg_error_set(PG_EINVALID, "'%s' is not a valid branch name", branch);
		goto fail;
	}
	if ((gerr = git_repository_open_ext(&t->git, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) < 0) {
		err = gerr == GIT_ENOTFOUND ?
			pg_error_set(PG_ENOTFOUND, "tree '%s' is not a git repository", path) :
			pg_git_fail(gerr, "tree '%s'", path);
		goto fail;
	}
	if (!(t->path = pg_strdup(path)) || !(t->branch_ref = pg_buf_detach(&ref))) {
		err = PG_ENOMEM;
		goto fail;
	}
	*out = t;
	return 0;
fail:
	pg_buf_release(&ref);
	pg_tree_free(t);
	if (!t)
		git_libgit2_shutdown();
	return err;
}

void pg_tree_free(pg_tree *t)
{
	if (!t)
		return;
	git_repository_free(t->git);
	free(t->path);
	free(t->branch_ref);
	free(t);
	git_libgit2_shutdown();
}

const char *pg_tree_branch(const pg_tree *t)
{
	return t->branch_ref;
}

int pg_tree_head(pg_oid *out, pg_tree *t)
{
	git_oid id;
	int gerr = git_reference_name_to_id(&id, t->git, t->branch_ref);

	if (gerr == GIT_ENOTFOUND)
		return pg_error_set(PG_ENOTFOUND, "integration branch '%s' does not exist in '%s'",
				    t->branch_ref, t->path);
	if (gerr < 0)
		return pg_git_fail(gerr, "'%s'", t->branch_ref);
	pg_oid_from_git(out, &id);
	return 0;
}

int pg_tree_commit_tree(pg_oid *out, pg_tree *t, const pg_oid *commit)
{
	git_commit *c = NULL;
	char hex[PG_OID_HEXSZ + 1];
	int gerr = git_commit_lookup(&c, t->git, pg_git_oid(commit));

	pg_oid_tohex(hex, commit);
	if (gerr == GIT_ENOTFOUND)
		return pg_error_set(PG_ENOTFOUND, "commit %.12s is not in '%s'", hex, t->path);
	if (gerr < 0)
		return pg_git_fail(gerr, "commit %.12s", hex);
	pg_oid_from_git(out, git_commit_tree_id(c));
	git_commit_free(c);
	return 0;
}

/* A path git could hand us that must not be followed out of the worktree. */
static bool unsafe_path(const char *p)
{
	const char *c;

	if (p[0] == '/')
		return true;
	for (c = p; (c = strstr(c, "..")); c += 2)
		if ((c == p || c[-1] == '/') && (c[2] == '/' || c[2] == '\0'))
			return true;
	return false;
}

int pg_tree_touch_changed(pg_tree *t, const char *path, const pg_oid *tree_a,
			  const pg_oid *tree_b, size_t *touched)
{
	git_tree *a = NULL, *b = NULL;
	git_diff *diff = NULL;
	pg_buf full = PG_BUF_INIT;
	size_t i, n;
	int gerr, err = 0;

	*touched = 0;
	if ((gerr = git_tree_lookup(&a, t->git, pg_git_oid(tree_a))) < 0 ||
	    (gerr = git_tree_lookup(&b, t->git, pg_git_oid(tree_b))) < 0 ||
	    (gerr = git_diff_tree_to_tree(&diff, t->git, a, b, NULL)) < 0) {
		err = pg_git_fail(gerr, "comparing the base and the merge");
		goto done;
	}
	n = git_diff_num_deltas(diff);
	for (i = 0; i < n && err == 0; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);

		/* what a has and b changes or removes: the files its build compiled */
		if (d->status == GIT_DELTA_ADDED || unsafe_path(d->old_file.path))
			continue;
		pg_buf_clear(&full);
		if ((err = pg_buf_printf(&full, "%s/%s", path, d->old_file.path)) < 0)
			break;
		if (utimensat(AT_FDCWD, full.ptr, NULL, AT_SYMLINK_NOFOLLOW) == 0)
			(*touched)++;
		else if (errno != ENOENT && errno != ENOTDIR)
			err = pg_error_set(PG_EIO, "touching '%s': %s", full.ptr, strerror(errno));
	}
done:
	git_diff_free(diff);
	git_tree_free(a);
	git_tree_free(b);
	pg_buf_release(&full);
	return err;
}

static bool is_local_dir(const char *location)
{
	return !strstr(location, "://") && pg_is_dir(location);
}

/*
 * Copy the objects reachable from id that the tree lacks, from a local
 * repository: depth first, stopping at every object the tree already has
 * (whatever an object it has reaches, it has too).  libgit2's local fetch
 * packs much more than that for a kernel-sized tree.
 */
typedef struct oid_stack {
	git_oid *v;
	size_t n, alloc;
} oid_stack;

static int push(oid_stack *s, const git_oid *id)
{
	if (s->n == s->alloc) {
		size_t na = s->alloc ? s->alloc * 2 : 256;
		git_oid *grown = realloc(s->v, na * sizeof(*grown));

		if (!grown)
			return pg_error_oom();
		s->v = grown;
		s->alloc = na;
	}
	git_oid_cpy(&s->v[s->n++], id);
	return 0;
}

/* The ids a tag or commit names: "object X", "tree X", "parent X" headers. */
static int push_header_ids(oid_stack *s, const char *data, size_t len)
{
	const char *p = data, *end = data + len;
	int err = 0;

	while (err == 0 && p < end && *p != '\n') {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		git_oid ref;

		if ((l == 47 && !memcmp(p, "object ", 7) && !git_oid_fromstrn(&ref, p + 7, 40)) ||
		    (l == 45 && !memcmp(p, "tree ", 5) && !git_oid_fromstrn(&ref, p + 5, 40)) ||
		    (l == 47 && !memcmp(p, "parent ", 7) && !git_oid_fromstrn(&ref, p + 7, 40)))
			err = push(s, &ref);
		p = nl ? nl + 1 : end;
	}
	return err;
}

/* The ids a tree's entries name ("<mode> <name>\0<20 bytes>"), gitlinks aside. */
static int push_tree_ids(oid_stack *s, const char *data, size_t len)
{
	const char *p = data, *end = data + len;
	int err = 0;

	while (err == 0 && p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		git_oid ref;

		if (!nul || end - nul < 21)
			break;
		/* a gitlink (160000) names a commit of another repository */
		if (strncmp(p, "160000", 6)) {
			git_oid_fromraw(&ref, (const unsigned char *)nul + 1);
			err = push(s, &ref);
		}
		p = nul + 21;
	}
	return err;
}

/*
 * Copy the objects reachable from start that the tree lacks, from a local
 * repository: depth first, stopping at every object the tree already has
 * (whatever an object it has reaches, it has too).  libgit2's local fetch
 * packs far more than that for a kernel-sized tree (minutes, not seconds).
 */
static int import_missing(git_odb *dst, git_odb *src, const git_oid *start)
{
	oid_stack s = { NULL, 0, 0 };
	int gerr = 0, err = push(&s, start);

	while (s.n && err == 0) {
		git_oid id = s.v[--s.n], written;
		git_odb_object *obj = NULL;
		const char *data;
		size_t len;

		if (git_odb_exists(dst, &id))
			continue;
		if ((gerr = git_odb_read(&obj, src, &id)) < 0 ||
		    (gerr = git_odb_write(&written, dst, git_odb_object_data(obj),
					  git_odb_object_size(obj), git_odb_object_type(obj))) < 0) {
			git_odb_object_free(obj);
			err = pg_git_fail(gerr, "copying objects");
			break;
		}
		data = git_odb_object_data(obj);
		len = git_odb_object_size(obj);
		switch (git_odb_object_type(obj)) {
		case GIT_OBJECT_TAG:
		case GIT_OBJECT_COMMIT:
			err = push_header_ids(&s, data, len);
			break;
		case GIT_OBJECT_TREE:
			err = push_tree_ids(&s, data, len);
			break;
		default:
			break;
		}
		git_odb_object_free(obj);
	}
	free(s.v);
	return err;
}

/* For a local repository: resolve the tag there and copy what is missing. */
static int import_local_tag(pg_tree *t, const char *location, const char *name,
			    const char *local_ref, git_oid *got)
{
	git_repository *src = NULL;
	git_odb *src_odb = NULL, *dst_odb = NULL;
	git_reference *ref = NULL;
	pg_buf full = PG_BUF_INIT;
	int gerr, err;

	if ((err = pg_buf_printf(&full, "refs/tags/%s", name)) < 0)
		return err;
	if ((gerr = git_repository_open_ext(&src, location, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) < 0 ||
	    (gerr = git_reference_name_to_id(got, src, full.ptr)) < 0 ||
	    (gerr = git_repository_odb(&src_odb, src)) < 0 ||
	    (gerr = git_repository_odb(&dst_odb, t->git)) < 0) {
		err = pg_git_fail(gerr, "tag '%s' in '%s'", name, location);
		goto done;
	}
	if ((err = import_missing(dst_odb, src_odb, got)) < 0)
		goto done;
	if ((gerr = git_reference_create(&ref, t->git, local_ref, got, 1, "pullgate: fetch")) < 0)
		err = pg_git_fail(gerr, "'%s'", local_ref);
done:
	git_reference_free(ref);
	git_odb_free(dst_odb);
	git_odb_free(src_odb);
	git_repository_free(src);
	pg_buf_release(&full);
	return err;
}

int pg_tree_fetch_tag(pg_tree *t, const char *location, const char *tag, const pg_oid *verified)
{
	git_remote *remote = NULL;
	git_fetch_options opts;
	pg_buf spec = PG_BUF_INIT, local = PG_BUF_INIT;
	const char *name = strncmp(tag, "refs/tags/", 10) ? tag : tag + 10;
	char *specs[1];
	git_strarray arr = { specs, 1 };
	git_oid got;
	int gerr, err;

	if ((err = pg_buf_printf(&local, "refs/pullgate/tags/%s", name)) < 0 ||
	    (err = pg_buf_printf(&spec, "+refs/tags/%s:%s", name, local.ptr)) < 0)
		goto done;
	specs[0] = spec.ptr;
	if (is_local_dir(location)) {
		if ((err = import_local_tag(t, location, name, local.ptr, &got)) < 0)
			goto done;
	} else {
		git_fetch_options_init(&opts, GIT_FETCH_OPTIONS_VERSION);
		opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
		opts.update_fetchhead = 0;
		if ((gerr = git_remote_create_anonymous(&remote, t->git, location)) < 0 ||
		    (gerr = git_remote_fetch(remote, &arr, &opts, NULL)) < 0 ||
		    (gerr = git_reference_name_to_id(&got, t->git, local.ptr)) < 0) {
			err = pg_git_fail(gerr, "fetch tag '%s' from '%s'", name, location);
			goto done;
		}
	}
	if (memcmp(got.id, verified->id, PG_OID_RAWSZ)) {
		char a[PG_OID_HEXSZ + 1], b[PG_OID_HEXSZ + 1];

		pg_oid_tohex(a, verified);
		git_oid_tostr(b, sizeof(b), &got);
		err = pg_error_set(PG_ECONFLICT, "tag '%s' moved since it was verified: %s, now %s",
				   name, a, b);
	}
done:
	git_remote_free(remote);
	pg_buf_release(&spec);
	pg_buf_release(&local);
	return err;
}

void pg_merge_result_init(pg_merge_result *r)
{
	memset(r, 0, sizeof(*r));
	pg_buf_init(&r->message, 0);
}

void pg_merge_result_release(pg_merge_result *r)
{
	size_t i;

	for (i = 0; i < r->nconflicts; i++)
		free(r->conflicts[i]);
	free(r->conflicts);
	pg_buf_release(&r->message);
	pg_merge_result_init(r);
}

static int collect_conflicts(pg_merge_result *out, git_index *index)
{
	git_index_conflict_iterator *it = NULL;
	const git_index_entry *ancestor, *ours, *theirs;
	int gerr, err = 0;

	if ((gerr = git_index_conflict_iterator_new(&it, index)) < 0)
		return pg_git_fail(gerr, "conflicts");
	while ((gerr = git_index_conflict_next(&ancestor, &ours, &theirs, it)) == 0) {
		const git_index_entry *e = ours ? ours : theirs ? theirs : ancestor;
		char **grown = realloc(out->conflicts, (out->nconflicts + 1) * sizeof(*grown));

		if (!grown) {
			err = pg_error_oom();
			break;
		}
		out->conflicts = grown;
		if (!(grown[out->nconflicts] = pg_strdup(e->path))) {
			err = PG_ENOMEM;
			break;
		}
		out->nconflicts++;
	}
	if (err == 0 && gerr != GIT_ITEROVER)
		err = pg_git_fail(gerr, "conflicts");
	git_index_conflict_iterator_free(it);
	out->conflicted = true;
	return err;
}

/* Subjects of the non-merge commits that the merge brings in, newest first. */
static int merged_subjects(char ***out, size_t *n, pg_tree *t, const git_oid *theirs,
			   const git_oid *base)
{
	git_revwalk *walk = NULL;
	git_oid id;
	int gerr, err = 0;

	*out = NULL;
	*n = 0;
	if ((gerr = git_revwalk_new(&walk, t->git)) < 0 ||
	    (gerr = git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME)) < 0 ||
	    (gerr = git_revwalk_push(walk, theirs)) < 0 || (gerr = git_revwalk_hide(walk, base)) < 0) {
		err = pg_git_fail(gerr, "walk");
		goto done;
	}
	while ((gerr = git_revwalk_next(&id, walk)) == 0) {
		git_commit *c = NULL;
		char **grown;

		if ((gerr = git_commit_lookup(&c, t->git, &id)) < 0)
			break;
		if (git_commit_parentcount(c) > 1) {
			git_commit_free(c);
			continue;
		}
		grown = realloc(*out, (*n + 1) * sizeof(*grown));
		if (!grown || !(grown[*n] = pg_strdup(git_commit_summary(c) ?
						    git_commit_summary(c) : ""))) {
			if (grown)
				*out = grown;
			git_commit_free(c);
			err = pg_error_oom();
			goto done;
		}
		*out = grown;
		(*n)++;
		git_commit_free(c);
	}
	if (gerr != GIT_ITEROVER)
		err = pg_git_fail(gerr, "walk");
done:
	git_revwalk_free(walk);
	return err;
}

int pg_tree_merge(pg_merge_result *out, pg_tree *t, const pg_oid *base, const pg_oid *tag,
		  const pg_merge_opts *opts)
{
	git_commit *ours = NULL, *theirs = NULL;
	git_object *peeled = NULL, *tagobj = NULL;
	git_index *index = NULL;
	git_odb *odb = NULL;
	git_odb_object *raw = NULL;
	git_signature *sig = NULL;
	git_buf content = GIT_BUF_INIT;
	git_oid tree_id, commit_id;
	pg_tagobj *parsed = NULL;
	pg_buf tagtext = PG_BUF_INIT;
	char **subjects = NULL;
	size_t nsubjects = 0, i;
	const git_commit *parents[2];
	git_tree *tree = NULL;
	int gerr = 0, err = 0, up;

	pg_merge_result_release(out);
	if ((gerr = git_commit_lookup(&ours, t->git, pg_git_oid(base))) < 0 ||
	    (gerr = git_object_lookup(&tagobj, t->git, pg_git_oid(tag), GIT_OBJECT_TAG)) < 0 ||
	    (gerr = git_object_peel(&peeled, tagobj, GIT_OBJECT_COMMIT)) < 0 ||
	    (gerr = git_commit_lookup(&theirs, t->git, git_object_id(peeled))) < 0) {
		err = pg_git_fail(gerr, "merge");
		goto done;
	}
	up = git_oid_equal(git_commit_id(ours), git_commit_id(theirs)) ? 1 :
	     git_graph_descendant_of(t->git, git_commit_id(ours), git_commit_id(theirs));
	if (up < 0) {
		err = pg_git_fail(up, "merge");
		goto done;
	}
	if (up) {
		out->up_to_date = true;
		goto done;
	}
	if ((gerr = git_merge_commits(&index, t->git, ours, theirs, NULL)) < 0) {
		err = pg_git_fail(gerr, "merge");
		goto done;
	}
	if (git_index_has_conflicts(index)) {
		err = collect_conflicts(out, index);
		goto done;
	}
	if ((gerr = git_index_write_tree_to(&tree_id, index, t->git)) < 0 ||
	    (gerr = git_tree_lookup(&tree, t->git, &tree_id)) < 0) {
		err = pg_git_fail(gerr, "merge: write tree");
		goto done;
	}
	pg_oid_from_git(&out->tree, &tree_id);

	/* the mergetag: the tag object as stored, as `git merge` embeds it */
	if ((gerr = git_repository_odb(&odb, t->git)) < 0 ||
	    (gerr = git_odb_read(&raw, odb, pg_git_oid(tag))) < 0) {
		err = pg_git_fail(gerr, "merge: read tag");
		goto done;
	}
	if ((err = pg_buf_put(&tagtext, git_odb_object_data(raw), git_odb_object_size(raw))) < 0 ||
	    (err = pg_tagobj_parse(&parsed, tagtext.ptr, tagtext.len)) < 0)
		goto done;
	pg_buf_rtrim(&tagtext); /* libgit2 ends the header with the newline itself */

	if ((err = merged_subjects(&subjects, &nsubjects, t, git_commit_id(theirs),
				   git_commit_id(ours))) < 0 ||
	    (err = pg_merge_message(&out->message, opts->tag_name, opts->url, parsed,
				    (const char *const *)subjects, nsubjects)) < 0)
		goto done;
	gerr = opts->time ? git_signature_new(&sig, opts->name, opts->email, opts->time, opts->offset) :
			    git_signature_now(&sig, opts->name, opts->email);
	if (gerr < 0) {
		err = pg_git_fail(gerr, "merge: identity '%s <%s>'", opts->name, opts->email);
		goto done;
	}
	parents[0] = ours;
	parents[1] = theirs;
	if ((gerr = git_commit_create_buffer(&content, t->git, sig, sig, NULL, out->message.ptr,
					     tree, 2, parents)) < 0 ||
	    (gerr = git_commit_create_with_signature(&commit_id, t->git, content.ptr, tagtext.ptr,
						     "mergetag")) < 0) {
		err = pg_git_fail(gerr, "merge: write commit");
		goto done;
	}
	pg_oid_from_git(&out->commit, &commit_id);
done:
	for (i = 0; i < nsubjects; i++)
		free(subjects[i]);
	free(subjects);
	git_buf_dispose(&content);
	git_signature_free(sig);
	git_tree_free(tree);
	git_odb_object_free(raw);
	git_odb_free(odb);
	git_index_free(index);
	git_object_free(peeled);
	git_object_free(tagobj);
	git_commit_free(ours);
	git_commit_free(theirs);
	pg_tagobj_free(parsed);
	pg_buf_release(&tagtext);
	return err;
}

int pg_tree_set_pull_branch(pg_tree *t, const char *name, const pg_oid *commit)
{
	git_reference *ref = NULL;
	pg_buf full = PG_BUF_INIT;
	int gerr, err;

	if ((err = pg_buf_printf(&full, "refs/heads/pullgate/%s", name)) < 0)
		return err;
	gerr = git_reference_create(&ref, t->git, full.ptr, pg_git_oid(commit), 1, "pullgate: merge");
	if (gerr < 0)
		err = pg_git_fail(gerr, "'%s'", full.ptr);
	git_reference_free(ref);
	pg_buf_release(&full);
	return err;
}

/* 1 when a worktree of that name is registered, 0 when not. */
static int worktree_registered(pg_tree *t, const char *name)
{
	git_strarray names = { NULL, 0 };
	size_t i;
	int gerr = git_worktree_list(&names, t->git), found = 0;

	if (gerr < 0)
		return pg_git_fail(gerr, "worktrees");
	for (i = 0; i < names.count; i++)
		if (!strcmp(names.strings[i], name))
			found = 1;
	git_strarray_dispose(&names);
	return found;
}

int pg_tree_remove_worktree(pg_tree *t, const char *name, const char *path)
{
	git_worktree *wt = NULL;
	git_worktree_prune_options popts;
	int gerr;

	/* libgit2's lookup of a missing worktree is not GIT_ENOTFOUND: list first */
	if ((gerr = worktree_registered(t, name)) < 0)
		return gerr;
	if (gerr == 0)
		return pg_remove_tree(path);
	if ((gerr = git_worktree_lookup(&wt, t->git, name)) == 0) {
		git_worktree_prune_options_init(&popts, GIT_WORKTREE_PRUNE_OPTIONS_VERSION);
		popts.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_LOCKED |
			      GIT_WORKTREE_PRUNE_WORKING_TREE;
		gerr = git_worktree_prune(wt, &popts);
		git_worktree_free(wt);
		if (gerr < 0)
			return pg_git_fail(gerr, "worktree '%s'", name);
	} else if (gerr != GIT_ENOTFOUND) {
		return pg_git_fail(gerr, "worktree '%s'", name);
	}
	return pg_remove_tree(path);
}

/* The worktree pullgate builds in; git names it after its directory. */
#define BUILD_WORKTREE "build"

int pg_tree_worktree_checkout(pg_tree *t, const char *name, const char *path,
			      const pg_oid *commit)
{
	git_repository *wt = NULL;
	git_worktree *handle = NULL;
	git_reference *ref = NULL;
	git_worktree_add_options add;
	git_checkout_options co;
	pg_buf full = PG_BUF_INIT;
	int gerr = 0, err, registered;

	if ((err = pg_tree_set_pull_branch(t, name, commit)) < 0 ||
	    (err = pg_buf_printf(&full, "refs/heads/pullgate/%s", name)) < 0 ||
	    (registered = worktree_registered(t, BUILD_WORKTREE)) < 0) {
		err = err < 0 ? err : registered;
		goto done;
	}
	/* a registered worktree whose directory went away is pruned and made again */
	if (registered && git_repository_open(&wt, path) < 0) {
		if ((err = pg_tree_remove_worktree(t, BUILD_WORKTREE, path)) < 0)
			goto done;
		registered = 0;
	}
	if (!registered) {
		if ((err = pg_remove_tree(path)) < 0)
			goto done;
		if ((gerr = git_reference_lookup(&ref, t->git, full.ptr)) < 0)
			goto fail;
		git_worktree_add_options_init(&add, GIT_WORKTREE_ADD_OPTIONS_VERSION);
		add.ref = ref;
		add.checkout_options.checkout_strategy = GIT_CHECKOUT_FORCE;
		if ((gerr = git_worktree_add(&handle, t->git, BUILD_WORKTREE, path, &add)) < 0)
			goto fail;
		goto done; /* checked out as it was made */
	}
	/* the worktree is on the pull's own branch, at commit */
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_REMOVE_UNTRACKED;
	if ((gerr = git_repository_set_head(wt, full.ptr)) < 0 ||
	    (gerr = git_checkout_head(wt, &co)) < 0)
		goto fail;
	goto done;
fail:
	err = pg_git_fail(gerr, "worktree '%s' at '%s'", BUILD_WORKTREE, path);
done:
	git_worktree_free(handle);
	git_reference_free(ref);
	git_repository_free(wt);
	pg_buf_release(&full);
	return err;
}

static int drop_ref(pg_tree *t, const char *name)
{
	git_reference *ref = NULL;
	int gerr = git_reference_lookup(&ref, t->git, name);

	if (gerr == GIT_ENOTFOUND)
		return 0;
	if (gerr == 0)
		gerr = git_reference_delete(ref);
	git_reference_free(ref);
	return gerr < 0 ? pg_git_fail(gerr, "'%s'", name) : 0;
}

int pg_tree_drop_pull_refs(pg_tree *t, const char *name, const char *tag)
{
	pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT;
	const char *short_tag = strncmp(tag, "refs/tags/", 10) ? tag : tag + 10;
	int err;

	if ((err = pg_buf_printf(&a, "refs/heads/pullgate/%s", name)) == 0 &&
	    (err = pg_buf_printf(&b, "refs/pullgate/tags/%s", short_tag)) == 0 &&
	    (err = drop_ref(t, a.ptr)) == 0)
		err = drop_ref(t, b.ptr);
	pg_buf_release(&a);
	pg_buf_release(&b);
	return err;
}

int pg_tree_can_advance(pg_tree *t)
{
	git_reference *head = NULL;
	bool checked_out;

	/* moving the checked-out branch under a working tree would leave it stale */
	checked_out = !git_repository_is_bare(t->git) &&
		      git_reference_lookup(&head, t->git, "HEAD") == 0 &&
		      git_reference_type(head) == GIT_REFERENCE_SYMBOLIC &&
		      !strcmp(git_reference_symbolic_target(head), t->branch_ref);
	git_reference_free(head);
	if (checked_out)
		return pg_error_set(PG_ECONFLICT, "refusing to move '%s': it is checked out in "
				    "'%s'", t->branch_ref, t->path);
	return 0;
}

int pg_tree_advance(pg_tree *t, const pg_oid *expected, const pg_oid *next, const char *reason)
{
	git_reference *ref = NULL;
	int gerr;

	if ((gerr = pg_tree_can_advance(t)) < 0)
		return gerr;
	gerr = git_reference_create_matching(&ref, t->git, t->branch_ref, pg_git_oid(next), 1,
						 pg_git_oid(expected), reason);

	git_reference_free(ref);
	if (gerr == GIT_EMODIFIED || gerr == GIT_ELOCKED)
		return pg_error_set(PG_ECONFLICT, "'%s' moved while the pull was tested; "
				    "nothing was changed", t->branch_ref);
	return gerr < 0 ? pg_git_fail(gerr, "'%s'", t->branch_ref) : 0;
}

int pg_tree_is_ancestor(pg_tree *t, const pg_oid *ancestor, const pg_oid *descendant)
{
	int r;

	if (!pg_oid_cmp(ancestor, descendant))
		return 1;
	r = git_graph_descendant_of(t->git, pg_git_oid(descendant), pg_git_oid(ancestor));
	return r < 0 ? pg_git_fail(r, "ancestry") : r;
}
