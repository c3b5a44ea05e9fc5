#!/bin/sh
# judge-property.sh - the one-judge property test for longer: random KTAP consoles, damaged, for SECONDS (default 600).
#
# Runs tests/unit/test_evidence.c's property (the gate's judge and `pullgate
# ktap` agree, and no console holding a "not ok" or a crash is accepted)
# seed after seed, 20,000 consoles a seed, until SECONDS have passed; fails
# on the first seed that fails, naming it.  A bench, not a test: the
# duration is a budget, never an assertion.
set -eu
cd "$(dirname "$0")/.."
seconds=${1:-600}
make -s BUILD=test build/test/tests/test_evidence
end=$(($(date +%s) + seconds))
seed=1000 consoles=0 failing=0 rejected=0
while [ "$(date +%s)" -lt "$end" ]; do
	seed=$((seed + 1))
	if ! out=$(PULLGATE_PROPERTY_SEED=$seed PULLGATE_PROPERTY_CONSOLES=20000 \
		build/test/tests/test_evidence 2>&1); then
		printf '%s\n' "$out" | sed -n '/ERROR: console/,/FAILED/p' >&2
		echo "judge-property: seed $seed failed" >&2
		exit 1
	fi
	line=$(printf '%s\n' "$out" | grep ' consoles, ')
	set -- $line
	consoles=$((consoles + $1)) failing=$((failing + $3)) rejected=$((rejected + $7))
done
echo "judge-property: $consoles consoles in $seconds s (seeds 1001..$seed), $failing with a failure," \
	"$rejected rejected, 0 disagreements, 0 failing consoles accepted"
