/* match.c - identity hashing and the delta between a copy and its original. */
#include "verifier/match.h"
#include "common/array.h"
#include "common/error.h"
#include "repo/trailers.h"

static uint64_t mix(uint64_t h, const void *data, size_t len)
{
	/* FNV-1a continued over several fields, with a separator */
	const unsigned char *p = data;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	h ^= 0xff;
	h *= 0x100000001b3ULL;
	return h;
}

uint64_t pg_identity_hash(const pg_commit *c)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	int64_t t = c->author.time;
	int32_t off = c->author.offset;

	h = mix(h, c->author.name, strlen(c->author.name));
	h = mix(h, c->author.email, strlen(c->author.email));
	h = mix(h, &t, sizeof(t));
	h = mix(h, &off, sizeof(off));
	return mix(h, c->message, c->body_len);
}

bool pg_identity_equal(const pg_commit *a, const pg_commit *b)
{
	return a->author.time == b->author.time && a->author.offset == b->author.offset &&
	       !strcmp(a->author.name, b->author.name) &&
	       !strcmp(a->author.email, b->author.email) && a->body_len == b->body_len &&
	       !memcmp(a->message, b->message, a->body_len);
}

static bool same_ident(const pg_ident *a, const pg_ident *b)
{
	return !strcmp(a->name, b->name) && !strcmp(a->email, b->email);
}

/* Trailers of `from` that have no unmatched equal in `in` (a multiset difference). */
static int trailer_difference(const pg_trailer ***out, size_t *nout,
			      const pg_commit *from, const pg_commit *in)
{
	bool *used = calloc(in->ntrailers + 1, sizeof(*used));
	size_t i, j;

	/* at most every trailer of `from`: one allocation, no growth */
	if (!used || !(*out = calloc(from->ntrailers + 1, sizeof(**out)))) {
		free(used);
		return pg_error_oom();
	}
	for (i = 0; i < from->ntrailers; i++) {
		for (j = 0; j < in->ntrailers; j++) {
			if (!used[j] && pg_trailer_equal(&from->trailers[i], &in->trailers[j])) {
				used[j] = true;
				break;
			}
		}
		if (j == in->ntrailers)
			(*out)[(*nout)++] = &from->trailers[i];
	}
	free(used);
	return 0;
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
	d->author = !same_ident(&pull->author, &upstream->author) ||
		    pull->author.time != upstream->author.time ||
		    pull->author.offset != upstream->author.offset;
	d->committer = !same_ident(&pull->committer, &upstream->committer);
	d->committer_date = pull->committer.time != upstream->committer.time ||
			    pull->committer.offset != upstream->committer.offset;
	d->body = pull->body_len != upstream->body_len ||
		  memcmp(pull->message, upstream->message, pull->body_len);

	if ((err = trailer_difference(&d->trailers_added, &d->ntrailers_added, pull, upstream)) < 0 ||
	    (err = trailer_difference(&d->trailers_removed, &d->ntrailers_removed, upstream, pull)) < 0)
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
	memset(d, 0, sizeof(*d));
}
