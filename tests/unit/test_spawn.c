/* test_spawn.c - unit tests for running children from an argv with a deadline. */
#include "tests/unit/unit.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/spawn.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int count_lines(void *ctx, const char *line, size_t len)
{
	(void)line;
	(void)len;
	(*(int *)ctx)++;
	return 0;
}

static void test_exit_status_and_output(void **state)
{
	const char *const argv[] = { "sh", "-c", "echo one; echo two >&2; exit 3", NULL };
	pg_spawn_opts o = PG_SPAWN_OPTS_INIT;
	pg_spawn_result r;
	int lines = 0;

	(void)state;
	pg_spawn_result_init(&r);
	o.tail_max = 1024;
	o.on_line = count_lines;
	o.ctx = &lines;
	assert_int_equal(pg_spawn_run(&r, argv, &o), 0);
	assert_int_equal(r.exit_code, 3);
	assert_false(pg_spawn_succeeded(&r));
	assert_string_equal(r.tail.ptr, "one\ntwo\n");
	assert_int_equal(lines, 2);
	pg_spawn_result_release(&r);
}

static void test_arguments_are_not_a_shell_string(void **state)
{
	/* a hostile argument reaches the child verbatim and is never interpreted */
	const char *const argv[] = { "printf", "%s", "$(touch /tmp/pullgate-pwned); `id`", NULL };
	pg_spawn_opts o = PG_SPAWN_OPTS_INIT;
	pg_spawn_result r;

	(void)state;
	pg_spawn_result_init(&r);
	o.tail_max = 256;
	assert_int_equal(pg_spawn_run(&r, argv, &o), 0);
	assert_true(pg_spawn_succeeded(&r));
	assert_string_equal(r.tail.ptr, "$(touch /tmp/pullgate-pwned); `id`");
	assert_int_equal(access("/tmp/pullgate-pwned", F_OK), -1);
	pg_spawn_result_release(&r);
}

/*
 * A sleeper the child started in the background, its pid in a file: once
 * pg_spawn_run returned it must be gone (a zombie init has not reaped yet
 * is gone too).  It would sleep for ten minutes: a run that waited for it
 * instead of killing it fails however fast or slow the machine is.  A
 * kill takes effect when the killed process next runs: the test waits for
 * it to be gone, a test's patience at most (PULLGATE_TEST_PATIENCE).
 */
#define SLEEPER "sleep 600 & echo $! >\"$1\"; "

static char sleeper_file[] = "/tmp/pullgate-spawn-sleeper-XXXXXX";

/* The sleeper's pid, or 0 when the child was stopped before it wrote it. */
static long sleeper_pid(void)
{
	pg_buf b = PG_BUF_INIT;
	long pid;

	assert_int_equal(pg_buf_read_file(&b, sleeper_file), 0);
	pid = b.len ? strtol(b.ptr, NULL, 10) : 0;
	pg_buf_release(&b);
	return pid;
}

static bool sleeper_dead(long pid)
{
	char path[64], stat[512], *p;
	FILE *f;
	bool gone;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (!(f = fopen(path, "r")))
		return true;
	gone = fgets(stat, sizeof(stat), f) && (p = strrchr(stat, ')')) && p[1] == ' ' && p[2] == 'Z';
	fclose(f);
	return gone;
}

static bool sleeper_gone(void)
{
	const char *env = getenv("PULLGATE_TEST_PATIENCE");
	long pid = sleeper_pid(), tries = (env && *env ? strtol(env, NULL, 10) : 900) * 50;
	struct timespec step = { 0, 20 * 1000 * 1000 };

	assert_true(pid > 1);
	while (!sleeper_dead(pid) && tries-- > 0)
		nanosleep(&step, NULL);
	return sleeper_dead(pid);
}

static void test_timeout_kills_the_group(void **state)
{
	/* the grandchild sleeps too: the whole group must go */
	const char *const argv[] = { "sh", "-c", SLEEPER "sleep 600", "sh", sleeper_file, NULL };
	pg_spawn_opts o = PG_SPAWN_OPTS_INIT;
	pg_spawn_result r;
	int fd;

	(void)state;
	assert_true((fd = mkstemp(sleeper_file)) >= 0);
	close(fd);
	/* a machine too busy to start the sleeper before the deadline gets a longer one */
	for (o.timeout_ms = 300;; o.timeout_ms *= 2) {
		pg_spawn_result_init(&r);
		o.grace_ms = 200;
		assert_int_equal(pg_spawn_run(&r, argv, &o), 0);
		assert_true(r.timed_out);
		assert_false(pg_spawn_succeeded(&r));
		pg_spawn_result_release(&r);
		if (sleeper_pid() || o.timeout_ms > 600 * 1000)
			break;
	}
	assert_true(sleeper_gone());
	unlink(sleeper_file);
}

static void test_limits(void **state)
{
	/* what the child runs under: 512 MiB of address space (ulimit -v counts KiB), no core */
	const char *const argv[] = { "sh", "-c", "ulimit -v; ulimit -c", NULL };
	pg_spawn_opts o = PG_SPAWN_OPTS_INIT;
	pg_spawn_result r;

	(void)state;
	pg_spawn_result_init(&r);
	o.tail_max = 256;
	o.max_memory = (uint64_t)512 << 20;
	o.no_core = true;
	assert_int_equal(pg_spawn_run(&r, argv, &o), 0);
	assert_true(pg_spawn_succeeded(&r));
	assert_string_equal(r.tail.ptr, "524288\n0\n");
	pg_spawn_result_release(&r);
}

static void test_dies_with_its_parent(void **state)
{
	/* a process running a child that would live ten minutes is killed: the child goes too */
	const char *const argv[] = { "sh", "-c", "echo $$ >\"$1\"; exec sleep 600", "sh",
				     sleeper_file, NULL };
	const char *env = getenv("PULLGATE_TEST_PATIENCE");
	long tries = (env && *env ? strtol(env, NULL, 10) : 900) * 50;
	struct timespec step = { 0, 20 * 1000 * 1000 };
	pid_t parent;
	int fd, status;

	(void)state;
	/* a name of its own: another test's mkstemp filled the template in */
	snprintf(sleeper_file, sizeof(sleeper_file), "/tmp/pullgate-spawn-sleeper-XXXXXX");
	assert_true((fd = mkstemp(sleeper_file)) >= 0);
	close(fd);
	parent = fork();
	assert_true(parent >= 0);
	if (parent == 0) {
		pg_spawn_opts o = PG_SPAWN_OPTS_INIT;
		pg_spawn_result r;

		pg_spawn_result_init(&r);
		o.die_with_parent = true;
		_exit(pg_spawn_run(&r, argv, &o) == 0 ? 0 : 1);
	}
	while (!sleeper_pid() && tries-- > 0)
		nanosleep(&step, NULL);
	assert_true(sleeper_pid() > 1);
	kill(parent, SIGKILL);
	assert_int_equal(waitpid(parent, &status, 0), parent);
	assert_true(sleeper_gone());
	unlink(sleeper_file);
}

static void test_tail_is_capped(void **state)
{
	const char *const argv[] = { "sh", "-c", "i=0; while [ $i -lt 1000 ]; do echo line$i; i=$((i+1)); done", NULL };
	pg_spawn_opts o = PG_SPAWN_OPTS_INIT;
	pg_spawn_result r;

	(void)state;
	pg_spawn_result_init(&r);
	o.tail_max = 16;
	assert_int_equal(pg_spawn_run(&r, argv, &o), 0);
	assert_int_equal(r.tail.len, 16);
	assert_string_equal(r.tail.ptr, "line998\nline999\n");
	pg_spawn_result_release(&r);
}

static void test_missing_program(void **state)
{
	const char *const argv[] = { "pullgate-no-such-program", NULL };
	pg_spawn_result r;

	(void)state;
	pg_spawn_result_init(&r);
	assert_int_equal(pg_spawn_run(&r, argv, NULL), PG_ENOTFOUND);
	assert_non_null(strstr(pg_error_last(), "pullgate-no-such-program"));
	pg_spawn_result_release(&r);
}

static void test_env_cwd_and_log(void **state)
{
	char dir[] = "/tmp/pullgate-spawn-XXXXXX", log[64];
	const char *const env[] = { "PULLGATE_TEST_VAR=hello", NULL };
	const char *const argv[] = { "sh", "-c", "echo $PULLGATE_TEST_VAR; pwd", NULL };
	pg_spawn_opts o = PG_SPAWN_OPTS_INIT;
	pg_spawn_result r;
	pg_buf b = PG_BUF_INIT, want = PG_BUF_INIT;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(log, sizeof(log), "%s/log", dir);
	pg_spawn_result_init(&r);
	o.env = env;
	o.cwd = dir;
	o.log_path = log;
	assert_int_equal(pg_spawn_run(&r, argv, &o), 0);
	assert_int_equal(pg_buf_read_file(&b, log), 0);
	pg_buf_printf(&want, "hello\n%s\n", dir);
	assert_string_equal(b.ptr, want.ptr);
	unlink(log);
	rmdir(dir);
	pg_buf_release(&b);
	pg_buf_release(&want);
	pg_spawn_result_release(&r);
}

static int stop_at_two(void *ctx, const char *line, size_t len)
{
	(void)line;
	(void)len;
	return ++*(int *)ctx == 2 ? 42 : 0;
}

static void test_callback_can_stop(void **state)
{
	const char *const argv[] = { "sh", "-c", SLEEPER "echo a; echo b; sleep 600", "sh",
				     sleeper_file, NULL };
	pg_spawn_opts o = PG_SPAWN_OPTS_INIT;
	pg_spawn_result r;
	int n = 0, fd;

	(void)state;
	memcpy(sleeper_file + sizeof(sleeper_file) - 7, "XXXXXX", 6);
	assert_true((fd = mkstemp(sleeper_file)) >= 0);
	close(fd);
	pg_spawn_result_init(&r);
	o.on_line = stop_at_two;
	o.ctx = &n;
	o.grace_ms = 200;
	assert_int_equal(pg_spawn_run(&r, argv, &o), 42);
	assert_true(sleeper_gone());
	unlink(sleeper_file);
	pg_spawn_result_release(&r);
}

/* A descriptor another thread left inheritable (gpgme's pipe to gpg, a moment) is not the child's. */
static void test_the_child_inherits_nothing_but_its_output(void **state)
{
	const char *const argv[] = { "sh", "-c", "ls /proc/$$/fd", NULL };
	pg_spawn_opts o = PG_SPAWN_OPTS_INIT;
	pg_spawn_result r;
	char name[16];
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	pg_spawn_result_init(&r);
	o.tail_max = 4096;
	assert_int_equal(pg_spawn_run(&r, argv, &o), 0);
	assert_true(pg_spawn_succeeded(&r));
	/* the child's own 0, 1 and 2 are there; the parent's pipe is not */
	assert_non_null(strstr(r.tail.ptr, "\n1\n"));
	snprintf(name, sizeof(name), "\n%d\n", p[1]);
	assert_null(strstr(r.tail.ptr, name));
	snprintf(name, sizeof(name), "\n%d\n", p[0]);
	assert_null(strstr(r.tail.ptr, name));
	close(p[0]);
	close(p[1]);
	pg_spawn_result_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_status_and_output),
		cmocka_unit_test(test_arguments_are_not_a_shell_string),
		cmocka_unit_test(test_timeout_kills_the_group),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_dies_with_its_parent),
		cmocka_unit_test(test_tail_is_capped),
		cmocka_unit_test(test_missing_program),
		cmocka_unit_test(test_env_cwd_and_log),
		cmocka_unit_test(test_callback_can_stop),
		cmocka_unit_test(test_the_child_inherits_nothing_but_its_output),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
