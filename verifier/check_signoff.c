/* check_signoff.c - signoff: the Signed-off-by lines the policy requires of each non-merge commit. */
#include "verifier/pull.h"
#include "common/error.h"
#include "common/str.h"

/*
 * Documentation/process/submitting-patches.rst, "Sign your work".  A
 * sign-off is a line of its own anywhere in the message, as checkpatch
 * reads it, not only in the last paragraph: a maintainer's note or a
 * Reviewed-by block often follows the author's Signed-off-by.
 */
#define SOB "signed-off-by:"

/* The next "Signed-off-by:" line of c from *at: its value in *v, *vlen; false at the end. */
static bool next_signoff(const pg_commit *c, size_t *at, const char **v, size_t *vlen)
{
	const char *m = c->message, *end = c->message + c->message_len;

	while (m + *at < end) {
		const char *line = m + *at, *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = (size_t)((nl ? nl : end) - line);

		*at += n + (nl ? 1 : 0);
		pg_str_ltrim(&line, &n, PG_STR_BLANKS);
		if (n < strlen(SOB) || strncasecmp(line, SOB, strlen(SOB)))
			continue;
		line += strlen(SOB);
		n -= strlen(SOB);
		pg_str_trim_line(&line, &n);
		*v = line;
		*vlen = n;
		return true;
	}
	return false;
}

/*
 * "Name <email>" names who: the same e-mail (without regard to case), or
 * the same name under another address (checkpatch only warns of that).
 */
static bool names(const char *v, size_t len, const pg_ident *who)
{
	const char *lt = memchr(v, '<', len), *gt = lt ? memchr(lt, '>', len - (size_t)(lt - v)) : NULL;
	size_t n = strlen(who->email), name_len;

	if (!lt || !gt)
		return false;
	if (n && (size_t)(gt - lt - 1) == n && !strncasecmp(lt + 1, who->email, n))
		return true;
	name_len = (size_t)(lt - v);
	while (name_len && v[name_len - 1] == ' ')
		name_len--;
	return who->name[0] && strlen(who->name) == name_len && !memcmp(v, who->name, name_len);
}

bool pg_commit_signed_off_by(const pg_commit *c, const pg_ident *who)
{
	const char *v;
	size_t at = 0, len;

	while (next_signoff(c, &at, &v, &len))
		if (names(v, len, who))
			return true;
	return false;
}

static int signoffs_text(pg_buf *out, const pg_commit *c)
{
	const char *v;
	size_t at = 0, len;
	int err = 0;

	while (err == 0 && next_signoff(c, &at, &v, &len))
		if ((err = pg_buf_puts(out, out->len ? ", " : "")) == 0)
			err = pg_buf_put(out, v, len);
	if (err == 0 && !out->len)
		err = pg_buf_puts(out, "(none)");
	return err;
}

int pg_check_signoff(pg_pull *p)
{
	enum pg_severity sev = pg_pull_severity(p, PG_CHECK_SIGNOFF);
	pg_buf who = PG_BUF_INIT, sobs = PG_BUF_INIT;
	size_t i;
	int err = 0;

	for (i = 0; i < p->ncommits && err == 0 && sev != PG_SEV_OFF; i++) {
		const pg_commit *c = p->commits[i];
		bool author, committer;
		pg_finding *f = NULL;

		if (c->nparents > 1)
			continue;
		/* what the policy does not require counts as given */
		author = !p->policy->signoff_author || pg_commit_signed_off_by(c, &c->author);
		committer = !p->policy->signoff_committer ||
			    pg_commit_signed_off_by(c, &c->committer);
		if (author && committer)
			continue;
		err = pg_report_add(&f, p->report, PG_CHECK_SIGNOFF, sev, c,
				    "no Signed-off-by from its %s",
				    !author && !committer ?
					(pg_ident_same_person(&c->author, &c->committer) ?
					 "author and committer" : "author, nor from its committer") :
				    !author ? "author" : "committer");
		pg_buf_clear(&who);
		if (err == 0 && !author && (err = pg_ident_format(&who, &c->author)) == 0)
			err = pg_finding_detail(f, "author", who.ptr, NULL);
		pg_buf_clear(&who);
		if (err == 0 && !committer && (err = pg_ident_format(&who, &c->committer)) == 0)
			err = pg_finding_detail(f, "committer", who.ptr, NULL);
		pg_buf_clear(&sobs);
		if (err == 0 && (err = signoffs_text(&sobs, c)) == 0)
			err = pg_finding_detail(f, "signed-off-by", sobs.ptr, NULL);
	}
	pg_buf_release(&who);
	pg_buf_release(&sobs);
	return err;
}
