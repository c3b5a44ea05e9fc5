#!/bin/sh
# 87-hostile-files.t - a FIFO or a link to /dev/zero where pullgate opens a file: every run ends, refusing with one line or going on without a cache.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 28

export GIT_COMMITTER_NAME="Linus" GIT_COMMITTER_EMAIL="linus@example.org"
export GIT_AUTHOR_NAME="Ann" GIT_AUTHOR_EMAIL="ann@example.org"
BASE="$SCRATCH/base"
C="$SCRATCH/case"

# an upstream in one pack with a commit-graph, one commit pushed on top (loose);
# a pull of one commit on the packed tip
git init -q -b master "$BASE/w"
g() { git -C "$BASE/w" "$@"; }
for i in 1 2 3 4 5; do
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
git -C "$BASE/up.git" commit-graph write --reachable 2>/dev/null

fresh() { rm -rf "$C" && cp -a "$BASE" "$C" && export PULLGATE_HOME="$C/home"; }
# plant KIND PATH: a FIFO nobody writes, or a symlink to /dev/zero, where a file was
plant() {
	rm -f "$2"
	if [ "$1" = fifo ]; then mkfifo "$2"; else ln -s /dev/zero "$2"; fi
}
# run_bounded CMD...: rc, out, err; a hang ends as 124 (timeout), which no assertion accepts
run_bounded() {
	set +e
	timeout 60 "$@" >"$SCRATCH/out" 2>"$SCRATCH/err"
	rc=$?
	set -e
	out=$(cat "$SCRATCH/out")
	err=$(cat "$SCRATCH/err")
}
verify() { run_bounded "$PULLGATE" verify --json --upstream "$C/up.git:master" "$C/sub.git" pull-1; }
verdict() { printf '%s' "$out" | jq -r '"\(.verdict) \(.commits | length)"' 2>/dev/null || true; }
# the one-line refusal: exit 3, a single error line naming FILE and what it is
refused() { # NAME FILE WHAT
	is "$rc" 3 "$1: pullgate could not decide (exit 3), it did not wait"
	is "$(printf '%s\n' "$err" | wc -l) $(printf '%s' "$err" | grep -c "^error: .*'$2' is $3, not a regular file$" || true)" \
		"1 1" "$1: one error line names the file and what it is"
}

fresh
verify
BASE_RC=$rc
BASE_VERDICT=$(verdict)
is "$BASE_RC $BASE_VERDICT" "1 reject 1" "unharmed, the pull is judged (rejected: unsigned, no sign-off)"

for kind in fifo zero; do
	case $kind in fifo) what="a FIFO" ;; *) what="a device" ;; esac

	# --- the commit-graph, and a layer of a chain: a cache, left out as git leaves it ---
	fresh
	plant $kind "$C/up.git/objects/info/commit-graph"
	verify
	is "$rc $(verdict)" "$BASE_RC $BASE_VERDICT" \
		"$kind as upstream's commit-graph: the run ends with the same verdict, the graph left out"

	fresh
	rm -f "$C/up.git/objects/info/commit-graph"
	git -C "$C/up.git" commit-graph write --reachable --split=no-merge 2>/dev/null
	git -C "$C/w" commit -q --allow-empty -m "lib: a layer more"
	git -C "$C/w" push -q "$C/up.git" master
	git -C "$C/up.git" commit-graph write --reachable --split=no-merge 2>/dev/null
	layers=$(ls "$C/up.git/objects/info/commit-graphs/"graph-*.graph | wc -l)
	layer=$(ls "$C/up.git/objects/info/commit-graphs/"graph-*.graph | head -1)
	plant $kind "$layer"
	verify
	is "$layers $rc $(verdict)" "2 $BASE_RC $BASE_VERDICT" \
		"$kind as a layer of upstream's commit-graph chain: the run ends, the chain left out"

	# --- a pack index: libgit2 would wait on it too, so the repository is refused ---
	fresh
	idx=$(ls "$C/up.git/objects/pack/"*.idx)
	plant $kind "$idx"
	verify
	refused "$kind as upstream's pack index" "$idx" "$what"

	# --- a loose object: the upstream's tip ---
	fresh
	loose="$C/up.git/objects/$(printf %.2s "$TIP")/${TIP#??}"
	test -f "$loose"
	plant $kind "$loose"
	verify
	refused "$kind as upstream's loose tip" "$loose" "$what"

	# --- the identity index: a cache, made again ---
	fresh
	verify
	index=$(find "$PULLGATE_HOME/identity" -name '*.idx')
	plant $kind "$index"
	verify
	is "$rc $(verdict)" "$BASE_RC $BASE_VERDICT" "$kind as the identity index: the run ends with the same verdict"
	is "$(printf '%s' "$out" | jq -r .upstream_index.action)" "built (damaged)" \
		"the index is made again, and the report says it was damaged"
	ok "$(test -f "$index" && test ! -L "$index"; echo $?)" "a regular file again in its place"
done

# --- the attested report.json: attest verify hashes it --------------------------------------
export GNUPGHOME="$SCRATCH/gnupg"
mkdir -m 700 "$GNUPGHOME"
TAP_CLEANUP="stop_agent"
stop_agent() { gpgconf --kill gpg-agent 2>/dev/null; }
gpg --batch --quiet --passphrase '' --quick-gen-key "pullgate <pullgate@example.org>" ed25519 sign never \
	>/dev/null 2>&1
FPR=$(gpg --batch --with-colons --list-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')
gpg --batch --armor --export "$FPR" >"$SCRATCH/attest.asc" 2>/dev/null
TREE="$BASE/up.git"
REPORT="$SCRATCH/logs/report.json"
mkdir -p "$SCRATCH/logs"
echo '{"verdict": "accept"}' >"$REPORT"
# a merge of the topic on the tip, as an approval makes, and its statement
git -C "$TREE" fetch -q "$BASE/sub.git" topic
TOPIC=$(git -C "$BASE/sub.git" rev-parse topic)
MERGE=$(git -C "$TREE" commit-tree -p "$TIP" -p "$TOPIC" -m "Merge tag 'pull-1'" "$TIP^{tree}")
cat >"$SCRATCH/statement.json" <<EOF
{
  "type": "pullgate-attestation",
  "version": 2,
  "merge_commit": "$MERGE",
  "merge_tree": "$(git -C "$TREE" rev-parse "$TIP^{tree}")",
  "base_commit": "$TIP",
  "tag_object": "$(git -C "$BASE/sub.git" rev-parse pull-1)",
  "tag_commit": "$TOPIC",
  "policy_sha256": "$(printf '' | sha256sum | cut -d' ' -f1)",
  "report": {
    "path": "$REPORT",
    "sha256": "$(sha256sum "$REPORT" | cut -d' ' -f1)"
  }
}
EOF
gpg --batch --armor --detach-sign -o "$SCRATCH/statement.asc" "$SCRATCH/statement.json" 2>/dev/null
cat "$SCRATCH/statement.json" "$SCRATCH/statement.asc" >"$SCRATCH/note"
git -C "$TREE" notes --ref=pullgate add -f -C "$(git -C "$TREE" hash-object -w "$SCRATCH/note")" "$MERGE"
export PULLGATE_HOME="$SCRATCH/home"
attest() {
	run_bounded "$PULLGATE" attest verify --tree "$TREE" --keyring "$SCRATCH/attest.asc" \
		--signer "$FPR" "$MERGE"
}
attest
is "$rc" 0 "the attestation verifies, its report compared"
like "$out" "^valid: $MERGE is attested by key $FPR; the report '$REPORT' is the one attested$" "saying so"
cp "$REPORT" "$SCRATCH/report.keep"
for kind in fifo zero; do
	case $kind in fifo) what="a FIFO" ;; *) what="a device" ;; esac
	plant $kind "$REPORT"
	attest
	refused "$kind as the attested report.json" "$REPORT" "$what"
	is "$out" "" "and no verdict on the attestation is printed"
done
rm -f "$REPORT"
cp "$SCRATCH/report.keep" "$REPORT"
attest
is "$rc" 0 "the report back in its place: valid again"
