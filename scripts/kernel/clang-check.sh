#!/bin/sh
# clang-check.sh - build iwlwifi's mvm objects with LLVM=1 ARCH=arm64 and FORTIFY_SOURCE on the series tree.
#
# usage: scripts/kernel/clang-check.sh
#
# Uses $PULLGATE_HOME/linux (made by tree.sh and series.sh apply, run here
# too; both do nothing when up to date) and its own O= dir,
# $PULLGATE_HOME/build/arm64-clang-iwlwifi.  Exit status 0 when the objects
# build and the ported bound is in the source that was compiled.
set -eu
. "$(dirname "$0")/lib.sh"
[ $# -eq 0 ] || pg_die "usage: clang-check.sh"

out="$PG_BUILD/arm64-clang-iwlwifi"
log="$out/build.log"
mvm=drivers/net/wireless/intel/iwlwifi/mvm

mkdir -p "$PULLGATE_HOME"
exec 9>"$PULLGATE_HOME/.kernel.lock"
flock 9

t0=$(pg_now)
"$PG_TOP/scripts/kernel/tree.sh"
"$PG_TOP/scripts/kernel/series.sh" apply
grep -q 'for (j = 0; j < n_nsc && j < c; j++)' "$PG_LINUX/$mvm/offloading.c" ||
	pg_die "$mvm/offloading.c lacks the ported bound; is the series applied?"

mkdir -p "$out"
: >"$log"
"$PG_TOP/scripts/kernel/build.sh" --llvm --fragment "$PG_TOP/scripts/kernel/clang-iwlwifi.config" \
	"$PG_LINUX" "$out" "$log" "$mvm/"
for o in offloading.o d3.o; do
	[ -s "$out/$mvm/$o" ] || pg_die "$mvm/$o was not built (log: $log)"
done
grep -q '^CONFIG_CC_IS_CLANG=y' "$out/.config" || pg_die "the build did not use clang"
n=$(find "$out/$mvm" -name '*.o' | wc -l)
echo "clang: $(clang --version | head -n1)"
echo "clang: built $n objects in $mvm with LLVM=1 FORTIFY_SOURCE=y in $(($(pg_now) - t0)) s"
