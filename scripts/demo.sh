#!/bin/sh
# demo.sh - the main job on embedded defaults: replay the incident through pullgate verify.
set -eu
PULLGATE=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
TOP=$(cd "$(dirname "$0")/.." && pwd)
: "${PULLGATE_HOME:=$HOME/.cache/pullgate}"
export PULLGATE_HOME
DEMO="$PULLGATE_HOME/demo"

echo "== building the incident fixtures in $DEMO"
"$TOP/fixtures/incident.sh" "$DEMO" >/dev/null
export GNUPGHOME="$DEMO/gnupg"
# the maintainer's keyring, and the one key trusted to sign Kees's pulls
. "$DEMO/keys.env"

status=0
echo
echo "== take one: hardening-v6.16-rc1-fix1, as b4 trailers -u rewrote it"
"$PULLGATE" verify --keyring "$DEMO/keyring.asc" --trust "$FPR_KEES" \
	--upstream "$DEMO/upstream.git:master" "$DEMO/kees.git" \
	hardening-v6.16-rc1-fix1 || status=$?
[ "$status" -eq 1 ] || { echo "demo: take one should be rejected (exit 1), got $status" >&2; exit 1; }

echo
echo "== take two: hardening-v6.16-rc1-fix1-take2"
status=0
"$PULLGATE" verify --keyring "$DEMO/keyring.asc" --trust "$FPR_KEES" \
	--upstream "$DEMO/upstream.git:master" "$DEMO/kees.git" \
	hardening-v6.16-rc1-fix1-take2 || status=$?
[ "$status" -eq 0 ] || { echo "demo: take two should be accepted (exit 0), got $status" >&2; exit 1; }
echo
echo "demo: take one rejected, take two accepted"
