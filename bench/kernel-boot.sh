#!/bin/sh
# kernel-boot.sh - cold build + boot + KTAP of our arm64 image against kunit.py run --arch=arm64 (overflow), same run.
#
# usage: bench/kernel-boot.sh PULLGATE_BINARY
#
# Both sides start from an empty build dir with ccache disabled and -j$PG_JOBS,
# on the series tree in $PULLGATE_HOME/linux (run make check-kernel once
# first).  Ours builds the QEMU config (GCC plugins, randstruct, our suites
# and the overflow suite), boots and parses; the baseline is kunit.py with a
# kunitconfig of KUNIT and OVERFLOW_KUNIT_TEST.  Prints seconds, the tests
# each side ran (ours: counted by pullgate ktap from the boot's KTAP) and
# the ratio.  A failed build, boot or KUnit result on either side fails
# the bench.
set -eu
PG_TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$PG_TOP/scripts/kernel/lib.sh"
[ $# -eq 1 ] || pg_die "usage: bench/kernel-boot.sh PULLGATE_BINARY"
pullgate=$1
[ -d "$PG_LINUX/.git" ] || pg_die "no tree; run make check-kernel first"

bench="$PG_BUILD/bench"
rm -rf "$bench"
mkdir -p "$bench"
export CCACHE_DISABLE=1

t0=$(pg_now)
"$PG_TOP/scripts/kernel/build.sh" "$PG_LINUX" "$bench/ours" "$bench/ours.log" Image
"$PG_TOP/scripts/kernel/boot.sh" "$bench/ours" "$bench/ours-boot.log" 300
"$pullgate" ktap "$bench/ours-boot.log" >"$bench/ours-ktap.txt" ||
	{ cat "$bench/ours-ktap.txt" >&2; pg_die "our boot failed (see $bench/ours-boot.log)"; }
ours=$(($(pg_now) - t0))
summary=$(tail -n 1 "$bench/ours-ktap.txt")
echo "$summary"
# "ktap: P passed, F failed, S skipped": the tests our boot ran
ntests=$(printf '%s\n' "$summary" |
	sed -n 's/^ktap: \([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' |
	awk '{ print $1 + $2 + $3 }')
[ -n "$ntests" ] || pg_die "no KTAP summary from pullgate ktap: '$summary'"

printf 'CONFIG_KUNIT=y\nCONFIG_OVERFLOW_KUNIT_TEST=y\n' >"$bench/kunitconfig"
t0=$(pg_now)
(cd "$PG_LINUX" && python3 tools/testing/kunit/kunit.py run --arch=arm64 \
	--cross_compile=aarch64-linux-gnu- --build_dir="$bench/kunit" \
	--kunitconfig="$bench/kunitconfig" --jobs="$PG_JOBS" --timeout=300) \
	>"$bench/kunit.log" 2>&1 || { tail -n 20 "$bench/kunit.log" >&2; pg_die "kunit.py failed"; }
base=$(($(pg_now) - t0))
kunit_summary=$(grep -E 'Testing complete|Ran [0-9]+ tests' "$bench/kunit.log" | tail -n 1)
[ -n "$kunit_summary" ] || pg_die "no test summary in $bench/kunit.log"
echo "$kunit_summary"

echo "bench: ours (build+boot+ktap, plugins, $ntests tests): $ours s"
echo "bench: kunit.py run --arch=arm64 overflow: $base s"
awk -v a="$ours" -v b="$base" 'BEGIN { if (b > 0) printf "bench: ratio ours/kunit.py = %.2f\n", a / b }'
rm -rf "$bench/ours" "$bench/kunit"
