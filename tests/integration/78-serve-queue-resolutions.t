#!/bin/sh
# 78-serve-queue-resolutions.t - a resolution recorded, removed or recorded again while a pull waits behind the pull it conflicts with: the entry check runs again, and the pull leaves the wait (or waits again) before it is tested; a resolution renamed is said, and a settled conflict with a pull that left the queue is not checked again.
#
# The stand-in build and boot judge the tree's fake/ files (FAKE_BUILD=tree,
# tests/lib/stack.sh).  One verify worker, so that the pulls enter the
# queue in the order they came, and one build worktree: one kernel thread,
# whose log lines come in the order it acts.  A symbolic ref's loop among
# the resolutions is one ref that cannot be read: the others still count.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
. "$(dirname "$0")/../lib/stack.sh"
plan 26
export FAKE_BUILD=tree
stack_serve 1
stack_pull r-lim-a fake/limits.c='set LIMIT = 2'
stack_pull r-lim-b fake/limits.c='set LIMIT = 3'         # merges without r-lim-a, conflicts with it
stack_pull r-sh-c fake/shared.c='value = 3'
stack_pull r-sh-d fake/shared.c='value = 4'             # conflicts with r-sh-c
serve_start
RES_REF=refs/pullgate/resolutions/r-lim-b
# logged LINE: the service's log has a line matching the extended regex LINE
logged() { grep -Eq -- "$1" "$SCRATCH/serve.err"; }
# said TEXT: the service's log has TEXT in a line
said() { grep -Fq -- "$1" "$SCRATCH/serve.err"; }

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
git --git-dir="$TREE" symbolic-ref refs/pullgate/resolutions/loop-a refs/pullgate/resolutions/loop-b
git --git-dir="$TREE" symbolic-ref refs/pullgate/resolutions/loop-b refs/pullgate/resolutions/loop-a
stack_resolve_pull r-lim-b "$MA" fake/limits.c='set LIMIT = 5'
ok "$(wait_for waits_behind "$PB" null; echo $?)" \
	"a resolution pushed after it entered, beside a loop of symbolic refs: the entry check runs again, and it waits behind no one"
is "$(pull_field "$PB" .conflict)" \
	"conflicts with pull $PA (r-lim-a) in fake/limits.c: 1 hunk, resolved by $RES_REF" \
	"its conflict is said resolved, by that resolution"
ok "$(wait_for logged "pull $PB: waits behind pull $PA no longer, the resolutions having changed: conflicts with pull $PA .*, resolved by $RES_REF"; echo $?)" \
	"the service's log says it leaves the wait, and why"
unlike "$(cat "$SCRATCH/serve.err")" "resolutions cannot be looked at" "the loop fails no look at the resolutions"
git --git-dir="$TREE" symbolic-ref -d refs/pullgate/resolutions/loop-a
git --git-dir="$TREE" symbolic-ref -d refs/pullgate/resolutions/loop-b
git --git-dir="$TREE" update-ref -d "$RES_REF"
ok "$(wait_for waits_behind "$PB" "$PA"; echo $?)" \
	"the resolution removed: the check finds the conflict again, and it waits behind the other again"
is "$(pull_field "$PB" .conflict)" "conflicts with pull $PA (r-lim-a) in fake/limits.c: 1 hunk" \
	"no resolution said"
ok "$(wait_for logged "pull $PB: waits behind pull $PA, the resolutions having changed"; echo $?)" \
	"and the log says so"
maintainer_post "$PB" release
is "$code" 200 "let go on (it still waits behind the other: below, it is tested only once a resolution settles it)"

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
# what the log says of it from its release on: claimed once, after the check let it go on
is "$(sed -n "s/^.*pullgate: pull $PB: \(let go on\|waits behind pull $PA no longer\|merge, build and boot\).*\$/\1/p" \
	"$SCRATCH/serve.err" | sed -n '/^let go on$/,$p' | paste -sd'|' -)" \
	"let go on|waits behind pull $PA no longer|merge, build and boot" \
	"released, it was not tested while it waited behind the other: only once the resolution settled it"

# --- a settled conflict with a pull that left the queue: its finding stays -----------------------------
PC=$(deliver_tag r-sh-c)
is "$(wait_state "$PC" waiting rejected error)" waiting "a third pull is tested and waits"
MC=$(pull_field "$PC" .merge_commit)
PD=$(deliver_tag r-sh-d)
ok "$(wait_for waits_behind "$PD" "$PC"; echo $?)" "a fourth conflicts with it, and waits behind it"
maintainer_post "$PD" hold
stack_resolve_pull r-sh-d "$MC" fake/shared.c='value = 7'
SETTLED="conflicts with pull $PC (r-sh-c) in fake/shared.c: 1 hunk, resolved by refs/pullgate/resolutions/r-sh-d"
is "$code.$(wait_for waits_behind "$PD" null; echo $?).$(pull_field "$PD" .conflict)" "200.0.$SETTLED" \
	"held, a resolution settles it"
# the resolution under another name: only the text changes, and the window's readers are told
curl -sN "$URL/api/queue/events" >"$SCRATCH/queue.sse" 2>/dev/null &
SSE=$!
sse_stop() { kill "$SSE" 2>/dev/null || true; wait "$SSE" 2>/dev/null || true; }
TAP_CLEANUP="sse_stop ${TAP_CLEANUP:-}"
wait_for grep -q '^event: hello$' "$SCRATCH/queue.sse"
printf 'create refs/pullgate/resolutions/r-sh-e %s\ndelete refs/pullgate/resolutions/r-sh-d\n' "$RES" |
	git --git-dir="$TREE" update-ref --stdin
SETTLED="conflicts with pull $PC (r-sh-c) in fake/shared.c: 1 hunk, resolved by refs/pullgate/resolutions/r-sh-e"
ok "$(wait_for said "pull $PD: the resolutions having changed: $SETTLED"; echo $?)" \
	"the resolution renamed: the log says what settles it now"
ok "$(wait_for grep -q '^event: queue$' "$SCRATCH/queue.sse"; echo $?)" \
	"and the window's stream tells its readers the window changed"
sse_stop
maintainer_post "$PC" reject
is "$code" 200 "the pull it conflicted with is rejected: it leaves the queue"
# the resolutions change again; the look that sees it comes before the claim of the fourth
git --git-dir="$TREE" update-ref refs/pullgate/resolutions/unrelated "$BASE"
maintainer_post "$PD" release
is "$(wait_state "$PD" waiting rejected error)" waiting "let go on, it is tested, and passes"
is "$(pull_field "$PD" .conflict)" "$SETTLED" \
	"its conflict with a pull no longer in the queue is not checked again: still said resolved"
serve_stop
is "$SERVE_RC" 0 "the service stops cleanly (under the sanitizers: nothing leaked)"
