#!/bin/sh
# 40-signature-mergetag.t - every mergetag in the pull's merges is verified, and who signed it is listed.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
plan 13
fixture_keys

verify_json() { # TAG [OPTIONS...]
	t=$1
	shift
	run "$PULLGATE" verify --json --upstream "$SUP" "$@" "$SENDER" "$t"
}
merge_of() { git --git-dir="$SENDER" rev-parse "$1^{commit}"; }
keyid() { printf '%s' "$1" | cut -c25-40; }

verify_json mergetag-good --keyring "$KEYRING" --trust "$FPR_SAM"
is "$rc" 0 "a pull that merges a sub-maintainer's good signed tag is accepted"
is "$(printf '%s' "$out" | jq -r '[.signatures[] | "\(.kind) \(.tag) \(.status) \(.fingerprint)"] | join(",")')" \
	"tag mergetag-good good $FPR_SAM,mergetag sue-1 good $FPR_SUE" \
	"the report lists the tag and the mergetag, each with its signer"
is "$(printf '%s' "$out" | jq -r '.signatures[1] | "\(.commit) \(.tagger) \(.uids | join(" "))"')" \
	"$(merge_of mergetag-good) Sue Sub <sue@example.org> sue@example.org" \
	"the mergetag entry names its merge, its tagger and the key's uids"
run "$PULLGATE" verify --keyring "$KEYRING" --trust "$FPR_SAM" --upstream "$SUP" "$SENDER" mergetag-good
like "$out" "^          mergetag 'sue-1' in $(merge_of mergetag-good | cut -c1-12) by Sue Sub <sue@example.org>: good, key $FPR_SUE \\(sue@example.org\\)$" \
	"the text report says who signed the mergetag"

# mergetag_findings: "commit message" for each mergetag-signature finding
mergetag_findings() {
	printf '%s' "$out" | jq -r '.findings[] | select(.check == "mergetag-signature")
		| "\(.commit) \(.message)"'
}

verify_json mergetag-unknown --keyring "$KEYRING" --trust "$FPR_SAM"
is "$rc" 1 "a mergetag signed by a key outside the keyring rejects the pull"
is "$(mergetag_findings)" \
	"$(merge_of mergetag-unknown) mergetag 'mallory-1' is signed by key $(keyid "$FPR_MALLORY"), which is not in the keyring" \
	"the finding is on the merge and names the key"
is "$(printf '%s' "$out" | jq -r '[.findings[] | select(.check == "tag-signature")] | length')" 0 \
	"while the pulled tag itself is fine"

verify_json mergetag-bad --keyring "$KEYRING" --trust "$FPR_SAM"
is "$rc" 1 "a merge whose mergetag was edited is rejected"
is "$(mergetag_findings)" \
	"$(merge_of mergetag-bad) mergetag 'sue-1' has a BAD signature: it was changed after it was signed" \
	"as a bad signature"
is "$(printf '%s' "$out" | jq -r '.signatures[] | select(.kind == "mergetag") | "\(.status) \(.fingerprint)"')" \
	"bad $FPR_SUE" "still naming the key the signature claims"

verify_json mergetag-good
is "$rc" 1 "without a keyring nothing can be verified"
is "$(mergetag_findings)" \
	"$(merge_of mergetag-good) no keyring configured: cannot verify the signature of mergetag 'sue-1'" \
	"the mergetag says so too"
is "$(printf '%s' "$out" | jq '.signatures | length')" 0 "and no signature is listed as checked"
