#!/bin/sh
# 84-hostile-fetch.t - a repository that accepts the connection and never answers: every fetch has a deadline, and a stop stops it.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 14
python3 "$TOP/tests/lib/hostile.py" blackhole "$SCRATCH/port" &
HOLE=$!
TAP_CLEANUP="kill_hole"
kill_hole() { kill "$HOLE" 2>/dev/null || true; }
wait_for test -s "$SCRATCH/port"
P=$(cat "$SCRATCH/port")
# accepted: how many connections the silent server has taken
accepted() { cat "$SCRATCH/port.accepted" 2>/dev/null || echo 0; }
accepted_more() { [ "$(accepted)" -gt "$1" ]; }
printf 'limits:\n  fetch-timeout-seconds: 2\n' >"$SCRATCH/short.yaml"

# --- the command line: each kind of URL ends at the deadline ------------------------------------
# (timeout, a test's patience, would end a verify that waited on: exit 124, not 3)
for scheme in git http https; do
	u="$scheme://127.0.0.1:$P/linux.git"
	before=$(accepted)
	run timeout "$PATIENCE" "$PULLGATE" verify --policy "$SCRATCH/short.yaml" --upstream "$u" "$u" v1
	is "$rc:$err" "3:error: fetch 'refs/tags/v1' from '$u': no complete answer within 2 s (the policy's fetch-timeout-seconds)" \
		"a $scheme:// server that never answers: could not decide (exit 3), saying why"
	ok "$(accepted_more "$before"; echo $?)" "at its own deadline, after the server took the connection"
done

# --- a URL is fetched as written: git's url.*.insteadOf does not send it elsewhere -------------------
# (rewritten to a port nothing listens on, the fetch would fail at once: "failed to connect")
mkdir -p "$SCRATCH/insteadof"
printf '[url "git://127.0.0.1:1/"]\n\tinsteadOf = git://127.0.0.1:%s/\n' "$P" \
	>"$SCRATCH/insteadof/.gitconfig"
u="git://127.0.0.1:$P/linux.git"
before=$(accepted)
run env HOME="$SCRATCH/insteadof" timeout "$PATIENCE" "$PULLGATE" verify --policy "$SCRATCH/short.yaml" \
	--upstream "$u" "$u" v1
is "$rc:$err" "3:error: fetch 'refs/tags/v1' from '$u': no complete answer within 2 s (the policy's fetch-timeout-seconds)" \
	"a user's url.*.insteadOf does not rewrite the URL given"
ok "$(accepted_more "$before"; echo $?)" "the server the URL names took the connection"

# --- the service: the pull ends in error, the worker is free again ----------------------------------
serve_setup
sed -i "s|^  map:$|&\n    hole/linux: git://127.0.0.1:$P/linux.git|" "$CONFIG"
sed -i "s|^repositories:$|&\n  - 'git://127.0.0.1:*/*'|" "$SCRATCH/policy.yaml"
printf 'limits:\n  fetch-timeout-seconds: 3\n' >>"$SCRATCH/policy.yaml"
serve_start
cat >"$SCRATCH/hole.json" <<EOR
{ "repo": "hole/linux", "changes": [ { "ref": "refs/tags/v1",
  "old": "$(printf '0%.0s' $(seq 40))", "new": "$(printf '1%.0s' $(seq 40))" } ] }
EOR
hook push "$SCRATCH/hole.json" hole-1
is "$code" 202 "a push naming the silent repository is queued"
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" error rejected verified)" error "the pull ends in error at the fetch deadline"
get "$URL/api/pulls/$ID"
like "$(printf '%s' "$out" | jq -r .message)" "no complete answer within 3 s" "saying the fetch timed out"
serve_stop

# --- SIGTERM stops a fetch that would wait much longer -----------------------------------------------
sed -i 's/fetch-timeout-seconds: 3$/fetch-timeout-seconds: 600/' "$SCRATCH/policy.yaml"
serve_start
before=$(accepted)
hook push "$SCRATCH/hole.json" hole-2
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
wait_state "$ID" verifying >/dev/null
# the fetch is under way: the silent server has its connection
wait_for accepted_more "$before"
kill -TERM "$SERVE_PID"
# the service ends (a test's patience at most, then it is killed: status 137, not 0)
wait_gone "$SERVE_PID" || kill -KILL "$SERVE_PID"
set +e; wait "$SERVE_PID"; rc=$?; set -e
SERVE_PID=
is "$rc" 0 "SIGTERM stops the service in the middle of a fetch that hangs, with status 0"
ok "$(accepted_more "$before"; echo $?)" "the fetch was under way when it stopped"
is "$(sqlite3 "$SCRATCH/state/pullgate.db" "select state || ' ' || message from pulls where id = $ID")" \
	"queued interrupted by a shutdown: run again" "the pull goes back to the queue, for the next start"
