#!/bin/sh
# check-install.sh - make check-install: install into a temporary DESTDIR, hide the checkout, test the installed tree.
#
#   tests/install/check-install.sh
#
# The checkout is hidden under an empty read-only tmpfs in a mount
# namespace of the test's own, so anything the installed binary still took
# from it would fail: unshare -m as root (util-linux has it; if it fails,
# the check fails), else unshare -r -m in an unprivileged user namespace.
# Only when neither is possible (not root, user namespaces off) does the
# test run from another directory, and it skips "the checkout is out of
# sight" with the reason, which make check prints.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-install.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$TOP"
make -s install DESTDIR="$T/root" PREFIX=/usr/local >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log" >&2; exit 1; }
# what the test needs from the checkout, copied before it is hidden
mkdir -p "$T/t/tests/lib" "$T/t/tests/install" "$T/fixtures"
cp tests/lib/tap.sh tests/lib/wait.sh tests/lib/fixtures.sh "$T/t/tests/lib/"
cp tests/install/install.t "$T/t/tests/install/"
cp -R tests/fakes "$T/t/tests/fakes"
fixtures/incident.sh "$T/fixtures/incident" >/dev/null

# the test's skips are logged here (the checkout may be out of its sight),
# then appended to make check's log
skips="$T/skips.log"
: >"$skips"
set -- env -u PULLGATE_DATADIR PATH=/usr/sbin:/usr/bin:/sbin:/bin PULLGATE_SKIP_LOG="$skips" \
	PULLGATE="$T/root/usr/local/bin/pullgate" PULLGATE_ROOT="$T/root/usr/local" \
	PULLGATE_FIXTURES="$T/fixtures" PULLGATE_CHECKOUT="$TOP" TMPDIR="$T" \
	prove ${PROVE_FLAGS:-} "$T/t/tests/install/install.t"
hide='mount -t tmpfs -o ro pullgate-hidden "$0" && cd / && exec "$@"'
rc=0
if [ "$(id -u)" -eq 0 ]; then
	unshare -m sh -c "$hide" "$TOP" "$@" || rc=$?
elif unshare -r -m true 2>/dev/null; then
	unshare -r -m sh -c "$hide" "$TOP" "$@" || rc=$?
else
	why="not root, and no unprivileged user namespace for unshare -r -m"
	echo "# $why: the checkout stays visible" >&2
	(cd / && PULLGATE_CHECKOUT_VISIBLE="$why" "$@") || rc=$?
fi
[ -z "${PULLGATE_SKIP_LOG:-}" ] || cat "$skips" >>"$PULLGATE_SKIP_LOG"
exit $rc
