/* policy.c - policy defaults, lists and lookups. */
#include "policies/policy.h"
#include "common/array.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/str.h"

#include <ctype.h>
#include <fnmatch.h>

int pg_policy_new_default(pg_policy **out)
{
	pg_policy *p = calloc(1, sizeof(*p));
	unsigned i;

	*out = NULL;
	if (!p)
		return pg_error_oom();
	for (i = 0; i < PG_CHECK__COUNT; i++)
		p->severity[i] = pg_check_default_severity((enum pg_check_id)i);
	p->protect_upstream_maintainer = true;
	p->max_pull_commits = 50000;
	p->max_findings_per_check = 200;
	p->lookback_days = 365;
	p->max_upstream_commits = 200000;
	p->fetch_timeout_seconds = 900;
	p->verify_timeout_seconds = 3600;
	p->recent_rebase_hours = 24;
	p->recent_rebase_min_age_days = 28;
	p->signoff_author = true;
	p->signoff_committer = true;
	p->future_slack_minutes = 60;
	p->build_timeout_minutes = 120;
	p->boot_timeout_seconds = 300;
	p->kunit_select_max = 8;
	p->tlog_missing = PG_SEV_WARNING;
	if (pg_sha256_hex(p->sha256, "", 0) < 0) {
		free(p);
		return PG_ERROR;
	}
	if (!(p->source = pg_strdup(PG_POLICY_BUILT_IN))) {
		free(p);
		return PG_ENOMEM;
	}
	*out = p;
	return 0;
}

void pg_policy_free(pg_policy *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nsigners; i++) {
		free(p->signers[i].fingerprint);
		pg_str_list_free(p->signers[i].identities, p->signers[i].nidentities);
		pg_str_list_free(p->signers[i].repositories, p->signers[i].nrepositories);
		pg_str_list_free(p->signers[i].tags, p->signers[i].ntags);
		free(p->signers[i].account);
	}
	free(p->signers);
	pg_str_list_free(p->repositories, p->nrepositories);
	pg_str_list_free(p->protected_committers, p->nprotected);
	pg_str_list_free(p->allowed_committers, p->nallowed);
	pg_str_list_free(p->distcc_hosts, p->ndistcc_hosts);
	free(p->source);
	free(p->upstream_url);
	free(p->upstream_branch);
	free(p->keyring);
	free(p->pgpkeys);
	free(p->gnupg_home);
	free(p->merge_name);
	free(p->merge_email);
	free(p->attest_key);
	free(p->attest_gnupg_home);
	free(p->icecc);
	free(p->lava_url);
	free(p->lava_token_file);
	free(p->lava_artifacts_url);
	free(p->lava_device_type);
	free(p->lava_device);
	free(p->tlog);
	free(p);
}

int pg_policy_list_add(char ***list, size_t *n, const char *s)
{
	/* the lists keep no allocation count beside them: their count stands for it */
	size_t alloc = *n;
	int err;

	if ((err = PG_ARRAY_GROW(*list, *n + 1, alloc)) < 0)
		return err;
	if (!((*list)[*n] = pg_strdup(s)))
		return PG_ENOMEM;
	(*n)++;
	return 0;
}

int pg_policy_add_signer(pg_signer **out, pg_policy *p, const char *fingerprint)
{
	/* as the lists: the count stands for the allocation */
	size_t alloc = p->nsigners, i;
	pg_signer *s;
	int err;

	if (out)
		*out = NULL;
	if (pg_policy_why_fingerprint(fingerprint))
		return pg_error_set(PG_EINVALID, "'%s' is not a key fingerprint (40 hex digits)",
				    fingerprint);
	if ((err = PG_ARRAY_GROW(p->signers, p->nsigners + 1, alloc)) < 0)
		return err;
	s = &p->signers[p->nsigners];
	memset(s, 0, sizeof(*s));
	if (!(s->fingerprint = pg_strdup(fingerprint)))
		return PG_ENOMEM;
	for (i = 0; s->fingerprint[i]; i++)
		s->fingerprint[i] = (char)toupper((unsigned char)s->fingerprint[i]);
	p->nsigners++;
	if (out)
		*out = s;
	return 0;
}

static bool in_list(char **list, size_t n, const char *email)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcasecmp(list[i], email))
			return true;
	return false;
}

bool pg_policy_is_protected(const pg_policy *p, const char *email)
{
	return in_list(p->protected_committers, p->nprotected, email);
}

bool pg_policy_is_allowed(const pg_policy *p, const char *email)
{
	return in_list(p->allowed_committers, p->nallowed, email);
}

bool pg_policy_glob_match(const char *glob, const char *s)
{
	return fnmatch(glob, s, FNM_PATHNAME) == 0;
}

static bool any_glob(char **globs, size_t n, const char *s)
{
	size_t i;

	if (!n)
		return true;
	for (i = 0; i < n; i++)
		if (pg_policy_glob_match(globs[i], s))
			return true;
	return false;
}

bool pg_policy_repository_allowed(const pg_policy *p, const char *location)
{
	return any_glob(p->repositories, p->nrepositories, location);
}

const pg_signer *pg_policy_find_signer(const pg_policy *p, const char *fingerprint)
{
	size_t i;

	for (i = 0; i < p->nsigners; i++)
		if (!strcasecmp(p->signers[i].fingerprint, fingerprint))
			return &p->signers[i];
	return NULL;
}

bool pg_policy_signer_allows(const pg_signer *s, const char *repository, const char *tag,
			     const char *tagger_email)
{
	return any_glob(s->repositories, s->nrepositories, repository) &&
	       any_glob(s->tags, s->ntags, tag) &&
	       (!s->nidentities ||
		(tagger_email && in_list(s->identities, s->nidentities, tagger_email)));
}
