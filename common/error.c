/* error.c - thread-local last error, in the manner of libgit2's giterr. */
#include "common/error.h"

#define MSG_MAX 1024

static _Thread_local char last_msg[MSG_MAX];
static _Thread_local int last_code;

static void append(const char *s)
{
	size_t used = strlen(last_msg), n = strlen(s);

	if (n > sizeof(last_msg) - 1 - used)
		n = sizeof(last_msg) - 1 - used;
	memcpy(last_msg + used, s, n);
	last_msg[used + n] = '\0';
}

static void vset(const char *fmt, va_list ap)
{
	int n = vsnprintf(last_msg, sizeof(last_msg), fmt, ap);

	if (n < 0)
		snprintf(last_msg, sizeof(last_msg), "unknown error");
}

int pg_error_set(int code, const char *fmt, ...)
{
	va_list ap;

	if (code >= 0)
		code = PG_ERROR;
	va_start(ap, fmt);
	vset(fmt, ap);
	va_end(ap);
	last_code = code;
	return code;
}

int pg_error_wrap(int code, const char *fmt, ...)
{
	char prefix[MSG_MAX], old[MSG_MAX];
	va_list ap;

	if (code >= 0)
		code = PG_ERROR;
	memcpy(old, last_msg, sizeof(old));
	va_start(ap, fmt);
	if (vsnprintf(prefix, sizeof(prefix), fmt, ap) < 0)
		prefix[0] = '\0';
	va_end(ap);
	/* truncation is acceptable for a message; build it piecewise */
	last_msg[0] = '\0';
	append(prefix);
	if (old[0]) {
		append(": ");
		append(old);
	}
	last_code = code;
	return code;
}

const char *pg_error_last(void)
{
	return last_msg[0] ? last_msg : "unknown error";
}

int pg_error_last_code(void)
{
	return last_code;
}

void pg_error_clear(void)
{
	last_msg[0] = '\0';
	last_code = PG_OK;
}

int pg_error_oom(void)
{
	return pg_error_set(PG_ENOMEM, "out of memory");
}

const char *pg_error_name(int code)
{
	switch (code) {
	case PG_OK: return "ok";
	case PG_ENOMEM: return "out of memory";
	case PG_ENOTFOUND: return "not found";
	case PG_EINVALID: return "invalid input";
	case PG_EIO: return "i/o error";
	case PG_ETIMEOUT: return "timed out";
	case PG_ETOOBIG: return "too big";
	case PG_EEXISTS: return "already exists";
	case PG_ECONFLICT: return "conflict";
	case PG_ECANCELLED: return "cancelled";
	case PG_EUNSUPPORTED: return "unsupported";
	default: return "error";
	}
}
