#!/bin/sh
# 40-signature.t - the pulled tag's signature: good, bad, unknown, expired, revoked, untrusted, renamed.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
plan 38
fixture_keys

verify_json() { # TAG [OPTIONS...]
	t=$1
	shift
	run "$PULLGATE" verify --json --keyring "$KEYRING" --upstream "$SUP" "$@" "$SENDER" "$t"
}
messages() { # CHECK: the messages of that check's findings, one a line
	printf '%s' "$out" | jq -r --arg c "$1" '.findings[] | select(.check == $c) | .message'
}
signatures() {
	printf '%s' "$out" | jq -r '[.signatures[] | "\(.kind) \(.status) \(.fingerprint)"] | join(",")'
}
keyid() { printf '%s' "$1" | cut -c25-40; }

# --- the good tag, trusted or not ---------------------------------------------
verify_json good --trust "$FPR_SAM"
is "$rc" 0 "a tag signed by a trusted key is accepted"
is "$(signatures)" "tag good $FPR_SAM" "the report names the signing key"
is "$(messages tag-signature)" "" "and has no tag-signature finding"
run "$PULLGATE" verify --keyring "$KEYRING" --trust "$FPR_SAM" --upstream "$SUP" "$SENDER" good
like "$out" "^signed:   tag 'good' by Sam Sender <sam@example.org>: good, key $FPR_SAM \\(sam@example.org\\)$" \
	"the text report says who signed, with the key's uids"
# importing the keyring would start a gpg-agent that outlives pullgate by seconds
is "$(pgrep -f "gpg-agent --homedir $PULLGATE_HOME" || true)" "" \
	"no gpg-agent was started for the private GNUPGHOME"

verify_json good
is "$rc" 1 "the same tag without a trusted signer is rejected"
is "$(messages tag-signature)" \
	"tag 'good' is signed by key $(keyid "$FPR_SAM"), which the policy does not trust" \
	"the key is named as untrusted"

verify_json good --trust "$FPR_SAM:release-*"
is "$(messages tag-signature)" \
	"key $(keyid "$FPR_SAM") may not sign tag 'good': the tag matches none of its tag patterns" \
	"a signer trusted for other tags may not sign this one"
is "$(printf '%s' "$out" | jq -r '.findings[].details[] | select(.field == "trusted for tags") | .pull')" \
	"release-*" "the finding shows what the key is trusted for"
verify_json good --trust "$(printf '%s' "$FPR_SAM" | tr 'A-F' 'a-f'):go*"
is "$rc" 0 "a matching tag glob trusts it (and the fingerprint's case does not matter)"

# --- what gpg says about the signature --------------------------------------
verify_json unknown-key --trust "$FPR_SAM"
is "$rc" 1 "a tag signed by a key outside the keyring is rejected"
like "$(messages tag-signature)" "^tag 'unknown-key' is signed by key [0-9A-F]+, which is not in the keyring$" \
	"as an unknown key"
is "$(printf '%s' "$out" | jq -r '.signatures[0].status')" "no-key" "its status is no-key"
like "$(printf '%s' "$out" | jq -r '.signatures[0].fingerprint')" "$(keyid "$FPR_MALLORY")\$" \
	"and the signature still names the key it claims"

verify_json expired-key --trust "$FPR_OLGA"
is "$(messages tag-signature)" "tag 'expired-key' is signed by key $(keyid "$FPR_OLGA"), which has expired" \
	"a key that has expired is reported, though it signed in time"
is "$(signatures)" "tag expired-key $FPR_OLGA" "with the status expired-key"

verify_json revoked-key --trust "$FPR_REX"
is "$(messages tag-signature)" "tag 'revoked-key' is signed by key $(keyid "$FPR_REX"), which has been revoked" \
	"a revoked key is reported"
is "$rc" 1 "and rejected, though it is trusted"

verify_json bad-signature --trust "$FPR_SAM"
is "$(messages tag-signature)" "tag 'bad-signature' has a BAD signature: it was changed after it was signed" \
	"a tag edited after signing has a bad signature, and nothing else is wrong with it"
is "$(signatures)" "tag bad $FPR_SAM" "the status is bad"

# --- who may sign what ---------------------------------------------------------
verify_json for-next --trust "$FPR_SAM" --trust "$FPR_OTTO:otto-*"
is "$(messages tag-signature)" \
	"key $(keyid "$FPR_OTTO") may not sign tag 'for-next': the tag matches none of its tag patterns" \
	"a signer outside its tag pattern is refused"
verify_json for-next --trust "$FPR_OTTO:otto-*" --trust "$FPR_OTTO:for-*"
is "$(messages tag-signature)" "" "any of the key's entries may allow it"

verify_json tagger-mismatch --trust "$FPR_SAM"
is "$(messages tag-signature)" \
	"the tagger of tag 'tagger-mismatch' is not among the user ids of key $(keyid "$FPR_SAM")" \
	"a tagger whose e-mail is not on the signing key is reported"
is "$(printf '%s' "$out" | jq -r '.findings[] | select(.check == "tag-signature") | .details[]
	| select(.field == "tagger") | .pull')" "Sam Sender <sam@elsewhere.example>" "naming the tagger"

# --- the tag object itself -----------------------------------------------------
verify_json renamed --trust "$FPR_SAM"
is "$(messages tag-signature)" \
	"tag 'renamed' calls itself 'good-v2' in its tag header: renamed or moved on the server" \
	"a signed tag published under another name is caught"
is "$(signatures)" "tag good $FPR_SAM" "though its signature is good"

verify_json tree-tag --trust "$FPR_SAM"
is "$rc" 1 "a signed tag of a tree is a rejection, not an error"
like "$(messages tag-signature)" "^tag 'refs/tags/tree-tag' points to tree [0-9a-f]{40}, not to a commit$" \
	"it says what the tag points to"
is "$(printf '%s' "$out" | jq -r '"\(.commits) \([.findings[].check] | unique | join(","))"')" \
	"0 tag-signature" "and no commit check ran"

verify_json unsigned --trust "$FPR_SAM"
is "$(messages tag-signature)" "tag 'unsigned' is not signed" "an annotated tag without a signature"
is "$(printf '%s' "$out" | jq '.signatures | length')" 0 "has no signature to list"

verify_json lightweight --trust "$FPR_SAM"
is "$(messages tag-signature)" "'lightweight' is a lightweight tag: no tagger and no signature" \
	"a lightweight tag"

# --- configuration errors --------------------------------------------------------
run "$PULLGATE" verify --keyring "$SCRATCH/none.asc" --upstream "$SUP" "$SENDER" good
is "$rc" 3 "a missing keyring means pullgate cannot decide"
like "$err" "^error: keyring: '$SCRATCH/none.asc': " "and says which file"
run "$PULLGATE" verify --keyring "$SFX/keys.env" --upstream "$SUP" "$SENDER" good
like "$rc $err" "^3 error: keyring '$SFX/keys.env' holds no OpenPGP public key$" \
	"a file without keys is no keyring"
run "$PULLGATE" verify --keyring "$KEYRING" --trust "${FPR_SAM}0" --upstream "$SUP" "$SENDER" good
is "$rc" 2 "a malformed --trust is a usage error"
like "$err" "^error: --trust wants FINGERPRINT\[:TAGGLOB\] with 40 hex digits" "that says what it wants"

# --- nothing left behind -----------------------------------------------------------
is "$(ls -A "$PULLGATE_HOME/tmp")" "" "every private GNUPGHOME was removed"
