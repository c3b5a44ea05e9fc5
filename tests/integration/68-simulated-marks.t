#!/bin/sh
# 68-simulated-marks.t - a run of the stand-in scripts is marked simulated from its build on: the pull's page, the queue, the boot's progress line.
#
# The service runs the stand-ins of tests/fakes (serve.sh).  Its run is
# held in the build, then in the boot (PULLGATE_TEST_HOLD, a test point of
# the build made for tests), so that the pages are read while the run is in
# that state, not after its report says it was simulated.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 14
T1=hardening-v6.16-rc1-fix1
T2=hardening-v6.16-rc1-fix1-take2
serve_setup
push_record "$SCRATCH/take1.json" "$T1"
push_record "$SCRATCH/take2.json" "$T2"
BADGE='<span class="simulated" id="simulated" title="stand-in build and boot scripts ran'
# row ID: the queue's row of pull ID
row() { curl -s "$URL/" | grep "^<tr data-id=\"$1\">"; }

# held POINT: serve_start with the run held at POINT (the directory $SCRATCH/hold-N says when)
HOLDS=0
held() {
	HOLDS=$((HOLDS + 1))
	HOLD="$SCRATCH/hold-$HOLDS"
	mkdir -p "$HOLD"
	PULLGATE_TEST_HOLD=$1 PULLGATE_TEST_HOLD_DIR=$HOLD serve_start
}
# kill_held: SIGKILL (a held service's shutdown would wait for the held run), and what it left running
kill_held() {
	kill -KILL "$SERVE_PID"
	wait "$SERVE_PID" 2>/dev/null || true
	SERVE_PID=
	stop_fakes
}
TAP_CLEANUP="stop_fakes"

# --- held as the merge's build starts ------------------------------------------------------
held "build:building the merge"
hook push "$SCRATCH/take2.json" marks-take2
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
wait_for test -e "$HOLD/held"
is "$(wait_state "$ID" building waiting rejected error)" building "take two is building"
get "$URL/pulls/$ID"
like "$out" "data-state=\"building\">building</span> $BADGE" \
	"its page marks it simulated while it builds, before any report says so"
like "$out" '<body data-page="pull" data-pull="[0-9]+" data-final="no" data-stand-ins="yes">' \
	"and tells the page's script that this service's scripts are stand-ins"
like "$(row "$ID")" 'data-state="building">building</span> <span class="simulated" title="stand-in' \
	"the queue marks it too"
kill_held

# --- held as the boot starts ---------------------------------------------------------------
held "boot:booting"
wait_for test -e "$HOLD/held"
is "$(wait_state "$ID" booting waiting rejected error)" booting "run again, take two is booting"
get "$URL/pulls/$ID"
like "$out" "data-state=\"booting\">booting</span> $BADGE" "its page marks it simulated while it boots"
like "$(row "$ID")" 'data-state="booting">booting</span> <span class="simulated" title="stand-in' \
	"and so does the queue"
kill_held

# --- at the end ----------------------------------------------------------------------------
serve_start
is "$(wait_state "$ID" waiting rejected error)" waiting "take two waits for the maintainer"
like "$(row "$ID")" 'data-state="waiting">waiting</span> <span class="simulated" title="stand-in' \
	"the queue marks the finished run from its report"
# the job is over: its event stream gives what it kept and ends
events=$(curl -s -m "$PATIENCE" "$URL/api/pulls/$ID/events")
like "$events" '"text":"booting with a stand-in script, SIMULATED: nothing is really booted \(timeout [0-9]+ s\)"' \
	"the boot's progress line says a stand-in ran, and that nothing is booted"
unlike "$events" 'qemu-system-aarch64' "and never that QEMU boots it"
# a pull that never reached the build is not marked, stand-ins or not
hook push "$SCRATCH/take1.json" marks-take1
ID1=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID1" rejected waiting error)" rejected "take one is rejected by verify"
unlike "$(row "$ID1")" 'class="simulated"' "and the queue does not mark it"
get "$URL/pulls/$ID1"
unlike "$out" 'class="simulated"' "nor does its page"
serve_stop
