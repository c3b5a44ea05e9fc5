/* check_fixes.c - fixes-tag: each Fixes: names a real upstream or pull commit, by its subject. */
#include "verifier/mail.h"
#include "verifier/pull.h"
#include "common/error.h"
#include "common/hex.h"

/*
 * Documentation/process/submitting-patches.rst documents
 * 'Fixes: <12+ hex> ("subject")'; real trailers stray from it ("commit X
 * (...)", parentheses or quotes alone, git's reference format with a date,
 * a subject cut short with "...").  None of that hides which commit is
 * meant, and what matters is that commit: it is read leniently.
 */
static bool is_hex(char c)
{
	return pg_hex_digit((unsigned char)c) >= 0;
}

static bool is_alnum(char c)
{
	return is_hex(c) || (c >= 'g' && c <= 'z') || (c >= 'G' && c <= 'Z') || c == '_';
}

#define FIXES_ID_MIN 7

int pg_fixes_parse(pg_fixes *out, const char *value)
{
	const char *p = value, *end;
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	while (*p == ' ')
		p++;
	if (!strncasecmp(p, "commit ", 7))
		p += 7;
	while (is_hex(p[n]))
		n++;
	if (n < FIXES_ID_MIN || n > PG_OID_HEXSZ || is_alnum(p[n]))
		return -1;
	out->id = p;
	out->idlen = n;
	p += n;
	while (*p == ' ')
		p++;
	end = p + strlen(p);
	while (end > p && (end[-1] == ' ' || end[-1] == '.'))
		end--;
	if (end - p >= 2 && p[0] == '(' && p[1] == '"') {
		/* the documented form, or its opening when the line was cut */
		p += 2;
		if (end - p >= 2 && end[-1] == ')' && end[-2] == '"')
			end -= 2;
		else
			out->cut = true;
	} else if (end - p >= 2 && ((p[0] == '(' && end[-1] == ')') || (p[0] == '"' && end[-1] == '"'))) {
		p++;
		end--;
		if (end - p >= 2 && p[0] == '"' && end[-1] == '"') {
			p++;
			end--;
		}
	}
	out->subject = p;
	out->sublen = (size_t)(end - p);
	return 0;
}

/* Whether what a Fixes: quotes is c's subject, read as leniently as it is written. */
static bool subject_matches(const char *quoted, const pg_buf *line, const pg_buf *summary)
{
	size_t n = strlen(quoted), k;
	static const char *const cuts[] = { "...", "..", "\xE2\x80\xA6" };

	if (!strcmp(quoted, line->ptr) || !strcmp(quoted, summary->ptr))
		return true;
	/* git log --pretty=reference: "subject, 2024-10-28" */
	if (n > 12 && quoted[n - 12] == ',' && quoted[n - 11] == ' ' &&
	    strspn(quoted + n - 10, "0123456789-") == 10 &&
	    ((line->len == n - 12 && !memcmp(quoted, line->ptr, n - 12)) ||
	     (summary->len == n - 12 && !memcmp(quoted, summary->ptr, n - 12))))
		return true;
	/* a subject cut short */
	for (k = 0; k < PG_ARRAY_SIZE(cuts); k++) {
		size_t c = strlen(cuts[k]);

		if (n > c + 8 && !strcmp(quoted + n - c, cuts[k]) &&
		    (!strncmp(summary->ptr, quoted, n - c) || !strncmp(line->ptr, quoted, n - c)))
			return true;
	}
	return false;
}

#define DAY (24 * 60 * 60)

/* A trailer as it reads on one line: a folded Fixes: with its runs of blanks collapsed. */
static int trailer_detail(pg_finding *f, const pg_trailer *t)
{
	pg_buf line = PG_BUF_INIT;
	int err = pg_mail_squeeze(&line, t->line, strlen(t->line));

	if (err == 0)
		err = pg_finding_detail(f, "trailer", line.ptr, NULL);
	pg_buf_release(&line);
	return err;
}

static int not_found(pg_pull *p, enum pg_severity sev, const pg_commit *c, const pg_trailer *t,
		     const char *id, size_t idlen, const char *why)
{
	pg_finding *f = NULL;
	int err = pg_report_add(&f, p->report, PG_CHECK_FIXES_TAG, sev, c,
				"Fixes: names %.*s, which is neither an upstream nor a pull commit%s",
				(int)idlen, id, why);

	return err ? err : trailer_detail(f, t);
}

/*
 * Where the fixed commit is, without walking history per tag: a pull
 * commit, or an upstream commit the copy search examined, is found by id;
 * with upstream's identity index, any other commit is upstream's exactly
 * when the index holds it (one probe).  Without the index, any other
 * commit committed after the search's date line is not upstream's: the
 * search saw every upstream commit since then.  An older one is taken as
 * upstream's once it exists, predates the fix and has the quoted subject:
 * proving its ancestry would walk all history since it, which is what made
 * this check slow.  Returns 1 when target is not upstream's.
 */
static int outside_upstream(const pg_pull *p, const pg_commit *target)
{
	int64_t since = pg_upstream_since(p->upstream);
	int held;

	if (pg_pull_find(p, &target->id))
		return 0;
	if ((held = pg_upstream_holds(p->upstream, target)) < -1)
		return held;
	if (held >= 0)
		return !held;
	/* a day of margin for a commit hidden behind a parent with a skewed clock */
	return !pg_upstream_truncated(p->upstream) && since && target->committer.time >= since + DAY;
}

static int check_one(pg_pull *p, enum pg_severity sev, const pg_commit *c, const pg_trailer *t)
{
	pg_fixes fx;
	size_t idlen;
	pg_oid id;
	pg_commit *target = NULL;
	pg_finding *f = NULL;
	pg_buf quoted = PG_BUF_INIT, real = PG_BUF_INIT, summary = PG_BUF_INIT;
	char hex[PG_OID_HEXSZ + 1];
	int64_t slack = (int64_t)p->policy->future_slack_minutes * 60;
	int err;

	if (pg_fixes_parse(&fx, t->value) < 0) {
		err = pg_report_add(&f, p->report, PG_CHECK_FIXES_TAG, sev, c,
				    "Fixes: names no commit (expected: Fixes: <sha> (\"subject\"))");
		return err ? err : trailer_detail(f, t);
	}
	idlen = fx.idlen;
	/* by id first: one lookup in the object database */
	err = pg_repo_resolve_prefix(&id, p->repo, fx.id, idlen);
	if (err == PG_ENOTFOUND || err == PG_EINVALID) {
		pg_error_clear();
		return not_found(p, sev, c, t, fx.id, idlen, "");
	}
	if (err < 0 || (err = pg_repo_read_commit(&target, p->repo, &id)) < 0)
		return err;
	pg_oid_tohex(hex, &id);
	if ((err = outside_upstream(p, target)) < 0)
		goto done;
	if (err == 1) {
		err = not_found(p, sev, c, t, fx.id, idlen, pg_upstream_since(p->upstream) ?
				": upstream has no such commit since the date window's line" :
				": upstream's history has no such commit");
		goto done;
	}
	if (target->author.time > c->author.time + slack) {
		err = pg_report_add(&f, p->report, PG_CHECK_FIXES_TAG, sev, c,
				    "Fixes: %.12s names a commit written after this fix", hex);
		if (err == 0 && (err = pg_time_format(&quoted, c->author.time, c->author.offset)) == 0 &&
		    (err = pg_time_format(&real, target->author.time, target->author.offset)) == 0)
			err = pg_finding_detail(f, "authored", quoted.ptr, real.ptr);
		if (err == 0)
			err = trailer_detail(f, t);
		goto done;
	}
	if (!fx.sublen)
		goto done; /* no subject quoted: the id alone names the commit */
	/* a folded trailer is joined with single spaces: compare as such */
	if ((err = pg_mail_squeeze(&quoted, fx.subject, fx.sublen)) < 0 ||
	    (err = pg_mail_squeeze(&real, target->subject, strlen(target->subject))) < 0 ||
	    (err = pg_commit_shortlog_subject(&summary, target)) < 0)
		goto done;
	if (fx.cut && (err = pg_buf_puts(&quoted, "...")) < 0)
		goto done;
	if (!subject_matches(quoted.ptr, &real, &summary)) {
		err = pg_report_add(&f, p->report, PG_CHECK_FIXES_TAG, sev, c,
				    "Fixes: %.12s quotes a subject that is not the commit's", hex);
		if (err == 0)
			err = pg_finding_detail(f, "subject", quoted.ptr, target->subject);
	}
done:
	pg_buf_release(&quoted);
	pg_buf_release(&real);
	pg_buf_release(&summary);
	pg_commit_free(target);
	return err;
}

int pg_check_fixes_tag(pg_pull *p)
{
	enum pg_severity sev = pg_pull_severity(p, PG_CHECK_FIXES_TAG);
	size_t i, j;
	int err = 0;

	for (i = 0; i < p->ncommits && err == 0 && sev != PG_SEV_OFF; i++)
		for (j = 0; j < p->commits[i]->ntrailers && err == 0; j++)
			if (!strcasecmp(p->commits[i]->trailers[j].key, "Fixes"))
				err = check_one(p, sev, p->commits[i], &p->commits[i]->trailers[j]);
	return err;
}
