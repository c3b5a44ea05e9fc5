/* pull_list.c - a file of pulls, one a line, read strictly: every bad line named by FILE:LINE. */
#include "cli/pull_list.h"
#include "common/array.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/sanitize.h"
#include "common/str.h"

/* "error: FILE[:LINE]: why ['TEXT']", one line, made safe: the file's text is anyone's. */
static int bad_file(int status, const char *file, size_t line, const char *why, const char *text,
		    size_t len)
{
	pg_buf msg = PG_BUF_INIT, safe = PG_BUF_INIT;
	int err;

	err = line ? pg_buf_printf(&msg, "%s:%zu: %s", file, line, why) :
		pg_buf_printf(&msg, "%s: %s", file, why);
	if (err == 0 && text)
		err = pg_buf_printf(&msg, " '%.*s'", (int)(len > 200 ? 200 : len), text);
	if (err == 0 && pg_sanitize_terminal(&safe, msg.ptr, msg.len, PG_SANITIZE_ONELINE) == 0)
		fprintf(stderr, "error: %s\n", safe.ptr);
	pg_buf_release(&msg);
	pg_buf_release(&safe);
	return status;
}

/* The blank-separated fields of s[0..len), which starts and ends with none: how many. */
static size_t count_fields(const char *s, size_t len)
{
	const char *ws = " \t\r";
	size_t i = 0, n = 0;

	while (i < len) {
		n++;
		i += strcspn(s + i, ws);
		i += strspn(s + i, ws);
	}
	return n;
}

/* Cut s[0..len) into its n fields, each NUL-terminated in place. */
static void split(char **fields, size_t n, char *s, size_t len)
{
	const char *ws = " \t\r";
	size_t i = 0, k, a;

	for (k = 0; k < n; k++) {
		fields[k] = s + i;
		a = strcspn(s + i, ws);
		i += a + strspn(s + i + a, ws);
		s[(size_t)(fields[k] - s) + a] = '\0';
	}
	s[len] = '\0';
}

int cli_read_pull_list(cli_pull_line **lines, size_t *n, pg_buf *text, const char *file,
		       const char *noun, unsigned flags, int bad)
{
	const char *ws = " \t\r";
	const char *form = flags & CLI_PULLS_EXPECT ? "REPO TAG [TAG-OBJECT]" : "REPO TAG";
	char why[128], *p, *next;
	size_t line = 0, alloc = 0;

	*lines = NULL;
	*n = 0;
	if (pg_buf_read_file(text, file) < 0)
		return cli_fail(NULL);
	if (memchr(text->ptr, '\0', text->len)) {
		snprintf(why, sizeof(why), "%s file is text: this one holds a NUL byte", noun);
		return bad_file(bad, file, 0, why, NULL, 0);
	}
	for (p = text->ptr; p && *p; p = next) {
		const char *s = p;
		char *fields[3];
		size_t len, nf;
		cli_pull_line *l;

		line++;
		if ((next = strchr(p, '\n')))
			*next++ = '\0';
		len = strlen(s);
		pg_str_trim(&s, &len, ws);
		if (!len || s[0] == '#')
			continue;
		nf = count_fields(s, len);
		if (nf < 2 || nf > (flags & CLI_PULLS_EXPECT ? 3u : 2u)) {
			snprintf(why, sizeof(why), "%s line is %s, not", noun, form);
			return bad_file(bad, file, line, why, s, len);
		}
		split(fields, nf, p + (s - p), len);
		if (PG_ARRAY_GROW(*lines, *n + 1, alloc) < 0)
			return cli_fail(NULL);
		l = &(*lines)[*n];
		memset(l, 0, sizeof(*l));
		l->repo = fields[0];
		l->tag = fields[1];
		if (nf == 3) {
			if (strlen(fields[2]) != PG_OID_HEXSZ ||
			    pg_oid_fromhex(&l->expect, fields[2], PG_OID_HEXSZ) < 0)
				return bad_file(bad, file, line, "a tag object is 40 hex digits, not",
						fields[2], strlen(fields[2]));
			l->has_expect = true;
		}
		(*n)++;
	}
	if (!*n && !(flags & CLI_PULLS_EMPTY)) {
		snprintf(why, sizeof(why), "names no pull: %s file has %s lines", noun, form);
		return bad_file(bad, file, 0, why, NULL, 0);
	}
	return 0;
}
