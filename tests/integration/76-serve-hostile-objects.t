#!/bin/sh
# 76-serve-hostile-objects.t - a push whose repository holds a loose object cut short, or a pack index claiming 2^32-1 objects: the job ends in error with the reason, and the next job runs.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 10
serve_setup
T1=hardening-v6.16-rc1-fix1
export GIT_COMMITTER_NAME="Kees Cook" GIT_COMMITTER_EMAIL=kees@kernel.org
export GIT_AUTHOR_NAME="Kees Cook" GIT_AUTHOR_EMAIL=kees@kernel.org

# two more senders' repositories, copies (not hard links) of Kees's
LOOSE="$SCRATCH/loose.git"
FANOUT="$SCRATCH/fanout.git"
cp -R "$KREPO" "$LOOSE"
cp -R "$KREPO" "$FANOUT"
sed -i "s|^  map:\$|  map:\n    sender/loose: $LOOSE\n    sender/fanout: $FANOUT|" "$CONFIG"
grep -q "sender/fanout: $FANOUT" "$CONFIG"
sed -i "s|^repositories:\$|repositories:\n  - '$LOOSE'\n  - '$FANOUT'|" "$SCRATCH/policy.yaml"
grep -q "^  - '$FANOUT'" "$SCRATCH/policy.yaml"

# loose: one commit on take one, loose, and its second half gone (libgit2 1.5.1 loops on it)
base=$(git --git-dir="$LOOSE" rev-parse "refs/tags/$T1^{commit}")
CUT=$(git --git-dir="$LOOSE" commit-tree -p "$base" -m "lib: one more" "$base^{tree}")
git --git-dir="$LOOSE" tag -a -m "cut short" cut-1 "$CUT"
obj="$LOOSE/objects/$(printf %.2s "$CUT")/${CUT#??}"
chmod u+w "$obj"
truncate -s $(($(stat -c %s "$obj") / 2)) "$obj"
# fanout: every pack index claims 2^32-1 objects (libgit2 1.5.1 reads past the file)
for idx in "$FANOUT"/objects/pack/*.idx; do
	chmod u+w "$idx"
	printf '\377\377\377\377' | dd of="$idx" bs=1 seek=$((8 + 255 * 4)) conv=notrunc 2>/dev/null
done

serve_start

# record FILE REPO TAG: a push record of REPO's tag
record() {
	cat >"$1" <<EOR
{ "repo": "$2", "user": "kees",
  "changes": [ { "ref": "refs/tags/$3", "old": "0000000000000000000000000000000000000000",
                 "new": "$(git --git-dir="$4" rev-parse "refs/tags/$3")" } ] }
EOR
}

record "$SCRATCH/loose.json" sender/loose cut-1 "$LOOSE"
hook push "$SCRATCH/loose.json" loose-push
is "$code" 202 "a push whose repository holds a loose object cut short is accepted"
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" error rejected verified waiting)" error \
	"its job ends in state error: pullgate could not decide, and did not hang"
get "$URL/api/pulls/$ID"
like "$(printf '%s' "$out" | jq -r .message)" \
	"object $CUT in '[^']*/loose.git/objects' is damaged: its zlib stream is cut short" \
	"the job's message names the damaged object"

record "$SCRATCH/fanout.json" sender/fanout "$T1" "$FANOUT"
hook push "$SCRATCH/fanout.json" fanout-push
is "$code" 202 "a push whose pack index claims 2^32-1 objects is accepted"
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" error rejected verified waiting)" error \
	"its job ends in state error: the service did not crash"
get "$URL/api/pulls/$ID"
like "$(printf '%s' "$out" | jq -r .message)" \
	"pack index '[^']*/fanout.git/objects/pack/pack-[0-9a-f]*\\.idx' is damaged: it claims 4294967295 objects" \
	"the job's message names the damaged index"

# the next push, of a sound repository, is verified to its end by the same service
push_record "$SCRATCH/take1.json" "$T1"
hook push "$SCRATCH/take1.json" take1-push
is "$code" 202 "the next push is accepted"
ID=$(printf '%s' "$out" | jq -r '.jobs[0]')
is "$(wait_state "$ID" rejected error approved waiting)" rejected "and verified to its verdict"
get "$URL/api/pulls/$ID"
is "$(printf '%s' "$out" | jq -r '"\(.verdict) \(.commits)"')" "reject 39" "its report is whole"
serve_stop
is "$SERVE_RC" 0 "the service stops cleanly"
