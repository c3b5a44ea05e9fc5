/* spawn.c - fork/exec with a pipe, poll, a deadline and a process-group kill. */
#include "common/spawn.h"
#include "common/error.h"
#include "common/fs.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define LINE_MAX_BYTES 65536

void pg_spawn_result_init(pg_spawn_result *res)
{
	memset(res, 0, sizeof(*res));
	pg_buf_init(&res->tail, 0);
	res->exit_code = -1;
}

void pg_spawn_result_release(pg_spawn_result *res)
{
	pg_buf_release(&res->tail);
}

bool pg_spawn_succeeded(const pg_spawn_result *res)
{
	return res->exit_code == 0 && !res->timed_out && !res->cancelled;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* environ plus the extra entries (which win); pointers borrowed. */
static char **build_env(const char *const *extra)
{
	size_t n = 0, k = 0, i, j;
	char **env;

	while (environ[n])
		n++;
	while (extra && extra[k])
		k++;
	if (!(env = calloc(n + k + 1, sizeof(*env))))
		return NULL;
	for (i = 0, j = 0; i < n; i++) {
		size_t e, keylen = strcspn(environ[i], "=");
		bool overridden = false;

		for (e = 0; e < k && !overridden; e++)
			overridden = !strncmp(extra[e], environ[i], keylen) && extra[e][keylen] == '=';
		if (!overridden)
			env[j++] = environ[i];
	}
	for (i = 0; i < k; i++)
		env[j++] = (char *)extra[i];
	return env;
}

/* Keep the last max bytes of output. */
static int tail_append(pg_buf *tail, size_t max, const char *p, size_t n)
{
	if (!max)
		return 0;
	if (n >= max) {
		pg_buf_clear(tail);
		return pg_buf_put(tail, p + n - max, max);
	}
	if (tail->len + n > max) {
		size_t drop = tail->len + n - max;

		memmove(tail->ptr, tail->ptr + drop, tail->len - drop);
		pg_buf_truncate(tail, tail->len - drop);
	}
	return pg_buf_put(tail, p, n);
}

static int feed_lines(pg_buf *line, const pg_spawn_opts *o, const char *p, size_t n)
{
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		if (p[i] == '\n' || line->len >= LINE_MAX_BYTES) {
			if ((rc = o->on_line(o->ctx, line->ptr, line->len)) != 0)
				return rc;
			pg_buf_clear(line);
			if (p[i] == '\n')
				continue;
		}
		if (pg_buf_putc(line, p[i]) < 0)
			return PG_ENOMEM;
	}
	return 0;
}

/*
 * In the child, between fork and exec: every descriptor from 3 up is made
 * close-on-exec, so that the program run keeps stdin, stdout and stderr
 * and nothing else.  Another thread may hold a pipe that is not
 * close-on-exec at the moment of the fork (gpgme's to gpg, between its
 * pipe() and its close of gpg's end): a child that inherited its write end
 * would keep gpgme waiting for an end of file for as long as the child
 * lives, a build or a boot.  Close-on-exec rather than closed, so that
 * errpipe still reports a failed exec.  Only async-signal-safe calls.
 */
static void cloexec_from_3(int highest)
{
	int fd;

#ifdef CLOSE_RANGE_CLOEXEC
	if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return;
#endif
	for (fd = 3; fd <= highest; fd++)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* In the child, before exec (setrlimit and prctl are plain system calls): its limits. */
static void limit_self(const pg_spawn_opts *o, pid_t parent)
{
	struct rlimit rl;

	if (o->die_with_parent) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) /* gone before the call took */
			_exit(127);
	}
	if (o->max_memory) {
		rl.rlim_cur = rl.rlim_max = (rlim_t)o->max_memory;
		setrlimit(RLIMIT_AS, &rl);
	}
	if (o->no_core) {
		rl.rlim_cur = rl.rlim_max = 0;
		setrlimit(RLIMIT_CORE, &rl);
	}
}

static void stop_group(pid_t pid, unsigned grace_ms)
{
	uint64_t until;
	int status;

	kill(-pid, SIGTERM);
	until = now_ms() + (grace_ms ? grace_ms : 2000);
	while (now_ms() < until) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			/* the leader is gone; make sure nothing of its group lingers */
			kill(-pid, SIGKILL);
			return;
		}
		usleep(20000);
	}
	kill(-pid, SIGKILL);
}

int pg_spawn_run(pg_spawn_result *res, const char *const argv[], const pg_spawn_opts *opts)
{
	static const pg_spawn_opts defaults = PG_SPAWN_OPTS_INIT;
	const pg_spawn_opts *o = opts ? opts : &defaults;
	int pipefd[2] = { -1, -1 }, errpipe[2] = { -1, -1 }, logfd = -1, status = 0, err = 0;
	long open_max = sysconf(_SC_OPEN_MAX);
	char **env = NULL;
	pg_buf line = PG_BUF_INIT;
	uint64_t start = now_ms();
	bool stopped = false, reaped = false;
	pid_t pid, parent;

	pg_spawn_result_release(res);
	pg_spawn_result_init(res);
	if (!argv || !argv[0])
		return pg_error_set(PG_EINVALID, "nothing to run");
	/* a log of the run's own: a FIFO or a symlink planted there is refused, never written to */
	if (o->log_path && (err = pg_open_regular(&logfd, NULL, o->log_path,
						  PG_OPEN_APPEND | PG_OPEN_NOFOLLOW, NULL)) < 0)
		return err;
	if (!(env = build_env(o->env))) {
		err = pg_error_oom();
		goto done;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0 || pipe2(errpipe, O_CLOEXEC) < 0) {
		err = pg_error_set(PG_EIO, "pipe: %s", strerror(errno));
		goto done;
	}
	parent = getpid();
	pid = fork();
	if (pid < 0) {
		err = pg_error_set(PG_EIO, "fork: %s", strerror(errno));
		goto done;
	}
	if (pid == 0) {
		/* only async-signal-safe calls from here to exec */
		int devnull = open("/dev/null", O_RDONLY), e;

		setpgid(0, 0);
		/* what pullgate serve ignores, its builds and tools do not inherit */
		signal(SIGPIPE, SIG_DFL);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		cloexec_from_3(open_max > 0 && open_max < 65536 ? (int)open_max : 65536);
		limit_self(o, parent);
		if (o->cwd && chdir(o->cwd) < 0) {
			e = errno;
			if (write(errpipe[1], &e, sizeof(e)) < 0)
				_exit(126);
			_exit(126);
		}
		execvpe(argv[0], (char *const *)argv, env);
		e = errno;
		if (write(errpipe[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	setpgid(pid, pid); /* also from here, so the group exists before any kill */
	if (o->on_start)
		o->on_start(o->ctx, (int)pid);
	close(pipefd[1]);
	pipefd[1] = -1;
	close(errpipe[1]);
	errpipe[1] = -1;
	{
		int e = 0;
		ssize_t n = read(errpipe[0], &e, sizeof(e));

		if (n == (ssize_t)sizeof(e)) {
			waitpid(pid, &status, 0);
			err = pg_error_set(e == ENOENT ? PG_ENOTFOUND : PG_EIO, "cannot run '%s': %s",
					   argv[0], strerror(e));
			goto done;
		}
	}

	for (;;) {
		struct pollfd pfd = { pipefd[0], POLLIN, 0 };
		char chunk[16384];
		int wait = 200;
		ssize_t n;
		int pr;

		if (o->timeout_ms && now_ms() - start >= o->timeout_ms) {
			res->timed_out = true;
			break;
		}
		if (o->cancel && *o->cancel) {
			res->cancelled = true;
			break;
		}
		pr = poll(&pfd, 1, wait);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr == 0 && waitpid(pid, &status, WNOHANG) == pid) {
			/* the child is gone but something it left holds the pipe open */
			reaped = true;
			break;
		}
		if (pr <= 0)
			continue;
		n = read(pipefd[0], chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EOF: the group closed its output */
		if (logfd >= 0 && write(logfd, chunk, (size_t)n) != n) {
			err = pg_error_set(PG_EIO, "'%s': %s", o->log_path, strerror(errno));
			break;
		}
		if ((err = tail_append(&res->tail, o->tail_max, chunk, (size_t)n)) < 0)
			break;
		if (o->on_line && (err = feed_lines(&line, o, chunk, (size_t)n)) != 0)
			break;
	}
	if (res->timed_out || res->cancelled || err) {
		stop_group(pid, o->grace_ms);
		stopped = true;
	}
	if (!reaped)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	if (!stopped)
		kill(-pid, SIGKILL); /* daemons the child left behind in its group */
	if (err == 0 && o->on_line && line.len)
		err = o->on_line(o->ctx, line.ptr, line.len);
	if (WIFEXITED(status)) {
		res->exit_code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		res->exit_code = -1;
		res->signal = WTERMSIG(status);
	}
done:
	res->elapsed_ms = now_ms() - start;
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	if (errpipe[0] >= 0)
		close(errpipe[0]);
	if (errpipe[1] >= 0)
		close(errpipe[1]);
	if (logfd >= 0)
		close(logfd);
	free(env);
	pg_buf_release(&line);
	return err;
}
