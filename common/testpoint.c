/* testpoint.c - test-only fault points (see testpoint.h); empty unless built with PG_TEST_POINTS. */
#include "common/compat.h"
#include "common/testpoint.h"

#ifdef PG_TEST_POINTS
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

uint64_t pg_test_clock_ms(uint64_t now_ms)
{
	const char *path = getenv("PULLGATE_TEST_CLOCK");
	char text[32], *end;
	unsigned long long v;
	ssize_t n;
	int fd;

	if (!path || !*path || (fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0)
		return now_ms;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return now_ms;
	text[n] = '\0';
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text || (*end && *end != '\n'))
		return now_ms;
	return (uint64_t)v;
}
#else
/* ISO C wants a translation unit to declare something */
typedef int pg_testpoint_unused;
#endif
