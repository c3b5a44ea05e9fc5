# wait.sh - waiting for a fact a program states, never for a while (sourced by tap.sh and serve.sh).

# PATIENCE: how many seconds a test waits for a fact before it calls it
# missing.  It bounds a wait that a broken program would never end; it never
# paces a test, so it is long (a loaded machine, a sanitizer build).
PATIENCE=${PATIENCE:-${PULLGATE_TEST_PATIENCE:-900}}

# wait_for CMD...: until CMD succeeds, or $PATIENCE seconds pass (status 1)
wait_for() {
	_wait_end=$(($(date +%s) + PATIENCE))
	until "$@"; do
		[ "$(date +%s)" -lt "$_wait_end" ] || return 1
		sleep 0.05
	done
}

# proc_state PID: PID's state letter (R, S, T, Z...), nothing once it is gone
proc_state() { sed -n 's/^.*) \([A-Za-z]\).*$/\1/p' "/proc/$1/stat" 2>/dev/null || true; }
# gone PID: PID has ended (no such process, or a zombie nobody has reaped yet)
gone() { case $(proc_state "$1") in Z | "") return 0 ;; esac; return 1; }
# wait_gone PID...: until every PID has ended (a kill takes effect when the killed process next runs)
wait_gone() {
	for _wg in "$@"; do
		[ -n "$_wg" ] && wait_for gone "$_wg" || return 1
	done
}
# stopped PID: PID has stopped itself (a build for tests at its PULLGATE_TEST_STOP point)
stopped() { [ "$(proc_state "$1")" = T ]; }
_stopped_or_ended() { case $(proc_state "$1") in T | Z | "") return 0 ;; esac; return 1; }
# wait_stopped PID: until PID stops at its test point; fails as soon as it ends instead
wait_stopped() { wait_for _stopped_or_ended "$1" && stopped "$1"; }

# dead_port FILE: a loopback TCP port that refuses every connection, its
# number in FILE.  A process binds it for as long as the test runs and never
# listens: nothing else can take the port meanwhile (a port found free and
# let go could be), and a connection to it is refused at once.
DEAD_PORT_PIDS=
dead_port() {
	python3 -c 'import os, signal, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d\n" % s.getsockname()[1])
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
signal.pause()' "$1" </dev/null >/dev/null 2>&1 &
	[ -n "$DEAD_PORT_PIDS" ] || TAP_CLEANUP="dead_ports_stop ${TAP_CLEANUP:-}"
	DEAD_PORT_PIDS="$DEAD_PORT_PIDS $!"
	wait_for test -s "$1"
}
dead_ports_stop() { for _dp in $DEAD_PORT_PIDS; do kill "$_dp" 2>/dev/null || true; done; }
