/* commits.c - the walks' commit source: a trusted commit-graph where it has the commit, else the object. */
#include "repo/commits.h"
#include "common/array.h"
#include "common/error.h"
#include "common/fs.h"

#define NODE_CHUNK 4096
/* git's and libgit2's own nesting limit for alternates */
#define ALTERNATES_MAX 64

/* --- the graphs a repository trusts ------------------------------------------------ */

static bool listed(char *const *dirs, size_t n, const char *dir)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(dirs[i], dir))
			return true;
	return false;
}

static int add_dir(pg_repo *r, const char *dir)
{
	char *copy;
	int err;

	if (listed(r->graph_dirs, r->ngraph_dirs, dir))
		return 0;
	if ((err = PG_ARRAY_GROW(r->graph_dirs, r->ngraph_dirs + 1, r->graph_dirs_alloc)) < 0)
		return err;
	if (!(copy = pg_strdup(dir)))
		return PG_ENOMEM;
	r->graph_dirs[r->ngraph_dirs++] = copy;
	return 0;
}

/*
 * The object directories objdir borrows from (objects/info/alternates),
 * one level: a trusted store's alternates are part of it.
 */
static int add_alternates(pg_repo *r, const char *objdir)
{
	pg_buf file = PG_BUF_INIT, path = PG_BUF_INIT;
	char *line, *next;
	size_t n = 0;
	int err;

	pg_buf_init(&file, (size_t)64 << 10);
	if ((err = pg_buf_printf(&path, "%s/info/alternates", objdir)) < 0)
		goto done;
	if (pg_buf_read_file(&file, path.ptr) < 0) {
		pg_error_clear(); /* none, or unreadable: libgit2 will say so if it matters */
		goto done;
	}
	for (line = file.ptr; line && *line && n < ALTERNATES_MAX; line = next) {
		char *real;

		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		if (!*line || *line == '#')
			continue;
		pg_buf_clear(&path);
		if ((err = (*line == '/' ? pg_buf_puts(&path, line) :
			    pg_buf_printf(&path, "%s/%s", objdir, line))) < 0)
			goto done;
		if (!(real = realpath(path.ptr, NULL)))
			continue;
		err = add_dir(r, real);
		free(real);
		if (err < 0)
			goto done;
		n++;
	}
done:
	pg_buf_release(&file);
	pg_buf_release(&path);
	return err;
}

void pg_repo_graphs_release(pg_repo *r)
{
	size_t i;

	for (i = 0; i < r->ngraphs; i++)
		pg_graph_free(r->graphs[i]);
	free(r->graphs);
	r->graphs = NULL;
	r->ngraphs = r->graphs_alloc = 0;
	r->graphs_loaded = false;
	free(r->graph_warning);
	r->graph_warning = NULL;
	pg_packs_free(r->packs);
	r->packs = NULL;
}

int pg_repo_trust_graph(pg_repo *r, const char *objdir)
{
	char *real = realpath(objdir, NULL);
	int err;

	if (!real) /* nothing there to read: nothing to trust */
		return 0;
	if (!listed(r->graph_dirs, r->ngraph_dirs, real)) {
		pg_repo_graphs_release(r);
		if ((err = add_dir(r, real)) == 0)
			err = add_alternates(r, real);
	} else {
		err = 0;
	}
	free(real);
	return err;
}

/* The first reason a graph was left out is the one told. */
static int note_graph_warning(pg_repo *r, const char *why)
{
	if (r->graph_warning)
		return 0;
	return (r->graph_warning = pg_strdup(why)) ? 0 : PG_ENOMEM;
}

int pg_repo_set_graph_checks(pg_repo *r, const char *path)
{
	char *copy = pg_strdup(path);

	if (!copy)
		return PG_ENOMEM;
	free(r->graph_checks);
	r->graph_checks = copy;
	return 0;
}

/*
 * Open the graphs of the trusted directories, once.  A graph that cannot
 * be used is left out (git warns and goes on without it); the walks then
 * read those commits' objects.
 */
static int load_graphs(pg_repo *r)
{
	size_t i;
	int err = 0;

	if (r->graphs_loaded)
		return 0;
	r->gen = PG_GRAPH_GEN_DATE;
	for (i = 0; i < r->ngraph_dirs && err == 0; i++) {
		pg_graph *g = NULL;
		const char *why;

		if ((err = pg_graph_open_checked(&g, r->graph_dirs[i], r->graph_checks)) < 0) {
			if (err != PG_ENOMEM) {
				err = note_graph_warning(r, pg_error_last());
				pg_error_clear();
			}
			continue;
		}
		if (!g)
			continue;
		if ((why = pg_graph_warning(g)) && (err = note_graph_warning(r, why)) < 0) {
			pg_graph_free(g);
			break;
		}
		if ((err = PG_ARRAY_GROW(r->graphs, r->ngraphs + 1, r->graphs_alloc)) < 0) {
			pg_graph_free(g);
			break;
		}
		r->graphs[r->ngraphs++] = g;
		if (pg_graph_gen_kind(g) != PG_GRAPH_GEN_DATE)
			r->gen = PG_GRAPH_GEN_LEVEL;
	}
	if (err == 0)
		r->graphs_loaded = true;
	return err;
}

int pg_repo_graph_id(pg_oid *out, bool *has, pg_repo *r)
{
	pg_oid one;
	uint64_t h[3];
	unsigned char *all;
	size_t i;
	int err;

	memset(out, 0, sizeof(*out));
	*has = false;
	if ((err = load_graphs(r)) < 0)
		return err;
	if (!r->ngraphs)
		return 0;
	*has = true;
	if (r->ngraphs == 1) {
		pg_graph_id(out, r->graphs[0]);
		return 0;
	}
	/* several graphs (alternates): what changes when any of them does */
	if (!(all = malloc(r->ngraphs * PG_OID_RAWSZ)))
		return pg_error_oom();
	for (i = 0; i < r->ngraphs; i++) {
		pg_graph_id(&one, r->graphs[i]);
		memcpy(all + i * PG_OID_RAWSZ, one.id, PG_OID_RAWSZ);
	}
	h[0] = pg_hash_bytes(all, r->ngraphs * PG_OID_RAWSZ);
	all[0] ^= 0x5a;
	h[1] = pg_hash_bytes(all, r->ngraphs * PG_OID_RAWSZ);
	h[2] = r->ngraphs;
	memcpy(out->id, h, PG_OID_RAWSZ);
	free(all);
	return 0;
}

const char *pg_repo_graph_warning(pg_repo *r)
{
	if (load_graphs(r) < 0) {
		pg_error_clear();
		return NULL;
	}
	return r->graph_warning;
}

/* --- nodes by id ----------------------------------------------------------------- */

/* The ids are SHA-1s: their first bytes are already a good hash. */
static uint64_t key_of(const pg_oid *id)
{
	uint64_t h;

	memcpy(&h, id->id, sizeof(h));
	return h;
}

static int table_grow(pg_csrc *s)
{
	size_t ncap = s->cap ? s->cap * 2 : 1024, i;
	pg_cnode **t;
	uint64_t *k;

	if (ncap > SIZE_MAX / sizeof(*t) || !(t = calloc(ncap, sizeof(*t))))
		return pg_error_oom();
	if (!(k = malloc(ncap * sizeof(*k)))) {
		free(t);
		return pg_error_oom();
	}
	for (i = 0; i < s->cap; i++) {
		size_t j;

		if (!s->table[i])
			continue;
		for (j = (size_t)s->keys[i] & (ncap - 1); t[j]; j = (j + 1) & (ncap - 1))
			;
		t[j] = s->table[i];
		k[j] = s->keys[i];
	}
	free(s->table);
	free(s->keys);
	s->table = t;
	s->keys = k;
	s->cap = ncap;
	return 0;
}

int pg_csrc_init(pg_csrc *s, pg_repo *r)
{
	int err, gerr;

	memset(s, 0, sizeof(*s));
	s->r = r;
	if ((err = load_graphs(r)) < 0)
		return err;
	if ((gerr = git_repository_odb(&s->odb, r->git)) < 0)
		return pg_git_fail(gerr, "object database");
	return 0;
}

void pg_csrc_release(pg_csrc *s)
{
	size_t i;

	for (i = 0; i < s->count; i++) {
		pg_cnode *n = &s->chunks[i / NODE_CHUNK][i % NODE_CHUNK];

		if (n->parents != n->two)
			free(n->parents);
	}
	for (i = 0; i < s->nchunks; i++)
		free(s->chunks[i]);
	free(s->chunks);
	free(s->table);
	free(s->keys);
	git_odb_free(s->odb);
	memset(s, 0, sizeof(*s));
}

void pg_csrc_each(pg_csrc *s, void (*fn)(void *ctx, pg_cnode *n), void *ctx)
{
	size_t i;

	for (i = 0; i < s->count; i++)
		fn(ctx, &s->chunks[i / NODE_CHUNK][i % NODE_CHUNK]);
}

int pg_csrc_node(pg_cnode **out, pg_csrc *s, const pg_oid *id)
{
	pg_cnode *n;
	uint64_t key = key_of(id);
	size_t j;
	int err;

	if ((s->count + 1) * 2 > s->cap && (err = table_grow(s)) < 0)
		return err;
	for (j = (size_t)key & (s->cap - 1); s->table[j]; j = (j + 1) & (s->cap - 1)) {
		if (s->keys[j] == key && !memcmp(s->table[j]->id.id, id->id, PG_OID_RAWSZ)) {
			*out = s->table[j];
			return 0;
		}
	}
	if (s->count == s->nchunks * NODE_CHUNK) {
		if ((err = PG_ARRAY_GROW(s->chunks, s->nchunks + 1, s->chunks_alloc)) < 0)
			return err;
		if (!(s->chunks[s->nchunks] = malloc(NODE_CHUNK * sizeof(pg_cnode))))
			return pg_error_oom();
		s->nchunks++;
	}
	n = &s->chunks[s->count / NODE_CHUNK][s->count % NODE_CHUNK];
	memset(n, 0, sizeof(*n));
	n->id = *id;
	n->parents = n->two;
	s->table[j] = n;
	s->keys[j] = key;
	s->count++;
	*out = n;
	return 0;
}

static int alloc_parents(pg_cnode *n, size_t count)
{
	if (count > 2 && !(n->parents = calloc(count, sizeof(*n->parents)))) {
		n->parents = n->two;
		return pg_error_oom();
	}
	return 0;
}

/* --- from a graph ---------------------------------------------------------------- */

static int parse_graph(pg_csrc *s, pg_cnode *n)
{
	const pg_graph *g = s->r->graphs[n->graph - 1];
	pg_graph_commit c;
	uint32_t i;
	uint64_t gen;
	int err;

	if ((err = pg_graph_read(&c, g, n->pos)) < 0 || (err = alloc_parents(n, c.nparents)) < 0)
		return err;
	for (i = 0; i < c.nparents; i++) {
		uint32_t pos;
		pg_oid pid;
		pg_cnode *p;

		if ((err = pg_graph_parent(&pos, g, &c, i)) < 0 ||
		    (err = pg_graph_oid(&pid, g, pos)) < 0 || (err = pg_csrc_node(&p, s, &pid)) < 0)
			return err;
		if (!p->looked_up) {
			p->looked_up = true;
			p->graph = n->graph;
			p->pos = pos;
		}
		n->parents[i] = p;
		n->nparents = i + 1;
	}
	n->time = c.time;
	gen = pg_graph_generation(&c, s->r->gen);
	n->gen = gen ? gen : PG_GEN_INFINITY;
	s->from_graph++;
	return 0;
}

/* --- from the object: the header lines libgit2's quick parse reads ---------------- */

static int malformed(const pg_cnode *n, const char *why)
{
	char hex[PG_OID_HEXSZ + 1];

	pg_oid_tohex(hex, &n->id);
	return pg_error_set(PG_EINVALID, "commit %s is malformed: %s", hex, why);
}

/* git's strtol over [p, end): blanks, a sign, at least one digit, no overflow. */
static bool parse_time(int64_t *out, const char *p, const char *end)
{
	bool neg = false;
	int64_t v = 0;
	size_t digits = 0;

	while (p < end && (*p == ' ' || (*p >= '\t' && *p <= '\r')))
		p++;
	if (p < end && (*p == '-' || *p == '+'))
		neg = *p++ == '-';
	for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
		int d = *p - '0';

		if (v > (INT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = neg ? -v : v;
	return digits > 0;
}

/*
 * One "author " or "committer " line, checked as libgit2 checks it: an
 * e-mail between '<' and '>', and a number for the date when one follows.
 */
static int signature_line(const pg_cnode *n, const char **pp, const char *end,
			  const char *header, int64_t *time)
{
	const char *p = *pp, *eol = memchr(p, '\n', (size_t)(end - p)), *lt, *gt;
	size_t hlen = strlen(header);
	char why[96];

	if (!eol || p + hlen >= eol || memcmp(p, header, hlen)) {
		snprintf(why, sizeof(why), "it has no %sline", header);
		return malformed(n, why);
	}
	lt = memrchr(p + hlen, '<', (size_t)(eol - p - hlen));
	gt = memrchr(p + hlen, '>', (size_t)(eol - p - hlen));
	if (!lt || !gt || gt <= lt) {
		snprintf(why, sizeof(why), "its %sline has no e-mail", header);
		return malformed(n, why);
	}
	if (gt + 2 < eol && !parse_time(time, gt + 2, eol)) {
		snprintf(why, sizeof(why), "its %sline has no date", header);
		return malformed(n, why);
	}
	*pp = eol + 1;
	return 0;
}

static int parse_header(pg_csrc *s, pg_cnode *n, const char *data, size_t len)
{
	const char *p = data, *end = data + len, *first;
	size_t count = 0, i;
	int64_t unused = 0;
	int err;

	if (len < 46)
		return malformed(n, "it has no tree line");
	p += 46;
	for (first = p; end - p >= 48 && !memcmp(p, "parent ", 7) && p[47] == '\n'; p += 48) {
		pg_oid id;

		if (pg_oid_fromhex(&id, p + 7, PG_OID_HEXSZ) < 0)
			break;
		if (++count > 65535)
			return malformed(n, "it has more than 65535 parents");
	}
	pg_error_clear();
	while (end - p >= 7 && !memcmp(p, "author ", 7))
		if ((err = signature_line(n, &p, end, "author ", &unused)) < 0)
			return err;
	n->time = 0;
	if ((err = signature_line(n, &p, end, "committer ", &n->time)) < 0 ||
	    (err = alloc_parents(n, count)) < 0)
		return err;
	for (i = 0; i < count; i++) {
		pg_oid id;
		pg_cnode *parent;

		pg_oid_fromhex(&id, first + i * 48 + 7, PG_OID_HEXSZ);
		if ((err = pg_csrc_node(&parent, s, &id)) < 0)
			return err;
		n->parents[i] = parent;
		n->nparents = (uint32_t)(i + 1);
	}
	n->gen = PG_GEN_INFINITY;
	return 0;
}

static int parse_object(pg_csrc *s, pg_cnode *n)
{
	git_odb_object *obj = NULL;
	char hex[PG_OID_HEXSZ + 1];
	const char *data;
	size_t len;
	int gerr, err;

	if ((err = pg_repo_pack_commit(&data, &len, s->r, &n->id)) != 0) {
		if (err == 1 && (err = parse_header(s, n, data, len)) == 0)
			s->from_odb++;
		return err;
	}

	if ((err = pg_repo_loose_check(s->r, &n->id)) < 0)
		return err;
	if ((gerr = pg_git_read_commit(&obj, s->r, s->odb, &n->id)) < 0) {
		pg_oid_tohex(hex, &n->id);
		return gerr == GIT_ENOTFOUND ?
		       pg_error_set(PG_ENOTFOUND, "commit %s is not in the repository", hex) :
		       pg_git_fail(gerr, "commit %s", hex);
	}
	if (git_odb_object_type(obj) != GIT_OBJECT_COMMIT) {
		pg_oid_tohex(hex, &n->id);
		err = pg_error_set(PG_EINVALID, "object %s is a %s, not a commit", hex,
				   git_object_type2string(git_odb_object_type(obj)));
	} else {
		err = parse_header(s, n, git_odb_object_data(obj), git_odb_object_size(obj));
	}
	git_odb_object_free(obj);
	if (err == 0)
		s->from_odb++;
	return err;
}

int pg_csrc_parse(pg_csrc *s, pg_cnode *n)
{
	size_t i;
	int err;

	if (n->parsed)
		return 0;
	for (i = 0; !n->looked_up && i < s->r->ngraphs; i++) {
		if (pg_graph_find(s->r->graphs[i], &n->id, &n->pos)) {
			n->graph = (uint32_t)i + 1;
			break;
		}
	}
	n->looked_up = true;
	err = n->graph ? parse_graph(s, n) : parse_object(s, n);
	if (err < 0) {
		if (n->parents != n->two)
			free(n->parents);
		n->parents = n->two;
		n->nparents = 0;
		return err;
	}
	n->parsed = true;
	return 0;
}

int pg_csrc_get(pg_cnode **out, pg_csrc *s, const pg_oid *id)
{
	int err;

	if ((err = pg_csrc_node(out, s, id)) < 0)
		return err;
	return pg_csrc_parse(s, *out);
}
