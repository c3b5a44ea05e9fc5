/* pack.c - commits read straight from a trusted repository's packs: one zlib stream, no copy, no hash. */
#include "repo/internal.h"
#include "common/array.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"

#include <dirent.h>
#include <limits.h>
#include <zlib.h>

/*
 * The upstream side and the date window read commits by the thousand.
 * libgit2 starts a zlib stream for each object (its setup costs as much as
 * the inflating), copies, caches and hashes it.  Here a commit stored whole
 * (not as a delta) in a pack of a trusted object directory (the same
 * directories whose commit-graphs are trusted: pg_repo_trust_graph) is
 * inflated with one stream kept for the repository.  The object is not
 * hashed, as git does not hash what it reads: the directory is trusted, and
 * an untrusted one (the pull's) is always read through libgit2, which
 * checks every object against its id.  Anything unusual (a delta, a loose
 * object, a damaged index or pack, a commit past 1 MiB) is left to libgit2:
 * every read is bounds-checked, and a fault only means "not here".
 */

#define IDX_HEADER 8
#define IDX_FANOUT (256 * 4)
#define COMMIT_MAX ((size_t)1 << 20)

typedef struct pack {
	unsigned char *idx, *data;  /* both mapped */
	size_t idx_len, data_len;
	uint32_t n;
	const unsigned char *fanout, *ids, *offsets, *large;
	size_t nlarge;
} pack;

struct pg_packs {
	pack *v;
	size_t n, alloc;
	z_stream z;
	bool z_ready;
	unsigned char *out;       /* the last commit inflated */
	size_t out_alloc;
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static unsigned char *map_whole(const char *path, size_t *len)
{
	void *m;

	return pg_map_file(&m, len, path) < 0 ? NULL : m;
}

static void pack_release(pack *p)
{
	pg_unmap_file(p->idx, p->idx_len);
	pg_unmap_file(p->data, p->data_len);
	memset(p, 0, sizeof(*p));
}

/* A version 2 index and its pack, checked enough that every later read stays inside. */
static bool pack_open(pack *p, const char *idx_path)
{
	pg_buf data_path = PG_BUF_INIT;
	size_t n, i, tables;

	memset(p, 0, sizeof(*p));
	if (!(p->idx = map_whole(idx_path, &p->idx_len)))
		return false;
	if (p->idx_len < IDX_HEADER + IDX_FANOUT + 40 || memcmp(p->idx, "\377tOc", 4) ||
	    be32(p->idx + 4) != 2)
		goto bad;
	p->fanout = p->idx + IDX_HEADER;
	for (i = 1; i < 256; i++)
		if (be32(p->fanout + 4 * (i - 1)) > be32(p->fanout + 4 * i))
			goto bad;
	n = be32(p->fanout + 4 * 255);
	/* ids, crcs and offsets, then large offsets, then two checksums */
	tables = IDX_HEADER + IDX_FANOUT;
	if (n > (p->idx_len - tables - 40) / (PG_OID_RAWSZ + 4 + 4))
		goto bad;
	p->n = (uint32_t)n;
	p->ids = p->idx + tables;
	p->offsets = p->ids + n * (PG_OID_RAWSZ + 4);
	p->large = p->offsets + n * 4;
	p->nlarge = (size_t)(p->idx + p->idx_len - 40 - p->large) / 8;
	if (pg_buf_put(&data_path, idx_path, strlen(idx_path) - 4) < 0 ||
	    pg_buf_puts(&data_path, ".pack") < 0 ||
	    !(p->data = map_whole(data_path.ptr, &p->data_len)))
		goto bad;
	if (p->data_len < 12 + 20 || memcmp(p->data, "PACK", 4))
		goto bad;
	pg_buf_release(&data_path);
	return true;
bad:
	pg_buf_release(&data_path);
	pack_release(p);
	pg_error_clear();
	return false;
}

static int add_dir_packs(pg_packs *ps, const char *objdir)
{
	pg_buf path = PG_BUF_INIT;
	DIR *d;
	struct dirent *e;
	int err = 0;

	if ((err = pg_buf_printf(&path, "%s/pack", objdir)) < 0)
		return err;
	if (!(d = opendir(path.ptr))) {
		pg_buf_release(&path);
		return 0;
	}
	while (err == 0 && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		pack p;

		if (len < 5 || strcmp(e->d_name + len - 4, ".idx"))
			continue;
		pg_buf_clear(&path);
		if ((err = pg_buf_printf(&path, "%s/pack/%s", objdir, e->d_name)) < 0)
			break;
		if (!pack_open(&p, path.ptr))
			continue;
		if ((err = PG_ARRAY_GROW(ps->v, ps->n + 1, ps->alloc)) < 0) {
			pack_release(&p);
			break;
		}
		ps->v[ps->n++] = p;
	}
	closedir(d);
	pg_buf_release(&path);
	return err;
}

void pg_packs_free(pg_packs *ps)
{
	size_t i;

	if (!ps)
		return;
	for (i = 0; i < ps->n; i++)
		pack_release(&ps->v[i]);
	free(ps->v);
	if (ps->z_ready)
		inflateEnd(&ps->z);
	free(ps->out);
	free(ps);
}

static int load_packs(pg_repo *r)
{
	size_t i;
	int err = 0;

	if (r->packs)
		return 0;
	if (!(r->packs = calloc(1, sizeof(*r->packs))))
		return pg_error_oom();
	for (i = 0; i < r->ngraph_dirs && err == 0; i++)
		err = add_dir_packs(r->packs, r->graph_dirs[i]);
	return err;
}

/* Where id is in p's pack, or 0. */
static size_t find(const pack *p, const pg_oid *id)
{
	uint32_t lo = id->id[0] ? be32(p->fanout + 4 * (id->id[0] - 1)) : 0;
	uint32_t hi = be32(p->fanout + 4 * id->id[0]);

	if (hi > p->n)
		return 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = memcmp(p->ids + (size_t)mid * PG_OID_RAWSZ, id->id, PG_OID_RAWSZ);

		if (c == 0) {
			uint32_t off = be32(p->offsets + (size_t)mid * 4);

			if (!(off & 0x80000000u))
				return off;
			off &= 0x7fffffffu;
			if (off >= p->nlarge)
				return 0;
			return (size_t)((uint64_t)be32(p->large + (size_t)off * 8) << 32 |
					be32(p->large + (size_t)off * 8 + 4));
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Inflate the commit stored whole at off; 1 done, 0 not a whole commit (leave it to libgit2). */
static int inflate_commit(pg_packs *ps, const pack *p, size_t off, size_t *len)
{
	const unsigned char *h, *end = p->data + p->data_len - 20;
	size_t size, shift = 4;
	int zr;

	if (off < 12 || off >= p->data_len - 20)
		return 0;
	h = p->data + off;
	if (((*h >> 4) & 7) != 1) /* a commit, not a delta or another type */
		return 0;
	size = *h & 15;
	while (*h & 0x80) {
		if (++h >= end || shift > 60)
			return 0;
		size |= (size_t)(*h & 0x7f) << shift;
		shift += 7;
	}
	h++;
	if (size > COMMIT_MAX || h >= end)
		return 0;
	if (size + 1 > ps->out_alloc) {
		unsigned char *nb = malloc(size + 1);

		if (!nb)
			return pg_error_oom();
		free(ps->out);
		ps->out = nb;
		ps->out_alloc = size + 1;
	}
	if (!ps->z_ready) {
		memset(&ps->z, 0, sizeof(ps->z));
		if (inflateInit(&ps->z) != Z_OK)
			return 0;
		ps->z_ready = true;
	} else if (inflateReset(&ps->z) != Z_OK) {
		return 0;
	}
	ps->z.next_in = (unsigned char *)h;
	ps->z.avail_in = (uInt)((size_t)(end - h) < UINT_MAX ? (size_t)(end - h) : UINT_MAX);
	ps->z.next_out = ps->out;
	ps->z.avail_out = (uInt)size + 1; /* one more, to see the stream end where it says */
	zr = inflate(&ps->z, Z_FINISH);
	if (zr != Z_STREAM_END || ps->z.total_out != size)
		return 0;
	ps->out[size] = '\0';
	*len = size;
	return 1;
}

int pg_repo_pack_commit(const char **data, size_t *len, pg_repo *r, const pg_oid *id)
{
	size_t i;
	int err;

	if ((err = load_packs(r)) < 0)
		return err;
	for (i = 0; i < r->packs->n; i++) {
		size_t off = find(&r->packs->v[i], id);

		if (!off)
			continue;
		if ((err = inflate_commit(r->packs, &r->packs->v[i], off, len)) != 0) {
			if (err == 1)
				*data = (const char *)r->packs->out;
			return err;
		}
		return 0; /* there, but not whole: libgit2 resolves it */
	}
	return 0;
}
