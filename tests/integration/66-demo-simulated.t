#!/bin/sh
# 66-demo-simulated.t - the demo on the stand-in scripts says so: in its verdict lines and in its last line.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 6

# the fallback make demo takes when the kernel tree cannot be prepared, forced;
# an ephemeral port, and the server stopped after the verdicts (stdin is no terminal)
run env PULLGATE_DEMO_KERNEL=fake PULLGATE_DEMO_PORT=0 PULLGATE_DEMO_STAY=no \
	"$TOP/scripts/demo.sh" "$PULLGATE" </dev/null
is "$rc" 0 "the demo on the fixture trees runs to its end"
like "$out" "^== NOTE: the kernel tree is not ready" "it says at the start that it will not use the kernel tree"
like "$out" '^take two \(pull [0-9]+\): (approved|waiting) \(SIMULATED: stand-in build and boot scripts\): ' \
	"take two's verdict line says it was simulated"
like "$out" '^take one \(pull [0-9]+\): rejected: ' "take one's, rejected at verify before any script ran, does not"
is "$(printf '%s\n' "$out" | tail -n 1 | cut -c1-16)" "demo: SIMULATED:" \
	"the demo's last line says the build and boot were simulated"
unlike "$(printf '%s\n' "$out" | tail -n 1)" '^demo: real' "and does not claim a real run"
