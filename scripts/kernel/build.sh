#!/bin/sh
# build.sh - configure and cross-build an arm64 kernel out of tree (O=) with ccache.
#
# usage: scripts/kernel/build.sh [--llvm] [--fragment FILE] [--select FILE] SRC_TREE BUILD_DIR LOG [TARGET...]
#
#   --llvm           build with LLVM=1 (clang, lld) instead of the GNU cross tools
#   --fragment FILE  config fragment (default qemu-images/kernel.config), applied
#                    with KCONFIG_ALLCONFIG over allnoconfig and then verified
#   --select FILE    options selected for a pull (pullgate's KUnit selection),
#                    applied before the fragment, whose lines win; not verified
#                    here: Kconfig may refuse them, and pullgate reads .config
#   TARGET...        make targets (default: Image)
#
# With PG_BUILD_STREAM=1 in the environment make's output goes to stdout
# instead of LOG (the caller logs it), and kbuild's step lines are kept.
#
# Output of every step is appended to LOG; on failure the end of it is
# shown.  The config is regenerated only when the fragment or the tree's
# Kconfig inputs change (a stamp in BUILD_DIR), so a rerun is incremental.
# Exit status: 0 built, 1 failed, 2 usage.
set -eu
. "$(dirname "$0")/lib.sh"

llvm=""
select=""
fragment="$PG_TOP/qemu-images/kernel.config"
while [ $# -gt 0 ]; do
	case $1 in
	--llvm) llvm=1; shift ;;
	--fragment) [ $# -ge 2 ] || exit 2; fragment=$2; shift 2 ;;
	--select) [ $# -ge 2 ] || exit 2; select=$2; shift 2 ;;
	--) shift; break ;;
	-*) pg_log "usage: build.sh [--llvm] [--fragment FILE] [--select FILE] SRC_TREE BUILD_DIR LOG [TARGET...]"; exit 2 ;;
	*) break ;;
	esac
done
if [ $# -lt 3 ]; then
	pg_log "usage: build.sh [--llvm] [--fragment FILE] [--select FILE] SRC_TREE BUILD_DIR LOG [TARGET...]"
	exit 2
fi
src=$1 out=$2 log=$3
shift 3
[ $# -gt 0 ] || set -- Image
targets="$*"
[ -f "$src/Makefile" ] || pg_die "'$src' is not a kernel tree"
[ -r "$fragment" ] || pg_die "'$fragment' not readable"
[ -z "$select" ] || [ -r "$select" ] || pg_die "'$select' not readable"

mkdir -p "$out" "$(dirname "$log")" "$CCACHE_DIR"
out=$(cd "$out" && pwd)
: >>"$log"

if [ -n "$llvm" ]; then
	set -- ARCH=arm64 LLVM=1 "CC=ccache clang"
	stamp_tool=$(clang --version | head -n1)
else
	set -- ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- \
		"CC=ccache aarch64-linux-gnu-gcc"
	stamp_tool=$(aarch64-linux-gnu-gcc --version | head -n1)
fi

# PG_BUILD_STREAM=1 (the merge bot): make's output, with kbuild's "  CC ..."
# lines, goes to stdout for the caller to follow and to log itself.
kmake() {
	if [ -n "${PG_BUILD_STREAM:-}" ]; then
		make -C "$src" O="$out" -j"$PG_JOBS" "$@" 2>&1
	else
		make -s -C "$src" O="$out" -j"$PG_JOBS" "$@" >>"$log" 2>&1
	fi
}

fail() {
	pg_log "error: $1 (log: $log)"
	tail -n 40 "$log" | sed 's/^/  | /' >&2
	exit 1
}

# The config depends on the fragment, the toolchain and the tree's Kconfig
# files (a series or a pull may change them).  Only those: re-running
# allnoconfig for a change elsewhere would make every object look stale.
kconfigs=$(cd "$src" && find . -name 'Kconfig*' -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum)
# no selection keeps the stamp of a build without one
selected=""
[ -z "$select" ] || selected=$(sha256sum <"$select")
stamp=$(printf '%s\n%s\n%s\n%s\n%s' "$(sha256sum <"$fragment")" "$stamp_tool" "$llvm" "$kconfigs" \
	"${selected:+$selected
}" | sha256sum | cut -d' ' -f1)

t0=$(pg_now)
if [ -f "$out/.config" ] && [ "$(cat "$out/.pullgate-config" 2>/dev/null)" = "$stamp" ]; then
	pg_log "config: up to date"
else
	# the selection first: a line of the fragment for the same option comes later and wins
	allconfig=$fragment
	if [ -n "$select" ]; then
		allconfig="$out/.pullgate-allconfig"
		cat "$select" "$fragment" >"$allconfig"
	fi
	echo "### allnoconfig + $fragment${select:+ + $select}" >>"$log"
	# Kconfig reads the fragment through the environment, so only this make sees it.
	KCONFIG_ALLCONFIG="$allconfig" make -s -C "$src" O="$out" "$@" allnoconfig \
		>>"$log" 2>&1 || fail "allnoconfig failed"
	rm -f "$out/.pullgate-config"
	# Check that every option of the fragment holds (or is refused on purpose).
	unset_next=""
	bad=""
	while IFS= read -r line; do
		case $line in
		"# pullgate: expect-unset") unset_next=1; continue ;;
		"# CONFIG_"*" is not set")
			opt=${line#"# "}; opt=${opt%% *}
			if grep -q "^$opt=" "$out/.config"; then bad="$bad $opt(want unset)"; fi ;;
		CONFIG_*=*)
			opt=${line%%=*}
			if [ -n "$unset_next" ]; then
				if grep -q "^$opt=" "$out/.config"; then
					bad="$bad $opt(requested to prove it is refused, but it was enabled)"
				else
					pg_log "config: $opt requested and refused by Kconfig, as expected"
				fi
			elif ! grep -qx "$line" "$out/.config"; then
				bad="$bad $opt(want ${line#*=})"
			fi ;;
		esac
		unset_next=""
	done <"$fragment"
	[ -z "$bad" ] || fail "the config does not honour the fragment:$bad"
	echo "$stamp" >"$out/.pullgate-config"
fi

echo "### make $targets" >>"$log"
# shellcheck disable=SC2086
kmake "$@" $targets || fail "make $targets failed"
pg_log "built $targets in $(($(pg_now) - t0)) s ($out)"
