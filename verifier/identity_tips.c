/* identity_tips.c - the refs' tips an identity index records, and the commits other tips reach and a ref's does not (kept in HASH.others). */
#include "verifier/identity_index.h"
#include "verifier/identity_internal.h"
#include "common/array.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/map.h"
#include "common/search.h"
#include "common/testpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- the refs' tips ----------------------------------------------------------------- */

const tip_slot *pg_identity_find_tip(const pg_identity_index *x, const char *ref)
{
	size_t i;

	for (i = 0; i < x->ntips; i++)
		if (!strcmp(x->tips[i].ref, ref))
			return &x->tips[i];
	return NULL;
}

/*
 * Let go of the recorded tips that are no commit in r (a branch deleted and
 * its objects pruned): true when one was.  What only it reached can no
 * longer be told from the rest, so the index is made again.
 */
bool pg_identity_tips_gone(pg_identity_index *x, pg_repo *r)
{
	size_t i, k = 0;

	for (i = 0; i < x->ntips; i++) {
		enum pg_object_type type = PG_OBJ_NONE;

		if (pg_repo_object_type(&type, r, &x->tips[i].tip) < 0 || type != PG_OBJ_COMMIT) {
			pg_error_clear();
			free(x->tips[i].ref);
			continue;
		}
		x->tips[k++] = x->tips[i];
	}
	i = x->ntips;
	x->ntips = k;
	return k != i;
}

/* The ids of tips[0..n), into *out (malloc()ed). */
int pg_identity_tip_ids(pg_oid **out, const tip_slot *tips, size_t n)
{
	size_t i;

	if (!(*out = malloc((n + 1) * sizeof(**out))))
		return pg_error_oom();
	for (i = 0; i < n; i++)
		(*out)[i] = tips[i].tip;
	return 0;
}

/*
 * The tips to record: ref's at tip first (none when tip is NULL), then
 * those of from[0..nfrom) but ref's own, the most recently moved first,
 * PG_IDENTITY_INDEX_TIPS in all (a caller that must keep them all checks
 * first).
 */
static int tips_with(tip_slot **out, size_t *n, const tip_slot *from, size_t nfrom,
		     const char *ref, const pg_oid *tip)
{
	tip_slot *v;
	size_t i, k = 0;

	*out = NULL;
	*n = 0;
	if (!(v = calloc(nfrom + 2, sizeof(*v))))
		return pg_error_oom();
	if (tip) {
		v[k].tip = *tip;
		if (!(v[k++].ref = pg_strdup(ref)))
			goto oom;
	}
	for (i = 0; i < nfrom && k < PG_IDENTITY_INDEX_TIPS; i++) {
		if (!strcmp(from[i].ref, ref))
			continue;
		v[k].tip = from[i].tip;
		if (!(v[k++].ref = pg_strdup(from[i].ref)))
			goto oom;
	}
	*out = v;
	*n = k;
	return 0;
oom:
	pg_identity_tips_free(v, k);
	return pg_error_oom();
}

/*
 * Whether tip reaches a commit the tips of from[0..nfrom) other than ref's
 * do not: only then is it recorded, so that a ref that brings nothing (a
 * release branch below master) takes no slot.  The walk by date may keep
 * a hidden commit under clock skew, never leaves out one of tip's: "none"
 * is exact.
 */
static int tip_brings(bool *out, pg_repo *r, const pg_oid *tip, const tip_slot *from,
		      size_t nfrom, const char *ref)
{
	pg_oid *hide = NULL, *ids = NULL;
	size_t nhide = 0, n = 0, i;
	int err = 0;

	*out = true;
	if (!(hide = malloc((nfrom + 1) * sizeof(*hide))))
		return pg_error_oom();
	for (i = 0; i < nfrom; i++)
		if (strcmp(from[i].ref, ref))
			hide[nhide++] = from[i].tip;
	if (nhide && (err = pg_repo_walk_range(&ids, &n, r, tip, hide, nhide)) == 0)
		*out = n != 0;
	free(ids);
	free(hide);
	return err;
}

/*
 * The tips to write (tips_with): ref's at tip only when it brings commits
 * of its own (brings: known to); *recorded says whether it does.
 */
int pg_identity_record_tips(tip_slot **out, size_t *n, bool *recorded, pg_repo *r,
		       const tip_slot *from, size_t nfrom, const char *ref, const pg_oid *tip,
		       bool brings)
{
	int err;

	if (!brings && (err = tip_brings(&brings, r, tip, from, nfrom, ref)) < 0)
		return err;
	*recorded = brings;
	return tips_with(out, n, from, nfrom, ref, brings ? tip : NULL);
}

/*
 * The commits the tips reach and tip does not (git rev-list TIPS ^tip),
 * sorted, into x->others: what a probe for tip's ref never answers, nor
 * pg_identity_index_count counts, so that it answers what an index of
 * tip's history alone would.  It must be exact: a commit of tip's taken
 * for another ref's would hide a copy of it.  Each tip's range is guessed
 * by date first (cheap; the guess never leaves out a commit of the tip's,
 * so an empty one is exact), given tip and the tips kept before it; the
 * tips that may bring some are then walked again at once, exactly
 * (pg_repo_walk_range_exact: without a commit-graph, under clock skew,
 * the guess keeps commits tip reaches).  With drop (tip is among the tips
 * recorded), a tip that adds none is let go of (*ntips shrinks): the index
 * still holds exactly what the tips kept reach.  On error the tips are as
 * they were.
 */
static int others_of(pg_identity_index *x, pg_repo *r, const pg_oid *tip, tip_slot *tips,
		     size_t *ntips, bool drop, bool *walked)
{
	pg_oid *hide = NULL, *want = NULL, *ids = NULL, *all = NULL;
	bool *none = NULL;
	size_t nhide = 0, nwant = 0, n = 0, count = 0, i, k;
	int err = 0;

	free(x->others);
	x->others = NULL;
	x->nothers = 0;
	if (!(hide = malloc((*ntips + 1) * sizeof(*hide))) ||
	    !(want = malloc((*ntips + 1) * sizeof(*want))) ||
	    !(none = calloc(*ntips + 1, sizeof(*none)))) {
		err = pg_error_oom();
		goto done;
	}
	hide[nhide++] = *tip;
	for (i = 0; i < *ntips; i++) {
		if (!pg_oid_cmp(&tips[i].tip, tip))
			continue;
		if ((err = pg_repo_walk_range(&ids, &n, r, &tips[i].tip, hide, nhide)) < 0)
			goto done;
		free(ids);
		ids = NULL;
		if (!n) {
			none[i] = true;
			continue;
		}
		want[nwant++] = tips[i].tip;
		hide[nhide++] = tips[i].tip;
	}
	/* a test sees that a warm open walks nothing here (19-hostile-index.t) */
	if ((*walked = nwant > 0))
		pg_testpoint("index", "others walked");
	if (nwant && (err = pg_repo_walk_range_exact(&all, &count, r, want, nwant, tip, 1)) < 0)
		goto done;
	if (count)
		qsort(all, count, sizeof(*all), pg_identity_oid_cmp);
	for (i = 0, k = 0; drop && i < *ntips; i++) {
		if (none[i]) {
			free(tips[i].ref);
			continue;
		}
		tips[k++] = tips[i];
	}
	if (drop)
		*ntips = k;
	x->others = all;
	x->nothers = count;
	all = NULL;
done:
	free(hide);
	free(want);
	free(none);
	free(all);
	return err;
}

bool pg_identity_is_other(const pg_identity_index *x, const unsigned char *id)
{
	return x->nothers && bsearch(id, x->others, x->nothers, sizeof(*x->others), pg_identity_oid_cmp);
}

/*
 * The others set of a ref, kept beside its .chain file (REFSTEM.others):
 * computed, it walks the tip's whole history when there is no commit-graph
 * (seconds for the kernel), on every open of each kind.  It depends on the
 * tip and the recorded tips' ids alone, so it is kept keyed by both, and
 * the two kinds share it when their tips are the same.  All numbers
 * little-endian:
 *	0  "PGOTHER1", u32 version, u32 how many records (1..OTHERS_RECORDS)
 *	16 each record: the tip (20 bytes), u32 0, u64 digest of the tips,
 *	   u64 count, count ids sorted, each once
 *	then u64 checksum of all before
 * Two records: the .idx and .subj files may record other tips for a while
 * (one made again), and each would otherwise write over the other's.
 */
#define OTHERS_MAGIC "PGOTHER1"
#define OTHERS_VERSION 2 /* 2: the index format 4's checksum */
#define OTHERS_RECORDS 2
#define OTHERS_HEAD 16
#define OTHERS_REC 40

typedef struct others_rec {
	const unsigned char *at; /* the record, its ids at at + OTHERS_REC */
	pg_oid tip;
	uint64_t digest;
	size_t count;
} others_rec;

/* Of the tips' ids in any order: the set is the same whichever ref moved last. */
static uint64_t tips_digest(const tip_slot *tips, size_t n)
{
	uint64_t sum = 0, h;
	size_t i;

	for (i = 0; i < n; i++) {
		h = pg_identity_checksum(tips[i].tip.id, PG_OID_RAWSZ) * 0x9e3779b97f4a7c15ULL;
		sum += h ^ h >> 29;
	}
	return pg_identity_checksum((const unsigned char *)&sum, sizeof(sum)) ^ n;
}

/* The records of a sidecar's bytes, each checked: how many, 0 when it does not hold. */
static size_t others_parse(others_rec *rec, const unsigned char *p, size_t len)
{
	size_t off = OTHERS_HEAD, n, i, k;

	if (len < OTHERS_HEAD + 8 || memcmp(p, OTHERS_MAGIC, 8) ||
	    pg_identity_get32(p + 8) != OTHERS_VERSION || (n = pg_identity_get32(p + 12)) < 1 || n > OTHERS_RECORDS ||
	    pg_identity_checksum(p, len - 8) != pg_identity_get64(p + len - 8))
		return 0;
	len -= 8;
	for (i = 0; i < n; i++) {
		const unsigned char *ids;
		uint64_t count;

		if (len - off < OTHERS_REC || pg_identity_get32(p + off + 20))
			return 0;
		count = pg_identity_get64(p + off + 32);
		if (count > (len - off - OTHERS_REC) / PG_OID_RAWSZ)
			return 0;
		rec[i].at = p + off;
		memcpy(rec[i].tip.id, p + off, PG_OID_RAWSZ);
		rec[i].digest = pg_identity_get64(p + off + 24);
		rec[i].count = (size_t)count;
		ids = p + off + OTHERS_REC;
		/* a probe's bsearch trusts the order: strictly ascending, or not used */
		for (k = 1; k < rec[i].count; k++)
			if (memcmp(ids + (k - 1) * PG_OID_RAWSZ, ids + k * PG_OID_RAWSZ,
				   PG_OID_RAWSZ) >= 0)
				return 0;
		off += OTHERS_REC + rec[i].count * PG_OID_RAWSZ;
	}
	return off == len ? n : 0;
}

/* The ref's sidecar, read and checked into *buf: how many records, 0 when none holds. */
static size_t others_read(others_rec *rec, pg_buf *buf, const pg_identity_index *x)
{
	pg_buf path = PG_BUF_INIT;
	size_t n = 0;

	/* no record holds more ids than the file holds commits */
	pg_buf_init(buf, OTHERS_HEAD + 8 +
			 OTHERS_RECORDS * (OTHERS_REC + (x->count + 1) * PG_OID_RAWSZ));
	if (pg_identity_index_ref_file(&path, x, ".others") == 0 &&
	    pg_buf_read_file(buf, path.ptr) == 0)
		n = others_parse(rec, (const unsigned char *)buf->ptr, buf->len);
	pg_error_clear();
	pg_buf_release(&path);
	return n;
}

/*
 * Keep x's others set for tip at the tips of digest, and of the records
 * there (rec[0..n)) the newest other one.  A cache: a sidecar that cannot
 * be written is computed again next time, never an error.
 */
static void others_write(const pg_identity_index *x, const pg_oid *tip, uint64_t digest,
			 const others_rec *rec, size_t n)
{
	pg_buf path = PG_BUF_INIT;
	unsigned char *b = NULL, *p;
	const others_rec *keep = NULL;
	size_t len = OTHERS_HEAD + OTHERS_REC + x->nothers * PG_OID_RAWSZ + 8, i;

	for (i = 0; i < n && !keep; i++)
		if (rec[i].digest != digest || pg_oid_cmp(&rec[i].tip, tip))
			keep = &rec[i];
	if (keep)
		len += OTHERS_REC + keep->count * PG_OID_RAWSZ;
	if (!(b = calloc(1, len)) || pg_identity_index_ref_file(&path, x, ".others") < 0)
		goto done;
	memcpy(b, OTHERS_MAGIC, 8);
	pg_identity_put32(b + 8, OTHERS_VERSION);
	pg_identity_put32(b + 12, keep ? 2 : 1);
	p = b + OTHERS_HEAD;
	memcpy(p, tip->id, PG_OID_RAWSZ);
	pg_identity_put64(p + 24, digest);
	pg_identity_put64(p + 32, x->nothers);
	for (i = 0; i < x->nothers; i++)
		memcpy(p + OTHERS_REC + i * PG_OID_RAWSZ, x->others[i].id, PG_OID_RAWSZ);
	p += OTHERS_REC + x->nothers * PG_OID_RAWSZ;
	if (keep) {
		memcpy(p, keep->at, OTHERS_REC + keep->count * PG_OID_RAWSZ);
		p += OTHERS_REC + keep->count * PG_OID_RAWSZ;
	}
	pg_identity_put64(p, pg_identity_checksum(b, len - 8));
	(void)pg_write_file_atomic(path.ptr, b, len);
done:
	pg_error_clear();
	free(b);
	pg_buf_release(&path);
}

/*
 * others_of, from the ref's sidecar when it was kept for tip and these
 * very tips (*cached), else computed and kept.  With drop the tips may
 * change (others_of): always computed, and kept for the tips left.
 */
int pg_identity_others_cached(pg_identity_index *x, pg_repo *r, const pg_oid *tip, tip_slot *tips,
			 size_t *ntips, bool drop, bool *cached)
{
	others_rec rec[OTHERS_RECORDS];
	pg_buf buf = PG_BUF_INIT;
	uint64_t digest = tips_digest(tips, *ntips);
	size_t n = others_read(rec, &buf, x), i, k;
	bool walked = false;
	int err = 0;

	*cached = false;
	for (i = 0; !drop && i < n; i++) {
		if (rec[i].digest != digest || pg_oid_cmp(&rec[i].tip, tip))
			continue;
		free(x->others);
		x->others = NULL;
		x->nothers = 0;
		if (rec[i].count &&
		    !(x->others = malloc(rec[i].count * sizeof(*x->others)))) {
			err = pg_error_oom();
			goto done;
		}
		for (k = 0; k < rec[i].count; k++)
			memcpy(x->others[k].id, rec[i].at + OTHERS_REC + k * PG_OID_RAWSZ,
			       PG_OID_RAWSZ);
		x->nothers = rec[i].count;
		*cached = true;
		goto done;
	}
	if ((err = others_of(x, r, tip, tips, ntips, drop, &walked)) < 0)
		goto done;
	/* what took no exact walk (one ref, or none with commits of its own) is not worth a file */
	if (walked)
		others_write(x, tip, tips_digest(tips, *ntips), rec, n);
done:
	pg_buf_release(&buf);
	return err;
}

/*
 * After a walk failed with err: let go of the recorded tips but tip whose
 * own history can no longer be walked (an object gone, a commit damaged),
 * as of a tip gone: true when one was, and the index is made from the
 * rest.  Else the failure is tip's own, and stays the error.  Each tip's
 * whole history is walked: only after a failure.
 */
bool pg_identity_drop_broken(pg_identity_index *x, pg_repo *r, const pg_oid *tip, int err)
{
	char saved[512];
	size_t i, k = 0, n;

	if (err != PG_ENOTFOUND && err != PG_EINVALID)
		return false;
	snprintf(saved, sizeof(saved), "%s", pg_error_last());
	for (i = 0; i < x->ntips; i++) {
		pg_oid *ids = NULL;
		int e = 0;

		if (pg_oid_cmp(&x->tips[i].tip, tip))
			e = pg_repo_walk_range(&ids, &n, r, &x->tips[i].tip, NULL, 0);
		free(ids);
		if (e == PG_ENOTFOUND || e == PG_EINVALID) {
			free(x->tips[i].ref);
			continue;
		}
		x->tips[k++] = x->tips[i];
	}
	i = x->ntips;
	x->ntips = k;
	if (k == i)
		pg_error_set(err, "%s", saved);
	else
		pg_error_clear();
	return k != i;
}

