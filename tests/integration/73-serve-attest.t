#!/bin/sh
# 73-serve-attest.t - serve: a maintainer's approval writes the signed attestation, the decision names it, the dashboard shows it checked.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 14
AHOME="$SCRATCH/attest-gnupg"
mkdir -m 700 "$AHOME"
attest_agent_kill() { GNUPGHOME="$AHOME" gpgconf --kill gpg-agent 2>/dev/null; }
TAP_CLEANUP="attest_agent_kill"
GNUPGHOME="$AHOME" gpg --batch --quiet --passphrase '' --quick-gen-key "pullgate <pullgate@example.org>" \
	ed25519 sign never >/dev/null 2>&1
AFPR=$(GNUPGHOME="$AHOME" gpg --batch --with-colons --list-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')
GNUPGHOME="$AHOME" gpg --batch --armor --export "$AFPR" >"$SCRATCH/attest.asc" 2>/dev/null
serve_setup "attestation:
  key: $AFPR
  gnupg-home: $AHOME"
serve_start
T2=hardening-v6.16-rc1-fix1-take2
BASE=$(git --git-dir="$TREE" rev-parse master)

push_record "$SCRATCH/take2.json" "$T2"
hook push "$SCRATCH/take2.json" take2-push
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" waiting rejected error approved passed)" waiting "take two waits for the maintainer"
get "$URL/pulls/$ID"
unlike "$out" 'id="attestation"' "a pull not yet approved shows no attestation"
run "$PULLGATE" attest verify --signer "$AFPR" --keyring "$SCRATCH/attest.asc" --tree "$TREE" \
	"$(git --git-dir="$TREE" rev-parse "refs/heads/pullgate/$T2")"
is "$rc" 3 "and its merge has none"

curl -s -c "$SCRATCH/jar" -o "$SCRATCH/login.json" -X POST -H 'Content-Type: application/json' \
	-d "{\"user\":\"maintainer\",\"password\":\"$SERVE_PASSWORD\"}" "$URL/api/login"
CSRF=$(jq -r .csrf "$SCRATCH/login.json")
code=$(curl -s -b "$SCRATCH/jar" -o "$SCRATCH/.r" -w '%{http_code}' -X POST \
	-H "X-CSRF-Token: $CSRF" -H "Origin: $URL" "$URL/api/pulls/$ID/approve")
is "$code" 200 "the maintainer approves it"
MERGE=$(git --git-dir="$TREE" rev-parse master)
# the signer is the one serve.yaml names, as the service signs with it
run "$PULLGATE" attest verify --config "$CONFIG" --keyring "$SCRATCH/attest.asc" --tree "$TREE" master
is "$rc" 0 "the approved merge carries a valid attestation"
like "$out" "^valid: $MERGE is attested by key $AFPR \\(SIMULATED: stand-in scripts ran, nothing was really built or booted\\); the report '.*/logs/job-$ID/run-[0-9]+/report.json' is the one attested$" \
	"hashing the report on disk (and saying the stand-ins of tests/fakes ran)"
S=$(git --git-dir="$TREE" notes --ref=pullgate show master | sed '/^-----BEGIN PGP SIGNATURE-----$/,$d')
is "$(printf '%s' "$S" | jq -r '"\(.approved_by) \(.merge_commit) \(.base_commit)"')" "maintainer $MERGE $BASE" \
	"approved by the maintainer, of this merge on its base"
is "$(jq -r '[.stages[] | "\(.name):\(.status)"] | join(" ")' "$(printf '%s' "$S" | jq -r .report.path)")" \
	"verify:passed merge:passed build:passed boot:passed approve:waiting" "of the run that tested the merge"
get "$URL/api/pulls/$ID"
like "$(printf '%s' "$out" | jq -r '.decisions[-1].note')" "attestation signed by key $AFPR in refs/notes/pullgate$" \
	"the approve decision names the attestation"
get "$URL/pulls/$ID"
like "$out" "<p class=\"attest attest-valid\" id=\"attest-verdict\">valid: signed by key <code>$AFPR</code> \\(SIMULATED: stand-in scripts ran, nothing was really built or booted\\); " \
	"the dashboard shows it checked valid, by which key, and SIMULATED"
like "$out" '<pre class="statement">\{' "with the signed statement"
like "$out" '&quot;type&quot;: &quot;pullgate-attestation&quot;' "escaped"

# a statement changed in the tree: the page says so
git --git-dir="$TREE" notes --ref=pullgate show master | sed 's/"approved_by": "maintainer"/"approved_by": "gate"/' >"$SCRATCH/forged"
git --git-dir="$TREE" notes --ref=pullgate add -f -C "$(git --git-dir="$TREE" hash-object -w "$SCRATCH/forged")" master 2>/dev/null
get "$URL/pulls/$ID"
like "$out" '<p class="attest attest-invalid" id="attest-verdict">invalid; the signature does not match the statement: the note was altered</p>' \
	"a forged note is shown invalid, saying why"
git --git-dir="$TREE" notes --ref=pullgate remove master 2>/dev/null
get "$URL/pulls/$ID"
like "$out" '<p class="attest attest-none" id="attest-verdict">none; no note on' "and a missing one as none"
