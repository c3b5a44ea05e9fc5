# tap.sh - a small TAP library for the integration tests (sourced, not run).
# Each test script sets a plan with `plan N`, asserts with ok/is/like, and
# gets a scratch directory in $SCRATCH that is removed on exit.

: "${PULLGATE:?set PULLGATE to the pullgate binary}"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-test.XXXXXX")
export PULLGATE_HOME="$SCRATCH/home"
_tap_n=0
_tap_failed=0
_tap_cleanup() {
	for f in ${TAP_CLEANUP:-}; do eval "$f" || true; done
	rm -rf "$SCRATCH"
}
trap _tap_cleanup EXIT

plan() { echo "1..$1"; }

# A skip is never silent: its reason goes to $PULLGATE_SKIP_LOG (make check
# prints that file at the end) as well as into the TAP stream.
_tap_skip_log() {
	[ -z "${PULLGATE_SKIP_LOG:-}" ] || printf '%s: %s\n' "${0##*/}" "$1" >>"$PULLGATE_SKIP_LOG"
}
# skip_all REASON: the whole file cannot run here (a plan of 0)
skip_all() {
	_tap_skip_log "$1"
	echo "1..0 # SKIP $1"
	exit 0
}
# skip REASON: one test cannot run here
skip() {
	_tap_skip_log "$1"
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n # SKIP $1"
}

_tap_result() {
	_tap_n=$((_tap_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $_tap_n - $2"
	else
		echo "not ok $_tap_n - $2"
		_tap_failed=$((_tap_failed + 1))
	fi
}

# ok CONDITION-EXIT-STATUS NAME: pass when the status is 0
ok() { _tap_result "$1" "$2"; }

# is GOT EXPECTED NAME
is() {
	if [ "$1" = "$2" ]; then
		_tap_result 0 "$3"
	else
		_tap_result 1 "$3"
		printf '#   got:      %s\n#   expected: %s\n' "$1" "$2" | head -40
	fi
}

# like TEXT EXTENDED-REGEX NAME: pass when a line of TEXT matches
like() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		_tap_result 0 "$3"
	else
		_tap_result 1 "$3"
		printf '#   no line matches: %s\n' "$2"
		printf '%s\n' "$1" | head -40 | sed 's/^/#   | /'
	fi
}

# unlike TEXT EXTENDED-REGEX NAME: pass when no line of TEXT matches
unlike() {
	if printf '%s\n' "$1" | grep -Eq -- "$2"; then
		_tap_result 1 "$3"
		printf '#   a line matches: %s\n' "$2"
		printf '%s\n' "$1" | grep -E -- "$2" | head -5 | sed 's/^/#   | /'
	else
		_tap_result 0 "$3"
	fi
}

. "$TOP/tests/lib/wait.sh"

# run CMD...: sets $out, $err, $rc
run() {
	set +e
	"$@" >"$SCRATCH/.out" 2>"$SCRATCH/.err"
	rc=$?
	out=$(cat "$SCRATCH/.out")
	err=$(cat "$SCRATCH/.err")
	set -e
}
