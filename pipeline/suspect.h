/* suspect.h - the pull ahead that a failure on a stack most likely comes with: the one whose changes the failure names. */
#ifndef PG_SUSPECT_H
#define PG_SUSPECT_H

#include "report/report.h"
#include "repo/repo.h"

#define PG_SUSPECT_MAX_TERMS 32        /* of each kind */
#define PG_SUSPECT_DIFF_BUDGET (4u << 20) /* bytes of a pull's changed lines read */

/*
 * What a failing run names, read from the findings that failed it
 * (severity error): the paths of its messages and details ("fs/x.c:12:
 * ...", a conflicted path, "EXPECTATION FAILED at lib/x_test.c:42"), and
 * the identifiers a compiler, ld or modpost quotes ('name', ‘name’,
 * `name', "name") or KUnit's
 * "Expected a == b, but" line holds (of at most 64 bytes).  At most
 * PG_SUSPECT_MAX_TERMS of each, each once.
 */
typedef struct pg_suspect_terms {
	char **paths;
	size_t npaths;
	char **idents;
	size_t nidents;
} pg_suspect_terms;

int pg_suspect_terms_of(pg_suspect_terms *out, const pg_report *failing);
void pg_suspect_terms_release(pg_suspect_terms *t);

/*
 * How many of the terms the diff from..to touches: a path it changes (a
 * term is that path, or it under "../" or an absolute directory: a
 * compiler may print "../lib/x.c"), an identifier on a line it adds or
 * removes (as a whole word; the first PG_SUSPECT_DIFF_BUDGET bytes of
 * lines are read, and a file larger than that is not, as a binary one).
 */
int pg_suspect_score(size_t *score, pg_repo *r, const pg_oid *from, const pg_oid *to,
		     const pg_suspect_terms *t);

/*
 * Of the merges of a stack, tops[1..n] (tops[i], the merge of the i-th
 * pull, onto tops[i-1]; tops[0] the head), the one whose pull's changes
 * (tops[i-1]..tops[i]) the failing run names the most terms of; of equals,
 * the lowest.  *suspect: its i, or 0 when none names any (and on an
 * error).  A hint only: pg_queue_bisect's runs decide.
 */
int pg_suspect_find(size_t *suspect, pg_repo *r, const pg_oid *tops, size_t n,
		    const pg_report *failing);

#endif
