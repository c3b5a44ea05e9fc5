/* check_rewritten.c - rewritten-upstream: pull commits that copy upstream commits under new ids. */
#include "verifier/match.h"
#include "verifier/pull.h"
#include "common/error.h"

#define SHORT 12

static void short_hex(char out[PG_OID_HEXSZ + 1], const pg_oid *id)
{
	pg_oid_tohex(out, id);
	out[SHORT] = '\0';
}

/* "tag 'net-6.16' of commit 1234 by Name <email>, 2025-05-25 10:00:00 +0200" */
static int describe_mergetag(pg_buf *out, const pg_header *h)
{
	pg_tagobj *t = NULL;
	char hex[PG_OID_HEXSZ + 1];
	int err;

	if (pg_tagobj_parse(&t, h->value, h->value_len) < 0) {
		pg_error_clear();
		return pg_buf_puts(out, "an unparseable tag");
	}
	short_hex(hex, &t->object);
	err = pg_buf_printf(out, "tag '%s' of %s", t->tag, hex);
	if (!err && t->has_tagger) {
		err = pg_buf_puts(out, " by ");
		if (!err)
			err = pg_ident_format(out, &t->tagger);
		if (!err)
			err = pg_buf_puts(out, ", ");
		if (!err)
			err = pg_time_format(out, t->tagger.time, t->tagger.offset);
	}
	if (!err && t->signature)
		err = pg_buf_puts(out, ", signed");
	pg_tagobj_free(t);
	return err;
}

static int describe_header(pg_buf *out, const pg_header *h)
{
	if (!h)
		return 0;
	if (!strcmp(h->name, "mergetag"))
		return describe_mergetag(out, h);
	if (!strcmp(h->name, "gpgsig") || !strcmp(h->name, "gpgsig-sha256"))
		return pg_buf_printf(out, "a signature of %zu bytes", h->value_len);
	return pg_buf_put(out, h->value, h->value_len);
}

static int parents_text(pg_buf *out, const pg_commit *c, const pg_map *copies)
{
	char hex[PG_OID_HEXSZ + 1];
	size_t i;
	int err = 0;

	if (!c->nparents)
		return pg_buf_puts(out, "(none)");
	for (i = 0; i < c->nparents && err == 0; i++) {
		const pg_commit *orig = copies ? pg_map_get(copies, c->parents[i].id, PG_OID_RAWSZ) : NULL;

		short_hex(hex, &c->parents[i]);
		err = pg_buf_printf(out, "%s%s", i ? ", " : "", hex);
		if (!err && orig) {
			short_hex(hex, &orig->id);
			err = pg_buf_printf(out, " (rewritten copy of %s)", hex);
		}
	}
	return err;
}

static int aspect(pg_buf *summary, const char *what)
{
	return pg_buf_printf(summary, "%s%s", summary->len ? ", " : "", what);
}

static int headers_details(pg_finding *f, pg_buf *summary, const pg_commit_delta *d)
{
	pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT, what = PG_BUF_INIT;
	size_t i;
	int err = 0;

	for (i = 0; i < d->nheaders && err == 0; i++) {
		const pg_header_change *h = &d->headers[i];
		static const char *const verbs[] = { "removed", "added", "changed" };

		pg_buf_clear(&a);
		pg_buf_clear(&b);
		pg_buf_clear(&what);
		if ((err = describe_header(&a, h->pull)) < 0 ||
		    (err = describe_header(&b, h->upstream)) < 0 ||
		    (err = pg_buf_printf(&what, "%s %s", h->name, verbs[h->kind])) < 0 ||
		    (err = aspect(summary, what.ptr)) < 0)
			break;
		err = pg_finding_detail(f, h->name, h->pull ? a.ptr : "(none)",
					h->upstream ? b.ptr : "(none)");
	}
	pg_buf_release(&a);
	pg_buf_release(&b);
	pg_buf_release(&what);
	return err;
}

static int patch_detail(pg_pull *p, pg_finding *f, const pg_commit *c, const pg_commit *o)
{
	pg_oid a, b;

	if (c->nparents > 1 || o->nparents > 1)
		return 0; /* a merge has no patch: the tree said it all */
	if (pg_repo_patch_id(&a, p->repo, c) < 0 || pg_repo_patch_id(&b, p->repo, o) < 0) {
		pg_error_clear();
		return pg_finding_detail(f, "patch", "could not be compared", NULL);
	}
	return pg_finding_detail(f, "patch", pg_oid_cmp(&a, &b) ? "differs" : "same",
				 NULL);
}

static int report_copy(pg_pull *p, const pg_commit *c, const pg_commit *o, const pg_map *copies)
{
	pg_commit_delta d;
	pg_finding *f = NULL;
	pg_buf summary = PG_BUF_INIT, x = PG_BUF_INIT, y = PG_BUF_INIT;
	char hex[PG_OID_HEXSZ + 1], hex2[PG_OID_HEXSZ + 1];
	size_t i;
	int err;

	if ((err = pg_commit_delta_compute(&d, c, o)) < 0)
		return err;
	/* the aspects first, so the one-line message can name them */
	if (d.parents)
		aspect(&summary, "parents changed");
	if (d.tree)
		aspect(&summary, "tree changed");
	if (d.committer)
		aspect(&summary, "committer changed");
	if (d.committer_date)
		aspect(&summary, "committer date changed");
	if (d.ntrailers_added)
		aspect(&summary, "trailers added");
	if (d.ntrailers_removed)
		aspect(&summary, "trailers removed");

	pg_oid_tohex(hex, &o->id);
	if ((err = pg_report_add(&f, p->report, PG_CHECK_REWRITTEN_UPSTREAM,
				 pg_pull_severity(p, PG_CHECK_REWRITTEN_UPSTREAM), c,
				 "rewritten copy of upstream commit %.12s", hex)) < 0 || !f)
		goto done;
	f->has_upstream = true;
	f->upstream = o->id;

	if (d.parents) {
		if ((err = parents_text(&x, c, copies)) < 0 || (err = parents_text(&y, o, NULL)) < 0 ||
		    (err = pg_finding_detail(f, "parents", x.ptr, y.ptr)) < 0)
			goto done;
	}
	if (d.tree) {
		pg_oid_tohex(hex, &c->tree);
		pg_oid_tohex(hex2, &o->tree);
		if ((err = pg_finding_detail(f, "tree", hex, hex2)) < 0 ||
		    (err = patch_detail(p, f, c, o)) < 0)
			goto done;
	}
	if (d.committer) {
		pg_buf_clear(&x);
		pg_buf_clear(&y);
		if ((err = pg_ident_format(&x, &c->committer)) < 0 ||
		    (err = pg_ident_format(&y, &o->committer)) < 0 ||
		    (err = pg_finding_detail(f, "committer", x.ptr, y.ptr)) < 0)
			goto done;
	}
	if (d.committer_date) {
		pg_buf_clear(&x);
		pg_buf_clear(&y);
		if ((err = pg_time_format(&x, c->committer.time, c->committer.offset)) < 0 ||
		    (err = pg_time_format(&y, o->committer.time, o->committer.offset)) < 0 ||
		    (err = pg_finding_detail(f, "committer-date", x.ptr, y.ptr)) < 0)
			goto done;
	}
	for (i = 0; i < d.ntrailers_added && err == 0; i++)
		err = pg_finding_detail(f, "trailer-added", d.trailers_added[i]->line, NULL);
	for (i = 0; i < d.ntrailers_removed && err == 0; i++)
		err = pg_finding_detail(f, "trailer-removed", NULL, d.trailers_removed[i]->line);
	if (err == 0)
		err = headers_details(f, &summary, &d);
	if (err == 0 && summary.len) {
		/* the message, now that every aspect is known */
		pg_buf_clear(&x);
		pg_oid_tohex(hex, &o->id);
		if ((err = pg_buf_printf(&x, "rewritten copy of upstream commit %.12s: %s", hex,
					 summary.ptr)) == 0) {
			free(f->message);
			f->message = pg_buf_detach(&x);
			if (!f->message)
				err = PG_ENOMEM;
		}
	}
done:
	pg_commit_delta_release(&d);
	pg_buf_release(&summary);
	pg_buf_release(&x);
	pg_buf_release(&y);
	return err;
}

int pg_check_rewritten_upstream(pg_pull *p)
{
	pg_map copies = PG_MAP_INIT; /* pull id -> upstream original */
	size_t i;
	int err = 0;

	/* first every match, so that parents can be named as copies too */
	for (i = 0; i < p->ncommits && err == 0; i++) {
		const pg_commit *o = NULL;

		if ((err = pg_upstream_find(&o, p->upstream, p->commits[i])) < 0 || !o)
			continue;
		p->original[i] = o;
		err = pg_map_set(&copies, p->commits[i]->id.id, PG_OID_RAWSZ, (void *)o);
	}
	for (i = 0; i < p->ncommits && err == 0; i++)
		if (p->original[i])
			err = report_copy(p, p->commits[i], p->original[i], &copies);
	pg_map_release(&copies);
	return err;
}
