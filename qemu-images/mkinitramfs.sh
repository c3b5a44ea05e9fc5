#!/bin/sh
# mkinitramfs.sh - cross-compile the static init and pack the boot initramfs.
#
# usage: qemu-images/mkinitramfs.sh KERNEL_BUILD_DIR OUT_DIR
#
# Writes OUT_DIR/init and OUT_DIR/initramfs.cpio.  The archive is packed
# by the kernel's own usr/gen_init_cpio from KERNEL_BUILD_DIR, so device
# nodes need no root.  Both are remade only when their inputs change.
set -eu
[ $# -eq 2 ] || { echo "usage: mkinitramfs.sh KERNEL_BUILD_DIR OUT_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
build=$1 out=$2
gen="$build/usr/gen_init_cpio"
[ -x "$gen" ] || { echo "mkinitramfs.sh: error: '$gen' missing; build the kernel first" >&2; exit 1; }
mkdir -p "$out"

# Boots in several build worktrees at once may remake them together: each
# writes a file of its own and renames it into place, so none reads half of one.
if [ ! -x "$out/init" ] || [ "$here/init.c" -nt "$out/init" ]; then
	aarch64-linux-gnu-gcc -static -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror \
		-o "$out/init.tmp.$$" "$here/init.c"
	mv "$out/init.tmp.$$" "$out/init"
fi
if [ ! -s "$out/initramfs.cpio" ] || [ "$out/init" -nt "$out/initramfs.cpio" ] ||
	[ "$here/initramfs.list" -nt "$out/initramfs.cpio" ]; then
	PG_INIT="$out/init" "$gen" "$here/initramfs.list" >"$out/initramfs.cpio.tmp.$$"
	mv "$out/initramfs.cpio.tmp.$$" "$out/initramfs.cpio"
fi
echo "$out/initramfs.cpio"
