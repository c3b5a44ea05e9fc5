/* policy.h - what a maintainer accepts: signers, committers, sizes, severities. */
#ifndef PG_POLICY_H
#define PG_POLICY_H

#include "verifier/checks.h"

/* A key the maintainer trusts, and for what. */
typedef struct pg_signer {
	char *fingerprint;   /* 40 hex digits, upper case */
	char **identities;   /* e-mail addresses the key may sign as */
	size_t nidentities;
	char **repositories; /* globs over repository URLs or paths; none = any */
	size_t nrepositories;
	char **tags;         /* globs over tag names; none = any */
	size_t ntags;
} pg_signer;

typedef struct pg_policy {
	char *source;                 /* file it came from, or "(built-in)" */
	enum pg_severity severity[PG_CHECK__COUNT];

	char *upstream_url;           /* may be NULL: given on the command line */
	char *upstream_branch;

	char *keyring;                /* armored public keyring file, or NULL */
	char *gnupg_home;             /* a GNUPGHOME to use instead, or NULL */
	pg_signer *signers;
	size_t nsigners;

	char **repositories;          /* URL/path globs pulls may come from; none = any */
	size_t nrepositories;

	char **protected_committers;  /* e-mail addresses */
	size_t nprotected;
	char **allowed_committers;
	size_t nallowed;
	/* the committers of upstream's first-parent line count as protected */
	bool protect_upstream_maintainer;

	size_t max_commits;           /* 0: no limit beyond the description */
	unsigned lookback_days;       /* how far back copies of upstream are sought */
	size_t max_upstream_commits;  /* hard cap on that search */

	unsigned recent_rebase_hours; /* recent-rebase: the window before the tag */
	unsigned future_slack_minutes;/* date-anomaly: tolerated clock skew */

	bool auto_approve;            /* approve without waiting for the maintainer */
} pg_policy;

/* The built-in defaults (what `make demo` and an absent --policy use). */
int pg_policy_new_default(pg_policy **out);
void pg_policy_free(pg_policy *p);

/* Append to a string list (the string is copied). */
int pg_policy_list_add(char ***list, size_t *n, const char *s);

bool pg_policy_is_protected(const pg_policy *p, const char *email);
bool pg_policy_is_allowed(const pg_policy *p, const char *email);

#endif
