#!/bin/sh
# 17-guard.t - pullgate guard as a real pre-push hook: real git push to a local bare repository.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 34

. "$(dirname "$0")/../lib/history.sh"
G() { git -C "$SCRATCH/work" "$@"; }

# --- upstream: Linus's tree, with the sender's earlier work merged in it ----------
# A - B - K0 - M1(side) - C - D: K0 is the sender's own commit upstream already
# took; M1 merges a side branch; D came after the sender fetched C.
U=$SCRATCH/linus
git init -q -b master "$U"
as "Linus Torvalds" torvalds@example.org "2025-05-01 10:00:00 -0700"
commit "$U" a.c "init: the first commit"
as "Ann Side" ann@example.org "2025-05-02 10:00:00 -0700"
git -C "$U" checkout -q -b side
commit "$U" side.c "side: add the side driver"
git -C "$U" checkout -q master
as "Linus Torvalds" torvalds@example.org "2025-05-03 10:00:00 -0700"
commit "$U" a.c "core: tidy the first commit"
as "Sam Sender" sam@example.org "2025-05-04 10:00:00 -0700"
commit "$U" s.c "hardening: own commit upstream already has"
as "Linus Torvalds" torvalds@example.org "2025-05-05 10:00:00 -0700"
git -C "$U" merge -q --no-ff -m "Merge branch 'side'" side
commit "$U" a.c "core: after the merge"
git clone -q --bare "$U" "$SCRATCH/linus.git"
git clone -q "$SCRATCH/linus.git" "$SCRATCH/work"
K0=$(git -C "$U" rev-parse HEAD~2)
as "Linus Torvalds" torvalds@example.org "2025-05-10 10:00:00 -0700"
commit "$U" a.c "core: later upstream work"
git -C "$SCRATCH/linus.git" fetch -q "$U" master:master
G fetch -q origin

# the sender's public tree, and the guard in the sender's repository
git init -q --bare "$SCRATCH/pub.git"
G remote add pub "$SCRATCH/pub.git"
G config pullgate.upstream origin/master
run sh -c "cd '$SCRATCH/work' && '$PULLGATE' guard --install"
is "$rc" 0 "guard --install in a repository succeeds"
hook=$SCRATCH/work/.git/hooks/pre-push
ok "$([ -x "$hook" ] && grep -qF "'$PULLGATE' guard" "$hook"; echo $?)" \
	"it writes an executable pre-push hook that runs this binary"

as "Sam Sender" sam@example.org "2025-05-20 10:00:00 -0700"
G checkout -q -b for-linus origin/master~1
commit "$SCRATCH/work" s.c "hardening: fix the first thing"
commit "$SCRATCH/work" s.c "hardening: fix the second thing"
clean=$(G rev-parse for-linus)

guard() { # REF: the guard run as git runs it, for its exit status
	guard_push "$SCRATCH/work" pub "$SCRATCH/pub.git" "$1"
	out=$guard_out
}
pushed() { git -C "$SCRATCH/pub.git" rev-parse -q --verify "$1" 2>/dev/null || true; }

# --- a clean push goes through ----------------------------------------------------
run G push -q pub for-linus
is "$rc" 0 "a clean push goes through the hook"
is "$(pushed refs/heads/for-linus)" "$clean" "and the branch reached the remote"
guard refs/heads/for-linus
is "$rc" 0 "the guard allows it (exit 0)"
like "$err" "^pullgate guard: refs/heads/for-linus \(against origin/master\): the pull carries 2 commits \(0 merges\) and re-creates no upstream commit$" \
	"with the story verify's report leads with"

# --- b4 trailers -u <= 0.14: git-filter-repo over a range reaching into upstream ------
G checkout -q -b take1 for-linus
# the trailers collected from the list, added to the sender's own commits, from K0^ on:
# K0 changes, so every upstream commit after it is re-created on top of the copy
G filter-repo --force --quiet --refs "$K0~1..take1" --message-callback '
if b"hardening:" in message:
    return message.rstrip(b"\n") + b"\nReviewed-by: Rita Reviewer <rita@example.org>\n"
return message' >/dev/null
run G push pub take1
ok "$([ "$rc" -ne 0 ]; echo $?)" "git push of the filter-repo rewrite fails"
like "$err" "refusing to push refs/heads/take1 \(against origin/master\): the pull re-creates 3 upstream commits under new ids \(1 merge, 0 signed tags dropped\): without them it should carry 2 commits" \
	"the hook tells the story: 3 upstream commits (one merge) re-created"
like "$err" "rewritten copy of upstream commit $(git -C "$U" rev-parse HEAD~1 | cut -c1-12)" \
	"each copy is named with the upstream commit it re-creates"
is "$(pushed refs/heads/take1)" "" "nothing reached the remote"
guard refs/heads/take1
is "$rc" 1 "the guard refuses it (exit 1)"

# the same rewrite pushed as a tag
as "Sam Sender" sam@example.org "2025-05-21 10:00:00 -0700"
G tag -a -m "hardening fixes" hardening-take1 take1
run G push pub hardening-take1
ok "$([ "$rc" -ne 0 ] && [ -z "$(pushed refs/tags/hardening-take1)" ]; echo $?)" \
	"a signed-tag style push of the rewrite is refused too"
guard refs/tags/hardening-take1
is "$rc" 1 "the guard refuses the tag (exit 1)"

# --- git rebase --rebase-merges reaching below the branch's base --------------------
G checkout -q -b take2 for-linus
as "Sam Sender" sam@example.org "2025-05-22 10:00:00 -0700"
G rebase -q --rebase-merges --force-rebase "$K0~1" >/dev/null 2>&1
ok "$([ "$(G rev-parse take2~3)" != "$(git -C "$U" rev-parse HEAD~2)" ]; echo $?)" \
	"(the rebase did re-create the upstream commits)"
run G push pub take2
ok "$([ "$rc" -ne 0 ] && [ -z "$(pushed refs/heads/take2)" ]; echo $?)" \
	"git push of the rebase --rebase-merges rewrite fails, nothing pushed"
like "$err" "the pull re-creates 4 upstream commits under new ids \(1 merge, 0 signed tags dropped\)" \
	"the story counts the 4 re-created commits, the merge among them"
guard refs/heads/take2
is "$rc" 1 "the guard refuses it (exit 1)"

# --- a deleted ref, an update, a branch with no upstream ----------------------------
run G push -q pub :for-linus
ok "$([ "$rc" = 0 ] && [ -z "$(pushed refs/heads/for-linus)" ]; echo $?)" "deleting a ref is allowed"
run G push -q pub for-linus
as "Sam Sender" sam@example.org "2025-05-23 10:00:00 -0700"
G checkout -q for-linus
commit "$SCRATCH/work" s.c "hardening: fix the third thing"
run G push -q pub for-linus
ok "$([ "$rc" = 0 ] && [ "$(pushed refs/heads/for-linus)" = "$(G rev-parse for-linus)" ]; echo $?)" \
	"an update of a pushed branch goes through"
G config --unset pullgate.upstream
G checkout -q -b topic for-linus
commit "$SCRATCH/work" s.c "hardening: a topic"
run G push pub topic
ok "$([ "$rc" = 0 ] && [ -n "$(pushed refs/heads/topic)" ]; echo $?)" \
	"a new branch with no upstream to compare with is pushed"
like "$err" "pullgate guard: refs/heads/topic: no upstream to compare with \(set pullgate.upstream\): not checked" \
	"with one line saying it was not checked"
# the branch's own @{upstream} is used when pullgate.upstream is not set
G branch -q -u origin/master take1
guard refs/heads/take1
is "$rc" 1 "a branch's @{upstream} is the upstream when pullgate.upstream is unset"

# --- a tag pushed again over an older tag (git push -f): judged on the commits it adds ---
G config pullgate.upstream origin/master
G checkout -q for-linus
as "Sam Sender" sam@example.org "2025-05-24 10:00:00 -0700"
G tag -a -m "hardening fixes" hardening-v1 for-linus
run G push -q pub hardening-v1
old_tag=$(G rev-parse hardening-v1)
ok "$([ "$rc" = 0 ] && [ "$(pushed refs/tags/hardening-v1)" = "$old_tag" ]; echo $?)" \
	"an annotated tag of the clean branch is pushed"
commit "$SCRATCH/work" s.c "hardening: fix the fourth thing"
G tag -f -a -m "hardening fixes, again" hardening-v1 for-linus >/dev/null
new_tag=$(G rev-parse hardening-v1)
run G push -f pub hardening-v1
is "$rc" 0 "a clean annotated tag force-pushed over the older one goes through"
is "$(pushed refs/tags/hardening-v1)" "$new_tag" "and the new tag reached the remote"
like "$err" "^pullgate guard: refs/tags/hardening-v1 \(against origin/master\): the pull carries 1 commit \(0 merges\) and re-creates no upstream commit$" \
	"judged on the one commit it adds to the old tag's, both tags peeled"
G tag -f -a -m "hardening fixes, rewritten" hardening-v1 take1 >/dev/null
run G push -f pub hardening-v1
ok "$([ "$rc" -ne 0 ] && [ "$(pushed refs/tags/hardening-v1)" = "$new_tag" ]; echo $?)" \
	"a tag force-pushed over it that adds the filter-repo rewrite is refused, the remote's tag kept"
like "$err" "refusing to push refs/tags/hardening-v1 \(against origin/master\): the pull re-creates 3 upstream commits under new ids" \
	"telling the rewrite's story"

# --- could not decide, bad input ----------------------------------------------------
G config pullgate.upstream linus/no-such-branch
guard refs/heads/for-linus
is "$rc" 3 "an upstream that names nothing: exit 3"
is "$(printf '%s\n' "$err" | wc -l) $(printf '%s' "$err" | grep -c '^error: guard: refs/heads/for-linus: .*linus/no-such-branch')" "1 1" \
	"with one line naming it"
G config pullgate.upstream origin/master
run sh -c "cd '$SCRATCH/work' && printf 'refs/heads/x not-an-id refs/heads/x 00\n' | '$PULLGATE' guard pub url"
is "$rc" 3 "a line that is not a pre-push line: exit 3"

# --- --install leaves another hook alone -------------------------------------------
printf '#!/bin/sh\nexit 0\n' >"$hook"
run sh -c "cd '$SCRATCH/work' && '$PULLGATE' guard --install"
ok "$([ "$rc" = 3 ] && grep -q 'exit 0' "$hook"; echo $?)" "--install refuses to replace a foreign hook"
like "$err" "is another pre-push hook; --force replaces it" "and says how to replace it"
run sh -c "cd '$SCRATCH/work' && '$PULLGATE' guard --install --force"
ok "$([ "$rc" = 0 ] && grep -qF "'$PULLGATE' guard" "$hook"; echo $?)" "--force replaces it"
