/* notify.h - the approval notice mailed by SMTP: a queue, one sender thread, retries, the outcome on the pull. */
#ifndef PG_SERVER_NOTIFY_H
#define PG_SERVER_NOTIFY_H

#include "server/config.h"
#include "server/store.h"
#include "server/worker.h"

#include <time.h>

typedef struct pg_notify pg_notify;

/*
 * Start the sender thread with the configuration's notice settings (copied),
 * and the tree and branch approvals move (c's, else the policy's, as the
 * gate resolves them; the tree by default home/linux): a notice is mailed
 * only while that branch holds the pull's merge.  Nothing is ever mailed
 * while no relay is configured.
 */
int pg_notify_start(pg_notify **out, pg_store *store, const pg_config *c,
		    const pg_policy *policy, const char *home, pg_log_fn log, void *log_ctx);

/* Use c's notice settings, tree and branch (c's, else policy's) for the notices sent from now on (copied). */
int pg_notify_reload(pg_notify *n, const pg_config *c, const pg_policy *policy);

/*
 * A pull was approved (a pg_worker_opts.approved callback; ctx is the
 * pg_notify): queue its notice, whose text is in the file notice, and
 * return at once.  The approval put the notice in the store's outbox
 * (pg_store_update.notice); its outcome takes it out (pg_store_notice_done),
 * and pg_notify_start mails what a stop left there.  The thread mails it as a reply to the pull's request
 * mail (From the configured maintainer, To the mail's sender, Cc its To
 * and Cc), tries again with a doubling wait when the relay fails or
 * refuses, and records the outcome among the pull's decisions (action
 * "notice").  A pull without a request mail gets no mail.
 */
void pg_notify_approved(void *ctx, int64_t id, const char *notice);

/*
 * What a reply says of the merge, in pr-tracker-bot's headers, which
 * tools read: X-PR-Tracked-List-Id (the request's List-Id, when it has
 * one), X-PR-Tracked-Message-Id, X-PR-Tracked-Remote (the request's URL
 * and ref), X-PR-Tracked-Commit-Id (the head it names), X-PR-Merge-Tree,
 * X-PR-Merge-Refname and X-PR-Merge-Commit-Id; and in its body, as
 * pr-tracker-bot writes it: the request's Date (pg_mail_date; without
 * one, the tag's date, said to be that), its URL and ref, tree_name and
 * the merge's link.
 */
typedef struct pg_notice_merge {
	const char *tree_name;   /* "torvalds/linux.git"; NULL: tree's directory name */
	const char *tree;        /* the tree's path */
	const char *refname;     /* "refs/heads/master" */
	pg_oid commit;           /* the merge the branch holds */
	const char *commit_url;  /* the link is this and commit's hex id; NULL: the id alone */
	int64_t tag_time;        /* the tag's date, for a request without a usable Date; 0: none */
	int tag_offset;          /* its zone, minutes east of UTC */
} pg_notice_merge;

/*
 * Compose the reply to the request mail (raw, as stored), pr-tracker-bot's
 * reply for merge: the message in msg, the envelope recipients (bare
 * addresses, the sender first) in rcpts as NUL-separated strings,
 * *nrcpts of them.  from is the notice's From; now its Date.  Its
 * Message-ID is made of id, the request mail and text (the notice the
 * gate wrote) alone: the same notice composed again (mailed again after a
 * restart) is the same message to its readers.  simulated: the pull was
 * tested by stand-in scripts, which the subject and the body's first
 * paragraph say (SIMULATED).  Nothing of the mail reaches a header or the
 * body with a control character.  PG_EINVALID when the request mail has
 * no sender address, or is not a git request-pull mail: a mail that is
 * none gets no reply.
 */
int pg_notify_compose(pg_buf *msg, pg_buf *rcpts, size_t *nrcpts, const char *from,
		      const char *mail, size_t mail_len, const char *text, int64_t id,
		      time_t now, bool simulated, const pg_notice_merge *merge);

/* Stop the thread; notices not yet mailed stay in the outbox for the next start. NULL-safe. */
void pg_notify_stop(pg_notify *n);

#endif
