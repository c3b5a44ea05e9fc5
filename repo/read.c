/* read.c - objects by id: their type, raw bytes, parsed commits and tags, abbreviated ids. */
#include "repo/internal.h"
#include "common/error.h"
#include "common/fs.h"

#include <limits.h>
#include <sys/stat.h>

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

/* Is dir's loose file for hex, when there is one, a regular file? */
static int loose_file_ok(const char *dir, const char *hex)
{
	char path[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(path, sizeof(path), "%s/%.2s/%s", dir, hex, hex + 2) >= sizeof(path) ||
	    stat(path, &st) < 0 || S_ISREG(st.st_mode))
		return 0;
	return pg_error_set(PG_EINVALID, "loose object '%s' is %s, not a regular file", path,
			    pg_file_kind(st.st_mode));
}

int pg_repo_loose_check(pg_repo *r, const pg_oid *id)
{
	char hex[PG_OID_HEXSZ + 1];
	pg_buf own = PG_BUF_INIT;
	size_t i;
	int err;

	pg_oid_tohex(hex, id);
	if ((err = pg_buf_printf(&own, "%sobjects", git_repository_commondir(r->git))) == 0)
		err = loose_file_ok(own.ptr, hex);
	pg_buf_release(&own);
	for (i = 0; err == 0 && i < r->nattached; i++)
		err = loose_file_ok(r->attached_keys[i], hex);
	return err;
}

/*
 * libgit2's failure to read object hex as ours.  The object stores' loose
 * reader (odb.c) says "object X in 'dir' is damaged: ...": kept as it is.
 */
static int object_fail(int gerr, const char *hex)
{
	const git_error *e = git_error_last();

	if (gerr != GIT_ENOTFOUND && e && e->message && !strncmp(e->message, "object ", 7) &&
	    !strncmp(e->message + 7, hex, PG_OID_HEXSZ))
		return pg_error_set(PG_EINVALID, "%s", e->message);
	return pg_git_fail(gerr, "object %s", hex);
}

int pg_repo_object_type(enum pg_object_type *out, pg_repo *r, const pg_oid *id)
{
	git_odb *odb = NULL;
	git_object_t type;
	size_t len;
	int gerr, err;

	if ((err = pg_repo_loose_check(r, id)) < 0)
		return err;
	if ((gerr = git_repository_odb(&odb, r->git)) == 0)
		gerr = git_odb_read_header(&len, &type, odb, pg_git_oid(id));
	git_odb_free(odb);
	if (gerr < 0) {
		char hex[PG_OID_HEXSZ + 1];

		pg_oid_tohex(hex, id);
		return object_fail(gerr, hex);
	}
	*out = from_git_type(type);
	return 0;
}

/*
 * The object id of r, from libgit2 (which hashes it); a commit is asked of
 * the untrusted directories first (pg_git_read_commit).  Free with
 * git_odb_object_free.
 */
static int odb_read(git_odb_object **obj, pg_repo *r, const pg_oid *id, bool commit)
{
	git_odb *odb = NULL;
	char hex[PG_OID_HEXSZ + 1];
	int gerr, err;

	*obj = NULL;
	if ((err = pg_repo_loose_check(r, id)) < 0)
		return err;
	if ((gerr = git_repository_odb(&odb, r->git)) == 0)
		gerr = commit ? pg_git_read_commit(obj, r, odb, id) :
		       git_odb_read(obj, odb, pg_git_oid(id));
	git_odb_free(odb);
	if (gerr == 0)
		return 0;
	pg_oid_tohex(hex, id);
	return gerr == GIT_ENOTFOUND ? pg_error_set(PG_ENOTFOUND, "object %s not found", hex) :
	       object_fail(gerr, hex);
}

/*
 * libgit2 asks every pack of every attached directory before any loose
 * object (it orders its backends by kind), so a pull's loose commit was
 * found only after a miss in the upstream's pack index: a binary search of
 * a 100 MiB file, most of the libgit2 time of a verify at 1M commits.  The
 * untrusted directories (the pulls') get an odb of their own packs and
 * loose objects, without their alternates, asked first for commits.
 */
int pg_git_add_untrusted(pg_repo *r, const char *objects)
{
	int gerr;

	if (!r->untrusted && (gerr = git_odb_new(&r->untrusted)) < 0)
		return pg_git_fail(gerr, "objects of '%s'", objects);
	return pg_git_odb_add(r->untrusted, objects, PG_ODB_UNTRUSTED | PG_ODB_OWN_ONLY);
}

int pg_git_read_commit(git_odb_object **obj, pg_repo *r, git_odb *odb, const pg_oid *id)
{
	int gerr;

	if (r->untrusted) {
		gerr = git_odb_read(obj, r->untrusted, pg_git_oid(id));
		if (gerr != GIT_ENOTFOUND)
			return gerr;
		git_error_clear();
	}
	return git_odb_read(obj, odb, pg_git_oid(id));
}

int pg_repo_read_raw(pg_buf *out, enum pg_object_type *type, pg_repo *r, const pg_oid *id)
{
	git_odb_object *obj = NULL;
	char hex[PG_OID_HEXSZ + 1];
	int err;

	if ((err = odb_read(&obj, r, id, false)) < 0)
		return err;
	if (type)
		*type = from_git_type(git_odb_object_type(obj));
	if ((err = pg_buf_put(out, git_odb_object_data(obj), git_odb_object_size(obj))) < 0) {
		pg_oid_tohex(hex, id);
		err = pg_error_wrap(err, "object %s", hex);
	}
	git_odb_object_free(obj);
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

/*
 * Commits are read by the thousand (the upstream side, the date window):
 * from a trusted pack with the repository's zlib stream (pack.c), else
 * parsed straight from libgit2's buffer, without a copy.
 */
int pg_repo_commit_bytes(const char **data, size_t *len, git_odb_object **obj, pg_repo *r,
			 const pg_oid *id)
{
	char hex[PG_OID_HEXSZ + 1];
	int err;

	*obj = NULL;
	if ((err = pg_repo_pack_commit(data, len, r, id)) != 0)
		return err < 0 ? err : 0;
	if ((err = odb_read(obj, r, id, true)) < 0)
		return err;
	if (git_odb_object_type(*obj) != GIT_OBJECT_COMMIT) {
		pg_oid_tohex(hex, id);
		return pg_error_set(PG_EINVALID, "object %s is a %s, not a commit", hex,
				    pg_object_type_name(from_git_type(git_odb_object_type(*obj))));
	}
	*data = git_odb_object_data(*obj);
	*len = git_odb_object_size(*obj);
	return 0;
}

int pg_repo_read_commit_raw(pg_buf *out, pg_repo *r, const pg_oid *id)
{
	git_odb_object *obj = NULL;
	char hex[PG_OID_HEXSZ + 1];
	const char *data;
	size_t len;
	int err;

	if ((err = pg_repo_commit_bytes(&data, &len, &obj, r, id)) == 0 &&
	    (err = pg_buf_put(out, data, len)) < 0) {
		pg_oid_tohex(hex, id);
		err = pg_error_wrap(err, "object %s", hex);
	}
	git_odb_object_free(obj);
	return err;
}

int pg_repo_read_commit(pg_commit **out, pg_repo *r, const pg_oid *id)
{
	git_odb_object *obj = NULL;
	const char *data;
	size_t len;
	int err;

	*out = NULL;
	if ((err = pg_repo_commit_bytes(&data, &len, &obj, r, id)) == 0)
		err = pg_commit_parse(out, id, data, len);
	git_odb_object_free(obj);
	return err;
}

int pg_repo_loc_by_id(const void *a, const void *b, void *ids)
{
	const pg_pack_loc *x = a, *y = b;

	return pg_oid_cmp(&((const pg_oid *)ids)[x->i], &((const pg_oid *)ids)[y->i]);
}

static int by_place(const void *a, const void *b)
{
	const pg_pack_loc *x = a, *y = b;

	if (x->pack != y->pack)
		return x->pack < y->pack ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* The byte d of loc's place: the offset's 8 (d 0 to 7), then the pack's 4. */
static unsigned place_byte(const pg_pack_loc *loc, unsigned d)
{
	return (unsigned)((d < 8 ? loc->off >> (8 * d) : (uint64_t)loc->pack >> (8 * (d - 8))) &
			  255);
}

/*
 * locs sorted by pack and offset (by_place), a byte at a time from the
 * last (a byte all of them share is skipped): qsort's calls of by_place
 * were a twentieth of a first index's time.  qsort when there is no room
 * for the copy a pass sorts into.
 */
static void sort_by_place(pg_pack_loc *locs, size_t n)
{
	size_t (*count)[256] = calloc(12, sizeof(*count));
	pg_pack_loc *tmp = malloc(n * sizeof(*tmp)), *from = locs, *to = tmp, *t;
	unsigned d;
	size_t k, sum;

	if (!count || !tmp) {
		free(count);
		free(tmp);
		qsort(locs, n, sizeof(*locs), by_place);
		return;
	}
	for (k = 0; k < n; k++)
		for (d = 0; d < 12; d++)
			count[d][place_byte(&locs[k], d)]++;
	for (d = 0; d < 12; d++) {
		if (count[d][place_byte(&locs[0], d)] == n)
			continue;
		for (k = 0, sum = 0; k < 256; k++) {
			size_t c = count[d][k];

			count[d][k] = sum;
			sum += c;
		}
		for (k = 0; k < n; k++)
			to[count[d][place_byte(&from[k], d)]++] = from[k];
		t = from;
		from = to;
		to = t;
	}
	if (from != locs)
		memcpy(locs, from, n * sizeof(*locs));
	free(tmp);
	free(count);
}

int pg_repo_read_located(pg_repo *r, const pg_oid *ids, pg_pack_loc *locs, size_t n,
			 pg_repo_commit_bytes_fn fn, void *ctx)
{
	const char *data;
	size_t k, len;
	bool ran;
	int err = 0;

	/* by pack and offset: the packs read in order (the ones in none last) */
	for (k = 0; k < n; k++)
		if (!locs[k].off)
			locs[k].pack = UINT32_MAX;
	sort_by_place(locs, n);
	/* other threads inflating ahead (read_ahead.c), or this one alone */
	if ((err = pg_repo_read_ahead(&ran, r, ids, locs, n, fn, ctx)) != 0 || ran)
		return err < 0 ? err : 0;
	for (k = 0; k < n && err == 0; k++) {
		const pg_oid *id = &ids[locs[k].i];
		git_odb_object *obj = NULL;

		/* in the packs' order the ids are read all over their array: asked for ahead */
		if (k + 16 < n)
			PG_PREFETCH(&ids[locs[k + 16].i]);

		err = locs[k].off ? pg_repo_pack_commit_at(&data, &len, r, &locs[k], id) : 0;
		if (err == 0)
			err = pg_repo_commit_bytes(&data, &len, &obj, r, id);
		else if (err == 1)
			err = 0;
		if (err == 0)
			err = fn(ctx, locs[k].i, id, data, len);
		git_odb_object_free(obj);
	}
	return err < 0 ? err : 0;
}

int pg_repo_read_commits_raw(pg_repo *r, const pg_oid *ids, size_t n,
			     pg_repo_commit_bytes_fn fn, void *ctx)
{
	pg_pack_loc *locs = NULL;
	size_t k;
	int err = 0;

	if (!n)
		return 0;
	if (n > UINT32_MAX || !(locs = malloc(n * sizeof(*locs))))
		return pg_error_oom();
	for (k = 0; k < n; k++)
		locs[k].i = (uint32_t)k;
	/* a first index's ids come in the commit-graph's order, which is theirs */
	for (k = 1; k < n && pg_oid_cmp(&ids[k - 1], &ids[k]) <= 0; k++)
		;
	if (k < n)
		qsort_r(locs, n, sizeof(*locs), pg_repo_loc_by_id, (void *)ids);
	if ((err = pg_repo_pack_locate(locs, n, r, ids)) == 0)
		err = pg_repo_read_located(r, ids, locs, n, fn, ctx);
	free(locs);
	return err < 0 ? err : 0;
}

/* pg_repo_read_commits' fn, given each commit parsed */
typedef struct parsed_fn {
	pg_repo_commit_fn fn;
	void *ctx;
} parsed_fn;

static int parse_one(void *ctx, size_t i, const pg_oid *id, const char *data, size_t len)
{
	parsed_fn *p = ctx;
	pg_commit *c = NULL;
	int err;

	if ((err = pg_commit_parse(&c, id, data, len)) == 0)
		err = p->fn(p->ctx, i, c);
	pg_commit_free(c);
	return err;
}

int pg_repo_read_commits(pg_repo *r, const pg_oid *ids, size_t n, pg_repo_commit_fn fn,
			 void *ctx)
{
	parsed_fn p = { fn, ctx };

	return pg_repo_read_commits_raw(r, ids, n, parse_one, &p);
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

int pg_repo_peel_commit(pg_oid *out, pg_repo *r, const pg_oid *id)
{
	git_object *obj = NULL, *peeled = NULL;
	char hex[PG_OID_HEXSZ + 1];
	int gerr;

	if ((gerr = git_object_lookup(&obj, r->git, pg_git_oid(id), GIT_OBJECT_ANY)) == 0 &&
	    (gerr = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT)) == 0)
		pg_oid_from_git(out, git_object_id(peeled));
	git_object_free(peeled);
	git_object_free(obj);
	if (gerr < 0) {
		pg_oid_tohex(hex, id);
		return pg_git_fail(gerr, "peeling %.12s to a commit", hex);
	}
	return 0;
}

int pg_repo_commit_tree(pg_oid *out, pg_repo *r, const pg_oid *commit)
{
	git_commit *c = NULL;
	char hex[PG_OID_HEXSZ + 1];
	int gerr = git_commit_lookup(&c, r->git, pg_git_oid(commit));

	pg_oid_tohex(hex, commit);
	if (gerr == GIT_ENOTFOUND)
		return pg_error_set(PG_ENOTFOUND, "commit %.12s is not in '%s'", hex, r->path);
	if (gerr < 0)
		return pg_git_fail(gerr, "commit %.12s", hex);
	pg_oid_from_git(out, git_commit_tree_id(c));
	git_commit_free(c);
	return 0;
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

/* The tree entry at path in tree (*out freed by the caller); PG_ENOTFOUND when none. */
static int tree_entry(git_tree_entry **out, git_tree **root, pg_repo *r, const pg_oid *tree,
		      const char *path)
{
	int gerr;

	*out = NULL;
	if ((gerr = git_tree_lookup(root, r->git, pg_git_oid(tree))) < 0)
		return pg_git_fail(gerr, "tree");
	gerr = git_tree_entry_bypath(out, *root, path);
	if (gerr == GIT_ENOTFOUND)
		return pg_error_set(PG_ENOTFOUND, "no '%s' in the tree", path);
	return gerr < 0 ? pg_git_fail(gerr, "'%s'", path) : 0;
}

int pg_repo_tree_read_file(pg_buf *out, pg_repo *r, const pg_oid *tree, const char *path)
{
	git_tree *root = NULL;
	git_tree_entry *e = NULL;
	pg_oid id;
	int err;

	if ((err = tree_entry(&e, &root, r, tree, path)) == 0) {
		if (git_tree_entry_type(e) != GIT_OBJECT_BLOB) {
			err = pg_error_set(PG_ENOTFOUND, "'%s' is not a file", path);
		} else {
			pg_oid_from_git(&id, git_tree_entry_id(e));
			err = pg_repo_read_raw(out, NULL, r, &id);
		}
	}
	git_tree_entry_free(e);
	git_tree_free(root);
	return err;
}

int pg_repo_tree_entry_type(enum pg_object_type *out, pg_repo *r, const pg_oid *tree,
			    const char *path)
{
	git_tree *root = NULL;
	git_tree_entry *e = NULL;
	int err;

	*out = PG_OBJ_NONE;
	err = tree_entry(&e, &root, r, tree, path);
	if (err == 0)
		*out = from_git_type(git_tree_entry_type(e));
	else if (e == NULL && root != NULL && err == PG_ENOTFOUND) {
		pg_error_clear();
		err = 0;
	}
	git_tree_entry_free(e);
	git_tree_free(root);
	return err;
}

int pg_repo_tree_list_files(char ***names, size_t *n, pg_repo *r, const pg_oid *tree,
			    const char *dir)
{
	git_tree *root = NULL, *sub = NULL;
	git_tree_entry *e = NULL;
	const git_tree *t;
	char **list = NULL;
	size_t i, count = 0, total;
	int gerr, err = 0;

	*names = NULL;
	*n = 0;
	if (*dir) {
		if ((err = tree_entry(&e, &root, r, tree, dir)) < 0)
			goto done;
		if (git_tree_entry_type(e) != GIT_OBJECT_TREE) {
			err = pg_error_set(PG_ENOTFOUND, "'%s' is not a directory", dir);
			goto done;
		}
		if ((gerr = git_tree_lookup(&sub, r->git, git_tree_entry_id(e))) < 0) {
			err = pg_git_fail(gerr, "'%s'", dir);
			goto done;
		}
		t = sub;
	} else {
		if ((gerr = git_tree_lookup(&root, r->git, pg_git_oid(tree))) < 0) {
			err = pg_git_fail(gerr, "tree");
			goto done;
		}
		t = root;
	}
	total = git_tree_entrycount(t);
	if (!(list = calloc(total + 1, sizeof(*list)))) {
		err = pg_error_oom();
		goto done;
	}
	for (i = 0; i < total; i++) {
		const git_tree_entry *te = git_tree_entry_byindex(t, i);

		if (git_tree_entry_type(te) != GIT_OBJECT_BLOB)
			continue;
		if (!(list[count] = pg_strdup(git_tree_entry_name(te)))) {
			err = PG_ENOMEM;
			goto done;
		}
		count++;
	}
	*names = list;
	*n = count;
	list = NULL;
	count = 0;
done:
	pg_str_list_free(list, count);
	git_tree_entry_free(e);
	git_tree_free(sub);
	git_tree_free(root);
	return err;
}
