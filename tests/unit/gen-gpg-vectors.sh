#!/bin/sh
# gen-gpg-vectors.sh - regenerate tests/unit/gpg_vectors.h: keys and signatures for the gpgme tests.
#
#   tests/unit/gen-gpg-vectors.sh >tests/unit/gpg_vectors.h
#
# The unit tests use fixed vectors rather than keys made at test time, so
# that they run without the gpg CLI and give the same bytes every time.
# Keys: Gina (a primary key that only certifies, a signing subkey, two user
# ids), Olga (created 2020-01-01, expired 2021), Rex (revoked after he
# signed), Sid (never expires; his signature expired a day after 2020-06-01),
# Uma (not in the keyring).  The keyring holds all but Uma.
set -eu
G=$(mktemp -d /tmp/pg-vec.XXXXXX)
trap 'gpgconf --homedir "$G" --kill all 2>/dev/null; rm -rf "$G"' EXIT
export GNUPGHOME="$G"
chmod 700 "$G"
gpg() { command gpg --batch --quiet --passphrase '' --pinentry-mode loopback "$@" 2>/dev/null; }
fpr() { command gpg --with-colons --list-keys "$1" 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }'; }
subfpr() { command gpg --with-colons --list-keys "$1" 2>/dev/null | awk -F: '$1 == "fpr" { n++ } $1 == "fpr" && n == 2 { print $10; exit }'; }
PAST='--faked-system-time 20200101T000000!'
SIGNED_AT='--faked-system-time 20200601T000000!'

gpg --quick-gen-key "Gina Good <gina@example.org>" ed25519 cert never
GINA=$(fpr gina@example.org)
gpg --quick-add-uid "$GINA" "Gina Good <gina@kernel.example>"
gpg --quick-add-key "$GINA" ed25519 sign never
GINA_SUB=$(subfpr gina@example.org)
gpg $PAST --quick-gen-key "Olga Old <olga@example.org>" ed25519 sign 1y
gpg --quick-gen-key "Rex Revoked <rex@example.org>" ed25519 sign never
REX=$(fpr rex@example.org)
gpg $PAST --quick-gen-key "Sid Sigexp <sid@example.org>" ed25519 sign never
gpg --quick-gen-key "Uma Unknown <uma@example.org>" ed25519 sign never
UMA=$(fpr uma@example.org)

tag() { # NAME TAGGER-EMAIL
	printf 'object 1111111111111111111111111111111111111111\ntype commit\ntag %s\n' "$1"
	printf 'tagger Gina Good <%s> 1700000000 +0000\n\n%s for the merge window\n' "$2" "$1"
}
sign() { # KEY [gpg options...] <payload
	k=$1
	shift
	gpg "$@" --armor --detach-sign -u "$k"
}
payload=$(tag v1 gina@example.org)
# c_str NAME: stdin as a C string literal
c_str() {
	printf 'static const char %s[] PG_UNUSED =\n' "$1"
	sed 's/\\/\\\\/g; s/"/\\"/g; s/^/\t"/; s/$/\\n"/'
	printf '\t;\n\n'
}

echo '/* gpg_vectors.h - fixed keys and signatures for the gpgme unit tests (generated). */'
echo '#ifndef PG_GPG_VECTORS_H'
echo '#define PG_GPG_VECTORS_H'
echo
echo '/* made by tests/unit/gen-gpg-vectors.sh; do not edit */'
printf '#define FPR_GINA "%s"\n#define FPR_GINA_SUB "%s"\n' "$GINA" "$GINA_SUB"
printf '#define FPR_OLGA "%s"\n#define FPR_REX "%s"\n' "$(fpr olga@example.org)" "$REX"
printf '#define FPR_SID "%s"\n#define FPR_UMA "%s"\n\n' "$(fpr sid@example.org)" "$UMA"
printf '%s\n' "$payload" | c_str TAG_V1
printf '%s\n' "$payload" | sign "$GINA_SUB!" | c_str SIG_GINA
printf '%s\n' "$payload" | sign olga@example.org $SIGNED_AT | c_str SIG_OLGA
printf '%s\n' "$payload" | sign rex@example.org | c_str SIG_REX
printf '%s\n' "$payload" | sign sid@example.org $SIGNED_AT --default-sig-expire 1d | c_str SIG_SID
printf '%s\n' "$payload" | sign uma@example.org | c_str SIG_UMA
tag v1 mallory@example.org | c_str TAG_V1_MALLORY
tag v1 mallory@example.org | sign "$GINA_SUB!" | c_str SIG_GINA_MALLORY
tag sub-1 gina@kernel.example | c_str TAG_SUB
tag sub-1 gina@kernel.example | sign "$GINA_SUB!" | c_str SIG_GINA_SUB
tag sub-1 gina@kernel.example | c_str TAG_SUB_UMA
tag sub-1 gina@kernel.example | sign uma@example.org | c_str SIG_UMA_SUB

sed 's/^:-----BEGIN/-----BEGIN/' "$G/openpgp-revocs.d/$REX.rev" | gpg --import
gpg --armor --export gina@example.org olga@example.org rex@example.org sid@example.org |
	c_str KEYRING
echo '#endif'
