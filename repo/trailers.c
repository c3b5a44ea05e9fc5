/* trailers.c - trailer block detection in the manner of git interpret-trailers. */
#include "repo/trailers.h"
#include "common/array.h"
#include "common/error.h"
#include "common/str.h"

#define CHERRY_PREFIX "(cherry picked from commit "

typedef struct line {
	const char *p;
	size_t len;
} line;

/* Length of the token in "Token: value", or 0 when the line is not one. */
static size_t token_len(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		char c = p[i];

		if (c == ':') {
			if (i == 0)
				return 0;
			if (i + 1 == len || p[i + 1] == ' ' || p[i + 1] == '\t')
				return i;
			return 0;
		}
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		      (c >= '0' && c <= '9') || c == '-'))
			return 0;
	}
	return 0;
}

static bool is_cherry(const char *p, size_t len)
{
	size_t n = strlen(CHERRY_PREFIX);

	return len > n && !memcmp(p, CHERRY_PREFIX, n);
}

static char *trimmed_dup(const char *p, size_t len)
{
	pg_str_trim_line(&p, &len);
	return pg_strndup(p, len);
}

void pg_trailers_free(pg_trailer *t, size_t n)
{
	size_t i;

	for (i = 0; t && i < n; i++) {
		free(t[i].key);
		free(t[i].value);
		free(t[i].line);
	}
	free(t);
}

bool pg_trailer_equal(const pg_trailer *a, const pg_trailer *b)
{
	return !strcasecmp(a->key, b->key) && !strcmp(a->value, b->value);
}

static int add_trailer(pg_trailer **out, size_t *n, size_t *alloc, const line *lines,
		       size_t first, size_t count)
{
	pg_trailer *t;
	pg_buf value = PG_BUF_INIT, whole = PG_BUF_INIT;
	const line *l = &lines[first];
	size_t tok, i;
	int err = 0;

	if ((err = PG_ARRAY_GROW(*out, *n + 1, *alloc)) < 0)
		return err;
	t = &(*out)[*n];
	memset(t, 0, sizeof(*t));

	if (is_cherry(l->p, l->len)) {
		t->key = pg_strdup("(cherry picked from commit");
		tok = strlen(CHERRY_PREFIX);
	} else {
		tok = token_len(l->p, l->len);
		t->key = pg_strndup(l->p, tok);
		tok++; /* the colon */
	}
	for (i = 0; i < count && err == 0; i++) {
		const line *c = &lines[first + i];
		const char *p = i ? c->p : c->p + tok;
		size_t len = i ? c->len : c->len - tok;
		char *part = trimmed_dup(p, len);

		if (!part) {
			err = PG_ENOMEM;
			break;
		}
		if (i && value.len)
			err = pg_buf_putc(&value, ' ');
		if (!err)
			err = pg_buf_puts(&value, part);
		free(part);
		if (!err && i)
			err = pg_buf_putc(&whole, '\n');
		if (!err)
			err = pg_buf_put(&whole, c->p, c->len);
	}
	if (!err && !t->key)
		err = PG_ENOMEM;
	if (!err && !strcmp(t->key, "(cherry picked from commit") && value.len &&
	    value.ptr[value.len - 1] == ')')
		pg_buf_truncate(&value, value.len - 1);
	t->value = pg_buf_detach(&value);
	t->line = pg_buf_detach(&whole);
	(*n)++;
	if (!err && (!t->value || !t->line))
		err = PG_ENOMEM;
	pg_buf_release(&value);
	pg_buf_release(&whole);
	return err;
}

/* msg[0..len) without the blank lines and spaces it ends with */
static size_t trimmed_end(const char *msg, size_t len)
{
	while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' ' || msg[len - 1] == '\t' ||
		       msg[len - 1] == '\r'))
		len--;
	return len;
}

/* The line at p, up to stop: its length without a '\r' it ends with; *next is the line after. */
static size_t line_at(const char *p, const char *stop, const char **next)
{
	const char *nl = memchr(p, '\n', (size_t)(stop - p));
	size_t len;

	if (!nl)
		nl = stop;
	len = (size_t)(nl - p);
	*next = nl < stop ? nl + 1 : stop;
	return len && p[len - 1] == '\r' ? len - 1 : len;
}

/*
 * Where the trailer block of msg[0..len) (trimmed: trimmed_end) starts, or
 * NULL when it has none: the last paragraph, after the last blank line,
 * when it is not the first and its lines pass (trailers.h).
 */
static const char *block_of(const char *msg, size_t len)
{
	const char *stop = msg + len, *first = NULL, *end = stop, *p, *next;
	size_t trailers = 0, others = 0, n;
	bool strong = false;

	/* the last paragraph, its lines from the last */
	while (!first) {
		const char *b = end;

		while (b > msg && b[-1] != '\n')
			b--;
		n = (size_t)(end - b);
		if (n && end[-1] == '\r')
			n--;
		if (pg_str_is_blank(b, n, PG_STR_BLANKS "\r")) {
			if (end == stop)
				return NULL; /* none after the blank line */
			first = end + 1;
		} else if (b == msg) {
			return NULL; /* only one paragraph */
		} else {
			end = b - 1;
		}
	}
	for (p = first; p < stop; p = next) {
		n = line_at(p, stop, &next);
		if (n && (p[0] == ' ' || p[0] == '\t')) {
			if (p == first)
				return NULL; /* a block cannot start with a continuation */
			continue;
		}
		if (is_cherry(p, n)) {
			trailers++;
			strong = true;
		} else if (token_len(p, n)) {
			trailers++;
			if (!strncasecmp(p, "Signed-off-by:", 14))
				strong = true;
		} else {
			others++;
		}
	}
	if (!trailers || (others && !(strong && trailers * 3 >= others)))
		return NULL;
	return first;
}

size_t pg_trailers_body_len(const char *msg, size_t len)
{
	const char *first;

	len = trimmed_end(msg, len);
	/* the body ends before the blank lines that precede the block */
	return (first = block_of(msg, len)) ? trimmed_end(msg, (size_t)(first - msg)) : len;
}

int pg_trailers_parse(pg_trailer **out, size_t *n, size_t *body_len,
		      const char *msg, size_t len)
{
	line *lines = NULL;
	size_t nlines = 0, lines_alloc = 0, out_alloc = 0, i;
	const char *p, *stop, *next;
	int err = 0;

	*out = NULL;
	*n = 0;
	*body_len = pg_trailers_body_len(msg, len);
	stop = msg + trimmed_end(msg, len);
	if (!(p = block_of(msg, (size_t)(stop - msg))))
		return 0;
	for (; p < stop; p = next) {
		if ((err = PG_ARRAY_GROW(lines, nlines + 1, lines_alloc)) < 0)
			goto done;
		lines[nlines].p = p;
		lines[nlines].len = line_at(p, stop, &next);
		nlines++;
	}
	for (i = 0; i < nlines; i++) {
		size_t count = 1;

		if (!is_cherry(lines[i].p, lines[i].len) &&
		    !token_len(lines[i].p, lines[i].len))
			continue;
		while (i + count < nlines && lines[i + count].len &&
		       (lines[i + count].p[0] == ' ' || lines[i + count].p[0] == '\t'))
			count++;
		if ((err = add_trailer(out, n, &out_alloc, lines, i, count)) < 0)
			goto done;
		i += count - 1;
	}
done:
	if (err < 0) {
		pg_trailers_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	free(lines);
	return err;
}
