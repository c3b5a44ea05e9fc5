/* reverts.c - which upstream commits upstream itself has since reverted. */
#include "verifier/reverts.h"
#include "common/array.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/hex.h"
#include "common/map.h"
#include "common/str.h"

/* What a revert's message names: the commit undone, and for a merge the side kept. */
typedef struct revert {
	pg_oid by;               /* the reverting commit */
	char by_hex[PG_OID_HEXSZ + 1];
	char target[PG_OID_HEXSZ + 1];
	char parent[PG_OID_HEXSZ + 1]; /* "" unless the merge form */
	bool effective;          /* not itself undone by a later revert */
} revert;

typedef struct walk {
	pg_repo *r;
	revert *v;
	size_t n, alloc;
	pg_buf raw;
} walk;

#define PREFIX 7 /* the shortest id a message may quote */

static bool hex_at(const char *s, size_t len, size_t at)
{
	return at < len && pg_hex_digit((unsigned char)s[at]) >= 0 &&
	       !(s[at] >= 'A' && s[at] <= 'F');
}

static bool word_char(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '_';
}

/* A whole word of 7 to 40 lower-case hex digits at s[at]: its length, or 0. */
static size_t hex_word(const char *s, size_t len, size_t at)
{
	size_t n = 0;

	while (hex_at(s, len, at + n))
		n++;
	if (n < PREFIX || n > PG_OID_HEXSZ || (at + n < len && word_char((unsigned char)s[at + n])))
		return 0;
	return n;
}

/* Match the words of want at s[*at], any run of blanks and line breaks between them. */
static bool words(const char *s, size_t len, size_t *at, const char *want)
{
	size_t i = *at;

	while (*want) {
		if (*want == ' ') {
			if (i >= len || (s[i] != ' ' && s[i] != '\n' && s[i] != '\t'))
				return false;
			while (i < len && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t'))
				i++;
			want++;
			continue;
		}
		if (i >= len || s[i] != *want)
			return false;
		i++;
		want++;
	}
	*at = i;
	return true;
}

int pg_revert_line_next(size_t *id, size_t *id_len, size_t *parent, size_t *parent_len,
			const char *msg, size_t len, size_t from)
{
	static const char lead[] = "This reverts commit";
	size_t i;

	for (i = from; i + sizeof(lead) <= len; i++) {
		size_t at = i, n, p;

		if (msg[i] != 'T' || (i > 0 && word_char((unsigned char)msg[i - 1])) ||
		    !words(msg, len, &at, "This reverts commit ") || !(n = hex_word(msg, len, at)))
			continue;
		*id = at;
		*id_len = n;
		*parent = 0;
		*parent_len = 0;
		p = at + n;
		if (words(msg, len, &p, ", reversing changes made to ") &&
		    (n = hex_word(msg, len, p))) {
			*parent = p;
			*parent_len = n;
		}
		return 1;
	}
	return 0;
}

static int add_reverts(walk *w, const pg_oid *id, const char *msg, size_t len)
{
	size_t at = 0, idp, idn, par, parn;
	int err;

	while (pg_revert_line_next(&idp, &idn, &par, &parn, msg, len, at)) {
		revert *e;

		at = idp + idn;
		if ((err = PG_ARRAY_GROW(w->v, w->n + 1, w->alloc)) < 0)
			return err;
		e = &w->v[w->n++];
		memset(e, 0, sizeof(*e));
		e->by = *id;
		pg_oid_tohex(e->by_hex, id);
		memcpy(e->target, msg + idp, idn);
		memcpy(e->parent, msg + par, parn);
		e->effective = true;
	}
	return 0;
}

/* The commit's message, if it quotes a revert at all: headers are skipped. */
static int visit(void *ctx, const pg_oid *id, int64_t time, const pg_oid *first_parent)
{
	walk *w = ctx;
	size_t i;
	int err;

	(void)time;
	(void)first_parent;
	pg_buf_clear(&w->raw);
	/* the walk's every commit, most of them in upstream's packs */
	if ((err = pg_repo_read_commit_raw(&w->raw, w->r, id)) < 0)
		return err;
	for (i = 0; i + 1 < w->raw.len; i++)
		if (w->raw.ptr[i] == '\n' && w->raw.ptr[i + 1] == '\n')
			return add_reverts(w, id, w->raw.ptr + i + 2, w->raw.len - i - 2);
	return 0;
}

/* Whether the quoted (abbreviated) id q names the commit whose full hex is full. */
static bool names(const char *q, const char *full)
{
	return *q && !strncmp(full, q, strlen(q));
}

/*
 * Undo the reverts a later revert undid.  v is newest first (the walk's
 * order), so whether a revert stands is known before any older one it may
 * undo is looked at; a map by the first 7 digits keeps this linear.
 */
static int settle(walk *w)
{
	pg_map standing = PG_MAP_INIT; /* 7 hex digits of a standing revert's target -> 1 + index */
	size_t *next = calloc(w->n + 1, sizeof(*next));
	size_t i;
	int err = 0;

	if (!next)
		return pg_error_oom();
	for (i = 0; i < w->n && err == 0; i++) {
		revert *e = &w->v[i];
		size_t k = (size_t)(uintptr_t)pg_map_get(&standing, e->by_hex, PREFIX);

		for (; k; k = next[k - 1])
			if (names(w->v[k - 1].target, e->by_hex)) {
				e->effective = false;
				break;
			}
		if (!e->effective)
			continue;
		next[i] = (size_t)(uintptr_t)pg_map_get(&standing, e->target, PREFIX);
		err = pg_map_set(&standing, e->target, PREFIX, (void *)(uintptr_t)(i + 1));
	}
	pg_map_release(&standing);
	free(next);
	return err;
}

/*
 * Whether the standing merge revert e took o out: o came in by the side of
 * the merge that the revert undid (reachable from the merge, not from the
 * parent it kept).
 */
static int by_merge(bool *out, pg_repo *r, const revert *e, const pg_commit *o)
{
	pg_oid merge, keep;
	int err;

	*out = false;
	if ((err = pg_repo_resolve_prefix(&merge, r, e->target, strlen(e->target))) < 0 ||
	    (err = pg_repo_resolve_prefix(&keep, r, e->parent, strlen(e->parent))) < 0)
		return err == PG_ENOTFOUND || err == PG_EINVALID ? 0 : err; /* gone, or ambiguous */
	if ((err = pg_repo_is_ancestor(r, &o->id, &merge)) <= 0)
		return err;
	if ((err = pg_repo_is_ancestor(r, &o->id, &keep)) < 0)
		return err;
	*out = err == 0;
	return 0;
}

static int judge(bool *reverted, pg_oid *by, walk *w, const pg_commit *o)
{
	char hex[PG_OID_HEXSZ + 1];
	size_t i;
	int err;

	*reverted = false;
	pg_oid_tohex(hex, &o->id);
	for (i = 0; i < w->n; i++) {
		const revert *e = &w->v[i];
		bool merged = false;

		if (!e->effective)
			continue;
		if (names(e->target, hex))
			*reverted = true;
		else if (e->parent[0] && (err = by_merge(&merged, w->r, e, o)) < 0)
			return err;
		else
			*reverted = merged;
		if (*reverted) {
			*by = e->by;
			return 0;
		}
	}
	return 0;
}

int pg_upstream_reverts(bool *reverted, pg_oid *by, pg_repo *r, const pg_oid *tip,
			const pg_commit *const *originals, size_t n, size_t max_walk)
{
	walk w = { r, NULL, 0, 0, PG_BUF_INIT };
	int64_t since = INT64_MAX;
	size_t i;
	int err = 0;

	for (i = 0; i < n; i++) {
		reverted[i] = false;
		memset(&by[i], 0, sizeof(by[i]));
		if (originals[i] && originals[i]->committer.time < since)
			since = originals[i]->committer.time;
	}
	if (since == INT64_MAX)
		return 0;
	if ((err = pg_repo_walk_since(r, tip, since, max_walk, visit, &w)) < 0 ||
	    (err = settle(&w)) < 0)
		goto done;
	for (i = 0; i < n && err == 0; i++)
		if (originals[i])
			err = judge(&reverted[i], &by[i], &w, originals[i]);
done:
	free(w.v);
	pg_buf_release(&w.raw);
	return err;
}
