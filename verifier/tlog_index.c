/* tlog_index.c - a clone of the transparency log, its epochs read through repo/ and indexed by repository and ref in home/tlog/. */
#include "verifier/tlog_internal.h"
#include "common/array.h"
#include "common/digest.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/hex.h"
#include "repo/object.h"

/*
 * The index is one file per log, home/tlog/<id>.idx, text with fixed-width
 * entries so that a probe is a binary search of the mapped file:
 *
 *   pullgate-tlog-index 1 EPOCHS
 *   EEEEEE TIP COUNT            per epoch: its master as indexed, commits read
 *   entries M
 *   KEY EEEEEE SSSSSSSSSS COMMIT NEW   M of them, sorted
 *
 * KEY is the first 32 hex digits of SHA-256("repo\nref"), repo as
 * pg_tlog_repo_path writes it; EEEEEE the epoch, SSSSSSSSSS the commit's
 * place in it, so that the entries of one key are in log order.  Nothing
 * in it is trusted: it only points at records, which are read and checked
 * again; a line that does not parse makes it again.
 */
#define MAGIC "pullgate-tlog-index 1 "
#define KEY_HEX 32
#define ENTRY_LEN (KEY_HEX + 1 + 6 + 1 + 10 + 1 + PG_OID_HEXSZ + 1 + PG_OID_HEXSZ + 1)
#define INDEX_MAX ((size_t)4 << 30)      /* the index file's own cap */

typedef struct epoch_state {
	pg_oid tip;       /* zero: none indexed */
	uint64_t count;   /* commits read from its root */
} epoch_state;

struct pg_tlog {
	char *path;       /* the log's directory, absolute */
	char *idx_path;
	void *map;        /* the index, mapped */
	size_t map_len;
	const char *entries;
	size_t nentries;
	pg_repo **repos;  /* per epoch, opened on demand */
	size_t nepochs;
};

static void unmap(pg_tlog *t)
{
	if (t->map)
		pg_unmap_file(t->map, t->map_len);
	t->map = NULL;
	t->entries = NULL;
	t->nentries = 0;
}

void pg_tlog_free(pg_tlog *t)
{
	size_t i;

	if (!t)
		return;
	unmap(t);
	for (i = 0; i < t->nepochs; i++)
		pg_repo_free(t->repos[i]);
	free(t->repos);
	free(t->path);
	free(t->idx_path);
	free(t);
}

static int key_of(char out[KEY_HEX + 1], const char *repo_path, const char *ref)
{
	char sha[PG_SHA256_HEXSZ + 1];
	pg_buf b = PG_BUF_INIT;
	int err;

	if ((err = pg_buf_printf(&b, "%s\n%s", repo_path, ref)) == 0 &&
	    (err = pg_sha256_hex(sha, b.ptr, b.len)) == 0) {
		memcpy(out, sha, KEY_HEX);
		out[KEY_HEX] = '\0';
	}
	pg_buf_release(&b);
	return err;
}

static bool digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

/* One entry of the index, checked: the fields where they must be, hex where hex. */
static bool entry_ok(const char *e)
{
	return e[KEY_HEX] == ' ' && e[KEY_HEX + 7] == ' ' && e[KEY_HEX + 18] == ' ' &&
	       e[KEY_HEX + 59] == ' ' && e[ENTRY_LEN - 1] == '\n' && pg_hex_is(e, KEY_HEX) &&
	       digits(e + KEY_HEX + 1, 6) && digits(e + KEY_HEX + 8, 10) &&
	       pg_hex_is(e + KEY_HEX + 19, PG_OID_HEXSZ) &&
	       pg_hex_is(e + KEY_HEX + 60, PG_OID_HEXSZ);
}

static unsigned entry_epoch(const char *e)
{
	return (unsigned)strtoul(e + KEY_HEX + 1, NULL, 10);
}

/* Read the header of the mapped index: the epochs' states and where the entries start. */
static bool parse_header(epoch_state **states, size_t *n, pg_tlog *t)
{
	const char *p = t->map, *end = p + t->map_len;
	char *stop;
	unsigned long long ne, m, i;

	*states = NULL;
	*n = 0;
	if (t->map_len < strlen(MAGIC) || memcmp(p, MAGIC, strlen(MAGIC)))
		return false;
	p += strlen(MAGIC);
	ne = strtoull(p, &stop, 10);
	if (stop == p || *stop != '\n' || ne > PG_TLOG_MAX_EPOCHS)
		return false;
	p = stop + 1;
	if (ne && !(*states = calloc(ne, sizeof(**states))))
		return false;
	for (i = 0; i < ne; i++) {
		/* EEEEEE SP TIP SP COUNT LF */
		if (end - p < 6 + 1 + PG_OID_HEXSZ + 1 + 10 + 1 || !digits(p, 6) ||
		    strtoul(p, NULL, 10) != i || p[6] != ' ' ||
		    pg_oid_fromhex(&(*states)[i].tip, p + 7, PG_OID_HEXSZ) < 0 ||
		    p[7 + PG_OID_HEXSZ] != ' ' || !digits(p + 8 + PG_OID_HEXSZ, 10) ||
		    p[18 + PG_OID_HEXSZ] != '\n')
			goto bad;
		(*states)[i].count = strtoull(p + 8 + PG_OID_HEXSZ, NULL, 10);
		p += 19 + PG_OID_HEXSZ;
	}
	if (end - p < 9 || memcmp(p, "entries ", 8))
		goto bad;
	p += 8;
	m = strtoull(p, &stop, 10);
	if (stop == p || stop >= end || *stop != '\n')
		goto bad;
	p = stop + 1;
	if ((unsigned long long)(end - p) / ENTRY_LEN != m || (size_t)(end - p) % ENTRY_LEN)
		goto bad;
	t->entries = p;
	t->nentries = (size_t)m;
	*n = (size_t)ne;
	return true;
bad:
	free(*states);
	*states = NULL;
	return false;
}

static int load_index(epoch_state **states, size_t *n, bool *damaged, pg_tlog *t)
{
	int err;

	*damaged = false;
	unmap(t);
	if ((err = pg_map_file(&t->map, &t->map_len, t->idx_path)) == PG_ENOTFOUND)
		return 0;
	if (err == 0 && parse_header(states, n, t))
		return 0;
	/* not there as a file, cut short, overwritten: made again */
	unmap(t);
	*damaged = true;
	return 0;
}

static int open_epoch(pg_repo **out, pg_tlog *t, size_t e)
{
	pg_buf dir = PG_BUF_INIT;
	int err = 0;

	*out = NULL;
	if (e < t->nepochs && t->repos[e]) {
		*out = t->repos[e];
		return 0;
	}
	if (e >= t->nepochs)
		return pg_error_set(PG_ENOTFOUND, "the log has no epoch %zu", e);
	if ((err = pg_buf_printf(&dir, "%s/git/%zu.git", t->path, e)) == 0 &&
	    (err = pg_repo_open(&t->repos[e], dir.ptr)) == 0)
		*out = t->repos[e];
	pg_buf_release(&dir);
	return err;
}

int pg_tlog_read_message(pg_buf *out, bool *deletion, pg_repo *r, const pg_oid *id)
{
	enum pg_object_type m, d;
	pg_oid tree;
	int err;

	if (deletion)
		*deletion = false;
	pg_buf_init(out, PG_TLOG_RECORD_MAX);
	if ((err = pg_repo_commit_tree(&tree, r, id)) < 0 ||
	    (err = pg_repo_tree_entry_type(&m, r, &tree, "m")) < 0)
		return err;
	if (m == PG_OBJ_NONE) {
		if ((err = pg_repo_tree_entry_type(&d, r, &tree, "d")) < 0)
			return err;
		if (deletion)
			*deletion = d == PG_OBJ_BLOB;
		return pg_error_set(PG_ENOTFOUND, d == PG_OBJ_BLOB ? "the commit deletes a message "
				    "('d', no 'm')" : "the commit's tree has no 'm'");
	}
	if (m != PG_OBJ_BLOB)
		return pg_error_set(PG_ENOTFOUND, "the commit's 'm' is a %s, not a file",
				    m == PG_OBJ_COMMIT ? "gitlink" : pg_object_type_name(m));
	return pg_repo_tree_read_file(out, r, &tree, "m");
}

/* The entries of one record: one a change. */
static int add_entries(pg_buf *out, const pg_tlog_record *rec, size_t e, uint64_t seq,
		       const pg_oid *commit)
{
	pg_buf path = PG_BUF_INIT;
	char key[KEY_HEX + 1], chex[PG_OID_HEXSZ + 1], nhex[PG_OID_HEXSZ + 1];
	size_t i;
	int err;

	if ((err = pg_tlog_repo_path(&path, rec->repo)) < 0)
		goto done;
	pg_oid_tohex(chex, commit);
	for (i = 0; i < rec->nchanges; i++) {
		pg_oid_tohex(nhex, &rec->changes[i].new_id);
		if ((err = key_of(key, path.ptr, rec->changes[i].ref)) < 0 ||
		    (err = pg_buf_printf(out, "%s %06zu %010llu %s %s\n", key, e,
					 (unsigned long long)seq, chex, nhex)) < 0)
			goto done;
	}
done:
	pg_buf_release(&path);
	return err;
}

int pg_tlog_walk(pg_oid **ids, size_t *n, bool *found, pg_repo *r, const pg_oid *tip,
		 const pg_oid *since, size_t e, const volatile sig_atomic_t *cancel)
{
	pg_oid at = *tip;
	size_t alloc = 0;
	int err = 0;

	*ids = NULL;
	*n = 0;
	*found = false;
	while (!pg_oid_is_zero(&at)) {
		pg_commit *c = NULL;

		if (!pg_oid_is_zero(since) && !pg_oid_cmp(&at, since)) {
			*found = true;
			break;
		}
		if (cancel && *cancel && !(*n % 1024)) {
			err = pg_error_set(PG_ECANCELLED, "epoch %zu: its walk was cancelled", e);
			break;
		}
		if (*n == PG_TLOG_MAX_WALK) {
			err = pg_error_set(PG_ETOOBIG, "epoch %zu has more than %zu new commits",
					   e, PG_TLOG_MAX_WALK);
			break;
		}
		if (PG_ARRAY_GROW(*ids, *n + 1, alloc) < 0 ||
		    (err = pg_repo_read_commit(&c, r, &at)) < 0) {
			err = err < 0 ? err : PG_ENOMEM;
			break;
		}
		(*ids)[(*n)++] = at;
		/* public-inbox writes each epoch as one line of commits */
		if (c->nparents)
			at = c->parents[0];
		else
			memset(&at, 0, sizeof(at));
		pg_commit_free(c);
	}
	if (err < 0) {
		free(*ids);
		*ids = NULL;
		*n = 0;
	}
	return err;
}

/*
 * Read epoch e's commits from its master down to the one indexed (or to
 * the root, when that one is not on it: the epoch was rewritten), then
 * their records, oldest first, into fresh entries.  *rewritten says the
 * epoch's old entries are to go.
 */
static int read_epoch(pg_buf *fresh, epoch_state *st, bool *rewritten, pg_tlog_info *info,
		      pg_tlog *t, size_t e)
{
	pg_repo *r;
	pg_oid tip, *ids = NULL;
	size_t n = 0, i;
	pg_buf msg = PG_BUF_INIT;
	bool found = false;
	int err;

	*rewritten = false;
	if ((err = open_epoch(&r, t, e)) < 0)
		return err;
	if ((err = pg_repo_ref_target(&tip, r, "refs/heads/master")) == PG_ENOTFOUND)
		memset(&tip, 0, sizeof(tip)), err = 0;
	if (err < 0 || !pg_oid_cmp(&tip, &st->tip))
		return err;
	if ((err = pg_tlog_walk(&ids, &n, &found, r, &tip, &st->tip, e, NULL)) < 0)
		goto done;
	if (!found && !pg_oid_is_zero(&st->tip)) {
		*rewritten = true;
		st->count = 0;
	}
	for (i = n; i-- > 0;) {
		pg_tlog_record *rec = NULL;

		pg_buf_release(&msg);
		err = pg_tlog_read_message(&msg, NULL, r, &ids[i]);
		if (err == 0)
			err = pg_tlog_record_parse(&rec, msg.ptr, msg.len);
		if (err == 0)
			err = add_entries(fresh, rec, e, st->count + (n - 1 - i), &ids[i]);
		pg_tlog_record_free(rec);
		if (err == PG_ENOMEM)
			goto done;
		/* a commit with no "m" (a deletion) or no push record in it: nothing to index */
		if (err == PG_EINVALID || err == PG_ETOOBIG || err == PG_EUNSUPPORTED)
			info->unreadable++;
		else if (err < 0 && err != PG_ENOTFOUND)
			goto done;
		err = 0;
	}
	st->tip = tip;
	st->count += n;
	info->added += n;
done:
	pg_buf_release(&msg);
	free(ids);
	return err;
}

static int cmp_entry(const void *a, const void *b)
{
	return memcmp(a, b, ENTRY_LEN);
}

/* The old entries (less the dropped epochs') and the fresh ones, merged in order, with the header. */
static int write_index(pg_tlog *t, const epoch_state *states, size_t n, const bool *drop,
		       pg_buf *fresh)
{
	pg_buf out = PG_BUF_INIT;
	char hex[PG_OID_HEXSZ + 1];
	size_t nfresh = fresh->len / ENTRY_LEN, i = 0, j = 0, kept = 0, k;
	int err = 0;

	pg_buf_init(&out, INDEX_MAX);
	qsort(fresh->ptr, nfresh, ENTRY_LEN, cmp_entry);
	for (k = 0; k < t->nentries; k++) {
		const char *e = t->entries + k * ENTRY_LEN;

		if (!entry_ok(e))
			return pg_error_set(PG_EINVALID, "index '%s' is damaged", t->idx_path);
		kept += entry_epoch(e) < n && !drop[entry_epoch(e)];
	}
	if ((err = pg_buf_printf(&out, MAGIC "%zu\n", n)) < 0)
		goto done;
	for (k = 0; k < n; k++) {
		pg_oid_tohex(hex, &states[k].tip);
		if ((err = pg_buf_printf(&out, "%06zu %s %010llu\n", k, hex,
					 (unsigned long long)states[k].count)) < 0)
			goto done;
	}
	if ((err = pg_buf_printf(&out, "entries %zu\n", kept + nfresh)) < 0)
		goto done;
	while (i < t->nentries || j < nfresh) {
		const char *old = i < t->nentries ? t->entries + i * ENTRY_LEN : NULL;
		const char *neu = j < nfresh ? fresh->ptr + j * ENTRY_LEN : NULL;

		if (old && (entry_epoch(old) >= n || drop[entry_epoch(old)])) {
			i++;
			continue;
		}
		if (old && (!neu || memcmp(old, neu, ENTRY_LEN) <= 0)) {
			err = pg_buf_put(&out, old, ENTRY_LEN);
			i++;
		} else {
			err = pg_buf_put(&out, neu, ENTRY_LEN);
			j++;
		}
		if (err < 0)
			goto done;
	}
	err = pg_write_file_atomic(t->idx_path, out.ptr, out.len);
done:
	pg_buf_release(&out);
	return err;
}

static int index_path(char **out, const char *abs, const char *home)
{
	char sha[PG_SHA256_HEXSZ + 1];
	pg_buf b = PG_BUF_INIT;
	int err;

	*out = NULL;
	if ((err = pg_sha256_hex(sha, abs, strlen(abs))) < 0 ||
	    (err = pg_buf_printf(&b, "%s/tlog", home)) < 0 || (err = pg_mkdir_p(b.ptr)) < 0 ||
	    (err = pg_buf_printf(&b, "/%.16s.idx", sha)) < 0) {
		pg_buf_release(&b);
		return err;
	}
	*out = pg_buf_detach(&b);
	return *out ? 0 : PG_ENOMEM;
}

size_t pg_tlog_count_epochs(const char *abs)
{
	pg_buf dir = PG_BUF_INIT;
	size_t n = 0;

	while (n < PG_TLOG_MAX_EPOCHS) {
		pg_buf_clear(&dir);
		if (pg_buf_printf(&dir, "%s/git/%zu.git", abs, n) < 0 || !pg_is_dir(dir.ptr))
			break;
		n++;
	}
	pg_buf_release(&dir);
	return n;
}

int pg_tlog_open(pg_tlog **out, pg_tlog_info *info, const char *path, const char *home)
{
	pg_tlog *t = NULL;
	pg_tlog_info local;
	epoch_state *old = NULL, *states = NULL;
	bool *drop = NULL, damaged, changed;
	size_t nold = 0, e;
	pg_buf fresh = PG_BUF_INIT;
	int err;

	*out = NULL;
	if (!info)
		info = &local;
	memset(info, 0, sizeof(*info));
	if (!(t = calloc(1, sizeof(*t))))
		return pg_error_oom();
	if (!(t->path = realpath(path, NULL))) {
		err = pg_error_set(errno == ENOENT ? PG_ENOTFOUND : PG_EIO,
				   "transparency log '%s': %s", path, strerror(errno));
		goto done;
	}
	if (!(t->nepochs = pg_tlog_count_epochs(t->path))) {
		err = pg_error_set(PG_ENOTFOUND, "transparency log '%s' has no git/0.git: not a "
				   "public-inbox v2 archive", path);
		goto done;
	}
	info->epochs = t->nepochs;
	if (!(t->repos = calloc(t->nepochs, sizeof(*t->repos))) ||
	    !(states = calloc(t->nepochs, sizeof(*states))) ||
	    !(drop = calloc(t->nepochs, sizeof(*drop)))) {
		err = pg_error_oom();
		goto done;
	}
	if ((err = index_path(&t->idx_path, t->path, home)) < 0 ||
	    (err = load_index(&old, &nold, &damaged, t)) < 0)
		goto done;
	info->rebuilt = damaged || !t->map;
	changed = nold != t->nepochs || info->rebuilt;
	pg_buf_init(&fresh, INDEX_MAX);
	for (e = 0; e < t->nepochs; e++) {
		if (e < nold)
			states[e] = old[e];
		if ((err = read_epoch(&fresh, &states[e], &drop[e], info, t, e)) < 0) {
			err = pg_error_wrap(err, "transparency log '%s', epoch %zu", path, e);
			goto done;
		}
		changed = changed || drop[e] || e >= nold || pg_oid_cmp(&states[e].tip, &old[e].tip);
		info->rebuilt = info->rebuilt || drop[e];
		info->records += states[e].count;
	}
	if (changed) {
		if ((err = write_index(t, states, t->nepochs, drop, &fresh)) == PG_EINVALID) {
			/* an entry overwritten: the whole log is read again, once */
			unmap(t);
			memset(states, 0, t->nepochs * sizeof(*states));
			memset(drop, 0, t->nepochs * sizeof(*drop));
			pg_buf_clear(&fresh);
			info->added = info->unreadable = info->records = 0;
			info->rebuilt = true;
			for (e = 0; e < t->nepochs; e++)
				if ((err = read_epoch(&fresh, &states[e], &drop[e], info, t, e)) < 0)
					goto done;
			for (e = 0; e < t->nepochs; e++)
				info->records += states[e].count;
			err = write_index(t, states, t->nepochs, drop, &fresh);
		}
		free(old);
		old = NULL;
		if (err < 0 || (err = load_index(&old, &nold, &damaged, t)) < 0)
			goto done;
		if (damaged) {
			err = pg_error_set(PG_EIO, "index '%s' written and not readable",
					   t->idx_path);
			goto done;
		}
	}
	*out = t;
	t = NULL;
done:
	pg_buf_release(&fresh);
	free(old);
	free(states);
	free(drop);
	pg_tlog_free(t);
	return err;
}

/* The first entry of the mapped index at or past key. */
static size_t lower_bound(const pg_tlog *t, const char *key)
{
	size_t lo = 0, hi = t->nentries;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (memcmp(t->entries + mid * ENTRY_LEN, key, KEY_HEX) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_hit(const void *a, const void *b)
{
	const pg_tlog_hit *x = a, *y = b;

	if (x->epoch != y->epoch)
		return x->epoch < y->epoch ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The entries of one key, appended to *hits. */
static int probe(pg_tlog_hit **hits, size_t *n, size_t *alloc, pg_tlog *t, const char *key)
{
	size_t k;

	for (k = lower_bound(t, key); k < t->nentries; k++) {
		const char *e = t->entries + k * ENTRY_LEN;
		pg_tlog_hit *h;

		if (memcmp(e, key, KEY_HEX))
			break;
		if (!entry_ok(e)) {
			/* the next open makes it again */
			unlink(t->idx_path);
			return pg_error_set(PG_EINVALID, "index '%s' is damaged at entry %zu: it "
					    "will be made again", t->idx_path, k);
		}
		if (PG_ARRAY_GROW(*hits, *n + 1, *alloc) < 0)
			return PG_ENOMEM;
		h = &(*hits)[(*n)++];
		h->epoch = entry_epoch(e);
		h->seq = strtoull(e + KEY_HEX + 8, NULL, 10);
		if (pg_oid_fromhex(&h->commit, e + KEY_HEX + 19, PG_OID_HEXSZ) < 0 ||
		    pg_oid_fromhex(&h->new_id, e + KEY_HEX + 60, PG_OID_HEXSZ) < 0)
			return pg_error_set(PG_EINVALID, "index '%s' is damaged", t->idx_path);
	}
	return 0;
}

int pg_tlog_find(pg_tlog_hit **out, size_t *n, pg_tlog *t, const char *location,
		 const char *ref, size_t max)
{
	pg_tlog_hit *hits = NULL;
	pg_buf path = PG_BUF_INIT;
	char key[KEY_HEX + 1];
	const char *s;
	size_t count = 0, alloc = 0;
	int err;

	*out = NULL;
	*n = 0;
	if ((err = pg_tlog_repo_path(&path, location)) < 0)
		goto done;
	/* every tail of the location's path of two components or more may be a record's repo */
	for (s = path.ptr; s && *s; s = strchr(s, '/') ? strchr(s, '/') + 1 : NULL) {
		if (!strchr(s, '/'))
			break;
		if ((err = key_of(key, s, ref)) < 0 || (err = probe(&hits, &count, &alloc, t, key)) < 0)
			goto done;
	}
	if (!hits)
		goto done;
	qsort(hits, count, sizeof(*hits), cmp_hit);
	if (count > max) {
		memmove(hits, hits + count - max, max * sizeof(*hits));
		count = max;
	}
	*out = count ? hits : NULL;
	*n = count;
	hits = count ? NULL : hits;
done:
	free(hits);
	pg_buf_release(&path);
	return err;
}

int pg_tlog_read(pg_tlog_record **out, pg_tlog *t, const pg_tlog_hit *hit)
{
	pg_repo *r;
	pg_buf msg = PG_BUF_INIT;
	char hex[PG_OID_HEXSZ + 1];
	int err;

	*out = NULL;
	pg_oid_tohex(hex, &hit->commit);
	if ((err = open_epoch(&r, t, hit->epoch)) == 0 &&
	    (err = pg_tlog_read_message(&msg, NULL, r, &hit->commit)) == 0)
		err = pg_tlog_record_parse(out, msg.ptr, msg.len);
	pg_buf_release(&msg);
	if (err < 0 && err != PG_ENOMEM)
		err = pg_error_wrap(err, "record %s of epoch %u", hex, hit->epoch);
	return err;
}
