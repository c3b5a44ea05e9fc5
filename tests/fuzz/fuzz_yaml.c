/* fuzz_yaml.c - libFuzzer target: the YAML inputs (policy, serve configuration, push record) through their parsers. */
#include "tests/fuzz/fuzz.h"
#include "policies/policy.h"
#include "server/config.h"
#include "server/hooks.h"

/*
 * The input's first line picks the document: "#config" a serve
 * configuration, "#push" a push record, anything else a policy.  The line
 * is a YAML comment, so a seed stays a valid document of its kind.
 */
static bool starts(const uint8_t *data, size_t size, const char *word)
{
	size_t n = strlen(word);

	return size >= n && !memcmp(data, word, n);
}

static void use_policy(const pg_policy *p)
{
	size_t i;

	pg_policy_repository_allowed(p, "https://git.kernel.org/pub/scm/linux/kernel/git/x/y.git");
	pg_policy_is_protected(p, "torvalds@linux-foundation.org");
	pg_policy_is_allowed(p, "a@example.org");
	for (i = 0; i < p->nsigners; i++)
		pg_policy_signer_allows(&p->signers[i], "/srv/git/x.git", "v6.16-rc1", "a@example.org");
	if (p->nsigners)
		FUZZ_ASSERT(pg_policy_find_signer(p, p->signers[0].fingerprint) != NULL);
}

static void use_config(const pg_config *c)
{
	pg_buf b = PG_BUF_INIT;

	pg_config_repo_location(&b, c, "pub/scm/linux/kernel/git/x/y");
	pg_buf_release(&b);
}

static void use_push(const pg_push_record *r)
{
	size_t i;

	FUZZ_ASSERT(r->nchanges >= 1 && r->nchanges <= PG_PUSH_MAX_CHANGES);
	FUZZ_ASSERT(r->repo && strlen(r->repo) <= PG_PUSH_MAX_NAME);
	for (i = 0; i < r->nchanges; i++)
		FUZZ_ASSERT(!strncmp(r->changes[i].ref, "refs/", 5));
	pg_push_tag_count(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;

	if (starts(data, size, "#config")) {
		pg_config *c = NULL;

		/* a name with a directory: relative paths in it resolve under "fuzz/" */
		if (pg_config_parse(&c, s, size, "fuzz/serve.yaml") == 0)
			use_config(c);
		pg_config_free(c);
	} else if (starts(data, size, "#push")) {
		pg_push_record *r = NULL;

		if (pg_push_parse(&r, s, size) == 0)
			use_push(r);
		pg_push_record_free(r);
	} else {
		pg_policy *p = NULL;

		if (pg_policy_parse(&p, s, size, "fuzz/policy.yaml") == 0)
			use_policy(p);
		pg_policy_free(p);
	}
	return 0;
}
