#!/bin/sh
# 77-serve-isolated-verify.t - the service runs the gate in child processes: a verify or kernel run that crashes or hangs ends its job in error with the reason and the worker goes on; a killed service leaves no child behind; the child reads the service's policy or nothing.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 24
serve_setup
T1=hardening-v6.16-rc1-fix1
# one verify thread: a job after a crash or a hang runs on the thread that met it
sed -i 's/^  verify-workers: 2$/  verify-workers: 1/' "$CONFIG"
grep -q '^  verify-workers: 1$' "$CONFIG"
cp "$SCRATCH/policy.yaml" "$SCRATCH/policy-long.yaml"
printf 'limits:\n  verify-timeout-seconds: 1\n' >>"$SCRATCH/policy.yaml"
printf 'limits:\n  verify-timeout-seconds: 600\n' >>"$SCRATCH/policy-long.yaml"

# tags whose verify a test point crashes or stops: take one's commit, other names
base=$(git --git-dir="$KREPO" rev-parse "refs/tags/$T1^{commit}")
for t in crash-1 hang-1 hang-2 policy-1; do
	git --git-dir="$KREPO" tag -a -m "$t" "$t" "$base"
done

# children: the verify processes running now (pid and arguments)
children() { ps -eo pid=,args= | grep -F -- "gate --stages verify" | grep -F -- "$SCRATCH" | grep -v grep || true; }
child_of() { children | awk -v t="$1" '$NF == t { print $1 }'; }
# a child whose verify reaches these points crashes, or stops itself for ever
serve_start_points() {
	PULLGATE_TEST_CRASH="verify:verifying refs/tags/crash-" \
		PULLGATE_TEST_STOP="verify:verifying refs/tags/hang-" \
		serve_start
}
reloads() { grep -c "reloaded $CONFIG" "$SCRATCH/serve.err" || true; }
_reloaded() { [ "$(reloads)" -gt "$1" ]; }

# --- the command line: a verify held past the policy's deadline stops, saying so ---------------
mkdir -p "$SCRATCH/hold"
run env PULLGATE_TEST_HOLD="verify:verifying" PULLGATE_TEST_HOLD_DIR="$SCRATCH/hold" \
	timeout "$PATIENCE" "$PULLGATE" gate --stages verify --policy "$SCRATCH/policy.yaml" "$KREPO" "$T1"
is "$rc" 3 "gate --stages verify held past verify-timeout-seconds: could not decide (exit 3)"
like "$err" "error: verify did not finish within 1 s \\(the policy's verify-timeout-seconds\\)\$" \
	"saying that verify did not finish within the deadline"
ok "$(test -e "$SCRATCH/hold/held"; echo $?)" "it was held in verify when the deadline came"

# --- the service -------------------------------------------------------------------------------
serve_start_points
push_record "$SCRATCH/crash.json" crash-1
hook push "$SCRATCH/crash.json" crash-push
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" error rejected verified waiting)" error \
	"a verify whose process crashes ends its job in error"
get "$URL/api/pulls/$ID"
like "$(printf '%s' "$out" | jq -r .message)" \
	"^the verify process died of SIGSEGV \\(signal 11\\) reading the pull" \
	"the job's message says the verify process died, and of what"
ok "$(kill -0 "$SERVE_PID"; echo $?)" "the service lives on"

push_record "$SCRATCH/hang.json" hang-1
hook push "$SCRATCH/hang.json" hang-push
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" error rejected verified waiting)" error \
	"a verify whose process never ends ends its job in error"
get "$URL/api/pulls/$ID"
is "$(printf '%s' "$out" | jq -r .message)" \
	"verify did not finish within 1 s (the policy's verify-timeout-seconds): its process was killed" \
	"the job's message names the deadline"
is "$(child_of refs/tags/hang-1)" "" "and its process is gone"

# the same thread verifies the next pull to its verdict, under the long deadline
before=$(reloads)
cp "$SCRATCH/policy-long.yaml" "$SCRATCH/policy.yaml"
kill -HUP "$SERVE_PID"
ok "$(wait_for _reloaded "$before"; echo $?)" "the service reloads the policy with a long deadline"
push_record "$SCRATCH/take1.json" "$T1"
hook push "$SCRATCH/take1.json" take1-push
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" rejected error verified waiting)" rejected \
	"the next pull is verified to its verdict by the same worker"
get "$URL/api/pulls/$ID"
is "$(printf '%s' "$out" | jq -r '"\(.verdict) \(.commits)"')" "reject 39" \
	"its report, read back from the child's JSON, is whole"
is "$(printf '%s' "$out" | jq -r '.report | [.stages[0].name, .stages[0].status, (.run_dir | test("/logs/job-[0-9]+/run-[0-9]+$"))] | map(tostring) | join(" ")')" \
	"verify failed true" "with the verify stage and the job's own log directory"

# a policy file changed on disk since the service read it is not what the service runs
printf '# edited, not reloaded\n' >>"$SCRATCH/policy.yaml"
push_record "$SCRATCH/policy.json" policy-1
hook push "$SCRATCH/policy.json" policy-push
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" error rejected verified waiting)" error \
	"a policy file edited and not reloaded: the job ends in error"
get "$URL/api/pulls/$ID"
like "$(printf '%s' "$out" | jq -r .message)" \
	"^the policy '[^']*/policy.yaml' has SHA-256 [0-9a-f]{64}, not [0-9a-f]{64}: it changed since it was read$" \
	"saying that the policy changed since it was read"
cp "$SCRATCH/policy-long.yaml" "$SCRATCH/policy.yaml"
serve_stop
is "$SERVE_RC" 0 "the service stops cleanly"

# a service killed while its child verifies leaves no child behind; the child is given
# the service's limits.index-memory
printf 'limits:\n  index-memory: 2097152\n' >>"$CONFIG"
serve_start_points
push_record "$SCRATCH/hang2.json" hang-2
hook push "$SCRATCH/hang2.json" hang2-push
# (asked again at each try: a command substitution in wait_for's arguments is expanded once)
has_child() { [ -n "$(child_of refs/tags/hang-2)" ]; }
wait_for has_child || true
CHILD=$(child_of refs/tags/hang-2)
ok "$(wait_stopped "$CHILD"; echo $?)" "the child verifying hang-2 runs (stopped at its test point)"
like "$(children | awk -v p="$CHILD" '$1 == p')" " --index-memory 2097152 " \
	"with the working memory of limits.index-memory (--index-memory)"
kill -KILL "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null || true
SERVE_PID=
ok "$(wait_gone "$CHILD"; echo $?)" "SIGKILL to the service takes its verify child with it"
is "$(children)" "" "no verify process is left"

# --- the kernel stages run in a child process too ---------------------------------------------
T2=hardening-v6.16-rc1-fix1-take2
PULLGATE_TEST_CRASH="merge:starting" serve_start
push_record "$SCRATCH/take2.json" "$T2"
hook push "$SCRATCH/take2.json" take2-crash
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" error rejected waiting approved passed)" error \
	"a kernel run whose process crashes in the merge stage ends its job in error"
get "$URL/api/pulls/$ID"
like "$(printf '%s' "$out" | jq -r .message)" \
	"^the gate process died of SIGSEGV \\(signal 11\\) reading the pull" \
	"the job's message says the gate process died, and of what"
ok "$(kill -0 "$SERVE_PID"; echo $?)" "the service lives on"
serve_stop
is "$SERVE_RC" 0 "and stops cleanly"
