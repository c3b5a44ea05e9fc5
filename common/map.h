/* map.h - an open-addressing hash map from byte keys to pointers. */
#ifndef PG_MAP_H
#define PG_MAP_H

#include "common/compat.h"

/*
 * Keys are borrowed: the caller keeps each key's bytes alive and unchanged
 * for as long as it is in the map.  Values are opaque pointers and are never
 * freed by the map.
 */
typedef struct pg_map_slot {
	const void *key;
	size_t keylen;
	uint64_t hash;
	void *value;
} pg_map_slot;

typedef struct pg_map {
	pg_map_slot *slots;
	size_t cap;   /* a power of two, or 0 */
	size_t count;
} pg_map;

#define PG_MAP_INIT { NULL, 0, 0 }

void pg_map_release(pg_map *map);

/* Insert or replace. */
int pg_map_set(pg_map *map, const void *key, size_t keylen, void *value);

/* The value, or NULL when absent. */
void *pg_map_get(const pg_map *map, const void *key, size_t keylen);

static inline int pg_map_sets(pg_map *map, const char *key, void *value)
{
	return pg_map_set(map, key, strlen(key), value);
}

static inline void *pg_map_gets(const pg_map *map, const char *key)
{
	return pg_map_get(map, key, strlen(key));
}

uint64_t pg_hash_bytes(const void *data, size_t len);

#endif
