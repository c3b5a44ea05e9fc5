#!/bin/sh
# run.sh - replay each fuzz target's regressions, then fuzz it for a while; any finding fails.
#
#   tests/fuzz/run.sh BUILDDIR SECONDS TARGET...
#
# BUILDDIR holds fuzz/fuzz_TARGET (mk/fuzz.mk builds them).  For each target,
# every file under tests/fuzz/TARGET/regressions/ is run once (an empty or
# missing directory, or a file libFuzzer did not run, fails), then libFuzzer
# runs for SECONDS from the seeds in tests/fuzz/TARGET/ (read, never
# written) and the corpus it keeps in BUILDDIR/corpus/TARGET/, with the
# tokens of tests/fuzz/TARGET.dict.  A crash, a leak, undefined behaviour,
# a timeout or running out of memory ends the run with exit 1: the input
# is kept in BUILDDIR/artifacts/TARGET/ and the whole log in
# BUILDDIR/logs/TARGET.log.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 3 ] || { echo "usage: $0 BUILDDIR SECONDS TARGET..." >&2; exit 2; }
build=$1
secs=$2
shift 2

# The longest input a target is given: room for what it parses, small enough to stay fast.
max_len() {
	case $1 in
	object) echo 16384 ;;   # a commit with headers, a mergetag and trailers; a tag
	mail) echo 32768 ;;     # a request-pull mail, MIME parts, a few mbox messages
	yaml) echo 8192 ;;      # a policy, a serve configuration, a push record
	ktap) echo 32768 ;;     # some hundred console lines
	hook) echo 16384 ;;     # headers and a push record or mail body
	graph) echo 16384 ;;    # a commit-graph or a chain of a few layers, some hundred commits
	pack) echo 16384 ;;     # an index and its pack of some ten objects, a loose commit
	identity_index) echo 8192 ;; # an index of some hundred commits
	*) echo 4096 ;;
	esac
}

# A slow input is a finding too: no parser of ours may take seconds on 32 KiB.
# libFuzzer measures wall time, and a loaded CI machine stalls a process for
# seconds, so the limit leaves room for that.
TIMEOUT=25
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS="suppressions=$top/tests/lsan.supp:print_suppressions=0"

fail() {
	tail -n 60 "$2" >&2
	echo "fuzz: $1: $3; the input is kept in $4, the log in $2" >&2
	exit 1
}

for t; do
	bin=$build/fuzz/fuzz_$t
	seeds=$top/tests/fuzz/$t
	corpus=$build/corpus/$t
	art=$build/artifacts/$t
	log=$build/logs/$t.log
	mkdir -p "$corpus" "$art" "$build/logs"

	regs=$(find "$seeds/regressions" -type f 2>/dev/null | sort)
	[ -n "$regs" ] || { echo "fuzz: $t: no regression inputs in $seeds/regressions" >&2; exit 1; }
	nregs=$(printf '%s\n' "$regs" | wc -l)
	rlog=$build/logs/$t-regressions.log
	# shellcheck disable=SC2086 # the names are ours, without spaces
	"$bin" -timeout=$TIMEOUT $regs >"$rlog" 2>&1 </dev/null ||
		fail "$t" "$rlog" "a regression input fails again" "$seeds/regressions"
	# libFuzzer says "Executed FILE in N ms" for each input it ran
	ran=$(grep -c '^Executed .* in [0-9]* ms$' "$rlog") || [ $? -eq 1 ] ||
		fail "$t" "$rlog" "cannot read the regression log" "$seeds/regressions"
	[ "$ran" -eq "$nregs" ] ||
		fail "$t" "$rlog" "$ran of $nregs regression inputs ran" "$seeds/regressions"
	echo "fuzz: $t: $nregs regression inputs pass"

	"$bin" -max_total_time="$secs" -max_len="$(max_len "$t")" -timeout=$TIMEOUT \
		-rss_limit_mb=2048 -dict="$top/tests/fuzz/$t.dict" -artifact_prefix="$art/" \
		-print_final_stats=1 \
		"$corpus" "$seeds" >"$log" 2>&1 </dev/null ||
		fail "$t" "$log" "libFuzzer found a problem" "$art/"
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	echo "fuzz: $t: ${runs:-?} runs in ${secs}s, corpus of $(find "$corpus" -type f | wc -l)" \
		"new inputs: no crash, leak or timeout"
done
