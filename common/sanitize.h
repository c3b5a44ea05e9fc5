/* sanitize.h - make attacker-controlled text safe for terminals, JSON and HTML. */
#ifndef PG_SANITIZE_H
#define PG_SANITIZE_H

#include "common/buf.h"

enum pg_sanitize_flags {
	PG_SANITIZE_ONELINE = 1 << 0, /* newlines and tabs become spaces */
};

/*
 * Append s[0..len) to out for display on a terminal: ANSI/VT escape
 * sequences (CSI, OSC, DCS, single-character escapes), C0 and C1 control
 * characters, DEL and the Unicode bidirectional overrides are removed;
 * invalid UTF-8 becomes U+FFFD.  Newlines and tabs are kept unless
 * PG_SANITIZE_ONELINE is given.
 */
int pg_sanitize_terminal(pg_buf *out, const char *s, size_t len, unsigned flags);

/* Append s as valid UTF-8: invalid sequences become U+FFFD, NULs are dropped. */
int pg_sanitize_utf8(pg_buf *out, const char *s, size_t len);

/* Append s escaped for HTML text and attribute values (& < > " '). */
int pg_html_escape(pg_buf *out, const char *s, size_t len);

/*
 * Length of the valid UTF-8 sequence at s (1..4), or 0 when s does not start
 * one; avail is the number of bytes readable at s.  *cp receives the code point.
 */
size_t pg_utf8_decode(const unsigned char *s, size_t avail, uint32_t *cp);

#endif
