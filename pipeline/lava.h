/* lava.h - a LAVA job's log read back as the console it recorded, for the KTAP parser. */
#ifndef PG_LAVA_H
#define PG_LAVA_H

#include "common/buf.h"

/*
 * LAVA's job log (api/v0.2/jobs/ID/logs/, output.yaml) is a YAML list
 * with one record a line, each a flow mapping that is also JSON:
 *   - {"dt": "2026-12-03T22:00:00.000000", "lvl": "target", "msg": "ok 1 pullgate"}
 * lava-run, the dispatcher, prints the same records without the "- ".
 * The device's console is the "target" and "feedback" records' messages,
 * in order (feedback is what the dispatcher reads from the device outside
 * an action, such as the end of the boot after a test monitor stopped);
 * the dispatcher's own records (info, debug, input, results) are not
 * console.  A backslash before a '"' is taken off, as the dispatcher's
 * console logger adds one before every '"' the device printed.  Each
 * target message is appended to out as one line; a line that is no such
 * record is skipped.  0, or PG_ENOMEM / PG_ETOOBIG (out's cap).  *records
 * (may be NULL) gets how many console lines were found: none means the
 * log is not LAVA's or the device printed nothing.
 */
int pg_lava_console(pg_buf *out, size_t *records, const char *log, size_t len);

#endif
