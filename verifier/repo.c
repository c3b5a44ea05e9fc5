/* repo.c - libgit2 behind pullgate's own types: object cache, fetch, reads and walks. */
#include "verifier/repo.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/git.h"
#include "common/map.h"


struct pg_repo {
	git_repository *git;
	pg_map attached; /* locations already attached as alternates */
	char **attached_keys;
	size_t nattached;
};

int pg_repo_open_cache(pg_repo **out, const char *home)
{
	pg_repo *r = NULL;
	pg_buf path = PG_BUF_INIT;
	int err, gerr;

	*out = NULL;
	if ((err = pg_git_init()) < 0)
		return err;
	if (!(r = calloc(1, sizeof(*r)))) {
		err = pg_error_oom();
		goto done;
	}
	if ((err = pg_buf_printf(&path, "%s/repos", home)) < 0 || (err = pg_mkdir_p(path.ptr)) < 0)
		goto done;
	if ((err = pg_buf_puts(&path, "/cache.git")) < 0)
		goto done;
	gerr = git_repository_open_bare(&r->git, path.ptr);
	if (gerr == GIT_ENOTFOUND)
		gerr = git_repository_init(&r->git, path.ptr, 1);
	if (gerr < 0) {
		err = pg_git_fail(gerr, "cache '%s'", path.ptr);
		goto done;
	}
	*out = r;
	r = NULL;
done:
	if (r)
		pg_repo_free(r);
	else if (err < 0)
		git_libgit2_shutdown();
	pg_buf_release(&path);
	return err;
}

void pg_repo_free(pg_repo *r)
{
	size_t i;

	if (!r)
		return;
	git_repository_free(r->git);
	for (i = 0; i < r->nattached; i++)
		free(r->attached_keys[i]);
	free(r->attached_keys);
	pg_map_release(&r->attached);
	free(r);
	git_libgit2_shutdown();
}

static bool is_local(const char *location)
{
	const char *colon = strchr(location, ':'), *slash = strchr(location, '/');
	if (!strncmp(location, "file://", 7))
		return true;
	if (strstr(location, "://"))
		return false;
	/* scp-like "[user@]host:path" is remote unless a directory of that name exists */
	if (colon && (!slash || colon < slash))
		return pg_is_dir(location);
	return true;
}

static int full_ref_name(pg_buf *out, enum pg_ref_kind kind, const char *name)
{
	int valid = 0;

	if (kind == PG_REF_TAG)
		pg_buf_printf(out, "%s%s", strncmp(name, "refs/tags/", 10) ? "refs/tags/" : "", name);
	else if (!name)
		pg_buf_puts(out, "HEAD");
	else
		pg_buf_printf(out, "%s%s", strncmp(name, "refs/heads/", 11) ? "refs/heads/" : "", name);
	if (!out->len)
		return pg_error_oom();
	if (strcmp(out->ptr, "HEAD") &&
	    (git_reference_name_is_valid(&valid, out->ptr) < 0 || !valid))
		return pg_error_set(PG_EINVALID, "'%s' is not a valid %s name", name,
				    kind == PG_REF_TAG ? "tag" : "branch");
	return 0;
}

bool pg_repo_refname_valid(const char *full_ref)
{
	int valid = 0;

	return git_reference_name_is_valid(&valid, full_ref) == 0 && valid;
}

static int attach_local(pg_repo *r, git_repository **src_out, const char *location)
{
	const char *path = strncmp(location, "file://", 7) ? location : location + 7;
	git_repository *src = NULL;
	git_odb *odb = NULL;
	pg_buf objects = PG_BUF_INIT;
	char *key = NULL, **grown;
	int gerr, err = 0;

	gerr = git_repository_open_ext(&src, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL);
	if (gerr < 0) {
		err = pg_git_fail(gerr, "repository '%s'", location);
		goto done;
	}
	if ((err = pg_buf_printf(&objects, "%sobjects", git_repository_commondir(src))) < 0)
		goto done;
	if (!pg_map_gets(&r->attached, objects.ptr)) {
		if ((gerr = git_repository_odb(&odb, r->git)) < 0 ||
		    (gerr = git_odb_add_disk_alternate(odb, objects.ptr)) < 0) {
			err = pg_git_fail(gerr, "repository '%s'", location);
			goto done;
		}
		grown = realloc(r->attached_keys, (r->nattached + 1) * sizeof(*grown));
		if (!grown || !(key = pg_buf_detach(&objects))) {
			err = pg_error_oom();
			goto done;
		}
		r->attached_keys = grown;
		r->attached_keys[r->nattached++] = key;
		if ((err = pg_map_sets(&r->attached, key, key)) < 0)
			goto done;
	}
	*src_out = src;
	src = NULL;
done:
	git_odb_free(odb);
	git_repository_free(src);
	pg_buf_release(&objects);
	return err;
}

/* The object a ref points at, following symbolic refs; where names the repository. */
static int lookup_target(pg_oid *out, git_repository *git, const char *name, const char *full,
			 const char *where)
{
	git_reference *ref = NULL, *resolved = NULL;
	int gerr = git_reference_lookup(&ref, git, name), err = 0;

	if (gerr == 0)
		gerr = git_reference_resolve(&resolved, ref);
	if (gerr < 0)
		err = gerr == GIT_ENOTFOUND ?
			pg_error_set(PG_ENOTFOUND, "'%s' not found in '%s'", full, where) :
			pg_git_fail(gerr, "'%s' in '%s'", full, where);
	else
		pg_oid_from_git(out, git_reference_target(resolved));
	git_reference_free(resolved);
	git_reference_free(ref);
	return err;
}

static int resolve_local(pg_oid *out, pg_repo *r, const char *location, const char *full)
{
	git_repository *src = NULL;
	int err;

	if ((err = attach_local(r, &src, location)) < 0)
		return err;
	err = lookup_target(out, src, full, full, location);
	git_repository_free(src);
	return err;
}

static int resolve_remote(pg_oid *out, pg_repo *r, const char *url, const char *full)
{
	git_remote *remote = NULL;
	git_fetch_options opts;
	pg_buf spec = PG_BUF_INIT, local = PG_BUF_INIT;
	char *specs[1];
	git_strarray arr = { specs, 1 };
	int gerr, err;

	if ((err = pg_buf_printf(&local, "refs/pullgate/%016llx/%s",
				 (unsigned long long)pg_hash_bytes(url, strlen(url)), full)) < 0 ||
	    (err = pg_buf_printf(&spec, "+%s:%s", full, local.ptr)) < 0)
		goto done;
	specs[0] = spec.ptr;
	git_fetch_options_init(&opts, GIT_FETCH_OPTIONS_VERSION);
	opts.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	opts.prune = GIT_FETCH_NO_PRUNE;
	opts.update_fetchhead = 0;
	if ((gerr = git_remote_create_anonymous(&remote, r->git, url)) < 0 ||
	    (gerr = git_remote_fetch(remote, &arr, &opts, NULL)) < 0) {
		err = pg_git_fail(gerr, "fetch '%s' from '%s'", full, url);
		goto done;
	}
	err = lookup_target(out, r->git, local.ptr, full, url);
done:
	git_remote_free(remote);
	pg_buf_release(&spec);
	pg_buf_release(&local);
	return err;
}

int pg_repo_resolve(pg_oid *out, char **full_ref, pg_repo *r, const char *location,
		    enum pg_ref_kind kind, const char *name)
{
	pg_buf full = PG_BUF_INIT;
	int err;

	if ((err = full_ref_name(&full, kind, name)) < 0)
		goto done;
	if (is_local(location))
		err = resolve_local(out, r, location, full.ptr);
	else
		err = resolve_remote(out, r, location, full.ptr);
	if (err == 0 && full_ref && !(*full_ref = pg_buf_detach(&full)))
		err = PG_ENOMEM;
done:
	pg_buf_release(&full);
	return err;
}

static enum pg_object_type from_git_type(git_object_t t)
{
	switch (t) {
	case GIT_OBJECT_COMMIT: return PG_OBJ_COMMIT;
	case GIT_OBJECT_TREE: return PG_OBJ_TREE;
	case GIT_OBJECT_BLOB: return PG_OBJ_BLOB;
	case GIT_OBJECT_TAG: return PG_OBJ_TAG;
	default: return PG_OBJ_NONE;
	}
}

const char *pg_object_type_name(enum pg_object_type t)
{
	static const char *const names[] = { "none", "commit", "tree", "blob", "tag" };

	return (unsigned)t < PG_ARRAY_SIZE(names) ? names[t] : "unknown";
}

int pg_repo_object_type(enum pg_object_type *out, pg_repo *r, const pg_oid *id)
{
	git_odb *odb = NULL;
	git_object_t type;
	size_t len;
	int gerr;

	if ((gerr = git_repository_odb(&odb, r->git)) == 0)
		gerr = git_odb_read_header(&len, &type, odb, pg_git_oid(id));
	git_odb_free(odb);
	if (gerr < 0) {
		char hex[PG_OID_HEXSZ + 1];

		pg_oid_tohex(hex, id);
		return pg_git_fail(gerr, "object %s", hex);
	}
	*out = from_git_type(type);
	return 0;
}

int pg_repo_read_raw(pg_buf *out, enum pg_object_type *type, pg_repo *r, const pg_oid *id)
{
	git_odb *odb = NULL;
	git_odb_object *obj = NULL;
	char hex[PG_OID_HEXSZ + 1];
	int gerr, err = 0;

	if ((gerr = git_repository_odb(&odb, r->git)) == 0)
		gerr = git_odb_read(&obj, odb, pg_git_oid(id));
	if (gerr < 0) {
		pg_oid_tohex(hex, id);
		err = gerr == GIT_ENOTFOUND ?
			pg_error_set(PG_ENOTFOUND, "object %s not found", hex) :
			pg_git_fail(gerr, "object %s", hex);
		goto done;
	}
	if (type)
		*type = from_git_type(git_odb_object_type(obj));
	if ((err = pg_buf_put(out, git_odb_object_data(obj), git_odb_object_size(obj))) < 0) {
		pg_oid_tohex(hex, id);
		err = pg_error_wrap(err, "object %s", hex);
	}
done:
	git_odb_object_free(obj);
	git_odb_free(odb);
	return err;
}

static int read_typed(pg_buf *raw, pg_repo *r, const pg_oid *id, enum pg_object_type want)
{
	enum pg_object_type type = PG_OBJ_NONE;
	char hex[PG_OID_HEXSZ + 1];
	int err;

	if ((err = pg_repo_read_raw(raw, &type, r, id)) < 0)
		return err;
	if (type != want) {
		pg_oid_tohex(hex, id);
		return pg_error_set(PG_EINVALID, "object %s is a %s, not a %s", hex,
				    pg_object_type_name(type), pg_object_type_name(want));
	}
	return 0;
}

int pg_repo_read_commit(pg_commit **out, pg_repo *r, const pg_oid *id)
{
	pg_buf raw = PG_BUF_INIT;
	int err;

	if ((err = read_typed(&raw, r, id, PG_OBJ_COMMIT)) == 0)
		err = pg_commit_parse(out, id, raw.ptr, raw.len);
	pg_buf_release(&raw);
	return err;
}

int pg_repo_read_tag(pg_tagobj **out, pg_repo *r, const pg_oid *id)
{
	pg_buf raw = PG_BUF_INIT;
	int err;

	if ((err = read_typed(&raw, r, id, PG_OBJ_TAG)) == 0)
		err = pg_tagobj_parse(out, raw.ptr, raw.len);
	pg_buf_release(&raw);
	return err;
}

/*
 * libgit2's walk stops at a commit it cannot parse without naming it.  Find
 * that commit with our own lenient parser (bounded) and name it in the
 * error; otherwise keep the original error.
 */
#define DIAGNOSE_MAX 100000

static int name_unparseable(pg_repo *r, const pg_oid *tip, int err)
{
	pg_oid *queue = NULL;
	pg_map seen = PG_MAP_INIT;
	size_t head = 0, tail = 0, i;
	char hex[PG_OID_HEXSZ + 1], saved[512];

	snprintf(saved, sizeof(saved), "%s", pg_error_last());
	if (!(queue = malloc(DIAGNOSE_MAX * sizeof(*queue))))
		return err;
	queue[tail++] = *tip;
	while (head < tail) {
		pg_oid id = queue[head++];
		git_commit *gc = NULL;
		pg_commit *c = NULL;

		if (git_commit_lookup(&gc, r->git, pg_git_oid(&id)) < 0) {
			const git_error *e = git_error_last();

			pg_oid_tohex(hex, &id);
			err = pg_error_set(PG_EINVALID, "commit %s is malformed: %s", hex,
					   e && e->message ? e->message : "cannot be parsed");
			goto done;
		}
		git_commit_free(gc);
		if (pg_repo_read_commit(&c, r, &id) < 0)
			continue;
		/* the walk's quick parser insists on a committer with an e-mail and a date */
		if (!c->committer.email[0] || !c->committer.time) {
			pg_oid_tohex(hex, &id);
			err = pg_error_set(PG_EINVALID, "commit %s is malformed: its committer "
					   "line has no e-mail or no date", hex);
			pg_commit_free(c);
			goto done;
		}
		for (i = 0; i < c->nparents && tail < DIAGNOSE_MAX; i++) {
			if (pg_map_get(&seen, c->parents[i].id, PG_OID_RAWSZ))
				continue;
			queue[tail] = c->parents[i];
			if (pg_map_set(&seen, queue[tail].id, PG_OID_RAWSZ, &queue[tail]) < 0)
				break;
			tail++;
		}
		pg_commit_free(c);
	}
	pg_error_set(err, "%s", saved);
done:
	pg_map_release(&seen);
	free(queue);
	return err;
}

int pg_repo_walk_range(pg_oid **out, size_t *n, pg_repo *r, const pg_oid *tip,
		       const pg_oid *hide, size_t nhide)
{
	git_revwalk *walk = NULL;
	git_oid id;
	pg_oid *list = NULL;
	size_t count = 0, alloc = 0, i;
	int gerr, err = 0;

	*out = NULL;
	*n = 0;
	if ((gerr = git_revwalk_new(&walk, r->git)) < 0 ||
	    (gerr = git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_REVERSE)) < 0 ||
	    (gerr = git_revwalk_push(walk, pg_git_oid(tip))) < 0) {
		err = name_unparseable(r, tip, pg_git_fail(gerr, "walk"));
		goto done;
	}
	for (i = 0; i < nhide; i++) {
		if ((gerr = git_revwalk_hide(walk, pg_git_oid(&hide[i]))) < 0) {
			err = name_unparseable(r, &hide[i], pg_git_fail(gerr, "walk"));
			goto done;
		}
	}
	while ((gerr = git_revwalk_next(&id, walk)) == 0) {
		if (count == alloc) {
			pg_oid *grown;

			alloc = alloc ? alloc * 2 : 64;
			if (!(grown = realloc(list, alloc * sizeof(*list)))) {
				err = pg_error_oom();
				goto done;
			}
			list = grown;
		}
		pg_oid_from_git(&list[count++], &id);
	}
	if (gerr != GIT_ITEROVER) {
		err = name_unparseable(r, tip, pg_git_fail(gerr, "walk"));
		goto done;
	}
	*out = list;
	*n = count;
	list = NULL;
done:
	free(list);
	git_revwalk_free(walk);
	return err;
}

/* A binary max-heap of commits by committer time, for the date-ordered walk. */
typedef struct heap_item {
	int64_t time;
	pg_oid id;
} heap_item;

typedef struct heap {
	heap_item *items;
	size_t len, alloc;
} heap;

static int heap_push(heap *h, int64_t t, const pg_oid *id)
{
	size_t i;

	if (h->len == h->alloc) {
		size_t na = h->alloc ? h->alloc * 2 : 64;
		heap_item *grown = realloc(h->items, na * sizeof(*grown));

		if (!grown)
			return pg_error_oom();
		h->items = grown;
		h->alloc = na;
	}
	i = h->len++;
	while (i > 0 && h->items[(i - 1) / 2].time < t) {
		h->items[i] = h->items[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->items[i].time = t;
	h->items[i].id = *id;
	return 0;
}

static heap_item heap_pop(heap *h)
{
	heap_item top = h->items[0], last = h->items[--h->len];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->len)
			break;
		if (c + 1 < h->len && h->items[c + 1].time > h->items[c].time)
			c++;
		if (h->items[c].time <= last.time)
			break;
		h->items[i] = h->items[c];
		i = c;
	}
	if (h->len)
		h->items[i] = last;
	return top;
}

/* Commits visited past the date line before the walk gives up, as git's slop. */
#define SINCE_SLOP 16

/* Stable storage for the ids the walk's seen-map points into. */
#define ARENA_CHUNK 1024

typedef struct oid_arena {
	pg_oid **chunks;
	size_t nchunks, used;
} oid_arena;

static pg_oid *arena_add(oid_arena *a, const git_oid *id)
{
	pg_oid *slot;

	if (a->used == a->nchunks * ARENA_CHUNK) {
		pg_oid **grown = realloc(a->chunks, (a->nchunks + 1) * sizeof(*grown));

		if (!grown)
			return NULL;
		a->chunks = grown;
		if (!(a->chunks[a->nchunks] = malloc(ARENA_CHUNK * sizeof(pg_oid))))
			return NULL;
		a->nchunks++;
	}
	slot = &a->chunks[a->used / ARENA_CHUNK][a->used % ARENA_CHUNK];
	a->used++;
	pg_oid_from_git(slot, id);
	return slot;
}

static void arena_release(oid_arena *a)
{
	while (a->nchunks)
		free(a->chunks[--a->nchunks]);
	free(a->chunks);
}

/* Queue a commit for the date-ordered walk unless it was queued before. */
static int walk_enqueue(pg_repo *r, heap *h, pg_map *seen, oid_arena *arena,
			const git_oid *id)
{
	git_commit *c = NULL;
	pg_oid *slot;
	int gerr, err;

	if (pg_map_get(seen, id->id, PG_OID_RAWSZ))
		return 0;
	if (!(slot = arena_add(arena, id)))
		return pg_error_oom();
	if ((err = pg_map_set(seen, slot->id, PG_OID_RAWSZ, slot)) < 0)
		return err;
	if ((gerr = git_commit_lookup(&c, r->git, id)) < 0)
		return pg_git_fail(gerr, "walk");
	err = heap_push(h, git_commit_time(c), slot);
	git_commit_free(c);
	return err;
}

int pg_repo_walk_since(pg_repo *r, const pg_oid *tip, int64_t since, size_t max,
		       pg_repo_visit_fn fn, void *ctx)
{
	heap h = { NULL, 0, 0 };
	pg_map seen = PG_MAP_INIT;
	oid_arena arena = { NULL, 0, 0 };
	size_t visited = 0, slop = SINCE_SLOP;
	int gerr, err;

	err = walk_enqueue(r, &h, &seen, &arena, pg_git_oid(tip));
	while (err == 0 && h.len && visited < max) {
		heap_item it = heap_pop(&h);
		git_commit *c = NULL;
		pg_oid first;
		unsigned i, np;

		if (it.time < since && --slop == 0)
			break;
		if ((gerr = git_commit_lookup(&c, r->git, pg_git_oid(&it.id))) < 0) {
			err = pg_git_fail(gerr, "walk");
			break;
		}
		np = git_commit_parentcount(c);
		if (np)
			pg_oid_from_git(&first, git_commit_parent_id(c, 0));
		for (i = 0; i < np && err == 0; i++)
			err = walk_enqueue(r, &h, &seen, &arena, git_commit_parent_id(c, i));
		git_commit_free(c);
		if (err)
			break;
		visited++;
		err = fn(ctx, &it.id, it.time, np ? &first : NULL);
	}
	arena_release(&arena);
	free(h.items);
	pg_map_release(&seen);
	return err;
}

int pg_repo_patch_id(pg_oid *out, pg_repo *r, const pg_commit *c)
{
	git_tree *old_tree = NULL, *new_tree = NULL;
	git_commit *parent = NULL;
	git_diff *diff = NULL;
	git_oid pid;
	int gerr;

	if (c->nparents > 1)
		return pg_error_set(PG_EINVALID, "a merge has no patch id");
	if (c->nparents == 1) {
		gerr = git_commit_lookup(&parent, r->git, pg_git_oid(&c->parents[0]));
		if (gerr == 0)
			gerr = git_commit_tree(&old_tree, parent);
		if (gerr < 0)
			goto fail;
	}
	if ((gerr = git_tree_lookup(&new_tree, r->git, pg_git_oid(&c->tree))) < 0 ||
	    (gerr = git_diff_tree_to_tree(&diff, r->git, old_tree, new_tree, NULL)) < 0 ||
	    (gerr = git_diff_patchid(&pid, diff, NULL)) < 0)
		goto fail;
	pg_oid_from_git(out, &pid);
	git_diff_free(diff);
	git_tree_free(new_tree);
	git_tree_free(old_tree);
	git_commit_free(parent);
	return 0;
fail:
	git_diff_free(diff);
	git_tree_free(new_tree);
	git_tree_free(old_tree);
	git_commit_free(parent);
	return pg_git_fail(gerr, "patch id");
}

int pg_repo_is_ancestor(pg_repo *r, const pg_oid *ancestor, const pg_oid *descendant)
{
	int gerr;

	if (!pg_oid_cmp(ancestor, descendant))
		return 1;
	gerr = git_graph_descendant_of(r->git, pg_git_oid(descendant), pg_git_oid(ancestor));
	if (gerr < 0)
		return pg_git_fail(gerr, "ancestry");
	return gerr;
}

int pg_repo_merge_base(pg_oid *out, pg_repo *r, const pg_oid *a, const pg_oid *b)
{
	git_oid base;
	int gerr = git_merge_base(&base, r->git, pg_git_oid(a), pg_git_oid(b));

	if (gerr == GIT_ENOTFOUND)
		return pg_error_set(PG_ENOTFOUND, "no common ancestor");
	if (gerr < 0)
		return pg_git_fail(gerr, "merge base");
	pg_oid_from_git(out, &base);
	return 0;
}

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

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void pg_repo_paths_free(char **paths, size_t n)
{
	while (n)
		free(paths[--n]);
	free(paths);
}

int pg_repo_diff_paths(char ***paths, size_t *n, pg_repo *r, const pg_oid *from,
		       const pg_oid *to)
{
	git_tree *old_tree = NULL, *new_tree = NULL;
	git_diff *diff = NULL;
	char **list = NULL;
	size_t i, count = 0, ndeltas, uniq;
	int gerr, err = 0;

	*paths = NULL;
	*n = 0;
	if ((gerr = commit_tree(&old_tree, r, from)) < 0 ||
	    (gerr = commit_tree(&new_tree, r, to)) < 0 ||
	    (gerr = git_diff_tree_to_tree(&diff, r->git, old_tree, new_tree, NULL)) < 0) {
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
		const char *names[2] = { d->old_file.path, d->new_file.path };
		size_t k;

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
	pg_repo_paths_free(list, count);
	git_diff_free(diff);
	git_tree_free(new_tree);
	git_tree_free(old_tree);
	return err;
}

int pg_repo_resolve_prefix(pg_oid *out, pg_repo *r, const char *hex, size_t len)
{
	git_object *obj = NULL;
	git_oid prefix;
	int gerr;

	if (len < 4 || len > PG_OID_HEXSZ)
		return pg_error_set(PG_EINVALID, "'%.*s' is not an abbreviated id",
				    (int)(len > 64 ? 64 : len), hex);
	if (git_oid_fromstrn(&prefix, hex, len) < 0)
		return pg_error_set(PG_EINVALID, "'%.*s' is not hex", (int)len, hex);
	gerr = git_object_lookup_prefix(&obj, r->git, &prefix, len, GIT_OBJECT_COMMIT);
	if (gerr == GIT_ENOTFOUND)
		return pg_error_set(PG_ENOTFOUND, "no commit %.*s", (int)len, hex);
	if (gerr == GIT_EAMBIGUOUS)
		return pg_error_set(PG_EINVALID, "%.*s is ambiguous", (int)len, hex);
	if (gerr < 0)
		return pg_git_fail(gerr, "commit %.*s", (int)len, hex);
	pg_oid_from_git(out, git_object_id(obj));
	git_object_free(obj);
	return 0;
}
