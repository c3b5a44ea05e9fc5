#!/bin/sh
# 75-serve-approve-trust.t - serve: approval verifies the tag's signature again under the policy in force now; a key dropped from the signers or revoked in the keyring since the test approves nothing.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 16
serve_setup
# the keyring the policy names is the test's own, so that it can be changed
cp "$FX/keyring.asc" "$SCRATCH/keyring.asc"
sed -i "s|file: $FX/keyring.asc|file: $SCRATCH/keyring.asc|" "$SCRATCH/policy.yaml"
cp "$SCRATCH/policy.yaml" "$SCRATCH/trusting.yaml"
cp "$SCRATCH/keyring.asc" "$SCRATCH/keyring-good.asc"
serve_start
T2=hardening-v6.16-rc1-fix1-take2
BASE=$(git --git-dir="$TREE" rev-parse master)
master() { git --git-dir="$TREE" rev-parse master; }
# approve: $code and $out of the maintainer's approval of $ID
approve() { maintainer_post "$ID" approve; }
# reload POLICY-FILE: it becomes the policy, by SIGHUP, once the server says it reloaded
reloads() { grep -c "reloaded $CONFIG" "$SCRATCH/serve.err" || true; }
reload() {
	_before=$(reloads)
	cp "$1" "$SCRATCH/policy.yaml"
	kill -HUP "$SERVE_PID"
	wait_for _reloaded "$_before"
}
_reloaded() { [ "$(reloads)" -gt "$1" ]; }

push_record "$SCRATCH/take2.json" "$T2"
hook push "$SCRATCH/take2.json" take2-push
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" waiting rejected error approved passed)" waiting "take two waits for the maintainer"
MERGE=$(git --git-dir="$TREE" rev-parse "refs/heads/pullgate/$T2")
maintainer_login

# --- Kees's key dropped from the policy's signers since the test ----------------------------
awk -v fpr="$FPR_KEES" '
	/^  - fingerprint: / { skip = ($3 == fpr) }
	/^[^ ]/ { skip = 0 }
	!skip' "$SCRATCH/trusting.yaml" >"$SCRATCH/untrusting.yaml"
unlike "$(cat "$SCRATCH/untrusting.yaml")" "$FPR_KEES" "the policy without Kees's key"
rc=0; reload "$SCRATCH/untrusting.yaml" || rc=1
ok "$rc" "the server says it reloaded it"
approve
is "$code" 422 "the approval is refused"
like "$(printf '%s' "$out" | jq -r .error)" "refused by the policy now, nothing was changed: tag '$T2' is signed by key ${FPR_KEES#????????????????????????}, which the policy does not trust$" \
	"saying the policy no longer trusts the key"
is "$(master)" "$BASE" "the branch did not move"
is "$(curl -s "$URL/api/pulls/$ID" | jq -r .state)" waiting "the pull still waits"
like "$(cat "$SCRATCH/serve.err")" "pull $ID: the approval by maintainer is refused: .*which the policy does not trust" \
	"and the log says why"

# --- Kees's key revoked in the keyring the policy names -------------------------------------
rc=0; reload "$SCRATCH/trusting.yaml" || rc=1
ok "$rc" "the trusting policy is back"
RHOME="$SCRATCH/gnupg-revoke"
mkdir -m 700 "$RHOME"
revoke_agent_kill() { GNUPGHOME="$RHOME" gpgconf --kill gpg-agent 2>/dev/null || true; }
TAP_CLEANUP="${TAP_CLEANUP:-} revoke_agent_kill"
GNUPGHOME="$RHOME" gpg --batch --quiet --import "$SCRATCH/keyring-good.asc" 2>/dev/null
# gpg wrote Kees's revocation certificate when it made the key; its first line is guarded with ':'
sed 's/^:-----BEGIN/-----BEGIN/' "$FX/gnupg/openpgp-revocs.d/$FPR_KEES.rev" |
	GNUPGHOME="$RHOME" gpg --batch --quiet --import 2>/dev/null
GNUPGHOME="$RHOME" gpg --batch --armor --export >"$SCRATCH/keyring-revoked.asc" 2>/dev/null
like "$(GNUPGHOME="$RHOME" gpg --batch --with-colons --list-keys "$FPR_KEES" 2>/dev/null)" '^pub:r:' \
	"a keyring where Kees's key is revoked"
mv "$SCRATCH/keyring-revoked.asc" "$SCRATCH/keyring.asc"
approve
is "$code" 422 "the approval is refused"
like "$(printf '%s' "$out" | jq -r .error)" "refused by the policy now, nothing was changed: tag '$T2' is signed by key ${FPR_KEES#????????????????????????}, which has been revoked$" \
	"saying the key has been revoked"
is "$(master)" "$BASE" "the branch did not move"
is "$(curl -s "$URL/api/pulls/$ID" | jq -r .state)" waiting "the pull still waits"

# --- trusted again: the same pull is approved -----------------------------------------------
cp "$SCRATCH/keyring-good.asc" "$SCRATCH/keyring.asc"
approve
is "$code" 200 "with the key trusted and unrevoked, the approval goes through"
is "$(master)" "$MERGE" "and the branch moved to the tested merge"
