#!/bin/sh
# 79-serve-queue-parallel.t - two build worktrees test two places of the queue at once: the next pull goes onto a merge whose build still runs, and is tested again when that build fails.
#
# The stand-in build judges the tree's fake/ files (FAKE_BUILD=tree,
# tests/lib/stack.sh); a tree with a file fake/meet-NAME builds only once
# another build of a tree with it has started too, so that "the second
# pull's run overlaps the first's build" is a fact of the run, not of the
# machine's speed: without it, both wait until the test's patience ends.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
. "$(dirname "$0")/../lib/stack.sh"
plan 21
export FAKE_BUILD=tree
serve_setup
sed -i 's/^  verify-workers: 2$/  verify-workers: 1\n  build-worktrees: 2/' "$CONFIG"
stack_upstream
sed -i "s|^  url: .*|  url: '$UPQ'|" "$SCRATCH/policy.yaml"
MEET1="$SCRATCH/meet-slow" MEET2="$SCRATCH/meet-bad"
stack_pull p-slow fake/slow.c='def slow' fake/meet-slow="$MEET1"
stack_pull p-next fake/next.c='def next'
stack_pull p-bad fake/bad.c='call nowhere' fake/meet-bad="$MEET2"
stack_pull p-after fake/after.c='def after'
serve_start


# --- the next pull is tested on a merge still being built ---------------------------------------------
S=$(deliver_tag p-slow)
N=$(deliver_tag p-next)
is "$(wait_state "$S" waiting rejected error)" waiting "the first pull passes"
is "$(wait_state "$N" waiting rejected error)" waiting "the second too"
ok "$([ "$(ls "$MEET1" | wc -l)" -ge 2 ]; echo $?)" \
	"the second's run built while the first's build was held: they overlapped"
MS=$(pull_field "$S" .merge_commit)
is "$(pull_field "$N" .merge_base)" "$MS" "the second was tested on the first's merge, recorded when it was made"
# run-1 is the verify's
like "$(pull_field "$N" .report.run_dir)" "/logs/job-$N/run-2\$" "once"
get "$URL/api/pulls/$N/through"
is "$(printf '%s' "$out" | jq -r '.through | join(" ")')" "$S $N" "approving the second goes through the first"
MN=$(pull_field "$N" .merge_commit)

# --- the merge under it fails: tested again without it ------------------------------------------------
B=$(deliver_tag p-bad)
A=$(deliver_tag p-after)
is "$(wait_state "$B" rejected waiting error)" rejected "the third fails its build"
ok "$([ "$(ls "$MEET2" | wc -l)" -ge 2 ]; echo $?)" "while the fourth's run was on its merge"
is "$(pull_field "$B" .attribution)" "pull $B (p-bad) fails build by itself" "by itself"
on_second() { [ "$(pull_field "$A" .merge_base)" = "$MN" ] && [ "$(pull_field "$A" .state)" = waiting ]; }
ok "$(wait_for on_second; echo $?)" "the fourth is tested again, on the second's merge, and waits"
like "$(pull_field "$A" .report.run_dir)" "/logs/job-$A/run-3\$" \
	"in a second kernel run: the first, on the third's merge, told nothing"
is "$(pull_field "$A" .attribution)" null "and nothing is held against it"
get "$URL/api/pulls/$A/through"
is "$(printf '%s' "$out" | jq -r '.through | join(" ")')" "$S $N $A" "the stack is the three pulls that passed"
# --- a tag whose commits a waiting pull under it holds: held, not passed ---------------------------------
stack_retag p-dup p-next
D=$(deliver_tag p-dup)
# verified twice: when verify accepts it (not yet tested), then when its run holds it; wait for the second
held_or_decided() {
	case $(pull_field "$D" '"\(.state) \(.held)"') in
	"verified true" | rejected* | error* | passed* | waiting*) true ;;
	*) false ;;
	esac
}
wait_for held_or_decided || true
is "$(pull_field "$D" .state)" verified "a second tag of the second's commit is tested"
is "$(pull_field "$D" .held)" true "and held: the stack holds its commits, the branch does not"
like "$(pull_field "$D" .message)" "every commit of the tag is in the queue's stack under it \\(up to the merge of pull $A\\), not in the branch: held" \
	"saying why, and what to do"

# --- the branch moves while a pull builds: tested again on it ---------------------------------------------
MEET3="$SCRATCH/meet-hold"
stack_pull p-hold fake/hold.c='def hold' fake/meet-hold="$MEET3"
H=$(deliver_tag p-hold)
met_once() { [ "$(ls "$MEET3" 2>/dev/null | wc -l)" -ge 1 ]; }
ok "$(wait_for met_once; echo $?)" "the fifth's build is held"
MA=$(pull_field "$A" .merge_commit)
stack_other_push
: >"$MEET3/test"
first_on_tip() { [ "$(pull_field "$S" .merge_base)" = "$TIP" ] && [ "$(pull_field "$S" .state)" = waiting ]; }
ok "$(wait_for first_on_tip; echo $?)" "another hand pushed: the stack is tested again on the new tip"
hold_again() { [ "$(pull_field "$H" .state)" = waiting ] && [ "$(pull_field "$H" .merge_base)" != "$MA" ]; }
ok "$(wait_for hold_again; echo $?)" "and the fifth, whose run the push cut from its stack, is tested again too"
is "$(pull_field "$H" .attribution)" null "nothing is held against it"

serve_stop
is "$SERVE_RC" 0 "the service stops cleanly (under the sanitizers: nothing leaked)"
