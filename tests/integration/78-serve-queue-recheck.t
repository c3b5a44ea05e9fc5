#!/bin/sh
# 78-serve-queue-recheck.t - while a kernel thread runs the entry check again on a pull that waits behind another, the pull ahead of it goes on: only the pull checked (and those behind it) wait for the check.
#
# Two build worktrees, two kernel threads: the one that runs the check
# again is held there (PULLGATE_TEST_HOLD=recheck, common/testpoint.h);
# meanwhile another hand moves the branch, and the other thread tests the
# pull ahead again on the new tip.  The stand-in build and boot judge the
# tree's fake/ files (FAKE_BUILD=tree, tests/lib/stack.sh).
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
. "$(dirname "$0")/../lib/stack.sh"
plan 8
export FAKE_BUILD=tree
stack_serve 2
stack_pull q-lim-a fake/limits.c='set LIMIT = 2'
stack_pull q-lim-b fake/limits.c='set LIMIT = 3'         # merges without q-lim-a, conflicts with it
HOLD="$SCRATCH/hold"
mkdir -p "$HOLD"
TAP_CLEANUP="serve_kill_held"
PULLGATE_TEST_HOLD=recheck PULLGATE_TEST_HOLD_DIR=$HOLD serve_start

PA=$(deliver_tag q-lim-a)
is "$(wait_state "$PA" waiting rejected error)" waiting "the first pull is tested and waits"
MA=$(pull_field "$PA" .merge_commit)
PB=$(deliver_tag q-lim-b)
waits_behind() { [ "$(pull_field "$1" .conflict_with)" = "$2" ]; }
ok "$(wait_for waits_behind "$PB" "$PA"; echo $?)" "the second conflicts with it at entry, and waits behind it"

# a resolution recorded: a kernel thread runs the check again, and is held there
stack_resolve_pull q-lim-b "$MA" fake/limits.c='set LIMIT = 5'
wait_for test -e "$HOLD/held"
is "$(cat "$HOLD/held")" "recheck: pull $PB" "a kernel thread checks the waiting pull again, held there"

# the branch moved by another hand: the pull ahead's stack is gone
stack_other_push
on_tip() { [ "$(pull_field "$PA" '"\(.state) \(.merge_base)"')" = "waiting $TIP" ]; }
ok "$(wait_for on_tip; echo $?)" \
	"meanwhile the other kernel thread tests the pull ahead again, on the new tip"
is "$(pull_field "$PB" '"\(.state) \(.conflict_with)"')" "verified $PA" \
	"the pull being checked is neither claimed nor changed while its check is held"

touch "$HOLD/release"
is "$(wait_state "$PB" waiting rejected error)" waiting \
	"the check let go on, the resolution settles it: it is tested, and passes"
is "$(pull_field "$PB" .merge_base)" "$(pull_field "$PA" .merge_commit)" \
	"on the stack, on the pull ahead's new merge"
serve_stop
is "$SERVE_RC" 0 "the service stops cleanly (under the sanitizers: nothing leaked)"
