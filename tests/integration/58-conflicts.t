#!/bin/sh
# 58-conflicts.t - pullgate conflicts: a pull merged in memory with the base and each pull ahead of it, its textual conflicts named, nothing left in the tree.
#
# The pulls are tests/lib/stack.sh's: one signed tag of one commit each on
# $BASE, which has fake/shared.c ('value = 1').
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/gate.sh"
. "$(dirname "$0")/../lib/stack.sh"
plan 85
gate_setup

KREPO="$SCRATCH/kees.git"
git clone -q --mirror "$FX/kees.git" "$KREPO"
stack_upstream
ESC=$(printf '\033')
NL='
'
# a file name with an escape sequence and a newline in it: git takes it
EVIL="fake/evil${ESC}[31mred${NL}line.c"
stack_pull c-a fake/a.c='def a'
stack_pull c-b fake/b.c='def b'
stack_pull c-edit-a fake/shared.c='value = 2'
stack_pull c-edit-b fake/shared.c='value = 3'     # conflicts with c-edit-a, one hunk
stack_pull c-evil-1 "$EVIL=one"
stack_pull c-evil-2 "$EVIL=two"                   # added by both: one hunk
tagobj() { git --git-dir="$KREPO" rev-parse "refs/tags/$1"; }
commit() { git --git-dir="$KREPO" rev-parse "refs/tags/$1^{commit}"; }

# ONTO: a commit on $BASE in the tree that edits fake/shared.c's line its own way
export GIT_INDEX_FILE="$SCRATCH/onto.index"
git --git-dir="$TREE" read-tree "$BASE"
blob=$(printf 'value = 9\n' | git --git-dir="$TREE" hash-object -w --stdin)
git --git-dir="$TREE" update-index --cacheinfo "100644,$blob,fake/shared.c"
ONTO=$(GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.org GIT_COMMITTER_NAME=A \
	GIT_COMMITTER_EMAIL=a@example.org git --git-dir="$TREE" commit-tree -p "$BASE" \
	-m "shared: nine" "$(git --git-dir="$TREE" write-tree)")
unset GIT_INDEX_FILE

C() { run "$PULLGATE" conflicts --tree "$TREE" "$@"; }
# j FILTER: jq on the JSON in $out
j() { printf '%s' "$out" | jq -r "$@"; }
statuses() { j '[.ahead[] | "\(.position):\(.tag):\(.status)"] | join(" ")'; }
conflict_refs() { git --git-dir="$TREE" for-each-ref --format='%(refname)' refs/pullgate/conflicts; }
ahead() { printf '%s\n' "$@" >"$SCRATCH/ahead"; }

# --- clean, with two pulls ahead ------------------------------------------------------------
ahead "# pulls ahead, in queue order" "$KREPO c-a" "" "$KREPO  c-b  $(tagobj c-b)"
C --json --ahead "$SCRATCH/ahead" "$KREPO" c-edit-a
is "$rc" 0 "a pull that merges cleanly with the pulls ahead exits 0"
is "$(statuses)" "1:c-a:clean 2:c-b:clean" "each pull ahead is clean, in queue order"
is "$(j .base)" "$BASE" "the base is the branch's head"
is "$(j '.pull.tag + " " + .pull.commit')" "c-edit-a $(commit c-edit-a)" "the pull's tag and commit"
is "$(j '.ahead[1].commit')" "$(commit c-b)" "each pull ahead's commit"
is "$(j '(.alone | length), .alone_more, (.ahead[0].conflicts | length), .ahead[0].more' | paste -sd' ' -)" \
	"0 0 0 0" "no conflict anywhere"
C --ahead "$SCRATCH/ahead" "$KREPO" c-edit-a
is "$rc $out" "0 conflicts: c-edit-a merges cleanly with the 2 pulls ahead" "the text says so in a line"
C "$KREPO" c-edit-a
is "$rc $out" "0 conflicts: c-edit-a merges cleanly with master" "no --ahead: the base alone"
C --json "$KREPO" c-edit-a
is "$(j '.ahead | length')" 0 "and no pull ahead in the JSON"
printf '# nobody ahead\n\n' >"$SCRATCH/empty"
C --ahead "$SCRATCH/empty" "$KREPO" c-edit-a
is "$rc" 0 "an --ahead file naming no pull is a queue with nobody ahead"

# --- a conflict with the second pull ahead ----------------------------------------------------
ahead "$KREPO c-a $(tagobj c-a)" "$KREPO c-edit-a $(tagobj c-edit-a)" "$KREPO c-b"
C --json --expect-tag "$(tagobj c-edit-b)" --ahead "$SCRATCH/ahead" "$KREPO" c-edit-b
is "$rc" 1 "a conflict with a pull ahead exits 1"
is "$(statuses)" "1:c-a:clean 2:c-edit-a:conflicts 3:c-b:clean" "pairwise: the pull behind the conflict is still looked at"
is "$(j '.ahead[1].conflicts[] | "\(.path) \(.hunks)"')" "fake/shared.c 1" "naming the path and its one hunk"
is "$(j '.ahead[1].conflicts[0].hunks | type') $(j '.ahead[1].more | type')" "number number" \
	"numbers are numbers"
is "$(j '.alone | length')" 0 "it merges alone"
is "$(j '.ahead[0].conflicts | length') $(j '.ahead[2].conflicts | length')" "0 0" \
	"the clean ones list none"
C --ahead "$SCRATCH/ahead" "$KREPO" c-edit-b
is "$rc" 1 "the text's status is the same"
is "$out" "conflicts: c-edit-b conflicts with pull 2 (c-edit-a) in fake/shared.c (1 hunk)" \
	"one line naming the pull ahead and the path"
# the other way round: the same pair
ahead "$KREPO c-edit-b"
C --json --ahead "$SCRATCH/ahead" "$KREPO" c-edit-a
is "$rc $(statuses)" "1 1:c-edit-b:conflicts" "the same conflict seen from the other pull"

# --- a conflict with the base alone -----------------------------------------------------------
ahead "$KREPO c-a" "$KREPO c-edit-a"
C --json --onto "$ONTO" --ahead "$SCRATCH/ahead" "$KREPO" c-edit-b
is "$rc" 1 "a conflict with the base alone exits 1"
is "$(j .base)" "$ONTO" "the base is --onto's commit"
is "$(j '.alone[] | "\(.path) \(.hunks)"') $(j .alone_more)" "fake/shared.c 1 0" "the conflict is alone"
is "$(statuses)" "1:c-a:skipped 2:c-edit-a:skipped" "every pull ahead skipped"
is "$(j '[.ahead[].conflicts | length] | add')" 0 "listing nothing"
C --onto "$ONTO" --ahead "$SCRATCH/ahead" "$KREPO" c-edit-b
is "$out" "conflicts: c-edit-b conflicts by itself with master at $(printf %.12s "$ONTO") in fake/shared.c (1 hunk)" \
	"the text names the base"
# a pull ahead that conflicts by itself with the base is skipped; the pull is clean
ahead "$KREPO c-edit-a" "$KREPO c-b"
C --json --onto "$ONTO" --ahead "$SCRATCH/ahead" "$KREPO" c-a
is "$rc $(statuses)" "0 1:c-edit-a:skipped 2:c-b:clean" \
	"a pull ahead conflicting with the base by itself is skipped, not the pull's conflict"
C --onto "$ONTO" --ahead "$SCRATCH/ahead" "$KREPO" c-a
like "$out" "^conflicts: pull 1 \\(c-edit-a\\) conflicts by itself with master at [0-9a-f]{12}: c-a was not merged with it\$" \
	"the text says which was not looked at"
like "$out" "^conflicts: c-a merges cleanly with the 1 pull ahead\$" "and that the rest is clean"
# a pull ahead already in the base
git --git-dir="$TREE" fetch -q "$KREPO" "refs/tags/c-b:refs/tags/c-b"
ahead "$KREPO c-b"
C --json --onto "$(commit c-b)" --ahead "$SCRATCH/ahead" "$KREPO" c-a
is "$rc $(statuses)" "0 1:c-b:in-base" "a pull ahead already in the base is in-base"
git --git-dir="$TREE" tag -d c-b >/dev/null

# --- a hostile path ---------------------------------------------------------------------------
ahead "$KREPO c-evil-1"
C --json --ahead "$SCRATCH/ahead" "$KREPO" c-evil-2
is "$rc $(statuses)" "1 1:c-evil-1:conflicts" "a conflict on a file named with control characters"
ok "$([ "$(j '.ahead[0].conflicts[0].path')" = "$EVIL" ]; echo $?)" "the JSON holds the path exactly"
like "$out" '"path": "fake/evil\\u001[bB]\[31mred\\nline.c"' "escaped"
is "$(j '.ahead[0].conflicts[0].hunks')" 1 "with its hunk"
C --ahead "$SCRATCH/ahead" "$KREPO" c-evil-2
is "$(printf '%s\n' "$out" | wc -l | tr -d ' ')" 1 "the text is one line"
ok "$(case $out in *"$ESC"*) echo 1 ;; *) echo 0 ;; esac)" "with no escape byte"
like "$out" "^conflicts: c-evil-2 conflicts with pull 1 \\(c-evil-1\\) in fake/evilred line.c \\(1 hunk\\)\$" \
	"the path made safe: the escape sequence removed, the newline a space"

# --- a resolution recorded by hand -----------------------------------------------------------
# c-edit-b merged by hand onto c-edit-a's commit, fake/shared.c settled as 'value = 5'
git --git-dir="$TREE" fetch -q "$KREPO" "refs/tags/c-edit-a:refs/test/a" "refs/tags/c-edit-b:refs/test/b"
stack_resolve shared "$(commit c-edit-a)" "$(commit c-edit-b)" fake/shared.c='value = 5'
git --git-dir="$TREE" update-ref -d refs/test/a
git --git-dir="$TREE" update-ref -d refs/test/b
ahead "$KREPO c-edit-a" "$KREPO c-b"
C --json --ahead "$SCRATCH/ahead" "$KREPO" c-edit-b
is "$rc $(statuses)" "0 1:c-edit-a:resolved 2:c-b:clean" "a conflict a resolution settles is resolved, not a conflict"
is "$(j '.ahead[0].resolution | "\(.ref) \(.commit)"')" "refs/pullgate/resolutions/shared $RES" \
	"naming the resolution"
is "$(j '.ahead[0].conflicts[0].path')" "fake/shared.c" "and still listing what it settles"
C --ahead "$SCRATCH/ahead" "$KREPO" c-edit-b
is "$out" "conflicts: c-edit-b conflicts with pull 1 (c-edit-a) in fake/shared.c (1 hunk): resolved by refs/pullgate/resolutions/shared ($(printf %.12s "$RES"))
conflicts: c-edit-b merges through the resolutions above with the 2 pulls ahead" "the text says it in a line"
C --json --onto "$ONTO" --ahead "$SCRATCH/ahead" "$KREPO" c-edit-b
is "$rc $(j '.alone_resolution')" "1 null" "where the file is not what it was made on, it does not apply"
is "$(git --git-dir="$TREE" for-each-ref --format='%(refname)' refs/pullgate)" "refs/pullgate/resolutions/shared" \
	"the check left the resolution where it was, and nothing of its own"
# settled with the base by itself: a pull ahead that leaves the file alone is clean, not blamed
stack_resolve onto "$ONTO" "$(commit c-edit-b)" fake/shared.c='value = 7'
ONTO_RES=$RES
# and a ref whose commit is gone, tried first, stops nothing
printf '%s\n' 1234567890123456789012345678901234567890 >"$TREE/refs/pullgate/resolutions/a-gone"
ahead "$KREPO c-a" "$KREPO c-edit-a"
C --json --onto "$ONTO" --ahead "$SCRATCH/ahead" "$KREPO" c-edit-b
is "$rc $(j '.alone_resolution | "\(.ref) \(.commit)"')" "0 refs/pullgate/resolutions/onto $ONTO_RES" \
	"a conflict with the base a resolution settles is said with it"
is "$(statuses)" "1:c-a:clean 2:c-edit-a:skipped" \
	"a pull ahead that leaves the file alone is clean; one that conflicts with the base by itself, skipped"
C --onto "$ONTO" --ahead "$SCRATCH/ahead" "$KREPO" c-edit-b
is "$(printf '%s\n' "$out" | sed -n 1p)" \
	"conflicts: c-edit-b conflicts by itself with master at $(printf %.12s "$ONTO") in fake/shared.c (1 hunk): resolved by refs/pullgate/resolutions/onto ($(printf %.12s "$ONTO_RES"))" \
	"the text says it"
rm "$TREE/refs/pullgate/resolutions/a-gone"
git --git-dir="$TREE" update-ref -d refs/pullgate/resolutions/shared
git --git-dir="$TREE" update-ref -d refs/pullgate/resolutions/onto

# --- could not decide -------------------------------------------------------------------------
C --expect-tag "$(tagobj c-a)" "$KREPO" c-b
is "$rc" 3 "a tag that is not the one expected: could not decide"
is "$err" "error: tag 'c-b' moved since it was verified: $(tagobj c-a), now $(tagobj c-b)" \
	"in one line naming both"
# a pull ahead that cannot be read is said, and the others are checked: one stale pull
# does not stop the check of every pull behind it
ahead "$KREPO c-a $(tagobj c-b)" "$KREPO c-edit-a"
C --ahead "$SCRATCH/ahead" "$KREPO" c-edit-b
is "$rc" 1 "a pull ahead whose tag moved does not stop the check of the others"
is "$out" "conflicts: pull 1 (c-a) could not be checked: tag 'c-a' moved since it was verified: $(tagobj c-b), now $(tagobj c-a)
conflicts: c-edit-b conflicts with pull 2 (c-edit-a) in fake/shared.c (1 hunk)" \
	"it names the pull ahead it could not check, and why"
ahead "$KREPO c-a" "$SCRATCH/nowhere.git c-b"
C --json --ahead "$SCRATCH/ahead" "$KREPO" c-edit-a
is "$rc $(statuses) $(j '.ahead[1].commit')" "0 1:c-a:clean 2:c-b:unknown null" \
	"a pull ahead whose repository is missing is unknown, with no commit"
like "$(j '.ahead[1].why')" "." "and why"
# a pull ahead whose tag object the tree holds already is not fetched again
ahead "$SCRATCH/nowhere.git c-b $(tagobj c-b)"
C --json --ahead "$SCRATCH/ahead" "$KREPO" c-a
is "$rc $(statuses) $(j '.ahead[0].commit')" "0 1:c-b:clean $(commit c-b)" \
	"its tag object, by name, is read from the tree"
C "$KREPO" no-such-tag
is "$rc" 3 "a missing tag: could not decide"
C --onto "$(git --git-dir="$TREE" rev-parse "$BASE^{tree}")" "$KREPO" c-a
is "$rc" 3 "--onto a tree"
like "$err" "^error: --onto [0-9a-f]{40} is a tree, not a commit\$" "is refused"
C --onto 0123456789012345678901234567890123456789 "$KREPO" c-a
is "$rc $err" "3 error: --onto 0123456789012345678901234567890123456789 is not in the tree '$TREE'" \
	"--onto a commit the tree does not have"
run "$PULLGATE" conflicts "$KREPO" c-a
is "$rc" 3 "no --tree and no tree in \$PULLGATE_HOME"
like "$err" "^error: tree '$PULLGATE_HOME/linux' is not a git repository\$" "the default tree is home/linux"

# --- the --ahead file -------------------------------------------------------------------------
ahead "# ahead" "$KREPO c-a" "$KREPO c-b $(tagobj c-b) extra"
C --ahead "$SCRATCH/ahead" "$KREPO" c-edit-a
is "$rc" 3 "a bad line in the --ahead file: could not decide"
is "$(printf '%s\n' "$err" | wc -l | tr -d ' ')" 1 "one line"
like "$err" "^error: $SCRATCH/ahead:3: an --ahead line is REPO TAG \\[TAG-OBJECT\\], not '$KREPO c-b " \
	"naming FILE:LINE and the line"
ahead "$KREPO c-a" "$KREPO c-b 12345"
C --ahead "$SCRATCH/ahead" "$KREPO" c-edit-a
is "$rc $err" "3 error: $SCRATCH/ahead:2: a tag object is 40 hex digits, not '12345'" \
	"a third field that is no tag object"
ahead "$KREPO"
C --ahead "$SCRATCH/ahead" "$KREPO" c-edit-a
like "$rc $err" "^3 error: $SCRATCH/ahead:1: an --ahead line is REPO TAG" "a line without a tag"
printf '%s c-a\n\0\n' "$KREPO" >"$SCRATCH/nul"
C --ahead "$SCRATCH/nul" "$KREPO" c-edit-a
is "$rc $err" "3 error: $SCRATCH/nul: an --ahead file is text: this one holds a NUL byte" "a NUL byte"
C --ahead "$SCRATCH/missing" "$KREPO" c-edit-a
is "$rc" 3 "a missing --ahead file"

# --- usage ------------------------------------------------------------------------------------
C "$KREPO"
is "$rc" 2 "one operand is a usage error"
C --onto nothex "$KREPO" c-a
is "$rc" 2 "--onto wants 40 hex digits"
C --expect-tag 12 "$KREPO" c-a
is "$rc" 2 "--expect-tag too"
printf 'limits:\n  max-commits: 10\n' >"$SCRATCH/policy.yaml"
C --policy "$SCRATCH/policy.yaml" --policy-sha256 "$(printf '0%.0s' $(seq 64))" "$KREPO" c-a
is "$rc" 3 "a policy whose digest is not --policy-sha256's"
like "$err" "^error: the policy '$SCRATCH/policy.yaml' has SHA-256 [0-9a-f]{64}, not 0{64}: it changed" \
	"is refused as the gate refuses it"
C --policy "$SCRATCH/policy.yaml" --policy-sha256 "$(sha256sum "$SCRATCH/policy.yaml" | cut -c1-64)" \
	"$KREPO" c-a
is "$rc" 0 "the right one is taken"
run "$PULLGATE" conflicts --help
like "$out" "pullgate-conflicts" "--help prints the page"

# --- what it leaves ---------------------------------------------------------------------------
is "$(conflict_refs)" "" "no ref is left under refs/pullgate/conflicts"
is "$(find "$TREE/refs/pullgate/conflicts" -mindepth 1 2>/dev/null | wc -l | tr -d ' ')" 0 \
	"nor a directory of one"
is "$(master)" "$BASE" "the branch did not move"
is "$(git --git-dir="$TREE" worktree list | wc -l | tr -d ' ')" 1 "no worktree was made"
# the refs of a check that was killed are dropped by the next one (a pid above any
# pid_max: no process can have it)
dead=4194304
git --git-dir="$TREE" update-ref "refs/pullgate/conflicts/$dead/0" "$BASE"
C "$KREPO" c-a
is "$rc $(conflict_refs)" "0 " "a dead check's refs are dropped by the next"

# --- a check stopped by a signal, or killed ---------------------------------------------------
# start_check PULL-AHEAD: a check of c-a (its objects are in the tree already) with a pull
# ahead whose objects are not, stopped at the first object it copies (pid $BG)
start_check() {
	stack_pull "$1" "fake/$1.c=def x"
	ahead "$KREPO $1"
	PULLGATE_TEST_STOP="fetch:object written" "$PULLGATE" conflicts --tree "$TREE" \
		--ahead "$SCRATCH/ahead" "$KREPO" c-a >"$SCRATCH/bg.out" 2>"$SCRATCH/bg.err" &
	BG=$!
	ok "$(wait_stopped "$BG"; echo $?)" "a check stops itself copying the pull ahead's objects"
	is "$(conflict_refs)" "refs/pullgate/conflicts/$BG/0" "the pull's tag is on its ref meanwhile"
}
start_check c-late-1
kill -TERM "$BG"
kill -CONT "$BG"
set +e
wait "$BG"
rc=$?
set -e
is "$rc $(cat "$SCRATCH/bg.err")" "3 error: conflicts: stopped by a signal" \
	"SIGTERM stops it: could not decide"
is "$(conflict_refs)" "" "its refs are dropped"
start_check c-late-2
kill -KILL "$BG"
wait "$BG" 2>/dev/null || true
is "$(conflict_refs)" "refs/pullgate/conflicts/$BG/0" "SIGKILL leaves them"
C "$KREPO" c-a
is "$rc $(conflict_refs)" "0 " "for the next check to drop"
