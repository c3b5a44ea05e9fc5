/* run.h - for tests that build repositories with git: run a command, fail the test when it fails. */
#ifndef PG_TEST_RUN_H
#define PG_TEST_RUN_H

#include "common/buf.h"
#include "common/oid.h"
#include "common/spawn.h"

/* Run argv; its output (stdout and stderr) for the caller to free.  Fails the test on failure. */
static PG_UNUSED char *run_must(const char *const argv[])
{
	pg_spawn_opts o = PG_SPAWN_OPTS_INIT;
	pg_spawn_result r;
	char *out;

	o.tail_max = (size_t)16 << 20;
	o.timeout_ms = 300000;
	pg_spawn_result_init(&r);
	assert_int_equal(pg_spawn_run(&r, argv, &o), 0);
	if (!pg_spawn_succeeded(&r))
		fail_msg("%s %s failed: %s", argv[0], argv[1] ? argv[1] : "", r.tail.ptr);
	out = pg_buf_detach(&r.tail);
	pg_spawn_result_release(&r);
	return out;
}

/* run_must of sh -c with a command made as printf does. */
static PG_UNUSED PG_PRINTF(1, 2) char *run_sh(const char *fmt, ...)
{
	char cmd[4096];
	const char *argv[] = { "sh", "-c", cmd, NULL };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return run_must(argv);
}

/* The commit git names rev in the repository at dir. */
static PG_UNUSED void run_rev(pg_oid *out, const char *dir, const char *rev)
{
	char *hex = run_sh("git -C %s rev-parse %s", dir, rev);

	assert_int_equal(pg_oid_fromhex(out, hex, PG_OID_HEXSZ), 0);
	free(hex);
}

#endif
