#!/bin/sh
# 64-gate-queue.t - gate --queue: pulls gated as a stack, each failure named by itself or with the pull it breaks with.
#
# The stand-in build judges the tree's fake/ files (FAKE_BUILD=tree), on
# the upstream and the pulls of tests/lib/stack.sh.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/gate.sh"
. "$(dirname "$0")/../lib/stack.sh"
plan 99
gate_setup
export FAKE_BUILD=tree

KREPO="$SCRATCH/kees.git"
git clone -q --mirror "$FX/kees.git" "$KREPO"
stack_upstream
pull() { stack_pull "$@"; }
pull q-caller fake/caller.c='call beta'                 # green alone: beta is upstream's
pull q-alpha fake/alpha.c='def alpha
call alpha'
pull q-broken fake/broken.c='call nowhere'              # breaks the build by itself
pull q-rename fake/core.c='def beta_renamed'            # green alone, breaks q-caller's call
pull q-assert fake/limit_test.c='assert LIMIT == 1'     # green alone
pull q-limit fake/limits.c='set LIMIT = 2'              # green alone, fails q-assert's case
pull q-edit-a fake/shared.c='value = 2'
pull q-edit-b fake/shared.c='value = 3'                 # merges without q-edit-a, conflicts with it
pull q-last fake/last.c='def omega'
PULLS="q-caller q-alpha q-broken q-rename q-assert q-limit q-edit-a q-edit-b q-last"
NOSOB=1 pull q-nosob fake/nosob.c='def nosob'

VOPTS="--keyring $KEYRING --trust $FPR_KEES --upstream $UPQ:master"
OPTS="$VOPTS --tree $TREE"
bad=
for t in $PULLS; do
	# shellcheck disable=SC2086
	"$PULLGATE" verify $VOPTS "$KREPO" "$t" >/dev/null 2>&1 || bad="$bad $t"
done
is "$bad" "" "every pull passes verify under the gate's options"

QUEUE="$SCRATCH/queue"
{
	echo "# the morning's pulls"
	for t in $PULLS q-nosob; do printf '%s  %s\n' "$KREPO" "$t"; echo; done
} >"$QUEUE"
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --json --queue "$QUEUE"
Q=$out
is "$rc" 1 "a queue with failures exits 1"
like "$err" "\\[queue\\] pull 4 \\(q-rename\\) again, on the stack up to pull 1 \\($(printf %.12s "$(printf '%s' "$Q" | jq -r '.queue[0].merge')")\\)" \
	"the progress says which stack a rerun is on"
# q FILTER: jq on the queue's JSON
q() { printf '%s' "$Q" | jq -r "$@"; }
# at K FIELD: a field of the pull at position K
at() { q --argjson k "$1" ".queue[] | select(.position == \$k) | .$2"; }
is "$(q '[.queue[] | "\(.position):\(.tag):\(.outcome)"] | join(" ")')" \
	"1:q-caller:passed 2:q-alpha:passed 3:q-broken:failed 4:q-rename:failed 5:q-assert:passed 6:q-limit:failed 7:q-edit-a:passed 8:q-edit-b:failed 9:q-last:passed 10:q-nosob:rejected" \
	"each pull's outcome, in queue order"
is "$(q .head)" "$BASE" "the queue starts on the branch's head"

# --- stacking order ---------------------------------------------------------------------------
M1=$(at 1 merge) M2=$(at 2 merge) M5=$(at 5 merge) M7=$(at 7 merge) M9=$(at 9 merge)
is "$(at 1 tested_on)" "$BASE" "pull 1 is tested on the head"
is "$(at 2 tested_on)" "$M1" "pull 2 on pull 1's merge"
is "$(at 3 tested_on)" "$M2" "pull 3 on pull 2's merge: the stack of pulls 1 and 2"
is "$(git --git-dir="$TREE" rev-parse "$M2^1" "$M2^2" | paste -sd' ' -)" \
	"$M1 $(git --git-dir="$KREPO" rev-parse 'q-alpha^{commit}')" \
	"pull 2's merge is its tag merged onto pull 1's merge"
is "$(at 2 report.merge_base)" "$M1" "its report's merge base is the stack it was tested on"
is "$(at 2 report.stages | jq -r '[.[] | "\(.name):\(.status)"] | join(" ")')" \
	"verify:passed merge:passed build:passed boot:passed" "and it was built and booted there"
is "$(at 1 reruns | jq length) $(at 2 reruns | jq length)" "0 0" "a passing pull is run once"
is "$(at 1 attribution)" "null" "and needs no attribution"

# --- a pull that breaks the build by itself ---------------------------------------------------
is "$(at 3 stage)" "build" "pull 3 fails the build"
like "$(at 3 report.findings | jq -r '.[] | select(.check == "build-error") | .message')" \
	"^fake/broken.c:1: implicit declaration of function 'nowhere'" "with the compiler's error"
is "$(at 3 attribution)" "pull 3 (q-broken) fails build by itself" "attributed to itself"
is "$(at 3 reruns | jq -r '[.[] | "\(.upto):\(.stages):\(.failed)"] | join(" ")')" \
	"0:merge,build:true" "after one run alone on the head, merge and build only"
is "$(at 3 with) $(at 3 suspect)" "null null" "with no other pull, and none ahead touched what its error names"
M3=$(at 3 merge)
ok "$([ "$M3" != null ] && ! git --git-dir="$TREE" merge-base --is-ancestor "$M3" refs/heads/pullgate/queue; echo $?)" \
	"its merge, tested and failed, is no part of the stack"

# --- a pair green alone that breaks the build together ----------------------------------------
is "$(at 4 tested_on)" "$M2" "pull 4 is stacked without pull 3"
is "$(at 4 stage)" "build" "and fails the build there"
like "$(at 4 report.findings | jq -r '.[] | select(.check == "build-error") | .message')" \
	"^fake/caller.c:1: implicit declaration of function 'beta'" "at pull 1's caller"
is "$(at 4 attribution)" "pull 4 (q-rename) and pull 1 (q-caller) each pass without the other and fail build together" \
	"attributed to pull 1, not to pull 2 just ahead of it"
is "$(at 4 with) $(at 4 suspect)" "1 1" "with names pull 1, the pull whose caller the error names"
is "$(at 4 reruns | jq -r '[.[] | "\(.upto):\(.failed)"] | join(" ")')" "0:false 1:true" \
	"it passed without pull 1 (alone) and failed on pull 1's merge"
is "$(at 4 'reruns[1].onto')" "$M1" "that rerun was on pull 1's merge"
is "$(at 5 tested_on) $(at 5 outcome)" "$M2 passed" "the pull behind passes, stacked without it"

# --- a pair green alone that fails a KUnit case together --------------------------------------
is "$(at 6 tested_on)" "$M5" "pull 6 is tested on pull 5's merge"
is "$(at 6 stage)" "boot" "it builds, and fails at boot"
like "$(at 6 report.findings | jq -r '.[] | select(.check == "ktap-failure") | .message')" \
	"fake_LIMIT" "on the failing KUnit case of pull 5's assert"
like "$(at 6 report.findings | jq -r '.[] | select(.check == "ktap-failure") | .details[] | select(.field == "diagnostic") | .pull')" \
	"EXPECTATION FAILED at fake/limit_test.c:1" "where KUnit says the case failed"
is "$(at 6 attribution)" "pull 6 (q-limit) and pull 5 (q-assert) each pass without the other and fail boot together" \
	"attributed to pull 5"
is "$(at 6 suspect)" "5" "pull 5, whose file the failing case is in, is the suspect"
is "$(at 6 reruns | jq -r '[.[] | "\(.upto):\(.stages):\(.failed)"] | join(" ")')" \
	"2:merge,build,boot:false" \
	"one rerun names it: on the stack up to pull 2, without pull 5, it passes"
is "$(at 5 report.stages | jq -r '.[] | select(.name == "boot") | .status')" "passed" \
	"pull 5's assert passes on the stack it was tested on"

# --- a textual conflict -----------------------------------------------------------------------
is "$(at 8 tested_on)" "$M7" "pull 8 is tested on pull 7's merge"
is "$(at 8 stage)" "merge" "and conflicts there"
is "$(at 8 attribution)" "pull 8 (q-edit-b) merges without pull 7 (q-edit-a) but conflicts with it in fake/shared.c" \
	"naming pull 7 and the path"
is "$(at 8 reruns | jq -r '[.[] | "\(.upto):\(.stages):\(.failed)"] | join(" ")')" \
	"5:merge:false" "one rerun, without pull 7, which changed the conflicted path; it merges only"
is "$(at 8 report.findings | jq -r '.[] | select(.check == "merge-conflict") | .details[].pull')" \
	"fake/shared.c" "its report names the conflicted path"

# --- a pull rejected by verify ----------------------------------------------------------------
is "$(at 10 attribution)" "pull 10 (q-nosob) is rejected by verify" "a pull verify rejects is said so"
is "$(at 10 tested_on) $(at 10 merge) $(at 10 'reruns | length')" "null null 0" "and never merged nor run again"
is "$(at 10 report.stages | jq -r '[.[] | "\(.name):\(.status)"] | join(" ")')" "verify:failed" \
	"its report is verify's"

# --- the stack ------------------------------------------------------------------------------
is "$(at 9 tested_on) $(at 9 outcome)" "$M7 passed" "the last pull is stacked on pull 7's merge"
is "$(q .stack)" "$M9" "the stack's top is the last passing merge"
is "$(git --git-dir="$TREE" rev-parse refs/heads/pullgate/queue)" "$M9" "refs/heads/pullgate/queue holds it"
is "$(git --git-dir="$TREE" rev-list --first-parent "$BASE..refs/heads/pullgate/queue" | paste -sd' ' -)" \
	"$M9 $M7 $M5 $M2 $M1" "every commit from the head to it is a tested merge, in queue order"
is "$(master)" "$BASE" "the integration branch did not move"
is "$(git --git-dir="$TREE" for-each-ref --format='%(refname)' refs/heads/pullgate refs/pullgate)" \
	"refs/heads/pullgate/queue" "no pull's ref is left, only the stack's"
is "$(git --git-dir="$TREE" ls-tree --name-only "$M9" fake/ | paste -sd' ' -)" \
	"fake/alpha.c fake/caller.c fake/core.c fake/last.c fake/limit_test.c fake/limits.c fake/shared.c" \
	"the stack holds the passing pulls' files"
is "$(git --git-dir="$TREE" show "$M9:fake/core.c" "$M9:fake/shared.c" | paste -sd' ' -)" \
	"def beta value = 2" "and none of the failing pulls' changes"
dirs=$(q '[.queue[] | .report.run_dir, .reruns[].run_dir] | unique | length')
is "$dirs" "$(q '[.queue[] | 1 + (.reruns | length)] | add')" "every run has a log directory of its own"
ok "$([ -f "$(at 4 'reruns[1].run_dir')/report.json" ]; echo $?)" "a rerun's report is kept in its own"

# --- the text output --------------------------------------------------------------------------
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --stages merge --queue "$QUEUE"
is "$rc" 1 "merge only: pull 8 still conflicts"
is "$(printf '%s\n' "$out" | sed -n 8p)" \
	"8 q-edit-b: failed (merge), tested on $(printf %.12s "$(git --git-dir="$TREE" rev-parse refs/heads/pullgate/queue~1)"): pull 8 (q-edit-b) merges without pull 7 (q-edit-a) but conflicts with it in fake/shared.c" \
	"a line per pull: position, tag, outcome, the stack it was tested on, the cause"
like "$(printf '%s\n' "$out" | sed -n 1p)" "^1 q-caller: passed, tested on ${BASE%????????????????????????????}, merge [0-9a-f]{12}\$" \
	"a passing pull names its merge"
like "$(printf '%s\n' "$out" | tail -n1)" "^stack: refs/heads/pullgate/queue at [0-9a-f]{12}, 8 merges on ${BASE%????????????????????????????}\$" \
	"then the stack's ref: merge only, pulls 3, 4 and 6 merge too"

# --- a resolution recorded by hand ------------------------------------------------------------
EDIT_A=$(git --git-dir="$KREPO" rev-parse 'q-edit-a^{commit}')
EDIT_B=$(git --git-dir="$KREPO" rev-parse 'q-edit-b^{commit}')
# resolve NAME OURS: q-edit-b merged by hand onto OURS, fake/shared.c settled, a file of its own besides
resolve() { stack_resolve "$1" "$2" "$EDIT_B" fake/shared.c='value = 5' fake/besides.c='def besides'; }
printf '%s q-edit-a\n%s q-edit-b\n%s q-last\n' "$KREPO" "$KREPO" "$KREPO" >"$SCRATCH/edits"
# made where shared.c did not conflict (on q-alpha): not for this stack
resolve a-stale "$(git --git-dir="$KREPO" rev-parse 'q-alpha^{commit}')"
STALE=$RES
# a ref there that is no commit, or a tag of a blob, is no one's resolution
CORE=$(git --git-dir="$TREE" rev-parse "$BASE:fake/core.c")
git --git-dir="$TREE" update-ref refs/pullgate/resolutions/a-blob "$CORE"
git --git-dir="$TREE" update-ref refs/pullgate/resolutions/a-tag "$(printf 'object %s\ntype blob\ntag t\ntagger T <t@example.org> 1 +0000\n\na tag of a blob\n' "$CORE" |
	git --git-dir="$TREE" mktag)"
# one whose commit is gone is said, and stops nothing
printf '%s\n' 1234567890123456789012345678901234567890 >"$TREE/refs/pullgate/resolutions/a-gone"
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --json --stages merge --queue "$SCRATCH/edits"
is "$rc" 1 "a resolution made elsewhere does not settle the conflict"
NOTES=$(printf '%s' "$out" | jq -r '.queue[1].report.findings[] | select(.check == "merge-conflict") | .details[] | select(.field == "resolution") | .pull')
like "$NOTES" "^refs/pullgate/resolutions/a-gone cannot be read: .*1234567890123456789012345678901234567890.*; refs/pullgate/resolutions/a-stale \\($(printf %.12s "$STALE")\\) does not apply: it was made where 'fake/shared.c' conflicted otherwise\$" \
	"the conflict's report says which resolution did not apply, and why, and which ref could not be read"
rm "$TREE/refs/pullgate/resolutions/a-gone"
# made on q-edit-a's own commit, not on the stack: its conflict is the stack's, side for side
resolve edit-b "$EDIT_A"
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --json --queue "$SCRATCH/edits"
is "$rc" 0 "with a resolution made on the pair, pull 2 merges onto the stack"
R2=$(printf '%s' "$out" | jq -r '.queue[1].merge')
is "$(printf '%s' "$out" | jq -r '[.queue[] | "\(.tag):\(.outcome)"] | join(" ")')" \
	"q-edit-a:passed q-edit-b:passed q-last:passed" "and every pull of the queue passes"
is "$(printf '%s' "$out" | jq -r '.queue[1].report.stages[] | select(.name == "merge") | .summary')" \
	"merge $(printf %.12s "$R2") on refs/heads/pullgate/q-edit-b, its 1 conflicted path resolved by refs/pullgate/resolutions/edit-b ($(printf %.12s "$RES"))" \
	"its merge stage names the resolution it took"
is "$(printf '%s' "$out" | jq -r '.queue[1].report.stages | [.[] | "\(.name):\(.status)"] | join(" ")')" \
	"verify:passed merge:passed build:passed boot:passed" "and the resolved merge is built and booted"
is "$(git --git-dir="$TREE" show "$R2:fake/shared.c")" "value = 5" "the conflicted path is the resolution's"
ok "$(! git --git-dir="$TREE" cat-file -e "$R2:fake/besides.c" 2>/dev/null; echo $?)" \
	"what the resolution changed besides the conflict is not taken"
is "$(git --git-dir="$TREE" rev-parse "$R2^2")" "$EDIT_B" "the merge is the pull's own: its commit the second parent"
is "$(git --git-dir="$TREE" cat-file -p "$R2" | grep -c '^mergetag ')" "1" "with its mergetag"
is "$(printf '%s' "$out" | jq -r '.queue[2].tested_on')" "$R2" "and the next pull is stacked on it"
git --git-dir="$TREE" for-each-ref --format='delete %(refname)' refs/pullgate/resolutions | git --git-dir="$TREE" update-ref --stdin

# --- a pull that cannot be verified, and every pull passing ----------------------------------------
printf '%s q-alpha\n%s no-such-tag\n' "$KREPO" "$KREPO" >"$SCRATCH/rejected"
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --json --stages merge --queue "$SCRATCH/rejected"
is "$rc" 3 "a pull that cannot be verified stops the queue: could not decide"
is "$(printf '%s' "$out" | jq -r '[.queue[] | "\(.tag):\(.outcome)"] | join(" ")')" "q-alpha:passed" \
	"what ran before it is printed"
like "$err" "no-such-tag" "and the error names it"
printf '%s q-alpha\n%s q-last\n' "$KREPO" "$KREPO" >"$SCRATCH/good"
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --stages merge --queue "$SCRATCH/good"
is "$rc" 0 "a queue where every pull passes exits 0"

# --- the branch moved under the queue -----------------------------------------------------------
# take two's merge build (FAKE_BUILD=move) moves master to a commit beside the stack
ELSEWHERE=$(git --git-dir="$TREE" commit-tree -p "$BASE" -m "someone else's push" "$BASE^{tree}")
printf '%s %s\n%s q-alpha\n' "$KEES" "$T2" "$KREPO" >"$SCRATCH/moved"
# shellcheck disable=SC2086
FAKE_BUILD=move FAKE_TREE="$TREE" FAKE_MOVE_TO="$ELSEWHERE" \
	run "$PULLGATE" gate $OPTS --json --queue "$SCRATCH/moved"
is "$rc" 3 "a stack the branch no longer leads to stops the queue: could not decide"
like "$err" "cannot merge onto [0-9a-f]{40}: it does not descend from refs/heads/master's head $ELSEWHERE" \
	"saying why"
is "$(printf '%s' "$out" | jq -r '[.queue[] | "\(.tag):\(.outcome)"] | join(" ")')" "$T2:passed" \
	"what was tested before is printed"
is "$(git --git-dir="$TREE" rev-parse refs/heads/pullgate/queue)" "$(printf '%s' "$out" | jq -r '.queue[0].merge')" \
	"and left on the stack's ref"
git --git-dir="$TREE" update-ref refs/heads/master "$BASE"

# --- one pull onto a stack it is given: gate --onto -------------------------------------------
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --json --stages merge "$KREPO" q-alpha
ONTO=$(printf '%s' "$out" | jq -r .merge_commit)
is "$rc $(printf '%s' "$out" | jq -r .merge_base)" "0 $BASE" "a first pull merged onto the head"
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --json --stages merge --onto "$ONTO" "$KREPO" q-last
is "$rc" 0 "--onto its merge: the next pull merges onto it"
is "$(printf '%s' "$out" | jq -r .merge_base)" "$ONTO" "the report's merge base is that commit"
ONTO_MERGE=$(printf '%s' "$out" | jq -r .merge_commit)
is "$(git --git-dir="$TREE" rev-parse "$ONTO_MERGE^1" "$ONTO_MERGE^2" | paste -sd' ' -)" \
	"$ONTO $(git --git-dir="$KREPO" rev-parse 'q-last^{commit}')" \
	"its merge's first parent is that commit, its second the pull's"
is "$(git --git-dir="$TREE" ls-tree --name-only "$ONTO_MERGE" fake/alpha.c fake/last.c | paste -sd' ' -)" \
	"fake/alpha.c fake/last.c" "so the tree merged holds both pulls"
is "$(master)" "$BASE" "the integration branch did not move"
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --json --stages merge --onto "$ONTO" "$KREPO" q-alpha
is "$rc $(printf '%s' "$out" | jq -r '.stages[] | select(.name == "merge") | "\(.status): \(.summary)"')" \
	"0 skipped: refs/tags/q-alpha is already in $(printf %.12s "$ONTO"), the stack it was merged onto" \
	"a pull the stack holds already adds nothing, and says where it is: the stack, not the branch"
BESIDE=$(git --git-dir="$TREE" rev-parse "$BASE^")
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --json --stages merge --onto "$BESIDE" "$KREPO" q-last
is "$rc" 3 "--onto a commit the head is not below: could not decide"
like "$err" "cannot merge onto $BESIDE: it does not descend from refs/heads/master's head $BASE" \
	"saying why"
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --stages merge --onto xyz "$KREPO" q-last
is "$rc" 2 "--onto wants a commit's id"
like "$err" "^error: --onto wants the commit's 40 hex digits, not 'xyz'\$" "naming what it got"
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --stages merge --onto "$(printf %.12s "$ONTO")" "$KREPO" q-last
is "$rc" 2 "the full id, not an abbreviation"
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --stages verify --onto "$ONTO" "$KREPO" q-last
is "$rc" 2 "nor without the merge stage"
like "$err" "^error: --onto wants the merge stage\$" "saying so"
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --onto "$ONTO" --queue "$SCRATCH/good"
is "$rc" 2 "nor with --queue"
like "$err" "^error: --onto is one pull's: a queue merges each pull onto the stack it computes\$" \
	"which stacks its pulls itself"

# --- usage -----------------------------------------------------------------------------------
printf '# two pulls\n%s q-alpha\n\n%s q-last extra\n' "$KREPO" "$KREPO" >"$SCRATCH/bad"
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --queue "$SCRATCH/bad"
is "$rc" 2 "a bad line in the queue file is a usage error"
is "$(printf '%s\n' "$err" | wc -l | tr -d ' ')" 1 "of one line"
like "$err" "^error: $SCRATCH/bad:4: a queue line is REPO TAG" "naming FILE:LINE"
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --approve --queue "$QUEUE"
is "$rc" 2 "--queue with --approve is refused"
like "$err" "approval through a queue is the service's" "saying whose it is"
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --stages merge,build,boot,approve --queue "$QUEUE"
is "$rc" 2 "so is --queue with the approve stage"
# shellcheck disable=SC2086
run "$PULLGATE" gate $OPTS --queue "$QUEUE" "$KREPO" q-alpha
is "$rc" 2 "--queue takes no REPO TAG"
