/* map.c - linear-probing hash map with FNV-1a hashing. */
#include "common/map.h"
#include "common/error.h"

uint64_t pg_hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

void pg_map_release(pg_map *map)
{
	free(map->slots);
	map->slots = NULL;
	map->cap = 0;
	map->count = 0;
}

static pg_map_slot *find(const pg_map *map, const void *key, size_t keylen, uint64_t h)
{
	size_t i = (size_t)h & (map->cap - 1);

	for (;;) {
		pg_map_slot *s = &map->slots[i];

		if (!s->key)
			return s;
		if (s->hash == h && s->keylen == keylen && !memcmp(s->key, key, keylen))
			return s;
		i = (i + 1) & (map->cap - 1);
	}
}

static int grow(pg_map *map)
{
	size_t ncap = map->cap ? map->cap * 2 : 64, i;
	pg_map old = *map;

	map->slots = calloc(ncap, sizeof(*map->slots));
	if (!map->slots) {
		*map = old;
		return pg_error_oom();
	}
	map->cap = ncap;
	for (i = 0; i < old.cap; i++) {
		if (old.slots[i].key)
			*find(map, old.slots[i].key, old.slots[i].keylen, old.slots[i].hash) =
				old.slots[i];
	}
	free(old.slots);
	return 0;
}

int pg_map_set(pg_map *map, const void *key, size_t keylen, void *value)
{
	uint64_t h = pg_hash_bytes(key, keylen);
	pg_map_slot *s;
	int err;

	if ((map->count + 1) * 4 >= map->cap * 3 && (err = grow(map)) < 0)
		return err;
	s = find(map, key, keylen, h);
	if (!s->key) {
		s->key = key;
		s->keylen = keylen;
		s->hash = h;
		map->count++;
	}
	s->value = value;
	return 0;
}

void *pg_map_get(const pg_map *map, const void *key, size_t keylen)
{
	if (!map->cap)
		return NULL;
	return find(map, key, keylen, pg_hash_bytes(key, keylen))->value;
}
