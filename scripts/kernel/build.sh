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
# With PG_DISTCC_HOSTS="HOST[:PORT][/LIMIT] ..." (the policy's
# pipeline.distcc-hosts) the compiles that miss ccache run on those distcc
# hosts (CCACHE_PREFIX=distcc), make's -j is the sum of their
# limits (4 when a host names none, as distcc counts) and at least PG_JOBS,
# and at the end one line per host says how many objects it built; a host
# that is down costs nothing but time: distcc compiles its jobs here and
# the summary says so.  distcc's own log is LOG's name with -distcc.log.
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

# distcc: hosts are data (checked here again, as the policy's schema does)
distcc_log=""
if [ -n "${PG_DISTCC_HOSTS:-}" ]; then
	jobs=0
	for h in $PG_DISTCC_HOSTS; do
		printf '%s\n' "$h" | grep -Eqx '[A-Za-z0-9][A-Za-z0-9.-]*(:[1-9][0-9]{0,4})?(/[1-9][0-9]{0,2})?' ||
			pg_die "PG_DISTCC_HOSTS: '$h' is not HOST[:PORT][/LIMIT]"
		case $h in */*) jobs=$((jobs + ${h##*/})) ;; *) jobs=$((jobs + 4)) ;; esac
	done
	[ "$jobs" -ge "$PG_JOBS" ] && PG_JOBS=$jobs
	distcc_log="${log%.log}-distcc.log"
	: >"$distcc_log"
	# DISTCC_VERBOSE: the log names the host of every compile, for the summary
	export DISTCC_HOSTS="$PG_DISTCC_HOSTS" DISTCC_LOG="$distcc_log" DISTCC_VERBOSE=1
	mkdir -p "$out/.distcc"
	export DISTCC_DIR="$out/.distcc" CCACHE_PREFIX=distcc
	pg_log "distcc: compiling on $PG_DISTCC_HOSTS with -j$PG_JOBS"
fi

# Which host built how many objects, and which jobs fell back to this
# machine (kbuild's compiler probes, which distcc runs here, are no objects).
distcc_summary() {
	[ -n "$distcc_log" ] || return 0
	sed -n 's/.* compile \([^ ]*\) on \([^ ]*\) completed ok$/\1 \2/p' "$distcc_log" |
		grep -v '^(null) ' | cut -d' ' -f2 | sort | uniq -c |
		while read -r n h; do pg_log "distcc: $h built $n objects"; done
	sed -n 's/.*connect to \([^ ]*\) failed: .*/\1/p' "$distcc_log" | sort | uniq -c |
		while read -r n h; do
			pg_log "distcc: $h could not be reached $n times (down?): its jobs went to the other hosts or here"
		done
	sed -n 's/.*still in backoff period for \([^ ]*\)$/\1/p' "$distcc_log" | sort | uniq -c |
		while read -r n h; do pg_log "distcc: $h skipped $n times, backing off after a failure"; done
	sed -n 's/.*failed to distribute .* to \([^ ]*\), running locally instead$/\1/p' "$distcc_log" |
		sort | uniq -c | while read -r n h; do
			pg_log "distcc: $h refused or failed $n jobs, compiled here instead"
		done
	n=$(grep -c 'failed to distribute, running locally instead' "$distcc_log" || true)
	[ "$n" = 0 ] || pg_log "distcc: $n jobs could not be distributed and were compiled here"
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

# distccd (3.3 on) refuses -fplugin: with the kernel's GCC plugins every
# compile is refused and runs here.  Safe (never an object without its
# plugin), but no farm: say so before the build, not only after it.
if [ -n "$distcc_log" ] && grep -qx 'CONFIG_GCC_PLUGINS=y' "$out/.config"; then
	pg_log "distcc: warning: the config loads GCC plugins (-fplugin), which distccd refuses as insecure: those compiles run here"
fi

echo "### make $targets" >>"$log"
# shellcheck disable=SC2086
kmake "$@" $targets || { distcc_summary; fail "make $targets failed"; }
distcc_summary
pg_log "built $targets in $(($(pg_now) - t0)) s ($out)"
