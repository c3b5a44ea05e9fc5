#!/bin/sh
# 73-serve-limits.t - the service stops at the policy's limits: a pull over max-pull-commits ends in state error, with the reason.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 5
serve_setup
# take one has 39 commits; the soft limit would only be a finding
printf 'limits: {max-commits: 5, max-pull-commits: 20, max-findings-per-check: 3}\n' \
	>>"$SCRATCH/policy.yaml"
serve_start

push_record "$SCRATCH/take1.json" hardening-v6.16-rc1-fix1
hook push "$SCRATCH/take1.json" take1-limits
is "$code" 202 "the push is accepted for verification"
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" error rejected verified waiting)" error \
	"a pull over max-pull-commits ends in state error: pullgate could not decide"
get "$URL/api/pulls/$ID"
like "$(printf '%s' "$out" | jq -r .message)" \
	"the pull has 39 commits, more than the policy's max-pull-commits \\(20\\): pullgate cannot verify it" \
	"the job's message gives the reason"
is "$(printf '%s' "$out" | jq -r '.report')" null "no report is stored for a pull that was not verified"
serve_stop
is "$SERVE_RC" 0 "the service stops cleanly"
