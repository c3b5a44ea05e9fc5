/* kcidb.h - a gate run's checkout, build and tests as one KCIDB I/O schema v5 document (docs/kcidb.md). */
#ifndef PG_KCIDB_H
#define PG_KCIDB_H

#include "common/buf.h"
#include "report/report.h"

/* The schema version written: 5.0, which every receiver of a v5.x schema accepts. */
#define PG_KCIDB_MAJOR 5
#define PG_KCIDB_MINOR 0

#define PG_KCIDB_ORIGIN_DEFAULT "pullgate"
#define PG_KCIDB_ORIGIN_MAX 64

typedef struct pg_kcidb_opts {
	const char *origin;   /* the submitting CI system; NULL: PG_KCIDB_ORIGIN_DEFAULT */
	const char *repo_url; /* the pull's repository as announced; sent only when it is
				 an https:// or git:// URL, which KCIDB requires */
	const char *branch;   /* the integration branch the pull was merged for, or NULL */
	const char *subject;  /* the pull-request mail's subject, or NULL */
	const char *message_id; /* its Message-Id as it came ("<id>"), or NULL; sent only when
				   it is one msg-id (pg_mail_msgid), without its brackets */
	/*
	 * With console_given, the boot's console as the caller read it (a
	 * reader that must not trust the report's path): console_len bytes,
	 * or console NULL for none; console_cut says it is the start of a
	 * longer one (the boot test's misc says so).  Without it, the boot's
	 * provenance log is read.
	 */
	bool console_given;
	const char *console;
	size_t console_len;
	bool console_cut;
} pg_kcidb_opts;

/*
 * Whether origin is a KCIDB origin name: one or more of a-z, 0-9 and '_'
 * (the schema's pattern), at most PG_KCIDB_ORIGIN_MAX bytes.
 */
bool pg_kcidb_origin_valid(const char *origin);

/*
 * Append the id a run's checkout has in pg_kcidb_format's document:
 * "ORIGIN:TAGOBJECT", then "-on-BASE" when the run recorded its merge
 * (merge_base; NULL: none) (the same pull on the same base is the same
 * checkout, whichever run tested it); origin NULL is
 * PG_KCIDB_ORIGIN_DEFAULT.  From the ids alone, so that a reader with the
 * stored job's fields need not parse its report.  Only the origin's
 * characters and hex digits.  PG_EINVALID for an origin
 * pg_kcidb_origin_valid refuses (nothing appended); PG_ENOMEM.
 */
int pg_kcidb_checkout_id(pg_buf *out, const char *origin, const pg_oid *tag_object,
			 const pg_oid *merge_base);

/*
 * Append r as a KCIDB document: one checkout (the pull's commit at its
 * repository, valid once the merge stage decided), a build when the build
 * stage ran, and, when the boot stage ran, a test "boot" and one test per
 * KTAP leaf case read from the boot's console (its provenance log), with
 * path "suite.case": every name reduced to the schema's characters (the
 * name as printed kept in misc).  Nothing is null; what is not known is
 * left out.  A console that cannot be read leaves only the boot's test.
 * PG_EINVALID for an origin pg_kcidb_origin_valid refuses; PG_ENOMEM.
 */
int pg_kcidb_format(pg_buf *out, const pg_report *r, const pg_kcidb_opts *o);

#endif
