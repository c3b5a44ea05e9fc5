/* str.h - spans of text (not NUL-terminated) trimmed and tested for blanks; lists of strings. */
#ifndef PG_STR_H
#define PG_STR_H

#include "common/compat.h"

/*
 * Which characters count as blank is the caller's: a header value is
 * trimmed of spaces and tabs, a mail line of all of C's white space, a
 * line that may end in CRLF of a CR at its end too.  These are the sets
 * most callers name.
 */
#define PG_STR_BLANKS " \t"             /* spaces and tabs */
#define PG_STR_SPACES " \t\n\v\f\r"     /* isspace() in the C locale */

/* Is s[0..n) empty or only characters of set?  A NUL is in no set. */
bool pg_str_is_blank(const char *s, size_t n, const char *set);

/* Move *s past its leading characters of set, shortening *n to match. */
void pg_str_ltrim(const char **s, size_t *n, const char *set);

/* Shorten *n past the trailing characters of set in s[0..*n). */
void pg_str_rtrim(const char *s, size_t *n, const char *set);

/* Both: s[0..n) without the characters of set at either end. */
void pg_str_trim(const char **s, size_t *n, const char *set);

/* A line's text: without blanks at either end, nor the CR a CRLF line ends in. */
void pg_str_trim_line(const char **s, size_t *n);

/* Free n malloc()ed strings and the array that holds them; NULL-safe. */
void pg_str_list_free(char **list, size_t n);

/*
 * A copy of list[0..len) in *out, *n its strings (NULL and 0 for none);
 * PG_ENOMEM, *out then holding the *n copied so far (pg_str_list_free).
 */
int pg_str_list_dup(char ***out, size_t *n, char *const *list, size_t len);

/* Whether s holds a control character: C0, DEL, or a C1 control in UTF-8 (U+0080..U+009F). */
bool pg_str_has_control(const char *s);

#endif
