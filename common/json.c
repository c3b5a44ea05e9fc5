/* json.c - small helpers for building jansson values from repository text. */
#include "common/json.h"
#include "common/sanitize.h"

#include <string.h>

json_t *pg_json_str(const char *s)
{
	pg_buf b = PG_BUF_INIT;
	json_t *j;

	if (!s)
		return json_null();
	if (pg_sanitize_utf8(&b, s, strlen(s)) < 0)
		return NULL;
	j = json_stringn(b.ptr, b.len);
	pg_buf_release(&b);
	return j;
}

void pg_json_set(json_t *obj, const char *key, json_t *value, bool *ok)
{
	if (!value || json_object_set_new(obj, key, value) < 0)
		*ok = false;
}
