/* str.c - spans of text trimmed and tested for blanks; lists of strings copied and freed; control characters found. */
#include "common/str.h"
#include "common/buf.h"
#include "common/error.h"

static bool in(char c, const char *set)
{
	/* strchr finds the terminator: a NUL is in no set */
	return c != '\0' && strchr(set, c);
}

bool pg_str_is_blank(const char *s, size_t n, const char *set)
{
	pg_str_ltrim(&s, &n, set);
	return n == 0;
}

void pg_str_ltrim(const char **s, size_t *n, const char *set)
{
	while (*n && in(**s, set)) {
		(*s)++;
		(*n)--;
	}
}

void pg_str_rtrim(const char *s, size_t *n, const char *set)
{
	while (*n && in(s[*n - 1], set))
		(*n)--;
}

void pg_str_trim(const char **s, size_t *n, const char *set)
{
	pg_str_ltrim(s, n, set);
	pg_str_rtrim(*s, n, set);
}

void pg_str_trim_line(const char **s, size_t *n)
{
	pg_str_ltrim(s, n, PG_STR_BLANKS);
	pg_str_rtrim(*s, n, PG_STR_BLANKS "\r");
}

bool pg_str_has_control(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	for (; *u; u++)
		if (*u < 0x20 || *u == 0x7F || (u[0] == 0xC2 && u[1] >= 0x80 && u[1] <= 0x9F))
			return true;
	return false;
}

int pg_str_list_dup(char ***out, size_t *n, char *const *list, size_t len)
{
	size_t i;

	*out = NULL;
	*n = 0;
	if (!len)
		return 0;
	if (!(*out = calloc(len, sizeof(**out))))
		return pg_error_oom();
	for (i = 0; i < len; i++, (*n)++)
		if (!((*out)[i] = pg_strdup(list[i])))
			return pg_error_oom();
	return 0;
}

void pg_str_list_free(char **list, size_t n)
{
	if (!list)
		return;
	while (n)
		free(list[--n]);
	free(list);
}
