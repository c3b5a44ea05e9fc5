/* fuzz_graph.c - libFuzzer target: a commit-graph file or chain, opened and walked as the walks read it. */
#include "tests/fuzz/fuzz.h"
#include "tests/fuzz/files.h"
#include "repo/graph.h"
#include "common/buf.h"

#include <openssl/evp.h>

/*
 * An input is files joined by FUZZ_FILE_SEP lines (tests/fuzz/files.h):
 *
 *   one file       objects/info/commit-graph
 *   several        objects/info/commit-graphs/commit-graph-chain, then
 *                  its layers, each written as graph-SUM.graph, SUM its
 *                  checksum; the chain's line i, when it is 40 hex
 *                  digits, is made layer i's SUM
 *
 * Each file's trailing checksum is made to hold (with_checksum): a file
 * whose checksum does not hold is refused before it is parsed, which
 * test_graph tests.
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

/*
 * The file as pg_graph_open takes it: a mutated file's trailing SHA-1 is
 * made to hold again (into buf), else nearly every input would stop at
 * the checksum and the parser behind it would never be reached.  hex gets
 * that checksum, the name git gives a chain's layer.
 */
static unsigned char *with_checksum(char hex[PG_OID_HEXSZ + 1], const fuzz_part *p)
{
	unsigned char md[EVP_MAX_MD_SIZE], *buf = malloc(p->len + 1);
	unsigned n = 0;
	size_t i;

	FUZZ_ASSERT(buf);
	memcpy(buf, p->data, p->len);
	if (p->len < PG_OID_RAWSZ ||
	    !EVP_Digest(buf, p->len - PG_OID_RAWSZ, md, &n, EVP_sha1(), NULL) || n != PG_OID_RAWSZ)
		memset(md, 0, sizeof(md));
	else
		memcpy(buf + p->len - PG_OID_RAWSZ, md, PG_OID_RAWSZ);
	for (i = 0; i < PG_OID_RAWSZ; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return buf;
}

/*
 * A chain's file lists its layers by checksum, bottom first: the fuzzed
 * chain file's lines are kept where they are not a layer's name, and line
 * i of 40 hex digits names layer i as it is now.
 */
static void lay_out(const fuzz_part *parts, size_t nparts)
{
	char hex[MAX_LAYERS][PG_OID_HEXSZ + 1], name[96];
	pg_buf chain = PG_BUF_INIT;
	unsigned char *buf;
	const char *line, *end;
	size_t i;

	if (nparts == 1) {
		buf = with_checksum(hex[0], &parts[0]);
		fuzz_write(&dir, "info/commit-graph", buf, parts[0].len);
		free(buf);
		return;
	}
	for (i = 1; i < nparts && i <= MAX_LAYERS; i++) {
		buf = with_checksum(hex[i - 1], &parts[i]);
		snprintf(name, sizeof(name), "info/commit-graphs/graph-%s.graph", hex[i - 1]);
		fuzz_write(&dir, name, buf, parts[i].len);
		free(buf);
	}
	line = (const char *)parts[0].data;
	end = line + parts[0].len;
	for (i = 0; line < end; i++) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = (size_t)((nl ? nl : end) - line);

		if (n == PG_OID_HEXSZ && i + 1 < nparts && i < MAX_LAYERS)
			pg_buf_put(&chain, hex[i], PG_OID_HEXSZ);
		else
			pg_buf_put(&chain, line, n);
		if (nl)
			pg_buf_putc(&chain, '\n');
		line = nl ? nl + 1 : end;
	}
	fuzz_write(&dir, "info/commit-graphs/commit-graph-chain", chain.ptr ? chain.ptr : "",
		   chain.len);
	pg_buf_release(&chain);
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
