/* pull.h - the pull model the checks share: tag, commits, the upstream side. */
#ifndef PG_PULL_H
#define PG_PULL_H

#include "common/map.h"
#include "policies/policy.h"
#include "repo/object.h"
#include "repo/repo.h"
#include "verifier/identity_index.h"
#include "report/report.h"

typedef struct pg_upstream pg_upstream;
typedef struct pg_pull_request pg_pull_request; /* verifier/mail.h */
struct pg_gpg_keys;                             /* verifier/gpg.h */
struct pg_gpg;

/*
 * Everything a check may look at.  The checks read it and add findings to
 * report; only rewritten-upstream writes (it fills original[]).  Handles
 * are borrowed from pg_verify(), which owns them.
 */
typedef struct pg_pull {
	pg_repo *repo;
	const pg_policy *policy;
	pg_report *report;
	const char *repo_location;
	const char *repo_name; /* the announced URL (spec->name), else repo_location;
				  NULL: repo_location */
	const char *home;      /* $PULLGATE_HOME: private GNUPGHOMEs go in home/tmp */
	bool verify_index;     /* check every entry of the identity indexes (spec->verify_index) */
	uint64_t index_cache_size; /* HOME/identity's budget (spec->index_cache_size) */
	uint64_t index_memory;     /* an index's working memory (spec->index_memory) */

	pg_tagobj *tag;        /* NULL for a lightweight tag */
	pg_oid tag_commit;
	pg_oid upstream_tip;
	const pg_oid *hide;    /* more commits the pull excludes with their history
				  (the guard: what the remote has), or NULL */
	size_t nhide;

	pg_commit **commits;   /* the pull, oldest first in topological order */
	size_t ncommits;
	pg_map index;          /* commit id -> pg_commit * */

	const pg_pull_request *request; /* the pull-request mail, or NULL */

	pg_upstream *upstream; /* the upstream side, indexed by identity */
	const pg_commit **original; /* per commit: the upstream commit it copies */
	bool *labelled;        /* per commit: that copy is a labelled backport (its
				  message names original, and nothing else changed
				  but what a backport changes); NULL: none is */

	/* the tag's and the mergetags' signatures, verified while the pull loads */
	struct pg_gpg_prefetch *gpg_prefetch;
} pg_pull;

/* Find a pull commit by id; NULL when the id is not in the pull. */
pg_commit *pg_pull_find(const pg_pull *p, const pg_oid *id);

/* The policy's severity for a check. */
enum pg_severity pg_pull_severity(const pg_pull *p, enum pg_check_id check);

/*
 * The keys the signature checks verify with, from the policy: its keyring
 * file (where --keyring puts one, which wins), else its pgpkeys directory,
 * else its GNUPGHOME.  false, *keys all NULL, when it names none.
 */
bool pg_pull_gpg_keys(struct pg_gpg_keys *keys, const pg_policy *policy);

/*
 * A verifier over the policy's keys (pg_pull_gpg_keys), its private
 * GNUPGHOME in home/tmp; as pg_gpg_open.  Free with pg_gpg_free.
 */
int pg_pull_gpg_open(struct pg_gpg **out, const pg_pull *p);

/* The sender: the tagger of the pull's tag, or NULL for a lightweight tag. */
const pg_ident *pg_pull_sender(const pg_pull *p);

/*
 * Load the commits reachable from tag_commit and not from upstream_tip
 * nor from hide[0..nhide).
 * PG_ETOOBIG when there are more than the policy's max_pull_commits (none
 * is read then); PG_EINVALID "commit X is malformed: ..." for a pull
 * commit git would not have written (pg_commit.malformed).
 * Meanwhile a thread verifies the signatures the signature checks will ask
 * for (the tag's, then the mergetags'), so that gpg is off the critical
 * path; pg_pull_release waits for it.
 */
int pg_pull_load(pg_pull *p);
void pg_pull_release(pg_pull *p);

/*
 * The upstream side: upstream commits that a pull commit could be a copy
 * of, indexed by identity.  Built from (a) the upstream side of the
 * divergence (reachable from upstream, not from the tag), (b) every
 * upstream commit that shares a pull commit's identity key, found by one
 * probe per pull commit of upstream's identity index in home/identity/
 * (verifier/identity_index.h: made on first use, then extended), (b') the
 * date fallback: every upstream commit that shares a pull commit's author
 * and subject (pg_author_subject_hash), by one probe of the index kept
 * beside it, at most PG_UPSTREAM_REDATED_MAX per pull commit, and (c)
 * commits named by "(cherry picked from commit X)" trailers that upstream
 * contains.  When no index can be had (home cannot be written), (b) is the
 * date window instead: upstream commits committed since a day before the
 * oldest author date in the pull, within the policy's lookback, capped at
 * its max-upstream-commits.  Cost: O(pull + (a) + (b)) commit reads, never
 * the whole upstream history (but once, to make the index).
 */
int pg_upstream_build(pg_upstream **out, pg_pull *p);
void pg_upstream_free(pg_upstream *u);

/*
 * The upstream commits that share c's identity (verifier/match.h) under
 * another id, the one with c's tree first: those c could copy.  *out is
 * malloc()ed (free() it), the commits in it are owned by u.
 */
int pg_upstream_candidates(const pg_commit ***out, size_t *n, pg_upstream *u,
			   const pg_commit *c);

/*
 * The date fallback: the upstream commits that share c's author and subject
 * but not its identity (another author date, another body), the one with
 * c's tree first.  They are copies only if their patch says so.  As
 * pg_upstream_candidates for *out.
 */
#define PG_UPSTREAM_REDATED_MAX 64
int pg_upstream_redated(const pg_commit ***out, size_t *n, pg_upstream *u, const pg_commit *c);

/* Whether id is among the upstream commits examined (all of them upstream's). */
bool pg_upstream_has(const pg_upstream *u, const pg_oid *id);

/*
 * Whether c is upstream's: 1 or 0 when that is known exactly (c is among
 * the commits examined, or the identity index says), -1 when it is not
 * (no index: see pg_upstream_since), PG_ENOMEM.
 */
int pg_upstream_holds(const pg_upstream *u, const pg_commit *c);

/*
 * What was done to the identity index and how many commits it holds
 * (*indexed); NULL when there is none and the date window was walked.
 */
const pg_identity_index_info *pg_upstream_index_info(const pg_upstream *u, size_t *indexed);

/*
 * The date window's line: every upstream commit committed since then was
 * examined, unless the search was truncated (a few may hide behind a
 * parent dated earlier, as clocks are skewed).  0 when the identity index
 * spared the walk.
 */
int64_t pg_upstream_since(const pg_upstream *u);

/* How many upstream commits were examined. */
size_t pg_upstream_examined(const pg_upstream *u);
/* Whether the search stopped at the policy's cap before the date line. */
bool pg_upstream_truncated(const pg_upstream *u);

/*
 * Whether email commits upstream's first-parent line (the top-level
 * maintainer): 1 yes, 0 no, negative when that line cannot be read (with
 * an identity index it is read on the first question, not before).
 */
int pg_upstream_is_maintainer(pg_upstream *u, const char *email);

/*
 * Whether c has a Signed-off-by line (anywhere in its message, as
 * checkpatch reads it) naming who: by e-mail, or by the same name.
 */
bool pg_commit_signed_off_by(const pg_commit *c, const pg_ident *who);

/* A Fixes: trailer's value, read leniently; pointers borrowed from it. */
typedef struct pg_fixes {
	const char *id;       /* 7 to 40 hex digits */
	size_t idlen;
	const char *subject;  /* what it quotes, quotes and parentheses removed */
	size_t sublen;        /* 0: none */
	bool cut;             /* '("' opened and never closed: a line cut short */
} pg_fixes;

/*
 * Read a Fixes: value: 'SHA ("subject")' as documented, and the forms real
 * trailers take: "commit SHA (...)", the subject in parentheses or quotes
 * alone or bare, a trailing '.', no subject at all.  0, or -1 when it
 * starts with no commit id.
 */
int pg_fixes_parse(pg_fixes *out, const char *value);

/*
 * After the checks (story.c): the report's summary (the copies, their
 * merges and dropped mergetags, quoted ids, what the pull should carry)
 * and which findings follow from a rewritten copy (implied_by).
 */
int pg_pull_story(pg_pull *p);

/* The checks, each in its own file. */

/*
 * tag-signature and mergetag-signature (check_signature.c).  The pulled tag
 * must be an annotated tag whose own tag header names the ref, signed by a
 * key in the policy's keyring (or gnupg_home) that is good, unexpired and
 * unrevoked, that one of the policy's signers trusts for this repository,
 * tag name and tagger, and whose user ids include the tagger's e-mail.
 * With no signers in the policy no key is trusted.  Each mergetag in the
 * pull's merges must be signed by a good key from the keyring (the
 * signers list is for the pulled tag only: sub-maintainers are vouched
 * for by the keyring), its tagger among the key's user ids, and it must
 * tag a commit the merge merged.  Every signature checked is listed in
 * the report's signatures.  A keyring that cannot be read is an error
 * (the policy is broken), not a finding.
 */
int pg_check_signature(pg_pull *p);
int pg_check_rewritten_upstream(pg_pull *p);
int pg_check_foreign_committer(pg_pull *p);
int pg_check_range_size(pg_pull *p);
int pg_check_signoff(pg_pull *p);
int pg_check_fixes_tag(pg_pull *p);
int pg_check_back_merge(pg_pull *p);
int pg_check_recent_rebase(pg_pull *p);
int pg_check_date_anomaly(pg_pull *p);

/*
 * transparency (check_transparency.c), with the policy's transparency.log:
 * the push records of the pulled tag on the pull's repository (the one
 * whose new is the tag object is the evidence: its pusher against the
 * signer's account, its signed push certificate), and the upstream
 * branch's records since the pull's base (force-pushes).  Runs after
 * tag-signature, whose signer it compares with.  docs/transparency.md.
 */
int pg_check_transparency(pg_pull *p);

#endif
