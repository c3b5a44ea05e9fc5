/* suspect.c - the pull ahead that a failure on a stack most likely comes with: the one whose changes the failure names. */
#include "pipeline/suspect.h"
#include "common/array.h"
#include "common/error.h"
#include "common/str.h"

#include <string.h>

#define QUOTED_MAX 64   /* longer quoted text is prose, not a name */
#define IDENT_MAX 64    /* longer words are no identifiers a pull would share */
#define PATH_MAX_LEN 1024

/*
 * Words that name nothing a pull changes: C's, and the names of locals
 * found in every file (KUnit's "Expected ret == 0" names no pull).
 */
static const char *const common_words[] = {
	"Expected", "NULL", "and", "bool", "buf", "but", "char", "const", "count", "ctx",
	"data", "dev", "else", "enum", "err", "extern", "false", "flags", "for", "if", "inline",
	"int", "is", "len", "long", "not", "null", "or", "ptr", "rc", "res", "ret", "return",
	"short", "signed", "size", "sizeof", "static", "struct", "the", "true", "typeof",
	"union", "unsigned", "val", "void", "volatile", "while",
};

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_ident_char(char c)
{
	return is_ident_start(c) || (c >= '0' && c <= '9');
}

static bool is_path_char(char c)
{
	return is_ident_char(c) || c == '.' || c == '/' || c == '-' || c == '+';
}

static bool is_common(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < PG_ARRAY_SIZE(common_words); i++)
		if (strlen(common_words[i]) == n && !memcmp(common_words[i], s, n))
			return true;
	return false;
}

/* Add s[0..n) to list, once, while it has room. */
static int add_term(char ***list, size_t *count, const char *s, size_t n)
{
	size_t i;
	char *copy;

	if (*count >= PG_SUSPECT_MAX_TERMS || !n)
		return 0;
	for (i = 0; i < *count; i++)
		if (strlen((*list)[i]) == n && !memcmp((*list)[i], s, n))
			return 0;
	if (!*list && !(*list = calloc(PG_SUSPECT_MAX_TERMS, sizeof(**list))))
		return pg_error_oom();
	if (!(copy = pg_strndup(s, n)))
		return PG_ENOMEM;
	(*list)[(*count)++] = copy;
	return 0;
}

/*
 * The next identifier of s[0..n) from *i on: true with it at s[*start..*i),
 * false when there is none.  Linear in n over all calls.
 */
static bool next_ident(const char *s, size_t n, size_t *i, size_t *start)
{
	while (*i < n && (!is_ident_start(s[*i]) || (*i && is_ident_char(s[*i - 1]))))
		(*i)++;
	if (*i == n)
		return false;
	for (*start = *i; *i < n && is_ident_char(s[*i]); (*i)++)
		;
	return true;
}

/* Every identifier of s[0..n) but the common words. */
static int add_idents(pg_suspect_terms *t, const char *s, size_t n)
{
	size_t i = 0, start;
	int err = 0;

	while (err == 0 && next_ident(s, n, &i, &start))
		if (i - start >= 2 && i - start <= IDENT_MAX && !is_common(s + start, i - start))
			err = add_term(&t->idents, &t->nidents, s + start, i - start);
	return err;
}

/*
 * An opening quote at s[i]: its length in bytes, or 0.  A compiler quotes
 * 'x' or ‘x’, ld `x', modpost "x" (ERROR: modpost: "x" [m.ko] undefined!).
 */
static size_t open_quote(const char *s, size_t n, size_t i)
{
	if (s[i] == '\'' || s[i] == '`' || s[i] == '"')
		return 1;
	return i + 3 <= n && !memcmp(s + i, "\xe2\x80\x98", 3) ? 3 : 0;
}

/* The quote closing the one at s[open]: its length at s[i] in bytes, or 0. */
static size_t close_quote(const char *s, size_t n, size_t open, size_t i)
{
	if (s[open] == '"')
		return s[i] == '"';
	if (s[i] == '\'')
		return 1;
	return i + 3 <= n && !memcmp(s + i, "\xe2\x80\x99", 3) ? 3 : 0;
}

/*
 * Whether quoted text is a name as a compiler quotes one: "name",
 * "struct foo", "int *": at most two words and stars, of which the first
 * of two is a common word.  "s own" in "a pull's own' ..." is not.
 */
static bool is_quoted_name(const char *s, size_t n)
{
	size_t i = 0, words = 0, start, first = 0, first_len = 0;

	for (i = 0; i < n; i++)
		if (!is_ident_char(s[i]) && s[i] != ' ' && s[i] != '*')
			return false;
	i = 0;
	while (next_ident(s, n, &i, &start))
		if (!words++) {
			first = start;
			first_len = i - start;
		}
	return words == 1 || (words == 2 && is_common(s + first, first_len));
}

/* What a compiler quotes: 'name', 'struct foo', ‘name’; prose is passed over. */
static int quoted_idents(pg_suspect_terms *t, const char *s, size_t n)
{
	size_t i = 0, q, j, c = 0;
	int err = 0;

	while (i < n && err == 0) {
		if (!(q = open_quote(s, n, i))) {
			i++;
			continue;
		}
		for (j = i + q; j < n && j - i - q <= QUOTED_MAX && !(c = close_quote(s, n, i, j));
		     j++)
			if (!is_ident_char(s[j]) && s[j] != ' ' && s[j] != '*')
				break;
		if (j < n && c && j - i - q <= QUOTED_MAX && is_quoted_name(s + i + q, j - i - q)) {
			err = add_idents(t, s + i + q, j - i - q);
			i = j + c;
		} else {
			i += q;
		}
		c = 0;
	}
	return err;
}

/* KUnit's "Expected a == b, but": the names it compared. */
static int expected_idents(pg_suspect_terms *t, const char *s, size_t n)
{
	const char *p = s, *end = s + n;
	int err = 0;

	while (p < end && err == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line = p;
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *hit = memmem(line, len, "Expected ", 9);

		if (hit)
			err = add_idents(t, hit + 9, len - (size_t)(hit + 9 - line));
		p = line + len + (nl ? 1 : 0);
	}
	return err;
}

/* Words that look like source paths: "lib/x.c", "../fs/y.h", "z.c". */
static int paths_of(pg_suspect_terms *t, const char *s, size_t n)
{
	size_t i = 0, start, len;
	int err = 0;

	while (i < n && err == 0) {
		if (!is_path_char(s[i]) || (i && is_path_char(s[i - 1]))) {
			i++;
			continue;
		}
		for (start = i; i < n && is_path_char(s[i]); i++)
			;
		len = i - start;
		while (len && (s[start + len - 1] == '.' || s[start + len - 1] == '-'))
			len--;
		if (!len || len > PATH_MAX_LEN ||
		    !(is_ident_start(s[start]) || s[start] == '.' || s[start] == '/'))
			continue;
		if (memchr(s + start, '/', len) ||
		    (len > 2 && s[start + len - 2] == '.' &&
		     strchr("chS", s[start + len - 1])))
			err = add_term(&t->paths, &t->npaths, s + start, len);
	}
	return err;
}

static int terms_of_text(pg_suspect_terms *t, const char *s)
{
	size_t n = strlen(s);
	int err;

	if ((err = paths_of(t, s, n)) < 0 || (err = quoted_idents(t, s, n)) < 0)
		return err;
	return expected_idents(t, s, n);
}

int pg_suspect_terms_of(pg_suspect_terms *out, const pg_report *failing)
{
	size_t i, k;
	int err = 0;

	memset(out, 0, sizeof(*out));
	for (i = 0; failing && i < failing->nfindings && err == 0; i++) {
		const pg_finding *f = &failing->findings[i];

		if (f->severity != PG_SEV_ERROR)
			continue;
		if (f->message)
			err = terms_of_text(out, f->message);
		for (k = 0; k < f->ndetails && err == 0; k++)
			if (f->details[k].pull)
				err = terms_of_text(out, f->details[k].pull);
	}
	if (err < 0)
		pg_suspect_terms_release(out);
	return err;
}

void pg_suspect_terms_release(pg_suspect_terms *t)
{
	pg_str_list_free(t->paths, t->npaths);
	pg_str_list_free(t->idents, t->nidents);
	memset(t, 0, sizeof(*t));
}

/*
 * A term naming path: the path itself, or it under "../" (a compiler in a
 * build dir) or under an absolute directory.  "lib/x.c" does not name a
 * top-level "x.c".
 */
static bool names_path(const char *term, const char *path)
{
	size_t tn = strlen(term), pn = strlen(path), k;

	if (tn < pn || strcmp(term + tn - pn, path))
		return false;
	if (tn == pn)
		return true;
	if (term[tn - pn - 1] != '/')
		return false;
	if (term[0] == '/')
		return true;
	for (k = 0; k + 3 <= tn - pn && !memcmp(term + k, "../", 3); k += 3)
		;
	return k == tn - pn;
}

/* The identifiers not yet seen on a changed line, looked for on each. */
typedef struct seeing {
	const pg_suspect_terms *t;
	size_t lens[PG_SUSPECT_MAX_TERMS];
	bool seen[PG_SUSPECT_MAX_TERMS];
	size_t nseen;
} seeing;

/* A word of a changed line: is it one of the identifiers not yet seen? */
static void see_word(seeing *s, const char *w, size_t n)
{
	size_t i;

	for (i = 0; i < s->t->nidents; i++)
		if (!s->seen[i] && s->lens[i] == n && !memcmp(s->t->idents[i], w, n)) {
			s->seen[i] = true;
			s->nseen++;
		}
}

/* Each line is cut into its words once: linear in the line, whatever it holds. */
static int on_line(void *ctx, const char *path, const char *line, size_t len)
{
	seeing *s = ctx;
	size_t i = 0, start;

	(void)path;
	while (next_ident(line, len, &i, &start))
		if (i - start <= IDENT_MAX)
			see_word(s, line + start, i - start);
	return s->nseen == s->t->nidents; /* all seen: no need to read on */
}

int pg_suspect_score(size_t *score, pg_repo *r, const pg_oid *from, const pg_oid *to,
		     const pg_suspect_terms *t)
{
	seeing s = { .t = t };
	char **paths = NULL;
	size_t npaths = 0, i, k;
	int err = 0;

	*score = 0;
	for (i = 0; i < t->nidents; i++)
		s.lens[i] = strlen(t->idents[i]);
	if (t->npaths) {
		if ((err = pg_repo_diff_paths(&paths, &npaths, r, from, to)) < 0)
			return err;
		for (i = 0; i < t->npaths; i++)
			for (k = 0; k < npaths; k++)
				if (names_path(t->paths[i], paths[k])) {
					(*score)++;
					break;
				}
		pg_str_list_free(paths, npaths);
	}
	if (t->nidents &&
	    (err = pg_repo_diff_lines(r, from, to, PG_SUSPECT_DIFF_BUDGET, NULL, on_line, &s)) < 0)
		return err;
	*score += s.nseen;
	return 0;
}

int pg_suspect_find(size_t *suspect, pg_repo *r, const pg_oid *tops, size_t n,
		    const pg_report *failing)
{
	pg_suspect_terms t;
	size_t i, best = 0, score;
	int err;

	*suspect = 0;
	if ((err = pg_suspect_terms_of(&t, failing)) < 0)
		return err;
	for (i = 1; i <= n && (t.npaths || t.nidents); i++) {
		if ((err = pg_suspect_score(&score, r, &tops[i - 1], &tops[i], &t)) < 0)
			break;
		if (score > best) {
			best = score;
			*suspect = i;
		}
	}
	pg_suspect_terms_release(&t);
	if (err < 0)
		*suspect = 0;
	return err < 0 ? err : 0;
}
