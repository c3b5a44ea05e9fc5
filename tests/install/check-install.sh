#!/bin/sh
# check-install.sh - make check-install: install into a temporary DESTDIR, hide the checkout, test the installed tree.
#
#   tests/install/check-install.sh
#
# The checkout is hidden under an empty read-only tmpfs in a mount
# namespace of the test's own (unshare -m, as root), so anything the
# installed binary still took from it would fail.  Where unshare cannot
# do that, the test runs from another directory and says the checkout
# stayed visible.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-install.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$TOP"
make -s install DESTDIR="$T/root" PREFIX=/usr/local >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log" >&2; exit 1; }
# what the test needs from the checkout, copied before it is hidden
mkdir -p "$T/t/tests/lib" "$T/t/tests/install" "$T/fixtures"
cp tests/lib/tap.sh tests/lib/fixtures.sh "$T/t/tests/lib/"
cp tests/install/install.t "$T/t/tests/install/"
cp -R tests/fakes "$T/t/tests/fakes"
fixtures/incident.sh "$T/fixtures/incident" >/dev/null

set -- env -u PULLGATE_DATADIR PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	PULLGATE="$T/root/usr/local/bin/pullgate" PULLGATE_ROOT="$T/root/usr/local" \
	PULLGATE_FIXTURES="$T/fixtures" PULLGATE_CHECKOUT="$TOP" TMPDIR="$T" \
	prove ${PROVE_FLAGS:-} "$T/t/tests/install/install.t"
if unshare -m true 2>/dev/null; then
	unshare -m sh -c 'mount -t tmpfs -o ro pullgate-hidden "$0" && cd / && exec "$@"' "$TOP" "$@"
else
	echo "# unshare -m is not available: the checkout stays visible" >&2
	cd / && PULLGATE_CHECKOUT_VISIBLE=1 "$@"
fi
