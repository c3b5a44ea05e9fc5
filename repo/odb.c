/* odb.c - the object stores libgit2 reads: pack indexes checked before it opens them, loose objects read by pullgate, never by libgit2. */
#include "repo/internal.h"
#include "common/array.h"
#include "common/error.h"
#include "common/fs.h"

#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>

/*
 * libgit2 1.5.1 (Debian 12) loops for ever inflating a loose object whose
 * file is cut short, and reads past a pack index whose fanout lies.  Its
 * default object store opens both kinds of file for whoever asks (a walk,
 * a diff, a peel), so every repository pullgate opens or attaches gets a
 * store built here instead: libgit2's pack reader over indexes checked
 * first, and for loose objects a backend of ours whose reads inflate with
 * pg_loose_read (bounded, every object hashed against its id).  What never
 * inflates (writing, freshening, existence, listing, abbreviated ids) is
 * left to libgit2's own loose backend, held inside ours and never added
 * to a store itself.
 */

/* libgit2's priorities: its packs before its loose objects */
#define PACK_PRIORITY 2
#define LOOSE_PRIORITY 1
/* git's and libgit2's depth for alternates of alternates */
#define ALTERNATES_DEPTH 5

typedef struct loose_backend {
	git_odb_backend parent;
	git_odb_backend *inner; /* libgit2's, for everything but reading */
	char *dir;
} loose_backend;

/* Our failure as libgit2's: its message kept, a missing file a miss (the next backend is asked). */
static int to_git(int err)
{
	git_error_set_str(GIT_ERROR_ODB, pg_error_last());
	pg_error_clear();
	return err == PG_ENOTFOUND ? GIT_ENOTFOUND : GIT_ERROR;
}

static loose_backend *lb_of(git_odb_backend *b)
{
	loose_backend *lb = (loose_backend *)(void *)b;

	lb->inner->odb = b->odb;
	return lb;
}

static int lb_read(void **data, size_t *len, git_object_t *type, git_odb_backend *b,
		   const git_oid *id)
{
	pg_loose o;
	int err;

	if ((err = pg_loose_read(&o, b, lb_of(b)->dir, id, false)) < 0)
		return to_git(err);
	*data = o.data;
	*len = o.size;
	*type = o.type;
	return 0;
}

static int lb_read_header(size_t *len, git_object_t *type, git_odb_backend *b, const git_oid *id)
{
	pg_loose o;
	int err;

	if ((err = pg_loose_read(&o, b, lb_of(b)->dir, id, true)) < 0)
		return to_git(err);
	*len = o.size;
	*type = o.type;
	return 0;
}

/* libgit2's backend finds the one file an abbreviated id names (a listing); ours reads it. */
static int lb_read_prefix(git_oid *out, void **data, size_t *len, git_object_t *type,
			  git_odb_backend *b, const git_oid *short_id, size_t hexlen)
{
	loose_backend *lb = lb_of(b);
	git_oid full;
	int gerr;

	if (hexlen >= GIT_OID_HEXSZ)
		git_oid_cpy(&full, short_id);
	else if ((gerr = lb->inner->exists_prefix(&full, lb->inner, short_id, hexlen)) < 0)
		return gerr;
	if ((gerr = lb_read(data, len, type, b, &full)) == 0)
		git_oid_cpy(out, &full);
	return gerr;
}

static int lb_exists(git_odb_backend *b, const git_oid *id)
{
	loose_backend *lb = lb_of(b);

	return lb->inner->exists(lb->inner, id);
}

static int lb_exists_prefix(git_oid *out, git_odb_backend *b, const git_oid *short_id,
			    size_t hexlen)
{
	loose_backend *lb = lb_of(b);

	return lb->inner->exists_prefix(out, lb->inner, short_id, hexlen);
}

static int lb_write(git_odb_backend *b, const git_oid *id, const void *data, size_t len,
		    git_object_t type)
{
	loose_backend *lb = lb_of(b);

	return lb->inner->write(lb->inner, id, data, len, type);
}

static int lb_writestream(git_odb_stream **out, git_odb_backend *b, git_object_size_t len,
			  git_object_t type)
{
	loose_backend *lb = lb_of(b);

	return lb->inner->writestream(out, lb->inner, len, type);
}

static int lb_freshen(git_odb_backend *b, const git_oid *id)
{
	loose_backend *lb = lb_of(b);

	return lb->inner->freshen(lb->inner, id);
}

static int lb_foreach(git_odb_backend *b, git_odb_foreach_cb cb, void *payload)
{
	loose_backend *lb = lb_of(b);

	return lb->inner->foreach(lb->inner, cb, payload);
}

static void lb_free(git_odb_backend *b)
{
	loose_backend *lb = (loose_backend *)(void *)b;

	if (lb->inner)
		lb->inner->free(lb->inner);
	free(lb->dir);
	free(lb);
}

/*
 * Our loose backend for objdir.  No readstream: libgit2's would inflate
 * unchecked, and none of pullgate's reads streams.
 */
static int loose_backend_new(git_odb_backend **out, const char *objdir)
{
	loose_backend *lb;
	int gerr;

	*out = NULL;
	if (!(lb = calloc(1, sizeof(*lb))) || !(lb->dir = pg_strdup(objdir))) {
		free(lb);
		return pg_error_oom();
	}
	if ((gerr = git_odb_backend_loose(&lb->inner, objdir, -1, 0, 0, 0)) < 0) {
		lb_free(&lb->parent);
		return pg_git_fail(gerr, "objects of '%s'", objdir);
	}
	lb->parent.version = GIT_ODB_BACKEND_VERSION;
	lb->parent.read = lb_read;
	lb->parent.read_header = lb_read_header;
	lb->parent.read_prefix = lb_read_prefix;
	lb->parent.exists = lb_exists;
	lb->parent.exists_prefix = lb_exists_prefix;
	lb->parent.write = lb_write;
	lb->parent.writestream = lb_writestream;
	lb->parent.freshen = lb_freshen;
	lb->parent.foreach = lb_foreach;
	lb->parent.free = lb_free;
	*out = &lb->parent;
	return 0;
}

/* Add b to odb, which then owns it; b is freed when it cannot be added. */
static int add_backend(git_odb *odb, git_odb_backend *b, int priority, unsigned flags,
		       const char *objdir)
{
	int gerr = flags & PG_ODB_ALTERNATE ? git_odb_add_alternate(odb, b, priority) :
		   git_odb_add_backend(odb, b, priority);

	if (gerr < 0) {
		b->free(b);
		return pg_git_fail(gerr, "objects of '%s'", objdir);
	}
	return 0;
}

typedef struct add_ctx {
	git_odb *odb;
	unsigned flags;
	const char *objdir;
} add_ctx;

/* A sender's pack, one backend each: libgit2 never looks for more in the directory. */
static int add_one_pack(void *ctx, const char *idx_path)
{
	add_ctx *a = ctx;
	git_odb_backend *b = NULL;
	int gerr;

	if ((gerr = git_odb_backend_one_pack(&b, idx_path)) < 0)
		return pg_git_fail(gerr, "pack index '%s'", idx_path);
	return add_backend(a->odb, b, PACK_PRIORITY, a->flags, a->objdir);
}

static int add_dir(git_odb *odb, const char *objdir, unsigned flags, int depth, char ***seen,
		   size_t *nseen, size_t *seen_alloc);

/* The directories objdir's info/alternates names, as alternates of odb. */
static int add_alternates(git_odb *odb, const char *objdir, unsigned flags, int depth,
			  char ***seen, size_t *nseen, size_t *seen_alloc)
{
	pg_buf file = PG_BUF_INIT, path = PG_BUF_INIT;
	char *line, *next;
	int err;

	pg_buf_init(&file, (size_t)64 << 10);
	if ((err = pg_buf_printf(&path, "%s/info/alternates", objdir)) < 0)
		goto done;
	if ((err = pg_buf_read_file(&file, path.ptr)) < 0) {
		if (err == PG_ENOTFOUND) {
			pg_error_clear();
			err = 0;
		}
		goto done;
	}
	for (line = file.ptr; line && *line && err == 0; line = next) {
		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		if (!*line || *line == '#')
			continue;
		pg_buf_clear(&path);
		if ((err = (*line == '/' ? pg_buf_puts(&path, line) :
			    pg_buf_printf(&path, "%s/%s", objdir, line))) == 0)
			err = add_dir(odb, path.ptr, flags | PG_ODB_ALTERNATE, depth + 1, seen, nseen,
				      seen_alloc);
	}
done:
	pg_buf_release(&file);
	pg_buf_release(&path);
	return err;
}

static int add_dir(git_odb *odb, const char *objdir, unsigned flags, int depth, char ***seen,
		   size_t *nseen, size_t *seen_alloc)
{
	add_ctx a = { odb, flags, objdir };
	git_odb_backend *b = NULL;
	char *real;
	size_t i;
	int gerr, err;

	if (depth > ALTERNATES_DEPTH || !(real = realpath(objdir, NULL)))
		return 0; /* as libgit2: a directory that is not there has nothing to read */
	for (i = 0; i < *nseen; i++) {
		if (!strcmp((*seen)[i], real)) {
			free(real);
			return 0;
		}
	}
	if ((err = PG_ARRAY_GROW(*seen, *nseen + 1, *seen_alloc)) < 0) {
		free(real);
		return err;
	}
	(*seen)[(*nseen)++] = real;
	if (flags & PG_ODB_UNTRUSTED) {
		if ((err = pg_repo_check_packs(objdir, add_one_pack, &a)) < 0)
			return err;
	} else {
		if ((err = pg_repo_check_packs(objdir, NULL, NULL)) < 0)
			return err;
		if ((gerr = git_odb_backend_pack(&b, objdir)) < 0)
			return pg_git_fail(gerr, "objects of '%s'", objdir);
		if ((err = add_backend(odb, b, PACK_PRIORITY, flags, objdir)) < 0)
			return err;
	}
	if ((err = loose_backend_new(&b, objdir)) < 0 ||
	    (err = add_backend(odb, b, LOOSE_PRIORITY, flags, objdir)) < 0)
		return err;
	if (flags & PG_ODB_OWN_ONLY)
		return 0;
	return add_alternates(odb, objdir, flags, depth, seen, nseen, seen_alloc);
}

int pg_git_odb_add(git_odb *odb, const char *objdir, unsigned flags)
{
	char **seen = NULL;
	size_t nseen = 0, seen_alloc = 0;
	int err = add_dir(odb, objdir, flags, 0, &seen, &nseen, &seen_alloc);

	pg_str_list_free(seen, nseen);
	return err;
}

int pg_git_odb_setup(git_repository *git, unsigned flags)
{
	git_odb *odb = NULL;
	pg_buf objects = PG_BUF_INIT;
	int gerr, err;

	if ((err = pg_buf_printf(&objects, "%sobjects", git_repository_commondir(git))) < 0)
		goto done;
	if ((gerr = git_odb_new(&odb)) < 0) {
		err = pg_git_fail(gerr, "objects of '%s'", objects.ptr);
		goto done;
	}
	if ((err = pg_git_odb_add(odb, objects.ptr, flags & ~PG_ODB_ALTERNATE)) < 0)
		goto done;
	if ((gerr = git_repository_set_odb(git, odb)) < 0)
		err = pg_git_fail(gerr, "objects of '%s'", objects.ptr);
done:
	git_odb_free(odb);
	pg_buf_release(&objects);
	return err;
}
