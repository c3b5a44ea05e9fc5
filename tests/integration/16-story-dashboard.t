#!/bin/sh
# 16-story-dashboard.t - the dashboard's pull page leads with the report's summary.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 5
serve_setup
serve_start

push_record "$SCRATCH/take1.json" hardening-v6.16-rc1-fix1
hook push "$SCRATCH/take1.json" story-take1
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" rejected error)" rejected "take one is rejected at verify"
get "$URL/api/pulls/$ID"
story=$(printf '%s' "$out" | jq -r '.report.summary.text')
is "$story" "the pull re-creates 35 upstream commits under new ids (7 merges, 7 signed tags dropped): without them it should carry 4 commits" \
	"the stored report carries the summary"
get "$URL/pulls/$ID"
summary=$(printf '%s' "$out" | sed -n '/<section id="summary">/,/<\/section>/p')
like "$summary" '<p class="story">the pull re-creates 35 upstream commits under new ids \(7 merges, 7 signed tags dropped\): without them it should carry 4 commits</p>' \
	"the page shows the story"
like "$summary" '<p class="roots">reject: 35 errors, 0 warnings as root causes; [0-9]+ findings follow from them</p>' \
	"and the verdict in root causes"
first=$(printf '%s' "$out" | grep -n -m1 '<section' | cut -d: -f2-)
like "$first" '<section id="summary">' "before any other section of the page"
