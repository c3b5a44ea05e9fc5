/* fuzz_object.c - libFuzzer target: commit and tag objects, identities, trailers, as the checks read them. */
#include "tests/fuzz/fuzz.h"
#include "common/sanitize.h"
#include "repo/object.h"
#include "repo/trailers.h"
#include "verifier/match.h"
#include "verifier/pull.h"

/* What the checks and renderers do with an identity. */
static void use_ident(pg_buf *b, const pg_ident *id)
{
	pg_ident_format(b, id);
	pg_time_format(b, id->time, id->offset);
	pg_ident_same_person(id, id);
}

static void use_commit(const pg_commit *c)
{
	pg_buf b = PG_BUF_INIT;
	size_t i, at, start, n;
	pg_fixes fx;

	use_ident(&b, &c->author);
	use_ident(&b, &c->committer);
	pg_sanitize_terminal(&b, c->subject, strlen(c->subject), PG_SANITIZE_ONELINE);
	pg_sanitize_terminal(&b, c->message, c->message_len, 0);
	pg_sanitize_utf8(&b, c->message, c->body_len);
	pg_html_escape(&b, c->subject, strlen(c->subject));
	pg_commit_count_header(c, "mergetag");
	pg_commit_signed_off_by(c, &c->author);
	pg_identity_hash(c);
	pg_text_equal_but_ids(c->message, c->message_len, c->message, c->message_len);
	for (at = 0; pg_quoted_id_next(c->message, c->message_len, at, &start, &n) > 0; at = start + n)
		;
	for (i = 0; i < c->ntrailers; i++) {
		pg_trailer_equal(&c->trailers[i], &c->trailers[0]);
		pg_fixes_parse(&fx, c->trailers[i].value);
	}
	/* a mergetag header is a tag object of its own */
	for (i = 0; i < c->nheaders; i++) {
		pg_tagobj *t = NULL;

		if (!strcmp(c->headers[i].name, "mergetag") &&
		    pg_tagobj_parse(&t, c->headers[i].value, c->headers[i].value_len) == 0)
			use_ident(&b, &t->tagger);
		pg_tagobj_free(t);
	}
	pg_buf_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	pg_commit *c = NULL;
	pg_tagobj *t = NULL;
	pg_ident id;
	pg_buf b = PG_BUF_INIT;

	if (pg_commit_parse(&c, NULL, s, size) == 0)
		use_commit(c);
	pg_commit_free(c);
	if (pg_tagobj_parse(&t, s, size) == 0)
		use_ident(&b, &t->tagger);
	pg_tagobj_free(t);
	if (pg_ident_parse(&id, s, size) == 0) {
		use_ident(&b, &id);
		pg_ident_release(&id);
	}
	pg_buf_release(&b);
	return 0;
}
