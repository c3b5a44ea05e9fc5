#!/bin/sh
# 78-serve-queue-orphan.t - a run whose end the store fails to record: the write is tried again, and a running state no thread runs holds nothing up: the queue tests that pull again, and the pulls behind it go on, nothing lost; a pull whose end is lost three times is an error, not tested forever.
#
# The store's write of the state "waiting" fails (PULLGATE_TEST_FAIL,
# common/testpoint.h) four times: the three tries of the first pull's
# first end, which leave it booting with no thread behind it, then the
# first try of its second end, which the next try records.  Then, the
# service started again, nine times: the three tries of each of a third
# pull's three ends.  One build worktree: one kernel thread.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
. "$(dirname "$0")/../lib/stack.sh"
plan 18
export FAKE_BUILD=tree
stack_serve 1
stack_pull o-one fake/one.c='def one'
stack_pull o-two fake/two.c='def two'
export PULLGATE_TEST_FAIL=store:waiting PULLGATE_TEST_FAIL_TIMES=4
serve_start
unset PULLGATE_TEST_FAIL PULLGATE_TEST_FAIL_TIMES

# logged LINE: the service's log has a line matching the extended regex LINE (logged after the
# store's write that the API shows)
logged() { grep -Eq -- "$1" "$SCRATCH/serve.err"; }

P1=$(deliver_tag o-one)
P2=$(deliver_tag o-two)
is "$(wait_state "$P1" waiting rejected error)" waiting \
	"the pull whose end could not be recorded is tested again, and waits for the maintainer"
ok "$(wait_for logged "pull $P1: state waiting recorded at try 2 \\(store: pulls: pull $P1 not made waiting"; echo $?)" \
	"a write that fails once is recorded at the next try"
LOG=$(cat "$SCRATCH/serve.err")
like "$LOG" "pull $P1: cannot record state waiting \\(3 tries\\): store: pulls: pull $P1 not made waiting" \
	"the service's log says its end could not be recorded, after three tries"
like "$LOG" "pull $P1: verified: its run ended, but the store could not record how: no thread runs it; testing it again" \
	"the queue sends back the state no thread runs, saying why"
is "$(printf '%s\n' "$LOG" | grep -c "pull $P1: verified: its run ended, but")" 1 "once"
is "$(pull_field "$P1" '[.stages[] | "\(.name):\(.status)"] | join(" ")')" \
	"verify:passed merge:passed build:passed boot:passed approve:waiting" "its second run is whole"
is "$(wait_state "$P2" waiting rejected error)" waiting "the pull behind it goes on, and waits"
M1=$(pull_field "$P1" .merge_commit) M2=$(pull_field "$P2" .merge_commit)
is "$(pull_field "$P2" .merge_base)" "$M1" "tested on the merge the first pull's second run made"

maintainer_login
get "$URL/api/pulls/$P2/through"
is "$(printf '%s' "$out" | jq -r '.through | join(" ")')" "$P1 $P2" \
	"both stand on the stack: approving the second through approves the first first"
maintainer_post "$P2" approve-through
is "$code $(printf '%s' "$out" | jq -r '.approved | join(" ")')" "200 $P1 $P2" "and approves both"
is "$(git --git-dir="$TREE" rev-list --first-parent "$BASE..master" | paste -sd' ' -)" "$M2 $M1" \
	"the branch holds both merges, in queue order: nothing is lost"
is "$(pull_field "$P1" .state) $(pull_field "$P2" .state)" "approved approved" "both are approved"
serve_stop
is "$SERVE_RC" 0 "the service stops cleanly (under the sanitizers: nothing leaked)"

# --- a pull whose every end is lost: sent back twice, then an error -----------------------------------
stack_pull o-three fake/three.c='def three'
export PULLGATE_TEST_FAIL=store:waiting PULLGATE_TEST_FAIL_TIMES=9
serve_start
unset PULLGATE_TEST_FAIL PULLGATE_TEST_FAIL_TIMES
P3=$(deliver_tag o-three)
is "$(wait_state "$P3" error waiting rejected)" error \
	"a pull whose run's end the store loses three times is an error"
is "$(pull_field "$P3" .message)" \
	"its run ended, but the store could not record how, for the third time: not tested again (the service's log says why the store refused)" \
	"its message says why"
ok "$(wait_for logged "pull $P3: error: its run ended, but the store could not record how, for the third time"; echo $?)" \
	"and the log"
is "$(grep -c "pull $P3: cannot record state waiting (3 tries)" "$SCRATCH/serve.err").$(grep -c "pull $P3: verified: its run ended, but" "$SCRATCH/serve.err")" \
	"3.2" "three runs, each end tried three times; sent back to be tested again twice"
serve_stop
is "$SERVE_RC" 0 "the service started again stops cleanly"
