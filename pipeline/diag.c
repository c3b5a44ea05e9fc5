/* diag.c - read compiler and linker diagnostics out of build output lines. */
#include "pipeline/diag.h"
#include "common/error.h"

void pg_diag_release(pg_diag *d)
{
	free(d->file);
	free(d->message);
	memset(d, 0, sizeof(*d));
}

static bool all_digits(const char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return n > 0;
}

static const char *find_kind(const char *p, const char *end, bool *error, size_t *skip)
{
	static const struct {
		const char *text;
		bool error;
	} kinds[] = {
		{ " fatal error: ", true }, { " error: ", true }, { " warning: ", false },
	};
	size_t k;

	for (k = 0; k < PG_ARRAY_SIZE(kinds); k++) {
		size_t n = strlen(kinds[k].text);

		if ((size_t)(end - p) >= n && !memcmp(p, kinds[k].text, n)) {
			*error = kinds[k].error;
			*skip = n;
			return p;
		}
	}
	return NULL;
}

int pg_diag_parse(pg_diag *out, const char *line, size_t len)
{
	const char *end = line + len, *p, *colon1, *colon2, *kind = NULL;
	bool error = false;
	size_t skip = 0, n;
	unsigned long ln = 0;

	memset(out, 0, sizeof(*out));
	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		end = line + --len;
	/* FILE:LINE[:COL]: KIND: MESSAGE */
	colon1 = memchr(line, ':', len);
	if (!colon1 || colon1 == line)
		return 0;
	colon2 = memchr(colon1 + 1, ':', (size_t)(end - colon1 - 1));
	if (!colon2 || !all_digits(colon1 + 1, (size_t)(colon2 - colon1 - 1)))
		return 0;
	for (p = colon1 + 1; p < colon2; p++)
		ln = ln * 10 + (unsigned long)(*p - '0');
	/* p is at the ':' after the line number; an optional ":COL" follows */
	p = colon2;
	n = 0;
	while (p + 1 + n < end && p[1 + n] >= '0' && p[1 + n] <= '9')
		n++;
	if (n && p + 1 + n < end && p[1 + n] == ':')
		p += 1 + n;
	if (!(kind = find_kind(p + 1, end, &error, &skip)))
		return 0;
	if (!(out->file = pg_strndup(line, (size_t)(colon1 - line))) ||
	    !(out->message = pg_strndup(kind + skip, (size_t)(end - kind - skip)))) {
		pg_diag_release(out);
		return PG_ENOMEM;
	}
	out->line = ln > UINT32_MAX ? UINT32_MAX : (unsigned)ln;
	out->error = error;
	return 1;
}

int pg_diag_key(pg_buf *out, const pg_diag *d)
{
	return pg_buf_printf(out, "%s: %s", d->file ? d->file : "", d->message);
}
