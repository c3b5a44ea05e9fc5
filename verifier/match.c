/* match.c - identity hashing and the delta between a copy and its original. */
#include "verifier/match.h"
#include "common/array.h"
#include "common/error.h"
#include "repo/trailers.h"

/*
 * Each byte's class: a word's (a letter, a digit, '_'), and a lower-case
 * hex digit's too: a first index looks at every byte of every message.
 */
enum { WORD = 1, HEX = 2 };
static const unsigned char classes[256] = {
	['0'] = WORD | HEX, ['1'] = WORD | HEX, ['2'] = WORD | HEX, ['3'] = WORD | HEX,
	['4'] = WORD | HEX, ['5'] = WORD | HEX, ['6'] = WORD | HEX, ['7'] = WORD | HEX,
	['8'] = WORD | HEX, ['9'] = WORD | HEX, ['a'] = WORD | HEX, ['b'] = WORD | HEX,
	['c'] = WORD | HEX, ['d'] = WORD | HEX, ['e'] = WORD | HEX, ['f'] = WORD | HEX,
	['g'] = WORD, ['h'] = WORD, ['i'] = WORD, ['j'] = WORD, ['k'] = WORD, ['l'] = WORD,
	['m'] = WORD, ['n'] = WORD, ['o'] = WORD, ['p'] = WORD, ['q'] = WORD, ['r'] = WORD,
	['s'] = WORD, ['t'] = WORD, ['u'] = WORD, ['v'] = WORD, ['w'] = WORD, ['x'] = WORD,
	['y'] = WORD, ['z'] = WORD, ['A'] = WORD, ['B'] = WORD, ['C'] = WORD, ['D'] = WORD,
	['E'] = WORD, ['F'] = WORD, ['G'] = WORD, ['H'] = WORD, ['I'] = WORD, ['J'] = WORD,
	['K'] = WORD, ['L'] = WORD, ['M'] = WORD, ['N'] = WORD, ['O'] = WORD, ['P'] = WORD,
	['Q'] = WORD, ['R'] = WORD, ['S'] = WORD, ['T'] = WORD, ['U'] = WORD, ['V'] = WORD,
	['W'] = WORD, ['X'] = WORD, ['Y'] = WORD, ['Z'] = WORD, ['_'] = WORD,
};

static bool is_word(char c)
{
	return classes[(unsigned char)c] & WORD;
}

#define QUOTED_ID_MIN 7

int pg_quoted_id_next(const char *s, size_t len, size_t from, size_t *start, size_t *n)
{
	size_t i = from;

	while (i < len) {
		size_t j = i, hex = 0;

		if (!is_word(s[i])) {
			i++;
			continue;
		}
		/* a whole word: a run of hex inside a longer word is no id */
		for (; j < len && is_word(s[j]); j++)
			hex += (classes[(unsigned char)s[j]] & HEX) != 0;
		if (hex == j - i && hex >= QUOTED_ID_MIN) {
			*start = i;
			*n = j - i;
			return 1;
		}
		i = j;
	}
	return 0;
}

/*
 * Walk a and b together, a quoted id against a quoted id: fn sees each
 * pair of ids that sit in the same place.  Returns whether the texts are
 * equal apart from their ids (fn is called only while they are).
 */
typedef int (*id_pair_fn)(void *ctx, const char *a, size_t alen, const char *b, size_t blen);

static int walk_ids(bool *equal, const char *a, size_t alen, const char *b, size_t blen,
		    id_pair_fn fn, void *ctx)
{
	size_t pa = 0, pb = 0;
	int err;

	for (;;) {
		size_t ia = alen, la = 0, ib = blen, lb = 0;
		int ha = pg_quoted_id_next(a, alen, pa, &ia, &la);
		int hb = pg_quoted_id_next(b, blen, pb, &ib, &lb);

		if (ia - pa != ib - pb || memcmp(a + pa, b + pb, ia - pa) || ha != hb) {
			*equal = false;
			return 0;
		}
		if (!ha) {
			*equal = true;
			return 0;
		}
		if (fn && (err = fn(ctx, a + ia, la, b + ib, lb)) < 0)
			return err;
		pa = ia + la;
		pb = ib + lb;
	}
}

bool pg_text_equal_but_ids(const char *a, size_t alen, const char *b, size_t blen)
{
	bool equal = false;

	walk_ids(&equal, a, alen, b, blen, NULL, NULL);
	return equal;
}

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* FNV-1a continued over several fields, with a separator */
static uint64_t mix(uint64_t h, const void *data, size_t len)
{
	h = fnv(h, data, len) ^ 0xff;
	return h * 0x100000001b3ULL;
}

/* the quoted ids of s[0..len) as one marker byte each, hashed on from h */
static uint64_t mix_but_ids(uint64_t h, const char *s, size_t len)
{
	size_t at = 0, start, n;

	while (pg_quoted_id_next(s, len, at, &start, &n)) {
		h = fnv(h, s + at, start - at);
		h = fnv(h, "\x01", 1);
		at = start + n;
	}
	return mix(h, s + at, len - at);
}

uint64_t pg_identity_hash_keys(const pg_commit_keys *k)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	int64_t t = k->time;
	int32_t off = k->offset;

	h = mix(h, k->name, k->name_len);
	h = mix(h, k->email, k->email_len);
	h = mix(h, &t, sizeof(t));
	h = mix(h, &off, sizeof(off));
	/* the body with every quoted id as one marker byte */
	return mix_but_ids(h, k->message, k->body_len);
}

uint64_t pg_identity_hash(const pg_commit *c)
{
	pg_commit_keys k;

	pg_commit_keys_of(&k, c);
	return pg_identity_hash_keys(&k);
}

bool pg_identity_equal(const pg_commit *a, const pg_commit *b)
{
	return a->author.time == b->author.time && a->author.offset == b->author.offset &&
	       !strcmp(a->author.name, b->author.name) &&
	       !strcmp(a->author.email, b->author.email) &&
	       pg_text_equal_but_ids(a->message, a->body_len, b->message, b->body_len);
}

static bool same_ident(const pg_ident *a, const pg_ident *b)
{
	return !strcmp(a->name, b->name) && !strcmp(a->email, b->email);
}

uint64_t pg_author_subject_hash_keys(const pg_commit_keys *k)
{
	uint64_t h = 0x84222325cbf29ce4ULL; /* not the identity's basis: the keys never mix */

	h = mix(h, k->name, k->name_len);
	h = mix(h, k->email, k->email_len);
	return mix_but_ids(h, k->subject, k->subject_len);
}

uint64_t pg_author_subject_hash(const pg_commit *c)
{
	pg_commit_keys k;

	pg_commit_keys_of(&k, c);
	return pg_author_subject_hash_keys(&k);
}

bool pg_author_subject_equal(const pg_commit *a, const pg_commit *b)
{
	const char *sa = a->subject ? a->subject : "", *sb = b->subject ? b->subject : "";

	return same_ident(&a->author, &b->author) &&
	       pg_text_equal_but_ids(sa, strlen(sa), sb, strlen(sb));
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/*
 * Whether s[0..len) is prefix, a commit id, then suffix (after spaces, as
 * the workflows vary); *id, *n the id.
 */
static bool label_form(const char *s, size_t len, const char *prefix, const char *suffix,
		       size_t *id, size_t *n)
{
	size_t p = strlen(prefix), q = strlen(suffix), i, j;

	if (len < p || strncasecmp(s, prefix, p))
		return false;
	for (i = p; i < len && s[i] == ' '; i++)
		;
	for (j = i; j < len && is_hex(s[j]); j++)
		;
	if (j - i < QUOTED_ID_MIN || j - i > PG_OID_HEXSZ)
		return false;
	*id = i;
	*n = j - i;
	if (!q) /* "Backported-from: X", or "X (subject)" */
		return j == len || s[j] == ' ';
	while (j < len && s[j] == ' ')
		j++;
	return len - j == q && !strncmp(s + j, suffix, q);
}

int pg_backport_label_next(pg_backport_label *out, const char *s, size_t len, size_t from)
{
	static const char *const forms[][2] = {
		{ "(cherry picked from commit ", ")" },
		{ "commit ", "upstream." },
		{ "commit ", "upstream" },
		{ "[ Upstream commit ", "]" },
		{ "[Upstream commit ", "]" },
		{ "Backported-from:", "" },
	};
	size_t at = from;

	while (at < len) {
		const char *nl = memchr(s + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - s) : len, b = at, e = end, k, id, n;

		while (b < e && (s[b] == ' ' || s[b] == '\t'))
			b++;
		while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r'))
			e--;
		for (k = 0; k < PG_ARRAY_SIZE(forms); k++) {
			if (!label_form(s + b, e - b, forms[k][0], forms[k][1], &id, &n))
				continue;
			out->id = b + id;
			out->id_len = n;
			out->line = at;
			out->line_len = end - at;
			return 1;
		}
		at = end + 1;
	}
	return 0;
}

static int push_quoted(void *ctx, const char *a, size_t alen, const char *b, size_t blen)
{
	pg_commit_delta *d = ctx;
	pg_quoted_id *q;
	size_t i;
	int err;

	if (alen == blen && !memcmp(a, b, alen))
		return 0;
	for (i = 0; i < d->nquoted; i++)
		if (d->quoted[i].pull_len == alen && !memcmp(d->quoted[i].pull, a, alen) &&
		    d->quoted[i].upstream_len == blen && !memcmp(d->quoted[i].upstream, b, blen))
			return 0;
	if ((err = PG_ARRAY_GROW(d->quoted, d->nquoted + 1, d->quoted_alloc)) < 0)
		return err;
	q = &d->quoted[d->nquoted++];
	q->pull = a;
	q->pull_len = alen;
	q->upstream = b;
	q->upstream_len = blen;
	return 0;
}

static bool trailer_equal_but_ids(const pg_trailer *a, const pg_trailer *b)
{
	return !strcasecmp(a->key, b->key) &&
	       pg_text_equal_but_ids(a->value, strlen(a->value), b->value, strlen(b->value));
}

/*
 * Pair the trailers of both sides as multisets: equal ones first, then
 * ones equal but for their quoted ids (whose ids join d->quoted).  What is
 * left is added (the pull's) or removed (upstream's).
 */
static int pair_trailers(pg_commit_delta *d, const pg_commit *pull, const pg_commit *up)
{
	int *mate = calloc(pull->ntrailers + 1, sizeof(*mate)); /* upstream index + 1 */
	bool *used = calloc(up->ntrailers + 1, sizeof(*used));
	size_t i, j, pass;
	int err = 0;

	/* at most every trailer of each side: one allocation each, no growth */
	if (!mate || !used || !(d->trailers_added = calloc(pull->ntrailers + 1, sizeof(void *))) ||
	    !(d->trailers_removed = calloc(up->ntrailers + 1, sizeof(void *)))) {
		err = pg_error_oom();
		goto done;
	}
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < pull->ntrailers; i++) {
			for (j = 0; !mate[i] && j < up->ntrailers; j++) {
				if (used[j] || !(pass ? trailer_equal_but_ids(&pull->trailers[i], &up->trailers[j]) :
						 pg_trailer_equal(&pull->trailers[i], &up->trailers[j])))
					continue;
				used[j] = true;
				mate[i] = (int)j + 1;
			}
		}
	}
	for (i = 0; i < pull->ntrailers && err == 0; i++) {
		const pg_trailer *t = &pull->trailers[i];
		bool equal;

		if (!mate[i]) {
			d->trailers_added[d->ntrailers_added++] = t;
			continue;
		}
		j = (size_t)mate[i] - 1;
		err = walk_ids(&equal, t->value, strlen(t->value), up->trailers[j].value,
			       strlen(up->trailers[j].value), push_quoted, d);
	}
	for (j = 0; j < up->ntrailers; j++)
		if (!used[j])
			d->trailers_removed[d->ntrailers_removed++] = &up->trailers[j];
done:
	free(mate);
	free(used);
	return err;
}

static int push_change(pg_commit_delta *d, enum pg_header_change_kind kind, const char *name,
		       const pg_header *pull, const pg_header *upstream)
{
	pg_header_change *h;
	int err;

	if ((err = PG_ARRAY_GROW(d->headers, d->nheaders + 1, d->headers_alloc)) < 0)
		return err;
	h = &d->headers[d->nheaders++];
	h->kind = kind;
	h->name = name;
	h->pull = pull;
	h->upstream = upstream;
	return 0;
}

/* The k-th header called name, or NULL. */
static const pg_header *nth_header(const pg_commit *c, const char *name, size_t k)
{
	size_t i;

	for (i = 0; i < c->nheaders; i++)
		if (!strcmp(c->headers[i].name, name) && k-- == 0)
			return &c->headers[i];
	return NULL;
}

static bool header_seen_before(const pg_commit *c, size_t upto, const char *name)
{
	size_t i;

	for (i = 0; i < upto; i++)
		if (!strcmp(c->headers[i].name, name))
			return true;
	return false;
}

/* Compare the headers called name, pairing the k-th of each side. */
static int compare_headers(pg_commit_delta *d, const pg_commit *pull,
			   const pg_commit *upstream, const char *name)
{
	size_t k;
	int err = 0;

	for (k = 0; err == 0; k++) {
		const pg_header *a = nth_header(pull, name, k), *b = nth_header(upstream, name, k);

		if (!a && !b)
			break;
		if (a && b) {
			if (a->value_len != b->value_len || memcmp(a->value, b->value, a->value_len))
				err = push_change(d, PG_HEADER_CHANGED, name, a, b);
		} else {
			err = push_change(d, a ? PG_HEADER_ADDED : PG_HEADER_REMOVED, name, a, b);
		}
	}
	return err;
}

int pg_commit_delta_compute(pg_commit_delta *d, const pg_commit *pull,
			    const pg_commit *upstream)
{
	size_t i;
	int err = 0;

	memset(d, 0, sizeof(*d));
	d->parents = pull->nparents != upstream->nparents ||
		     (pull->nparents && memcmp(pull->parents, upstream->parents,
					       pull->nparents * sizeof(pg_oid)));
	d->tree = pg_oid_cmp(&pull->tree, &upstream->tree) != 0;
	d->author_date = pull->author.time != upstream->author.time ||
			 pull->author.offset != upstream->author.offset;
	d->author = !same_ident(&pull->author, &upstream->author) || d->author_date;
	d->committer = !same_ident(&pull->committer, &upstream->committer);
	d->committer_date = pull->committer.time != upstream->committer.time ||
			    pull->committer.offset != upstream->committer.offset;
	d->body = pull->body_len != upstream->body_len ||
		  memcmp(pull->message, upstream->message, pull->body_len);
	d->message = d->body && !pg_text_equal_but_ids(pull->message, pull->body_len,
						       upstream->message, upstream->body_len);

	if (d->body && pg_text_equal_but_ids(pull->message, pull->body_len, upstream->message,
					      upstream->body_len)) {
		bool equal;

		if ((err = walk_ids(&equal, pull->message, pull->body_len, upstream->message,
				    upstream->body_len, push_quoted, d)) < 0)
			goto done;
	}
	if ((err = pair_trailers(d, pull, upstream)) < 0)
		goto done;

	/* every header name that either side has, in upstream's order then the pull's */
	for (i = 0; i < upstream->nheaders && err == 0; i++)
		if (!header_seen_before(upstream, i, upstream->headers[i].name))
			err = compare_headers(d, pull, upstream, upstream->headers[i].name);
	for (i = 0; i < pull->nheaders && err == 0; i++)
		if (!header_seen_before(pull, i, pull->headers[i].name) &&
		    !nth_header(upstream, pull->headers[i].name, 0))
			err = compare_headers(d, pull, upstream, pull->headers[i].name);
done:
	if (err < 0)
		pg_commit_delta_release(d);
	return err;
}

void pg_commit_delta_release(pg_commit_delta *d)
{
	free((void *)d->trailers_added);
	free((void *)d->trailers_removed);
	free(d->headers);
	free(d->quoted);
	memset(d, 0, sizeof(*d));
}
