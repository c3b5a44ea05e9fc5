#!/bin/sh
# 69-attest-bind.t - attest verify binds a note to its signer and to its bytes: another key of the keyring, bytes no signature covers, another tree or base are refused.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/gate.sh"
plan 40
gate_setup

newkey() { # HOME NAME USAGE: make a key, print its fingerprint
	mkdir -m 700 "$1"
	TAP_CLEANUP="${TAP_CLEANUP:-} gpgconf_kill_$2"
	eval "gpgconf_kill_$2() { GNUPGHOME='$1' gpgconf --kill gpg-agent 2>/dev/null; }"
	GNUPGHOME="$1" gpg --batch --quiet --passphrase '' --quick-gen-key "$2 <$2@example.org>" \
		ed25519 "$3" never >/dev/null 2>&1
	GNUPGHOME="$1" gpg --batch --with-colons --list-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }'
}
# the service's key; a sender's fresh key; a key that signs only with a subkey
AHOME="$SCRATCH/attest-gnupg"
AFPR=$(newkey "$AHOME" pullgate sign)
FHOME="$SCRATCH/fresh-gnupg"
FFPR=$(newkey "$FHOME" sender sign)
SHOME="$SCRATCH/sub-gnupg"
SFPR=$(newkey "$SHOME" subsigner cert)
GNUPGHOME="$SHOME" gpg --batch --quiet --passphrase '' --quick-add-key "$SFPR" ed25519 sign never >/dev/null 2>&1
SUBFPR=$(GNUPGHOME="$SHOME" gpg --batch --with-colons --list-keys "$SFPR" 2>/dev/null |
	awk -F: '$1 == "fpr" { n++ } $1 == "fpr" && n == 2 { print $10; exit }')
# the maintainer's own keyring holds every one of them: any key of it is not enough
MHOME="$SCRATCH/maintainer-gnupg"
mkdir -m 700 "$MHOME"
TAP_CLEANUP="${TAP_CLEANUP:-} mkill"
mkill() { GNUPGHOME="$MHOME" gpgconf --kill gpg-agent 2>/dev/null; }
for h in "$AHOME:$AFPR" "$FHOME:$FFPR" "$SHOME:$SFPR"; do
	GNUPGHOME="${h%%:*}" gpg --batch --armor --export "${h#*:}" 2>/dev/null |
		GNUPGHOME="$MHOME" gpg --batch --quiet --import 2>/dev/null
done

cat >"$SCRATCH/policy.yaml" <<EOF
attestation:
  key: $AFPR
  gnupg-home: $AHOME
EOF
run "$PULLGATE" gate --json --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" \
	--tree "$TREE" --approve --policy "$SCRATCH/policy.yaml" "$KEES" "$T2"
is "$rc" 0 "the pull is approved"
MERGE=$(master)
git --git-dir="$TREE" notes --ref=pullgate show master >"$SCRATCH/note"
sed '/^-----BEGIN PGP SIGNATURE-----$/,$d' "$SCRATCH/note" >"$SCRATCH/statement.json"
sed -n '/^-----BEGIN PGP SIGNATURE-----$/,$p' "$SCRATCH/note" >"$SCRATCH/signature.asc"

# verify [ARGS...] COMMIT: attest verify against the maintainer's own keyring
verify() { GNUPGHOME="$MHOME" run "$PULLGATE" attest verify --tree "$TREE" "$@"; }
# put_note COMMIT FILE: FILE's exact bytes as the note on COMMIT
put_note() {
	git --git-dir="$TREE" notes --ref=pullgate add -f -C "$(git --git-dir="$TREE" hash-object -w "$2")" "$1" 2>/dev/null
}
# signed HOME KEY STATEMENT: the statement and its armored signature by KEY, as a note
signed() {
	cat "$3"
	GNUPGHOME="$1" gpg --batch --armor --detach-sign -u "$2" -o - "$3" 2>/dev/null
}

# --- the genuine note ----------------------------------------------------------------------
is "$(jq -r '"\(.version) \(.merge_tree) \(.tag_object)"' "$SCRATCH/statement.json")" \
	"2 $(git --git-dir="$TREE" rev-parse "$MERGE^{tree}") $(git --git-dir="$KEES" rev-parse "$T2")" \
	"the statement is version 2: it names the merge's tree and the tag object"
is "$(jq -r .policy_sha256 "$SCRATCH/statement.json")" "$(sha256sum <"$SCRATCH/policy.yaml" | cut -d' ' -f1)" \
	"and the policy by its SHA-256"
is "$(jq -r .policy_sha256 "$PULLGATE_HOME/logs/$KEY/latest/report.json")" \
	"$(sha256sum <"$SCRATCH/policy.yaml" | cut -d' ' -f1)" "which the report records"
is "$(tail -c 28 "$SCRATCH/note")" "-----END PGP SIGNATURE-----" "the note ends with the END line"
is "$(tail -c 1 "$SCRATCH/note" | od -An -c | tr -d ' ')" '\n' "and its one newline"
verify --signer "$AFPR" master
like "$rc $out" "^0 valid: $MERGE is attested by key $AFPR " "the genuine note with --signer: valid"
verify --signer "$(printf '%s' "$AFPR" | tr 'A-F' 'a-f')" master
is "$rc" 0 "a fingerprint in lower case names the same key"
verify --policy "$SCRATCH/policy.yaml" master
is "$rc" 0 "the policy's attestation.key is the signer without --signer"
printf 'attestation:\n  key: %s\n' "$AFPR" >"$SCRATCH/serve.yaml"
verify --config "$SCRATCH/serve.yaml" master
is "$rc" 0 "so is serve.yaml's"
printf 'policy: %s\n' "$SCRATCH/policy.yaml" >"$SCRATCH/serve-policy.yaml"
verify --config "$SCRATCH/serve-policy.yaml" master
is "$rc" 0 "and, without one, the policy serve.yaml names"
verify --signer "$FFPR" --policy "$SCRATCH/policy.yaml" master
like "$rc $out" "^1 invalid: $MERGE: not attested by $FFPR: signed by $AFPR$" "--signer wins over the policy"

# --- the signer is required ------------------------------------------------------------------
verify master
is "$rc" 2 "without --signer, --policy or --config: a usage error"
like "$err" "^error: the signer is required: --signer FPR, or --policy FILE or --config FILE naming attestation.key$" \
	"saying so in one line"
is "$out" "" "and nothing is judged"
printf 'limits:\n  max-commits: 7\n' >"$SCRATCH/nokey.yaml"
verify --policy "$SCRATCH/nokey.yaml" master
like "$rc $err" "^2 error: the configuration or policy given names no attestation.key" \
	"a policy without attestation.key names no signer"
verify --signer "$(printf '%s' "$AFPR" | tail -c 16)" master
like "$rc $err" "^2 error: signer '[0-9A-F]{16}' is no full fingerprint" "a short key id is no signer"

# --- a note by another key of the keyring ------------------------------------------------------
# all the issue's forger needed: type, version and merge, signed by a fresh key
printf '{\n  "type": "pullgate-attestation",\n  "version": 1,\n  "merge_commit": "%s"\n}\n' "$MERGE" \
	>"$SCRATCH/minimal.json"
signed "$FHOME" "$FFPR" "$SCRATCH/minimal.json" >"$SCRATCH/note.minimal"
put_note master "$SCRATCH/note.minimal"
verify master
is "$rc" 2 "a fresh key's minimal note, without --signer: not judged valid (usage)"
verify --signer "$AFPR" master
is "$rc" 1 "with --signer of the service's key: invalid"
is "$out" "invalid: $MERGE: not attested by $AFPR: signed by $FFPR" "naming both keys"
# the genuine statement, word for word, signed by the fresh key
signed "$FHOME" "$FFPR" "$SCRATCH/statement.json" >"$SCRATCH/note.resigned"
put_note master "$SCRATCH/note.resigned"
verify --signer "$AFPR" master
is "$rc $out" "1 invalid: $MERGE: not attested by $AFPR: signed by $FFPR" \
	"the genuine statement signed by another key: invalid"

# a subkey signs for its primary key: gpg names the primary
signed "$SHOME" "$SFPR" "$SCRATCH/statement.json" >"$SCRATCH/note.subkey"
is "$(sed -n '/^-----BEGIN PGP SIGNATURE-----$/,$p' "$SCRATCH/note.subkey" |
	GNUPGHOME="$MHOME" gpg --batch --status-fd 1 --verify - "$SCRATCH/statement.json" 2>/dev/null |
	awk '$2 == "VALIDSIG" { print $3 }')" "$SUBFPR" "the subkey made that signature"
put_note master "$SCRATCH/note.subkey"
verify --signer "$SFPR" master
like "$rc $out" "^0 valid: $MERGE is attested by key $SFPR " "a subkey's signature counts for its primary key"
verify --signer "$SUBFPR" master
is "$rc $out" "1 invalid: $MERGE: not attested by $SUBFPR: signed by $SFPR" \
	"and is named by the primary's fingerprint, not the subkey's"

# --- bytes no signature covers ---------------------------------------------------------------
{ cat "$SCRATCH/note"; printf 'Reviewed-by: nobody, this line is not signed\n'; } >"$SCRATCH/note.trail"
put_note master "$SCRATCH/note.trail"
like "$(git --git-dir="$TREE" log -1 --notes=pullgate master)" "this line is not signed" \
	"git log --notes shows text after the END line"
verify --signer "$AFPR" master
is "$rc $out" "1 invalid: $MERGE: the note is no signed statement: 45 bytes after the signature's END line" \
	"so attest verify refuses it"
{ cat "$SCRATCH/note"; printf '\n'; } >"$SCRATCH/note.nl"
put_note master "$SCRATCH/note.nl"
verify --signer "$AFPR" master
like "$rc $out" "^1 invalid: .*: 1 bytes after the signature's END line$" "one newline more than the writer writes: refused"
{ cat "$SCRATCH/note"; printf '\000hidden text\n'; } >"$SCRATCH/note.nul"
put_note master "$SCRATCH/note.nul"
like "$(git --git-dir="$TREE" log -1 --notes=pullgate master | tr -d '\000')" "hidden text" \
	"git log --notes shows the text past a NUL"
verify --signer "$AFPR" master
is "$rc $out" "1 invalid: $MERGE: the note is no signed statement: a NUL byte at offset $(wc -c <"$SCRATCH/note" | tr -d ' ')" \
	"attest verify reads the note's bytes, and refuses the NUL"
{ cat "$SCRATCH/note"; GNUPGHOME="$FHOME" gpg --batch --armor --detach-sign -u "$FFPR" -o - \
	"$SCRATCH/statement.json" 2>/dev/null; } >"$SCRATCH/note.two"
put_note master "$SCRATCH/note.two"
verify --signer "$AFPR" master
is "$rc $out" "1 invalid: $MERGE: the note is no signed statement: a second signature block after the first" \
	"a second signature: refused"
{ cat "$SCRATCH/statement.json"; printf '\n'; cat "$SCRATCH/signature.asc"; } >"$SCRATCH/note.gap"
put_note master "$SCRATCH/note.gap"
verify --signer "$AFPR" master
like "$rc $out" "^1 invalid: .*: the statement is not one JSON object ending in a newline right before the signature$" \
	"a line between statement and signature: refused"
{ cat "$SCRATCH/statement.json"; sed '1a\
Comment: not signed' "$SCRATCH/signature.asc"; } >"$SCRATCH/note.header"
put_note master "$SCRATCH/note.header"
verify --signer "$AFPR" master
like "$rc $out" "^1 invalid: .*: the signature block has armor headers, which no signature covers$" \
	"an armor header: refused"

# --- the commit, its tree and its base -----------------------------------------------------------
put_note master "$SCRATCH/note"
verify --signer "$AFPR" master
is "$rc" 0 "the genuine note again: valid"
put_note "$BASE" "$SCRATCH/note"
verify --signer "$AFPR" "$BASE"
is "$rc $out" "1 invalid: $BASE: the statement attests merge $MERGE, not $BASE: the note was moved" \
	"the note copied to another commit: refused"
git --git-dir="$TREE" notes --ref=pullgate remove "$BASE" 2>/dev/null
# statements the service's key signed, naming what this merge is not
OTHER_TREE=$(git --git-dir="$TREE" rev-parse "$BASE^{tree}")
jq --arg t "$OTHER_TREE" '.merge_tree = $t' "$SCRATCH/statement.json" >"$SCRATCH/tree.json"
signed "$AHOME" "$AFPR" "$SCRATCH/tree.json" >"$SCRATCH/note.tree"
put_note master "$SCRATCH/note.tree"
verify --signer "$AFPR" master
is "$rc $out" "1 invalid: $MERGE: the statement attests tree $OTHER_TREE, but the tree of $MERGE is $(git --git-dir="$TREE" rev-parse "$MERGE^{tree}")" \
	"a statement naming another tree: refused"
jq --arg b "$(git --git-dir="$TREE" rev-parse "$BASE^")" '.base_commit = $b' "$SCRATCH/statement.json" >"$SCRATCH/base.json"
signed "$AHOME" "$AFPR" "$SCRATCH/base.json" >"$SCRATCH/note.base"
put_note master "$SCRATCH/note.base"
verify --signer "$AFPR" master
like "$rc $out" "^1 invalid: $MERGE: $MERGE is not the merge of base [0-9a-f]{40} and tag commit [0-9a-f]{40} the statement attests$" \
	"a statement naming another base: refused"
jq 'del(.policy_sha256)' "$SCRATCH/statement.json" >"$SCRATCH/nopolicy.json"
signed "$AHOME" "$AFPR" "$SCRATCH/nopolicy.json" >"$SCRATCH/note.nopolicy"
put_note master "$SCRATCH/note.nopolicy"
verify --signer "$AFPR" master
is "$rc $out" "1 invalid: $MERGE: the statement binds no policy_sha256" "a statement binding no policy: refused"
jq '.version = 1' "$SCRATCH/statement.json" >"$SCRATCH/v1.json"
signed "$AHOME" "$AFPR" "$SCRATCH/v1.json" >"$SCRATCH/note.v1"
put_note master "$SCRATCH/note.v1"
verify --signer "$AFPR" master
like "$rc $out" "^1 invalid: $MERGE: the statement is version 1, which binds neither the merge's tree nor the policy" \
	"a version 1 statement: refused, saying why"

# --- the policy's signer, as the gate signs with it -----------------------------------------------
put_note master "$SCRATCH/note.trail"
verify --policy "$SCRATCH/policy.yaml" master
like "$rc $out" "^1 invalid: .*bytes after the signature's END line" "the policy's signer, trailing text: refused"
put_note master "$SCRATCH/note"
verify --policy "$SCRATCH/policy.yaml" master
is "$rc" 0 "and the genuine note: valid"
