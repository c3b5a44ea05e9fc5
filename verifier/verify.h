/* verify.h - pullgate verify: is this pull what it claims to be? */
#ifndef PG_VERIFY_H
#define PG_VERIFY_H

#include "policies/policy.h"
#include "repo/repo.h"
#include "report/report.h"

typedef struct pg_pull_request pg_pull_request; /* verifier/mail.h */

typedef struct pg_pull_spec {
	const char *repo;            /* path or URL of the sender's repository */
	const char *name;            /* the URL the sender announced, when repo is a mirror
					the maintainer configured for it; NULL: repo */
	const char *tag;             /* "name" or "refs/tags/name" */
	const char *upstream;        /* path or URL; NULL: the policy's */
	const char *upstream_branch; /* NULL: the policy's, else upstream's HEAD */
	const pg_pull_request *request; /* a parsed pull-request mail, or NULL */
	pg_progress_fn progress;     /* fetch progress (common/progress.h), or NULL */
	void *progress_ctx;
	bool verify_index;           /* check every entry of the identity indexes, not a sample */
	uint64_t index_cache_size;   /* bytes HOME/identity may hold; 0: 1 GiB */
	uint64_t index_memory;       /* working memory of making an identity index; 0: 16 MiB */
} pg_pull_spec;

/*
 * Verify a pull under a policy.  home is $PULLGATE_HOME (the object cache
 * lives in home/repos).  On 0, *out is a report (free with
 * pg_report_free) whose verdict may well be "reject": a bad pull is data,
 * not an error.  A negative code means pullgate could not decide: a
 * missing repository or tag, an unreadable object, an I/O failure.
 */
int pg_verify(pg_report **out, const pg_pull_spec *spec, const pg_policy *policy,
	      const char *home);

/*
 * The rewritten-upstream check alone, on commits of a repository already
 * open (the guard: a push about to leave the sender's repository): the
 * commits reachable from tip and not from upstream nor from hide[0..nhide)
 * are matched against upstream's (verifier/match.h) as pg_verify matches
 * them.  On 0, *out is a report (pg_report_free) with the
 * rewritten-upstream findings, the notes and the summary
 * (pg_summary_format): summary.rewritten counts the copies.  Negative:
 * could not decide (an unreadable or malformed commit, more commits than
 * the policy's max-pull-commits).
 */
int pg_verify_copies(pg_report **out, pg_repo *repo, const pg_oid *tip, const pg_oid *upstream,
		     const pg_oid *hide, size_t nhide, const pg_policy *policy);

/*
 * The tag-signature rule alone, again, for an approval: the tag object
 * tag_id in repo (spec->tag, read from spec->repo, announced as spec->name)
 * must still be signed good by a key in the keyring policy names now,
 * neither revoked nor expired, that one of its signers trusts for this
 * repository, tag and tagger (pg_check_signature's rule); and, when signer
 * is given, that key must be signer (the one the gate verified).  home is
 * $PULLGATE_HOME (a private GNUPGHOME goes in home/tmp).  0 when it holds;
 * PG_EINVALID with the one-line reason when it does not; other negative
 * codes when it could not be checked (the object is unreadable, gpg could
 * not run, the keyring cannot be read).
 */
int pg_verify_signer(pg_repo *repo, const pg_oid *tag_id, const pg_pull_spec *spec,
		     const pg_policy *policy, const char *signer, const char *home);

/*
 * Split "REPO[:BRANCH]": the branch is what follows the last ':' when what
 * precedes it is an existing local directory, or when the branch has no '/'
 * and what precedes it is a path or URL (contains a '/'), so that
 * "host:repo" scp-style locations stay whole.  *branch is NULL when absent.
 * Both outputs are the caller's to free().
 */
int pg_split_location(char **repo, char **branch, const char *arg);

#endif
