/* tls.c - the system's CA bundle, parsed when a fetch by URL first needs it, not at every start. */
#include "repo/internal.h"
#include "common/error.h"

#include <dlfcn.h>
#include <pthread.h>

/*
 * Debian's libgit2 1.5 is built on mbedTLS, and git_libgit2_init() parses
 * the whole system CA bundle: 7 ms of every run here (a program that only
 * calls git_libgit2_init() takes 13.9 ms, one that only links libgit2 6.9
 * ms; perf stat -r 50), twice what git needs for a whole `git rev-list
 * --count` of a small range, while most runs read local repositories only.
 *
 * libgit2 reads the bundle with mbedtls_x509_crt_parse_file().  The
 * definition below is the executable's own, and the dynamic linker finds an
 * executable's symbols before those of its libraries, so libgit2's call
 * lands here.  While pg_repo_lib_init() runs git_libgit2_init() on this
 * thread, the path is only kept and the chain left empty: a TLS handshake
 * that came before pg_git_tls_load() could not verify any server, so the
 * deferral fails closed.  pg_git_tls_load(), which every fetch by URL calls
 * first, hands the path back to libgit2 (GIT_OPT_SET_SSL_CERT_LOCATIONS);
 * that call, and any other, goes on to mbedTLS's own function.  A libgit2
 * built on OpenSSL never calls it, and then nothing here does anything.
 */

typedef int parse_file_fn(void *chain, const char *path);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *deferred;   /* the bundle libgit2 asked for at its init */
static bool pending;     /* libgit2's chain is empty: deferred is not loaded yet */
static _Thread_local bool in_init;

int mbedtls_x509_crt_parse_file(void *chain, const char *path);

int mbedtls_x509_crt_parse_file(void *chain, const char *path)
{
	parse_file_fn *real;

	if (in_init && path) {
		char *copy = pg_strdup(path);

		if (copy) {
			pthread_mutex_lock(&lock);
			free(deferred);
			deferred = copy;
			pending = true;
			pthread_mutex_unlock(&lock);
			return 0;
		}
	}
	/* a data pointer to a function: what dlsym returns, by POSIX's own rule */
	*(void **)&real = dlsym(RTLD_NEXT, "mbedtls_x509_crt_parse_file");
	return real ? real(chain, path) : -1;
}

int pg_repo_lib_init(void)
{
	int gerr;

	in_init = true;
	gerr = git_libgit2_init();
	in_init = false;
	return gerr < 0 ? pg_git_fail(gerr, "libgit2") : 0;
}

int pg_git_tls_load(void)
{
	int err = 0;

	/* held through the load: a second fetch must not start on an empty chain */
	pthread_mutex_lock(&lock);
	if (pending) {
		int gerr = git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, deferred, NULL);

		if (gerr < 0)
			err = pg_git_fail(gerr, "the CA certificates in '%s'", deferred);
		else
			pending = false;
	}
	pthread_mutex_unlock(&lock);
	return err;
}

bool pg_repo_tls_deferred(const char **path)
{
	bool was;

	pthread_mutex_lock(&lock);
	was = pending;
	if (path)
		*path = deferred;
	pthread_mutex_unlock(&lock);
	return was;
}
