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

int pg_trailers_parse(pg_trailer **out, size_t *n, size_t *body_len,
		      const char *msg, size_t len)
{
	line *lines = NULL;
	size_t nlines = 0, lines_alloc = 0, out_alloc = 0, i, start, end, trailers = 0, others = 0;
	bool strong = false;
	const char *p = msg, *stop = msg + len;
	int err = 0;

	*out = NULL;
	*n = 0;

	/* trimmed length of the message */
	while (len && (msg[len - 1] == '\n' || msg[len - 1] == ' ' ||
		       msg[len - 1] == '\t' || msg[len - 1] == '\r'))
		len--;
	*body_len = len;
	stop = msg + len;

	while (p < stop) {
		const char *nl = memchr(p, '\n', (size_t)(stop - p));

		if (!nl)
			nl = stop;
		if ((err = PG_ARRAY_GROW(lines, nlines + 1, lines_alloc)) < 0)
			goto done;
		lines[nlines].p = p;
		lines[nlines].len = (size_t)(nl - p);
		if (lines[nlines].len && p[lines[nlines].len - 1] == '\r')
			lines[nlines].len--;
		nlines++;
		p = nl + 1;
	}

	/* the last paragraph: after the last blank line */
	end = nlines;
	start = end;
	while (start > 0 && !pg_str_is_blank(lines[start - 1].p, lines[start - 1].len, PG_STR_BLANKS "\r"))
		start--;
	if (start == 0 || start == end)
		goto done; /* only one paragraph, or none */

	for (i = start; i < end; i++) {
		const line *l = &lines[i];

		if (l->len && (l->p[0] == ' ' || l->p[0] == '\t')) {
			if (i == start)
				goto done; /* a block cannot start with a continuation */
			continue;
		}
		if (is_cherry(l->p, l->len)) {
			trailers++;
			strong = true;
		} else if (token_len(l->p, l->len)) {
			trailers++;
			if (!strncasecmp(l->p, "Signed-off-by:", 14))
				strong = true;
		} else {
			others++;
		}
	}
	if (!trailers || (others && !(strong && trailers * 3 >= others)))
		goto done;

	for (i = start; i < end; i++) {
		size_t count = 1;

		if (!is_cherry(lines[i].p, lines[i].len) &&
		    !token_len(lines[i].p, lines[i].len))
			continue;
		while (i + count < end && lines[i + count].len &&
		       (lines[i + count].p[0] == ' ' || lines[i + count].p[0] == '\t'))
			count++;
		if ((err = add_trailer(out, n, &out_alloc, lines, i, count)) < 0)
			goto done;
		i += count - 1;
	}
	/* the body ends before the blank lines that precede the block */
	{
		size_t b = (size_t)(lines[start].p - msg);

		while (b && (msg[b - 1] == '\n' || msg[b - 1] == ' ' ||
			     msg[b - 1] == '\t' || msg[b - 1] == '\r'))
			b--;
		*body_len = b;
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
