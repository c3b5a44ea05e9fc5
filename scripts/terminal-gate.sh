#!/bin/sh
# terminal-gate.sh - make docs/terminal-gate.txt: the terminal during `pullgate gate` on the stand-ins, captured from tmux.
#
#   scripts/terminal-gate.sh [PULLGATE [OUT]]
#
# PULLGATE defaults to build/release/pullgate, OUT to docs/terminal-gate.txt.
# Never a kernel build: the gate runs the stand-in scripts of tests/fakes
# (PULLGATE_DATADIR), whose build.sh prints FAKE_OBJECTS extra objects,
# FAKE_OBJECT_DELAY seconds each, on the incident fixtures (fixtures/
# incident.sh, made in a scratch directory).  A first run, not shown, leaves
# the object count in the build directory, so that the run shown has a
# total.  That run is in a tmux session of its own (its own server socket,
# 100 columns by 30 rows); the screen is taken when the build's status line
# is half way, and the whole scrollback once the gate has exited.  Needs
# tmux and git; takes about a minute.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
PULLGATE=${1:-$TOP/build/release/pullgate}
OUT=${2:-$TOP/docs/terminal-gate.txt}
OBJECTS=400
DELAY=0.05
TAG=hardening-v6.16-rc1-fix1-take2

die() {
	echo "terminal-gate: $*" >&2
	exit 1
}
command -v tmux >/dev/null 2>&1 || die "tmux is needed"
[ -x "$PULLGATE" ] || die "'$PULLGATE' is not an executable pullgate"
PULLGATE=$(cd "$(dirname "$PULLGATE")" && pwd)/$(basename "$PULLGATE")

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-shot.XXXXXX")
SOCKET="pullgate-shot-$$"
shot() { tmux -L "$SOCKET" -f /dev/null "$@"; }
cleanup() {
	shot kill-server 2>/dev/null || true
	rm -rf "$SCRATCH"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

FX="$SCRATCH/fixtures/incident"
"$TOP/fixtures/incident.sh" "$FX" >/dev/null
# FPR_KEES
. "$FX/keys.env"
git clone -q --bare "$FX/upstream.git" "$SCRATCH/tree.git"
cat >"$SCRATCH/run.sh" <<EOF
#!/bin/sh
export GNUPGHOME='$FX/gnupg' PULLGATE_HOME='$SCRATCH/home' PULLGATE_DATADIR='$TOP/tests/fakes'
export FAKE_OBJECTS=$OBJECTS FAKE_OBJECT_DELAY=$DELAY
exec '$PULLGATE' gate --keyring '$FX/keyring.asc' --trust $FPR_KEES --upstream '$FX/upstream.git:master' \\
	--tree '$SCRATCH/tree.git' --no-approve '$FX/kees.git' $TAG
EOF
chmod +x "$SCRATCH/run.sh"

# the first run: the build directory learns the object count
"$SCRATCH/run.sh" >"$SCRATCH/first.log" 2>&1 || die "the first gate failed: $(tail -n 3 "$SCRATCH/first.log")"
# the run shown (the window stays when the gate exits, for the last screen)
git --git-dir="$SCRATCH/tree.git" for-each-ref --format='%(refname)' refs/heads/pullgate refs/pullgate |
	while read -r ref; do git --git-dir="$SCRATCH/tree.git" update-ref -d "$ref"; done
shot new-session -d -s shot -x 100 -y 30 \
	"TERM=xterm-256color '$SCRATCH/run.sh'; echo \$? >'$SCRATCH/status'" \; \
	set-option -g remain-on-exit on \; set-option -g status off

# poll the screen for what the program shows, 5 minutes at most
screen() { shot capture-pane -p -J -t shot "$@"; }
half=""
i=0
while [ -z "$half" ]; do
	n=$(screen | sed -n 's|^\[build\] \([0-9]*\)/[0-9]* objects .*|\1|p' | tail -n 1)
	if [ -n "$n" ] && [ "$n" -ge $((OBJECTS / 2)) ]; then
		half=$(screen)
		break
	fi
	[ ! -e "$SCRATCH/status" ] || die "the gate ended before its build was half way: $(screen | tail -n 5)"
	i=$((i + 1))
	[ $i -lt 1500 ] || die "no build status half way after 5 minutes: $(screen | tail -n 5)"
	sleep 0.2
done
i=0
while [ ! -s "$SCRATCH/status" ]; do
	i=$((i + 1))
	[ $i -lt 1500 ] || die "the gate did not end in 5 minutes"
	sleep 0.2
done
[ "$(cat "$SCRATCH/status")" = 0 ] || die "the gate shown exited with status $(cat "$SCRATCH/status")"
# from the boot's first line to the end: tmux's own "Pane is dead" line and blank rows dropped
end=$(screen -S - | sed -n '/^\[boot\] /,$p' | sed '/^Pane is dead/d' | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}')

# paths as names, not this machine's directories
names() {
	sed -e "s|$FX|FIXTURES/incident|g" -e "s|$SCRATCH|HOME|g" -e "s|$TOP/|SRC/|g" |
		sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
}
{
	cat <<EOF
# The terminal during \`pullgate gate\`, captured with \`tmux capture-pane -p -J\`
# (made by scripts/terminal-gate.sh: run it again when the output changes)
#
# A run with the test stand-ins, NOT a kernel build: PULLGATE_DATADIR=tests/fakes,
# whose build.sh prints $OBJECTS extra "CC" lines (FAKE_OBJECTS=$OBJECTS,
# FAKE_OBJECT_DELAY=$DELAY) and whose boot.sh replays a canned console, so the
# report and the boot's progress line say SIMULATED.  The total is the object
# count of the previous build in that build directory (a first run shows "N
# objects" with no total).  The last line is the status line, redrawn in place
# (CR, erase to end of line) as the build goes; the lines above it are the
# events that stay.  Lines the terminal wrapped are joined.
#
# run.sh is \`pullgate gate --keyring K --trust FPR --upstream UP:master --tree
# TREE --no-approve KEES $TAG\` on the incident fixtures
# (fixtures/incident.sh), with those variables exported, run once before.
# HOME is its scratch directory, FIXTURES where the fixtures were made, SRC
# the source tree:
#
#   tmux new-session -d -s shot -x 100 -y 30 "TERM=xterm-256color ./run.sh"
#   tmux capture-pane -p -J -t shot   # once the status line is half way
#
# With the merge build half way:

EOF
	printf '%s\n' "$half" | names
	cat <<EOF

# At the end (the status line erased, the report below it; on the terminal
# "accept" is bold green, an "error" red, a "warning" yellow):

EOF
	printf '%s\n' "$end" | names
} >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "terminal-gate: wrote $OUT"
