/* array.h - the one way an array grows: geometrically, with its size checked for overflow. */
#ifndef PG_ARRAY_H
#define PG_ARRAY_H

#include "common/compat.h"

/*
 * In the spirit of git's ALLOC_GROW.  An array is a pointer, a count and
 * an allocation, all three owned by the caller:
 *
 *	pg_thing *items; size_t n, alloc;
 *	if ((err = PG_ARRAY_GROW(items, n + 1, alloc)) < 0)
 *		return err;
 *	items[n++] = thing;
 *
 * PG_ARRAY_GROW makes room for at least `want` elements.  It grows by half
 * again (at least to 8), so n pushes cost O(n) in all.  It fails with
 * PG_ENOMEM, setting the last error, when the allocation would overflow
 * size_t or realloc fails; the array is then left as it was.  The new
 * elements past the old allocation are not initialised.
 */
int pg_array_grow(void *arrayp, size_t *alloc, size_t want, size_t size);

#define PG_ARRAY_GROW(array, want, alloc) \
	pg_array_grow(&(array), &(alloc), (want), sizeof(*(array)))

#endif
