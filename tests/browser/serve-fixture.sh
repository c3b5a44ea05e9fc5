#!/bin/sh
# serve-fixture.sh - start pullgate serve for the browser test with take one, take two and an XSS pull in it.
#
#   PULLGATE=... [PULLGATE_FIXTURES=...] tests/browser/serve-fixture.sh
#
# The build is the stand-in of tests/fakes, held by tests/browser/fakes: it
# compiles FAKE_OBJECTS (40) objects, FAKE_OBJECT_DELAY (0.15) seconds each,
# and a pull the browser test pushes itself (LIVE, a push record, signed
# with PUSH_SECRET) stops after 20 of them until the file GO exists, so that
# its page is seen running, with the build's progress bar against the object
# count of take two's build, however long the browser takes to look.
# Prints KEY=VALUE lines (URL, ID1, ID2, IDX, PASSWORD, LIVE, PUSH_SECRET,
# GO), then READY, and
# keeps the server running until it gets SIGTERM; then it stops the server
# and removes its scratch directory.
set -eu
: "${PULLGATE:?set PULLGATE to the pullgate binary}"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-browser.XXXXXX")
export PULLGATE_HOME="$SCRATCH/home"
. "$TOP/tests/lib/fixtures.sh"
. "$TOP/tests/lib/serve.sh"
cleanup() {
	serve_kill
	rm -rf "$SCRATCH"
}
trap 'cleanup; exit 0' TERM INT
trap cleanup EXIT

SERVE_DATADIR="$TOP/tests/browser/fakes"
export FAKE_OBJECTS="${FAKE_OBJECTS:-40}" FAKE_OBJECT_DELAY="${FAKE_OBJECT_DELAY:-0.15}"
export BROWSER_HOLD="$SCRATCH/hold-live" BROWSER_GO="$SCRATCH/go-live"
serve_setup >/dev/null
# each pull on the head: the live pull below is take two's commits again, which the queue's
# stack (take two's merge, waiting) already holds, and this test watches a build
sed -i 's/^  verify-workers: 2$/  verify-workers: 2\n  queue: each/' "$CONFIG"
serve_start
push_record "$SCRATCH/take1.json" hardening-v6.16-rc1-fix1
hook push "$SCRATCH/take1.json" browser-take1
ID1=$(printf '%s' "$out" | jq -r '.jobs[0]')
push_record "$SCRATCH/take2.json" hardening-v6.16-rc1-fix1-take2
hook push "$SCRATCH/take2.json" browser-take2
ID2=$(printf '%s' "$out" | jq -r '.jobs[0]')
xss_tag xss-browser >/dev/null
push_record "$SCRATCH/xss.json" xss-browser
hook push "$SCRATCH/xss.json" browser-xss
IDX=$(printf '%s' "$out" | jq -r '.jobs[0]')
wait_state "$ID1" rejected error >/dev/null
wait_state "$ID2" waiting error rejected >/dev/null
wait_state "$IDX" rejected waiting error >/dev/null
# from now on a build stops part of the way until GO exists
: >"$BROWSER_HOLD"
echo "URL=$URL"
echo "ID1=$ID1"
echo "ID2=$ID2"
echo "IDX=$IDX"
echo "PASSWORD=$SERVE_PASSWORD"
# the live pull: take two's commits under a tag of their own, signed by Kees (take two's
# job is open, waiting, and a push of its own tag would name that job instead of a new one)
LIVE_TAG=hardening-v6.16-rc1-fix1-take2-live
mkdir -m 700 "$SCRATCH/gnupg-live"
for f in "$FX/gnupg"/*; do
	case ${f##*/} in
	S.*) ;;
	*) cp -r "$f" "$SCRATCH/gnupg-live/" ;;
	esac
done
GNUPGHOME="$SCRATCH/gnupg-live" GIT_COMMITTER_NAME="Kees Cook" GIT_COMMITTER_EMAIL=kees@kernel.org \
	git --git-dir="$KREPO" -c tag.gpgSign=true tag -s -u "$FPR_KEES" \
	-m "hardening fixes for v6.16-rc1 (live)" "$LIVE_TAG" \
	"refs/tags/hardening-v6.16-rc1-fix1-take2^{commit}" >/dev/null
GNUPGHOME="$SCRATCH/gnupg-live" gpgconf --kill gpg-agent 2>/dev/null || true
push_record "$SCRATCH/live.json" "$LIVE_TAG"
echo "LIVE=$SCRATCH/live.json"
echo "PUSH_SECRET=$PUSH_SECRET"
echo "GO=$BROWSER_GO"
echo READY
# wait for the server; a signal to this script stops it
wait "$SERVE_PID" || true
