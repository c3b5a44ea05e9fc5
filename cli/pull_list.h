/* pull_list.h - a file of pulls, one a line: gate --queue's queue and conflicts --ahead's pulls ahead. */
#ifndef PG_CLI_PULL_LIST_H
#define PG_CLI_PULL_LIST_H

#include "cli/cli.h"
#include "common/buf.h"
#include "common/oid.h"

typedef struct cli_pull_line {
	const char *repo, *tag;  /* point into the file's text */
	bool has_expect;         /* the line names the tag object its tag must be */
	pg_oid expect;
} cli_pull_line;

enum cli_pull_list_flags {
	CLI_PULLS_EXPECT = 1,    /* a line may end with its tag object's 40 hex digits */
	CLI_PULLS_EMPTY = 2,     /* a file that names no pull is a list of none */
};

/*
 * Read file: a pull a line, REPO TAG (with CLI_PULLS_EXPECT, REPO TAG
 * [TAG-OBJECT]), blank lines and # comments ignored.  noun names the file
 * in messages ("a queue", "an --ahead").  *lines (free()) point into text,
 * which holds the file.  0, or the exit status after a one-line error
 * ("error: FILE:LINE: why 'TEXT'", made safe): bad for a file that is not
 * such a list, PG_EXIT_UNDECIDED for one that cannot be read.
 */
int cli_read_pull_list(cli_pull_line **lines, size_t *n, pg_buf *text, const char *file,
		       const char *noun, unsigned flags, int bad);

#endif
