#!/bin/sh
# 83-serve-store-busy.t - a store another connection keeps locked: a hook is answered 503 (try again), never 409, and nothing of it is kept; sent again once the lock is gone, it makes its pull.
#
# Before, SQLite's "database is locked" was the store's "conflict", the code
# of a delivery seen before with another body: the hook was refused for
# good (409) and the push lost.  The lock is taken here by another
# connection (sqlite3's BEGIN IMMEDIATE, held until the test lets it go),
# as an administrator's sqlite3 or a backup would hold it; the service
# waits its 10 s for it and then answers.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 9
serve_setup
serve_start
T2=hardening-v6.16-rc1-fix1-take2
DB="$SCRATCH/state/pullgate.db"

# lock: another connection takes the write lock and holds it until $SCRATCH/release exists
python3 -c 'import os, sqlite3, sys, time
db, held, release = sys.argv[1:4]
con = sqlite3.connect(db, isolation_level=None, timeout=60)
con.execute("BEGIN IMMEDIATE")
open(held, "w").close()
while not os.path.exists(release):
    time.sleep(0.05)
con.execute("ROLLBACK")
con.close()' "$DB" "$SCRATCH/held" "$SCRATCH/release" &
LOCKER=$!
TAP_CLEANUP="${TAP_CLEANUP:-} release_lock"
release_lock() { touch "$SCRATCH/release"; wait "$LOCKER" 2>/dev/null || true; }
wait_for test -e "$SCRATCH/held"

push_record "$SCRATCH/take2.json" "$T2"
hook push "$SCRATCH/take2.json" busy-1
is "$code" 503 "a hook while another connection holds the store's lock: 503, not 409"
like "$(cat "$SCRATCH/.hook.h")" "^Retry-After: 10" "with Retry-After"
like "$(printf '%s' "$out" | jq -r .error)" \
	"^store: .*database is locked \\(another connection held it for 10 s: try again\\)$" \
	"its one line says the store was locked, for how long, and to try again"
like "$(cat "$SCRATCH/serve.err")" "POST /hooks/push: store: .*database is locked" "the service's log says so"
is "$(sqlite3 "file:$DB?mode=ro" 'SELECT count(*) FROM deliveries' 2>/dev/null || echo unread)" 0 \
	"nothing of the delivery was kept"

release_lock
hook push "$SCRATCH/take2.json" busy-1
is "$code" 202 "sent again once the lock is gone, the same delivery is taken"
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
like "$ID" '^[0-9]+$' "and makes its pull ($ID)"
is "$(wait_state "$ID" waiting)" waiting "which is verified, built and booted as any other"
hook push "$SCRATCH/take2.json" busy-1
is "$code" 200 "a third send is the delivery received before: no new pull"
