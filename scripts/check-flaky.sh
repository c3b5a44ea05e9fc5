#!/bin/sh
# check-flaky.sh - make check-flaky: check-integration run again and again on a machine made slow, to show that no test depends on its speed.
#
#   scripts/check-flaky.sh MAKE
#
# FLAKY_RUNS (10) runs in a row beside a CPU hog (FLAKY_HOGS busy loops, by
# default one per CPU, at the tests' own priority), then one run on a
# single CPU (taskset -c 0).  Every run must pass.  Each run's output is
# kept in build/flaky/; the summary gives each run's verdict and wall time.
set -u
make=$1
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${FLAKY_RUNS:-10}
hogs=${FLAKY_HOGS:-$(nproc)}
logs="$top/build/flaky"
rm -rf "$logs"
mkdir -p "$logs"
command -v taskset >/dev/null 2>&1 || { echo "check-flaky: taskset is missing (util-linux)" >&2; exit 1; }

# the test build first, so that no run pays for it
$make BUILD=test all >"$logs/build.log" 2>&1 || { cat "$logs/build.log" >&2; exit 1; }

hog_pids=""
stop_hogs() { for p in $hog_pids; do kill "$p" 2>/dev/null; done; hog_pids=""; }
trap stop_hogs EXIT
trap 'exit 130' INT TERM
i=0
while [ "$i" -lt "$hogs" ]; do
	sh -c 'while :; do :; done' &
	hog_pids="$hog_pids $!"
	i=$((i + 1))
done

failed=0
summary=""
# one NAME CMD...: a run of check-integration, its verdict and time in the summary
one() {
	name=$1
	shift
	s=$(date +%s)
	if "$@" >"$logs/$name.log" 2>&1; then v=passed; else v=FAILED; failed=$((failed + 1)); fi
	e=$(date +%s)
	line=$(printf '  %-24s %-6s %4d s' "$name" "$v" $((e - s)))
	echo "check-flaky:$line"
	summary="$summary$line
"
}
n=1
while [ "$n" -le "$runs" ]; do
	one "hog-$n" $make check-integration
	n=$((n + 1))
done
stop_hogs
one "one-cpu" taskset -c 0 $make check-integration

echo
echo "== check-flaky: $runs runs beside $hogs busy loops, then one on CPU 0 =="
printf '%s' "$summary"
if [ "$failed" -ne 0 ]; then
	echo "== check-flaky: $failed run(s) FAILED (their output: $logs) =="
	grep -h -E '^not ok|^Failed|Dubious' "$logs"/*.log | sort | uniq -c | sort -rn | head -20
	exit 1
fi
echo "== check-flaky: all $((runs + 1)) runs passed =="
