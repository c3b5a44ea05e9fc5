/* fuzz_hook.c - libFuzzer target: a hook delivery's headers, body and signature through the handlers' decision. */
#include "tests/fuzz/fuzz.h"
#include "server/auth.h"
#include "server/web.h"

#include <time.h>

/*
 * An input is a flags byte, header lines up to an empty line, then the
 * body:
 *
 *   flags   bit 0: the pull-request hook (else push); bit 1: sign the body
 *           with the right secret, as a real sender would, so that the
 *           decision goes on to the body (else the X-Pullgate-Signature
 *           line, if any, is sent as it is)
 *   Content-Type: ...
 *   X-Pullgate-Delivery: ...
 *   X-Pullgate-Signature: ...
 *
 * The service is the one a maintainer would run: a repository base and
 * map, and a policy with an allow-list.
 */
#define SECRET "fuzz-secret-0123456789abcdef"

static const char config_yaml[] =
	"repositories:\n"
	"  base: https://git.kernel.org/\n"
	"  map:\n"
	"    pub/scm/linux/kernel/git/kees/linux: /srv/git/kees.git\n";
static const char policy_yaml[] =
	"repositories:\n"
	"  - /srv/git/*.git\n"
	"  - https://git.kernel.org/pub/scm/linux/kernel/git/*/*\n";

static pg_config *config;
static pg_policy *policy;

static void setup(void)
{
	if (config)
		return;
	if (pg_config_parse(&config, config_yaml, strlen(config_yaml), "serve.yaml") < 0 ||
	    pg_policy_parse(&policy, policy_yaml, strlen(policy_yaml), "policy.yaml") < 0)
		__builtin_trap();
}

/* The value of "Name: value" when line is that header, else NULL. */
static char *header(const char *line, size_t n, const char *name)
{
	size_t k = strlen(name);

	if (n <= k + 1 || strncasecmp(line, name, k) || line[k] != ':')
		return NULL;
	line += k + 1;
	n -= k + 1;
	while (n && *line == ' ')
		line++, n--;
	return pg_strndup(line, n);
}

/* The jobs of an accepted delivery are what a signed body names, nothing else. */
static void check_decision(const pg_hook_decision *d, const pg_hook_input *in, bool signed_ok)
{
	size_t i;

	if (d->status) {
		FUZZ_ASSERT(d->status == 400 || d->status == 401 || d->status == 413 ||
			    d->status == 415 || d->status == 422);
		FUZZ_ASSERT(!d->njobs);
		return;
	}
	FUZZ_ASSERT(signed_ok);
	FUZZ_ASSERT(!in->mail || d->njobs == 1);
	for (i = 0; i < d->njobs; i++) {
		FUZZ_ASSERT(!strncmp(d->jobs[i].tag, "refs/tags/", 10));
		FUZZ_ASSERT(pg_policy_repository_allowed(policy, d->jobs[i].repo) ||
			    pg_policy_repository_allowed(policy, d->jobs[i].repo_name));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data + (size ? 1 : 0), *end = (const char *)data + size;
	char *type = NULL, *delivery = NULL, *signature = NULL, *stamp = NULL;
	char now[24];
	pg_buf good = PG_BUF_INIT, signed_text = PG_BUF_INIT;
	pg_hook_input in;
	pg_hook_decision d;
	unsigned flags = size ? data[0] : 0;

	setup();
	while (p < end) {
		const char *line = p, *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *v;

		p = nl ? nl + 1 : end;
		if (!n)
			break;
		if ((v = header(line, n, "Content-Type")))
			free(type), type = v;
		else if ((v = header(line, n, "X-Pullgate-Delivery")))
			free(delivery), delivery = v;
		else if ((v = header(line, n, "X-Pullgate-Signature")))
			free(signature), signature = v;
		else if ((v = header(line, n, "X-Pullgate-Timestamp")))
			free(stamp), stamp = v;
	}
	memset(&in, 0, sizeof(in));
	in.mail = flags & 1;
	in.secret = SECRET;
	in.config = config;
	in.policy = policy;
	in.content_type = type;
	in.delivery = delivery;
	in.body = p;
	in.body_len = (size_t)(end - p);
	in.timestamp = stamp;
	in.signature = signature;
	/* flags & 2: signed as a sender signs, "TIMESTAMP.BODY" with the time now */
	snprintf(now, sizeof(now), "%lld", (long long)time(NULL));
	if ((flags & 2) && pg_buf_printf(&signed_text, "%s.", now) == 0 &&
	    pg_buf_put(&signed_text, in.body, in.body_len) == 0 &&
	    pg_buf_puts(&good, "sha256=") == 0 &&
	    pg_auth_hmac_hex(&good, SECRET, signed_text.ptr, signed_text.len) == 0) {
		in.signature = good.ptr;
		in.timestamp = now;
	}
	if (pg_hook_decide(&d, &in) == 0)
		check_decision(&d, &in, pg_auth_hook_verify(SECRET, in.signature, in.timestamp,
							    in.body, in.body_len) == 0);
	pg_hook_decision_release(&d);
	pg_buf_release(&good);
	pg_buf_release(&signed_text);
	free(stamp);
	free(type);
	free(delivery);
	free(signature);
	return 0;
}
