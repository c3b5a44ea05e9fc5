/* intake.h - kernel.org's transparency log followed by serve: each new push of a watched tag a job. */
#ifndef PG_SERVER_INTAKE_H
#define PG_SERVER_INTAKE_H

#include "server/server.h"
#include "verifier/tlog.h"

typedef struct pg_intake pg_intake;

/*
 * Start following the log of s's intake.transparency.log (nothing, *out
 * NULL, when none is configured) on a thread of its own: every
 * fetch-seconds, each epoch with a remote is fetched (a failure is logged
 * and tried again next time), then the records added since the cursor are
 * read; a record of a watched repository (intake.transparency.repos)
 * pushing a tag that matches intake.transparency.tags to a non-zero id
 * becomes the job a push record hook would make, recorded as a delivery
 * whose id is "tlog:" and the record's Message-Id, so that no record makes
 * two.  The cursor is kept in the store (pg_store_meta_set) after the
 * records it passes are recorded: a restart resumes there.  With no cursor
 * yet, the log is followed from where it ends once a fetch of every epoch
 * with a remote succeeded (nothing is read before).  Errors: what starting
 * a thread gives; nothing of the log itself (the thread logs it).
 */
int pg_intake_start(pg_intake **out, pg_server *s);

/* Stop the thread (a fetch under way is cancelled) and free. NULL-safe. */
void pg_intake_stop(pg_intake *in);

/*
 * The delivery id of a record's Message-Id (appended to out): "tlog:" and
 * the msg-id without its angle brackets, when that is 1 to 120 characters
 * of [A-Za-z0-9._:@+=~!#$%&'*?^`{|}/-] (an RFC 5322 msg-id's); else
 * PG_EINVALID, and the record makes no job.
 */
int pg_intake_delivery_id(pg_buf *out, const char *message_id);

/*
 * Whether change ref of a record of repo is one the intake makes a job
 * of, under conf: repo watched, ref a valid refs/tags/NAME whose NAME
 * matches one of the globs (or there are none).
 */
bool pg_intake_wants(const pg_intake_conf *conf, const char *repo, const char *ref);

#endif
