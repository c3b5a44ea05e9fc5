/* test_events.c - unit tests for the per-job progress rings that feed server-sent events. */
#include "tests/unit/unit.h"

#include "server/events.h"

#include <pthread.h>
#include <unistd.h>

static void test_post_and_read(void **state)
{
	pg_events *ev = NULL;
	pg_buf out = PG_BUF_INIT;
	uint64_t seq = 0;

	(void)state;
	assert_int_equal(pg_events_new(&ev), 0);
	pg_events_post(ev, 7, "state", NULL, "verifying");
	pg_events_post(ev, 7, "progress", "build", "CC \"lib/a.o\"\n\x01");
	pg_events_post(ev, 8, "progress", "boot", "other job");
	assert_int_equal(pg_events_read(ev, &out, 7, &seq, 0), 2);
	assert_int_equal(seq, 2);
	assert_non_null(strstr(out.ptr, "id: 1\nevent: state\ndata: {\"kind\":\"state\",\"stage\":\"\","
			       "\"text\":\"verifying\""));
	/* the text is JSON-escaped: quotes, newlines and controls cannot break the stream */
	assert_non_null(strstr(out.ptr, "id: 2\nevent: progress\ndata: {\"kind\":\"progress\","
			       "\"stage\":\"build\",\"text\":\"CC \\\"lib/a.o\\\"\\n\\u0001\""));
	assert_null(strstr(out.ptr, "other job"));
	/* nothing new: a timeout */
	pg_buf_clear(&out);
	assert_int_equal(pg_events_read(ev, &out, 7, &seq, 10), 0);
	assert_int_equal(out.len, 0);
	/* an unknown job has nothing */
	seq = 0;
	assert_int_equal(pg_events_read(ev, &out, 99, &seq, 0), 0);
	pg_events_free(ev);
	pg_buf_release(&out);
}

static void test_a_slow_reader_skips_ahead(void **state)
{
	pg_events *ev = NULL;
	pg_buf out = PG_BUF_INIT;
	uint64_t seq = 0;
	char line[32];
	size_t i;

	(void)state;
	assert_int_equal(pg_events_new(&ev), 0);
	for (i = 1; i <= PG_EVENTS_PER_JOB + 10; i++) {
		snprintf(line, sizeof(line), "line %zu", i);
		pg_events_post(ev, 1, "progress", "build", line);
	}
	assert_int_equal(pg_events_read(ev, &out, 1, &seq, 0), PG_EVENTS_PER_JOB);
	assert_int_equal(seq, PG_EVENTS_PER_JOB + 10);
	assert_null(strstr(out.ptr, "\"line 10\""));
	assert_non_null(strstr(out.ptr, "\"line 11\""));
	assert_non_null(strstr(out.ptr, "\"line 266\""));
	pg_events_free(ev);
	pg_buf_release(&out);
}

static void *poster(void *p)
{
	pg_events_post(p, 3, "state", NULL, "building");
	return NULL;
}

static void test_readers_wait_and_close(void **state)
{
	pg_events *ev = NULL;
	pg_buf out = PG_BUF_INIT;
	pthread_t t;
	uint64_t seq = 0;

	(void)state;
	assert_int_equal(pg_events_new(&ev), 0);
	/* a reader waits for the next event, however late its poster runs (a minute at most) */
	assert_int_equal(pthread_create(&t, NULL, poster, ev), 0);
	assert_int_equal(pg_events_read(ev, &out, 3, &seq, 60 * 1000), 1);
	pthread_join(t, NULL);
	assert_non_null(strstr(out.ptr, "building"));
	/* closing wakes it and every later read returns at once */
	assert_false(pg_events_closed(ev));
	pg_events_close(ev);
	assert_true(pg_events_closed(ev));
	pg_events_post(ev, 3, "state", NULL, "booting");
	assert_int_equal(pg_events_read(ev, &out, 3, &seq, 5000), 0);
	pg_events_free(ev);
	pg_buf_release(&out);
}

static void test_old_jobs_are_evicted(void **state)
{
	pg_events *ev = NULL;
	pg_buf out = PG_BUF_INIT;
	uint64_t seq = 0;
	int64_t j;

	(void)state;
	assert_int_equal(pg_events_new(&ev), 0);
	for (j = 1; j <= PG_EVENTS_JOBS + 1; j++)
		pg_events_post(ev, j, "state", NULL, "queued");
	/* the least recently used job made room */
	assert_int_equal(pg_events_read(ev, &out, 1, &seq, 0), 0);
	seq = 0;
	assert_int_equal(pg_events_read(ev, &out, PG_EVENTS_JOBS + 1, &seq, 0), 1);
	pg_events_free(ev);
	pg_buf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_post_and_read),
		cmocka_unit_test(test_a_slow_reader_skips_ahead),
		cmocka_unit_test(test_readers_wait_and_close),
		cmocka_unit_test(test_old_jobs_are_evicted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
