/* store.h - the job store: pulls, stages, findings, deliveries and decisions in SQLite (WAL). */
#ifndef PG_SERVER_STORE_H
#define PG_SERVER_STORE_H

#include "common/buf.h"
#include "report/report.h"
#include "server/job_types.h"

/*
 * One module owns sqlite3.  The database is in WAL mode with a busy
 * timeout; every change is one transaction, synced to disk before the call
 * returns (synchronous=FULL), so a SIGKILL or a power cut leaves either
 * the old or the new state, never half of one, and what a call said was
 * stored is.  The schema is versioned in the meta table; an older one is
 * upgraded when opened.  Calls on one pg_store are serialized by a mutex:
 * any thread may use it.  Threads that should not wait for each other
 * (the HTTP threads and the worker) each open their own pg_store on the
 * same file: WAL lets them read at once, and writes take turns.  A pull's
 * state, kind and verdict are stored as their names (server/job_types.h)
 * and its object ids as hex, and a pg_job holds them typed: the store
 * converts them both ways, and a stored value that does not convert (a
 * damaged row) is an error of the read (PG_EINVALID naming the pull and
 * the column), never a default.  What the states mean and which moves
 * between them are allowed is server/job.h's.
 */
#define PG_STORE_SCHEMA_VERSION 9

typedef struct pg_store pg_store;

/* Open (creating if needed) the database at path. Errors: PG_EIO, PG_EINVALID (newer schema). */
int pg_store_open(pg_store **out, const char *path);
void pg_store_free(pg_store *s);

/*
 * Sync only the commits that record a decision (pg_store_update.action),
 * not every one: for a connection whose other changes a power cut may undo
 * and the next start redoes, as the worker's are (a pull whose new state
 * is lost is found running, queued again and run again).  A crash of the
 * process loses nothing either way (WAL).  The worker's commits then no
 * longer hold the write lock for a sync, and hooks do not wait behind them.
 */
void pg_store_sync_decisions_only(pg_store *s);

/*
 * s's write transactions give way to the process's other connections'
 * (the hooks'): each waits until the others have not written for a moment,
 * max_ms at most, and then goes before them.  For the worker's connection:
 * a hook's sender waits for its answer, a job does not.  0: no more.
 */
void pg_store_give_way(pg_store *s, unsigned max_ms);

/*
 * The process's writers waiting for their turn now: those that give way
 * (*yielding) and the others (*waiting).  What a test waits for before it
 * lets a turn go, instead of guessing how long a thread takes to ask.
 */
void pg_store_writers_waiting(unsigned *yielding, unsigned *waiting);

/*
 * What a stored report may hold (pg_store_set_state): per check and
 * severity, the first per_check findings are kept (in the JSON and the
 * findings table) and the rest counted, and the JSON is at most max_bytes
 * (fewer findings and then none of their details are kept until it fits).
 * Defaults: 100 and 1 MiB.
 */
void pg_store_set_limits(pg_store *s, size_t per_check, size_t max_bytes);

/* A job to create, as a hook saw it.  What it points to is copied. */
typedef struct pg_job_spec {
	enum pg_job_kind kind;
	const char *repo;        /* the location pullgate fetches */
	const char *repo_name;   /* as the record or mail named it */
	const char *tag;         /* refs/tags/... */
	const pg_oid *expect;    /* the push record's new id, or NULL */
	const char *sender;      /* the pushing user or the mail's From, or NULL */
	const char *mail;        /* the raw mail, or NULL */
	size_t mail_len;
	/*
	 * What makes two jobs the same pull (the hook's choice: repository,
	 * tag and object id): while a job with this key is open, a delivery
	 * names that job instead of making another.  NULL: never the same.
	 */
	const char *dedupe;
} pg_job_spec;

typedef struct pg_job_stage {
	char *name;
	char *status;
	double seconds;
	char *log;
	char *summary;
} pg_job_stage;

typedef struct pg_job_decision {
	char *user;
	char *action;   /* "approve", "reject", "cancel" */
	int64_t at;
	char *note;
} pg_job_decision;

/*
 * A job as its row holds it.  An object id that may be absent comes with
 * a flag saying whether it is there, as a finding's do (pg_finding), not
 * as a zero id meaning none: a zero id is a value the row could hold, and
 * it reads back as it was stored.
 */
typedef struct pg_job {
	int64_t id;
	char *delivery;
	enum pg_job_kind kind;
	char *repo;
	char *repo_name;
	char *tag;
	bool has_expect;     /* a push record named the tag object: expect */
	pg_oid expect;
	char *sender;
	char *mail;
	size_t mail_len;
	enum pg_job_state state;
	bool has_verdict;    /* false before a report */
	enum pg_verdict verdict;
	int errors, warnings, commits, merges;
	char *message;       /* one line: an error, or what happened last */
	char *report;        /* the JSON report as pg_report_format_json wrote it, or NULL */
	bool has_tag_object; /* with a report: tag_object, the tag object verified */
	pg_oid tag_object;
	int64_t tag_time;
	int tag_offset;
	bool has_merge;      /* a run recorded its merge: made on merge_base, merge_commit */
	pg_oid merge_base, merge_commit;
	char *tag_signer;    /* with a report: the trusted signer that verified the tag, or NULL */
	char *run_dir;       /* with a report: its run's log directory, or NULL */
	int attempts;
	int64_t created, updated;
	bool simulated;      /* its report says stand-in scripts built or booted it */
	int64_t queue_rank;  /* its place in the queue: lower goes first; 0 before verify took it */
	bool held;           /* the maintainer holds it: the queue's stack goes on without it */
	char *attribution;   /* why its kernel stages failed, one sentence, or NULL */
	int64_t with_pull;   /* the pull it fails together with; 0: none (alone, or passed) */
	char *conflict;      /* the textual conflicts found when it entered the queue, or NULL */
	int64_t conflict_with; /* the pull ahead it conflicts with, and waits behind; 0: none */
	pg_job_stage *stages;       /* filled by pg_store_get only */
	size_t nstages;
	pg_job_decision *decisions; /* filled by pg_store_get only */
	size_t ndecisions;
} pg_job;

void pg_job_free(pg_job *j);

/* A hook's delivery, as pg_store_add_delivery records it.  Strings are copied. */
typedef struct pg_delivery {
	const char *id;          /* the delivery id: the same for a retry */
	const char *hook;        /* "push" or "pull-request" */
	const char *digest;      /* of the body: a retry carries the same body */
	const char *signature;   /* of what was signed (timestamp and body); NULL: none */
	enum pg_job_state state; /* the new jobs' state */
	const pg_job_spec *jobs;
	size_t njobs;
	const enum pg_job_state *open; /* the states in which a job is open, for dedupe */
	size_t nopen;
} pg_delivery;

/*
 * Record a delivery and create its jobs, in one transaction, durable when
 * this returns.  ids receives the jobs' ids (appended as int64_t values;
 * may be none); *created how many of them are new: a job whose dedupe key
 * an open job has is not made again, that job's id is given instead.
 * When the delivery id is known already and digest matches, nothing is
 * recorded, the ids of its jobs are given and PG_EEXISTS is returned; with
 * another digest, PG_ECONFLICT.  When another delivery carried the same
 * signature (a replay under a new id), nothing is recorded, the ids of
 * that one's jobs are given and PG_EEXISTS is returned, the message saying
 * so.  Concurrent calls are committed together, one sync for them all
 * (group commit); each gets its own answer.
 */
int pg_store_add_delivery(pg_buf *ids, size_t *created, pg_store *s, const pg_delivery *d);

/* A job with its stages and decisions; PG_ENOTFOUND for an unknown id, PG_EINVALID for damage. */
int pg_store_get(pg_job **out, pg_store *s, int64_t id);

/* The oldest job in state (without stages and decisions), or *out NULL when there is none. */
int pg_store_oldest(pg_job **out, pg_store *s, enum pg_job_state state);

/* What goes with a change of state; every field may be left empty. */
typedef struct pg_store_update {
	const char *message;       /* the job's one-line last word; NULL clears it */
	const pg_report *report;   /* stored with it: the JSON, the verdict and counts, the
				      tag and merge ids, the signer and the run's log
				      directory, the stages and the findings (replacing
				      those of an earlier run) */
	const char *user;          /* with action: a decision recorded with it, whose */
	const char *action;        /* note is the message ("approve", "reject", "cancel") */
	bool new_run;              /* a run starts: attempts + 1 */
	const char *notice;        /* the path of an approval notice to mail: kept in the
				      outbox until pg_store_notice_done */
	const char *attribution;   /* with report: why the kernel stages failed (NULL: none) */
	int64_t with_pull;         /* with report: the pull it fails together with (0: none) */
	bool kcidb;                /* with report: the run is decided; its KCIDB document goes
				      to the submission outbox (pg_store_submissions_due),
				      replacing what an earlier run of the pull left there */
} pg_store_update;

#define PG_STORE_UPDATE_INIT { .message = NULL }

/*
 * Change a job's state from from to to, with what u carries, in one
 * transaction, and only while the job is in from: a compare-and-swap on
 * the stored state.  PG_ECONFLICT when it is not (nothing changes),
 * PG_ENOTFOUND for an unknown id.  The store does not know which moves
 * make sense: pg_job_move (server/job.h) does, and is the one caller.
 */
int pg_store_set_state(pg_store *s, int64_t id, enum pg_job_state from, enum pg_job_state to,
		       const pg_store_update *u);

/* Set a recorded stage's status and summary (the approval, once the maintainer decided). */
int pg_store_set_stage(pg_store *s, int64_t id, const char *stage, const char *status,
		       const char *summary);

/*
 * Record what happened to a job without changing its state, among its
 * decisions (the approval notice mailed or not: user "pullgate", action
 * "notice").  pg_store_notice_done does so for a notice of the outbox and
 * takes it out, in one transaction (note NULL: out, and nothing recorded).
 */
int pg_store_notice_done(pg_store *s, int64_t id, const char *note);

/*
 * The outbox: the notices approvals put there (pg_store_update.notice) and
 * nobody has mailed or given up on yet, oldest first: ids[i] and paths[i]
 * (the caller frees paths with pg_str_list_free and ids with free).
 */
int pg_store_notices(int64_t **ids, char ***paths, size_t *n, pg_store *s);

/*
 * A pull's KCIDB submission (server/kcidb_submit.c): one per pull, of its
 * newest decided run.  state: "queued" (not tried yet), "retrying" (tried,
 * tried again at next_at), "sent" or "failed" (final).
 */
typedef struct pg_submission {
	int64_t pull;
	int64_t run;          /* the pull's attempts when the run was decided */
	int64_t seq;          /* the put it is: 1, 2... for the pull, one more at each put (a
				 stacked pull's re-test puts again in the same run) */
	char state[16];
	unsigned tries;
	unsigned status;      /* the receiver's last HTTP status; 0: none (not tried, no answer) */
	char *note;           /* the last try's outcome, one line, or NULL */
	int64_t next_at;      /* retrying: when (seconds since the epoch) */
	int64_t updated;
} pg_submission;

void pg_submission_release(pg_submission *sub);

/* Pull id's submission; PG_ENOTFOUND when it has none. */
int pg_store_submission(pg_submission *out, pg_store *s, int64_t id);

/* The submissions still to send (queued and retrying), the earliest due first: *out[0..*n), free with pg_submissions_free. */
int pg_store_submissions_due(pg_submission **out, size_t *n, pg_store *s);
void pg_submissions_free(pg_submission *list, size_t n);

/*
 * Record a try of sub->pull's submission (its state, tries, status, note
 * and next_at as sub says), only while the outbox holds that put (sub->seq)
 * still to send: 1 when it did not (a newer put replaced it, of a newer
 * run or of the same run decided again; nothing changed).  A
 * final state with decision records it among the pull's decisions too
 * (user "pullgate", action "kcidb", decision its note), in one transaction.
 */
int pg_store_submission_set(pg_store *s, const pg_submission *sub, const char *decision);

/* Take every submission still to send out of the outbox (none is configured); *n how many. */
int pg_store_submissions_drop(pg_store *s, size_t *n);

/* Record a decision's row on pull id without a change of state: user, action and note. */
int pg_store_note(pg_store *s, int64_t id, const char *user, const char *action,
		  const char *note);

/* Jobs, newest first, those in *state (NULL: all).  out->total counts all that match. */
typedef struct pg_job_list {
	pg_job **items;
	size_t n;
	size_t total;
} pg_job_list;

int pg_store_list(pg_job_list *out, pg_store *s, const enum pg_job_state *state, size_t offset,
		  size_t limit);

/*
 * The merge window's queue, first place first (docs/server.md, "The
 * queue"): every pull verify accepted that is not decided yet (verified,
 * merging, building, booting, waiting or approving), held ones too, by
 * queue_rank; without mail and report.  total is n.  A pull enters the
 * queue when it is first moved to verified, behind every pull in it, and
 * keeps its place when it is tested again.
 */
int pg_store_queue(pg_job_list *out, pg_store *s);

/*
 * Move pull id by places in the queue (negative: up, towards the first),
 * the others keeping their order, in one transaction.  PG_ENOTFOUND when
 * id is not in the queue, PG_ECONFLICT when the move would go past its
 * first or last place.
 */
int pg_store_queue_move(pg_store *s, int64_t id, int by);

/*
 * Record the merge a running pull's merge stage made (base, merge), while
 * it is still in state: the queue stacks the next pull on it before this
 * one's build and boot end; base and merge NULL: no merge to stack on
 * (its run failed).  The move to merging clears a run's merge.
 * PG_ECONFLICT when the pull is in another state.
 */
int pg_store_set_merge(pg_store *s, int64_t id, enum pg_job_state state, const pg_oid *base,
		       const pg_oid *merge);

/*
 * Record what the check at its entry into the queue found (the pull is
 * still in state): one sentence on its textual conflicts (NULL: none) and
 * the pull ahead it conflicts with (0: none, or only with the branch).
 * PG_ECONFLICT when the pull is in another state.
 */
int pg_store_set_conflict(pg_store *s, int64_t id, enum pg_job_state state, const char *conflict,
			  int64_t with);

/*
 * Put pull id behind every pull of the queue, in one statement, while it
 * is in state; PG_ECONFLICT when it is not.
 */
int pg_store_queue_to_end(pg_store *s, int64_t id, enum pg_job_state state);

/* Hold pull id in the queue (held) or let it go on; PG_ENOTFOUND when it is not in it. */
int pg_store_queue_hold(pg_store *s, int64_t id, bool held);
void pg_job_list_release(pg_job_list *l);

/* How many jobs are in each state: calls fn for each state that has any. */
typedef void (*pg_store_count_fn)(void *ctx, const char *state, int64_t n);
int pg_store_count_states(pg_store *s, pg_store_count_fn fn, void *ctx);

/* Per stage name: how many ran and their total seconds. */
typedef void (*pg_store_stage_fn)(void *ctx, const char *stage, int64_t n, double seconds);
int pg_store_stage_totals(pg_store *s, pg_store_stage_fn fn, void *ctx);

/*
 * A value the service keeps in the store under key, in the meta table
 * beside the schema's version (the transparency log intake's cursor,
 * "tlog-intake:" and the log's path): *out is malloc()ed, NULL when key
 * has none.  Set replaces it in one transaction, durable when it returns.
 * "schema" is the store's own: PG_EINVALID.
 */
int pg_store_meta_get(char **out, pg_store *s, const char *key);
int pg_store_meta_set(pg_store *s, const char *key, const char *value);

/* Whether the database answers (for /healthz). */
int pg_store_ping(pg_store *s);

/*
 * Checkpoints: by default a connection copies the write-ahead log into the
 * database after a commit that grew it past 1000 pages, in the committing
 * thread.  pg_store_manual_checkpoints turns that off for s (its commits
 * then only append and sync), and pg_store_checkpoint copies what it can
 * without waiting for readers or writers (a passive checkpoint), and when
 * the log has grown past 8192 pages, waits for the writer of the moment to
 * copy the rest, so that the next one starts it again from the beginning
 * (the log stays bounded): a service runs it from a thread of its own, so
 * that no hook's commit does the copying.
 */
void pg_store_manual_checkpoints(pg_store *s);
int pg_store_checkpoint(pg_store *s);

#endif
