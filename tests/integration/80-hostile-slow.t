#!/bin/sh
# 80-hostile-slow.t - slow clients: the service keeps answering while 200 connections trickle, and cuts each request at its deadline.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 12
HOSTILE="$TOP/tests/lib/hostile.py"
# the first service's deadlines are far away: its slow clients stay as long as the test wants
serve_setup 'limits:
  header-timeout: 3600
  body-timeout: 3600'
serve_start
PORT=${URL##*:}

# --- 200 connections trickle a byte a second: the others are still served -------------------
# (they trickle until the test is done with them: what is asked meanwhile is answered meanwhile)
python3 "$HOSTILE" slow 127.0.0.1 "$PORT" 200 3600 ready="$SCRATCH/slow.ready" stop="$SCRATCH/slow.stop" \
	>"$SCRATCH/slow.out" &
ATTACK=$!
TAP_CLEANUP="stop_attack"
stop_attack() { : >"$SCRATCH/slow.stop"; }
wait_for test -e "$SCRATCH/slow.ready"
n=0
for i in 1 2 3 4 5; do
	c=$(curl -s -o /dev/null -m "$PATIENCE" -w '%{http_code}' "$URL/healthz" || true)
	[ "$c" = 200 ] && n=$((n + 1))
done
is "$n" 5 "/healthz answers, each time, while 200 connections trickle"
code=$(curl -s -o /dev/null -m "$PATIENCE" -w '%{http_code}' "$URL/api/pulls" || true)
is "$code" 200 "and so does the API"
# a request that keeps within its deadline is served, however slowly its bytes came
python3 -c 'import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
for part in (b"GET /healthz HTTP/1.1\r\n", b"Host: 127.0.0.1\r\n", b"Connection: close\r\n\r\n"):
    s.sendall(part)
    time.sleep(1)
print(s.recv(100).decode().splitlines()[0])' "$PORT" >"$SCRATCH/patient.out"
is "$(cat "$SCRATCH/patient.out")" "HTTP/1.1 200 OK" "a slow but timely request is answered"
stop_attack
wait "$ATTACK"
is "$(cat "$SCRATCH/slow.out")" "opened=200 answered408=0 cut=0 open=200 refused=0 complete=0" \
	"all 200 slow connections were accepted and kept (none shut out the others)"
serve_stop
is "$SERVE_RC" 0 "the server stops cleanly after the attack"

# --- every request has an absolute deadline: a trickle does not extend it ----------------------
# the trickles would take 200 s (headers) and 1000 s (bodies): each is cut long before
serve_setup 'limits:
  header-timeout: 2
  body-timeout: 3'
serve_start
PORT=${URL##*:}
python3 "$HOSTILE" slow 127.0.0.1 "$PORT" 50 3600 >"$SCRATCH/headers.out"
like "$(cat "$SCRATCH/headers.out")" "^opened=50 answered408=50 cut=50 open=0 refused=0 " \
	"50 requests trickling their headers are each answered 408 and closed at the header deadline"
like "$(cat "$SCRATCH/headers.out")" " complete=0$" \
	"long before the trickle would have ended: none got its 200 bytes out"
python3 "$HOSTILE" slow 127.0.0.1 "$PORT" 20 3600 body >"$SCRATCH/body.out"
like "$(cat "$SCRATCH/body.out")" '^opened=20 answered408=0 cut=20 open=0 refused=0 complete=0$' \
	"20 requests trickling their bodies are closed at the body deadline"
get "$URL/metrics"
like "$out" '^pullgate_http_request_timeouts_total 70$' "/metrics counts the 70 requests cut"
like "$out" '^pullgate_http_connections [1-2]$' "and no connection of theirs stays open"
get "$URL/healthz"
is "$code" 200 "the service is healthy afterwards"
serve_stop
is "$SERVE_RC" 0 "the server stops cleanly"
