/* testpoint.c - test-only fault points (see testpoint.h); empty unless built with PG_TEST_POINTS. */
#include "common/compat.h"
#include "common/testpoint.h"
#include "common/error.h"
#include "common/fs.h"

#ifdef PG_TEST_POINTS
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_bool stopped, held;
static atomic_ulong faults;

/*
 * A crash as a bug would make it: SIGSEGV with its default action, so that
 * neither a handler of ours nor a sanitizer's turns it into an exit.
 */
static void crash(void)
{
	signal(SIGSEGV, SIG_DFL);
	raise(SIGSEGV);
}

/* POINT is "STAGE" or "STAGE:TEXT": STAGE's first point, or its first whose text starts with TEXT */
static bool matches(const char *want, const char *stage, const char *text)
{
	const char *colon;
	size_t n;

	if (!want || !*want || !stage)
		return false;
	colon = strchr(want, ':');
	n = colon ? (size_t)(colon - want) : strlen(want);
	if (strlen(stage) != n || strncmp(stage, want, n))
		return false;
	return !colon || (text && !strncmp(text, colon + 1, strlen(colon + 1)));
}

static bool exists(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* The calling thread says it is held (DIR/held) and waits for DIR/release, a test's patience at most. */
static void hold(const char *stage, const char *text)
{
	const char *dir = getenv("PULLGATE_TEST_HOLD_DIR"), *p = getenv("PULLGATE_TEST_PATIENCE");
	struct timespec tick = { 0, 10 * 1000 * 1000L };
	long patience = p ? strtol(p, NULL, 10) : 0, waited_ms = 0;
	char path[4096], line[512];

	if (!dir || !*dir)
		return;
	if (patience <= 0 || patience > 86400)
		patience = 900;
	snprintf(path, sizeof(path), "%s/held", dir);
	snprintf(line, sizeof(line), "%s: %s\n", stage, text ? text : "");
	/* whole or not there: the test reads it as soon as it appears */
	if (pg_write_file_atomic(path, line, strlen(line)) < 0)
		pg_error_clear();
	while (!exists(dir, "release") && waited_ms < patience * 1000) {
		nanosleep(&tick, NULL);
		waited_ms += 10;
	}
}

void pg_testpoint(const char *stage, const char *text)
{
	/* once per process each: a test that lets it go on wants it to go on */
	if (!atomic_load(&stopped) && matches(getenv("PULLGATE_TEST_STOP"), stage, text) &&
	    !atomic_exchange(&stopped, true))
		raise(SIGSTOP);
	if (matches(getenv("PULLGATE_TEST_CRASH"), stage, text))
		crash();
	if (!atomic_load(&held) && matches(getenv("PULLGATE_TEST_HOLD"), stage, text) &&
	    !atomic_exchange(&held, true))
		hold(stage, text);
}

bool pg_testfault(const char *stage, const char *text)
{
	const char *times = getenv("PULLGATE_TEST_FAIL_TIMES");
	unsigned long n = times && *times ? strtoul(times, NULL, 10) : 1;

	return matches(getenv("PULLGATE_TEST_FAIL"), stage, text) &&
	       atomic_fetch_add(&faults, 1) < n;
}

uint64_t pg_test_clock_ms(uint64_t now_ms)
{
	const char *path = getenv("PULLGATE_TEST_CLOCK");
	char text[32], *end;
	unsigned long long v;
	ssize_t n;
	int fd;

	if (!path || !*path)
		return now_ms;
	if (pg_open_regular(&fd, NULL, path, PG_OPEN_READ, NULL) < 0) {
		pg_error_clear();
		return now_ms;
	}
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
