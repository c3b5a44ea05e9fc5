/* test_pagefile.c - random reads through the block cache: the file's bytes, across blocks, past the end, mapped only for a pass. */
#include "tests/unit/unit.h"

#include "common/buf.h"
#include "common/error.h"
#include "common/pagefile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SIZE (PG_PAGEFILE_BLOCK * 3000 + 123)

typedef struct fixture {
	char path[64];
	unsigned char *bytes;
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	uint64_t x = 0x243f6a8885a308d3ULL;
	size_t i;
	int fd;

	assert_non_null(f);
	assert_non_null(f->bytes = malloc(SIZE));
	for (i = 0; i < SIZE; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		f->bytes[i] = (unsigned char)x;
	}
	snprintf(f->path, sizeof(f->path), "/tmp/pg-test-pagefile-XXXXXX");
	assert_true((fd = mkstemp(f->path)) >= 0);
	assert_int_equal(write(fd, f->bytes, SIZE), SIZE);
	close(fd);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;

	unlink(f->path);
	free(f->bytes);
	free(f);
	return 0;
}

/*
 * The KiB of path's mappings resident in this process (/proc/self/smaps),
 * and whether it is mapped at all.
 */
static size_t resident_kb(const char *path, bool *mapped)
{
	FILE *m = fopen("/proc/self/smaps", "r");
	char line[512];
	bool in = false;
	size_t kb = 0, v, lo, hi;

	assert_non_null(m);
	*mapped = false;
	while (fgets(line, sizeof(line), m)) {
		if (sscanf(line, "%zx-%zx ", &lo, &hi) == 2) {
			in = strstr(line, path) != NULL;
			*mapped |= in;
		} else if (in && sscanf(line, "Rss: %zu kB", &v) == 1) {
			kb += v;
		}
	}
	fclose(m);
	return kb;
}

/*
 * Reads all over the file, with a cache of `blocks`: always the file's
 * bytes.  With `pass`, the file is mapped for the reads of the middle third
 * (resident then) and let go of after them (nothing resident, not mapped).
 * Whether it is mapped after the reads: outside a pass, once the blocks
 * read reach a quarter of the file's (a read of up to 300 bytes reads one
 * or two).
 */
static bool check_reads(const fixture *f, size_t blocks, size_t nreads, bool pass)
{
	pg_pagefile *p = NULL;
	unsigned char got[300];
	uint64_t x = 88172645463325252ULL;
	size_t i;
	bool mapped;

	assert_int_equal(pg_pagefile_open(&p, f->path, blocks), 0);
	assert_true(pg_pagefile_size(p) == SIZE);
	for (i = 0; i < nreads; i++) {
		size_t len, off;

		if (pass && i == nreads / 3)
			pg_pagefile_map(p);
		if (pass && i == 2 * nreads / 3) {
			assert_true(resident_kb(f->path, &mapped) > 0);
			assert_true(mapped);
			pg_pagefile_let_go(p);
			assert_int_equal(resident_kb(f->path, &mapped), 0);
			assert_false(mapped);
			pg_pagefile_let_go(p); /* twice: nothing */
		}
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		len = 1 + (size_t)(x % sizeof(got));
		off = (size_t)((x >> 16) % (SIZE - len + 1));
		/* now and then across a block boundary on purpose */
		if (i % 7 == 0 && off > PG_PAGEFILE_BLOCK)
			off = (off / PG_PAGEFILE_BLOCK) * PG_PAGEFILE_BLOCK - 5;
		if (off + len > SIZE)
			off = SIZE - len;
		assert_int_equal(pg_pagefile_read(p, off, got, len), 0);
		assert_memory_equal(got, f->bytes + off, len);
	}
	(void)resident_kb(f->path, &mapped);
	/* the last byte, and nothing past it */
	assert_int_equal(pg_pagefile_read(p, SIZE - 1, got, 1), 0);
	assert_int_equal(got[0], f->bytes[SIZE - 1]);
	assert_int_equal(pg_pagefile_read(p, SIZE - 1, got, 2), PG_EINVALID);
	assert_int_equal(pg_pagefile_read(p, SIZE + 10, got, 1), PG_EINVALID);
	assert_int_equal(pg_pagefile_read(p, UINT64_MAX - 1, got, 4), PG_EINVALID);
	pg_pagefile_free(p);
	return mapped;
}

/* A quarter of the file's 3,001 blocks is 750: 300 reads read at most 600. */
static void test_sparse_reads_stay_in_the_cache(void **state)
{
	/* one slot: every read past a block misses */
	assert_false(check_reads(*state, 1, 300, false));
	assert_false(check_reads(*state, 64, 300, false));
}

static void test_dense_reads_map_it(void **state)
{
	/* far more blocks than the cache holds or a quarter of the file */
	assert_true(check_reads(*state, 16, 40000, false));
}

/*
 * Another share: a sixteenth of 3,001 blocks is 187, less than the least
 * (256); reads one block at a time map it at the 256th block read and not
 * before.
 */
static void test_another_share_maps_it_sooner(void **state)
{
	fixture *f = *state;
	pg_pagefile *p = NULL;
	unsigned char got[1];
	size_t i;
	bool mapped;

	assert_int_equal(pg_pagefile_open(&p, f->path, 1), 0);
	pg_pagefile_map_after(p, 16);
	for (i = 0; i < 300; i++) {
		/* each read a block of its own: every one a miss */
		assert_int_equal(pg_pagefile_read(p, (uint64_t)(i * 7 % 3000) * PG_PAGEFILE_BLOCK,
						  got, 1), 0);
		assert_int_equal(got[0], f->bytes[(i * 7 % 3000) * PG_PAGEFILE_BLOCK]);
		(void)resident_kb(f->path, &mapped);
		assert_true(mapped == (i >= 256));
	}
	pg_pagefile_free(p);
}

static void test_a_pass_maps_it_and_lets_it_go(void **state)
{
	/* the 100 reads after the pass are counted afresh: not mapped again */
	assert_false(check_reads(*state, 1, 300, true));
	assert_true(check_reads(*state, 16, 40000, true));
}

static void test_peek_stops_at_a_block_end(void **state)
{
	fixture *f = *state;
	pg_pagefile *p = NULL;
	const unsigned char *at;
	size_t got;

	assert_int_equal(pg_pagefile_open(&p, f->path, 8), 0);
	assert_int_equal(pg_pagefile_peek(&at, &got, p, PG_PAGEFILE_BLOCK - 10, 100), 0);
	assert_int_equal(got, 10);
	assert_memory_equal(at, f->bytes + PG_PAGEFILE_BLOCK - 10, 10);
	assert_int_equal(pg_pagefile_peek(&at, &got, p, SIZE, 100), 0);
	assert_int_equal(got, 0);
	pg_pagefile_free(p);
}

static void test_open_errors(void **state)
{
	pg_pagefile *p = NULL;

	(void)state;
	assert_int_equal(pg_pagefile_open(&p, "/nonexistent/file", 8), PG_ENOTFOUND);
	assert_null(p);
	assert_int_equal(pg_pagefile_open(&p, "/tmp", 8), PG_EINVALID);
	assert_null(p);
	pg_pagefile_free(NULL);
}

/* A FIFO or a device where a commit-graph or an index should be: refused at once (the alarm ends a wait). */
static void test_open_refuses_a_fifo_and_a_device(void **state)
{
	char dir[] = "/tmp/pg-pagefile-XXXXXX", fifo[64];
	pg_pagefile *p = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/graph", dir);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	alarm(20);
	assert_int_equal(pg_pagefile_open(&p, fifo, 8), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "is a FIFO, not a regular file"));
	assert_int_equal(pg_pagefile_open(&p, "/dev/zero", 8), PG_EINVALID);
	assert_non_null(strstr(pg_error_last(), "is a device, not a regular file"));
	alarm(0);
	assert_null(p);
	unlink(fifo);
	rmdir(dir);
	pg_error_clear();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sparse_reads_stay_in_the_cache),
		cmocka_unit_test(test_dense_reads_map_it),
		cmocka_unit_test(test_another_share_maps_it_sooner),
		cmocka_unit_test(test_a_pass_maps_it_and_lets_it_go),
		cmocka_unit_test(test_peek_stops_at_a_block_end),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_open_refuses_a_fifo_and_a_device),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
