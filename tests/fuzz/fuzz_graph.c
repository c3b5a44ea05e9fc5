/* fuzz_graph.c - libFuzzer target: a commit-graph file or chain, opened and walked as the walks read it. */
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/files.h"
#include "repo/graph.h"

/*
 * An input is files joined by FUZZ_FILE_SEP lines (tests/fuzz/files.h):
 *
 *   one file       objects/info/commit-graph
 *   several        objects/info/commit-graphs/commit-graph-chain, then
 *                  its layers: layer i is written as graph-NAME.graph,
 *                  NAME the chain's line i (when it is 40 hex digits, else
 *                  a name no line can give)
 *
 * The graph is opened through pg_graph_open, as repo/commits.c does, and
 * every commit of it (at most MAX_POS) is read as a walk reads it: its id,
 * a lookup of that id, its data, its parents and their ids, its
 * generation.  What graph.h promises is checked: a corrupt file or entry
 * is an error naming it, never a read outside the file (ASan) or a
 * position outside the graph.
 */
#define MAX_LAYERS 4
#define MAX_POS 1024
#define MAX_PARENTS 64

static fuzz_dir dir;

/* A failure is one graph.h allows, with its message set. */
static void check_error(int err)
{
	FUZZ_ASSERT(err == PG_EINVALID || err == PG_EIO || err == PG_ENOMEM);
	FUZZ_ASSERT(pg_error_last_code() == err && *pg_error_last());
	pg_error_clear();
}

static bool is_hex_name(const char *s, size_t len)
{
	size_t i;

	if (len != PG_OID_HEXSZ)
		return false;
	for (i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static void lay_out(const fuzz_part *parts, size_t nparts)
{
	const char *line, *end;
	size_t i;

	if (nparts == 1) {
		fuzz_write(&dir, "info/commit-graph", parts[0].data, parts[0].len);
		return;
	}
	fuzz_write(&dir, "info/commit-graphs/commit-graph-chain", parts[0].data, parts[0].len);
	line = (const char *)parts[0].data;
	end = line + parts[0].len;
	for (i = 1; i < nparts && i <= MAX_LAYERS; i++) {
		const char *nl = line < end ? memchr(line, '\n', (size_t)(end - line)) : NULL;
		size_t len = line < end ? (size_t)((nl ? nl : end) - line) : 0;
		char name[96];

		if (is_hex_name(line, len))
			snprintf(name, sizeof(name), "info/commit-graphs/graph-%.40s.graph", line);
		else
			snprintf(name, sizeof(name), "info/commit-graphs/graph-layer-%zu.graph", i);
		fuzz_write(&dir, name, parts[i].data, parts[i].len);
		line = nl ? nl + 1 : end;
	}
}

/* id is found where the graph lists it, when it is found at all. */
static void lookup(const pg_graph *g, const pg_oid *id)
{
	uint32_t pos;
	pg_oid at;

	if (!pg_graph_find(g, id, &pos))
		return;
	FUZZ_ASSERT(pos < pg_graph_count(g));
	FUZZ_ASSERT(pg_graph_oid(&at, g, pos) == 0);
	FUZZ_ASSERT(!memcmp(at.id, id->id, PG_OID_RAWSZ));
}

static void walk(const pg_graph *g)
{
	uint32_t n = pg_graph_count(g), pos, i;
	enum pg_graph_gen kind = pg_graph_gen_kind(g);
	pg_graph_commit c;
	pg_oid id;
	int err;

	FUZZ_ASSERT(kind == PG_GRAPH_GEN_LEVEL || kind == PG_GRAPH_GEN_DATE);
	for (pos = 0; pos < n && pos < MAX_POS; pos++) {
		/* the id table holds as many ids as the graph counts commits */
		FUZZ_ASSERT(pg_graph_oid(&id, g, pos) == 0);
		lookup(g, &id);
		if ((err = pg_graph_read(&c, g, pos)) < 0) {
			check_error(err);
			continue;
		}
		FUZZ_ASSERT(c.pos == pos && c.nparents <= 65535);
		for (i = 0; i < c.nparents && i < MAX_PARENTS; i++) {
			uint32_t p;
			pg_oid pid;

			if ((err = pg_graph_parent(&p, g, &c, i)) < 0) {
				check_error(err);
				break;
			}
			FUZZ_ASSERT(p < n);
			FUZZ_ASSERT(pg_graph_oid(&pid, g, p) == 0);
		}
		(void)pg_graph_generation(&c, kind);
		(void)pg_graph_generation(&c, PG_GRAPH_GEN_LEVEL);
	}
	FUZZ_ASSERT(pg_graph_oid(&id, g, n) == PG_EINVALID);
	FUZZ_ASSERT(pg_graph_read(&c, g, n) == PG_EINVALID);
	pg_error_clear();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_part parts[MAX_LAYERS + 1];
	size_t nparts = fuzz_split(parts, MAX_LAYERS + 1, data, size);
	pg_graph *g = NULL;
	pg_oid id;
	int err;

	fuzz_dir_reset(&dir, "fuzz-graph", "info/commit-graphs");
	lay_out(parts, nparts);
	if ((err = pg_graph_open(&g, dir.objects)) < 0) {
		check_error(err);
		return 0;
	}
	/* a chain file that is there opens or fails: never "no graph" */
	FUZZ_ASSERT(g);
	walk(g);
	/* ids no well-formed graph of this size holds, and the input's last bytes */
	memset(id.id, 0, sizeof(id.id));
	lookup(g, &id);
	memset(id.id, 0xff, sizeof(id.id));
	lookup(g, &id);
	if (size >= PG_OID_RAWSZ) {
		memcpy(id.id, data + size - PG_OID_RAWSZ, PG_OID_RAWSZ);
		lookup(g, &id);
	}
	pg_graph_free(g);
	return 0;
}
