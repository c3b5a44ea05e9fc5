/* boot.c - run boot.sh under a deadline and parse the console with the KTAP parser. */
#include "pipeline/boot.h"
#include "common/error.h"
#include "common/spawn.h"

/* The console of a runaway kernel is capped before it is parsed. */
#define CONSOLE_MAX ((size_t)64 << 20)

void pg_boot_run_release(pg_boot_run *r)
{
	pg_boot_result_free(r->result);
	memset(r, 0, sizeof(*r));
}

int pg_boot(pg_boot_run *r, const pg_boot_opts *o)
{
	pg_spawn_opts so = PG_SPAWN_OPTS_INIT;
	pg_spawn_result sr;
	pg_buf console;
	int err;

	memset(r, 0, sizeof(*r));
	pg_spawn_result_init(&sr);
	pg_buf_init(&console, CONSOLE_MAX);
	so.env = o->env;
	so.log_path = o->log;
	so.timeout_ms = o->timeout_s * 1000u;
	so.cancel = o->cancel;
	if ((err = pg_spawn_run(&sr, o->argv, &so)) < 0)
		goto done;
	r->exit_code = sr.exit_code;
	r->timed_out = sr.timed_out || sr.exit_code == 124;
	r->cancelled = sr.cancelled;
	r->elapsed_ms = sr.elapsed_ms;
	err = pg_buf_read_file(&console, o->console_log);
	if (err == PG_ENOTFOUND) {
		pg_error_clear();
		err = 0;
		goto done;
	}
	if (err == PG_ETOOBIG) {
		/* judge what fits: a kernel printing 64 MiB is itself the finding */
		pg_error_clear();
		err = 0;
	}
	if (err == 0)
		err = pg_ktap_parse(&r->result, console.ptr, console.len);
done:
	pg_spawn_result_release(&sr);
	pg_buf_release(&console);
	return err;
}
