/* sanitize.c - control and escape stripping, UTF-8 repair, HTML escaping. */
#include "common/sanitize.h"

static const char replacement[] = "\xEF\xBF\xBD";

size_t pg_utf8_decode(const unsigned char *s, size_t avail, uint32_t *cp)
{
	uint32_t c;
	size_t n, i;

	if (!avail)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		n = 2;
		c = s[0] & 0x1F;
	} else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		n = 3;
		c = s[0] & 0x0F;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		n = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	if (avail < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3F);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
	    (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return n;
}

static bool is_bidi_control(uint32_t c)
{
	return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) ||
	       c == 0x200E || c == 0x200F || c == 0x061C;
}

/* Length of the escape sequence starting at s[0] == ESC (at least 1). */
static size_t escape_len(const unsigned char *s, size_t avail)
{
	size_t i;

	if (avail < 2)
		return avail;
	switch (s[1]) {
	case '[': /* CSI: parameters and intermediates, then a final byte */
		for (i = 2; i < avail; i++)
			if (s[i] >= 0x40 && s[i] <= 0x7E)
				return i + 1;
		return avail;
	case ']': /* OSC, DCS, SOS, PM, APC: until BEL or ST */
	case 'P':
	case 'X':
	case '^':
	case '_':
		for (i = 2; i < avail; i++) {
			if (s[i] == 0x07)
				return i + 1;
			if (s[i] == 0x1B && i + 1 < avail && s[i + 1] == '\\')
				return i + 2;
		}
		return avail;
	default:
		/* two-byte escapes, and charset designations with one more byte */
		if (s[1] >= 0x20 && s[1] <= 0x2F)
			return avail >= 3 ? 3 : avail;
		return 2;
	}
}

int pg_sanitize_terminal(pg_buf *out, const char *str, size_t len, unsigned flags)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	int err;

	while (i < len) {
		uint32_t c;
		size_t n;

		if (s[i] == 0x1B) {
			i += escape_len(s + i, len - i);
			continue;
		}
		if (s[i] == '\n' || s[i] == '\t') {
			err = pg_buf_putc(out, (flags & PG_SANITIZE_ONELINE) ? ' ' : (char)s[i]);
			if (err < 0)
				return err;
			i++;
			continue;
		}
		if (s[i] < 0x20 || s[i] == 0x7F) {
			i++;
			continue;
		}
		n = pg_utf8_decode(s + i, len - i, &c);
		if (n == 0) {
			if ((err = pg_buf_puts(out, replacement)) < 0)
				return err;
			i++;
			continue;
		}
		if ((c >= 0x80 && c <= 0x9F) || is_bidi_control(c)) {
			/* C1 controls include the 8-bit CSI, 0x9B */
			i += n;
			continue;
		}
		if ((err = pg_buf_put(out, s + i, n)) < 0)
			return err;
		i += n;
	}
	return 0;
}

int pg_sanitize_utf8(pg_buf *out, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	int err;

	while (i < len) {
		uint32_t c;
		size_t n = pg_utf8_decode(s + i, len - i, &c);

		if (n == 0) {
			err = pg_buf_puts(out, replacement);
			n = 1;
		} else if (c == 0) {
			err = 0;
		} else {
			err = pg_buf_put(out, s + i, n);
		}
		if (err < 0)
			return err;
		i += n;
	}
	return 0;
}

int pg_html_escape(pg_buf *out, const char *s, size_t len)
{
	size_t i, start = 0;
	int err;

	for (i = 0; i < len; i++) {
		const char *rep;

		switch (s[i]) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default: continue;
		}
		if ((err = pg_buf_put(out, s + start, i - start)) < 0 ||
		    (err = pg_buf_puts(out, rep)) < 0)
			return err;
		start = i + 1;
	}
	return pg_buf_put(out, s + start, len - start);
}
