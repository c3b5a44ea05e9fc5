/* test_tlog_follow.c - unit tests for following a transparency log: new and rewritten epochs, batches, cancelling, what cannot be read. */
#include "tests/unit/unit.h"
#include "tests/unit/run.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/hex.h"
#include "repo/repo.h"
#include "verifier/tlog.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

extern char **environ;

#define GIT_ENV "GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.org GIT_COMMITTER_NAME=a " \
	"GIT_COMMITTER_EMAIL=a@example.org GIT_AUTHOR_DATE='2025-06-01 10:00 +0000' " \
	"GIT_COMMITTER_DATE='2025-06-01 10:00 +0000'"

/* What the callbacks saw. */
typedef struct seen {
	pg_buf raw;          /* each message read, one a line */
	size_t batches[16];  /* read, per call of the batch callback */
	size_t nbatches;
	pg_oid batch_tip[16]; /* epoch 0's cursor at each call */
	int batch_err;       /* what the batch callback returns */
	volatile sig_atomic_t cancel;
	size_t entries;
	size_t deletions;
	int last_err;
} seen;

static int on_entry(void *ctx, const pg_tlog_entry *e)
{
	seen *s = ctx;

	s->entries++;
	s->deletions += e->deletion;
	s->last_err = e->err;
	if (e->raw)
		assert_int_equal(pg_buf_put(&s->raw, e->raw, e->raw_len), 0);
	else
		assert_int_equal(pg_buf_puts(&s->raw, "-\n"), 0);
	return 0;
}

static int on_batch(void *ctx, const pg_tlog_cursor *c, size_t read)
{
	seen *s = ctx;

	assert_true(s->nbatches < 16);
	s->batch_tip[s->nbatches] = c->tips[0];
	s->batches[s->nbatches++] = read;
	return s->batch_err ? pg_error_set(s->batch_err, "the store refused") : 0;
}

static void seen_reset(seen *s)
{
	pg_buf_release(&s->raw);
	memset(s, 0, sizeof(*s));
}

/* A message "TEXT\n" appended to the log's epoch e (made when missing). */
static void append(const char *log, int e, const char *text)
{
	free(run_sh("d=%s/git/%d.git; [ -d $d ] || git init -q --bare $d; "
		    "b=$(printf '%%s\\n' '%s' | git -C $d hash-object -w --stdin); "
		    "t=$(printf '100644 blob %%s\\tm\\n' $b | git -C $d mktree); "
		    "p=$(git -C $d rev-parse -q --verify refs/heads/master || true); "
		    "c=$(" GIT_ENV " git -C $d commit-tree $t ${p:+-p $p} -m '%s'); "
		    "git -C $d update-ref refs/heads/master $c", log, e, text, text));
}

/* A commit of epoch e whose tree is the one entry ENTRY (printf's text, %s: a blob's id). */
static void append_tree(const char *log, int e, const char *entry)
{
	free(run_sh("d=%s/git/%d.git; b=$(echo gone | git -C $d hash-object -w --stdin); "
		    "t=$(printf '%s\\n' $b | git -C $d mktree --missing); "
		    "c=$(" GIT_ENV " git -C $d commit-tree $t -p refs/heads/master -m odd); "
		    "git -C $d update-ref refs/heads/master $c", log, e, entry));
}

static void master_of(pg_oid *out, const char *log, int e)
{
	char *hex = run_sh("git -C %s/git/%d.git rev-parse refs/heads/master", log, e);

	assert_int_equal(pg_oid_fromhex(out, hex, PG_OID_HEXSZ), 0);
	free(hex);
}

static char *new_log(void)
{
	char *dir = strdup("/tmp/pg-tlog-follow-XXXXXX");

	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	return dir;
}

/* A log of its own, its follower, a cursor and what the callbacks saw. */
typedef struct fixture {
	char *log;
	pg_tlog_follower *f;
	pg_tlog_cursor c;
	pg_tlog_follow_info info;
	seen s;
} fixture;

static void fx_init(fixture *x)
{
	memset(x, 0, sizeof(*x));
	x->log = new_log();
}

/* The follower of the log as it is, its cursor at the log's end. */
static void fx_from_end(fixture *x)
{
	assert_int_equal(pg_tlog_follower_new(&x->f, x->log), 0);
	assert_int_equal(pg_tlog_cursor_at_end(&x->c, x->f), 0);
}

static void fx_release(fixture *x)
{
	seen_reset(&x->s);
	pg_tlog_cursor_release(&x->c);
	pg_tlog_follower_free(x->f);
	free(run_sh("rm -rf %s", x->log));
	free(x->log);
}

/* Follow x's log from its cursor, the batch callback every batch messages: want is what it returns. */
static void follow(int want, fixture *x, size_t batch)
{
	pg_tlog_follow_opts o = PG_TLOG_FOLLOW_OPTS_INIT;

	o.batch = batch;
	o.entry = on_entry;
	o.batch_fn = on_batch;
	o.cancel = &x->s.cancel;
	o.ctx = &x->s;
	assert_int_equal(pg_tlog_follow(&x->info, x->f, &x->c, &o), want);
}

/* An epoch the cursor does not know is read from its root, after what the known one gained. */
static void test_new_epoch(void **state)
{
	fixture x;
	pg_oid tip;

	(void)state;
	fx_init(&x);
	append(x.log, 0, "a");
	append(x.log, 0, "b");
	fx_from_end(&x);
	assert_int_equal(x.c.nepochs, 1);
	append(x.log, 0, "c");
	append(x.log, 1, "d");
	append(x.log, 1, "e");
	follow(0, &x, 0);
	assert_string_equal(x.s.raw.ptr, "c\nd\ne\n");
	assert_int_equal(x.info.epochs, 2);
	assert_int_equal(x.info.read, 3);
	assert_int_equal(x.info.rewritten, 0);
	assert_int_equal(x.c.nepochs, 2);
	master_of(&tip, x.log, 1);
	assert_memory_equal(&x.c.tips[1], &tip, sizeof(tip));
	assert_int_equal(x.s.nbatches, 1);
	assert_int_equal(x.s.batches[0], 3);
	/* nothing gained: nothing read, no batch */
	seen_reset(&x.s);
	follow(0, &x, 0);
	assert_int_equal(x.info.read, 0);
	assert_int_equal(x.s.nbatches, 0);
	fx_release(&x);
}

/* A rewritten epoch is taken at its master as it is: none of what it holds is read again. */
static void test_rewritten_epoch(void **state)
{
	fixture x;
	pg_oid tip;

	(void)state;
	fx_init(&x);
	append(x.log, 0, "a");
	append(x.log, 0, "b");
	fx_from_end(&x);
	/* epoch 0 written again from its root: x, y */
	free(run_sh("git -C %s/git/0.git update-ref -d refs/heads/master", x.log));
	append(x.log, 0, "x");
	append(x.log, 0, "y");
	follow(0, &x, 0);
	assert_int_equal(x.info.rewritten, 1);
	assert_int_equal(x.info.last_rewritten, 0);
	assert_int_equal(x.info.read, 0);
	assert_int_equal(x.s.entries, 0);
	master_of(&tip, x.log, 0);
	assert_memory_equal(&x.c.tips[0], &tip, sizeof(tip));
	/* the cursor moved: the caller is given it to keep */
	assert_int_equal(x.s.nbatches, 1);
	assert_int_equal(x.s.batches[0], 0);
	/* and what it gains after is read */
	seen_reset(&x.s);
	append(x.log, 0, "z");
	follow(0, &x, 0);
	assert_int_equal(x.info.rewritten, 0);
	assert_string_equal(x.s.raw.ptr, "z\n");
	fx_release(&x);
}

/* Past the batch, the caller is given the cursor every batch and at the end; one call reads all. */
static void test_batches(void **state)
{
	fixture x;
	char *ids;
	pg_oid id[5];
	int i;

	(void)state;
	fx_init(&x);
	append(x.log, 0, "root");
	fx_from_end(&x);
	for (i = 0; i < 5; i++) {
		char text[16];

		snprintf(text, sizeof(text), "m%d", i);
		append(x.log, 0, text);
	}
	ids = run_sh("git -C %s/git/0.git rev-list --reverse master~5..master | tr -d '\\n'", x.log);
	for (i = 0; i < 5; i++)
		assert_int_equal(pg_oid_fromhex(&id[i], ids + i * PG_OID_HEXSZ, PG_OID_HEXSZ), 0);
	free(ids);
	follow(0, &x, 2);
	assert_string_equal(x.s.raw.ptr, "m0\nm1\nm2\nm3\nm4\n");
	assert_int_equal(x.info.read, 5);
	assert_int_equal(x.s.nbatches, 3);
	assert_int_equal(x.s.batches[0], 2);
	assert_int_equal(x.s.batches[1], 2);
	assert_int_equal(x.s.batches[2], 1);
	assert_memory_equal(&x.s.batch_tip[0], &id[1], sizeof(pg_oid));
	assert_memory_equal(&x.s.batch_tip[1], &id[3], sizeof(pg_oid));
	assert_memory_equal(&x.s.batch_tip[2], &id[4], sizeof(pg_oid));
	/* a batch callback that fails stops the read where it was given the cursor */
	seen_reset(&x.s);
	append(x.log, 0, "n0");
	append(x.log, 0, "n1");
	append(x.log, 0, "n2");
	x.s.batch_err = PG_EIO;
	follow(PG_EIO, &x, 2);
	assert_non_null(strstr(pg_error_last(), "the store refused"));
	assert_int_equal(x.info.read, 2);
	assert_int_equal(x.s.nbatches, 1);
	x.s.batch_err = 0;
	seen_reset(&x.s);
	follow(0, &x, 2);
	assert_string_equal(x.s.raw.ptr, "n2\n");
	/* cancelled: nothing read, the cursor where it was */
	seen_reset(&x.s);
	append(x.log, 0, "o0");
	x.s.cancel = 1;
	follow(PG_ECANCELLED, &x, 2);
	assert_int_equal(x.info.read, 0);
	assert_int_equal(x.s.entries, 0);
	assert_int_equal(x.s.nbatches, 0);
	x.s.cancel = 0;
	follow(0, &x, 2);
	assert_string_equal(x.s.raw.ptr, "o0\n");
	fx_release(&x);
}

/* A cursor that knows more epochs than the disk holds keeps them; those there are read. */
static void test_more_epochs_than_disk(void **state)
{
	fixture x;
	pg_buf text = PG_BUF_INIT;
	char *cursor;

	(void)state;
	fx_init(&x);
	append(x.log, 0, "a");
	cursor = run_sh("printf 'pullgate-tlog-cursor 1 3\\n000000 %%s\\n000001 %s\\n000002 %s\\n' "
			"$(git -C %s/git/0.git rev-parse master)",
			"29000644713a1a7ecea7871b433cf83f2740da90",
			"fe6ba5369e98005e5f0d76442447a966aa70d0dc", x.log);
	assert_int_equal(pg_tlog_cursor_parse(&x.c, cursor, strlen(cursor)), 0);
	append(x.log, 0, "b");
	assert_int_equal(pg_tlog_follower_new(&x.f, x.log), 0);
	follow(0, &x, 0);
	assert_int_equal(x.info.epochs, 1);
	assert_string_equal(x.s.raw.ptr, "b\n");
	assert_int_equal(x.c.nepochs, 3);
	assert_int_equal(pg_tlog_cursor_format(&text, &x.c), 0);
	assert_non_null(strstr(text.ptr, "000001 29000644713a1a7ecea7871b433cf83f2740da90\n"
				     "000002 fe6ba5369e98005e5f0d76442447a966aa70d0dc\n"));
	pg_buf_release(&text);
	free(cursor);
	fx_release(&x);
}

/*
 * A commit without a readable message is handed over with its error (a
 * deletion said so); an epoch that cannot be walked stays where it is and
 * the others are read.
 */
static void test_unreadable(void **state)
{
	fixture x;
	pg_oid before;

	(void)state;
	fx_init(&x);
	append(x.log, 0, "a");
	append(x.log, 1, "b");
	fx_from_end(&x);
	append_tree(x.log, 1, "100644 blob %s\\td");                     /* a deletion */
	append_tree(x.log, 1, "100644 blob 0123456789012345678901234567890123456789\\tm%.0s");
	append_tree(x.log, 1, "160000 commit 0123456789012345678901234567890123456789\\tm%.0s");
	append(x.log, 1, "c");
	follow(0, &x, 0);
	assert_string_equal(x.s.raw.ptr, "-\n-\n-\nc\n");
	assert_int_equal(x.s.deletions, 1);
	assert_int_equal(x.info.read, 4);
	/* epoch 0's master at a commit that is not there: epoch 1 is read all the same */
	before = x.c.tips[0];
	free(run_sh("echo 0123456789012345678901234567890123456789 >%s/git/0.git/refs/heads/master",
		    x.log));
	append(x.log, 1, "d");
	seen_reset(&x.s);
	follow(PG_ENOTFOUND, &x, 0);
	assert_non_null(strstr(pg_error_last(), "epoch 0: "));
	assert_int_equal(x.info.unread, 1);
	assert_string_equal(x.s.raw.ptr, "d\n");
	assert_memory_equal(&x.c.tips[0], &before, sizeof(before));
	fx_release(&x);
}

static void next_url_is(const char *prev, size_t e, const char *want)
{
	pg_buf b = PG_BUF_INIT;

	if (want) {
		assert_int_equal(pg_tlog_next_epoch_url(&b, prev, e), 0);
		assert_string_equal(b.ptr, want);
	} else {
		assert_int_equal(pg_tlog_next_epoch_url(&b, prev, e), PG_ENOTFOUND);
		pg_error_clear();
	}
	pg_buf_release(&b);
}

/* Epoch e's URL from e - 1's: its number as the last segment, ".git" and a final "/" kept. */
static void test_next_epoch_url(void **state)
{
	(void)state;
	next_url_is("https://git.kernel.org/pub/scm/infra/transparency-logs/gitolite/git/0.git", 1,
		    "https://git.kernel.org/pub/scm/infra/transparency-logs/gitolite/git/1.git");
	next_url_is("https://lore.kernel.org/lkml/0", 1, "https://lore.kernel.org/lkml/1");
	next_url_is("https://lore.kernel.org/lkml/9/", 10, "https://lore.kernel.org/lkml/10/");
	next_url_is("/srv/log/git/10.git/", 11, "/srv/log/git/11.git/");
	next_url_is("file:///srv/log/git/0.git", 1, "file:///srv/log/git/1.git");
	/* not epoch e - 1's number, or not a segment of its own */
	next_url_is("https://example.org/log/git/3.git", 1, NULL);
	next_url_is("https://example.org/log/git/10.git", 1, NULL);
	next_url_is("https://example.org/log/git/00.git", 1, NULL);
	next_url_is("https://example.org/log/git/x0.git", 1, NULL);
	next_url_is("0.git", 1, NULL);
	next_url_is("https://example.org/log.git", 1, NULL);
	next_url_is("", 1, NULL);
	next_url_is("https://example.org/log/git/0.git", 0, NULL);
}

/* Whether the names under the log's git/ (hidden ones too) are want's, space-separated. */
static bool epochs_are(const char *log, const char *want)
{
	char *got = run_sh("ls -A %s/git | LC_ALL=C sort | tr '\\n' ' ' | sed 's/ $//'", log);
	bool same = !strcmp(got, want);

	if (!same)
		print_error("git/ holds '%s', not '%s'\n", got, want);
	free(got);
	return same;
}

/*
 * The epochs the origin began since the clone are cloned as git/N.git
 * once their master is fetched, and read from their roots; an origin
 * without the next epoch adds none, and what a stop left is removed.
 */
static void test_fetch_new_epochs(void **state)
{
	fixture x;
	char *origin = new_log();
	size_t fetched;
	bool more;

	(void)state;
	fx_init(&x);
	append(origin, 0, "a");
	free(run_sh("git clone -q --mirror %s/git/0.git %s/git/0.git 2>&1", origin, x.log));
	fx_from_end(&x);
	/* nothing new at the origin: no epoch 1, and nothing of a try left */
	assert_int_equal(pg_tlog_fetch(&fetched, &more, x.f), 0);
	assert_false(more);
	assert_int_equal(fetched, 1);
	assert_true(epochs_are(x.log, "0.git"));
	/* the origin began epochs 1 and 2; a stop had left half a clone of 1 */
	append(origin, 0, "b");
	append(origin, 1, "c");
	append(origin, 2, "d");
	free(run_sh("mkdir -p %s/git/.1.git.new/objects && echo junk > %s/git/.1.git.new/HEAD",
		    x.log, x.log));
	assert_int_equal(pg_tlog_fetch(&fetched, &more, x.f), 0);
	assert_false(more);
	assert_int_equal(fetched, 3);
	assert_true(epochs_are(x.log, "0.git 1.git 2.git"));
	follow(0, &x, 0);
	assert_string_equal(x.s.raw.ptr, "b\nc\nd\n");
	assert_int_equal(x.c.nepochs, 3);
	/* their origins are the origin's epochs: fetched as the others at the next turn */
	append(origin, 2, "e");
	seen_reset(&x.s);
	assert_int_equal(pg_tlog_fetch(&fetched, &more, x.f), 0);
	assert_false(more);
	assert_int_equal(fetched, 3);
	follow(0, &x, 0);
	assert_string_equal(x.s.raw.ptr, "e\n");
	free(run_sh("rm -rf %s", origin));
	free(origin);
	fx_release(&x);
}

/*
 * An origin with more new epochs than one fetch clones says so (the
 * service takes no cursor at the log's end before it has them all); an
 * epoch the origin has but that cannot be fetched is an error, said,
 * and nothing of it is left.
 */
static void test_fetch_many_new_epochs(void **state)
{
	fixture x;
	char *origin = new_log();
	size_t fetched;
	bool more;
	int e;

	(void)state;
	fx_init(&x);
	for (e = 0; e < 10; e++)
		append(origin, e, "old");
	free(run_sh("git clone -q --mirror %s/git/0.git %s/git/0.git 2>&1", origin, x.log));
	assert_int_equal(pg_tlog_follower_new(&x.f, x.log), 0);
	assert_int_equal(pg_tlog_fetch(&fetched, &more, x.f), 0);
	assert_int_equal(fetched, 9);
	assert_true(more);
	assert_true(epochs_are(x.log, "0.git 1.git 2.git 3.git 4.git 5.git 6.git 7.git 8.git"));
	assert_int_equal(pg_tlog_fetch(&fetched, &more, x.f), 0);
	assert_int_equal(fetched, 10);
	assert_false(more);
	/* epoch 10 at the origin names a commit it does not hold */
	free(run_sh("mkdir -p %s/git/10.git && git init -q --bare %s/git/10.git && "
		    "echo 1111111111111111111111111111111111111111 > %s/git/10.git/refs/heads/master",
		    origin, origin, origin));
	assert_true(pg_tlog_fetch(&fetched, &more, x.f) < 0);
	assert_non_null(strstr(pg_error_last(), "epoch 10: a new epoch from '"));
	pg_error_clear();
	assert_int_equal(fetched, 10);
	assert_false(more);
	assert_true(epochs_are(x.log, "0.git 1.git 2.git 3.git 4.git 5.git 6.git 7.git 8.git 9.git"));
	free(run_sh("rm -rf %s", origin));
	free(origin);
	fx_release(&x);
}

/*
 * An origin that has not begun an epoch answers so: over HTTP with a 404,
 * a path that is no directory; the fetch says PG_ENOTFOUND (no error of
 * the log's: the epoch is asked for again at the next fetch).
 */
/* dir/name holding text */
static void write_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void test_fetch_new_epoch_404(void **state)
{
	fixture x;
	char *port, srv[512], portfile[512], url[600], dir[512];
	pg_repo *r = NULL;
	bool did;
	char *argv[] = { (char *)"python3", srv, portfile, NULL };
	posix_spawn_file_actions_t fa;
	size_t fetched;
	pid_t pid;
	bool more;

	(void)state;
	fx_init(&x);
	append(x.log, 0, "a");
	/* a server that answers every request 404, on a port of its choosing */
	write_file(x.log, "srv.py",
		   "import http.server, os, sys\n"
		   "class H(http.server.BaseHTTPRequestHandler):\n"
		   "    def do_GET(self): self.send_error(404)\n"
		   "    def log_message(self, *a): pass\n"
		   "s = http.server.HTTPServer(('127.0.0.1', 0), H)\n"
		   "s.timeout = 0.2\n"
		   "open(sys.argv[1] + '.tmp', 'w').write(str(s.server_port))\n"
		   "os.rename(sys.argv[1] + '.tmp', sys.argv[1])\n"
		   "parent = os.getppid()\n"
		   "# it ends with the test, even one that failed before it could stop it\n"
		   "while os.getppid() == parent:\n"
		   "    s.handle_request()\n");
	snprintf(srv, sizeof(srv), "%s/srv.py", x.log);
	snprintf(portfile, sizeof(portfile), "%s/port", x.log);
	/* its output not the test's: a pipe it held would keep a reader of the test's waiting */
	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	assert_int_equal(posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0), 0);
	assert_int_equal(posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0), 0);
	assert_int_equal(posix_spawn_file_actions_adddup2(&fa, 1, 2), 0);
	assert_int_equal(posix_spawnp(&pid, "python3", &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	port = run_sh("i=0; while [ ! -s %s/port ] && [ $i -lt 6000 ]; do sleep 0.05; i=$((i+1)); "
		      "done; cat %s/port", x.log, x.log);
	/* the origin's answer for an epoch it has not begun: no such repository, not a failure */
	snprintf(url, sizeof(url), "http://127.0.0.1:%s/log/git/1.git", port);
	snprintf(dir, sizeof(dir), "%s/probe.git", x.log);
	assert_int_equal(pg_repo_init_mirror(&r, dir, "origin", url), 0);
	assert_int_equal(pg_repo_fetch_mirror(&did, r, "origin", "refs/heads/master"), PG_ENOTFOUND);
	assert_non_null(strstr(pg_error_last(), "404"));
	pg_error_clear();
	pg_repo_free(r);
	/* so is a path that is no directory */
	snprintf(url, sizeof(url), "%s/nowhere/git/1.git", x.log);
	free(run_sh("git -C %s config remote.origin.url %s", dir, url));
	assert_int_equal(pg_repo_open(&r, dir), 0);
	assert_int_equal(pg_repo_fetch_mirror(&did, r, "origin", "refs/heads/master"), PG_ENOTFOUND);
	assert_non_null(strstr(pg_error_last(), "no such repository"));
	pg_error_clear();
	pg_repo_free(r);
	/* a whole log whose origin answers so: only epoch 0's fetch fails, no new epoch is said */
	free(run_sh("git -C %s/git/0.git config remote.origin.url http://127.0.0.1:%s/log/git/0.git",
		    x.log, port));
	assert_int_equal(pg_tlog_follower_new(&x.f, x.log), 0);
	assert_true(pg_tlog_fetch(&fetched, &more, x.f) < 0);
	assert_non_null(strstr(pg_error_last(), "epoch 0: "));
	assert_null(strstr(pg_error_last(), "epoch 1"));
	pg_error_clear();
	assert_false(more);
	assert_true(epochs_are(x.log, "0.git"));
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	free(port);
	fx_release(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_epoch),
		cmocka_unit_test(test_next_epoch_url),
		cmocka_unit_test(test_fetch_new_epochs),
		cmocka_unit_test(test_fetch_many_new_epochs),
		cmocka_unit_test(test_fetch_new_epoch_404),
		cmocka_unit_test(test_rewritten_epoch),
		cmocka_unit_test(test_batches),
		cmocka_unit_test(test_more_epochs_than_disk),
		cmocka_unit_test(test_unreadable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
