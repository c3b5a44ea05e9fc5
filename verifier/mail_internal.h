/* mail_internal.h - what mail.c, mail_mime.c and mail_decode.c call of each other (private). */
#ifndef PG_MAIL_INTERNAL_H
#define PG_MAIL_INTERNAL_H

#include "common/buf.h"

/* mail_decode.c */

/* Append s with "\r\n" made "\n"; a lone CR stays. */
int pg_mail_unix_lines(pg_buf *out, const char *s, size_t len);

/* The charsets a body or an encoded word may be in: UTF-8 (and ASCII), Latin-1. */
enum pg_mail_charset { PG_MAIL_CS_UTF8, PG_MAIL_CS_LATIN1, PG_MAIL_CS_UNKNOWN };

/* The charset a name (any case, with or without an RFC 2231 language) names. */
enum pg_mail_charset pg_mail_charset_of(const char *name, size_t n);

/* Append s, in charset cs, as UTF-8. */
int pg_mail_put_charset(pg_buf *out, const char *s, size_t len, enum pg_mail_charset cs);

/* mail_mime.c */

/* The length of the field name at the start of header line l, or 0 when it has none. */
size_t pg_mail_field_name_len(const char *l, size_t n);

/*
 * The decoded text/plain body and the Subject (decoded, squeezed; subject
 * may be NULL) of one message m: header fields then a body, or a bare
 * text, with unix line ends.
 */
int pg_mail_message_text(pg_buf *text, pg_buf *subject, const char *m, size_t mlen);

#endif
