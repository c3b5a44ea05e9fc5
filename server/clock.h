/* clock.h - the monotonic clock the service's deadlines and timed waits use (private to server/). */
#ifndef PG_SERVER_CLOCK_H
#define PG_SERVER_CLOCK_H

#include "common/compat.h"

#include <time.h>

/* Milliseconds on the monotonic clock. */
static inline uint64_t pg_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The monotonic time ms milliseconds from now, for pthread_cond_timedwait on a CLOCK_MONOTONIC condition. */
static inline void pg_monotonic_after(struct timespec *out, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, out);
	out->tv_sec += ms / 1000;
	out->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (out->tv_nsec >= 1000000000L) {
		out->tv_sec++;
		out->tv_nsec -= 1000000000L;
	}
}

#endif
