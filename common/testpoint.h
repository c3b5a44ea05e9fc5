/* testpoint.h - test-only fault points: a build for tests stops itself where a test asks it to. */
#ifndef PG_TESTPOINT_H
#define PG_TESTPOINT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * A test that must act at a known point of a run (kill it in the build,
 * move a ref while it approves) cannot guess when the run gets there: it
 * asks the run to stop itself there.  With PULLGATE_TEST_STOP=STAGE[:TEXT]
 * in the environment, the first point of STAGE whose text starts with TEXT
 * (any point of STAGE without ":TEXT") stops the whole process with
 * SIGSTOP, once; the test sees it stopped (state T in /proc/PID/stat), does
 * what it came to do, and kills it or lets it go on (SIGCONT).
 *
 * A test that must look at the service while a run is at a point (the
 * dashboard while it builds) holds the run's thread there instead: with
 * PULLGATE_TEST_HOLD=STAGE[:TEXT] and PULLGATE_TEST_HOLD_DIR=DIR, the first
 * thread to reach the point makes DIR/held and waits until DIR/release
 * exists (PULLGATE_TEST_PATIENCE seconds at most, 900 by default), once;
 * the rest of the process goes on.  A held service is ended with SIGKILL
 * (its shutdown would wait for the held thread).
 *
 * The points are the run's progress lines (pipeline's pg_run_progress) and
 * a few named places between them (approve: "branch-locked" when the
 * compare-and-swap first finds the branch locked, "before-cas", "after-cas";
 * reject: "before-lock", a maintainer's reject about to wait for an approval;
 * fetch: "object written", each object a local fetch copies into a tree,
 * "object written: commit" when it is a commit; claim: "stacked", a kernel
 * thread that claimed the queue's next pull, before it runs it; recheck:
 * "pull ID", a kernel thread about to run the queue's entry check again,
 * the resolutions having changed, ID the first pull it checks; kcidb:
 * "posted", a KCIDB document's POST answered, before its outcome is
 * recorded).
 *
 * A test of what a crash leaves (a child process that died reading a
 * hostile repository) makes one: with PULLGATE_TEST_CRASH=STAGE[:TEXT],
 * every process reaching the point dies of SIGSEGV there.
 *
 * A test of what a failing write leaves (a run's end the store could not
 * record) makes one fail: with PULLGATE_TEST_FAIL=STAGE[:TEXT], the first
 * PULLGATE_TEST_FAIL_TIMES points of STAGE (1 by default) whose text
 * starts with TEXT ask their caller to fail (pg_testfault is true).  The
 * store's write of a pull's state is "store", its text the state written;
 * an identity index's sort, "index" "run written", a run about to go to
 * its file (a build that fits in memory never gets there); a KCIDB
 * submission's try, "kcidb" "document", its document about to be made.
 *
 * A test of what waits for time (the log-in throttle) sets the clock
 * instead of sleeping: with PULLGATE_TEST_CLOCK=FILE, pg_test_clock_ms()
 * is the milliseconds FILE holds (read at each call), else now_ms.
 *
 * Only a build made for tests (-DPG_TEST_POINTS: make BUILD=test, and the
 * sanitizer build) has them; in the release and the .deb they are nothing
 * and the variables are never read.
 */
#ifdef PG_TEST_POINTS
void pg_testpoint(const char *stage, const char *text);
bool pg_testfault(const char *stage, const char *text);
uint64_t pg_test_clock_ms(uint64_t now_ms);
#define PG_TEST_POINTS_BUILT true
#else
static inline void pg_testpoint(const char *stage, const char *text)
{
	(void)stage;
	(void)text;
}
static inline bool pg_testfault(const char *stage, const char *text)
{
	(void)stage;
	(void)text;
	return false;
}
static inline uint64_t pg_test_clock_ms(uint64_t now_ms)
{
	return now_ms;
}
#define PG_TEST_POINTS_BUILT false
#endif

#endif
