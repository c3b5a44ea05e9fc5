/* graph.c - git's commit-graph files and chains, read in place with every bound checked. */
#include "repo/graph.h"
#include "common/array.h"
#include "common/buf.h"
#include "common/digest.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/hex.h"
#include "common/map.h"
#include "common/pagefile.h"
#include "common/search.h"

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEADER_SIZE 8
#define TOC_ENTRY 12
#define HASH_LEN PG_OID_RAWSZ
#define CDAT_WIDTH (HASH_LEN + 16)
/* The entries pg_graph_parent_words reads at once: 18 KiB. */
#define PARENT_WORDS_READ 512
#define FANOUT_SIZE (256 * 4)

#define CHUNK_OIDF 0x4f494446u
#define CHUNK_OIDL 0x4f49444cu
#define CHUNK_CDAT 0x43444154u
#define CHUNK_EDGE 0x45444745u
#define CHUNK_GDA2 0x47444132u
#define CHUNK_GDO2 0x47444f32u
#define CHUNK_BASE 0x42415345u

#define PARENT_NONE 0x70000000u
#define PARENT_EDGE 0x80000000u
#define GDA2_OVERFLOW 0x80000000u

/* As libgit2's revwalk, which refuses a commit with more parents. */
#define MAX_PARENTS 65535u
/* git's chains are a handful of layers; the file naming them is small */
#define CHAIN_FILE_MAX ((size_t)1 << 20)
/* at most 4 MiB of a layer held at once (a walk reads a few bytes per commit) */
#define CACHE_BLOCKS 1024
/* mapped once a sixteenth of a layer's blocks were read (pg_pagefile_map_after) */
#define GRAPH_MAP_SHARE 16
/* files whose checksum held, remembered in the process and in the checks file */
#define CHECKED_MAX 64
#define CHECKS_FILE_LINES 256

/* One file: where its tables start (0: absent), all inside it. */
typedef struct layer {
	pg_pagefile *f;
	uint64_t len;
	char *path;
	unsigned char fanout[FANOUT_SIZE];
	uint64_t oids, cdat, gda2, gdo2, edge;
	unsigned char *bases;  /* the BASE chunk, read whole */
	size_t ngdo2, nedge;
	uint32_t n, base; /* its commits, and how many the layers below hold */
	unsigned nbases;
	unsigned char trailer[HASH_LEN]; /* git's checksum of the rest of the file */
} layer;

struct pg_graph {
	layer *layers;        /* the base first */
	size_t nlayers, alloc;
	uint32_t count;
	enum pg_graph_gen gen;
	char *warning;        /* why upper layers were left out, or NULL */
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const unsigned char *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static void layer_release(layer *l)
{
	pg_pagefile_free(l->f);
	free(l->bases);
	free(l->path);
	memset(l, 0, sizeof(*l));
}

static int corrupt(const layer *l, const char *what)
{
	return pg_error_set(PG_EINVALID, "commit-graph '%s': %s", l->path, what);
}

/* Open path; PG_ENOTFOUND when it does not exist. */
static int open_file(layer *l, const char *path)
{
	int err;

	if (!(l->path = pg_strdup(path)))
		return PG_ENOMEM;
	if ((err = pg_pagefile_open(&l->f, path, CACHE_BLOCKS)) < 0)
		return err == PG_EINVALID ? corrupt(l, "not a regular file") : err;
	/*
	 * A walk reads two or three blocks a commit, all over the file: one
	 * of 10,500 commits to an old base read 26,353 blocks of a 60 MB
	 * graph, 40 ms by pread and 20 mapped; the incident's, 627
	 */
	pg_pagefile_map_after(l->f, GRAPH_MAP_SHARE);
	l->len = pg_pagefile_size(l->f);
	if (l->len < HEADER_SIZE + TOC_ENTRY + HASH_LEN)
		return corrupt(l, "too short to be a commit-graph");
	return pg_pagefile_read(l->f, l->len - HASH_LEN, l->trailer, HASH_LEN);
}

/* --- the trailing checksum, checked once per file ------------------------------------ */

/*
 * A file is known by its path, device, inode, size and modification time:
 * git writes a new graph under a temporary name and renames it, so a
 * rewritten graph is another inode, and one changed in place another
 * mtime.  The checksum it had when it was checked is kept too: the trailer
 * read now must still be that one.
 */
typedef struct checked {
	uint64_t path_hash, dev, ino, size;
	int64_t sec, nsec;
	unsigned char trailer[HASH_LEN];
} checked;

static checked checked_files[CHECKED_MAX];
static size_t checked_next;
static pthread_mutex_t checked_lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_file(const checked *a, const checked *b)
{
	return a->path_hash == b->path_hash && a->dev == b->dev && a->ino == b->ino &&
	       a->size == b->size && a->sec == b->sec && a->nsec == b->nsec &&
	       !memcmp(a->trailer, b->trailer, HASH_LEN);
}

static bool checked_in_memory(const checked *k)
{
	bool found = false;
	size_t i;

	pthread_mutex_lock(&checked_lock);
	for (i = 0; i < CHECKED_MAX && !found; i++)
		found = checked_files[i].size && same_file(&checked_files[i], k);
	pthread_mutex_unlock(&checked_lock);
	return found;
}

static void remember_in_memory(const checked *k)
{
	pthread_mutex_lock(&checked_lock);
	checked_files[checked_next++ % CHECKED_MAX] = *k;
	pthread_mutex_unlock(&checked_lock);
}

/* "path_hash dev ino size sec nsec trailer" */
static int format_checked(pg_buf *out, const checked *k)
{
	char hex[2 * HASH_LEN + 1];

	pg_hex_encode(hex, k->trailer, HASH_LEN);
	return pg_buf_printf(out, "%016llx %llu %llu %llu %lld %lld %s\n",
			     (unsigned long long)k->path_hash, (unsigned long long)k->dev,
			     (unsigned long long)k->ino, (unsigned long long)k->size,
			     (long long)k->sec, (long long)k->nsec, hex);
}

/*
 * Whether the checks file (one line per file whose checksum held, see
 * format_checked) lists k; with add, k is added when it is not, the
 * oldest lines dropped past CHECKS_FILE_LINES.  A file that cannot be
 * read or written is no error: the checksum is computed again.
 */
static bool checks_file(const char *path, const checked *k, bool add)
{
	pg_buf file = PG_BUF_INIT, line = PG_BUF_INIT, out = PG_BUF_INIT;
	const char *p, *keep;
	size_t lines = 0;
	bool found = false;

	pg_buf_init(&file, (size_t)CHECKS_FILE_LINES * 128);
	if (pg_buf_read_file(&file, path) < 0)
		pg_error_clear();
	if (format_checked(&line, k) < 0)
		goto done;
	for (p = file.ptr ? file.ptr : ""; *p; lines++) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);

		if (len == line.len && !memcmp(p, line.ptr, len))
			found = true;
		p += len;
	}
	if (found || !add)
		goto done;
	/* the newest lines at the end: drop from the start */
	for (keep = file.ptr ? file.ptr : ""; lines >= CHECKS_FILE_LINES; lines--) {
		const char *nl = strchr(keep, '\n');

		keep = nl ? nl + 1 : keep + strlen(keep);
	}
	if (pg_buf_puts(&out, keep) < 0 || pg_buf_puts(&out, line.ptr) < 0 ||
	    pg_write_file_atomic(path, out.ptr, out.len) < 0)
		pg_error_clear();
done:
	pg_buf_release(&file);
	pg_buf_release(&line);
	pg_buf_release(&out);
	return found;
}

/*
 * The layer's trailing checksum is the SHA-1 of the rest of the file (it
 * reads every byte: 100 ms for the kernel's graph), once per file (see
 * checked), remembered in the process and in checks (may be NULL).
 * PG_EINVALID naming the file when it does not hold.
 */
static int check_sum(const layer *l, const char *checks)
{
	unsigned char sum[HASH_LEN];
	struct stat st;
	checked k;
	off_t size = 0;
	int fd = -1, err;

	if ((err = pg_open_regular(&fd, &size, l->path, PG_OPEN_READ, NULL)) < 0)
		return err;
	if (fstat(fd, &st) < 0 || (uint64_t)size != l->len) {
		err = corrupt(l, "it changed while it was opened");
		goto done;
	}
	memset(&k, 0, sizeof(k));
	k.path_hash = pg_hash_bytes(l->path, strlen(l->path));
	k.dev = (uint64_t)st.st_dev;
	k.ino = (uint64_t)st.st_ino;
	k.size = (uint64_t)st.st_size;
	k.sec = (int64_t)st.st_mtim.tv_sec;
	k.nsec = (int64_t)st.st_mtim.tv_nsec;
	memcpy(k.trailer, l->trailer, HASH_LEN);
	if (checked_in_memory(&k))
		goto done;
	if (checks && checks_file(checks, &k, false)) {
		remember_in_memory(&k);
		goto done;
	}
	if ((err = pg_sha1_fd(sum, fd, l->len - HASH_LEN, l->path)) < 0)
		goto done;
	if (memcmp(sum, l->trailer, HASH_LEN)) {
		err = corrupt(l, "its trailing checksum does not match its contents");
		goto done;
	}
	remember_in_memory(&k);
	if (checks)
		checks_file(checks, &k, true);
done:
	close(fd);
	return err;
}

/* Read len bytes at off, which the table of contents put inside the file. */
static int get(const layer *l, uint64_t off, void *dst, size_t len)
{
	return pg_pagefile_read(l->f, off, dst, len);
}

/* The header, the table of contents and the chunks this reader uses, all checked. */
static int read_chunks(layer *l, uint32_t below)
{
	unsigned char head[HEADER_SIZE], toc[256 * TOC_ENTRY + TOC_ENTRY];
	unsigned nchunks, i, j;
	uint64_t toc_end, end, oids_len = 0, cdat_len = 0, gda2_len = 0;
	bool have_fanout = false;
	int err;

	if ((err = get(l, 0, head, HEADER_SIZE)) < 0)
		return err;
	if (memcmp(head, "CGPH", 4))
		return corrupt(l, "no CGPH signature");
	if (head[4] != 1)
		return corrupt(l, "unknown version");
	if (head[5] != 1)
		return corrupt(l, "not a SHA-1 graph");
	nchunks = head[6];
	l->nbases = head[7];
	toc_end = HEADER_SIZE + (uint64_t)(nchunks + 1) * TOC_ENTRY;
	end = l->len - HASH_LEN; /* the trailing checksum, never read */
	if (toc_end > end)
		return corrupt(l, "its table of chunks runs past the end");
	if ((err = get(l, HEADER_SIZE, toc, (size_t)(nchunks + 1) * TOC_ENTRY)) < 0)
		return err;
	for (i = 0; i < nchunks; i++) {
		const unsigned char *e = toc + (size_t)i * TOC_ENTRY;
		uint32_t id = be32(e);
		uint64_t off = be64(e + 4), next = be64(e + TOC_ENTRY + 4), size;

		if (id == 0)
			return corrupt(l, "its table of chunks ends early");
		if (off < toc_end || next < off || next > end)
			return corrupt(l, "a chunk lies outside the file");
		for (j = 0; j < i; j++)
			if (be32(toc + (size_t)j * TOC_ENTRY) == id)
				return corrupt(l, "a chunk appears twice");
		size = next - off;
		switch (id) {
		case CHUNK_OIDF:
			if (size != FANOUT_SIZE)
				return corrupt(l, "its fanout is not 1024 bytes");
			if ((err = get(l, off, l->fanout, FANOUT_SIZE)) < 0)
				return err;
			have_fanout = true;
			break;
		case CHUNK_OIDL:
			l->oids = off;
			oids_len = size;
			break;
		case CHUNK_CDAT:
			l->cdat = off;
			cdat_len = size;
			break;
		case CHUNK_EDGE:
			l->edge = off;
			l->nedge = (size_t)(size / 4);
			break;
		case CHUNK_GDA2:
			l->gda2 = off;
			gda2_len = size;
			break;
		case CHUNK_GDO2:
			l->gdo2 = off;
			l->ngdo2 = (size_t)(size / 8);
			break;
		case CHUNK_BASE:
			if (size != (uint64_t)l->nbases * HASH_LEN)
				return corrupt(l, "its list of base graphs has the wrong size");
			if (l->nbases) {
				if (!(l->bases = malloc((size_t)size)))
					return pg_error_oom();
				if ((err = get(l, off, l->bases, (size_t)size)) < 0)
					return err;
			}
			break;
		default:
			break; /* BIDX, BDAT, GDAT, GDOV and what git may add later */
		}
	}
	if (be32(toc + (size_t)nchunks * TOC_ENTRY) != 0)
		return corrupt(l, "its table of chunks is not terminated");
	if (!have_fanout || !l->oids || !l->cdat)
		return corrupt(l, "a required chunk (OIDF, OIDL or CDAT) is missing");
	if (l->nbases && !l->bases)
		return corrupt(l, "it has base graphs but no list of them");
	/* the fanout counts the commits; every table must hold that many */
	for (i = 1; i < 256; i++)
		if (be32(l->fanout + 4 * (i - 1)) > be32(l->fanout + 4 * i))
			return corrupt(l, "its fanout is not sorted");
	l->n = be32(l->fanout + 4 * 255);
	if (oids_len / HASH_LEN < l->n)
		return corrupt(l, "it lists fewer ids than its fanout counts");
	if (cdat_len / CDAT_WIDTH < l->n)
		return corrupt(l, "its commit data is shorter than its list of ids");
	if (l->n >= PARENT_NONE - below)
		return corrupt(l, "it holds more commits than positions can address");
	/* a GDA2 of the wrong size is ignored, as git ignores it */
	if (l->gda2 && gda2_len / 4 < l->n)
		l->gda2 = 0;
	l->base = below;
	return 0;
}

/* check: the trailing checksum too (checks: where checked files are remembered, or NULL) */
static int open_layer(layer *l, const char *path, uint32_t below, bool check, const char *checks)
{
	int err;

	memset(l, 0, sizeof(*l));
	if ((err = open_file(l, path)) < 0 || (err = read_chunks(l, below)) < 0 ||
	    (check && (err = check_sum(l, checks)) < 0))
		layer_release(l);
	return err;
}

static int add_layer(pg_graph *g, layer *l)
{
	int err;

	if ((err = PG_ARRAY_GROW(g->layers, g->nlayers + 1, g->alloc)) < 0)
		return err;
	g->layers[g->nlayers++] = *l;
	g->count = l->base + l->n;
	memset(l, 0, sizeof(*l));
	return 0;
}

static void settle_generation(pg_graph *g)
{
	size_t i;

	g->gen = PG_GRAPH_GEN_DATE;
	for (i = 0; i < g->nlayers; i++)
		if (!g->layers[i].gda2)
			g->gen = PG_GRAPH_GEN_LEVEL;
}

void pg_graph_free(pg_graph *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->nlayers; i++)
		layer_release(&g->layers[i]);
	free(g->layers);
	free(g->warning);
	free(g);
}

static int open_single(pg_graph **out, const char *path, bool check, const char *checks)
{
	pg_graph *g = calloc(1, sizeof(*g));
	layer l;
	int err;

	*out = NULL;
	if (!g)
		return pg_error_oom();
	if ((err = open_layer(&l, path, 0, check, checks)) < 0) {
		if (err == PG_ENOTFOUND)
			err = pg_error_set(PG_ENOTFOUND, "commit-graph '%s' does not exist", path);
		goto done;
	}
	if (l.nbases) {
		err = corrupt(&l, "it names base graphs but is not part of a chain");
		layer_release(&l);
		goto done;
	}
	if ((err = add_layer(g, &l)) < 0) {
		layer_release(&l);
		goto done;
	}
	settle_generation(g);
	*out = g;
	g = NULL;
done:
	pg_graph_free(g);
	return err;
}

int pg_graph_open_file(pg_graph **out, const char *path)
{
	return open_single(out, path, false, NULL);
}

/* Layer i of a chain must name the i layers below it, in order, as its bases. */
static bool bases_match(const layer *l, const pg_oid *names, size_t i)
{
	size_t k;

	if (l->nbases != i)
		return false;
	for (k = 0; k < i; k++)
		if (memcmp(l->bases + k * HASH_LEN, names[k].id, HASH_LEN))
			return false;
	return true;
}

static int open_chain(pg_graph **out, const char *objdir, const char *checks)
{
	pg_buf chain = PG_BUF_INIT, path = PG_BUF_INIT;
	pg_graph *g = NULL;
	pg_oid *names = NULL;
	size_t nnames = 0, names_alloc = 0;
	const char *line;
	layer l;
	int err;

	pg_buf_init(&chain, CHAIN_FILE_MAX);
	if ((err = pg_buf_printf(&path, "%s/info/commit-graphs/commit-graph-chain", objdir)) < 0)
		goto done;
	if ((err = pg_buf_read_file(&chain, path.ptr)) < 0) {
		if (err == PG_ENOTFOUND) {
			pg_error_clear();
			err = 0;
		}
		goto done;
	}
	if (!(g = calloc(1, sizeof(*g)))) {
		err = pg_error_oom();
		goto done;
	}
	for (line = chain.ptr; *line; ) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		pg_oid name;

		if (len != PG_OID_HEXSZ || pg_oid_fromhex(&name, line, len) < 0) {
			err = pg_error_set(PG_EINVALID, "commit-graph chain '%s': line %zu is not "
					   "a graph's name", path.ptr, nnames + 1);
			break;
		}
		pg_buf_clear(&path);
		if ((err = pg_buf_printf(&path, "%s/info/commit-graphs/graph-%.40s.graph", objdir,
					 line)) < 0)
			break;
		if ((err = open_layer(&l, path.ptr, g->count, true, checks)) < 0) {
			if (err == PG_ENOTFOUND)
				err = pg_error_set(PG_EINVALID, "commit-graph chain: '%s' is missing",
						   path.ptr);
			break;
		}
		if (!bases_match(&l, names, nnames)) {
			err = corrupt(&l, "its base graphs are not the layers below it in the chain");
			layer_release(&l);
			break;
		}
		/* git names a layer by its checksum: another file under the name is not it */
		if (memcmp(l.trailer, name.id, HASH_LEN)) {
			err = corrupt(&l, "its checksum is not the one its name says");
			layer_release(&l);
			break;
		}
		if ((err = PG_ARRAY_GROW(names, nnames + 1, names_alloc)) < 0 ||
		    (err = add_layer(g, &l)) < 0) {
			layer_release(&l);
			goto done;
		}
		names[nnames++] = name;
		line = nl ? nl + 1 : line + len;
	}
	/* a chain whose upper layers do not fit is cut below them, as git does */
	if (err == PG_EINVALID && g->nlayers) {
		if (!(g->warning = pg_strdup(pg_error_last()))) {
			err = PG_ENOMEM;
			goto done;
		}
		pg_error_clear();
		err = 0;
	}
	if (err < 0 || !g->nlayers) {
		if (err == 0)
			err = pg_error_set(PG_EINVALID, "commit-graph chain '%s/info/commit-graphs' "
					   "names no graph", objdir);
		goto done;
	}
	settle_generation(g);
	*out = g;
	g = NULL;
done:
	pg_graph_free(g);
	free(names);
	pg_buf_release(&chain);
	pg_buf_release(&path);
	return err;
}

int pg_graph_open_checked(pg_graph **out, const char *objdir, const char *checks)
{
	pg_buf path = PG_BUF_INIT;
	int err;

	*out = NULL;
	if ((err = pg_buf_printf(&path, "%s/info/commit-graph", objdir)) < 0)
		return err;
	err = open_single(out, path.ptr, true, checks);
	pg_buf_release(&path);
	if (err != PG_ENOTFOUND)
		return err;
	pg_error_clear();
	return open_chain(out, objdir, checks);
}

int pg_graph_open(pg_graph **out, const char *objdir)
{
	return pg_graph_open_checked(out, objdir, NULL);
}

void pg_graph_id(pg_oid *out, const pg_graph *g)
{
	/* the top layer's checksum covers its list of bases, whose checksums were checked */
	memcpy(out->id, g->layers[g->nlayers - 1].trailer, HASH_LEN);
}

const char *pg_graph_warning(const pg_graph *g)
{
	return g->warning;
}

void pg_graph_map(pg_graph *g)
{
	size_t i;

	for (i = 0; i < g->nlayers; i++)
		pg_pagefile_map(g->layers[i].f);
}

void pg_graph_let_go(pg_graph *g)
{
	size_t i;

	for (i = 0; i < g->nlayers; i++)
		pg_pagefile_let_go(g->layers[i].f);
}

uint32_t pg_graph_count(const pg_graph *g)
{
	return g->count;
}

enum pg_graph_gen pg_graph_gen_kind(const pg_graph *g)
{
	return g->gen;
}

static const layer *layer_of(const pg_graph *g, uint32_t pos)
{
	size_t i = g->nlayers;

	while (i-- > 0)
		if (pos >= g->layers[i].base)
			return &g->layers[i];
	return &g->layers[0];
}

/* The search's view of a layer's id table: each id's first 8 bytes. */
static int oid_key_at(uint64_t *key, void *ctx, size_t i)
{
	const layer *l = ctx;
	unsigned char at[8];
	int err;

	if ((err = get(l, l->oids + (uint64_t)i * HASH_LEN, at, sizeof(at))) < 0)
		return err;
	*key = pg_key_prefix64(at);
	return 0;
}

bool pg_graph_find(const pg_graph *g, const pg_oid *id, uint32_t *pos)
{
	uint64_t want = pg_key_prefix64(id->id), first = (uint64_t)id->id[0] << 56;
	size_t i;

	for (i = 0; i < g->nlayers; i++) {
		const layer *l = &g->layers[i];
		uint32_t lo = id->id[0] ? be32(l->fanout + 4 * (id->id[0] - 1)) : 0;
		uint32_t hi = be32(l->fanout + 4 * id->id[0]);
		size_t at;

		/* ids are uniform: an interpolation search within the first byte's bucket */
		if (pg_search_uniform(&at, lo, hi, first, first | 0x00ffffffffffffffULL, want,
				      oid_key_at, (void *)l) < 0) {
			pg_error_clear();
			continue;
		}
		for (; at < hi; at++) {
			unsigned char cur[HASH_LEN];
			int c;

			if (get(l, l->oids + (uint64_t)at * HASH_LEN, cur, HASH_LEN) < 0) {
				pg_error_clear();
				break;
			}
			c = memcmp(cur, id->id, HASH_LEN);
			if (c == 0) {
				*pos = l->base + (uint32_t)at;
				return true;
			}
			if (c > 0)
				break;
		}
	}
	return false;
}

int pg_graph_oid(pg_oid *out, const pg_graph *g, uint32_t pos)
{
	const layer *l;

	if (pos >= g->count)
		return pg_error_set(PG_EINVALID, "commit-graph: no position %u", pos);
	l = layer_of(g, pos);
	return get(l, l->oids + (uint64_t)(pos - l->base) * HASH_LEN, out->id, HASH_LEN);
}

_Static_assert(sizeof(pg_oid) == HASH_LEN, "an array of pg_oid is the ids' bytes");

int pg_graph_oids(pg_oid *out, const pg_graph *g, uint32_t pos, uint32_t n)
{
	while (n) {
		const layer *l;
		uint32_t k;
		int err;

		if (pos >= g->count || n > g->count - pos)
			return pg_error_set(PG_EINVALID, "commit-graph: no position %u", pos);
		l = layer_of(g, pos);
		k = l->base + l->n - pos < n ? l->base + l->n - pos : n;
		if (!k)
			return pg_error_set(PG_EINVALID, "commit-graph: no position %u", pos);
		if ((err = pg_pagefile_pread(l->f, l->oids + (uint64_t)(pos - l->base) * HASH_LEN,
					     out, (size_t)k * HASH_LEN)) < 0)
			return err;
		out += k;
		pos += k;
		n -= k;
	}
	return 0;
}

static int bad_entry(const layer *l, uint32_t pos, const char *what)
{
	return pg_error_set(PG_EINVALID, "commit-graph '%s' is corrupt: the commit at position "
			    "%u %s", l->path, pos, what);
}

/*
 * out's parents, of the commit at pos of layer l whose entry holds p1 and
 * p2: each checked to be in the graph, an octopus's EDGE list followed.
 */
static int parents_of(pg_graph_commit *out, const layer *l, uint32_t pos, uint32_t p1, uint32_t p2)
{
	unsigned char b[4];
	uint32_t top = l->base + l->n, i;
	int err;

	if (p1 == PARENT_NONE)
		return 0;
	if (p1 >= top)
		return bad_entry(l, pos, "names a parent outside the graph");
	out->first[0] = p1;
	out->nparents = 1;
	if (p2 == PARENT_NONE)
		return 0;
	if (!(p2 & PARENT_EDGE)) {
		if (p2 >= top)
			return bad_entry(l, pos, "names a parent outside the graph");
		out->first[1] = p2;
		out->nparents = 2;
		return 0;
	}
	out->edge = p2 & ~PARENT_EDGE;
	for (i = out->edge;; i++) {
		uint32_t e;

		if (!l->edge || i >= l->nedge)
			return bad_entry(l, pos, "has parents past the end of its edge list");
		if ((err = get(l, l->edge + (uint64_t)i * 4, b, 4)) < 0)
			return err;
		e = be32(b);
		if ((e & ~PARENT_EDGE) >= top)
			return bad_entry(l, pos, "names a parent outside the graph");
		if (i == out->edge)
			out->first[1] = e & ~PARENT_EDGE;
		if (++out->nparents > MAX_PARENTS)
			return bad_entry(l, pos, "has more than 65535 parents");
		if (e & PARENT_EDGE)
			break;
	}
	return 0;
}

int pg_graph_parent_words(uint32_t *out, const pg_graph *g, uint32_t pos, uint32_t n)
{
	unsigned char buf[PARENT_WORDS_READ * CDAT_WIDTH];

	while (n) {
		const layer *l;
		uint32_t k, i;
		int err;

		if (pos >= g->count || n > g->count - pos)
			return pg_error_set(PG_EINVALID, "commit-graph: no position %u", pos);
		l = layer_of(g, pos);
		k = l->base + l->n - pos < n ? l->base + l->n - pos : n;
		k = k < PARENT_WORDS_READ ? k : PARENT_WORDS_READ;
		if (!k)
			return pg_error_set(PG_EINVALID, "commit-graph: no position %u", pos);
		if ((err = pg_pagefile_pread(l->f, l->cdat + (uint64_t)(pos - l->base) * CDAT_WIDTH,
					     buf, (size_t)k * CDAT_WIDTH)) < 0)
			return err;
		for (i = 0; i < k; i++) {
			out[2 * i] = be32(buf + i * CDAT_WIDTH + HASH_LEN);
			out[2 * i + 1] = be32(buf + i * CDAT_WIDTH + HASH_LEN + 4);
		}
		out += 2 * (size_t)k;
		pos += k;
		n -= k;
	}
	return 0;
}

int pg_graph_read_parents(pg_graph_commit *out, const pg_graph *g, uint32_t pos,
			  const uint32_t words[2])
{
	memset(out, 0, sizeof(*out));
	out->pos = pos;
	if (pos >= g->count)
		return pg_error_set(PG_EINVALID, "commit-graph: no position %u", pos);
	return parents_of(out, layer_of(g, pos), pos, words[0], words[1]);
}

int pg_graph_read(pg_graph_commit *out, const pg_graph *g, uint32_t pos)
{
	const layer *l;
	unsigned char d[CDAT_WIDTH], b[8];
	uint32_t p1, p2, hi;
	int err;

	memset(out, 0, sizeof(*out));
	out->pos = pos;
	if (pos >= g->count)
		return pg_error_set(PG_EINVALID, "commit-graph: no position %u", pos);
	l = layer_of(g, pos);
	if ((err = get(l, l->cdat + (uint64_t)(pos - l->base) * CDAT_WIDTH, d, CDAT_WIDTH)) < 0)
		return err;
	p1 = be32(d + HASH_LEN);
	p2 = be32(d + HASH_LEN + 4);
	hi = be32(d + HASH_LEN + 8);
	out->time = (int64_t)((uint64_t)(hi & 3) << 32 | be32(d + HASH_LEN + 12));
	out->level = hi >> 2;
	if (l->gda2) {
		uint32_t off;

		if ((err = get(l, l->gda2 + (uint64_t)(pos - l->base) * 4, b, 4)) < 0)
			return err;
		off = be32(b);
		if (off & GDA2_OVERFLOW) {
			off &= ~GDA2_OVERFLOW;
			if (!l->gdo2 || off >= l->ngdo2)
				return bad_entry(l, pos, "has a generation past its overflow chunk");
			if ((err = get(l, l->gdo2 + (uint64_t)off * 8, b, 8)) < 0)
				return err;
			out->date_gen = (uint64_t)out->time + be64(b);
		} else {
			out->date_gen = (uint64_t)out->time + off;
		}
	}
	return parents_of(out, l, pos, p1, p2);
}

int pg_graph_parent(uint32_t *out, const pg_graph *g, const pg_graph_commit *c, uint32_t i)
{
	const layer *l;
	unsigned char b[4];
	int err;

	if (i < 2) {
		*out = c->first[i];
		return 0;
	}
	/* the EDGE list of the layer that holds the commit, which read() checked */
	l = layer_of(g, c->pos);
	if ((err = get(l, l->edge + (uint64_t)(c->edge + i - 1) * 4, b, 4)) < 0)
		return err;
	*out = be32(b) & ~PARENT_EDGE;
	return 0;
}

uint64_t pg_graph_generation(const pg_graph_commit *c, enum pg_graph_gen as)
{
	return as == PG_GRAPH_GEN_DATE ? c->date_gen : c->level;
}
