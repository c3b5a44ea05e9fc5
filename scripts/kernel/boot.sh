#!/bin/sh
# boot.sh - boot an arm64 kernel build in qemu-system-aarch64 (TCG) and keep the console log.
#
# usage: scripts/kernel/boot.sh BUILD_DIR LOG TIMEOUT [NONCE [INITRAMFS]]
#
#   BUILD_DIR  kernel O= dir holding arch/arm64/boot/Image
#   LOG        the serial console is written here (removed first, so that a
#              boot.sh that stops early never leaves an earlier console)
#   TIMEOUT    seconds before QEMU is killed
#   NONCE      letters and digits, put on the kernel command line as
#              pullgate.nonce=NONCE; the init prints it in its marker
#              ("pullgate-init: done nonce=NONCE"), so only this boot's
#              console carries it (default: a random one, printed)
#   INITRAMFS  cpio archive (default: packed from qemu-images/ into
#              $PULLGATE_HOME/build/qemu)
#
# Exit status: 0 the guest printed the init marker with NONCE and then
# powered off; 1 it did not (panic, crash, another marker); 124 timeout;
# 2 usage.  Judging the tests is left to the KTAP parser
# (pullgate ktap --nonce NONCE LOG); pullgate gate reads this status too.
set -eu
. "$(dirname "$0")/lib.sh"

MARKER="pullgate-init: done"

pg_boot_args "$@"
pg_boot_inputs
pg_log "$(qemu-system-aarch64 --version | head -n1); nonce $nonce"

t0=$(pg_now)
set +e
timeout -k 10 "$timeout" qemu-system-aarch64 \
	-M virt -cpu max -nographic -no-reboot \
	-m 512 -smp 1 -nic none \
	-kernel "$image" -initrd "$initramfs" \
	-append "$cmdline" \
	</dev/null >"$log" 2>&1
rc=$?
set -e
took=$(($(pg_now) - t0))

if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
	pg_log "error: no power-off within $timeout s (log: $log)"
	exit 124
fi
# the marker with this boot's nonce, then the power-off the init asked for
if ! awk -v m="$MARKER nonce=$nonce" '
	index($0, m) { marker = 1 }
	marker && index($0, "reboot: Power down") { off = 1 }
	END { exit !(marker && off) }' "$log"; then
	pg_log "error: QEMU exited ($rc) after $took s without the init marker of nonce $nonce and a power-off (log: $log)"
	exit 1
fi
pg_log "booted and powered off in $took s (log: $log)"
exit 0
