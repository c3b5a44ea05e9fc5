/* ktap.h - parse a kernel console log: KTAP/KUnit results, crashes, splats and boot time. */
#ifndef PG_KTAP_H
#define PG_KTAP_H

#include "common/buf.h"
#include "pipeline/splat.h"

/*
 * The log is a serial console capture of a kernel boot: KTAP v1 (and TAP
 * 13/14) lines as KUnit prints them, interleaved with other kernel
 * messages, each possibly behind a console prefix ("<6>", "[    1.234567] ",
 * "[    T1] ").  Nesting is read from the indentation, four spaces a level.
 *
 * Counts are of leaf tests (a test with subtests, such as a suite or a
 * parameterised case, is counted through its children).  "crashed" counts
 * every test that was started or planned ("1..N") but has no result,
 * because the log ended (panic, hang, kill) or a new block began first;
 * each gets a synthetic entry named "#<number>".
 *
 * The parser never fails on malformed input: it skips what it does not
 * understand.  Everything it keeps is valid UTF-8 without NULs, and the
 * counts of tests, splats (pipeline/splat.h), depth and line lengths are
 * capped (see below); past a cap it sets truncated.
 */

#define PG_KTAP_MARKER "pullgate-init: done"  /* printed by qemu-images/init.c */
#define PG_KTAP_NONCE " nonce="             /* then the nonce of the kernel command line */
#define PG_KTAP_NONCE_MAX 64
#define PG_KTAP_MAX_TESTS 20000
#define PG_KTAP_MAX_DEPTH 16
#define PG_KTAP_MAX_LINE 4096       /* longer lines are cut for parsing */
#define PG_KTAP_DIAG_LINES 8
#define PG_KTAP_DIAG_MAX 1024
#define PG_KTAP_DIAG_TOTAL (64u << 10)

enum pg_ktap_status {
	PG_KTAP_PASS,
	PG_KTAP_FAIL,
	PG_KTAP_SKIP,
	PG_KTAP_CRASHED
};

typedef struct pg_ktap_test {
	char *name;       /* as printed; "#N" for a test with no result */
	char *path;       /* names of the enclosing tests and its own, joined by '.' */
	unsigned depth;   /* 0 for a top-level test (KUnit: a suite) */
	long parent;      /* index into tests[] of the enclosing test, or -1 */
	enum pg_ktap_status status;
	char *reason;     /* the SKIP reason or why it crashed; NULL otherwise */
	/*
	 * For a failed test, what KUnit printed of why just before its result:
	 * from its "EXPECTATION FAILED at FILE:LINE" (or "ASSERTION FAILED
	 * at") on, at most PG_KTAP_DIAG_LINES lines and PG_KTAP_DIAG_MAX - 1
	 * bytes in all, sanitized, joined by newlines; NULL otherwise, and
	 * once a boot's diagnostics hold PG_KTAP_DIAG_TOTAL bytes.
	 */
	char *diagnostic;
	bool has_subtests;
	bool own_failure; /* failed or crashed while no test below it did: a failure only it shows */
	size_t line;      /* 1-based line of its result, or of where it started */
} pg_ktap_test;

typedef struct pg_boot_result {
	pg_ktap_test *tests;  /* in the order their results (or starts) appear */
	size_t ntests;
	pg_splat *splats;     /* in console order; see pipeline/splat.h */
	size_t nsplats;
	size_t passed, failed, skipped, crashed;
	double boot_time;     /* seconds at the marker (else the power-off
				 line, else the last timestamp); -1 if none */
	bool saw_ktap;        /* a KTAP/TAP version line or a result was seen */
	bool saw_marker;      /* PG_KTAP_MARKER appeared */
	bool powered_off;     /* "reboot: Power down" appeared */
	bool truncated;       /* a cap was hit; counts stay exact */
	size_t dropped;       /* results past the caps (tests, depth): counted or seen, not kept */
	size_t stray;         /* lines holding "not ok" that are no result the parser read */
	size_t stray_line;    /* the first of them; 0: none */

	long plan;            /* the top-level plan "1..N" (KUnit: one per suite); -1: none */
	size_t plans;         /* top-level plans seen: more than one is two runs in one log */
	size_t top_results;   /* results that arrived at the top level */
	char *marker_nonce;   /* what followed PG_KTAP_NONCE on the first marker line; NULL: none */
	bool markers_differ;  /* a later marker line carried another nonce (or none) */
	size_t marker_line;   /* the first marker line; 0: none */
	size_t poweroff_line; /* the last "reboot: Power down" line; 0: none */
} pg_boot_result;

/*
 * Parse log[0..len) into a new result in *out, which the caller frees with
 * pg_boot_result_free().  Fails only with PG_ENOMEM (or PG_EINVALID for a
 * NULL out); garbage input gives an empty result.
 */
int pg_ktap_parse(pg_boot_result **out, const char *log, size_t len);

void pg_boot_result_free(pg_boot_result *r);

/*
 * What the console fails to prove about the boot it captured, one line
 * each appended to why (may be NULL), and how many: no KTAP output, no
 * top-level plan or more than one, a plan whose results did not all
 * arrive, no test passed, no init marker, a marker without nonce (when
 * nonce is given; NULL accepts any marker, as `pullgate ktap` without
 * --nonce does), markers that disagree, no power-off after the marker.
 * Failed and crashed tests and splats are results, not gaps: the caller
 * judges them (against a base, say).  Negative only for PG_ENOMEM.
 */
int pg_boot_evidence_gaps(pg_buf *why, const pg_boot_result *r, const char *nonce);

/*
 * The one judge of a console: every reason it is not a good boot, in this
 * order: each evidence gap (pg_boot_evidence_gaps, with nonce), each own
 * failure (a failed or crashed test no test below it explains, at any
 * depth: a suite that says "not ok" over passing cases, a suite whose
 * result never came, a case whose log held a block of its own), each
 * failure it cannot judge (results past a cap, a "not ok" line that is no
 * result it read, failures counted that no test names), and each splat.
 * It fails closed: a console holding "not ok" or a crash anywhere has a
 * problem.  The gate (pipeline/evidence.c) and `pullgate ktap` both judge
 * through it.  fn (may be NULL) is called for each; a negative return of
 * fn stops the walk and is returned.  Returns how many problems there are.
 */
enum pg_ktap_problem_kind {
	PG_KTAP_GAP,       /* text: what the console fails to prove */
	PG_KTAP_FAILURE,   /* test: an own failure */
	PG_KTAP_UNJUDGED,  /* text: failures that no test result shows */
	PG_KTAP_SPLAT      /* splat */
};

typedef struct pg_ktap_problem {
	enum pg_ktap_problem_kind kind;
	const char *text;
	const pg_ktap_test *test;
	const pg_splat *splat;
} pg_ktap_problem;

typedef int (*pg_ktap_problem_fn)(void *ctx, const pg_ktap_problem *p);

int pg_ktap_problems(const pg_boot_result *r, const char *nonce, pg_ktap_problem_fn fn,
		     void *ctx);

/*
 * True when pg_ktap_problems finds none (any marker nonce): a complete
 * boot, at least one test passed, none failed or crashed at any depth,
 * nothing past a cap, and no splat.  Skips are allowed.
 */
bool pg_boot_result_ok(const pg_boot_result *r);

/*
 * A top-level test (KUnit: a suite) and the leaf results below it, counted
 * as the result's own counts are.  name is borrowed from the result.
 */
typedef struct pg_ktap_suite {
	const char *name;
	size_t test;          /* its index in tests[] */
	size_t passed, failed, skipped, crashed;
} pg_ktap_suite;

/* The suites of r in console order; *out is the caller's to free(). */
int pg_ktap_suites(pg_ktap_suite **out, size_t *n, const pg_boot_result *r);

const char *pg_ktap_status_name(enum pg_ktap_status s);   /* "pass", ... */

/*
 * Append a human-readable report: one line per leaf test, one per splat,
 * then the boot line and, last, "ktap: N passed, N failed, N skipped".
 * The text comes from the log: sanitize it before it reaches a terminal.
 */
int pg_ktap_render_text(pg_buf *out, const pg_boot_result *r);

/* Append the result as one JSON object (see docs/kernel.md). */
int pg_ktap_render_json(pg_buf *out, const pg_boot_result *r);

#endif
