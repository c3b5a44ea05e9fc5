/* check_rewritten.c - rewritten-upstream: pull commits that copy upstream commits under new ids. */
#include "verifier/match.h"
#include "verifier/pull.h"
#include "verifier/reverts.h"
#include "common/error.h"

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
	pg_oid_toshort(hex, &t->object);
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

		pg_oid_toshort(hex, &c->parents[i]);
		err = pg_buf_printf(out, "%s%s", i ? ", " : "", hex);
		if (!err && orig) {
			pg_oid_toshort(hex, &orig->id);
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

/* What the copy's patch is beside its original's (non-merges whose tree changed). */
enum patch_state {
	PATCH_NONE,      /* a merge, or the same tree on the same (or copied) parents */
	PATCH_SAME,
	PATCH_DIFFERS,
	PATCH_UNKNOWN,   /* could not be computed */
};

/* PATCH_DIFFERS never reaches a finding: such a commit is no copy, but a note */
static const char *const patch_words[] = { NULL, "same", "differs", "could not be compared" };

/* 1 when each parent of c is o's parent in the same place, or a copy of it. */
static bool parents_map(const pg_commit *c, const pg_commit *o, const pg_map *copies)
{
	size_t k;

	if (c->nparents != o->nparents)
		return false;
	for (k = 0; k < c->nparents; k++) {
		const pg_commit *orig = pg_map_get(copies, c->parents[k].id, PG_OID_RAWSZ);

		if (pg_oid_cmp(&c->parents[k], &o->parents[k]) &&
		    !(orig && !pg_oid_cmp(&orig->id, &o->parents[k])))
			return false;
	}
	return true;
}

/*
 * Whether c, with o's patch, was applied anew from the mail the patch was
 * posted in rather than copied from o: a tool that copies a commit (a
 * rebase, a cherry-pick, an amend, filter-repo, b4 trailers) keeps every
 * trailer it had and adds no mail link.  Two maintainers who both applied
 * the same posted patch leave two marks: the copy lacks the sign-off o's
 * committer added when applying it, and it adds the Link:/Message-Id: to
 * the mail that b4 and git am -m add.  On other parents than o's either
 * mark will do; on the same parents (both applied on one base) both must
 * be there.  Sets *why to the marks (a static string), or NULL.
 */
static int applied_anew(const char **why, const pg_commit *c, const pg_commit *o, bool mapped)
{
	pg_commit_delta d;
	bool lost = false, link = false;
	size_t i;
	int err;

	*why = NULL;
	if ((err = pg_commit_delta_compute(&d, c, o)) < 0)
		return err;
	for (i = 0; i < d.ntrailers_removed; i++)
		if (!strcasecmp(d.trailers_removed[i]->key, "Signed-off-by") &&
		    !pg_ident_same_person(&o->committer, &o->author) &&
		    strstr(d.trailers_removed[i]->value, o->committer.email))
			lost = true;
	for (i = 0; i < d.ntrailers_added; i++)
		if (!strcasecmp(d.trailers_added[i]->key, "Link") ||
		    !strcasecmp(d.trailers_added[i]->key, "Message-Id"))
			link = true;
	pg_commit_delta_release(&d);
	if (lost && link)
		*why = "it adds a link to the mail it was applied from, and lacks the Signed-off-by "
		       "upstream's committer added";
	else if (!mapped && link)
		*why = "it adds a link to the mail it was applied from";
	else if (!mapped && lost)
		*why = "it lacks the Signed-off-by upstream's committer added";
	return 0;
}

/*
 * Whether c is a copy of o, which shares its identity.  A copy keeps the
 * patch: a merge with the same tree whose parents map to o's, or a
 * non-merge whose patch id is o's (the same tree on mapped parents needs no
 * diff) and that was not applied anew from the patch's mail.  A patch that
 * cannot be computed counts as kept: a rewrite is never dismissed for want
 * of a diff.  *anew says why a same-patch commit is no copy.
 */
static int is_copy(bool *copy, enum patch_state *patch, const char **anew, pg_pull *p,
		   const pg_commit *c, const pg_commit *o, const pg_map *copies)
{
	bool mapped = parents_map(c, o, copies), same_tree = !pg_oid_cmp(&c->tree, &o->tree);
	pg_oid a, b;
	int err;

	*patch = PATCH_NONE;
	*anew = NULL;
	if (c->nparents > 1 || o->nparents > 1) {
		*copy = mapped && same_tree;
		return 0;
	}
	if (!(mapped && same_tree)) {
		if (pg_repo_patch_id(&a, p->repo, c) < 0 || pg_repo_patch_id(&b, p->repo, o) < 0) {
			pg_error_clear();
			*patch = PATCH_UNKNOWN;
			*copy = true;
			return 0;
		}
		*patch = pg_oid_cmp(&a, &b) ? PATCH_DIFFERS : PATCH_SAME;
		if (*patch == PATCH_DIFFERS) {
			*copy = false;
			return 0;
		}
	}
	if ((err = applied_anew(anew, c, o, mapped)) < 0)
		return err;
	*copy = !*anew;
	return 0;
}

/*
 * Whether c is a copy of o, which shares its author and subject but not
 * its identity (another author date or body): on evidence only, since
 * that key is loose.  A merge with o's tree on parents that map to o's; a
 * non-merge with o's tree on mapped parents, or o's patch id, and not
 * applied anew from the patch's mail.  A patch that cannot be computed is
 * no evidence.  *pid caches c's patch id (*have_pid) across candidates.
 */
static int is_redated_copy(bool *copy, enum patch_state *patch, pg_pull *p, const pg_commit *c,
			   const pg_commit *o, const pg_map *copies, pg_oid *pid, bool *have_pid)
{
	bool mapped = parents_map(c, o, copies), same_tree = !pg_oid_cmp(&c->tree, &o->tree);
	const char *anew = NULL;
	pg_oid b;
	int err;

	*patch = PATCH_NONE;
	*copy = false;
	if (c->nparents > 1 || o->nparents > 1) {
		*copy = mapped && same_tree;
		return 0;
	}
	if (!(mapped && same_tree)) {
		if ((!*have_pid && pg_repo_patch_id(pid, p->repo, c) < 0) ||
		    pg_repo_patch_id(&b, p->repo, o) < 0) {
			pg_error_clear();
			return 0;
		}
		*have_pid = true;
		if (pg_oid_cmp(pid, &b))
			return 0;
		*patch = PATCH_SAME;
	}
	if ((err = applied_anew(&anew, c, o, mapped)) < 0)
		return err;
	*copy = !anew;
	return 0;
}

/* The date fallback for c, whose identity matched no copy: *orig, or NULL. */
static int find_redated(const pg_commit **orig, enum patch_state *patch, pg_pull *p,
			const pg_commit *c, const pg_map *copies)
{
	const pg_commit **cands = NULL;
	size_t n = 0, k;
	pg_oid pid;
	bool have_pid = false, copy = false;
	int err;

	*orig = NULL;
	if ((err = pg_upstream_redated(&cands, &n, p->upstream, c)) < 0)
		return err;
	for (k = 0; k < n && !copy && err == 0; k++)
		if ((err = is_redated_copy(&copy, patch, p, c, cands[k], copies, &pid,
					   &have_pid)) == 0 && copy)
			*orig = cands[k];
	free(cands);
	return err;
}

/*
 * "1234abcd (1234abcd5678 in the pull: the rewritten copy of 9876fedc)":
 * where a quoted id that the rewrite changed now points.
 */
static int quoted_text(pg_buf *out, pg_pull *p, const pg_quoted_id *q, const pg_map *copies)
{
	char hex[PG_OID_HEXSZ + 1], ohex[PG_OID_HEXSZ + 1];
	const pg_commit *orig;
	pg_oid id;
	int err;

	if ((err = pg_buf_put(out, q->pull, q->pull_len)) < 0)
		return err;
	if (q->pull_len > PG_OID_HEXSZ || pg_repo_resolve_prefix(&id, p->repo, q->pull, q->pull_len) < 0) {
		pg_error_clear();
		return pg_buf_puts(out, " (names no commit)");
	}
	pg_oid_tohex(hex, &id);
	if (!pg_pull_find(p, &id))
		return pg_buf_printf(out, " (%.12s, not a pull commit)", hex);
	if (!(orig = pg_map_get(copies, id.id, PG_OID_RAWSZ)))
		return pg_buf_printf(out, " (%.12s in the pull, not a copy of an upstream commit)", hex);
	pg_oid_tohex(ohex, &orig->id);
	if (q->upstream_len <= PG_OID_HEXSZ && !strncmp(ohex, q->upstream, q->upstream_len))
		return pg_buf_printf(out, " (%.12s in the pull: the rewritten copy of %.*s)", hex,
				     (int)q->upstream_len, q->upstream);
	return pg_buf_printf(out, " (%.12s in the pull: the rewritten copy of %.12s, not of %.*s)",
			     hex, ohex, (int)(q->upstream_len > 40 ? 40 : q->upstream_len), q->upstream);
}

static int report_copy(pg_pull *p, const pg_commit *c, const pg_commit *o, const pg_map *copies,
		       enum patch_state patch)
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
	if (d.author_date)
		aspect(&summary, "author date changed");
	if (d.message)
		aspect(&summary, "message changed");
	if (d.committer)
		aspect(&summary, "committer changed");
	if (d.committer_date)
		aspect(&summary, "committer date changed");
	if (d.ntrailers_added)
		aspect(&summary, "trailers added");
	if (d.ntrailers_removed)
		aspect(&summary, "trailers removed");
	if (d.nquoted)
		aspect(&summary, "quoted ids rewritten");

	pg_oid_tohex(hex, &o->id);
	/* marked first: the findings that follow from it are no root causes, listed or not */
	if ((err = pg_report_mark_copy(p->report, &c->id,
				       pg_pull_severity(p, PG_CHECK_REWRITTEN_UPSTREAM))) < 0)
		goto done;
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
		    (patch != PATCH_NONE &&
		     (err = pg_finding_detail(f, "patch", patch_words[patch], NULL)) < 0))
			goto done;
	}
	if (d.author_date) {
		pg_buf_clear(&x);
		pg_buf_clear(&y);
		if ((err = pg_time_format(&x, c->author.time, c->author.offset)) < 0 ||
		    (err = pg_time_format(&y, o->author.time, o->author.offset)) < 0 ||
		    (err = pg_finding_detail(f, "author-date", x.ptr, y.ptr)) < 0)
			goto done;
	}
	if (d.message && (err = pg_finding_detail(f, "message", "changed", NULL)) < 0)
		goto done;
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
	for (i = 0; i < d.nquoted && err == 0; i++) {
		pg_buf_clear(&x);
		pg_buf_clear(&y);
		if ((err = quoted_text(&x, p, &d.quoted[i], copies)) == 0 &&
		    (err = pg_buf_put(&y, d.quoted[i].upstream, d.quoted[i].upstream_len)) == 0)
			err = pg_finding_detail(f, "quoted-id", x.ptr, y.ptr);
	}
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

/* --- labelled backports -------------------------------------------------------- */

/* Whether the label is one that names o: its id, full or abbreviated, resolves to o. */
static bool label_names(pg_pull *p, const char *s, const pg_backport_label *l, const pg_commit *o)
{
	pg_oid id;

	if (pg_repo_resolve_prefix(&id, p->repo, s + l->id, l->id_len) < 0) {
		pg_error_clear();
		return false;
	}
	return !pg_oid_cmp(&id, &o->id);
}

/* Whether c's message names o as the commit it was picked from. */
static bool names_original(pg_pull *p, const pg_commit *c, const pg_commit *o)
{
	pg_backport_label l;
	size_t at = 0;

	for (; pg_backport_label_next(&l, c->message, c->message_len, at); at = l.line + l.line_len)
		if (label_names(p, c->message, &l, o))
			return true;
	return false;
}

/*
 * Whether c's body, without the lines that name o (and a blank line after
 * each), is o's: "commit X upstream." opens a stable tree's copy.
 */
static int body_but_labels(bool *same, pg_pull *p, const pg_commit *c, const pg_commit *o)
{
	pg_buf b = PG_BUF_INIT;
	pg_backport_label l;
	size_t at = 0;
	int err = 0;

	while (err == 0 && pg_backport_label_next(&l, c->message, c->body_len, at)) {
		size_t next = l.line + l.line_len + 1;

		if (!label_names(p, c->message, &l, o)) {
			err = pg_buf_put(&b, c->message + at, next > c->body_len ? c->body_len - at : next - at);
			at = next;
			continue;
		}
		err = pg_buf_put(&b, c->message + at, l.line - at);
		if (next < c->body_len && c->message[next] == '\n')
			next++;
		at = next;
	}
	if (err == 0 && at < c->body_len)
		err = pg_buf_put(&b, c->message + at, c->body_len - at);
	*same = err == 0 && b.len == o->body_len && !memcmp(b.ptr, o->message, b.len);
	pg_buf_release(&b);
	return err;
}

/*
 * Whether c, a copy of o whose message names o, changes nothing that a
 * backport does not: new parents, the same patch on another tree (known,
 * not assumed), another committer and date, the label itself, the
 * backporter's Signed-off-by, a commit signature lost.  Anything else (the
 * author date, a trailer dropped, quoted ids rewritten, the message beyond
 * the label, a mergetag) is a change no label explains: still a finding.
 */
static int only_backport_changes(bool *only, pg_pull *p, const pg_commit *c, const pg_commit *o,
				 enum patch_state patch)
{
	pg_commit_delta d;
	pg_backport_label l;
	size_t i;
	int err;

	*only = false;
	if (patch == PATCH_UNKNOWN)
		return 0;
	if ((err = pg_commit_delta_compute(&d, c, o)) < 0)
		return err;
	*only = !d.author_date && !d.ntrailers_removed && !d.nquoted;
	for (i = 0; i < d.ntrailers_added && *only; i++) {
		const char *line = d.trailers_added[i]->line;

		*only = !strcasecmp(d.trailers_added[i]->key, "Signed-off-by") ||
			(pg_backport_label_next(&l, line, strlen(line), 0) &&
			 label_names(p, line, &l, o));
	}
	for (i = 0; i < d.nheaders && *only; i++)
		*only = d.headers[i].kind == PG_HEADER_REMOVED &&
			(!strcmp(d.headers[i].name, "gpgsig") ||
			 !strcmp(d.headers[i].name, "gpgsig-sha256"));
	if (*only && d.message)
		err = body_but_labels(only, p, c, o);
	pg_commit_delta_release(&d);
	return err;
}

/*
 * A labelled backport: the maintenance-branch workflow, not a silent
 * rewrite.  A note, and a finding too when the policy gives
 * labelled-backport a severity.
 */
static int report_backport(pg_pull *p, const pg_commit *c, const pg_commit *o)
{
	enum pg_severity sev = pg_pull_severity(p, PG_CHECK_LABELLED_BACKPORT);
	char hex[PG_OID_HEXSZ + 1];
	pg_finding *f = NULL;
	int err;

	pg_oid_tohex(hex, &o->id);
	if ((err = pg_report_add_note(p->report, PG_CHECK_LABELLED_BACKPORT, c, &o->id,
				      "labelled backport of upstream commit %.12s: its message "
				      "names it, and it changes nothing a backport does not",
				      hex)) < 0 || sev == PG_SEV_OFF)
		return err;
	if ((err = pg_report_add(&f, p->report, PG_CHECK_LABELLED_BACKPORT, sev, c,
				 "labelled backport of upstream commit %.12s", hex)) < 0 || !f)
		return err;
	f->has_upstream = true;
	f->upstream = o->id;
	return 0;
}

/*
 * A commit whose message names upstream commit o as its original, with
 * o's identity and another patch: the label claims a copy the diff
 * belies, a change nobody labelled.
 */
static int report_changed_backport(pg_pull *p, const pg_commit *c, const pg_commit *o)
{
	char hex[PG_OID_HEXSZ + 1];
	pg_finding *f = NULL;
	int err;

	pg_oid_tohex(hex, &o->id);
	if ((err = pg_report_add(&f, p->report, PG_CHECK_REWRITTEN_UPSTREAM,
				 pg_pull_severity(p, PG_CHECK_REWRITTEN_UPSTREAM), c,
				 "labelled backport of upstream commit %.12s whose patch differs "
				 "from it: a change the label does not mention", hex)) < 0 || !f)
		return err;
	f->has_upstream = true;
	f->upstream = o->id;
	return pg_finding_detail(f, "patch", patch_words[PATCH_DIFFERS], NULL);
}

/* A commit that shares an upstream commit's identity but is no copy of it: a note. */
static int note_rework(pg_pull *p, const pg_commit *c, const pg_commit *o, const char *anew)
{
	char hex[PG_OID_HEXSZ + 1];

	pg_oid_tohex(hex, &o->id);
	if (anew)
		return pg_report_add_note(p->report, PG_CHECK_REWRITTEN_UPSTREAM, c, &o->id,
					  "applies the patch of upstream commit %.12s again, from "
					  "its mail (%s): the same change applied twice, not a "
					  "rewrite", hex, anew);
	if (c->nparents > 1 || o->nparents > 1)
		return pg_report_add_note(p->report, PG_CHECK_REWRITTEN_UPSTREAM, c, &o->id,
					  "re-does upstream merge %.12s (same author, date and "
					  "message) with other parents or another tree: not a copy",
					  hex);
	return pg_report_add_note(p->report, PG_CHECK_REWRITTEN_UPSTREAM, c, &o->id,
				  "re-applies an upstream change with a different patch: upstream "
				  "commit %.12s has the same author, date and message", hex);
}

/*
 * How far back from upstream's tip the walk for reverts reads: about
 * three years of the kernel's history, 11 s at the 43 us a commit it
 * costs on git.git (docs/scale.md).  It is made only when the pull holds
 * copies, once for all of them.  A revert older than that is not seen,
 * and its copy stays a finding: the walk can only take findings away.
 */
#define REVERT_WALK_MAX ((size_t)250000)

/*
 * A copy of an upstream commit that upstream has since reverted brings
 * the change back (the series posted again after a revert, a cherry-pick
 * of the reverted commit): it re-creates nothing upstream still holds.  A
 * note, and the commit is the pull's own.
 */
static int note_brought_back(pg_pull *p, size_t i, const pg_oid *by)
{
	char hex[PG_OID_HEXSZ + 1], rhex[PG_OID_HEXSZ + 1];
	const pg_commit *o = p->original[i];

	pg_oid_tohex(hex, &o->id);
	pg_oid_tohex(rhex, by);
	p->original[i] = NULL;
	return pg_report_add_note(p->report, PG_CHECK_REWRITTEN_UPSTREAM, p->commits[i], &o->id,
				  "brings back upstream commit %.12s, which upstream reverted "
				  "in %.12s: a change applied again, not a rewrite", hex, rhex);
}

int pg_check_rewritten_upstream(pg_pull *p)
{
	pg_map copies = PG_MAP_INIT; /* pull id -> upstream original */
	enum patch_state *patch = calloc(p->ncommits + 1, sizeof(*patch));
	bool *reverted = NULL;
	pg_oid *by = NULL;
	size_t i, k;
	int err = 0;

	if (!patch)
		return pg_error_oom();
	/* oldest first, so that a commit's parents are judged before it */
	for (i = 0; i < p->ncommits && err == 0; i++) {
		const pg_commit **cands = NULL, *relabelled = NULL;
		const char *anew = NULL, *why = NULL;
		size_t n = 0;
		bool copy = false;

		if ((err = pg_upstream_candidates(&cands, &n, p->upstream, p->commits[i])) < 0)
			break;
		for (k = 0; k < n && !copy && err == 0; k++) {
			if ((err = is_copy(&copy, &patch[i], &why, p, p->commits[i], cands[k],
					   &copies)) < 0)
				break;
			if (copy)
				p->original[i] = cands[k];
			else if (!anew)
				anew = why;
			if (!copy && patch[i] == PATCH_DIFFERS && !relabelled &&
			    names_original(p, p->commits[i], cands[k]))
				relabelled = cands[k];
		}
		if (err == 0 && !copy &&
		    (err = find_redated(&p->original[i], &patch[i], p, p->commits[i],
					&copies)) == 0)
			copy = p->original[i] != NULL;
		if (err == 0 && copy)
			err = pg_map_set(&copies, p->commits[i]->id.id, PG_OID_RAWSZ,
					 (void *)p->original[i]);
		else if (err == 0 && relabelled)
			err = report_changed_backport(p, p->commits[i], relabelled);
		else if (err == 0 && n)
			err = note_rework(p, p->commits[i], cands[0], anew);
		free(cands);
	}
	if (err == 0 && copies.count && (!(reverted = calloc(p->ncommits, sizeof(*reverted))) ||
					 !(by = calloc(p->ncommits, sizeof(*by)))))
		err = pg_error_oom();
	if (err == 0 && copies.count)
		err = pg_upstream_reverts(reverted, by, p->repo, &p->upstream_tip, p->original,
					  p->ncommits, REVERT_WALK_MAX);
	/* a pull that copies the revert too brings nothing back: it re-creates both */
	for (i = 0; i < p->ncommits && err == 0 && reverted; i++)
		for (k = 0; k < p->ncommits && reverted[i]; k++)
			if (p->original[k] && !pg_oid_cmp(&p->original[k]->id, &by[i]))
				reverted[i] = false;
	for (i = 0; i < p->ncommits && err == 0; i++) {
		bool labelled = false;

		if (!p->original[i])
			continue;
		if (names_original(p, p->commits[i], p->original[i]) &&
		    (err = only_backport_changes(&labelled, p, p->commits[i], p->original[i],
						 patch[i])) < 0)
			break;
		if (labelled && p->labelled)
			p->labelled[i] = true;
		if (labelled)
			err = report_backport(p, p->commits[i], p->original[i]);
		else if (reverted && reverted[i])
			err = note_brought_back(p, i, &by[i]);
		else
			err = report_copy(p, p->commits[i], p->original[i], &copies, patch[i]);
	}
	pg_map_release(&copies);
	free(reverted);
	free(by);
	free(patch);
	return err;
}
