#!/bin/sh
# 93-serve-streams.t - streams nobody logged in for are capped in all and end at their deadline; a hook still gets in.
#
# The run is held in its build (PULLGATE_TEST_HOLD), so that its streams
# last; their deadline is on a clock the test sets (PULLGATE_TEST_CLOCK):
# a stream ends when the test moves the clock, and the test waits for its
# connection to close, never for a while.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 11
serve_setup 'limits:
  streams: 4
  stream-seconds: 30'
CLOCK="$SCRATCH/clock"
echo 1000000 >"$CLOCK"
advance() { echo $(($(cat "$CLOCK") + $1 * 1000)) >"$CLOCK"; }
HOLD="$SCRATCH/hold"
mkdir -p "$HOLD"
stop_held() {
	[ -n "${SERVE_PID:-}" ] && kill -KILL "$SERVE_PID" 2>/dev/null || true
	SERVE_PID=
	for p in $STREAMS; do kill "$p" 2>/dev/null || true; done
	stop_fakes
}
STREAMS=
TAP_CLEANUP="stop_held"
PULLGATE_TEST_CLOCK=$CLOCK PULLGATE_TEST_HOLD="build:building the merge" PULLGATE_TEST_HOLD_DIR=$HOLD \
	serve_start
push_record "$SCRATCH/take2.json" hardening-v6.16-rc1-fix1-take2
hook push "$SCRATCH/take2.json" streams-take2
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
wait_for test -e "$HOLD/held"
is "$(wait_state "$ID" building waiting rejected error)" building "the pull is held in its build"

# stream N ADDRESS PATH: a stream from ADDRESS in the background, its answer in $SCRATCH/stream-N
# and curl's exit status in $SCRATCH/stream-N.rc once it ends
stream() {
	(
		set +e
		curl -s -N -D "$SCRATCH/stream-$1.head" --interface "$2" -o "$SCRATCH/stream-$1" \
			"$URL$3"
		echo $? >"$SCRATCH/stream-$1.rc"
	) &
	STREAMS="$STREAMS $!"
}
began() { grep -q '^event: hello' "$SCRATCH/stream-$1" 2>/dev/null; }
ended() { test -e "$SCRATCH/stream-$1.rc"; }

# --- four streams from four addresses fill the cap -------------------------------------------
for n in 2 3 4 5; do
	stream "$n" "127.0.0.$n" "/api/pulls/$ID/events"
done
ok "$(for n in 2 3 4 5; do wait_for began "$n" || exit 1; done; echo 0)" \
	"four streams from 127.0.0.2-5 are answered (limits.streams: 4)"

# --- past the cap: refused at once, with a status and a reason ------------------------------------
code=$(curl -s -m "$PATIENCE" --interface 127.0.0.6 -D "$SCRATCH/h6" -o "$SCRATCH/r6" \
	-w '%{http_code}' "$URL/api/pulls/$ID/events")
is "$code" 503 "a fifth stream, from another address, is refused (503) at once"
like "$(jq -r .error "$SCRATCH/r6")" "too many streams at once" "saying why"
like "$(tr -d '\r' <"$SCRATCH/h6")" "Retry-After: 10" "and when to come again"
code=$(curl -s -m "$PATIENCE" --interface 127.0.0.7 -o "$SCRATCH/r7" -w '%{http_code}' \
	"$URL/api/pulls/$ID/log?stage=build&follow=1")
is "$code" 503 "and so is a followed log: it is a stream too"

# --- the hooks still get in ---------------------------------------------------------------------
push_record "$SCRATCH/take1.json" hardening-v6.16-rc1-fix1
hook push "$SCRATCH/take1.json" streams-take1
is "$code" 202 "while the streams fill their cap, a hook gets in and is answered"

# --- the deadline: the streams end, cleanly, and make room ------------------------------------
for n in 2 3 4 5; do ended "$n" && echo "# stream $n ended early" >&2; done
advance 31
ok "$(for n in 2 3 4 5; do wait_for ended "$n" || exit 1; done; echo 0)" \
	"once stream-seconds (30) have passed, the service ends every stream"
is "$(cat "$SCRATCH"/stream-[2345].rc | sort -u)" 0 "each cleanly: curl saw the end of the answer"
stream 8 127.0.0.6 "/api/pulls/$ID/events"
ok "$(wait_for began 8; echo $?)" "the ended streams made room: a new one is answered"
advance 31
ok "$(wait_for ended 8; echo $?)" "and it too ends at its deadline"
stop_held
