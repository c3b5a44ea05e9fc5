#!/bin/sh
# boot.sh - a stand-in for scripts/kernel/boot.sh in the gate tests: BUILD LOG TIMEOUT.
#
# FAKE_BOOT: ok (all pass), fail (one KUnit case fails), splat (a WARN),
# timeout (exit 124, as boot.sh does when QEMU is killed).
set -eu
log=$2
{
	echo "[    0.000000] Booting Linux on physical CPU 0x0000000000 [0x000f0510]"
	echo "[    1.000000] KTAP version 1"
	echo "[    1.000001] 1..1"
	echo "[    1.000002]     KTAP version 1"
	echo "[    1.000003]     # Subtest: pullgate"
	echo "[    1.000004]     1..2"
	echo "[    1.000005]     ok 1 define_flex_zeroes"
	if [ "${FAKE_BOOT:-ok}" = fail ]; then
		echo "[    1.000006]     # randstruct_reorders: EXPECTATION FAILED at lib/tests/pullgate_kunit.c:80"
		echo "[    1.000007]     not ok 2 randstruct_reorders"
		echo "[    1.000008] not ok 1 pullgate"
	else
		echo "[    1.000007]     ok 2 randstruct_reorders"
		echo "[    1.000008] ok 1 pullgate"
	fi
	if [ "${FAKE_BOOT:-ok}" = splat ]; then
		echo "[    1.500000] ------------[ cut here ]------------"
		echo "[    1.500001] WARNING: CPU: 0 PID: 1 at lib/overflow.c:10 probe+0x10/0x20"
		echo "[    1.500002] Modules linked in:"
		echo "[    1.500003] ---[ end trace 0000000000000000 ]---"
	fi
	if [ "${FAKE_BOOT:-ok}" != timeout ]; then
		echo "[    2.000000] pullgate-init: done"
		echo "[    2.100000] reboot: Power down"
	fi
} >"$log"
[ "${FAKE_BOOT:-ok}" = timeout ] && exit 124
exit 0
