/* lava.c - the console out of a LAVA job log: its "target" records, one line each. */
#include "pipeline/lava.h"
#include "common/error.h"
#include "common/hex.h"

/*
 * What a console record holds after its date (lava_common/log.py's dump):
 * the device's output while an action reads it ("target"), and what the
 * dispatcher reads from it between and after actions ("feedback": the
 * init's marker and the power-off once a test monitor has ended).
 */
static const char *const CONSOLE_LEVELS[] = {
	"\"lvl\": \"target\", \"msg\": \"",
	"\"lvl\": \"feedback\", \"msg\": \"",
};

static int hexval(const char *s, size_t n, unsigned long *out)
{
	size_t i;

	*out = 0;
	for (i = 0; i < n; i++) {
		int d = pg_hex_digit((unsigned char)s[i]);

		if (d < 0)
			return -1;
		*out = *out * 16 + (unsigned long)d;
	}
	return 0;
}

/* A code point as UTF-8 (one that is none is replaced by U+FFFD). */
static int put_utf8(pg_buf *out, unsigned long c)
{
	char u[4];
	size_t n;

	if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		c = 0xFFFD;
	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xC0 | (c >> 6));
		u[1] = (char)(0x80 | (c & 0x3F));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xE0 | (c >> 12));
		u[1] = (char)(0x80 | ((c >> 6) & 0x3F));
		u[2] = (char)(0x80 | (c & 0x3F));
		n = 3;
	} else {
		u[0] = (char)(0xF0 | (c >> 18));
		u[1] = (char)(0x80 | ((c >> 12) & 0x3F));
		u[2] = (char)(0x80 | ((c >> 6) & 0x3F));
		u[3] = (char)(0x80 | (c & 0x3F));
		n = 4;
	}
	return pg_buf_put(out, u, n);
}

/* The byte a one-letter YAML escape stands for; -1 when YAML has no such escape. */
static int escape(char c)
{
	switch (c) {
	case '0': return 0;
	case 'a': return '\a';
	case 'b': return '\b';
	case 't': return '\t';
	case 'n': return '\n';
	case 'v': return '\v';
	case 'f': return '\f';
	case 'r': return '\r';
	case 'e': return 0x1b;
	case ' ': case '"': case '/': case '\\': return c;
	default: return -1;
	}
}

/*
 * Decode the YAML double-quoted scalar at s[0..len) (after its opening
 * quote) up to its closing quote into out.  -1 (nothing appended counts)
 * when it does not close or holds an escape YAML does not have.
 */
static int dq_scalar(pg_buf *out, const char *s, size_t len, int *bad)
{
	size_t i = 0, start = out->len;
	int err = 0;

	*bad = 0;
	while (i < len && err == 0) {
		char c = s[i++];
		unsigned long cp;
		size_t nhex;
		int simple;

		if (c == '"')
			return 0;
		if (c != '\\') {
			err = pg_buf_putc(out, c);
			continue;
		}
		if (i == len)
			break;
		c = s[i++];
		nhex = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
		if (nhex) {
			if (i + nhex > len || hexval(s + i, nhex, &cp) < 0)
				break;
			i += nhex;
			err = put_utf8(out, cp);
		} else if (c == 'N' || c == '_' || c == 'L' || c == 'P') {
			err = put_utf8(out, c == 'N' ? 0x85 : c == '_' ? 0xA0 : c == 'L' ? 0x2028 : 0x2029);
		} else if ((simple = escape(c)) >= 0) {
			err = pg_buf_putc(out, (char)simple);
		} else {
			break;
		}
	}
	if (err == 0) {
		/* not closed, or an escape YAML has not: the record is not one */
		out->len = start;
		out->ptr[start] = '\0';
		*bad = 1;
	}
	return err;
}

/* The message of a console record at m (just past its date's closing quote); NULL if none. */
static const char *console_msg(const char *m, const char *eol)
{
	size_t i;

	if (eol - m < 3 || memcmp(m, "\", ", 3) != 0)
		return NULL;
	m += 3;
	for (i = 0; i < sizeof(CONSOLE_LEVELS) / sizeof(CONSOLE_LEVELS[0]); i++) {
		size_t n = strlen(CONSOLE_LEVELS[i]);

		if ((size_t)(eol - m) >= n && memcmp(m, CONSOLE_LEVELS[i], n) == 0)
			return m + n;
	}
	return NULL;
}

/*
 * The dispatcher's console logger (lava_dispatcher/shell.py) puts a
 * backslash before every '"' the device printed, before the record is
 * dumped: take one back off each, from out->ptr[start] on.
 */
static void unquote(pg_buf *out, size_t start)
{
	size_t i, j = start;

	for (i = start; i < out->len; i++) {
		if (out->ptr[i] == '\\' && i + 1 < out->len && out->ptr[i + 1] == '"')
			continue;
		out->ptr[j++] = out->ptr[i];
	}
	out->len = j;
	out->ptr[j] = '\0';
}

int pg_lava_console(pg_buf *out, size_t *records, const char *log, size_t len)
{
	const char *p = log, *end = log + len;
	size_t n = 0;
	int err = 0, bad;

	while (p < end && err == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end, *s = p, *m;

		p = nl ? nl + 1 : end;
		/* - {"dt": "...", "lvl": "target", "msg": "..."}: the server's list; lava-run
		 * prints the same records without the "- " */
		if (eol - s >= 2 && s[0] == '-' && s[1] == ' ')
			s += 2;
		if (eol - s < 8 || memcmp(s, "{\"dt\": \"", 8) != 0)
			continue;
		if (!(m = memchr(s + 8, '"', (size_t)(eol - s - 8))) || !(m = console_msg(m, eol)))
			continue;
		size_t start = out->len;

		if ((err = dq_scalar(out, m, (size_t)(eol - m), &bad)) < 0 || bad)
			continue;
		unquote(out, start);
		n++;
		err = pg_buf_putc(out, '\n');
	}
	if (records)
		*records = n;
	return err;
}
