#!/bin/sh
# 83-hostile-state.t - one service per state directory; what killed runs left in $PULLGATE_HOME/tmp is removed, a live one's never.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 13
serve_setup
T2=hardening-v6.16-rc1-fix1-take2
export FAKE_BUILD=sleep
TAP_CLEANUP="stop_fakes"
serve_start
push_record "$SCRATCH/take2.json" "$T2"
hook push "$SCRATCH/take2.json" run-1
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" building)" building "the first service runs a pull (its build hangs)"

# --- a second service on the same state directory ----------------------------------------------
set +e
PULLGATE_DATADIR="$TOP/tests/fakes" timeout "$PATIENCE" "$PULLGATE" serve --config "$CONFIG" --port 0 \
	>"$SCRATCH/second.out" 2>"$SCRATCH/second.err"
rc=$?
set -e
is "$rc" 3 "a second service on the same state directory refuses to start (exit 3)"
is "$(cat "$SCRATCH/second.err")" "error: serve: state directory '$SCRATCH/state' is in use by another pullgate serve (pid $SERVE_PID): one service per state directory" \
	"with one line naming the directory and the service that holds it"
is "$(cat "$SCRATCH/second.out")" "" "it never listened"
ok "$(kill -0 "$SERVE_PID" && [ "$(proc_state "$SERVE_PID")" != T ]; echo $?)" \
	"at once: it did not wait for the first service, which still runs"
get "$URL/api/pulls/$ID"
is "$(printf '%s' "$out" | jq -r '"\(.state) \(.attempts)"')" "building 1" \
	"the first service's running pull was not queued again: it runs once"
serve_stop
stop_fakes
unset FAKE_BUILD

# --- what a killed run left in $PULLGATE_HOME/tmp ---------------------------------------------------
mkdir -p "$PULLGATE_HOME/tmp/gpg-AbC123/private-keys-v1.d" "$PULLGATE_HOME/tmp/gpg-xyz789"
echo x >"$PULLGATE_HOME/tmp/gpg-AbC123/pubring.kbx"
serve_start
# (the first service's pull resumes at once, and its verification may have a home there already)
is "$(ls "$PULLGATE_HOME/tmp" | grep -c -e '^gpg-AbC123$' -e '^gpg-xyz789$' || true)" 0 \
	"a service that starts alone removes the temporary homes killed runs left"
like "$(cat "$SCRATCH/serve.err")" "removed 2 temporary directories left by a killed run" "and says so"
# it ends before tmp is checked again, so that no live verification of ours has a home there
is "$(wait_state "$ID" waiting rejected error)" waiting "the interrupted pull, resumed, runs to the end"
serve_stop

# another pullgate that holds a share of tmp (here flock, as a live verify does) keeps its homes
mkdir -p "$PULLGATE_HOME/tmp/gpg-live01"
(exec 9>>"$PULLGATE_HOME/tmp.lock" && flock -s 9 && : >"$SCRATCH/holding" && exec sleep 100000) \
	>/dev/null 2>&1 &
HOLDER=$!
TAP_CLEANUP="$TAP_CLEANUP stop_holder"
stop_holder() { kill "$HOLDER" 2>/dev/null || true; }
wait_for test -e "$SCRATCH/holding"
serve_start
is "$(ls "$PULLGATE_HOME/tmp")" "gpg-live01" "while another process uses tmp, nothing of it is removed"
serve_stop
kill "$HOLDER" 2>/dev/null || true
wait "$HOLDER" 2>/dev/null || true
serve_start
is "$(ls "$PULLGATE_HOME/tmp")" "" "once it is gone, the next start removes what it left"
serve_stop

# verify and gate clean up before they make their own
mkdir -p "$PULLGATE_HOME/tmp/gpg-old001"
run "$PULLGATE" verify --policy "$SCRATCH/policy.yaml" "$KREPO" "$T2"
is "$rc" 0 "a verification runs"
is "$(ls "$PULLGATE_HOME/tmp")" "" "and removed what a killed one left, and its own home"
