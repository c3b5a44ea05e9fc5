#!/bin/sh
# 41-pgpkeys.t - keyring.pgpkeys: keys read from a pgpkeys.git-style directory, expired and revoked keys, a new commit's key, what is refused.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
plan 30
fixture_keys

# a copy to change: the fixtures may be shared
PK="$SCRATCH/pgpkeys"
cp -R "$SFX/pgpkeys" "$PK"
D="$SCRATCH/p"
mkdir -p "$D"

policy() { # NAME KEYRING-MAPPING: a policy trusting Sam, Olga, Rex and Otto
	cat >"$D/$1.yaml" <<EOF
upstream: {url: '$SFX/upstream.git', branch: master}
keyring: $2
signers:
  - {fingerprint: $FPR_SAM}
  - {fingerprint: $FPR_OLGA}
  - {fingerprint: $FPR_REX}
  - {fingerprint: $FPR_OTTO}
EOF
	echo "$D/$1.yaml"
}
verify_json() { # POLICY TAG
	run "$PULLGATE" verify --json --policy "$1" "$SENDER" "$2"
}
messages() { # CHECK: the messages of that check's findings, one a line
	printf '%s' "$out" | jq -r --arg c "$1" '.findings[] | select(.check == $c) | .message'
}
signatures() {
	printf '%s' "$out" | jq -r '[.signatures[] | "\(.kind) \(.status) \(.fingerprint)"] | join(",")'
}
keyid() { printf '%s' "$1" | cut -c25-40; }
commit_keys() { # MESSAGE: commit whatever changed in $PK
	git -C "$PK" add -A
	git -C "$PK" -c user.name=Keeper -c user.email=keeper@example.org -c commit.gpgSign=false \
		commit -q -m "$1"
}

# --- a tag signed by a key of the directory ----------------------------------------
pol=$(policy pk "{pgpkeys: '$SFX/pgpkeys'}")
verify_json "$pol" good
is "$rc" 0 "a tag signed by a key in the pgpkeys directory is accepted"
is "$(signatures)" "tag good $FPR_SAM" "the report names the signing key"

# relative to the policy's directory, as file: is
cat >"$SCRATCH/rel.yaml" <<EOF
upstream: {url: '$SFX/upstream.git', branch: master}
keyring: {pgpkeys: pgpkeys}
signers: [{fingerprint: $FPR_SAM}]
EOF
run "$PULLGATE" verify --policy "$SCRATCH/rel.yaml" "$SENDER" good
is "$rc" 0 "a relative pgpkeys path is taken from the policy's directory"

# --- expired and revoked keys are reported, never accepted ---------------------------
verify_json "$pol" expired-key
is "$rc" 1 "a tag signed by an expired key of the directory is rejected"
is "$(messages tag-signature)" "tag 'expired-key' is signed by key $(keyid "$FPR_OLGA"), which has expired" \
	"the finding says the key has expired"
is "$(signatures)" "tag expired-key $FPR_OLGA" "with the status expired-key"

verify_json "$pol" revoked-key
is "$rc" 1 "a tag signed by a revoked key of the directory is rejected, though trusted"
is "$(messages tag-signature)" "tag 'revoked-key' is signed by key $(keyid "$FPR_REX"), which has been revoked" \
	"the finding says the key has been revoked (the revocation is in its file)"
is "$(signatures)" "tag revoked-key $FPR_REX" "with the status revoked-key"

# --- a key added to the directory and committed ---------------------------------------
pol=$(policy copy "{pgpkeys: '$PK'}")
verify_json "$pol" for-next
is "$(messages tag-signature)" "tag 'for-next' is signed by key $(keyid "$FPR_OTTO"), which is not in the keyring" \
	"Otto's tag: his key is not in the directory yet"
gpg --batch --homedir "$SFX/gnupg" --armor --export "$FPR_OTTO" >"$PK/keys/$FPR_OTTO.asc"
commit_keys "keys: Otto"
verify_json "$pol" for-next
is "$(messages tag-signature)" "" "his key committed to the directory, his tag's signature is good"
is "$(signatures)" "tag good $FPR_OTTO" "and the report names his key"

# --- bad policies: one line, exit 3 as any bad policy -------------------------------------
run "$PULLGATE" verify --policy "$(policy two "{pgpkeys: '$PK', file: '$KEYRING'}")" "$SENDER" good
is "$rc" 3 "a keyring with two sources is a bad policy"
is "$err" "error: $D/two.yaml:2:10: 'keyring' wants either 'file' or 'pgpkeys', not both" \
	"which says so in one line"
run "$PULLGATE" verify --policy "$(policy missing "{pgpkeys: '$SCRATCH/none'}")" "$SENDER" good
is "$rc" 3 "a pgpkeys path that does not exist is a bad policy"
is "$err" "error: $D/missing.yaml:2:20: 'keyring.pgpkeys' names '$SCRATCH/none', which does not exist" \
	"naming the path"
run "$PULLGATE" verify --policy "$(policy notdir "{pgpkeys: '$KEYRING'}")" "$SENDER" good
is "$rc" 3 "a pgpkeys path that is not a directory is a bad policy"
is "$err" "error: $D/notdir.yaml:2:20: 'keyring.pgpkeys' names '$KEYRING', which is a file, not a directory" \
	"saying what it is"
run "$PULLGATE" policy check "$D/notdir.yaml"
like "$rc $err" "^3 $D/notdir.yaml:2:20: 'keyring.pgpkeys' names " "policy check finds it too"

# --- key files that are no key files: named at once, never waited on --------------------------
OLGA_FILE="$PK/keys/$FPR_OLGA.asc"
mv "$OLGA_FILE" "$SCRATCH/olga.asc"
mkfifo "$OLGA_FILE"
run timeout 60 "$PULLGATE" verify --policy "$pol" "$SENDER" good
is "$rc" 3 "a FIFO among the key files: pullgate cannot decide, and does not wait (timeout: 124)"
is "$err" "error: pgpkeys: '$OLGA_FILE' is a FIFO, not a regular file" "the FIFO is named"
rm "$OLGA_FILE"
ln -s "$SCRATCH/olga.asc" "$OLGA_FILE"
run "$PULLGATE" verify --policy "$pol" "$SENDER" good
is "$rc" 3 "a symlink among the key files is refused"
is "$err" "error: pgpkeys: '$OLGA_FILE' is a symbolic link, not a regular file" "and named"
rm "$OLGA_FILE"
head -c 200 "$SCRATCH/olga.asc" >"$OLGA_FILE"
run "$PULLGATE" verify --policy "$pol" "$SENDER" good
is "$rc" 3 "a key file cut short is refused, not skipped"
is "$err" "error: pgpkeys: key file '$OLGA_FILE' gives gpg no usable key $FPR_OLGA: it is damaged or holds another key" \
	"and named with the key it should hold"
cp "$PK/keys/$FPR_SAM.asc" "$OLGA_FILE"
run "$PULLGATE" verify --policy "$pol" "$SENDER" good
like "$rc $err" "^3 error: pgpkeys: key file '$OLGA_FILE' gives gpg no usable key $FPR_OLGA" \
	"so is a file that holds another key than its name's"
cp "$SCRATCH/olga.asc" "$OLGA_FILE"
printf 'not a key\n' >"$PK/keys/notes.txt"
mkfifo "$PK/keys/fifo.asc"
run "$PULLGATE" verify --policy "$pol" "$SENDER" good
is "$rc" 0 "names that are not <FINGERPRINT>.asc are no key files, and are left alone"
truncate -s 65M "$OLGA_FILE"
run "$PULLGATE" verify --policy "$pol" "$SENDER" good
like "$rc $err" "^3 error: pgpkeys: key file '$OLGA_FILE' has 68157440 bytes, more than the 67108864 a keyring may have$" \
	"a key file past the keyring's cap is refused before it is read"
rm -r "$PK/keys"
run "$PULLGATE" verify --policy "$pol" "$SENDER" good
like "$rc $err" "^3 error: pgpkeys '$PK' has no keys/ directory" "a directory without keys/ is no pgpkeys checkout"

# --- nothing left behind -----------------------------------------------------------------------
is "$(ls -A "$PULLGATE_HOME/tmp")" "" "every private GNUPGHOME was removed"
