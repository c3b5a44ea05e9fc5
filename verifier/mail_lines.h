/* mail_lines.h - the line cursor and text helpers that the mail*.c files share (private). */
#ifndef PG_MAIL_LINES_H
#define PG_MAIL_LINES_H

#include "common/str.h"

/* How much of an offending line an error message quotes. */
#define PG_MAIL_QUOTE_MAX 60

typedef struct cursor {
	const char *p, *end;
} cursor;

/* The next line without its newline (and a CR before it); false at the end. */
static inline bool next_line(cursor *c, const char **line, size_t *len)
{
	const char *nl;

	if (c->p >= c->end)
		return false;
	nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
	*line = c->p;
	*len = nl ? (size_t)(nl - c->p) : (size_t)(c->end - c->p);
	c->p = nl ? nl + 1 : c->end;
	if (*len && (*line)[*len - 1] == '\r')
		(*len)--;
	return true;
}

static inline bool is_ws(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\f' || ch == '\v';
}

static inline bool equals_ci(const char *l, size_t n, const char *word)
{
	return strlen(word) == n && !strncasecmp(l, word, n);
}

static inline bool starts_ci(const char *l, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && !strncasecmp(l, prefix, k);
}

/* Advance past blank lines; false when nothing else is left. */
static inline bool skip_blank(cursor *c)
{
	for (;;) {
		cursor t = *c;
		const char *l;
		size_t n;

		if (!next_line(&t, &l, &n))
			return false;
		if (!pg_str_is_blank(l, n, PG_STR_SPACES))
			return true;
		*c = t;
	}
}

static inline bool next_nonblank(cursor *c, const char **l, size_t *n)
{
	return skip_blank(c) && next_line(c, l, n);
}

#endif
