/* entry.h - a pull entering the merge window's queue: its textual conflicts with the pulls ahead of it, in one sentence. */
#ifndef PG_SERVER_ENTRY_H
#define PG_SERVER_ENTRY_H

#include "common/buf.h"
#include "common/json.h"
#include "server/store.h"

/* The longest sentence kept: a pull may conflict in thousands of paths. */
#define PG_ENTRY_SENTENCE_MAX 2048

/*
 * Write the pulls ahead, first place first, as `pullgate conflicts
 * --ahead` reads them: "REPO TAG TAG-OBJECT" a line.  A pull whose verify
 * left no tag object is left out, and so is not in *used; used[i] says
 * whether ahead[i] was written (the child's positions count the lines).
 */
int pg_entry_ahead_file(pg_buf *out, bool *used, const pg_job *const *ahead, size_t n);

/*
 * Read what `pullgate conflicts --json` said about a pull (doc, untrusted)
 * into one sentence, its control characters stripped, at most
 * PG_ENTRY_SENTENCE_MAX bytes:
 *   "conflicts with pull 9 (tag) in fs/ext4/super.c: 2 hunks"
 *   "conflicts with pull 9 (a) in x.c: 1 hunk; with pull 11 (b) in y.c: not a text conflict"
 *   "conflicts by itself with master in x.c: 1 hunk"
 * and *with the first pull ahead it conflicts with that is not held (0:
 * none, or only with the branch or held pulls).  listed holds the ahead file's pulls in its order.
 * *sentence empty when it conflicts with nothing.  PG_EINVALID when doc
 * is not what the command writes.
 */
int pg_entry_sentence(pg_buf *sentence, int64_t *with, const pg_json *doc,
		      const pg_job *const *listed, size_t nlisted, const char *branch);

#endif
