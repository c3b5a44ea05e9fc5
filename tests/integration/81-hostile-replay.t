#!/bin/sh
# 81-hostile-replay.t - captured hooks cannot be replayed: a signed timestamp, a window, and one open job per tag and object.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 22
serve_setup
sed -i 's/^    secret: '"$PUSH_SECRET"'$/&\n  replay-window: 120/' "$CONFIG"
# the build hangs, so that the pull stays open while it is replayed
export FAKE_BUILD=sleep
TAP_CLEANUP="stop_fakes"
serve_start
T2=hardening-v6.16-rc1-fix1-take2
push_record "$SCRATCH/take2.json" "$T2"
B="$SCRATCH/take2.json"
err_of() { printf '%s' "$out" | jq -r .error; }
total() { curl -s "$URL/api/pulls" | jq .total; }

# post FILE DELIVERY TIMESTAMP SIGNATURE: the raw request, as an attacker who captured one would send it
post() {
	code=$(curl -s -o "$SCRATCH/.r" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		-H "X-Pullgate-Delivery: $2" ${3:+-H "X-Pullgate-Timestamp: $3"} \
		-H "X-Pullgate-Signature: $4" --data-binary "@$1" "$URL/hooks/push")
	out=$(cat "$SCRATCH/.r")
}

# --- a signed push, captured and sent again under new delivery ids ---------------------------
hook push "$B" first-1
is "$code" 202 "a push signed with its timestamp is accepted"
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
CAUGHT_TS=$TS
CAUGHT_SIG=$(sign "$PUSH_SECRET" "$B" "$TS")
post "$B" replay-1 "$CAUGHT_TS" "$CAUGHT_SIG"
is "$code" 200 "the captured request under a new delivery id makes no job (200)"
is "$(printf '%s' "$out" | jq -r '"\(.duplicate) \(.jobs[0])"')" "true $ID" "and names the job the first made"
like "$(printf '%s' "$out" | jq -r .message)" "received before, as delivery 'first-1'" "saying it is a replay"
post "$B" replay-2 "$CAUGHT_TS" "$CAUGHT_SIG"
is "$(total)" 1 "however often it is replayed, there is one job"

# --- the same push signed anew (another timestamp) while its job is open --------------------
is "$(wait_state "$ID" building)" building "the pull is open (its build hangs)"
hook push "$B" resend-1
is "$code" 200 "a fresh push of the same tag and object while its job is open makes no job"
is "$(printf '%s' "$out" | jq -r '"\(.duplicate) \(.jobs[0])"')" "true $ID" "it names the open job"
is "$(total)" 1 "still one job"

# --- outside the replay window ----------------------------------------------------------------
OLD=$(( $(date +%s) - 200 ))
hook push "$B" old-1 application/json "$PUSH_SECRET" "$OLD"
is "$code" 401 "a request signed 200 s ago is refused (window: 120 s)"
like "$(err_of)" "^X-Pullgate-Timestamp is 2[0-9][0-9] s behind this service's clock, more than the replay window of 120 s" \
	"saying how far off it is and what the window is"
hook push "$B" future-1 application/json "$PUSH_SECRET" "$(( $(date +%s) + 600 ))"
is "$code" 401 "and so is one signed 10 minutes ahead"
hook push "$SCRATCH/take2.json" recent-1 application/json "$PUSH_SECRET" "$(( $(date +%s) - 60 ))"
is "$code" 200 "one signed a minute ago is within the window (the open job is named)"

# --- what the signature must cover ----------------------------------------------------------------
post "$B" nots-1 "" "$(sign "$PUSH_SECRET" "$B" "$(date +%s)")"
is "$code" 401 "a request without X-Pullgate-Timestamp is refused (401)"
like "$(err_of)" "carries no X-Pullgate-Timestamp" "saying the timestamp is missing"
post "$B" badts-1 "yesterday" "$CAUGHT_SIG"
is "$(printf '%s %s' "$code" "$(err_of)")" "401 X-Pullgate-Timestamp must be the Unix time in seconds, the time the request was signed" \
	"a timestamp that is not a number is refused"
# a timestamp of its own, never the captured one (the same second would be the same request)
NOW=$((CAUGHT_TS - 1))
post "$B" bodyonly-1 "$NOW" "sha256=$(openssl dgst -sha256 -hmac "$PUSH_SECRET" -r <"$B" | cut -d' ' -f1)"
is "$code" 401 "a signature of the body alone (without the timestamp) is refused"
post "$B" movedts-1 "$NOW" "$CAUGHT_SIG"
is "$code" 401 "a captured signature with a fresh timestamp does not match"
get "$URL/metrics"
like "$out" '^pullgate_hook_rejections_total\{hook="push",reason="replay"\} 2$' "/metrics counts the stale requests as replays"

# --- the openssl one-liner of docs/server.md signs a request that is accepted -------------------
cat >"$SCRATCH/branch.json" <<EOR
{ "repo": "$KEES_NAME", "changes": [ { "ref": "refs/heads/doc", "old": "$(printf '0%.0s' $(seq 40))",
  "new": "$(git --git-dir="$KREPO" rev-parse "$T2^{commit}")" } ] }
EOR
ts=$(date +%s)
sig=$( (printf '%s.' "$ts"; cat "$SCRATCH/branch.json") | openssl dgst -sha256 -hmac "$PUSH_SECRET" -r | cut -d' ' -f1)
post "$SCRATCH/branch.json" doc-1 "$ts" "sha256=$sig"
is "$code" 200 "a request signed with the documented openssl one-liner is accepted"

# --- once the job is over, the tag may be verified again ---------------------------------------
curl -s -c "$SCRATCH/jar" -o "$SCRATCH/login.json" -X POST -H 'Content-Type: application/json' \
	-d "{\"user\":\"maintainer\",\"password\":\"$SERVE_PASSWORD\"}" "$URL/api/login"
CSRF=$(jq -r .csrf "$SCRATCH/login.json")
curl -s -b "$SCRATCH/jar" -o /dev/null -X POST -H "X-CSRF-Token: $CSRF" "$URL/api/pulls/$ID/cancel"
wait_state "$ID" cancelled error >/dev/null
hook push "$B" after-1
is "$code" 202 "after the open job ended, a new push of the tag makes a new job"
serve_stop
is "$SERVE_RC" 0 "the server stops cleanly"
