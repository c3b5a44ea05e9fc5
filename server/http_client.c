/* http_client.c - libcurl glue: one POST with a bearer token, a total timeout, no redirect, a bounded answer. */
#include "server/http_client.h"
#include "common/dl.h"
#include "common/error.h"
#include "common/str.h"

#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <pthread.h>

/*
 * libcurl is opened when a service first sends, not linked: with the TLS
 * stack and the protocols it brings it would load a dozen libraries at
 * the start of every pullgate command, as libmicrohttpd would
 * (server/http.c).  The soname is the one the headers were built for.
 */
#define CURL_SONAME "libcurl.so.4"
#define CURL_FUNCTIONS(X) X(global_init) X(easy_init) X(easy_setopt) X(easy_perform) \
	X(easy_getinfo) X(easy_cleanup) X(easy_strerror) X(slist_append) X(slist_free_all)

static struct {
#define CURL_MEMBER(f) __typeof__(curl_##f) *f;
	CURL_FUNCTIONS(CURL_MEMBER)
#undef CURL_MEMBER
} lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static char lib_missing[512] = "not opened"; /* why it could not be opened; empty once it is */

static void lib_open(void)
{
#define CURL_SYMBOL(f) { "curl_" #f, (void **)&lib.f },
	static const pg_dl_symbol syms[] = { CURL_FUNCTIONS(CURL_SYMBOL) };
#undef CURL_SYMBOL

	if (!pg_dl_open(CURL_SONAME, syms, PG_ARRAY_SIZE(syms), lib_missing, sizeof(lib_missing)))
		return;
	if (lib.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(lib_missing, sizeof(lib_missing), "%s did not initialise", CURL_SONAME);
		return;
	}
	lib_missing[0] = '\0';
}

int pg_http_client_ready(void)
{
	pthread_once(&lib_once, lib_open);
	if (lib_missing[0])
		return pg_error_set(PG_EUNSUPPORTED, "cannot use libcurl (%s): install libcurl4",
				    lib_missing);
	return 0;
}

typedef struct exchange {
	pg_buf *reply;
	pg_buf *status_line;
	size_t read;                   /* bytes of the answer's body read */
	volatile sig_atomic_t *cancel;
} exchange;

/* The body: its first PG_HTTP_REPLY_KEPT bytes kept, up to PG_HTTP_REPLY_MAX read. */
static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	exchange *x = ctx;
	size_t len = size * n, keep;

	if (x->read + len > PG_HTTP_REPLY_MAX)
		return 0;
	x->read += len;
	keep = x->reply->len < PG_HTTP_REPLY_KEPT ? PG_HTTP_REPLY_KEPT - x->reply->len : 0;
	if (keep > len)
		keep = len;
	if (keep && pg_buf_put(x->reply, data, keep) < 0)
		return 0;
	return len;
}

/* The status line of the last answer ("HTTP/1.1 201 Created"), without its protocol. */
static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	exchange *x = ctx;
	size_t len = size * n, sp;

	if (len > 5 && !memcmp(data, "HTTP/", 5)) {
		pg_buf_clear(x->status_line);
		sp = 0;
		while (sp < len && data[sp] != ' ')
			sp++;
		while (sp < len && data[sp] == ' ')
			sp++;
		while (len > sp && (data[len - 1] == '\n' || data[len - 1] == '\r'))
			len--;
		if (len - sp > 200)
			len = sp + 200;
		if (pg_buf_put(x->status_line, data + sp, len - sp) < 0)
			return 0;
	}
	return size * n;
}

static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	exchange *x = ctx;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return x->cancel && *x->cancel;
}

/*
 * Set an option the POST's safety rests on (where the token goes, what is
 * followed, how long it takes); a libcurl that refuses it sends nothing.
 */
#define MUST_SET(c, opt, val)									\
	if ((rc = lib.easy_setopt(c, opt, val)) != CURLE_OK) {					\
		err = pg_error_set(PG_EUNSUPPORTED, "libcurl refuses " #opt " (%s): install "	\
				   "libcurl4 7.85 or later", lib.easy_strerror(rc));		\
		goto done;									\
	}

static int add_header(struct curl_slist **list, const char *line)
{
	struct curl_slist *l = lib.slist_append(*list, line);

	if (!l)
		return pg_error_oom();
	*list = l;
	return 0;
}

int pg_http_client_post(unsigned *status, pg_buf *status_line, pg_buf *reply,
			const pg_http_post *p)
{
	struct curl_slist *headers = NULL, *h;
	pg_buf line = PG_BUF_INIT;
	char why[CURL_ERROR_SIZE] = "";
	exchange x = { reply, status_line, 0, p->cancel };
	CURL *c = NULL;
	CURLcode rc;
	long code = 0;
	int err;

	*status = 0;
	if ((err = pg_http_client_ready()) < 0)
		return err;
	if (!(c = lib.easy_init()))
		return pg_error_oom();
	/* the token's header is zeroed before it is freed: a secret */
	if ((err = pg_buf_printf(&line, "Authorization: Bearer %s", p->bearer)) < 0 ||
	    (err = add_header(&headers, line.ptr)) < 0)
		goto done;
	pg_buf_release_secret(&line);
	if ((err = pg_buf_printf(&line, "Content-Type: %s", p->content_type)) < 0 ||
	    (err = add_header(&headers, line.ptr)) < 0 ||
	    /* no 100-continue round trip: the body goes at once */
	    (err = add_header(&headers, "Expect:")) < 0)
		goto done;
	MUST_SET(c, CURLOPT_URL, p->url);
	/*
	 * no proxy, whatever http_proxy, https_proxy or ALL_PROXY say: through
	 * one, an http:// POST to this machine would hand the token to it in
	 * clear, and its answer would be taken for the receiver's
	 */
	MUST_SET(c, CURLOPT_PROXY, "");
	MUST_SET(c, CURLOPT_PROTOCOLS_STR, "http,https");
	MUST_SET(c, CURLOPT_FOLLOWLOCATION, 0L);
	lib.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	lib.easy_setopt(c, CURLOPT_POST, 1L);
	lib.easy_setopt(c, CURLOPT_POSTFIELDS, p->body);
	lib.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)p->len);
	lib.easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	MUST_SET(c, CURLOPT_TIMEOUT, (long)p->timeout_s);
	lib.easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	lib.easy_setopt(c, CURLOPT_WRITEDATA, &x);
	lib.easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	lib.easy_setopt(c, CURLOPT_HEADERDATA, &x);
	lib.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	lib.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	lib.easy_setopt(c, CURLOPT_XFERINFODATA, &x);
	lib.easy_setopt(c, CURLOPT_ERRORBUFFER, why);
	lib.easy_setopt(c, CURLOPT_USERAGENT, "pullgate/" PG_VERSION);
	rc = lib.easy_perform(c);
	lib.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		err = pg_error_set(PG_ECANCELLED, "the service stopped");
		goto done;
	}
	/* an answer too long to read whole still said its status */
	if (rc != CURLE_OK && !(rc == CURLE_WRITE_ERROR && code > 0)) {
		err = pg_error_set(PG_EIO, "%s", why[0] ? why : lib.easy_strerror(rc));
		goto done;
	}
	*status = (unsigned)code;
	if (!status_line->len)
		err = pg_buf_printf(status_line, "%u", *status);
done:
	pg_buf_release_secret(&line);
	/* the token's header too */
	for (h = headers; h; h = h->next)
		if (h->data)
			memset(h->data, 0, strlen(h->data));
	if (headers)
		lib.slist_free_all(headers);
	if (c)
		lib.easy_cleanup(c);
	return err;
}
