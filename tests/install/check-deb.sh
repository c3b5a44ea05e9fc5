#!/bin/sh
# check-deb.sh - make check-deb: build the .deb out of tree, lintian, dpkg -i, run it, dpkg -r.
#
#   tests/install/check-deb.sh
#
# The package is built from a copy of the checkout's files (tracked and
# new, not ignored ones such as build/), so the checkout stays clean.
# lintian must run and report no error; its warnings are printed.  The package is
# removed again at the end, also when a step fails.  Needs root (dpkg -i).
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-deb.XXXXXX")
installed=
cleanup() {
	[ -z "$installed" ] || dpkg -r pullgate >/dev/null 2>&1 || true
	rm -rf "$T"
}
trap cleanup EXIT
say() { printf 'check-deb: %s\n' "$*"; }
fail() { printf 'check-deb: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "dpkg -i needs root"
if dpkg-query -W -f='${db:Status-Status}' pullgate 2>/dev/null | grep -qx installed; then
	fail "a pullgate package is installed already: not touching it"
fi
mkdir "$T/src"
cd "$TOP"
# git lists files deleted from the work tree too: tar skips them
git ls-files -z --cached --others --exclude-standard |
	tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$T/src"
[ -f "$T/src/debian/control" ] || fail "copying the sources failed"

say "building (dpkg-buildpackage -us -uc -b) in $T/src"
(cd "$T/src" && dpkg-buildpackage -us -uc -b) >"$T/build.log" 2>&1 ||
	{ tail -n 40 "$T/build.log" >&2; fail "dpkg-buildpackage failed"; }
VERSION=$(dpkg-parsechangelog -l debian/changelog -S Version)
DEB="$T/pullgate_${VERSION}_$(dpkg --print-architecture).deb"
[ -f "$DEB" ] || fail "no $DEB"
say "built $(basename "$DEB")"

# lintian exits 2 for tags of severity error (--fail-on error) and 1 when it
# could not check the package: only 0 is a package checked and found clean.
# No tag is overridden: an error tag is a packaging bug to fix.
command -v lintian >/dev/null 2>&1 || fail "lintian is not installed (apt-get install lintian)"
lrc=0
lintian --fail-on error --no-tag-display-limit "$DEB" >"$T/lintian.log" 2>&1 || lrc=$?
case $lrc in
0) ;;
2) cat "$T/lintian.log" >&2; fail "lintian reports errors" ;;
*) cat "$T/lintian.log" >&2; fail "lintian could not check the package (exit $lrc)" ;;
esac
if grep -q '^E: ' "$T/lintian.log"; then
	cat "$T/lintian.log" >&2
	fail "lintian reports errors"
fi
# grep -c exits 1 when it counts none
nw=$(grep -c '^W: ' "$T/lintian.log") || [ $? -eq 1 ] || fail "cannot read $T/lintian.log"
say "lintian: no errors; $nw warning(s):"
[ "$nw" = 0 ] || grep '^W: ' "$T/lintian.log"

# serve opens libmicrohttpd when it starts and libcurl when it sends (not linked): shlibs cannot see them
dpkg-deb -f "$DEB" Depends | grep -q 'libmicrohttpd12' ||
	fail "the package does not depend on libmicrohttpd12, which pullgate serve opens"
dpkg-deb -f "$DEB" Depends | grep -q 'libcurl4 (>= 7.85)' ||
	fail "the package does not depend on libcurl4 (>= 7.85), which pullgate serve opens to send KCIDB documents (CURLOPT_PROTOCOLS_STR)"
dpkg -i "$DEB" >"$T/dpkg.log" 2>&1 || { cat "$T/dpkg.log" >&2; fail "dpkg -i failed"; }
installed=1
v=$(cd / && pullgate version)
[ "$v" = "pullgate $VERSION" ] || fail "pullgate version says '$v', not 'pullgate $VERSION'"
data=$(cd / && pullgate version --verbose | sed -n 's/^data: //p')
[ "$data" = /usr/share/pullgate ] || fail "the data directory is '$data', not /usr/share/pullgate"
# the test points of a build made for tests (common/testpoint.h) are not in what is shipped
! grep -q PULLGATE_TEST_ /usr/bin/pullgate || fail "the packaged pullgate has the test points of a build for tests"
(cd / && pullgate version --verbose) | grep -q '^test points' && fail "the packaged pullgate says it has test points"
[ -f /etc/pullgate/serve.yaml ] && [ -f /lib/systemd/system/pullgate.service ] &&
	[ -f /usr/share/man/man1/pullgate-verify.1.gz ] ||
	fail "the configuration, the unit or the man pages are missing"

id pullgate >/dev/null 2>&1 || fail "the postinst did not create the pullgate user"
sa=$(systemd-analyze verify pullgate.service 2>&1) || fail "systemd-analyze verify: $sa"
[ -z "$sa" ] || fail "systemd-analyze verify warns: $sa"
say "the pullgate user exists; systemd-analyze verify passes on the installed unit"

FX="$T/fixtures"
"$TOP/fixtures/incident.sh" "$FX/incident" >/dev/null
. "$FX/incident/keys.env"
export GNUPGHOME="$FX/incident/gnupg" PULLGATE_HOME="$T/home"
cd /
rc=0
pullgate verify --keyring "$FX/incident/keyring.asc" --trust "$FPR_KEES" \
	--upstream "$FX/incident/upstream.git:master" "$FX/incident/kees.git" \
	hardening-v6.16-rc1-fix1 >"$T/take1.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q rewritten-upstream "$T/take1.out" ||
	{ cat "$T/take1.out" >&2; fail "the packaged verify did not reject take one (exit $rc)"; }
pullgate verify --keyring "$FX/incident/keyring.asc" --trust "$FPR_KEES" \
	--upstream "$FX/incident/upstream.git:master" "$FX/incident/kees.git" \
	hardening-v6.16-rc1-fix1-take2 >"$T/take2.out" 2>&1 ||
	{ cat "$T/take2.out" >&2; fail "the packaged verify did not accept take two"; }
say "the packaged pullgate rejects take one and accepts take two"

dpkg -r pullgate >"$T/dpkg-r.log" 2>&1 || { cat "$T/dpkg-r.log" >&2; fail "dpkg -r failed"; }
installed=
[ ! -e /usr/bin/pullgate ] || fail "dpkg -r left /usr/bin/pullgate"
say "ok: built, lintian-clean, installed, run and removed"
