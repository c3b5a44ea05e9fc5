#!/bin/sh
# 72-serve-restart.t - jobs survive SIGKILL and resume; a running job can be cancelled; SIGTERM stops cleanly.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 16
serve_setup
T2=hardening-v6.16-rc1-fix1-take2
BASE=$(git --git-dir="$TREE" rev-parse master)
push_record "$SCRATCH/take2.json" "$T2"

TAP_CLEANUP="stop_fakes"
login() {
	curl -s -c "$SCRATCH/jar" -o "$SCRATCH/login.json" -X POST -H 'Content-Type: application/json' \
		-d "{\"user\":\"maintainer\",\"password\":\"$SERVE_PASSWORD\"}" "$URL/api/login"
	CSRF=$(jq -r .csrf "$SCRATCH/login.json")
}

# --- cancel a running build -------------------------------------------------------------
export FAKE_BUILD=sleep
serve_start
hook push "$SCRATCH/take2.json" run-1
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" building)" building "the pull reaches the build stage (a build that hangs)"
login
code=$(curl -s -b "$SCRATCH/jar" -o "$SCRATCH/.r" -w '%{http_code}' -X POST \
	-H "X-CSRF-Token: $CSRF" "$URL/api/pulls/$ID/cancel")
is "$code" 200 "the maintainer cancels it"
is "$(wait_state "$ID" cancelled error)" cancelled "the running job ends cancelled"
get "$URL/api/pulls/$ID"
is "$(printf '%s' "$out" | jq -r '.decisions[-1] | "\(.user) \(.action)"')" "maintainer cancel" \
	"the cancellation is recorded with who did it"
is "$(git --git-dir="$TREE" rev-parse master)" "$BASE" "nothing moved"
# every worktree but the tree itself and the gate's one persistent build worktree
is "$(git --git-dir="$TREE" worktree list --porcelain | grep '^worktree ' |
	grep -v -e "^worktree $TREE\$" -e "^worktree $PULLGATE_HOME/work/build\$" | wc -l | tr -d ' ')" 0 \
	"no worktree of the pull's is left"

# --- SIGKILL in the middle of a build, then a restart ------------------------------------------
hook push "$SCRATCH/take2.json" run-2
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" building)" building "another run of it is building"
kill -KILL "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null || true
SERVE_PID=
stop_fakes
is "$(sqlite3 "$SCRATCH/state/pullgate.db" "select state from pulls where id = $ID")" building \
	"after SIGKILL the store still says building"
unset FAKE_BUILD
serve_start
like "$(cat "$SCRATCH/serve.err")" "jobs interrupted by the last stop are queued again" \
	"the restarted server puts the interrupted job back in the queue"
is "$(wait_state "$ID" waiting rejected error)" waiting "and runs it again, to the end"
get "$URL/api/pulls/$ID"
is "$(printf '%s' "$out" | jq -r .attempts)" 2 "it was attempted twice"
is "$(printf '%s' "$out" | jq -r '[.stages[] | "\(.name):\(.status)"] | join(" ")')" \
	"verify:passed merge:passed build:passed boot:passed approve:waiting" "every stage passed the second time"
get "$URL/api/pulls/1"
is "$(printf '%s' "$out" | jq -r .state)" cancelled "the cancelled job stays cancelled across the restart"
hook push "$SCRATCH/take2.json" run-2
is "$code" 200 "the store remembers deliveries across restarts: a redelivery makes no job"

# --- SIGTERM ---------------------------------------------------------------------------------
kill -TERM "$SERVE_PID"
set +e; wait "$SERVE_PID"; rc=$?; set -e
SERVE_PID=
is "$rc" 0 "SIGTERM stops the server with status 0"
like "$(cat "$SCRATCH/serve.err")" "pullgate: stopped$" "after a clean shutdown"
