/* testpoint.c - test-only fault points (see testpoint.h); empty unless built with PG_TEST_POINTS. */
#include "common/testpoint.h"

#ifdef PG_TEST_POINTS
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_bool stopped;

void pg_testpoint(const char *stage, const char *text)
{
	const char *want = getenv("PULLGATE_TEST_STOP"), *colon;
	size_t n;

	if (!want || !*want || !stage || atomic_load(&stopped))
		return;
	colon = strchr(want, ':');
	n = colon ? (size_t)(colon - want) : strlen(want);
	if (strlen(stage) != n || strncmp(stage, want, n))
		return;
	if (colon && (!text || strncmp(text, colon + 1, strlen(colon + 1))))
		return;
	/* once per process: a test that lets it go on wants it to go on */
	if (atomic_exchange(&stopped, true))
		return;
	raise(SIGSTOP);
}
#else
/* ISO C wants a translation unit to declare something */
typedef int pg_testpoint_unused;
#endif
