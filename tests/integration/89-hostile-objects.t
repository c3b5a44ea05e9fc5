#!/bin/sh
# 89-hostile-objects.t - a loose object cut short, a pack index whose fanout claims 2^32-1 objects, a 60 MB note: refused with one line, never a hang or a crash.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 21

export GIT_COMMITTER_NAME="Linus" GIT_COMMITTER_EMAIL="linus@example.org"
export GIT_AUTHOR_NAME="Ann" GIT_AUTHOR_EMAIL="ann@example.org"
BASE="$SCRATCH/base"
C="$SCRATCH/case"

# an upstream in one pack, one commit pushed on top (loose); a pull of one
# commit whose objects are loose, with an annotated tag (loose too)
git init -q -b master "$BASE/w"
g() { git -C "$BASE/w" "$@"; }
for i in 1 2 3 4; do
	echo "$i" >"$BASE/w/f$i"
	g add "f$i"
	g commit -q -m "lib: change $i"
done
git clone -q --bare "$BASE/w" "$BASE/up.git"
git -C "$BASE/up.git" repack -q -a -d
g checkout -q -b topic
echo t >"$BASE/w/t"
g add t
g commit -q -m "net: topic"
git clone -q --bare "$BASE/w" "$BASE/sub.git"
git -C "$BASE/sub.git" tag -a -m pull pull-1 topic
g checkout -q master
echo x >"$BASE/w/x"
g add x
g commit -q -m "lib: on top"
g push -q "$BASE/up.git" master
TIP=$(git -C "$BASE/up.git" rev-parse master)
TOPIC=$(git -C "$BASE/sub.git" rev-parse topic)
TAG=$(git -C "$BASE/sub.git" rev-parse pull-1)

fresh() { rm -rf "$C" && cp -a "$BASE" "$C" && export PULLGATE_HOME="$C/home"; }
loose() { echo "$1/objects/$(printf %.2s "$2")/${2#??}"; }
# cut FILE: its second half gone, as a full disk or a killed writer leaves it
cut_half() { chmod u+w "$1" && truncate -s $(($(stat -c %s "$1") / 2)) "$1"; }
# fanout IDX: the last fanout entry (the object count) made 2^32-1
fanout() {
	chmod u+w "$1"
	printf '\377\377\377\377' | dd of="$1" bs=1 seek=$((8 + 255 * 4)) conv=notrunc 2>/dev/null
}
# run_bounded CMD...: rc, out, err; timeout is a safety net: 124 passes no assertion
run_bounded() {
	set +e
	timeout 60 "$@" >"$SCRATCH/out" 2>"$SCRATCH/err"
	rc=$?
	set -e
	out=$(cat "$SCRATCH/out")
	err=$(cat "$SCRATCH/err")
}
verify() { run_bounded "$PULLGATE" verify --json --upstream "$C/up.git:master" "$C/sub.git" pull-1; }
# refused NAME REGEX: exit 3 (could not decide), no crash, one error line matching REGEX
refused() {
	is "$rc" 3 "$1: pullgate could not decide (exit 3): it neither hung nor crashed"
	is "$(printf '%s\n' "$err" | wc -l) $(printf '%s' "$err" | grep -cE "^error: $2" || true)" \
		"1 1" "$1: one error line names the damage"
	is "$out" "" "$1: and no verdict"
}

fresh
verify
is "$rc $(printf '%s' "$out" | jq -r .verdict)" "1 reject" "unharmed, the pull is judged (rejected: unsigned)"

# --- a loose object cut short: libgit2 1.5.1 loops for ever inflating it ---
fresh
cut_half "$(loose "$C/up.git" "$TIP")"
verify
refused "upstream's loose tip cut short" \
	"(.*: )?object $TIP in '$C/up.git/objects' is damaged: its zlib stream is cut short$"

fresh
cut_half "$(loose "$C/sub.git" "$TOPIC")"
verify
refused "the pull's loose commit cut short" \
	"(.*: )?object $TOPIC in '$C/sub.git/objects' is damaged: its zlib stream is cut short$"

fresh
cut_half "$(loose "$C/sub.git" "$TAG")"
verify
refused "the pull's loose tag cut short" \
	"(.*: )?object $TAG in '$C/sub.git/objects' is damaged: its zlib stream is cut short$"

# --- a pack index whose fanout claims 2^32-1 objects: libgit2 1.5.1 reads past it ---
fresh
idx=$(ls "$C/up.git/objects/pack/"*.idx)
fanout "$idx"
verify
refused "upstream's pack index claiming 2^32-1 objects" \
	"pack index '$idx' is damaged: it claims 4294967295 objects, which its [0-9]+ bytes cannot hold$"

fresh
git -C "$C/sub.git" repack -q -a -d
idx=$(ls "$C/sub.git/objects/pack/"*.idx)
fanout "$idx"
verify
refused "the pull's pack index claiming 2^32-1 objects" \
	"pack index '$idx' is damaged: it claims 4294967295 objects, which its [0-9]+ bytes cannot hold$"

# --- a pack that does not match its index ---
fresh
git -C "$C/sub.git" repack -q -a -d
pack=$(ls "$C/sub.git/objects/pack/"*.pack)
chmod u+w "$pack"
printf '\0\0\0\1' | dd of="$pack" bs=1 seek=8 conv=notrunc 2>/dev/null
verify
refused "the pull's pack holding another count than its index" \
	"pack '$pack' holds 1 objects, its index '.*\\.idx' [0-9]+$"

# --- the same files, whole again: judged as before (nothing remembered wrongly) ---
fresh
verify
is "$rc $(printf '%s' "$out" | jq -r .verdict)" "1 reject" "the same repositories unharmed: judged again"

# --- a 60 MB note: refused from its header, before its bytes are read ---
TREE="$SCRATCH/notes.git"
git clone -q --bare "$BASE/up.git" "$TREE"
head -c 60000000 /dev/zero | tr '\0' 'a' | fold -w 60 >"$SCRATCH/note"
git -C "$TREE" notes --ref=pullgate add -f -F "$SCRATCH/note" "$TIP"
test "$(stat -c %s "$SCRATCH/note")" -gt 60000000
run_bounded "$PULLGATE" attest verify --tree "$TREE" --keyring /dev/null \
	--signer 0123456789abcdef0123456789abcdef01234567 "$TIP"
is "$rc $out" "1 invalid: $TIP: the note is larger than any attestation" \
	"a 60 MB note is refused as no attestation"
