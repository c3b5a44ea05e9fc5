#!/bin/sh
# boot.sh - a stand-in for scripts/kernel/boot.sh in the gate tests: BUILD LOG TIMEOUT [NONCE].
#
# It "boots" the stand-in Image of tests/fakes' build.sh, which says which
# tree it was built from, and appends "base" or "merged" to BUILD/boots.
# FAKE_BOOT (the merge) and FAKE_BASE_BOOT (the base; default ok) pick the
# console and the exit status.  A good console has two suites, pullgate
# and overflow, the init's marker with NONCE and a power-off.  Hostile ones:
#   fail        a KUnit case fails          splat      and a WARN
#   timeout     exit 124, no marker         sleep      hang (pid in BUILD/boot.pid)
#   exit1       a good console, exit 1      empty      "1..0": no test at all
#   truncated   a plan of 2, one result     nomarker   no init marker
#   noktap      the marker, no KTAP         wrongnonce the marker of another boot
#   nopoweroff  no power-off                vanish     the overflow suite is gone
#   stale       copy an earlier run's console under PULLGATE_HOME/logs, exit 0
#   nolog       exit 1 without touching LOG (as boot.sh did for a missing Image)
# FAKE_BOOT_EXIT: the merge's boot exits with this status, whatever its console.
# BUILD/fake-kunit-fail (left by build.sh's FAKE_BUILD=tree): in any mode, each
# line is one more failing case of the pullgate suite: "CASE FILE:LINE WHAT"
# printed as KUnit prints an expectation that failed.  FAKE_KUNIT_FAIL
# names one more, for the merge's boot only (any bytes but whitespace and NUL).
set -eu
build=$1 log=$2 nonce=${4:-}
kind=merged
grep -q 'base tree' "$build/arch/arm64/boot/Image" 2>/dev/null && kind=base
echo "$kind" >>"$build/boots"
if [ "$kind" = base ]; then mode=${FAKE_BASE_BOOT:-ok}; else mode=${FAKE_BOOT:-ok}; fi
extra=""
[ ! -f "$build/fake-kunit-fail" ] || extra=$(cat "$build/fake-kunit-fail")
[ "$kind" = base ] || [ -z "${FAKE_KUNIT_FAIL:-}" ] || extra="$extra
$FAKE_KUNIT_FAIL"
ncases=$((2 + $(printf '%s' "$extra" | grep -c . || true)))

case $mode in
stale)
	old=$(find "$PULLGATE_HOME/logs" -name boot.log ! -path "$log" 2>/dev/null | head -n1)
	[ -n "$old" ] || exit 1
	cp "$old" "$log"
	exit 0 ;;
nolog) exit 1 ;;
sleep) echo $$ >"$build/boot.pid"; exec sleep 100000 ;; # until the test or the gate kills it
esac

line() { printf '[%12s] %s\n' "$1" "$2"; }
{
	line 0.000000 "Booting Linux on physical CPU 0x0000000000 [0x000f0510]"
	line 0.000001 "Kernel command line: console=ttyAMA0 panic=-1 loglevel=7 pullgate.nonce=$nonce"
	if [ "$mode" != noktap ]; then
		line 1.000000 "KTAP version 1"
		case $mode in
		empty) line 1.000001 "1..0" ;;
		vanish) line 1.000001 "1..1" ;;
		*) line 1.000001 "1..2" ;;
		esac
	fi
	if [ "$mode" != noktap ] && [ "$mode" != empty ]; then
		line 1.000002 "    KTAP version 1"
		line 1.000003 "    # Subtest: pullgate"
		line 1.000004 "    1..$ncases"
		line 1.000005 "    ok 1 define_flex_zeroes"
		if [ "$mode" = fail ]; then
			line 1.000006 "    # randstruct_reorders: EXPECTATION FAILED at lib/tests/pullgate_kunit.c:80"
			line 1.000007 "    not ok 2 randstruct_reorders"
		else
			line 1.000007 "    ok 2 randstruct_reorders"
		fi
		i=2
		printf '%s\n' "$extra" | while IFS= read -r l; do
			[ -n "$l" ] || continue
			i=$((i + 1))
			case=${l%% *}
			if [ "$case" = "$l" ]; then
				line 1.000007 "    # $case: EXPECTATION FAILED at fake/kunit.c:$i"
			else
				# "CASE FILE:LINE WHAT": as KUnit says where and what it expected
				rest=${l#* }
				line 1.000007 "    # $case: EXPECTATION FAILED at ${rest%% *}"
				line 1.000007 "    Expected ${rest#* }"
			fi
			line 1.000007 "    not ok $i $case"
		done
		if [ "$mode" = fail ] || [ -n "$extra" ]; then
			line 1.000008 "not ok 1 pullgate"
		else
			line 1.000008 "ok 1 pullgate"
		fi
	fi
	case $mode in
	noktap | empty | vanish | truncated) ;;
	*)
		line 1.100000 "    KTAP version 1"
		line 1.100001 "    # Subtest: overflow"
		line 1.100002 "    1..2"
		line 1.100003 "    ok 1 u8_u8__u8_overflow_test"
		line 1.100004 "    ok 2 shift_sane_test"
		line 1.100005 "ok 2 overflow" ;;
	esac
	if [ "$mode" = splat ]; then
		line 1.500000 "------------[ cut here ]------------"
		line 1.500001 "WARNING: CPU: 0 PID: 1 at lib/overflow.c:10 probe+0x10/0x20"
		line 1.500002 "Modules linked in:"
		line 1.500003 "---[ end trace 0000000000000000 ]---"
	fi
	case $mode in
	timeout | nomarker) ;;
	wrongnonce) line 2.000000 "pullgate-init: done nonce=0123456789abcdef0123456789abcdef" ;;
	*) line 2.000000 "pullgate-init: done nonce=$nonce" ;;
	esac
	case $mode in
	timeout | nopoweroff) ;;
	*) line 2.100000 "reboot: Power down" ;;
	esac
} >"$log"
case $mode in
timeout) exit 124 ;;
exit1) exit 1 ;;
esac
[ "$kind" = base ] || exit "${FAKE_BOOT_EXIT:-0}"
exit 0
