/* progress.c - progress events: the ETA and the one line every renderer shares. */
#include "common/progress.h"

#include <inttypes.h>

#include <time.h>

uint64_t pg_progress_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int64_t pg_progress_eta_s(const pg_progress *p)
{
	if (!p->total || !p->done || p->done > p->total || p->elapsed_ms < 1000)
		return -1;
	return (int64_t)((double)(p->total - p->done) * (double)p->elapsed_ms / (double)p->done /
			 1000.0 + 0.5);
}

static int duration(pg_buf *out, uint64_t s)
{
	if (s >= 3600)
		return pg_buf_printf(out, "%" PRIu64 " h %" PRIu64 " min", s / 3600, s % 3600 / 60);
	if (s >= 60)
		return pg_buf_printf(out, "%" PRIu64 " min %" PRIu64 " s", s / 60, s % 60);
	return pg_buf_printf(out, "%" PRIu64 " s", s);
}

int pg_progress_format(pg_buf *out, const pg_progress *p)
{
	int64_t eta = pg_progress_eta_s(p);
	int err;

	if (!p->done && !p->total && !p->bytes)
		return pg_buf_puts(out, p->line);
	if (p->total)
		err = pg_buf_printf(out, "%" PRIu64 "/%" PRIu64 " %s (%u%%)", p->done, p->total,
				    p->unit ? p->unit : "", p->done >= p->total ? 100u :
				    (unsigned)(p->done * 100 / p->total));
	else
		err = pg_buf_printf(out, "%" PRIu64 " %s", p->done, p->unit ? p->unit : "");
	if (err == 0 && p->bytes >= 1024 * 1024)
		err = pg_buf_printf(out, ", %.1f MiB", (double)p->bytes / (1024.0 * 1024.0));
	else if (err == 0 && p->bytes)
		err = pg_buf_printf(out, ", %.1f KiB", (double)p->bytes / 1024.0);
	if (err == 0 && p->elapsed_ms >= 1000 && (err = pg_buf_puts(out, ", ")) == 0)
		err = duration(out, p->elapsed_ms / 1000);
	if (err == 0 && eta >= 0 && (err = pg_buf_puts(out, ", about ")) == 0 &&
	    (err = duration(out, (uint64_t)eta)) == 0)
		err = pg_buf_puts(out, " left");
	return err;
}
