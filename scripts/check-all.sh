#!/bin/sh
# check-all.sh - make check's runner: each target in turn, then its wall time, every skip with its reason, and the verdict.
#
#   scripts/check-all.sh MAKE TARGET...
#
# A target that fails ends the run (the ones after it are named as not
# run).  Whatever the outcome, the summary says what each target cost and
# what was skipped, from $PULLGATE_SKIP_LOG, where tests/lib/tap.sh and
# the kernel scripts write every skip with its reason.
set -u
make=$1
shift
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$top/build"
PULLGATE_SKIP_LOG="$top/build/check-skips.log"
export PULLGATE_SKIP_LOG
: >"$PULLGATE_SKIP_LOG"
times="$top/build/check-times.log"
: >"$times"

failed=""
t0=$(date +%s)
for t in "$@"; do
	if [ -n "$failed" ]; then
		echo "$t - not run" >>"$times"
		continue
	fi
	s=$(date +%s)
	$make "$t"
	rc=$?
	e=$(date +%s)
	if [ "$rc" -eq 0 ]; then
		echo "$t $((e - s)) passed" >>"$times"
	else
		echo "$t $((e - s)) FAILED" >>"$times"
		failed=$t
	fi
done
total=$(($(date +%s) - t0))

echo
echo "== make check: wall time per target =="
awk '{ if ($2 == "-") printf "  %-22s %9s  %s\n", $1, "", "not run";
       else printf "  %-22s %4d min %2d s  %s\n", $1, $2 / 60, $2 % 60, $3 }' "$times"
printf '  %-22s %4d min %2d s\n' total $((total / 60)) $((total % 60))
echo "== make check: skipped =="
if [ -s "$PULLGATE_SKIP_LOG" ]; then
	sed 's/^/  /' "$PULLGATE_SKIP_LOG"
else
	echo "  nothing"
fi
if [ -n "$failed" ]; then
	echo "== make check: FAILED in $failed =="
	exit 1
fi
echo "== make check: passed =="
exit 0
