/* help.h - the manual pages as plain text, embedded by scripts/gen-assets.sh (mk/man.mk). */
#ifndef PG_CLI_HELP_H
#define PG_CLI_HELP_H

#include "server/assets.h"

/* One page per scdoc source in docs/man/, named "pullgate-verify.1.txt" etc.; NUL-terminated data. */
extern const pg_asset cli_help_pages[];
extern const size_t cli_help_npages;

#endif
