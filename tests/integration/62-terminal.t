#!/bin/sh
# 62-terminal.t - progress and colour: a status line redrawn in place on a terminal (script(1)), plain lines elsewhere.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
plan 29
fixture_incident
export PULLGATE_DATADIR="$TOP/tests/fakes"
TREE="$SCRATCH/tree.git"
git clone -q --bare "$FX/upstream.git" "$TREE"
T1=hardening-v6.16-rc1-fix1
T2=hardening-v6.16-rc1-fix1-take2
ESC=$(printf '\033')
CR=$(printf '\r')
ARGS="--keyring $KEYRING --trust $FPR_KEES --upstream $UP"

# tty CMD...: run CMD on a pseudo-terminal (script(1)); $out is all it showed, $rc its status
tty() {
	set +e
	TERM=xterm script -qec "$*" "$SCRATCH/typescript" >/dev/null 2>&1 </dev/null
	rc=$?
	set -e
	out=$(cat "$SCRATCH/typescript")
}
has() { case $1 in *"$2"*) return 0 ;; *) return 1 ;; esac; }
# yes CMD...: 0 when CMD succeeds, else 1, for ok
yes() { if "$@"; then echo 0; else echo 1; fi; }
lacks() { ! has "$@"; }

# --- not a terminal: plain lines, no escape sequence anywhere ----------------------
run "$PULLGATE" gate $ARGS --tree "$TREE" --no-approve "$KEES" "$T2"
is "$rc" 0 "a gate with the stand-ins passes"
like "$err" '^\[build\] starting$' "stages are plain lines on standard error"
like "$err" '^\[build\] [0-9]+ objects' "the build's progress is a plain line too"
ok "$(yes lacks "$out$err" "$ESC")$(yes lacks "$out$err" "$CR" | tr -d 0)" \
	"no escape sequence and no carriage return when nothing is a terminal"

# --- a terminal: one status line redrawn, the report in colour ---------------------
# the second gate knows the first build's object count: done of total
tty "'$PULLGATE' gate $ARGS --tree '$TREE' --no-approve '$KEES' '$T2'"
is "$rc" 0 "on a terminal the gate passes too"
ok "$(yes has "$out" "$CR$ESC[K[build] 1/3 objects (33%)")" \
	"the build's status is redrawn in place (CR, erase line), done of the last build's total"
ok "$(yes has "$out" "$CR$ESC[K[build] starting")" "stage events replace the status line too"
ok "$(yes has "$out" "verdict: $ESC[1m$ESC[32maccept$ESC[0m")" "the verdict is green"

tty "'$PULLGATE' verify $ARGS '$KEES' '$T1'"
is "$rc" 1 "take one is rejected on a terminal"
ok "$(yes has "$out" "$ESC[31merror$ESC[0m ")" "errors are red"
# PLAIN: an error line as it reads without colour
PLAIN="error    rewritten-upstream"
tty "NO_COLOR=1 '$PULLGATE' verify $ARGS '$KEES' '$T1'"
is "$rc" 1 "with NO_COLOR take one is still rejected"
ok "$(yes has "$out" "$PLAIN")" "and its errors shown"
ok "$(yes lacks "$out" "$ESC[31m")" "NO_COLOR turns colour off"
tty "'$PULLGATE' verify --color=never $ARGS '$KEES' '$T1'"
is "$rc" 1 "with --color=never take one is still rejected"
ok "$(yes has "$out" "$PLAIN")" "and its errors shown"
ok "$(yes lacks "$out" "$ESC[31m")" "so does --color=never"
tty "TERM=dumb '$PULLGATE' verify $ARGS '$KEES' '$T1'"
is "$rc" 1 "on a dumb terminal take one is still rejected"
ok "$(yes has "$out" "$PLAIN")" "and its errors shown"
ok "$(yes lacks "$out" "$ESC")" "a dumb terminal gets no escape sequence"

# --- --color=always into a pipe ----------------------------------------------------
run env NO_COLOR=1 "$PULLGATE" verify --color=always $ARGS "$KEES" "$T1"
is "$rc" 1 "--color=always into a pipe: take one is rejected"
ok "$(yes has "$out" "$ESC[31merror$ESC[0m ")" "--color=always colours a pipe, NO_COLOR or not"
# a gate, for progress to show: verify of local repositories prints none
run env NO_COLOR=1 "$PULLGATE" gate --color=always $ARGS --tree "$TREE" --no-approve "$KEES" "$T2"
is "$rc" 0 "--color=always into a pipe: the gate passes"
like "$err" '^\[build\] starting$' "its stages are on standard error"
ok "$(yes lacks "$err" "$ESC")" "but progress stays plain lines: standard error is no terminal"
run "$PULLGATE" verify --color=sometimes $ARGS "$KEES" "$T1"
is "$rc" 2 "--color takes auto, always or never"

# --- a fetch over the network: libgit2's transfer progress -------------------------
# git daemon on loopback serves the sender's repository as git://
stop_daemon() { [ ! -f "$SCRATCH/daemon.pid" ] || kill "$(cat "$SCRATCH/daemon.pid")" 2>/dev/null || true; }
TAP_CLEANUP="${TAP_CLEANUP:-} stop_daemon"
daemon_up() { git ls-remote "git://127.0.0.1:$PORT/kees.git" >/dev/null 2>&1; }
daemon_up_or_gone() { daemon_up || gone "$DAEMON"; }
# on a port the kernel just gave out and let go: another process may take it first, and then
# the daemon cannot bind and ends; it is started again on another
tries=0
until [ $tries -ge 20 ]; do
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	git daemon --reuseaddr --export-all --base-path="$FX" --listen=127.0.0.1 --port="$PORT" \
		--pid-file="$SCRATCH/daemon.pid" "$FX" >"$SCRATCH/daemon.log" 2>&1 &
	DAEMON=$!
	wait_for daemon_up_or_gone && daemon_up && break
	wait "$DAEMON" 2>/dev/null || true
	tries=$((tries + 1))
done
tty "PULLGATE_HOME='$SCRATCH/home-tty' '$PULLGATE' verify $ARGS git://127.0.0.1:$PORT/kees.git '$T2'"
is "$rc" 0 "a pull fetched over git:// verifies"
like "$(printf '%s' "$out" | tr '\r' '\n')" '^.\[K\[fetch\] ([0-9]+)/\1 objects \(100%\), [0-9.]+ KiB' \
	"the fetch's objects received of the total and its bytes are shown"
run env PULLGATE_HOME="$SCRATCH/home-pipe" "$PULLGATE" verify $ARGS "git://127.0.0.1:$PORT/kees.git" "$T2"
is "$rc" 0 "the same fetch into a pipe verifies"
like "$err" '^\[fetch\] [0-9]+/[0-9]+ objects' "and a plain line when standard error is no terminal"
