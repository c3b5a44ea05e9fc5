#!/bin/sh
# 78-serve-queue.t - the merge window's queue in the service: each pull on the stack ahead of it, failures attributed, a conflict found at entry, stale pulls tested again, approval through a pull survives kill -9.
#
# The stand-in build and boot judge the tree's fake/ files (FAKE_BUILD=tree,
# tests/lib/stack.sh).  One verify worker, so that the pulls enter the
# queue in the order they came.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
. "$(dirname "$0")/../lib/stack.sh"
plan 66
export FAKE_BUILD=tree
serve_setup
sed -i 's/^  verify-workers: 2$/  verify-workers: 1/' "$CONFIG"
stack_upstream
sed -i "s|^  url: .*|  url: '$UPQ'|" "$SCRATCH/policy.yaml"
stack_pull s-caller fake/caller.c='call beta'            # green alone: beta is upstream's
stack_pull s-broken fake/broken.c='call nowhere'         # breaks the build by itself
stack_pull s-rename fake/core.c='def beta_renamed'       # green alone, breaks s-caller's call
stack_pull s-edit-a fake/shared.c='value = 2'
stack_pull s-edit-b fake/shared.c='value = 3'            # merges without s-edit-a, conflicts with it: found at entry
stack_pull s-last fake/last.c='def omega'
# sent last, with a resolution recorded: master's own change to shared.c, so it conflicts only
# with s-edit-b's, and a file of its own
stack_pull s-edit-c fake/shared.c='value = 2' fake/c.c='def c'
serve_start

# settled ID...: until none of the pulls runs or waits to run (each waits, waits behind a
# pull it conflicts with, or is decided)
settled() {
	for _id in "$@"; do
		case $(pull_field "$_id" .state) in
		waiting | rejected | approved | error | cancelled) ;;
		verified) [ "$(pull_field "$_id" .conflict_with)" != null ] || return 1 ;;
		*) return 1 ;;
		esac
	done
}
ALL=
for t in s-caller s-broken s-rename s-edit-a s-edit-b s-last; do
	ALL="$ALL $(deliver_tag "$t")"
done
# shellcheck disable=SC2086
set -- $ALL
P1=$1 P2=$2 P3=$3 P4=$4 P5=$5 P6=$6
# shellcheck disable=SC2086
ok "$(wait_for settled $ALL; echo $?)" "every pull of the window is tested"
is "$(for p in $ALL; do pull_field "$p" .state; done | paste -sd' ' -)" \
	"waiting rejected rejected waiting verified waiting" "each pull's outcome, in queue order"
get "$URL/api/queue"
is "$(printf '%s' "$out" | jq -r '[.queue[] | "\(.position):\(.id)"] | join(" ")')" \
	"1:$P1 2:$P4 3:$P5 4:$P6" "the queue holds the waiting pulls in their order, and the one waiting behind a conflict"

# --- stacking order -------------------------------------------------------------------------------
M1=$(pull_field "$P1" .merge_commit) M4=$(pull_field "$P4" .merge_commit) M6=$(pull_field "$P6" .merge_commit)
is "$(pull_field "$P1" .merge_base)" "$BASE" "the first pull is tested on the branch"
is "$(pull_field "$P4" .merge_base)" "$M1" "the fourth on the first's merge: the pulls between failed"
is "$(pull_field "$P6" .merge_base)" "$M4" "the sixth on the fourth's"
is "$(git --git-dir="$TREE" rev-parse "$M4^1" "$M4^2" | paste -sd' ' -)" \
	"$M1 $(git --git-dir="$KREPO" rev-parse 's-edit-a^{commit}')" \
	"the fourth's merge is its tag merged onto the first's merge"
is "$(pull_field "$P6" '[.stages[] | "\(.name):\(.status)"] | join(" ")')" \
	"verify:passed merge:passed build:passed boot:passed approve:waiting" \
	"the sixth was built and booted on the stack"
is "$(printf '%s' "$out" | jq -r --argjson p "$P6" '.queue[] | select(.id == $p) | .tested_on')" "$P4" \
	"the queue says which pull's merge each was tested on"
is "$(git --git-dir="$TREE" rev-parse master)" "$BASE" "nothing moved the branch"

# --- failures, each with its cause -------------------------------------------------------------------
is "$(pull_field "$P1" .attribution)" null "a passing pull needs no attribution"
is "$(pull_field "$P2" .attribution)" "pull $P2 (s-broken) fails build by itself" \
	"a pull that breaks the build alone is said to"
is "$(pull_field "$P2" .with)" null "with no other pull"
is "$(pull_field "$P3" .attribution)" \
	"pull $P3 (s-rename) and pull $P1 (s-caller) each pass without the other and fail build together" \
	"a pair green without each other and red together is named, by re-testing it on shorter stacks"
is "$(pull_field "$P3" .with)" "$P1" "the pull it fails with is recorded"
like "$(pull_field "$P3" .message)" "^rejected at the build stage: pull $P3 .* together\$" \
	"its message says why"
is "$(pull_field "$P1" '[.decisions[] | select(.action == "queue") | "\(.user): \(.note)"] | join("; ")')" \
	"pullgate: pull $P3 (s-rename) and pull $P1 (s-caller) each pass without the other and fail build together" \
	"the pull it fails with says so too, on its own record"
LOGS=$(dirname "$(dirname "$(pull_field "$P3" .report.run_dir)")")
is "$(cd "$LOGS" && ls -d "job-$P3"* | paste -sd' ' -)" "job-$P3 job-$P3-alone" \
	"the runs that told why keep their logs: alone, then on the stack (one pull under it needs no more)"
like "$(cat "$SCRATCH/serve.err")" "pull $P3: its failure names what pull $P1 changed: tried first" \
	"the service suspects the pull whose caller the compiler's error names"

# --- a textual conflict, found as the pull entered the queue ------------------------------------------
is "$(pull_field "$P5" .conflict)" "conflicts with pull $P4 (s-edit-a) in fake/shared.c: 1 hunk" \
	"the pull that conflicts with a pull ahead says so at once, with the path and its hunks"
is "$(pull_field "$P5" .conflict_with)" "$P4" "and with which pull"
is "$(pull_field "$P4" '.conflicted_by | join(" ")')" "$P5" "the other pull shows it too"
is "$(pull_field "$P5" '[.stages[] | .name] | join(" ")') $(pull_field "$P5" .merge_commit)" \
	"verify null" "it waits behind that pull: never merged, no kernel run"
is "$(pull_field "$P2" .conflict) $(pull_field "$P1" .conflict)" "null null" \
	"a pull that merges with every pull ahead has no conflict (nor has the first)"
get "$URL/pulls/$P5"
like "$out" "<p class=\"conflict\" id=\"conflict\">Found as it entered the window: it conflicts with pull $P4 \\(s-edit-a\\) in fake/shared.c: 1 hunk.</p>" \
	"its page says it"
like "$out" "<p id=\"waits-behind\">It waits behind <a href=\"/pulls/$P4\">#$P4</a>" \
	"and whom it waits behind"
get "$URL/pulls/$P4"
like "$out" "<p class=\"conflicted-by\"><a href=\"/pulls/$P5\">#$P5</a> \\(s-edit-b\\) conflicts with pull $P4" \
	"the other pull's page names it"
ok "$([ -d "$LOGS/job-$P2-alone" ] && [ ! -e "$LOGS/job-$P2-on-$P1" ]; echo $?)" \
	"a pull that fails alone needs no bisection"

# --- approval in order ----------------------------------------------------------------------------
maintainer_login
maintainer_post "$P6" approve
is "$code" 409 "a pull tested on pulls not yet approved cannot be approved before them"
like "$(printf '%s' "$out" | jq -r .error)" "approve pull $P4 first, or approve pull $P6 through" \
	"the answer says which to approve first"
is "$(pull_field "$P6" .state)" waiting "and the pull still waits"
get "$URL/api/pulls/$P6/through"
is "$(printf '%s' "$out" | jq -r '.through | join(" ")')" "$P1 $P4 $P6" \
	"approving it through approves the stack under it first, bottom first"

# --- the branch moves under the queue: the stack is tested again on it ----------------------------------
stack_other_push
base_is() { [ "$(pull_field "$1" .merge_base)" = "$2" ] && settled "$1"; }
ok "$(wait_for base_is "$P1" "$TIP"; echo $?)" "someone else's push: the first pull is tested again on the new tip"
M1=$(pull_field "$P1" .merge_commit)
ok "$(wait_for base_is "$P4" "$M1"; echo $?)" "the fourth on its new merge"
M4=$(pull_field "$P4" .merge_commit)
ok "$(wait_for base_is "$P6" "$M4"; echo $?)" "the sixth on the fourth's new merge"
M6=$(pull_field "$P6" .merge_commit)
is "$(pull_field "$P6" .state)" waiting "and they wait again"

# --- hold: the stack goes on without the pull ---------------------------------------------------------
maintainer_post "$P4" hold
is "$code.$(printf '%s' "$out" | jq -r .held)" "200.true" "the maintainer holds the fourth"
maintainer_post "$P4" approve
is "$code $(printf '%s' "$out" | jq -r .error)" "409 pull $P4 is held in the queue: release it first (it is tested again if its stack is gone)" \
	"a held pull is not approved"
ok "$(wait_for base_is "$P5" "$M1"; echo $?)" \
	"the pull that waited behind it for their conflict is tested now, without it, on the first's merge"
M5=$(pull_field "$P5" .merge_commit)
ok "$(wait_for base_is "$P6" "$M5"; echo $?)" "the sixth is tested again without it, on that pull's merge"
maintainer_post "$P4" release
is "$code" 200 "and lets it go on"
ok "$(wait_for base_is "$P6" "$M4"; echo $?)" "the sixth goes back onto the fourth's merge"
is "$(pull_field "$P5" .state)" verified "the conflicting pull waits behind it again"
M6=$(pull_field "$P6" .merge_commit)
maintainer_post 999999 hold
is "$code" 404 "a pull not in the queue cannot be held"

# --- approval through the sixth, cut by kill -9 after the first move ----------------------------------------
serve_stop
export PULLGATE_TEST_STOP=approve:after-cas
serve_start
unset PULLGATE_TEST_STOP
maintainer_login
maintainer_post "$P6" approve-through &
CURL=$!
ok "$(wait_stopped "$SERVE_PID"; echo $?)" "the approval through stops after the branch's first move"
is "$(git --git-dir="$TREE" rev-parse master)" "$M1" "the branch is at the first pull's tested merge"
kill -KILL "$SERVE_PID"
# gone, its lock on the state directory with it, before the next start
wait "$SERVE_PID" 2>/dev/null || true
wait "$CURL" || true
SERVE_PID=
stop_fakes
serve_start
ok "$(wait_state "$P1" approved >/dev/null; echo $?)" "a start finishes the approval the kill cut short"
is "$(pull_field "$P4" .state) $(pull_field "$P6" .state)" "waiting waiting" "the pulls above it still wait"
is "$(pull_field "$P6" .merge_base)" "$M4" "on the stack they were tested on: nothing is tested again"
maintainer_login
maintainer_post "$P6" approve-through
is "$code" 200 "approving the sixth through again"
is "$(printf '%s' "$out" | jq -r '.approved | join(" ")')" "$P4 $P6" "approves the two left, in order"
is "$(git --git-dir="$TREE" rev-parse master)" "$M6" "the branch is at the sixth's merge"
is "$(git --git-dir="$TREE" rev-list --first-parent "$TIP..master" | paste -sd' ' -)" "$M6 $M4 $M1" \
	"through the merges that were built and booted, one per pull, in queue order"
is "$(wait_state "$P5" rejected error)" rejected \
	"the pull that waited behind the fourth is tested on the branch that took it, and its merge fails"
is "$(pull_field "$P5" .attribution)" \
	"pull $P5 (s-edit-b) conflicts with pull $P4 (s-edit-a), which master took before it, in fake/shared.c" \
	"its failure is named with the pull it conflicted with"
is "$(pull_field "$P5" .with)" "$P4" "and that pull recorded"
get "$URL/api/queue"
is "$(printf '%s' "$out" | jq '.queue | length')" 0 "the queue is empty"

# --- resolutions recorded by hand -----------------------------------------------------------------
# resolve TAG OURS VALUE: TAG merged by hand onto OURS, fake/shared.c settled as 'value = VALUE',
# under refs/pullgate/resolutions/TAG; its id in $RES
resolve() { stack_resolve_pull "$1" "$2" fake/shared.c="value = $3"; }
# s-edit-b, sent again, onto s-edit-a's own commit: master took s-edit-a, so it applies there
resolve s-edit-b "$(git --git-dir="$KREPO" rev-parse 's-edit-a^{commit}')" 5
RES_B=$RES
push_record "$SCRATCH/again.json" s-edit-b
hook push "$SCRATCH/again.json" deliver-s-edit-b-again
P7=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$P7" waiting rejected error)" waiting \
	"a pull sent again, with a resolution recorded, merges through it and passes"
M7=$(pull_field "$P7" .merge_commit)
is "$(pull_field "$P7" '.stages[] | select(.name == "merge") | .summary')" \
	"merge $(printf %.12s "$M7") on refs/heads/pullgate/s-edit-b, its 1 conflicted path resolved by refs/pullgate/resolutions/s-edit-b ($(printf %.12s "$RES_B"))" \
	"its merge stage names the resolution"
is "$(git --git-dir="$TREE" show "$M7:fake/shared.c")" "value = 5" "and its merge holds the resolution's file"
# s-edit-c onto that merge: recorded before it is sent, so found at entry
resolve s-edit-c "$M7" 6
push_record "$SCRATCH/c.json" s-edit-c
hook push "$SCRATCH/c.json" deliver-s-edit-c
P8=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$P8" waiting rejected error)" waiting \
	"a pull whose conflict with the pull ahead a resolution settles does not wait behind it"
is "$(pull_field "$P8" .conflict) $(pull_field "$P8" .conflict_with)" \
	"conflicts with pull $P7 (s-edit-b) in fake/shared.c: 1 hunk, resolved by refs/pullgate/resolutions/s-edit-c null" \
	"its entry says the conflict and the resolution, and it waits behind no one"
is "$(curl -s "$URL/" | grep "^<tr class=\"window-pull\" data-pull=\"$P8\"" |
	sed -n 's/.*<td class="conflicts">\([^<]*\)<\/td>.*/\1/p')" "resolved" \
	"the window's conflicts column says it is resolved"
is "$(pull_field "$P8" .merge_base)" "$M7" "it is tested on the stack, on the merge of the pull ahead"
is "$(git --git-dir="$TREE" show "$(pull_field "$P8" .merge_commit):fake/shared.c")" "value = 6" \
	"through its resolution"
serve_stop
is "$SERVE_RC" 0 "the service stops cleanly (under the sanitizers: nothing leaked)"
