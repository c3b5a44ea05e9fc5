#!/bin/sh
# 78-serve-queue-resolutions.t - a resolution recorded, removed or recorded again while a pull waits behind the pull it conflicts with: the entry check runs again, and the pull leaves the wait (or waits again) before it is tested.
#
# The stand-in build and boot judge the tree's fake/ files (FAKE_BUILD=tree,
# tests/lib/stack.sh).  One verify worker, so that the pulls enter the
# queue in the order they came.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
. "$(dirname "$0")/../lib/stack.sh"
plan 16
export FAKE_BUILD=tree
serve_setup
sed -i 's/^  verify-workers: 2$/  verify-workers: 1/' "$CONFIG"
stack_upstream
sed -i "s|^  url: .*|  url: '$UPQ'|" "$SCRATCH/policy.yaml"
stack_pull r-lim-a fake/limits.c='set LIMIT = 2'
stack_pull r-lim-b fake/limits.c='set LIMIT = 3'         # merges alone, conflicts with r-lim-a
serve_start
RES_REF=refs/pullgate/resolutions/r-lim-b

PA=$(deliver_tag r-lim-a)
is "$(wait_state "$PA" waiting rejected error)" waiting "the first pull is tested and waits"
MA=$(pull_field "$PA" .merge_commit)
PB=$(deliver_tag r-lim-b)
waits_behind() { [ "$(pull_field "$1" .conflict_with)" = "$2" ]; }
ok "$(wait_for waits_behind "$PB" "$PA"; echo $?)" "the second conflicts with it at entry, and waits behind it"
is "$(pull_field "$PB" .state) $(pull_field "$PB" .conflict)" \
	"verified conflicts with pull $PA (r-lim-a) in fake/limits.c: 1 hunk" "not tested: its conflict is said"

# --- held, so that nothing tests it: a resolution recorded, then removed -------------------------------
maintainer_login
maintainer_post "$PB" hold
is "$code" 200 "the maintainer holds it"
git --git-dir="$TREE" fetch -q "$KREPO" "refs/tags/r-lim-b:refs/test/r-lim-b"
stack_resolve r-lim-b "$MA" "$(git --git-dir="$KREPO" rev-parse 'r-lim-b^{commit}')" \
	fake/limits.c='set LIMIT = 5'
git --git-dir="$TREE" update-ref -d refs/test/r-lim-b
ok "$(wait_for waits_behind "$PB" null; echo $?)" \
	"a resolution pushed after it entered: the entry check runs again, and it waits behind no one"
is "$(pull_field "$PB" .conflict)" \
	"conflicts with pull $PA (r-lim-a) in fake/limits.c: 1 hunk, resolved by $RES_REF" \
	"its conflict is said resolved, by that resolution"
like "$(cat "$SCRATCH/serve.err")" "pull $PB: waits behind pull $PA no longer, the resolutions having changed: conflicts with pull $PA .*, resolved by $RES_REF" \
	"the service's log says it leaves the wait, and why"
git --git-dir="$TREE" update-ref -d "$RES_REF"
ok "$(wait_for waits_behind "$PB" "$PA"; echo $?)" \
	"the resolution removed: the check finds the conflict again, and it waits behind the other again"
is "$(pull_field "$PB" .conflict)" "conflicts with pull $PA (r-lim-a) in fake/limits.c: 1 hunk" \
	"no resolution said"
like "$(cat "$SCRATCH/serve.err")" "pull $PB: waits behind pull $PA, the resolutions having changed" \
	"and the log says so"
maintainer_post "$PB" release
is "$code.$(pull_field "$PB" .state).$(pull_field "$PB" .merge_commit)" "200.verified.null" \
	"let go on, it still waits behind the other, not tested"

# --- recorded again while it waits behind the other: it leaves the wait and is tested --------------------
git --git-dir="$TREE" update-ref "$RES_REF" "$RES"
is "$(wait_state "$PB" waiting rejected error)" waiting \
	"a resolution pushed while it waits: it is tested now, and passes"
MB=$(pull_field "$PB" .merge_commit)
is "$(pull_field "$PB" .merge_base)" "$MA" "on the stack, on the merge of the pull it conflicted with"
is "$(pull_field "$PB" '.stages[] | select(.name == "merge") | .summary')" \
	"merge $(printf %.12s "$MB") on refs/heads/pullgate/r-lim-b, its 1 conflicted path resolved by $RES_REF ($(printf %.12s "$RES"))" \
	"its merge names the resolution"
is "$(git --git-dir="$TREE" show "$MB:fake/limits.c")" "set LIMIT = 5" \
	"and holds the resolution's file"
serve_stop
is "$SERVE_RC" 0 "the service stops cleanly (under the sanitizers: nothing leaked)"
