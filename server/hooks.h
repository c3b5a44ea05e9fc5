/* hooks.h - what the webhooks accept: push records (YAML or JSON) and pull-request mails. */
#ifndef PG_SERVER_HOOKS_H
#define PG_SERVER_HOOKS_H

#include "common/buf.h"
#include "repo/object.h"

/*
 * A push record in the shape of kernel.org's gitolite transparency log:
 *
 *   { "repo": "pub/scm/linux/kernel/git/kees/linux", "user": "kees",
 *     "changes": [ { "ref": "refs/tags/NAME", "old": "000…", "new": "<id>" } ] }
 *
 * JSON is read as YAML's flow style by the same capped YAML reader and
 * typed walker as policies, so both forms get the same places in messages
 * and the same strictness: an unknown key, a repeated key (the first value
 * does not win), a wrong type or a missing key is refused.  Every field is
 * attacker-controlled until the signature and the policy say otherwise;
 * the parser only checks shape and caps.
 */
#define PG_PUSH_MAX_CHANGES 64
#define PG_PUSH_MAX_NAME 256

typedef struct pg_push_change {
	char *ref;       /* refs/tags/... or refs/heads/... (git's ref-name rules) */
	pg_oid old_id;
	pg_oid new_id;   /* all zeros: the ref was deleted */
	bool is_tag;
} pg_push_change;

typedef struct pg_push_record {
	char *repo;      /* a plain path: no "..", no scheme, no leading '/' */
	char *user;      /* may be NULL */
	pg_push_change *changes;
	size_t nchanges;
} pg_push_record;

/*
 * Parse a push record.  Errors: PG_EINVALID with a one-line message saying
 * where and what was expected ("line L, column C: ..."; a body has no file
 * name), PG_ETOOBIG past PG_PUSH_MAX_CHANGES.  *out is the caller's
 * (pg_push_record_free).
 */
int pg_push_parse(pg_push_record **out, const char *text, size_t len);
void pg_push_record_free(pg_push_record *r);

/*
 * The signed tags a push creates or moves, in order: the short tag names
 * of the changes that are tags with a non-zero new id.
 */
size_t pg_push_tag_count(const pg_push_record *r);

/*
 * Why s is no plain repository path as a push record's repo must be (NULL
 * when it is one): no "..", no "//", no leading '/', only letters, digits
 * and "/._-+~".
 */
const char *pg_push_why_repo(const char *s);

/*
 * Whether ref is a full ref name as a push record's must be: git
 * check-ref-format's rules, more strictly ([A-Za-z0-9._/+-] only).
 */
bool pg_push_ref_valid(const char *ref);

/*
 * A delivery id as the X-Pullgate-Delivery header gives it: 1 to 128
 * characters from [A-Za-z0-9._:-].
 */
bool pg_hook_delivery_valid(const char *id);

/*
 * The tag a request-pull mail names: "tags/X", "refs/tags/X" or "X"
 * become "refs/tags/X" (appended to out).  PG_EINVALID when the mail names
 * no ref or a ref that is not a valid tag name.
 */
int pg_hook_mail_tag(pg_buf *out, const char *ref);

#endif
