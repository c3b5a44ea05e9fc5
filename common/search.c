/* search.c - the first entry of a sorted on-disk table at or past a key, by interpolation. */
#include "common/search.h"

/* guesses made by interpolation before halving takes over */
#define GUESSES 8

int pg_search_uniform(size_t *out, size_t lo, size_t hi, uint64_t lo_key, uint64_t hi_key,
		      uint64_t want, pg_key_at_fn *at, void *ctx)
{
	int guesses = 0, err;

	/* invariant: keys before lo are < want, keys from hi on are >= want */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t key;

		if (guesses++ < GUESSES && hi_key > lo_key && want >= lo_key) {
			/* where want would be if [lo, hi) spread evenly over [lo_key, hi_key] */
			double f = want >= hi_key ? 1.0 :
				   (double)(want - lo_key) / (double)(hi_key - lo_key);
			size_t guess = lo + (size_t)(f * (double)(hi - lo - 1));

			if (guess >= lo && guess < hi)
				mid = guess;
		}
		if ((err = at(&key, ctx, mid)) < 0)
			return err;
		if (key < want) {
			lo = mid + 1;
			lo_key = key;
		} else {
			hi = mid;
			hi_key = key;
		}
	}
	*out = lo;
	return 0;
}

uint64_t pg_key_prefix64(const unsigned char *id)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | id[i];
	return v;
}
