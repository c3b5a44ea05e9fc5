/* array.c - geometric, overflow-checked growth of caller-owned arrays. */
#include "common/array.h"
#include "common/error.h"

int pg_array_grow(void *arrayp, size_t *alloc, size_t want, size_t size)
{
	void *old, *grown;
	size_t n;

	if (want <= *alloc)
		return 0;
	n = *alloc + *alloc / 2;
	if (n < *alloc || n < want)
		n = want;
	if (n < 8)
		n = 8;
	if (size && n > SIZE_MAX / size)
		return pg_error_set(PG_ENOMEM, "an array of %zu elements of %zu bytes is too large",
				    want, size);
	/*
	 * The pointer is copied in and out with memcpy so that an array of any
	 * element type can come through one function without type punning.
	 */
	memcpy(&old, arrayp, sizeof(old));
	if (!(grown = realloc(old, n * size)))
		return pg_error_oom();
	memcpy(arrayp, &grown, sizeof(grown));
	*alloc = n;
	return 0;
}
