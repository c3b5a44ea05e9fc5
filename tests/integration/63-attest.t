#!/bin/sh
# 63-attest.t - an approved merge carries a signed attestation in refs/notes/pullgate; attest verify tells a good one from a forged, moved, unknown or missing one.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/gate.sh"
plan 59
gate_setup

# the service's key, and a stranger's, each in a throwaway GNUPGHOME of its own
newkey() { # HOME NAME: make a key, print its fingerprint
	mkdir -m 700 "$1"
	TAP_CLEANUP="${TAP_CLEANUP:-} gpgconf_kill_$2"
	eval "gpgconf_kill_$2() { GNUPGHOME='$1' gpgconf --kill gpg-agent 2>/dev/null; }"
	GNUPGHOME="$1" gpg --batch --quiet --passphrase '' --quick-gen-key "$2 <$2@example.org>" \
		ed25519 sign never >/dev/null 2>&1
	GNUPGHOME="$1" gpg --batch --with-colons --list-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }'
}
AHOME="$SCRATCH/attest-gnupg"
AFPR=$(newkey "$AHOME" pullgate)
GNUPGHOME="$AHOME" gpg --batch --armor --export "$AFPR" >"$SCRATCH/attest.asc" 2>/dev/null
OFPR=$(newkey "$SCRATCH/other-gnupg" stranger)
GNUPGHOME="$SCRATCH/other-gnupg" gpg --batch --armor --export "$OFPR" >"$SCRATCH/other.asc" 2>/dev/null

cat >"$SCRATCH/policy.yaml" <<EOF
attestation:
  key: $AFPR
  gnupg-home: $AHOME
EOF
gate() {
	run "$PULLGATE" gate --json --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" \
		--tree "$TREE" --approve "$@" "$KEES" "$T2"
}
# the service's key must have signed: --signer names it
verify() { run "$PULLGATE" attest verify --signer "$AFPR" --tree "$TREE" "$@"; }
note() { git --git-dir="$TREE" notes --ref=pullgate show "$1"; }
statement() { note "$1" | sed '/^-----BEGIN PGP SIGNATURE-----$/,$d'; }
# put_note COMMIT FILE: FILE's exact bytes as the note on COMMIT
put_note() {
	git --git-dir="$TREE" notes --ref=pullgate add -f -C "$(git --git-dir="$TREE" hash-object -w "$2")" "$1" 2>/dev/null
}

# --- an approved merge is attested -------------------------------------------------
gate --policy "$SCRATCH/policy.yaml"
is "$rc" 0 "the pull is approved"
MERGE=$(master)
REPORT="$PULLGATE_HOME/logs/$KEY/latest/report.json"
is "$(printf '%s' "$out" | jq -r .attestation)" "signed by key $AFPR in refs/notes/pullgate" \
	"the report says the merge is attested, and by which key"
is "$(jq -r .attestation "$REPORT")" "signed by key $AFPR in refs/notes/pullgate" "so does the one on disk"
like "$(git --git-dir="$TREE" log -1 --notes=pullgate master)" '^Notes \(pullgate\):$' \
	"git log --notes=pullgate shows the note"
like "$(git --git-dir="$TREE" log -1 --notes=pullgate master)" '"type": "pullgate-attestation"' \
	"and it is the attestation"
S=$(statement master)
is "$(printf '%s' "$S" | jq -r '"\(.version) \(.merge_commit) \(.base_commit)"')" "2 $MERGE $BASE" \
	"the statement names the merge and its base"
is "$(printf '%s' "$S" | jq -r '"\(.tag) \(.tag_object) \(.signer)"')" \
	"refs/tags/$T2 $(git --git-dir="$KEES" rev-parse "$T2") $FPR_KEES" "the tag, its object and its signer"
is "$(printf '%s' "$S" | jq -r '"\(.repository) \(.verify.verdict) \(.approved_by)"')" "$KEES accept gate" \
	"the pull's repository, the verify verdict, who approved"
is "$(printf '%s' "$S" | jq -r .report.sha256)" "$(sha256sum "$REPORT" | cut -d' ' -f1)" \
	"the SHA-256 of the report as it is on disk"
is "$(printf '%s' "$S" | jq -r .report.path)" "$(cd "$PULLGATE_HOME/logs/$KEY/latest" && pwd -P)/report.json" \
	"and where it is"
is "$(printf '%s' "$S" | jq -r '"\(.config_sha256) \(.image_sha256)"')" \
	"$(jq -r '.provenance[] | select(.stage == "build") | "\(.config_sha256) \(.image_sha256)"' "$REPORT")" \
	"the config and Image hashes of the build"
is "$(printf '%s' "$S" | jq -r '"\(.toolchain != null) \(.qemu != null) \(.simulated)"')" "true true true" \
	"the tools' versions, and that stand-ins ran"
is "$(printf '%s' "$S" | jq -c '[.suites[] | [.name, .verdict, .merge.passed]]')" \
	"$(jq -c '[.suites[] | [.name, .verdict, .merge.passed]]' "$REPORT")" "the KUnit suites as the report has them"
like "$(printf '%s' "$S" | jq -r .time)" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$' "and the time"

verify --keyring "$SCRATCH/attest.asc" master
is "$rc" 0 "attest verify accepts it against the service's public key"
SIM=" \\(SIMULATED: stand-in scripts ran, nothing was really built or booted\\)"
like "$out" "^valid: $MERGE is attested by key $AFPR$SIM; the report '.*' is the one attested$" \
	"saying which key, that the run was a stand-in's (SIMULATED), and that the report on disk matched"
verify --keyring "$SCRATCH/attest.asc" "$(printf '%.12s' "$MERGE")"
is "$rc" 0 "an abbreviated id names the merge too"
GNUPGHOME="$AHOME" run "$PULLGATE" attest verify --signer "$AFPR" --tree "$TREE" master
is "$rc" 0 "without --keyring the user's own keyring (\$GNUPGHOME) is used"

# the same statement saying the shipped scripts ran, signed by the service's key: valid, not SIMULATED
statement master | sed 's/"simulated": true/"simulated": false/' >"$SCRATCH/real.json"
GNUPGHOME="$AHOME" gpg --batch --armor --detach-sign -u "$AFPR" -o - "$SCRATCH/real.json" \
	>"$SCRATCH/real.asc" 2>/dev/null
note master >"$SCRATCH/note.sim"
cat "$SCRATCH/real.json" "$SCRATCH/real.asc" >"$SCRATCH/note.real"
put_note master "$SCRATCH/note.real"
verify --keyring "$SCRATCH/attest.asc" master
is "$rc" 0 "a statement of a real run, signed by the service: valid"
like "$out" "^valid: $MERGE is attested by key $AFPR; the report '.*' is the one attested$" \
	"and its line does not say SIMULATED"
put_note master "$SCRATCH/note.sim"
verify --keyring "$SCRATCH/attest.asc" master
like "$rc $out" "^0 valid: $MERGE is attested by key $AFPR$SIM; " "the stand-in's note again: SIMULATED again"

# by hand, as docs/attestation.md says: the statement, the signature, gpg --verify
note master >"$SCRATCH/note"
sed '/^-----BEGIN PGP SIGNATURE-----$/,$d' "$SCRATCH/note" >"$SCRATCH/statement.json"
sed -n '/^-----BEGIN PGP SIGNATURE-----$/,$p' "$SCRATCH/note" >"$SCRATCH/statement.json.asc"
GNUPGHOME="$AHOME" run gpg --batch --verify "$SCRATCH/statement.json.asc" "$SCRATCH/statement.json"
is "$rc" 0 "gpg --verify checks the split note by hand"
is "$(sed -n '/^-----END PGP SIGNATURE-----$/,$p' "$SCRATCH/note")" "-----END PGP SIGNATURE-----" \
	"by hand: nothing after the END line"
ok "$(tr -d '\000' <"$SCRATCH/note" | cmp -s - "$SCRATCH/note"; echo $?)" "by hand: no NUL"
is "$(GNUPGHOME="$AHOME" gpg --batch --status-fd 1 --verify "$SCRATCH/statement.json.asc" \
	"$SCRATCH/statement.json" 2>/dev/null | awk '$2 == "VALIDSIG" { print $NF }')" "$AFPR" \
	"by hand: the signer's fingerprint"
is "$(jq -r .merge_tree "$SCRATCH/statement.json")" "$(git --git-dir="$TREE" rev-parse "$MERGE^{tree}")" \
	"by hand: the merge's tree"

# --- forged, moved, unknown, missing ----------------------------------------------------
verify --keyring "$SCRATCH/other.asc" master
is "$rc" 1 "a keyring without the service's key: invalid"
is "$out" "invalid: $MERGE: signed by key $AFPR, which is not in the keyring" "saying whose key signed"

sed 's/"simulated": true/"simulated": false/' "$SCRATCH/note" >"$SCRATCH/tampered"
put_note master "$SCRATCH/tampered"
verify --keyring "$SCRATCH/attest.asc" master
is "$rc" 1 "a statement changed after signing: invalid"
is "$out" "invalid: $MERGE: the signature does not match the statement: the note was altered" \
	"saying the note was altered"

# one character of the signature's body changed
awk '/^-----BEGIN PGP SIGNATURE-----$/ { s = 1; print; next }
     s == 1 && /^$/ { s = 2; print; next }
     s == 2 { c = substr($0, 10, 1); $0 = substr($0, 1, 9) (c == "A" ? "B" : "A") substr($0, 11); s = 3 }
     { print }' "$SCRATCH/note" >"$SCRATCH/badsig"
if cmp -s "$SCRATCH/note" "$SCRATCH/badsig"; then ok 1 "the signature was changed"; else ok 0 "the signature was changed"; fi
put_note master "$SCRATCH/badsig"
verify --keyring "$SCRATCH/attest.asc" master
is "$rc" 1 "a changed signature: invalid"
like "$out" "^invalid: $MERGE: the (signature does not match|signature cannot be checked)" "saying so in one line"

head -n 3 "$SCRATCH/statement.json" >"$SCRATCH/unsigned"
put_note master "$SCRATCH/unsigned"
verify --keyring "$SCRATCH/attest.asc" master
is "$rc" 1 "a note without a signature: invalid"
is "$out" "invalid: $MERGE: the note is no signed statement: no OpenPGP signature block" "saying so"

put_note master "$SCRATCH/note"
put_note "$BASE" "$SCRATCH/note"
verify --keyring "$SCRATCH/attest.asc" "$BASE"
is "$rc" 1 "the note copied to another commit: invalid"
is "$out" "invalid: $BASE: the statement attests merge $MERGE, not $BASE: the note was moved" \
	"naming the merge it attests"
git --git-dir="$TREE" notes --ref=pullgate remove "$BASE" 2>/dev/null

cp "$REPORT" "$SCRATCH/report.keep"
printf ' ' >>"$REPORT"
verify --keyring "$SCRATCH/attest.asc" master
is "$rc" 1 "a report changed on disk since: invalid"
like "$out" "^invalid: $MERGE: the report on disk, '.*report.json', is not the one attested" "saying which"
cp "$SCRATCH/report.keep" "$REPORT"
mv "$REPORT" "$SCRATCH/report.moved"
verify --keyring "$SCRATCH/attest.asc" master
is "$rc" 0 "a report not on this machine is not compared"
like "$out" "the report is not on disk here: not compared$" "and it says so"
mv "$SCRATCH/report.moved" "$REPORT"

verify --keyring "$SCRATCH/attest.asc" "$BASE"
is "$rc" 3 "a commit without a note: no attestation"
is "$out" "no attestation: $BASE has no note in refs/notes/pullgate" "saying so"

# --- no key, or a key that cannot sign: said in the report, never silently -----------------
reset_tree
# the merge may be the same commit as the first run's (same parents, tree and second), with
# that one's note: drop it
git --git-dir="$TREE" update-ref -d refs/notes/pullgate 2>/dev/null || true
gate
is "$rc" 0 "with no key configured the pull is still approved"
like "$(printf '%s' "$out" | jq -r .attestation)" "^none: no attestation key is configured \(attestation.key" \
	"and the report says there is no attestation"
verify --keyring "$SCRATCH/attest.asc" master
is "$rc" 3 "and there is none"
like "$(jq -r .attestation "$PULLGATE_HOME/logs/$KEY/latest/report.json")" "^none: " "so says the report on disk"
reset_tree
run "$PULLGATE" gate --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" --tree "$TREE" \
	--approve --policy "$SCRATCH/policy.yaml" "$KEES" "$T2"
like "$rc $out" "^attested: signed by key $AFPR in refs/notes/pullgate$" "the text report names the attestation"
reset_tree
sed "s/$AFPR/$OFPR/" "$SCRATCH/policy.yaml" >"$SCRATCH/wrongkey.yaml"
# the merge may be the same commit as the last run's (same parents, tree and second): drop its note
git --git-dir="$TREE" update-ref -d refs/notes/pullgate 2>/dev/null || true
gate --policy "$SCRATCH/wrongkey.yaml"
is "$rc" 0 "a key the GNUPGHOME lacks does not undo the approval"
like "$(printf '%s' "$out" | jq -r .attestation)" "^failed: no signed note was written: no secret key $OFPR" \
	"the report says the note could not be signed, and why"
verify --keyring "$SCRATCH/attest.asc" master
is "$rc" 3 "and there is no note"
# a key that needs a passphrase: the service never waits for a prompt
reset_tree
PHOME="$SCRATCH/pass-gnupg"
mkdir -m 700 "$PHOME"
TAP_CLEANUP="${TAP_CLEANUP:-} pass_kill"
pass_kill() { GNUPGHOME="$PHOME" gpgconf --kill gpg-agent 2>/dev/null; }
GNUPGHOME="$PHOME" gpg --batch --quiet --pinentry-mode loopback --passphrase secret \
	--quick-gen-key "locked <locked@example.org>" ed25519 sign never >/dev/null 2>&1
PFPR=$(GNUPGHOME="$PHOME" gpg --batch --with-colons --list-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')
printf 'attestation:\n  key: %s\n  gnupg-home: %s\n' "$PFPR" "$PHOME" >"$SCRATCH/locked.yaml"
gate --policy "$SCRATCH/locked.yaml" </dev/null
is "$rc" 0 "a key behind a passphrase does not hold up the approval"
like "$(printf '%s' "$out" | jq -r .attestation)" "^failed: no signed note was written: key $PFPR needs a passphrase: pullgate signs without prompting" \
	"the report says it could not sign"

# --- the command line ----------------------------------------------------------------
run "$PULLGATE" attest
is "$rc" 2 "attest without a subcommand is a usage error"
run "$PULLGATE" attest sign master
like "$err" "^error: 'sign' is not an attest subcommand: verify$" "an unknown subcommand is named"
run "$PULLGATE" attest verify --tree "$TREE"
like "$rc $err" "^2 error: COMMIT is required" "verify without a COMMIT is a usage error"
run "$PULLGATE" attest --help
like "$rc $err" "^0 usage: pullgate attest verify \(--signer FPR \| --policy FILE \| --config FILE\) \[--keyring FILE\] \[--tree DIR\] COMMIT$" "--help prints the usage"
verify --keyring "$SCRATCH/attest.asc" no-such-branch
like "$rc $err" "^3 error: attest verify: 'no-such-branch' is no commit, ref or branch of the tree$" \
	"a commit the tree lacks: could not check"
verify --keyring "$SCRATCH/nonexistent.asc" master
is "$rc" 3 "a keyring that is not there: could not check"
