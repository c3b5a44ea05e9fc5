/* test_store.c - unit tests for the SQLite job store: deliveries, claims, reports, decisions, requeue. */
/* the store's own header, for its writers' turns, before cmocka's fail() macro */
#include "server/store_sql.h"
#include "tests/unit/unit.h"

#include "common/error.h"
#include "common/fs.h"
#include "common/json.h"
#include "common/str.h"
#include "server/job.h"
#include "server/store.h"

#include <pthread.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include <time.h>
#include <unistd.h>

static char dir[] = "/tmp/pullgate-test-store.XXXXXX";
static char path[128];

/* The tag object the push records of these tests name. */
#define ID1 "0123456789012345678901234567890123456789"
static pg_oid id1;

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir) || pg_oid_fromhex(&id1, ID1, PG_OID_HEXSZ) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/pullgate.db", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return pg_remove_tree(dir);
}

static pg_job_spec job(const char *tag)
{
	pg_job_spec j;

	memset(&j, 0, sizeof(j));
	j.kind = PG_JOB_PUSH;
	j.repo = "/srv/kees.git";
	j.repo_name = "pub/scm/linux/kernel/git/kees/linux";
	j.tag = tag;
	j.expect = &id1;
	j.sender = "kees";
	return j;
}

static const enum pg_job_state open_states[] = {
	PG_JOB_QUEUED, PG_JOB_VERIFYING, PG_JOB_WAITING,
};

/* Add a delivery of new, queued jobs, signed as sig (may be NULL); *made counts the new ones. */
static int add_signed(pg_store *s, pg_buf *ids, size_t *made, const char *delivery,
		      const char *digest, const char *sig, const pg_job_spec *jobs, size_t njobs)
{
	pg_delivery d;

	memset(&d, 0, sizeof(d));
	d.id = delivery;
	d.hook = "push";
	d.digest = digest;
	d.signature = sig;
	d.state = PG_JOB_QUEUED;
	d.jobs = jobs;
	d.njobs = njobs;
	d.open = open_states;
	d.nopen = PG_ARRAY_SIZE(open_states);
	return pg_store_add_delivery(ids, made, s, &d);
}

static int add(pg_store *s, pg_buf *ids, const char *delivery, const char *digest,
	       const pg_job_spec *jobs, size_t njobs)
{
	size_t made;

	return add_signed(s, ids, &made, delivery, digest, NULL, jobs, njobs);
}

/* Move a job with only a message, as the store sees it (the table is job.c's). */
static int set(pg_store *s, int64_t id, enum pg_job_state from, enum pg_job_state to,
	       const char *message)
{
	pg_store_update u = PG_STORE_UPDATE_INIT;

	u.message = message;
	return pg_store_set_state(s, id, from, to, &u);
}

/* An object id in hex, in a buffer the next call writes again. */
static const char *hex_of(const pg_oid *id)
{
	static char hex[PG_OID_HEXSZ + 1];

	pg_oid_tohex(hex, id);
	return hex;
}

static int64_t id_at(const pg_buf *ids, size_t i)
{
	int64_t v;

	memcpy(&v, ids->ptr + i * sizeof(v), sizeof(v));
	return v;
}

static void test_deliveries_are_idempotent(void **state)
{
	pg_store *s = NULL;
	pg_buf ids = PG_BUF_INIT;
	pg_job_spec jobs[2] = { job("refs/tags/a"), job("refs/tags/b") };
	int64_t first;

	(void)state;
	unlink(path);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(add(s, &ids, "d1", "digest-1", jobs, 2), 0);
	assert_int_equal(ids.len, 2 * sizeof(int64_t));
	first = id_at(&ids, 0);
	assert_int_equal(id_at(&ids, 1), first + 1);

	/* the same delivery again: the same jobs, no new ones */
	pg_buf_clear(&ids);
	assert_int_equal(add(s, &ids, "d1", "digest-1", jobs, 2), PG_EEXISTS);
	assert_int_equal(ids.len, 2 * sizeof(int64_t));
	assert_int_equal(id_at(&ids, 0), first);
	/* the same id with another body */
	pg_buf_clear(&ids);
	assert_int_equal(add(s, &ids, "d1", "digest-2", jobs, 1), PG_ECONFLICT);
	/* a delivery with no job is remembered too */
	assert_int_equal(add(s, &ids, "d2", "x", NULL, 0), 0);
	assert_int_equal(add(s, &ids, "d2", "x", NULL, 0), PG_EEXISTS);
	pg_store_free(s);
	pg_buf_release(&ids);
}

/* What the service keeps beside the schema: read back, replaced, kept over a reopen. */
static void test_meta(void **state)
{
	pg_store *s = NULL;
	char *v = NULL;

	(void)state;
	unlink(path);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(pg_store_meta_get(&v, s, "tlog-intake:/srv/tlog"), 0);
	assert_null(v);
	assert_int_equal(pg_store_meta_set(s, "tlog-intake:/srv/tlog", "one"), 0);
	assert_int_equal(pg_store_meta_set(s, "tlog-intake:/srv/tlog", "two"), 0);
	assert_int_equal(pg_store_meta_set(s, "schema", "1"), PG_EINVALID);
	pg_store_free(s);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(pg_store_meta_get(&v, s, "tlog-intake:/srv/tlog"), 0);
	assert_string_equal(v, "two");
	free(v);
	pg_store_free(s);
}

static void test_replays_and_open_twins(void **state)
{
	pg_store *s = NULL;
	pg_buf ids = PG_BUF_INIT;
	pg_job_spec a = job("refs/tags/a"), b = job("refs/tags/b");
	size_t made;
	int64_t first;

	(void)state;
	unlink(path);
	a.dedupe = "push\nrepo\nrefs/tags/a\n0123";
	b.dedupe = "push\nrepo\nrefs/tags/b\n0123";
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(add_signed(s, &ids, &made, "d1", "body-1", "sig-1", &a, 1), 0);
	assert_int_equal(made, 1);
	first = id_at(&ids, 0);
	/* what d1 signed, sent again under a new delivery id: its jobs, nothing new */
	pg_buf_clear(&ids);
	assert_int_equal(add_signed(s, &ids, &made, "d2", "body-1", "sig-1", &a, 1), PG_EEXISTS);
	assert_non_null(strstr(pg_error_last(), "received before, as delivery 'd1'"));
	assert_int_equal(made, 0);
	assert_int_equal(ids.len, sizeof(int64_t));
	assert_int_equal(id_at(&ids, 0), first);
	/* signed anew (another timestamp) while the job is open: that job, no twin */
	pg_buf_clear(&ids);
	assert_int_equal(add_signed(s, &ids, &made, "d3", "body-1", "sig-3", &a, 1), 0);
	assert_int_equal(made, 0);
	assert_int_equal(id_at(&ids, 0), first);
	/* and a retry of d3 names the same job */
	pg_buf_clear(&ids);
	assert_int_equal(add_signed(s, &ids, &made, "d3", "body-1", "sig-3", &a, 1), PG_EEXISTS);
	assert_int_equal(id_at(&ids, 0), first);
	/* another tag in the same delivery is new, the open one is named */
	{
		pg_job_spec two[2] = { a, b };

		pg_buf_clear(&ids);
		assert_int_equal(add_signed(s, &ids, &made, "d4", "body-4", "sig-4", two, 2), 0);
		assert_int_equal(made, 1);
		assert_int_equal(id_at(&ids, 0), first);
		assert_true(id_at(&ids, 1) > first);
	}
	/* once the job is no longer open, the tag may be verified again */
	assert_int_equal(set(s, first, PG_JOB_QUEUED, PG_JOB_REJECTED, NULL), 0);
	pg_buf_clear(&ids);
	assert_int_equal(add_signed(s, &ids, &made, "d5", "body-1", "sig-5", &a, 1), 0);
	assert_int_equal(made, 1);
	assert_true(id_at(&ids, 0) != first);
	pg_store_free(s);
	pg_buf_release(&ids);
}

/* A report with n rewritten-upstream errors, n warnings of range-size, each with a long detail. */
static pg_report *big_report(size_t n)
{
	pg_report *r = NULL;
	pg_finding *f;
	char detail[2048];
	size_t i;

	memset(detail, 'd', sizeof(detail) - 1);
	detail[sizeof(detail) - 1] = '\0';
	assert_int_equal(pg_report_new(&r), 0);
	r->tag = strdup("refs/tags/big");
	r->ncommits = n;
	for (i = 0; i < n; i++) {
		assert_int_equal(pg_report_add(&f, r, PG_CHECK_REWRITTEN_UPSTREAM, PG_SEV_ERROR, NULL,
					       "copy %zu", i), 0);
		assert_int_equal(pg_finding_detail(f, "tree", detail, "x"), 0);
		assert_int_equal(pg_report_add(NULL, r, PG_CHECK_RANGE_SIZE, PG_SEV_WARNING, NULL,
					       "warning %zu", i), 0);
	}
	return r;
}

static void test_reports_are_bounded(void **state)
{
	pg_store *s = NULL;
	pg_buf ids = PG_BUF_INIT;
	pg_job_spec one = job("refs/tags/big");
	pg_store_update u = PG_STORE_UPDATE_INIT;
	pg_report *r = big_report(5000);
	pg_json *doc = NULL;
	const pg_json *omitted;
	pg_job *j = NULL;
	int64_t id;

	(void)state;
	unlink(path);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(add(s, &ids, "d1", "x", &one, 1), 0);
	id = id_at(&ids, 0);
	u.report = r;
	assert_int_equal(pg_store_set_state(s, id, PG_JOB_QUEUED, PG_JOB_REJECTED, &u), 0);
	assert_int_equal(pg_store_get(&j, s, id), 0);
	/* the pull's counts and verdict are the whole report's */
	assert_int_equal(j->errors, 5000);
	assert_int_equal(j->warnings, 5000);
	assert_true(j->has_verdict);
	assert_string_equal(pg_job_verdict_name(j->verdict), "reject");
	/* the stored JSON keeps 100 of each check and severity, and says what it left out */
	assert_true(strlen(j->report) <= ((size_t)1 << 20));
	assert_int_equal(pg_json_parse(&doc, j->report, strlen(j->report)), 0);
	assert_string_equal(pg_json_get_str(doc, "verdict"), "reject");
	assert_int_equal(pg_json_len(pg_json_get(doc, "findings")), 200);
	omitted = pg_json_get(pg_json_get(doc, "stored"), "omitted");
	assert_int_equal(pg_json_len(omitted), 2);
	assert_string_equal(pg_json_get_str(pg_json_at(omitted, 0), "check"), "rewritten-upstream");
	assert_non_null(strstr(j->report, "\"errors\": 5000"));
	assert_non_null(strstr(j->report, "\"count\": 4900"));
	pg_json_free(doc);
	pg_job_free(j);
	/* a tighter size: fewer findings, then none of their details */
	pg_store_set_limits(s, 100, 65536);
	assert_int_equal(pg_store_set_state(s, id, PG_JOB_REJECTED, PG_JOB_REJECTED, &u), 0);
	assert_int_equal(pg_store_get(&j, s, id), 0);
	assert_true(strlen(j->report) <= 65536);
	assert_int_equal(pg_json_parse(&doc, j->report, strlen(j->report)), 0);
	assert_true(pg_json_len(pg_json_get(doc, "findings")) >= 2);
	assert_true(pg_json_len(pg_json_get(doc, "findings")) < 200);
	pg_json_free(doc);
	pg_job_free(j);
	pg_report_free(r);
	pg_store_free(s);
	pg_buf_release(&ids);
}

static void test_claim_and_report(void **state)
{
	pg_store *s = NULL;
	pg_buf ids = PG_BUF_INIT;
	pg_job_spec jobs[2] = { job("refs/tags/a"), job("refs/tags/b") };
	pg_job *j = NULL;
	pg_report *r = NULL;
	pg_stage *st = NULL;
	pg_store_update u = PG_STORE_UPDATE_INIT;
	pg_job_list l;

	(void)state;
	unlink(path);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(add(s, &ids, "d1", "x", jobs, 2), 0);

	/* the oldest queued job first; a new run counts an attempt */
	assert_int_equal(pg_store_oldest(&j, s, PG_JOB_QUEUED), 0);
	assert_non_null(j);
	assert_string_equal(j->tag, "refs/tags/a");
	u.new_run = true;
	assert_int_equal(pg_store_set_state(s, j->id, PG_JOB_QUEUED, PG_JOB_VERIFYING, &u), 0);
	pg_job_free(j);
	assert_int_equal(pg_store_get(&j, s, id_at(&ids, 0)), 0);
	assert_string_equal(pg_job_state_name(j->state), "verifying");
	assert_int_equal(j->attempts, 1);
	pg_job_free(j);
	assert_int_equal(pg_store_oldest(&j, s, PG_JOB_QUEUED), 0);
	assert_string_equal(j->tag, "refs/tags/b");
	assert_int_equal(set(s, j->id, PG_JOB_QUEUED, PG_JOB_VERIFYING, NULL), 0);
	pg_job_free(j);
	assert_int_equal(pg_store_oldest(&j, s, PG_JOB_QUEUED), 0);
	assert_null(j);

	/* a report: verdict, counts, stages and findings */
	assert_int_equal(pg_report_new(&r), 0);
	r->tag = strdup("refs/tags/a");
	r->ncommits = 39;
	r->nmerges = 7;
	r->tag_time = 1748700000;
	r->has_merge = true;
	memset(r->merge_commit.id, 0xab, sizeof(r->merge_commit.id));
	assert_int_equal(pg_report_add(NULL, r, PG_CHECK_RANGE_SIZE, PG_SEV_ERROR, NULL,
				       "the pull has 39 commits"), 0);
	assert_int_equal(pg_report_add_stage(&st, r, "verify"), 0);
	assert_int_equal(pg_stage_set(st, PG_STAGE_FAILED, NULL, "1 error"), 0);
	u = (pg_store_update)PG_STORE_UPDATE_INIT;
	u.report = r;
	u.message = "rejected by verify";
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 0), PG_JOB_VERIFYING, PG_JOB_REJECTED, &u), 0);
	assert_int_equal(pg_store_get(&j, s, id_at(&ids, 0)), 0);
	assert_string_equal(pg_job_state_name(j->state), "rejected");
	assert_true(j->has_verdict);
	assert_string_equal(pg_job_verdict_name(j->verdict), "reject");
	assert_int_equal(j->errors, 1);
	assert_int_equal(j->commits, 39);
	assert_int_equal(j->merges, 7);
	assert_int_equal(j->tag_time, 1748700000);
	assert_true(j->has_merge);
	assert_string_equal(hex_of(&j->merge_commit), "abababababababababababababababababababab");
	assert_int_equal(j->nstages, 1);
	assert_string_equal(j->stages[0].name, "verify");
	assert_string_equal(j->stages[0].status, "failed");
	assert_non_null(strstr(j->report, "\"range-size\""));
	pg_job_free(j);
	/* saving again replaces the rows, it does not add to them */
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 0), PG_JOB_REJECTED, PG_JOB_REJECTED, &u), 0);
	assert_int_equal(pg_store_get(&j, s, id_at(&ids, 0)), 0);
	assert_int_equal(j->nstages, 1);
	pg_job_free(j);

	assert_int_equal(pg_store_get(&j, s, 9999), PG_ENOTFOUND);
	assert_int_equal(pg_store_set_state(s, 9999, PG_JOB_VERIFYING, PG_JOB_REJECTED, &u), PG_ENOTFOUND);

	/* listing: newest first, filtered, paged */
	assert_int_equal(pg_store_list(&l, s, NULL, 0, 10), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.total, 2);
	assert_string_equal(l.items[0]->tag, "refs/tags/b");
	pg_job_list_release(&l);
	assert_int_equal(pg_store_list(&l, s, &(const enum pg_job_state){ PG_JOB_REJECTED }, 0, 10), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.items[0]->tag, "refs/tags/a");
	pg_job_list_release(&l);
	assert_int_equal(pg_store_list(&l, s, NULL, 1, 1), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.total, 2);
	assert_string_equal(l.items[0]->tag, "refs/tags/a");
	pg_job_list_release(&l);
	pg_report_free(r);
	pg_store_free(s);
	pg_buf_release(&ids);
}

static void test_decisions_and_states(void **state)
{
	pg_store *s = NULL;
	pg_buf ids = PG_BUF_INIT;
	pg_job_spec one = job("refs/tags/a");
	pg_store_update u = PG_STORE_UPDATE_INIT;
	pg_job *j = NULL;
	int64_t id;

	(void)state;
	unlink(path);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(add(s, &ids, "d1", "x", &one, 1), 0);
	id = id_at(&ids, 0);
	/* a change only from the state it expects (compare-and-swap), a decision with it */
	u.user = "linus";
	u.action = "approve";
	assert_int_equal(pg_store_set_state(s, id, PG_JOB_WAITING, PG_JOB_APPROVED, &u), PG_ECONFLICT);
	assert_non_null(strstr(pg_error_last(), "is queued, not waiting"));
	assert_int_equal(set(s, id, PG_JOB_QUEUED, PG_JOB_WAITING, "tested"), 0);
	assert_int_equal(set(s, id, PG_JOB_QUEUED, PG_JOB_WAITING, NULL), PG_ECONFLICT);
	u.message = "ok";
	assert_int_equal(pg_store_set_state(s, id, PG_JOB_WAITING, PG_JOB_APPROVED, &u), 0);
	assert_int_equal(pg_store_get(&j, s, id), 0);
	assert_string_equal(pg_job_state_name(j->state), "approved");
	assert_string_equal(j->message, "ok");
	assert_int_equal(j->ndecisions, 1);
	assert_string_equal(j->decisions[0].user, "linus");
	assert_string_equal(j->decisions[0].action, "approve");
	assert_true(j->decisions[0].at > 0);
	assert_string_equal(j->decisions[0].note, "ok");
	pg_job_free(j);
	/* a failed change leaves nothing behind: no decision without its move */
	assert_int_equal(pg_store_set_state(s, id, PG_JOB_WAITING, PG_JOB_APPROVED, &u), PG_ECONFLICT);
	assert_int_equal(pg_store_get(&j, s, id), 0);
	assert_int_equal(j->ndecisions, 1);
	pg_job_free(j);
	assert_int_equal(set(s, 4242, PG_JOB_QUEUED, PG_JOB_VERIFYING, NULL), PG_ENOTFOUND);
	pg_store_free(s);
	pg_buf_release(&ids);
}

static void count(void *ctx, const char *st, int64_t n)
{
	if (!strcmp(st, "queued"))
		*(int64_t *)ctx += n * 100;
	else if (!strcmp(st, "approved"))
		*(int64_t *)ctx += n;
}

static void test_requeue_after_a_crash(void **state)
{
	pg_store *s = NULL, *again = NULL;
	pg_buf ids = PG_BUF_INIT;
	pg_job_spec jobs[3] = { job("refs/tags/a"), job("refs/tags/b"), job("refs/tags/c") };
	pg_job *j = NULL;
	size_t n;
	int64_t counts = 0;

	(void)state;
	unlink(path);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(add(s, &ids, "d1", "x", jobs, 3), 0);
	assert_int_equal(pg_job_claim(&j, s, PG_JOB_QUEUED, PG_JOB_VERIFYING), 0);
	pg_job_free(j);
	assert_int_equal(set(s, id_at(&ids, 1), PG_JOB_QUEUED, PG_JOB_BUILDING, NULL), 0);
	assert_int_equal(set(s, id_at(&ids, 2), PG_JOB_QUEUED, PG_JOB_APPROVED, NULL), 0);
	/* as after a crash: another connection, the first never closed, sees every commit */
	assert_int_equal(pg_store_open(&again, path), 0);
	assert_int_equal(pg_job_requeue(&n, again), 0);
	assert_int_equal(n, 2);
	assert_int_equal(pg_store_count_states(again, count, &counts), 0);
	assert_int_equal(counts, 201);
	assert_int_equal(pg_store_ping(again), 0);
	pg_store_free(again);
	pg_store_free(s);
	pg_buf_release(&ids);
}

/* The outbox: a notice goes in with the approval, in one transaction, and out with its outcome. */
static void test_the_notice_outbox(void **state)
{
	pg_store *s = NULL, *again = NULL;
	pg_buf ids = PG_BUF_INIT;
	pg_job_spec jobs[2] = { job("refs/tags/a"), job("refs/tags/b") };
	pg_store_update u = PG_STORE_UPDATE_INIT;
	int64_t *out = NULL;
	char **paths = NULL;
	size_t n = 9;
	pg_job *j = NULL;

	(void)state;
	unlink(path);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(add(s, &ids, "d1", "x", jobs, 2), 0);
	assert_int_equal(pg_store_notices(&out, &paths, &n, s), 0);
	assert_int_equal(n, 0);
	u.message = "approved";
	u.user = "maintainer";
	u.action = "approve";
	u.notice = "/logs/a/notice.txt";
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 0), PG_JOB_QUEUED, PG_JOB_APPROVED, &u), 0);
	/* a move the store refuses puts nothing in the outbox */
	u.notice = "/logs/b/notice.txt";
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 1), PG_JOB_WAITING, PG_JOB_APPROVED, &u),
			 PG_ECONFLICT);
	pg_error_clear();
	/* another connection (a start after a kill) finds it */
	assert_int_equal(pg_store_open(&again, path), 0);
	assert_int_equal(pg_store_notices(&out, &paths, &n, again), 0);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], id_at(&ids, 0));
	assert_string_equal(paths[0], "/logs/a/notice.txt");
	pg_str_list_free(paths, n);
	free(out);
	/* its outcome takes it out, recorded as a decision in the same transaction */
	assert_int_equal(pg_store_notice_done(again, id_at(&ids, 0), "notice mailed"), 0);
	assert_int_equal(pg_store_notices(&out, &paths, &n, again), 0);
	assert_int_equal(n, 0);
	assert_int_equal(pg_store_get(&j, again, id_at(&ids, 0)), 0);
	assert_int_equal(j->ndecisions, 2);
	assert_string_equal(j->decisions[1].action, "notice");
	assert_string_equal(j->decisions[1].note, "notice mailed");
	pg_job_free(j);
	pg_store_free(again);
	pg_store_free(s);
	pg_buf_release(&ids);
}

/*
 * The KCIDB outbox: a decided run's report puts its pull there in the same
 * transaction, a newer run replaces it, a try's outcome is recorded only
 * while that run is still to send, and a final one is a decision too.
 */
static void test_the_kcidb_outbox(void **state)
{
	pg_store *s = NULL, *again = NULL;
	pg_buf ids = PG_BUF_INIT;
	pg_job_spec jobs[2] = { job("refs/tags/a"), job("refs/tags/b") };
	pg_store_update u = PG_STORE_UPDATE_INIT;
	pg_submission *due = NULL, sub, run1;
	pg_report *r = big_report(1);
	char busy[] = "500 Internal Server Error", created[] = "201 Created";
	size_t n = 9;
	pg_job *j = NULL;

	(void)state;
	unlink(path);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(add(s, &ids, "d1", "x", jobs, 2), 0);
	/* a report without kcidb (verify's, kernel stages to follow) puts nothing there */
	u.message = "verified";
	u.report = r;
	u.new_run = true;
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 0), PG_JOB_QUEUED, PG_JOB_VERIFIED, &u), 0);
	assert_int_equal(pg_store_submission(&sub, s, id_at(&ids, 0)), PG_ENOTFOUND);
	pg_error_clear();
	u.kcidb = true;
	u.new_run = false;
	u.message = "rejected";
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 0), PG_JOB_VERIFIED, PG_JOB_REJECTED, &u), 0);
	/* a move the store refuses puts nothing there */
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 1), PG_JOB_WAITING, PG_JOB_REJECTED, &u),
			 PG_ECONFLICT);
	pg_error_clear();
	/* another connection (a start after a kill) finds it, queued */
	assert_int_equal(pg_store_open(&again, path), 0);
	assert_int_equal(pg_store_submissions_due(&due, &n, again), 0);
	assert_int_equal(n, 1);
	assert_int_equal(due[0].pull, id_at(&ids, 0));
	assert_int_equal(due[0].run, 1);
	assert_string_equal(due[0].state, "queued");
	assert_int_equal(due[0].tries, 0);
	run1 = due[0];
	run1.note = NULL;
	/* tried once: retrying, due later, no decision yet */
	snprintf(run1.state, sizeof(run1.state), "retrying");
	run1.tries = 1;
	run1.status = 500;
	run1.next_at = 4102444800;
	run1.note = busy;
	assert_int_equal(pg_store_submission_set(again, &run1, "not final"), 0);
	assert_int_equal(pg_store_submission(&sub, s, id_at(&ids, 0)), 0);
	assert_string_equal(sub.state, "retrying");
	assert_int_equal(sub.status, 500);
	assert_string_equal(sub.note, "500 Internal Server Error");
	assert_int_equal(sub.next_at, 4102444800);
	pg_submission_release(&sub);
	pg_submissions_free(due, n);
	/* a new decided run replaces it, queued again */
	u.message = "queued again";
	u.report = NULL;
	u.kcidb = false;
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 0), PG_JOB_REJECTED, PG_JOB_QUEUED, &u), 0);
	u.new_run = true;
	u.message = "rejected again";
	u.report = r;
	u.kcidb = true;
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 0), PG_JOB_QUEUED, PG_JOB_REJECTED, &u), 0);
	assert_int_equal(pg_store_submission(&sub, s, id_at(&ids, 0)), 0);
	assert_string_equal(sub.state, "queued");
	assert_int_equal(sub.run, 2);
	assert_int_equal(sub.tries, 0);
	pg_submission_release(&sub);
	/* the older run's outcome changes nothing of the newer's */
	snprintf(run1.state, sizeof(run1.state), "sent");
	run1.note = created;
	assert_int_equal(pg_store_submission_set(again, &run1, "run 1 sent"), 1);
	assert_int_equal(pg_store_submission(&sub, s, id_at(&ids, 0)), 0);
	assert_string_equal(sub.state, "queued");
	pg_submission_release(&sub);
	/*
	 * a stacked pull's re-test decides again in the same run (attempts
	 * unchanged): the answer to the earlier put's POST, still under way,
	 * is stale, and the later put stays to send, its tries from nought
	 */
	assert_int_equal(pg_store_submission(&sub, s, id_at(&ids, 0)), 0);
	run1 = sub;
	run1.note = NULL;
	pg_submission_release(&sub);
	u.new_run = false;
	u.message = "waiting";
	u.report = NULL;
	u.kcidb = false;
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 0), PG_JOB_REJECTED, PG_JOB_WAITING, &u), 0);
	u.message = "verified";
	u.report = r;
	u.kcidb = true;
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 0), PG_JOB_WAITING, PG_JOB_VERIFIED, &u), 0);
	snprintf(run1.state, sizeof(run1.state), "sent");
	run1.tries = 1;
	run1.note = created;
	assert_int_equal(pg_store_submission_set(again, &run1, "stale sent"), 1);
	assert_int_equal(pg_store_submission(&sub, s, id_at(&ids, 0)), 0);
	assert_string_equal(sub.state, "queued");
	assert_int_equal(sub.run, 2);
	assert_int_equal(sub.seq, run1.seq + 1);
	assert_int_equal(sub.tries, 0);
	assert_null(sub.note);
	/* the newer's final outcome is recorded, and among the decisions */
	run1.seq = sub.seq;
	pg_submission_release(&sub);
	assert_int_equal(pg_store_submission_set(again, &run1, "run 2 sent"), 0);
	assert_int_equal(pg_store_submissions_due(&due, &n, again), 0);
	assert_int_equal(n, 0);
	assert_int_equal(pg_store_get(&j, again, id_at(&ids, 0)), 0);
	assert_string_equal(j->decisions[j->ndecisions - 1].action, "kcidb");
	assert_string_equal(j->decisions[j->ndecisions - 1].note, "run 2 sent");
	pg_job_free(j);
	/* once final, it is not tried again: a late outcome changes nothing */
	snprintf(run1.state, sizeof(run1.state), "failed");
	assert_int_equal(pg_store_submission_set(again, &run1, "late"), 1);
	/* with nothing configured, what is still to send is dropped; what was sent stays */
	u.new_run = false;
	u.message = "verified";
	u.kcidb = false;
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 1), PG_JOB_QUEUED, PG_JOB_VERIFIED, &u), 0);
	u.message = "rejected";
	u.kcidb = true;
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 1), PG_JOB_VERIFIED, PG_JOB_REJECTED, &u), 0);
	assert_int_equal(pg_store_submissions_drop(again, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(pg_store_submission(&sub, s, id_at(&ids, 1)), PG_ENOTFOUND);
	pg_error_clear();
	assert_int_equal(pg_store_submission(&sub, s, id_at(&ids, 0)), 0);
	assert_string_equal(sub.state, "sent");
	pg_submission_release(&sub);
	pg_report_free(r);
	pg_store_free(again);
	pg_store_free(s);
	pg_buf_release(&ids);
}

/*
 * What takes a store of this schema back to schema 6 (the KCIDB outbox of
 * schema 9, the conflict columns of schema 8 and the queue's of schema 7
 * dropped), and to schema 4, with the meta table's version still to set.
 */
#define SCHEMA_8 "DROP TABLE kcidb_submissions;"
#define SCHEMA_7 SCHEMA_8 "ALTER TABLE pulls DROP COLUMN conflict; ALTER TABLE pulls DROP COLUMN conflict_with;"
#define SCHEMA_6 SCHEMA_7 "DROP INDEX pulls_queue; ALTER TABLE pulls DROP COLUMN queue_rank;" \
	"ALTER TABLE pulls DROP COLUMN held; ALTER TABLE pulls DROP COLUMN attribution;" \
	"ALTER TABLE pulls DROP COLUMN with_pull;"
#define SCHEMA_4 SCHEMA_6 "ALTER TABLE pulls DROP COLUMN tag_signer;" \
	"ALTER TABLE pulls DROP COLUMN run_dir; DROP TABLE notices;"

/* The counts the store keeps, each as count(*) of the table says it; how many pulls. */
static int64_t assert_counts_are_the_table_s(pg_store *s)
{
	static const enum pg_job_state states[] = { PG_JOB_QUEUED, PG_JOB_VERIFYING,
						    PG_JOB_BUILDING, PG_JOB_APPROVED,
						    PG_JOB_REJECTED };
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	pg_job_list l;
	int64_t all = 0;
	size_t i;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	for (i = 0; i < PG_ARRAY_SIZE(states); i++) {
		assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM pulls WHERE state = ?",
						    -1, &st, NULL), SQLITE_OK);
		sqlite3_bind_text(st, 1, pg_job_state_name(states[i]), -1, SQLITE_STATIC);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_int_equal(pg_store_list(&l, s, &states[i], 0, 1), 0);
		assert_int_equal(l.total, sqlite3_column_int64(st, 0));
		all += sqlite3_column_int64(st, 0);
		pg_job_list_release(&l);
		sqlite3_finalize(st);
	}
	assert_int_equal(pg_store_list(&l, s, NULL, 0, 1), 0);
	assert_int_equal(l.total, all);
	pg_job_list_release(&l);
	sqlite3_close(db);
	return all;
}

static void test_counts_follow_every_move_and_the_upgrade(void **state)
{
	pg_store *s = NULL;
	pg_buf ids = PG_BUF_INIT;
	pg_job_spec jobs[4] = { job("refs/tags/a"), job("refs/tags/b"), job("refs/tags/c"),
				job("refs/tags/d") };
	sqlite3 *db = NULL;
	int64_t counts = 0;

	(void)state;
	unlink(path);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(add(s, &ids, "d1", "x", jobs, 4), 0);
	assert_int_equal(assert_counts_are_the_table_s(s), 4);
	assert_int_equal(set(s, id_at(&ids, 0), PG_JOB_QUEUED, PG_JOB_VERIFYING, NULL), 0);
	assert_int_equal(set(s, id_at(&ids, 1), PG_JOB_QUEUED, PG_JOB_REJECTED, NULL), 0);
	assert_int_equal(set(s, id_at(&ids, 0), PG_JOB_VERIFYING, PG_JOB_BUILDING, NULL), 0);
	/* a move to the same state changes no count */
	assert_int_equal(set(s, id_at(&ids, 1), PG_JOB_REJECTED, PG_JOB_REJECTED, "again"), 0);
	/* a failed move (the pull is not in that state) changes none either */
	assert_int_equal(set(s, id_at(&ids, 2), PG_JOB_VERIFYING, PG_JOB_APPROVED, NULL), PG_ECONFLICT);
	pg_error_clear();
	assert_int_equal(assert_counts_are_the_table_s(s), 4);
	pg_store_free(s);

	/* a store of schema 2, with pulls in it, is counted by the upgrade */
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, SCHEMA_4 "ALTER TABLE pulls DROP COLUMN simulated;"
				      "DROP TRIGGER pull_counts_insert;"
				      "DROP TRIGGER pull_counts_delete;"
				      "DROP TRIGGER pull_counts_move;"
				      "DROP TABLE pull_counts;"
				      "UPDATE meta SET value = '2' WHERE key = 'schema';"
				      "UPDATE pulls SET state = 'approved' WHERE tag = 'refs/tags/d';",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(assert_counts_are_the_table_s(s), 4);
	assert_int_equal(pg_store_count_states(s, count, &counts), 0);
	assert_int_equal(counts, 101);
	/* and keeps counting after it */
	assert_int_equal(add(s, &ids, "d2", "y", &jobs[0], 1), 0);
	assert_int_equal(assert_counts_are_the_table_s(s), 5);
	pg_store_free(s);
	pg_buf_release(&ids);
}

/* The list's marks, newest first: 1 for a pull whose report is a stand-in's. */
static void assert_listed_simulated(pg_store *s, bool newest, bool oldest)
{
	pg_job_list l;

	assert_int_equal(pg_store_list(&l, s, NULL, 0, 10), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.items[0]->simulated, newest);
	assert_int_equal(l.items[1]->simulated, oldest);
	/* the list reads no report, and needs none to say it */
	assert_null(l.items[0]->report);
	pg_job_list_release(&l);
}

static void test_a_stand_in_s_run_is_marked_in_the_list_and_by_the_upgrade(void **state)
{
	pg_store *s = NULL;
	pg_buf ids = PG_BUF_INIT;
	pg_job_spec jobs[2] = { job("refs/tags/real"), job("refs/tags/stand-in") };
	pg_store_update u = PG_STORE_UPDATE_INIT;
	pg_report *r = NULL;
	pg_stage *st = NULL;
	pg_job *j = NULL;
	sqlite3 *db = NULL;

	(void)state;
	unlink(path);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(add(s, &ids, "d1", "x", jobs, 2), 0);
	assert_int_equal(pg_report_new(&r), 0);
	r->tag = strdup("refs/tags/real");
	/* a report has its evidence, and so says simulated, once a stage ran */
	assert_int_equal(pg_report_add_stage(&st, r, "build"), 0);
	assert_int_equal(pg_stage_set(st, PG_STAGE_PASSED, NULL, "3 objects compiled"), 0);
	u.report = r;
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 0), PG_JOB_QUEUED, PG_JOB_PASSED, &u), 0);
	r->simulated = true;
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 1), PG_JOB_QUEUED, PG_JOB_WAITING, &u), 0);
	assert_int_equal(pg_store_get(&j, s, id_at(&ids, 1)), 0);
	assert_true(j->simulated);
	pg_job_free(j);
	assert_int_equal(pg_store_get(&j, s, id_at(&ids, 0)), 0);
	assert_false(j->simulated);
	pg_job_free(j);
	assert_listed_simulated(s, true, false);
	pg_store_free(s);

	/* a store of schema 3 learns it from the reports it holds */
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, SCHEMA_4 "ALTER TABLE pulls DROP COLUMN simulated;"
				      "UPDATE meta SET value = '3' WHERE key = 'schema';",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_listed_simulated(s, true, false);
	pg_store_free(s);
	pg_report_free(r);
	pg_buf_release(&ids);
}

/* Run sql on the store's file behind its back, as a damaged disk or a hand with sqlite3 would. */
static void tamper(const char *sql)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

/* Every read of pull id fails, PG_EINVALID naming the pull and column: none crashes or guesses. */
static void assert_damaged(int64_t id, const char *column)
{
	pg_store *s = NULL;
	pg_job other, *j = &other; /* the failed read must set it NULL */
	pg_job_list l;
	char want[64];

	snprintf(want, sizeof(want), "pull %lld: damaged %s column", (long long)id, column);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(pg_store_get(&j, s, id), PG_EINVALID);
	assert_null(j);
	assert_non_null(strstr(pg_error_last(), want));
	assert_int_equal(pg_store_list(&l, s, NULL, 0, 10), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), want));
	assert_int_equal(l.n, 0);
	pg_error_clear();
	pg_store_free(s);
}

static void test_a_damaged_row_is_an_error_not_a_default(void **state)
{
	static const struct {
		const char *column, *damage, *repair;
	} cases[] = {
		{ "state", "UPDATE pulls SET state = 'Queued'", "UPDATE pulls SET state = 'queued'" },
		{ "state", "UPDATE pulls SET state = ''", "UPDATE pulls SET state = 'queued'" },
		{ "kind", "UPDATE pulls SET kind = 'pull'", "UPDATE pulls SET kind = 'push'" },
		{ "verdict", "UPDATE pulls SET verdict = 'maybe'", "UPDATE pulls SET verdict = NULL" },
		{ "expect", "UPDATE pulls SET expect = 'refs/tags/a'",
		  "UPDATE pulls SET expect = '" ID1 "'" },
		{ "expect", "UPDATE pulls SET expect = substr(expect, 2)",
		  "UPDATE pulls SET expect = '" ID1 "'" },
		{ "tag_object", "UPDATE pulls SET tag_object = '" ID1 "' || '0'",
		  "UPDATE pulls SET tag_object = NULL" },
		{ "merge_base", "UPDATE pulls SET merge_base = replace('" ID1 "', '9', 'g'),"
		  " merge_commit = '" ID1 "'", "UPDATE pulls SET merge_base = NULL, merge_commit = NULL" },
		/* half a merge: the row says there was one, and not which */
		{ "merge_commit", "UPDATE pulls SET merge_base = '" ID1 "'",
		  "UPDATE pulls SET merge_base = NULL" },
		{ "merge_base", "UPDATE pulls SET merge_commit = '" ID1 "'",
		  "UPDATE pulls SET merge_commit = NULL" },
	};
	pg_store *s = NULL;
	pg_buf ids = PG_BUF_INIT;
	pg_job_spec one = job("refs/tags/a");
	pg_job *j = NULL;
	size_t i;

	(void)state;
	unlink(path);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(add(s, &ids, "d1", "x", &one, 1), 0);
	pg_store_free(s);
	for (i = 0; i < PG_ARRAY_SIZE(cases); i++) {
		tamper(cases[i].damage);
		assert_damaged(id_at(&ids, 0), cases[i].column);
		tamper(cases[i].repair);
	}
	/* repaired, the row reads again, as it was */
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(pg_store_get(&j, s, id_at(&ids, 0)), 0);
	assert_int_equal(j->state, PG_JOB_QUEUED);
	assert_int_equal(j->kind, PG_JOB_PUSH);
	assert_false(j->has_verdict);
	assert_true(j->has_expect);
	assert_string_equal(hex_of(&j->expect), ID1);
	assert_false(j->has_tag_object);
	assert_false(j->has_merge);
	pg_job_free(j);
	pg_store_free(s);
	pg_buf_release(&ids);
}

/* A report as a run of the gate leaves it: its tag, merge, signer and run directory. */
static pg_report *run_report(const char *tag, unsigned char fill, const char *signer,
			     const char *run_dir)
{
	pg_report *r = NULL;
	pg_stage *st = NULL;

	assert_int_equal(pg_report_new(&r), 0);
	r->tag = strdup(tag);
	memset(r->tag_object.id, fill, sizeof(r->tag_object.id));
	r->has_merge = true;
	memset(r->merge_base.id, fill + 1, sizeof(r->merge_base.id));
	memset(r->merge_commit.id, fill + 2, sizeof(r->merge_commit.id));
	r->tag_signer = signer ? strdup(signer) : NULL;
	r->run_dir = run_dir ? strdup(run_dir) : NULL;
	/* the gate's evidence (the run directory among it) is written once a stage ran */
	assert_int_equal(pg_report_add_stage(&st, r, "approve"), 0);
	assert_int_equal(pg_stage_set(st, PG_STAGE_WAITING, NULL, "waits"), 0);
	return r;
}

/* Every field of the job as it was written; whole: with its mail and report (not listed). */
static void assert_round_trip(const pg_job *j, bool whole)
{
	assert_int_equal(j->kind, PG_JOB_MAIL);
	assert_string_equal(j->delivery, "d1");
	assert_string_equal(j->repo, "/srv/kees.git");
	assert_string_equal(j->repo_name, "pub/scm/linux/kernel/git/kees/linux");
	assert_string_equal(j->tag, "refs/tags/b");
	assert_true(j->has_expect);
	assert_string_equal(hex_of(&j->expect), ID1);
	assert_string_equal(j->sender, "kees");
	assert_int_equal(j->state, PG_JOB_WAITING);
	assert_true(j->has_verdict);
	assert_int_equal(j->verdict, PG_VERDICT_ACCEPT);
	assert_int_equal(j->errors, 0);
	assert_int_equal(j->warnings, 1);
	assert_int_equal(j->commits, 12);
	assert_int_equal(j->merges, 3);
	assert_string_equal(j->message, "every stage passed");
	assert_true(j->has_tag_object);
	assert_string_equal(hex_of(&j->tag_object), "0000000000000000000000000000000000000000");
	assert_int_equal(j->tag_time, 1748700000);
	assert_int_equal(j->tag_offset, -420);
	assert_true(j->has_merge);
	assert_string_equal(hex_of(&j->merge_base), "0101010101010101010101010101010101010101");
	assert_string_equal(hex_of(&j->merge_commit), "0202020202020202020202020202020202020202");
	assert_string_equal(j->tag_signer, "0123456789ABCDEF0123456789ABCDEF01234567");
	assert_string_equal(j->run_dir, "/home/pg/logs/job-2/run-1");
	assert_true(j->simulated);
	assert_int_equal(j->attempts, 1);
	assert_true(j->created > 0);
	assert_true(j->updated >= j->created);
	if (!whole) {
		assert_null(j->mail);
		assert_null(j->report);
		return;
	}
	assert_int_equal(j->mail_len, 7);
	assert_memory_equal(j->mail, "a\0mail\n", 7);
	assert_non_null(strstr(j->report, "\"tag_signer\": \"0123456789ABCDEF"));
}

static void test_every_field_reads_back_typed(void **state)
{
	pg_store *s = NULL;
	pg_buf ids = PG_BUF_INIT;
	pg_job_spec jobs[2] = { job("refs/tags/a"), job("refs/tags/b") };
	pg_store_update u = PG_STORE_UPDATE_INIT;
	pg_report *r = run_report("refs/tags/b", 0, "0123456789ABCDEF0123456789ABCDEF01234567",
				  "/home/pg/logs/job-2/run-1");
	pg_job *j = NULL;
	pg_job_list l;

	(void)state;
	unlink(path);
	jobs[0].expect = NULL;
	jobs[0].sender = NULL;
	jobs[0].repo_name = NULL;
	jobs[1].kind = PG_JOB_MAIL;
	jobs[1].mail = "a\0mail\n";
	jobs[1].mail_len = 7;
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(add(s, &ids, "d1", "x", jobs, 2), 0);

	/* a new job: nothing a run records yet */
	assert_int_equal(pg_store_get(&j, s, id_at(&ids, 0)), 0);
	assert_int_equal(j->kind, PG_JOB_PUSH);
	assert_int_equal(j->state, PG_JOB_QUEUED);
	assert_false(j->has_expect);
	assert_null(j->sender);
	assert_null(j->repo_name);
	assert_null(j->mail);
	assert_false(j->has_verdict);
	assert_false(j->has_tag_object);
	assert_false(j->has_merge);
	assert_null(j->tag_signer);
	assert_null(j->run_dir);
	assert_null(j->report);
	assert_false(j->simulated);
	pg_job_free(j);

	/* a run's report: a zero tag object is a tag object, not none */
	r->ncommits = 12;
	r->nmerges = 3;
	r->tag_time = 1748700000;
	r->tag_offset = -420;
	r->simulated = true;
	assert_int_equal(pg_report_add(NULL, r, PG_CHECK_RANGE_SIZE, PG_SEV_WARNING, NULL,
				       "the pull has 12 commits"), 0);
	assert_int_equal(set(s, id_at(&ids, 1), PG_JOB_QUEUED, PG_JOB_BOOTING, NULL), 0);
	u.report = r;
	u.message = "every stage passed";
	u.new_run = true;
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 1), PG_JOB_BOOTING, PG_JOB_WAITING, &u),
			 0);
	assert_int_equal(pg_store_get(&j, s, id_at(&ids, 1)), 0);
	assert_round_trip(j, true);
	assert_int_equal(j->nstages, 1);
	assert_string_equal(j->stages[0].name, "approve");
	assert_string_equal(j->stages[0].status, "waiting");
	pg_job_free(j);
	assert_int_equal(pg_store_list(&l, s, &(const enum pg_job_state){ PG_JOB_WAITING }, 0, 10),
			 0);
	assert_int_equal(l.n, 1);
	assert_round_trip(l.items[0], false);
	pg_job_list_release(&l);
	/* the oldest waiting is the same job, read the same way */
	assert_int_equal(pg_store_oldest(&j, s, PG_JOB_WAITING), 0);
	assert_round_trip(j, true);
	pg_job_free(j);
	pg_report_free(r);
	pg_store_free(s);
	pg_buf_release(&ids);
}

static void test_the_upgrade_to_5_fills_signer_and_run_dir_from_the_reports(void **state)
{
	pg_store *s = NULL;
	pg_buf ids = PG_BUF_INIT;
	pg_job_spec jobs[5] = { job("refs/tags/a"), job("refs/tags/b"), job("refs/tags/c"),
				job("refs/tags/d"), job("refs/tags/e") };
	pg_store_update u = PG_STORE_UPDATE_INIT;
	pg_report *signed_run = run_report("refs/tags/a", 0xaa,
					   "F00DF00DF00DF00DF00DF00DF00DF00DF00DF00D",
					   "/home/pg/logs/job-1/run-2");
	pg_report *unsigned_run = run_report("refs/tags/b", 0xbb, NULL, NULL);
	pg_job *j = NULL;
	size_t i;

	(void)state;
	unlink(path);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(add(s, &ids, "d1", "x", jobs, 5), 0);
	u.report = signed_run;
	assert_int_equal(pg_store_set_state(s, id_at(&ids, 0), PG_JOB_QUEUED, PG_JOB_WAITING, &u),
			 0);
	u.report = unsigned_run;
	for (i = 1; i < 4; i++)
		assert_int_equal(pg_store_set_state(s, id_at(&ids, i), PG_JOB_QUEUED,
						    PG_JOB_REJECTED, &u), 0);
	pg_store_free(s);

	/* schema 4 kept both in the report alone; one report is not JSON, one says a number */
	tamper(SCHEMA_4 "UPDATE meta SET value = '4' WHERE key = 'schema';"
	       "UPDATE pulls SET report = '{\"tag_signer\": ' WHERE tag = 'refs/tags/c';"
	       "UPDATE pulls SET report = json_set(report, '$.tag_signer', 7, '$.run_dir', 'x')"
	       "  WHERE tag = 'refs/tags/d';");
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(pg_store_get(&j, s, id_at(&ids, 0)), 0);
	assert_string_equal(j->tag_signer, "F00DF00DF00DF00DF00DF00DF00DF00DF00DF00D");
	assert_string_equal(j->run_dir, "/home/pg/logs/job-1/run-2");
	pg_job_free(j);
	/* a report with none (JSON null), one that is not JSON, no report: none, never a guess */
	for (i = 1; i < 5; i++) {
		assert_int_equal(pg_store_get(&j, s, id_at(&ids, i)), 0);
		assert_null(j->tag_signer);
		if (i == 3)
			assert_string_equal(j->run_dir, "x");
		else
			assert_null(j->run_dir);
		pg_job_free(j);
	}
	pg_store_free(s);
	/* and the version says so: opening it again upgrades nothing */
	assert_int_equal(pg_store_open(&s, path), 0);
	pg_store_free(s);
	pg_report_free(signed_run);
	pg_report_free(unsigned_run);
	pg_buf_release(&ids);
}

/* A writer on its own thread: one write transaction, and when it began (its order among the others). */
typedef struct writer {
	pg_store *s;
	pthread_t thread;
	int err;
	int *next;               /* shared: the order the next writer to begin takes */
	int order;
	pthread_mutex_t *lock;
} writer;

static void *write_once(void *p)
{
	writer *w = p;

	w->err = pg_store_begin_write(w->s);
	pthread_mutex_lock(w->lock);
	__atomic_store_n(&w->order, (*w->next)++, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(w->lock);
	w->err = pg_store_end_write(w->s, w->err);
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Until this many writers that give way, and others, wait for their turn (a minute at most). */
static bool writers_wait(unsigned yielding, unsigned waiting)
{
	unsigned y, w, tries;

	for (tries = 0; tries < 60 * 1000; tries++) {
		pg_store_writers_waiting(&y, &w);
		if (y == yielding && w == waiting)
			return true;
		sleep_ms(1);
	}
	return false;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void test_the_worker_gives_way_to_hooks(void **state)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pg_store *hooks = NULL, *other = NULL, *worker = NULL;
	writer w, h;
	int next = 1, round;

	(void)state;
	unlink(path);
	assert_int_equal(pg_store_open(&hooks, path), 0);
	assert_int_equal(pg_store_open(&other, path), 0);
	assert_int_equal(pg_store_open(&worker, path), 0);
	/* a limit no run reaches: only the order is tested */
	pg_store_give_way(worker, 60 * 1000);
	/* a hook's group commit holds the turn; the worker asks first, another hook next */
	for (round = 0; round < 5; round++) {
		next = 1;
		w = (writer){ .s = worker, .next = &next, .lock = &lock };
		h = (writer){ .s = other, .next = &next, .lock = &lock };
		assert_int_equal(pg_store_begin_write(hooks), 0);
		assert_int_equal(pthread_create(&w.thread, NULL, write_once, &w), 0);
		assert_true(writers_wait(1, 0));
		assert_int_equal(pthread_create(&h.thread, NULL, write_once, &h), 0);
		assert_true(writers_wait(1, 1));
		assert_int_equal(pg_store_end_write(hooks, 0), 0);
		pthread_join(h.thread, NULL);
		pthread_join(w.thread, NULL);
		assert_int_equal(w.err, 0);
		assert_int_equal(h.err, 0);
		/* the hook went first though it asked last; the worker after it */
		assert_int_equal(h.order, 1);
		assert_int_equal(w.order, 2);
	}

	/* with no other writer, the worker writes at once (a few ms of quiet) */
	next = 1;
	w.order = 0;
	assert_int_equal(pthread_create(&w.thread, NULL, write_once, &w), 0);
	pthread_join(w.thread, NULL);
	assert_int_equal(w.err, 0);
	assert_int_equal(w.order, 1);
	pg_store_free(worker);
	pg_store_free(other);
	pg_store_free(hooks);
}

/* Hooks writing one after another, with no pause, until *stop. */
typedef struct busy_hooks {
	pg_store *s;
	volatile int stop;
	unsigned long writes;
	int err;
} busy_hooks;

static void *write_on(void *p)
{
	busy_hooks *b = p;

	while (!b->stop && b->err == 0) {
		b->err = pg_store_end_write(b->s, pg_store_begin_write(b->s));
		b->writes++;
	}
	return NULL;
}

static void test_the_worker_waits_no_longer_than_its_limit(void **state)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pg_store *worker = NULL;
	busy_hooks b = { 0 };
	pthread_t thread;
	writer w;
	unsigned long before;
	uint64_t start, waited;
	int next = 1, i;

	(void)state;
	unlink(path);
	assert_int_equal(pg_store_open(&b.s, path), 0);
	assert_int_equal(pg_store_open(&worker, path), 0);
	pg_store_give_way(worker, 50);
	assert_int_equal(pthread_create(&thread, NULL, write_on, &b), 0);
	while (b.writes < 10)
		sleep_ms(1);
	before = b.writes;
	/*
	 * The hooks never pause: each of the worker's writes still gets its
	 * turn.  A minute only tells a worker starved for ever from one that
	 * waited its 50 ms on however loaded a machine: how long it waited is
	 * the clock's business, not this test's.
	 */
	for (i = 0; i < 3; i++) {
		w = (writer){ .s = worker, .next = &next, .lock = &lock };
		start = now_ms();
		assert_int_equal(pthread_create(&w.thread, NULL, write_once, &w), 0);
		while (!__atomic_load_n(&w.order, __ATOMIC_SEQ_CST) && now_ms() - start < 60 * 1000)
			sleep_ms(1);
		waited = now_ms() - start;
		if (waited >= 60 * 1000)
			b.stop = 1; /* it would wait for ever: let it write, then fail */
		pthread_join(w.thread, NULL);
		assert_int_equal(w.err, 0);
		assert_true(waited < 60 * 1000);
	}
	/* and the hooks wrote all along */
	assert_true(b.writes > before);
	b.stop = 1;
	pthread_join(thread, NULL);
	assert_int_equal(b.err, 0);
	pg_store_free(worker);
	pg_store_free(b.s);
}

static void test_the_worker_s_log_is_copied_after_its_turn(void **state)
{
	pg_store *worker = NULL;
	struct stat st;

	(void)state;
	unlink(path);
	assert_int_equal(pg_store_open(&worker, path), 0);
	pg_store_give_way(worker, 50);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size < 1000 * 4096);
	/* 1,200 pages of log in one commit: past SQLite's 1,000 */
	assert_int_equal(pg_store_begin_write(worker), 0);
	assert_int_equal(exec(worker, "CREATE TABLE filler (x);"
			      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
			      "  WHERE i < 1200) INSERT INTO filler SELECT randomblob(3000) FROM n"), 0);
	assert_int_equal(pg_store_end_write(worker, 0), 0);
	/* the end of the turn copied the log into the database */
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size >= 1200 * 4096);
	pg_store_free(worker);
}

/* The queue's order as "id id id". */
static const char *queue_order(pg_store *s)
{
	static char out[128];
	pg_job_list q;
	size_t i, len = 0;

	out[0] = '\0';
	assert_int_equal(pg_store_queue(&q, s), 0);
	for (i = 0; i < q.n; i++)
		len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%lld", i ? " " : "",
					(long long)q.items[i]->id);
	pg_job_list_release(&q);
	return out;
}

/*
 * The merge window's queue: a pull enters it when verify first accepts it,
 * behind those in it, keeps its place when tested again, leaves it when
 * decided; the maintainer moves it one place at a time and holds it.
 */
static void test_the_queue(void **state)
{
	pg_store *s = NULL;
	pg_buf ids = PG_BUF_INIT;
	pg_job_spec jobs[3];
	char order[64];
	pg_job *j = NULL;
	int64_t a, b, c;

	(void)state;
	jobs[0] = job("refs/tags/a");
	jobs[1] = job("refs/tags/b");
	jobs[2] = job("refs/tags/c");
	unlink(path);
	assert_int_equal(pg_store_open(&s, path), 0);
	assert_int_equal(add(s, &ids, "queue-1", "d-q", jobs, 3), 0);
	a = id_at(&ids, 0), b = id_at(&ids, 1), c = id_at(&ids, 2);
	/* verify accepts c first, then a, then b: the queue is in that order */
	assert_int_equal(set(s, c, PG_JOB_QUEUED, PG_JOB_VERIFIED, NULL), 0);
	assert_int_equal(set(s, a, PG_JOB_QUEUED, PG_JOB_VERIFIED, NULL), 0);
	assert_int_equal(set(s, b, PG_JOB_QUEUED, PG_JOB_VERIFIED, NULL), 0);
	snprintf(order, sizeof(order), "%lld %lld %lld", (long long)c, (long long)a, (long long)b);
	assert_string_equal(queue_order(s), order);
	/* b up: before a */
	assert_int_equal(pg_store_queue_move(s, b, -1), 0);
	snprintf(order, sizeof(order), "%lld %lld %lld", (long long)c, (long long)b, (long long)a);
	assert_string_equal(queue_order(s), order);
	assert_int_equal(pg_store_queue_move(s, c, -1), PG_ECONFLICT);
	assert_int_equal(pg_store_queue_move(s, a, 1), PG_ECONFLICT);
	assert_int_equal(pg_store_queue_move(s, 9999, 1), PG_ENOTFOUND);
	/* c tested, then tested again: its place stays */
	assert_int_equal(set(s, c, PG_JOB_VERIFIED, PG_JOB_MERGING, NULL), 0);
	assert_int_equal(set(s, c, PG_JOB_MERGING, PG_JOB_VERIFIED, NULL), 0);
	assert_string_equal(queue_order(s), order);
	/* held: still in the queue, marked */
	assert_int_equal(pg_store_queue_hold(s, b, true), 0);
	assert_int_equal(pg_store_get(&j, s, b), 0);
	assert_true(j->held);
	assert_null(j->conflict);
	assert_int_equal(j->conflict_with, 0);
	pg_job_free(j);
	/* a conflict found at its entry: recorded only while it is in the state said */
	assert_int_equal(pg_store_set_conflict(s, b, PG_JOB_VERIFIED, "conflicts with pull 1", c), 0);
	assert_int_equal(pg_store_set_conflict(s, b, PG_JOB_WAITING, "no", a), PG_ECONFLICT);
	pg_error_clear();
	assert_int_equal(pg_store_get(&j, s, b), 0);
	assert_string_equal(j->conflict, "conflicts with pull 1");
	assert_int_equal(j->conflict_with, c);
	pg_job_free(j);
	/* to the end, in one move; only from the state said */
	assert_int_equal(pg_store_queue_to_end(s, b, PG_JOB_WAITING), PG_ECONFLICT);
	pg_error_clear();
	assert_int_equal(pg_store_queue_to_end(s, b, PG_JOB_VERIFIED), 0);
	snprintf(order, sizeof(order), "%lld %lld %lld", (long long)c, (long long)a, (long long)b);
	assert_string_equal(queue_order(s), order);
	/* decided: out of the queue, and no longer held or moved there */
	assert_int_equal(set(s, b, PG_JOB_VERIFIED, PG_JOB_REJECTED, NULL), 0);
	snprintf(order, sizeof(order), "%lld %lld", (long long)c, (long long)a);
	assert_string_equal(queue_order(s), order);
	assert_int_equal(pg_store_queue_hold(s, b, false), PG_ENOTFOUND);
	assert_int_equal(pg_store_queue_move(s, b, -1), PG_ENOTFOUND);
	pg_error_clear();
	pg_store_free(s);
	pg_buf_release(&ids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deliveries_are_idempotent),
		cmocka_unit_test(test_meta),
		cmocka_unit_test(test_replays_and_open_twins),
		cmocka_unit_test(test_reports_are_bounded),
		cmocka_unit_test(test_claim_and_report),
		cmocka_unit_test(test_decisions_and_states),
		cmocka_unit_test(test_requeue_after_a_crash),
		cmocka_unit_test(test_the_notice_outbox),
		cmocka_unit_test(test_the_kcidb_outbox),
		cmocka_unit_test(test_counts_follow_every_move_and_the_upgrade),
		cmocka_unit_test(test_a_stand_in_s_run_is_marked_in_the_list_and_by_the_upgrade),
		cmocka_unit_test(test_a_damaged_row_is_an_error_not_a_default),
		cmocka_unit_test(test_every_field_reads_back_typed),
		cmocka_unit_test(test_the_upgrade_to_5_fills_signer_and_run_dir_from_the_reports),
		cmocka_unit_test(test_the_worker_gives_way_to_hooks),
		cmocka_unit_test(test_the_worker_waits_no_longer_than_its_limit),
		cmocka_unit_test(test_the_worker_s_log_is_copied_after_its_turn),
		cmocka_unit_test(test_the_queue),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
