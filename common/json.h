/* json.h - small helpers for building jansson values from repository text. */
#ifndef PG_JSON_H
#define PG_JSON_H

#include <jansson.h>
#include <stdbool.h>

/* A JSON string from repository bytes, made valid UTF-8 first; json null for NULL, NULL on OOM. */
json_t *pg_json_str(const char *s);

/* json_object_set_new that remembers a failure (a NULL value or OOM) in *ok. */
void pg_json_set(json_t *obj, const char *key, json_t *value, bool *ok);

#endif
