#!/bin/sh
# 91-serve-systemd.t - serve under a service manager: sd_notify over a fake $NOTIFY_SOCKET, SIGHUP reloads or keeps the old.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 13
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

# a datagram socket like systemd's: each message a line in $SCRATCH/notify.log
LISTEN_PID=
"$PY" - "$SCRATCH/notify.sock" "$SCRATCH/notify.log" <<'EOP' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[2], "w").close()
while True:
    data = s.recv(4096).decode()
    with open(sys.argv[2], "a") as f:
        f.write(data.replace("\n", " ") + "\n")
EOP
LISTEN_PID=$!
TAP_CLEANUP="kill_listener"
kill_listener() { kill "$LISTEN_PID" 2>/dev/null || true; }
wait_for test -e "$SCRATCH/notify.log"
# wait_line TEXT FILE: until a line of FILE is TEXT (a test's patience at most)
wait_line() { wait_for grep -qx -- "$1" "$2" 2>/dev/null; }
login() { curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-d "{\"user\":\"$1\",\"password\":\"$SERVE_PASSWORD\"}" "$URL/api/login"; }

serve_setup
export NOTIFY_SOCKET="$SCRATCH/notify.sock"
serve_start
ok "$(wait_line READY=1 "$SCRATCH/notify.log"; echo $?)" "serve tells the service manager READY=1 once it listens"
is "$(login second)" 401 "an account that is not configured cannot log in"

# a valid change: a second account, and a port change that needs a restart
hash=$(printf '%s\n' "$SERVE_PASSWORD" | "$PULLGATE" serve --hash-password)
cp "$CONFIG" "$SCRATCH/serve.yaml.orig"
sed -e 's/^  port: 0$/  port: 1/' "$SCRATCH/serve.yaml.orig" >"$CONFIG"
printf '  - name: second\n    password-hash: '"'%s'"'\n' "$hash" >>"$CONFIG"
: >"$SCRATCH/notify.log"
kill -HUP "$SERVE_PID"
ok "$(wait_line READY=1 "$SCRATCH/notify.log"; echo $?)" "a reload is announced and ends READY=1"
is "$(head -n1 "$SCRATCH/notify.log")" "RELOADING=1" "after RELOADING=1"
is "$(login second)" 200 "after SIGHUP the new account logs in"
like "$(cat "$SCRATCH/serve.err")" "reloaded .*serve.yaml; a restart is needed to change listen$" \
	"one log line: reloaded, and which keys wait for a restart"
is "$(curl -s -o /dev/null -w '%{http_code}' "$URL/healthz")" 200 "it still listens where it did"
# the worker keeps the queue it runs (stack or each) until a restart, and says so
sed -i 's/^  verify-workers: 2$/  verify-workers: 2\n  queue: each/' "$CONFIG"
: >"$SCRATCH/notify.log"
kill -HUP "$SERVE_PID"
wait_line READY=1 "$SCRATCH/notify.log" || true
like "$(tail -n1 "$SCRATCH/serve.err")" "reloaded .*serve.yaml; a restart is needed to change listen, pipeline.queue$" \
	"pipeline.queue waits for a restart too"

# an invalid policy: refused, the running configuration stays
printf 'checks:\n  no-such-check: error\n' >"$SCRATCH/policy.yaml"
: >"$SCRATCH/notify.log"
kill -HUP "$SERVE_PID"
wait_line READY=1 "$SCRATCH/notify.log" || true
like "$(tail -n1 "$SCRATCH/serve.err")" "reload refused, the running configuration stays: .*policy.yaml:2:3: .*no-such-check" \
	"a broken policy is refused with its place, in one line"
is "$(login second)" 200 "and what was running stays"
cp "$SCRATCH/serve.yaml.orig" "$CONFIG"
printf 'listen: [\n' >>"$CONFIG"
: >"$SCRATCH/notify.log"
kill -HUP "$SERVE_PID"
wait_line READY=1 "$SCRATCH/notify.log" || true
like "$(tail -n1 "$SCRATCH/serve.err")" "reload refused, the running configuration stays: .*serve.yaml:" \
	"so is a broken configuration"

: >"$SCRATCH/notify.log"
serve_stop
is "$SERVE_RC" 0 "SIGTERM stops it cleanly"
is "$(cat "$SCRATCH/notify.log")" "STOPPING=1" "saying STOPPING=1"
