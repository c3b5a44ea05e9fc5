/* events.c - per-job rings of progress events under one mutex and condition variable. */
#include "server/events.h"
#include "common/error.h"
#include "common/json.h"
#include "server/clock.h"

#include <pthread.h>
#include <time.h>

typedef struct event {
	uint64_t seq;
	char kind[16];
	char stage[16];
	char text[PG_EVENTS_LINE_MAX];
	int64_t time;
	bool numbers;       /* a progress event with the fields below */
	bool transient;
	uint64_t done, total, elapsed_ms;
	int64_t eta_s;
} event;

typedef struct ring {
	int64_t job;        /* 0: unused */
	uint64_t next;      /* sequence number of the next event (first is 1) */
	uint64_t used;      /* when this ring last took an event, for eviction */
	event ev[PG_EVENTS_PER_JOB];
} ring;

struct pg_events {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool closed;
	uint64_t clock;
	uint64_t generation; /* the queue's: pg_events_queue_changed */
	ring rings[PG_EVENTS_JOBS];
};

int pg_events_new(pg_events **out)
{
	pg_events *ev = calloc(1, sizeof(*ev));
	pthread_condattr_t attr;

	*out = NULL;
	if (!ev)
		return pg_error_oom();
	pthread_mutex_init(&ev->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&ev->cond, &attr);
	pthread_condattr_destroy(&attr);
	*out = ev;
	return 0;
}

void pg_events_free(pg_events *ev)
{
	if (!ev)
		return;
	pthread_cond_destroy(&ev->cond);
	pthread_mutex_destroy(&ev->lock);
	free(ev);
}

static ring *find(pg_events *ev, int64_t job, bool create)
{
	ring *victim = &ev->rings[0];
	size_t i;

	for (i = 0; i < PG_EVENTS_JOBS; i++) {
		if (ev->rings[i].job == job)
			return &ev->rings[i];
		if (ev->rings[i].used < victim->used)
			victim = &ev->rings[i];
	}
	if (!create)
		return NULL;
	memset(victim, 0, sizeof(*victim));
	victim->job = job;
	victim->next = 1;
	return victim;
}

static void post(pg_events *ev, int64_t job, const char *kind, const char *stage,
		 const char *text, const pg_progress *p)
{
	ring *r;
	event *e;

	pthread_mutex_lock(&ev->lock);
	r = find(ev, job, true);
	e = &r->ev[r->next % PG_EVENTS_PER_JOB];
	e->numbers = p != NULL;
	if (p) {
		e->transient = p->transient;
		e->done = p->done;
		e->total = p->total;
		e->elapsed_ms = p->elapsed_ms;
		e->eta_s = pg_progress_eta_s(p);
	}
	e->seq = r->next++;
	r->used = ++ev->clock;
	snprintf(e->kind, sizeof(e->kind), "%s", kind);
	snprintf(e->stage, sizeof(e->stage), "%s", stage ? stage : "");
	snprintf(e->text, sizeof(e->text), "%s", text ? text : "");
	e->time = (int64_t)time(NULL);
	if (!strcmp(kind, "state"))
		ev->generation++;
	pthread_cond_broadcast(&ev->cond);
	pthread_mutex_unlock(&ev->lock);
}

void pg_events_queue_changed(pg_events *ev)
{
	pthread_mutex_lock(&ev->lock);
	ev->generation++;
	pthread_cond_broadcast(&ev->cond);
	pthread_mutex_unlock(&ev->lock);
}

uint64_t pg_events_queue_generation(pg_events *ev)
{
	uint64_t g;

	pthread_mutex_lock(&ev->lock);
	g = ev->generation;
	pthread_mutex_unlock(&ev->lock);
	return g;
}

int pg_events_queue_wait(pg_events *ev, uint64_t *gen, unsigned timeout_ms)
{
	struct timespec until;
	int moved = 0;

	pg_monotonic_after(&until, timeout_ms);
	pthread_mutex_lock(&ev->lock);
	while (!ev->closed && ev->generation == *gen)
		if (pthread_cond_timedwait(&ev->cond, &ev->lock, &until) != 0)
			break;
	if (!ev->closed && ev->generation != *gen) {
		*gen = ev->generation;
		moved = 1;
	}
	pthread_mutex_unlock(&ev->lock);
	return moved;
}

void pg_events_post(pg_events *ev, int64_t job, const char *kind, const char *stage,
		    const char *text)
{
	post(ev, job, kind, stage, text, NULL);
}

void pg_events_post_progress(pg_events *ev, int64_t job, const pg_progress *p)
{
	post(ev, job, "progress", p->stage, p->line, p);
}

static int format(pg_buf *out, const event *e)
{
	pg_json_writer *w = NULL;
	size_t len = out->len;
	int err;

	if ((err = pg_json_writer_new(&w)) < 0)
		return err;
	pg_json_put_str(w, "kind", e->kind);
	pg_json_put_str(w, "stage", e->stage);
	/* made valid UTF-8: a line cut at the cap may end inside a sequence */
	pg_json_put_str(w, "text", e->text);
	pg_json_put_int(w, "time", e->time);
	if (e->numbers) {
		pg_json_put_bool(w, "transient", e->transient);
		pg_json_put_int(w, "done", (int64_t)e->done);
		pg_json_put_int(w, "total", (int64_t)e->total);
		pg_json_put_int(w, "elapsed_ms", (int64_t)e->elapsed_ms);
		pg_json_put_int(w, "eta_s", e->eta_s);
	}
	if ((err = pg_buf_printf(out, "id: %llu\nevent: %s\ndata: ", (unsigned long long)e->seq,
				 e->kind)) < 0 ||
	    (err = pg_json_write(out, w, PG_JSON_COMPACT)) < 0 ||
	    (err = pg_buf_puts(out, "\n\n")) < 0)
		pg_buf_truncate(out, len);
	pg_json_writer_free(w);
	return err;
}

static int append_after(pg_events *ev, pg_buf *out, int64_t job, uint64_t *seq)
{
	ring *r = find(ev, job, false);
	uint64_t first;
	int n = 0;

	if (!r)
		return 0;
	first = r->next > PG_EVENTS_PER_JOB ? r->next - PG_EVENTS_PER_JOB : 1;
	if (*seq + 1 < first)
		*seq = first - 1; /* fell behind: skip what was overwritten */
	while (*seq + 1 < r->next) {
		const event *e = &r->ev[(*seq + 1) % PG_EVENTS_PER_JOB];

		if (format(out, e) < 0)
			break;
		(*seq)++;
		n++;
	}
	return n;
}

int pg_events_read(pg_events *ev, pg_buf *out, int64_t job, uint64_t *seq, unsigned timeout_ms)
{
	struct timespec until;
	int n = 0;

	pg_monotonic_after(&until, timeout_ms);
	pthread_mutex_lock(&ev->lock);
	while (!ev->closed && (n = append_after(ev, out, job, seq)) == 0)
		if (pthread_cond_timedwait(&ev->cond, &ev->lock, &until) != 0)
			break;
	if (ev->closed)
		n = 0;
	pthread_mutex_unlock(&ev->lock);
	return n;
}

void pg_events_close(pg_events *ev)
{
	pthread_mutex_lock(&ev->lock);
	ev->closed = true;
	pthread_cond_broadcast(&ev->cond);
	pthread_mutex_unlock(&ev->lock);
}

bool pg_events_closed(pg_events *ev)
{
	bool c;

	pthread_mutex_lock(&ev->lock);
	c = ev->closed;
	pthread_mutex_unlock(&ev->lock);
	return c;
}
