#!/bin/sh
# 78-serve-queue-cancel.t - a maintainer's cancel of a pull the queue has just claimed, before its kernel thread runs it: the cancel is kept, and the pull ends cancelled, not tested.
#
# The kernel thread is held between its claim and its run
# (PULLGATE_TEST_HOLD=claim:stacked, common/testpoint.h) while the
# maintainer cancels.  One build worktree: one kernel thread.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
. "$(dirname "$0")/../lib/stack.sh"
plan 7
export FAKE_BUILD=tree
stack_serve 1
stack_pull c-one fake/one.c='def one'
HOLD="$SCRATCH/hold"
mkdir -p "$HOLD"
TAP_CLEANUP="serve_kill_held"
PULLGATE_TEST_HOLD=claim:stacked PULLGATE_TEST_HOLD_DIR=$HOLD serve_start

P=$(deliver_tag c-one)
wait_for test -e "$HOLD/held"
is "$(cat "$HOLD/held")" "claim: stacked" "the kernel thread is held between its claim and its run"
is "$(pull_field "$P" .state)" merging "the pull is claimed"
maintainer_login
maintainer_post "$P" cancel
is "$code $(printf '%s' "$out" | jq -r .done)" "200 cancelled" "the maintainer cancels it"
touch "$HOLD/release"
is "$(wait_state "$P" cancelled waiting rejected error)" cancelled \
	"let go on, its thread records the cancel: the pull is not tested"
get "$URL/api/pulls/$P"
is "$(printf '%s' "$out" | jq -r '.decisions[-1] | "\(.user) \(.action)"')" "maintainer cancel" \
	"the cancellation is recorded with who did it"
is "$(printf '%s' "$out" | jq -r '.merge_commit')" null "no merge of it was recorded"
serve_stop
is "$SERVE_RC" 0 "the service stops cleanly (under the sanitizers: nothing leaked)"
