/* policy.h - what a maintainer accepts: signers, committers, sizes, severities. */
#ifndef PG_POLICY_H
#define PG_POLICY_H

#include "common/buf.h"
#include "common/checks.h"
#include "common/digest.h"
#include "common/yaml_schema.h"

/* A key the maintainer trusts, and for what. */
typedef struct pg_signer {
	char *fingerprint;   /* 40 hex digits, upper case */
	char **identities;   /* e-mail addresses the key may sign as; none = any */
	size_t nidentities;
	char **repositories; /* globs over repository URLs or paths; none = any */
	size_t nrepositories;
	char **tags;         /* globs over tag names; none = any */
	size_t ntags;
	char *account;       /* the kernel.org account that pushes its tags, or NULL */
} pg_signer;

/* The source of the built-in policy, which no file has. */
#define PG_POLICY_BUILT_IN "(built-in)"

/* What bounds a fetch of a URL, as a timeout's error names it (pg_fetch_limits.source). */
#define PG_POLICY_FETCH_LIMIT "the policy's fetch-timeout-seconds"

typedef struct pg_policy {
	char *source;                 /* file it came from, or PG_POLICY_BUILT_IN */
	/* SHA-256 of the file's bytes as read; the built-in policy's is that of no
	 * bytes, which no policy file has (an empty one is refused) */
	char sha256[PG_SHA256_HEXSZ + 1];
	enum pg_severity severity[PG_CHECK__COUNT];

	char *upstream_url;           /* may be NULL: given on the command line */
	char *upstream_branch;

	char *keyring;                /* armored public keyring file, or NULL */
	char *pgpkeys;                /* a pgpkeys.git-style directory (keys/<FPR>.asc), or NULL */
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
	size_t max_pull_commits;      /* past it verify cannot decide (0: no limit) */
	size_t max_findings_per_check;/* findings kept of one check; the rest counted (0: all) */
	unsigned lookback_days;       /* how far back copies of upstream are sought */
	size_t max_upstream_commits;  /* hard cap on that search */
	unsigned fetch_timeout_seconds; /* each fetch of a URL ends within this (PG_POLICY_FETCH_LIMIT names it) */
	unsigned verify_timeout_seconds; /* a whole verify (fetches, index, checks) ends within this */

	unsigned recent_rebase_hours; /* recent-rebase: the window before the tag */
	unsigned recent_rebase_min_age_days; /* ...and how long before each was written */
	unsigned future_slack_minutes;/* date-anomaly: tolerated clock skew */
	/* signoff: whose Signed-off-by each non-merge commit needs */
	bool signoff_author;
	bool signoff_committer;

	bool auto_approve;            /* approve without waiting for the maintainer */

	char *merge_name;             /* merge-identity: author and committer of the gate's */
	char *merge_email;            /* merges; NULL: the service's, else pullgate's */

	char *attest_key;             /* attestation: the service's signing key (fingerprint) */
	char *attest_gnupg_home;      /* the GNUPGHOME holding it; NULL: $PULLGATE_HOME/gnupg */

	unsigned build_timeout_minutes; /* merge bot: the kernel build stage */
	unsigned boot_timeout_seconds;  /* merge bot: boot and KUnit in QEMU */
	char **distcc_hosts;          /* merge bot: distcc hosts (HOST[:PORT][/LIMIT]) the */
	size_t ndistcc_hosts;         /* build compiles on; none: local only */
	char *icecc;                  /* merge bot: the iceccd the build compiles through, */
				      /* "local" or its socket's path; NULL: none */
	bool boot_on_lava;            /* merge bot: boot on a LAVA lab (lava.sh), not local QEMU */
	char *lava_url;               /* the LAVA server; NULL: the job is exported, not run */
	char *lava_token_file;        /* a file holding its API token */
	char *lava_artifacts_url;     /* where $PULLGATE_HOME is published for the lab */
	char *lava_device_type;       /* NULL: qemu */
	char *lava_device;            /* a device configuration: lava-run runs the job here */
	unsigned kunit_select_max;      /* KUnit test options one pull may add (0: none) */

	char *tlog;                   /* a clone of kernel.org's transparency log, or NULL */
	enum pg_severity tlog_missing;/* a pull with no push record in it: warning or error */
} pg_policy;

/* NULL when s is a key fingerprint (40 hex digits); else what was wanted. */
const char *pg_policy_why_fingerprint(const char *s);

/* The longest path of an iceccd's socket: a sockaddr_un's sun_path, its NUL aside. */
#define PG_POLICY_ICECC_MAX 107

/*
 * NULL when s names an icecream daemon (pipeline.icecc, gate --icecc): the
 * word "local", or the absolute path of its unix socket, at most
 * PG_POLICY_ICECC_MAX bytes of printable ASCII (0x21 to 0x7E: no space, no
 * control character, no byte of UTF-8), without a "." or ".." component or
 * a trailing '/' ("/" itself included); else what was wanted.
 */
const char *pg_policy_why_icecc(const char *s);

/* A policy file larger than this is refused (PG_ETOOBIG). */
#define PG_POLICY_MAX_SIZE ((size_t)1 << 20)
/* pg_policy_check stops collecting after this many problems. */
#define PG_POLICY_MAX_PROBLEMS 100

/*
 * One thing wrong with a policy file: line (0 when it concerns the whole
 * file, its size), column, and a message saying what was expected.
 */
typedef pg_yaml_problem pg_policy_problem;

/*
 * The built-in defaults (what `make demo` and an absent --policy use);
 * policies/default.yaml spells out the same values.
 */
int pg_policy_new_default(pg_policy **out);
void pg_policy_free(pg_policy *p);

/*
 * Read a policy file (schema: policies/README.md).  Keys it leaves out
 * keep their built-in defaults; relative keyring paths are made absolute
 * against the file's directory (a pgpkeys one must be a directory when
 * read).  On success *out is the caller's to free with pg_policy_free.  Errors: PG_ENOTFOUND, PG_EIO (cannot read),
 * PG_ETOOBIG (over PG_POLICY_MAX_SIZE), PG_EINVALID (the first problem,
 * as "PATH:LINE:COLUMN: what was expected").
 */
int pg_policy_load(pg_policy **out, const char *path);

/*
 * As pg_policy_load, from text[0..len) (need not be NUL-terminated); name
 * is used in messages and as p->source, and relative paths resolve
 * against its directory (left relative when name has no '/').
 */
int pg_policy_parse(pg_policy **out, const char *text, size_t len, const char *name);

/*
 * Examine a policy file and collect every problem, in document order
 * (syntax errors end the examination, since nothing after them can be
 * read).  Returns 0 when the file was read: *n == 0 means it is valid,
 * else *out holds *n problems (free with pg_policy_problems_free); a file
 * over the size cap is one problem with line 0.  A negative code means
 * the file could not be read at all (PG_ENOTFOUND, PG_EIO, PG_ENOMEM).
 */
int pg_policy_check(pg_policy_problem **out, size_t *n, const char *path);
void pg_policy_problems_free(pg_policy_problem *list, size_t n);

/* Append "NAME:LINE:COLUMN: message" (or "NAME: message" for line 0). */
int pg_policy_problem_format(pg_buf *out, const char *name, const pg_policy_problem *pr);

/* Append to a string list (the string is copied). */
int pg_policy_list_add(char ***list, size_t *n, const char *s);

/*
 * Append a signer for the key fingerprint (40 hex digits, any case; kept
 * upper case) with empty lists, which admit any identity, repository and
 * tag.  *out, when out is not NULL, is the new entry, borrowed until the
 * next signer is added.  PG_EINVALID when fingerprint is not one,
 * PG_ENOMEM.
 */
int pg_policy_add_signer(pg_signer **out, pg_policy *p, const char *fingerprint);

/* E-mail addresses compare without regard to case. */
bool pg_policy_is_protected(const pg_policy *p, const char *email);
bool pg_policy_is_allowed(const pg_policy *p, const char *email);

/*
 * Globs are fnmatch(3) patterns with FNM_PATHNAME: '*', '?' and '[...]'
 * never match a '/', and a backslash quotes the next character.
 */
bool pg_policy_glob_match(const char *glob, const char *s);

/* Does the allow-list admit this repository URL or path?  An empty list admits any. */
bool pg_policy_repository_allowed(const pg_policy *p, const char *location);

/* The signer with this fingerprint (40 hex digits, any case), or NULL. Borrowed. */
const pg_signer *pg_policy_find_signer(const pg_policy *p, const char *fingerprint);

/*
 * May this signer's key sign tag in repository, with this tagger e-mail
 * (NULL: the tag has no tagger)?  Each empty list admits any value.
 */
bool pg_policy_signer_allows(const pg_signer *s, const char *repository, const char *tag,
			     const char *tagger_email);

#endif
