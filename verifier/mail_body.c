/* mail_body.c - parse the text git request-pull prints: base, URL and ref, head, message, shortlog, diffstat. */
#include "verifier/mail.h"
#include "verifier/mail_lines.h"
#include "common/array.h"
#include "common/error.h"

#define MAX_URL 4096
#define QUOTE_MAX PG_MAIL_QUOTE_MAX

static const char SINCE[] = "The following changes since commit ";
static const char AVAIL[] = "are available in the ";
static const char UPTO[] = "for you to fetch changes up to ";

void pg_pull_request_free(pg_pull_request *pr)
{
	size_t i;

	if (!pr)
		return;
	for (i = 0; i < pr->nshortlog; i++) {
		free(pr->shortlog[i].author);
		free(pr->shortlog[i].subject);
	}
	for (i = 0; i < pr->nfiles; i++) {
		free(pr->files[i].path);
		free(pr->files[i].old_path);
	}
	free(pr->shortlog);
	free(pr->files);
	free(pr->subject);
	free(pr->message_id);
	free(pr->base_line);
	free(pr->url);
	free(pr->ref);
	free(pr->head_line);
	free(pr->message);
	free(pr);
}

/* A quoted excerpt of a line for an error message. */
static int unexpected(const char *what, const char *l, size_t n)
{
	return pg_error_set(PG_EINVALID, "expected %s, got '%.*s%s'", what,
			    (int)(n > QUOTE_MAX ? QUOTE_MAX : n), l, n > QUOTE_MAX ? "..." : "");
}

static int truncated(const char *where)
{
	return pg_error_set(PG_EINVALID, "truncated mail: it ends %s", where);
}

static char *dup_trimmed(const char *l, size_t n)
{
	pg_str_trim(&l, &n, PG_STR_SPACES);
	return pg_strndup(l, n);
}

/* "<prefix><40 hex>:" */
static int oid_line(pg_oid *out, const char *l, size_t n, size_t skip, const char *what)
{
	const char *hex = l + skip;
	size_t hn = n - skip;
	int err;

	pg_str_trim(&hex, &hn, PG_STR_SPACES);
	if (hn && hex[hn - 1] == ':')
		hn--;
	if ((err = pg_oid_fromhex(out, hex, hn)) < 0)
		return pg_error_wrap(err, "the %s", what);
	return 0;
}

static bool is_dashes(const char *l, size_t n)
{
	size_t i;

	pg_str_trim(&l, &n, PG_STR_SPACES);
	for (i = 0; i < n; i++)
		if (l[i] != '-')
			return false;
	return n >= 20;
}

/* "Author Name (12):" -- *count is 12, *an the length of the name. */
static bool group_header(const char *l, size_t n, size_t *an, size_t *count)
{
	size_t i, k, digits = 0, v = 0;

	pg_str_rtrim(l, &n, PG_STR_BLANKS);
	if (n < 6 || is_ws(l[0]) || l[n - 1] != ':' || l[n - 2] != ')')
		return false;
	for (i = n - 3; i > 0 && l[i] >= '0' && l[i] <= '9'; i--) {
		if (++digits > 7)
			return false;
	}
	if (!digits || l[i] != '(' || i < 2 || l[i - 1] != ' ')
		return false;
	for (k = i + 1; k < n - 2; k++)
		v = v * 10 + (size_t)(l[k] - '0');
	*an = i - 1;
	*count = v;
	return true;
}

static int add_commit(pg_pull_request *pr, size_t *alloc, const char *author, size_t an,
		      const char *l, size_t n)
{
	pg_buf s = PG_BUF_INIT;
	pg_pr_commit *e;
	int err;

	if (pr->nshortlog >= PG_MAIL_MAX_ENTRIES)
		return pg_error_set(PG_ETOOBIG, "the shortlog exceeds %d commits",
				    PG_MAIL_MAX_ENTRIES);
	if ((err = PG_ARRAY_GROW(pr->shortlog, pr->nshortlog + 1, *alloc)) < 0)
		return err;
	if ((err = pg_mail_squeeze(&s, l, n)) < 0) {
		pg_buf_release(&s);
		return err;
	}
	e = &pr->shortlog[pr->nshortlog];
	e->author = pg_strndup(author, an);
	e->subject = pg_buf_detach(&s);
	if (!e->author || !e->subject) {
		free(e->author);
		free(e->subject);
		return PG_ENOMEM;
	}
	pr->nshortlog++;
	return 0;
}

/* A mailer wrapped a subject: the line continues the last one. */
static int continue_commit(pg_pull_request *pr, const char *l, size_t n)
{
	pg_buf s = PG_BUF_INIT;
	pg_pr_commit *e = &pr->shortlog[pr->nshortlog - 1];
	int err;

	if ((err = pg_buf_puts(&s, e->subject)) < 0 || (err = pg_buf_putc(&s, ' ')) < 0 ||
	    (err = pg_mail_squeeze(&s, l, n)) < 0) {
		pg_buf_release(&s);
		return err;
	}
	free(e->subject);
	e->subject = pg_buf_detach(&s);
	return e->subject ? 0 : PG_ENOMEM;
}

static int parse_shortlog(pg_pull_request *pr, cursor *c)
{
	const char *l, *author;
	size_t n, an, want, alloc = 0;
	int err;

	while (skip_blank(c)) {
		cursor t = *c;
		size_t have = 0;

		if (!next_line(&t, &l, &n) || !group_header(l, n, &an, &want))
			break;
		*c = t;
		author = l;
		for (;;) {
			size_t an2, want2;

			t = *c;
			if (!next_line(&t, &l, &n) || pg_str_is_blank(l, n, PG_STR_SPACES) ||
			    (!is_ws(*l) && group_header(l, n, &an2, &want2)))
				break;
			*c = t;
			if (is_ws(*l) && have < want) {
				err = add_commit(pr, &alloc, author, an, l, n);
				have++;
			} else if (have) {
				err = continue_commit(pr, l, n);
			} else {
				err = unexpected("an indented commit subject", l, n);
			}
			if (err < 0)
				return err;
		}
		if (have != want)
			return pg_error_set(PG_EINVALID, "the shortlog says '%.*s' has %zu commits "
					    "but lists %zu: truncated or edited mail",
					    (int)(an > QUOTE_MAX ? QUOTE_MAX : an), author, want, have);
	}
	if (!pr->nshortlog)
		return pg_error_set(PG_EINVALID, "no shortlog ('Author (N):' and subjects)");
	return 0;
}

/* Undo git's C-style quoting of a path ("\"a\\tb\""); plain paths are copied. */
static int unquote(pg_buf *out, const char *s, size_t n)
{
	size_t i;
	int err = 0;

	if (n < 2 || s[0] != '"' || s[n - 1] != '"')
		return pg_buf_put(out, s, n);
	for (i = 1; i + 1 < n && err == 0; i++) {
		char ch = s[i];

		if (ch == '\\' && i + 2 < n) {
			ch = s[++i];
			if (ch >= '0' && ch <= '3' && i + 2 < n - 1 &&
			    s[i + 1] >= '0' && s[i + 1] <= '7' && s[i + 2] >= '0' && s[i + 2] <= '7') {
				ch = (char)((ch - '0') << 6 | (s[i + 1] - '0') << 3 | (s[i + 2] - '0'));
				i += 2;
			} else {
				const char *from = "abfnrtv", *to = "\a\b\f\n\r\t\v";
				const char *k = strchr(from, ch);

				if (k && ch)
					ch = to[k - from];
			}
		}
		err = pg_buf_putc(out, ch);
	}
	return err;
}

/* Drop a leading '/' and doubled slashes left by "{ => dir}" expansion. */
static char *tidy_path(pg_buf *b, bool elided)
{
	size_t i, o = 0;

	for (i = 0; i < b->len; i++) {
		if (b->ptr[i] == '/' && ((o == 0 && !elided) || (o && b->ptr[o - 1] == '/')))
			continue;
		b->ptr[o++] = b->ptr[i];
	}
	pg_buf_truncate(b, o);
	return pg_buf_detach(b);
}

/*
 * A diffstat name: "path", "old => new" or "pre/{old => new}/post", maybe
 * quoted, maybe cut by git to ".../tail" (even inside the braces).
 */
static int add_file(pg_pull_request *pr, size_t *alloc, const char *l, size_t n)
{
	pg_buf a = PG_BUF_INIT, b = PG_BUF_INIT;
	pg_pr_file *f;
	const char *arrow = NULL, *open, *close, *end;
	bool elided = false;
	size_t i;
	int err;

	if (pr->nfiles >= PG_MAIL_MAX_ENTRIES)
		return pg_error_set(PG_ETOOBIG, "the diffstat exceeds %d files", PG_MAIL_MAX_ENTRIES);
	if ((err = PG_ARRAY_GROW(pr->files, pr->nfiles + 1, *alloc)) < 0)
		return err;
	if (n > 3 && !memcmp(l, "...", 3)) {
		elided = true;
		l += 3;
		n -= 3;
	}
	for (i = 0; i + 4 <= n; i++) {
		if (!memcmp(l + i, " => ", 4)) {
			arrow = l + i;
			break;
		}
	}
	end = l + n;
	open = arrow ? memchr(l, '{', (size_t)(arrow - l)) : NULL;
	close = arrow ? memchr(arrow, '}', (size_t)(end - arrow)) : NULL;
	if (arrow && open && close) {
		/* "pre{old => new}post": a is pre old post, b is pre new post */
		if ((err = pg_buf_put(&a, l, (size_t)(open - l))) < 0 ||
		    (err = pg_buf_put(&a, open + 1, (size_t)(arrow - open - 1))) < 0 ||
		    (err = pg_buf_put(&a, close + 1, (size_t)(end - close - 1))) < 0 ||
		    (err = pg_buf_put(&b, l, (size_t)(open - l))) < 0 ||
		    (err = pg_buf_put(&b, arrow + 4, (size_t)(close - arrow - 4))) < 0 ||
		    (err = pg_buf_put(&b, close + 1, (size_t)(end - close - 1))) < 0)
			goto done;
	} else if (arrow && close && elided) {
		/*
		 * git cut the name inside the braces: "...k_defconfig => new}/post".
		 * The old side is a tail, and so is the new (what preceded '{' is gone).
		 */
		if ((err = pg_buf_put(&a, l, (size_t)(arrow - l))) < 0 ||
		    (err = pg_buf_put(&a, close + 1, (size_t)(end - close - 1))) < 0 ||
		    (err = pg_buf_put(&b, arrow + 4, (size_t)(close - arrow - 4))) < 0 ||
		    (err = pg_buf_put(&b, close + 1, (size_t)(end - close - 1))) < 0)
			goto done;
	} else if (arrow) {
		if ((err = unquote(&a, l, (size_t)(arrow - l))) < 0 ||
		    (err = unquote(&b, arrow + 4, (size_t)(end - arrow - 4))) < 0)
			goto done;
	} else if ((err = unquote(&b, l, n)) < 0) {
		goto done;
	}
	f = &pr->files[pr->nfiles];
	memset(f, 0, sizeof(*f));
	f->elided = elided;
	if (!(f->path = tidy_path(&b, elided)) || (arrow && !(f->old_path = tidy_path(&a, elided)))) {
		free(f->path);
		err = PG_ENOMEM;
		goto done;
	}
	pr->nfiles++;
done:
	pg_buf_release(&a);
	pg_buf_release(&b);
	return err;
}

/* " N files changed, ..." or " 1 file changed, ..." */
static bool summary_line(const char *l, size_t n, size_t *count)
{
	size_t v = 0, digits = 0;

	pg_str_trim(&l, &n, PG_STR_SPACES);
	while (n && *l >= '0' && *l <= '9' && digits < 9) {
		v = v * 10 + (size_t)(*l - '0');
		l++, n--, digits++;
	}
	if (!digits || !(starts_ci(l, n, " files changed") || starts_ci(l, n, " file changed")))
		return false;
	*count = v;
	return true;
}

/* " path | 12 ++--" or " path | Bin 0 -> 12 bytes": the name, trimmed. */
static bool stat_line(const char *l, size_t n, const char **name, size_t *nn)
{
	const char *bar = NULL, *r;
	size_t i, rn;

	if (!n || (*l != ' ' && *l != '\t'))
		return false;
	for (i = 0; i + 3 <= n; i++)
		if (!memcmp(l + i, " | ", 3))
			bar = l + i;
	if (!bar)
		return false;
	r = bar + 3;
	rn = (size_t)(l + n - r);
	pg_str_trim(&r, &rn, PG_STR_SPACES);
	if (!starts_ci(r, rn, "Bin")) {
		if (!rn || *r < '0' || *r > '9')
			return false;
		while (rn && *r >= '0' && *r <= '9')
			r++, rn--;
		for (i = 0; i < rn; i++)
			if (r[i] != ' ' && r[i] != '+' && r[i] != '-')
				return false;
	}
	*name = l;
	*nn = (size_t)(bar - l);
	pg_str_trim(name, nn, PG_STR_SPACES);
	return *nn > 0;
}

static int parse_diffstat(pg_pull_request *pr, cursor *c)
{
	const char *l, *name;
	size_t n, nn, alloc = 0;
	int err;

	if (!skip_blank(c))
		return truncated("after the shortlog, before the diffstat");
	while (next_line(c, &l, &n)) {
		if (summary_line(l, n, &pr->files_changed)) {
			if (!pr->files_elided && pr->files_changed != pr->nfiles)
				return pg_error_set(PG_EINVALID, "the diffstat lists %zu files but says "
						    "%zu changed: truncated or edited mail",
						    pr->nfiles, pr->files_changed);
			return 0;
		}
		if (pg_str_is_blank(l, n, PG_STR_SPACES)) {
			continue;
		} else if (n >= 4 && pg_str_is_blank(l, n - 3, PG_STR_SPACES) &&
			   !memcmp(l + n - 3, "...", 3)) {
			pr->files_elided = true;
		} else if (stat_line(l, n, &name, &nn)) {
			if ((err = add_file(pr, &alloc, name, nn)) < 0)
				return err;
		} else {
			return unexpected("a diffstat line (' path | changes') or its summary", l, n);
		}
	}
	return truncated("in the diffstat, before its summary ('N files changed')");
}

/* "  <url> <ref>": the ref is the last word, when there are two or more. */
static int parse_url(pg_pull_request *pr, const char *l, size_t n)
{
	const char *sp;

	pg_str_trim(&l, &n, PG_STR_SPACES);
	if (!n)
		return pg_error_set(PG_EINVALID, "no repository URL");
	if (n > MAX_URL)
		return pg_error_set(PG_EINVALID, "the repository URL is longer than %d bytes", MAX_URL);
	for (sp = l + n; sp > l && !is_ws(sp[-1]); sp--)
		;
	if (sp > l) {
		if (!(pr->ref = pg_strndup(sp, (size_t)(l + n - sp))))
			return PG_ENOMEM;
		n = (size_t)(sp - l);
		pg_str_trim(&l, &n, PG_STR_SPACES);
	}
	return (pr->url = pg_strndup(l, n)) ? 0 : PG_ENOMEM;
}

/* From the first dashes line: the tag message (optional), then the shortlog. */
static int parse_sections(pg_pull_request *pr, cursor *c)
{
	cursor t, msg = *c;
	const char *l, *dashes = NULL;
	size_t n, an, count;

	t = *c;
	if (next_nonblank(&t, &l, &n) && group_header(l, n, &an, &count))
		goto shortlog;
	for (;;) {
		const char *at = c->p;

		if (!next_line(c, &l, &n))
			return pg_error_set(PG_EINVALID, "no shortlog after the tag message: truncated "
					    "mail or not git request-pull output");
		if (!is_dashes(l, n))
			continue;
		t = *c;
		if (next_nonblank(&t, &l, &n) && group_header(l, n, &an, &count)) {
			dashes = at;
			break;
		}
	}
	/* blank lines around the message go; its first line's indentation stays */
	n = (size_t)(dashes - msg.p);
	l = msg.p;
	pg_str_rtrim(l, &n, PG_STR_SPACES);
	pg_str_ltrim(&l, &n, "\n\r");
	if (n && !(pr->message = pg_strndup(l, n)))
		return PG_ENOMEM;
shortlog:
	return parse_shortlog(pr, c);
}

static int parse_body(pg_pull_request *pr, const char *text, size_t len)
{
	cursor c = { text, text + len };
	const char *l;
	size_t n;
	int err;

	for (;;) {
		if (!next_line(&c, &l, &n))
			return pg_error_set(PG_EINVALID, "not a git request-pull mail: no '%s<id>:' "
					    "line", SINCE);
		if (starts_ci(l, n, SINCE))
			break;
	}
	if ((err = oid_line(&pr->base, l, n, strlen(SINCE), "base commit")) < 0)
		return err;
	if (!next_nonblank(&c, &l, &n))
		return truncated("after the base commit");
	if (!starts_ci(l, n, AVAIL)) {
		if (!(pr->base_line = dup_trimmed(l, n)))
			return PG_ENOMEM;
		if (!next_nonblank(&c, &l, &n))
			return truncated("after the base commit");
	}
	if (!starts_ci(l, n, AVAIL))
		return unexpected("'are available in the Git repository at:'", l, n);
	if (!next_nonblank(&c, &l, &n))
		return truncated("before the repository URL");
	if (starts_ci(l, n, UPTO))
		return pg_error_set(PG_EINVALID, "no repository URL");
	if ((err = parse_url(pr, l, n)) < 0)
		return err;
	if (!next_nonblank(&c, &l, &n))
		return truncated("after the repository URL");
	if (!starts_ci(l, n, UPTO))
		return unexpected("'for you to fetch changes up to <id>:'", l, n);
	if ((err = oid_line(&pr->head, l, n, strlen(UPTO), "head commit")) < 0)
		return err;
	if (!next_nonblank(&c, &l, &n))
		return truncated("after the head commit");
	if (!is_dashes(l, n)) {
		if (!(pr->head_line = dup_trimmed(l, n)))
			return PG_ENOMEM;
		if (!next_nonblank(&c, &l, &n))
			return truncated("after the head commit");
	}
	if (!is_dashes(l, n))
		return unexpected("a '-----' line after the head commit", l, n);
	if ((err = parse_sections(pr, &c)) < 0)
		return err;
	return parse_diffstat(pr, &c);
}

int pg_mail_parse_body(pg_pull_request **out, const char *text, size_t len)
{
	pg_pull_request *pr;
	int err;

	*out = NULL;
	if (len > PG_MAIL_MAX)
		return pg_error_set(PG_ETOOBIG, "mail exceeds %zu MiB", PG_MAIL_MAX >> 20);
	if (!(pr = calloc(1, sizeof(*pr))))
		return pg_error_oom();
	if ((err = parse_body(pr, text, len)) < 0) {
		pg_pull_request_free(pr);
		return err;
	}
	*out = pr;
	return 0;
}
