/* search.h - the first entry of a sorted on-disk table at or past a key, where keys are uniform (hashes). */
#ifndef PG_SEARCH_H
#define PG_SEARCH_H

#include "common/compat.h"

/*
 * Entry i's key, as a number whose order is the table's (for an object id,
 * its first 8 bytes, big-endian): 0, or negative when it cannot be read.
 */
typedef int pg_key_at_fn(uint64_t *key, void *ctx, size_t i);

/*
 * The first i in [lo, hi) whose key is >= want (hi if none), into *out,
 * when every key of [lo, hi) lies in [lo_key, hi_key].  An interpolation
 * search: keys that are hashes spread evenly, so the first guesses land a
 * block or two from the answer where a binary search reads a dozen blocks
 * of a big file; it falls back to halving after a few guesses, so uneven
 * keys cost O(log n) reads too.  Returns what at() returned when negative.
 */
int pg_search_uniform(size_t *out, size_t lo, size_t hi, uint64_t lo_key, uint64_t hi_key,
		      uint64_t want, pg_key_at_fn *at, void *ctx);

/* An object id's first 8 bytes as a number: the order of the ids. */
uint64_t pg_key_prefix64(const unsigned char *id);

#endif
