#!/bin/sh
# 18-copy-dates.t - a copy is a copy whatever its author date; a labelled backport is a note.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 31

. "$(dirname "$0")/../lib/history.sh"
COMMIT_BODY="Why it is needed."

# --- upstream: Ann's three net fixes on top of the base the sender starts from ---
U=$SCRATCH/linus
git init -q -b master "$U"
as "Linus Torvalds" torvalds@example.org "2025-05-01 10:00:00 -0700"
commit "$U" a.c "init: the first commit"
as "Ann Net" ann@example.org "2025-05-02 10:00:00 -0700"
commit "$U" n1.c "net: fix the first thing"
commit "$U" n2.c "net: fix the second thing"
commit "$U" n3.c "net: fix the third thing"
as "Linus Torvalds" torvalds@example.org "2025-05-03 10:00:00 -0700"
commit "$U" a.c "core: later upstream work"
N1=$(git -C "$U" rev-parse HEAD~3)
N2=$(git -C "$U" rev-parse HEAD~2)
N3=$(git -C "$U" rev-parse HEAD~1)
git clone -q --bare "$U" "$SCRATCH/linus.git"
W=$SCRATCH/work
git clone -q "$SCRATCH/linus.git" "$W"
G() { git -C "$W" "$@"; }
G config pullgate.upstream origin/master

policy=$SCRATCH/policy.yaml
cat >"$policy" <<'EOF'
# unsigned tags and sign-offs are other tests' concern: only the copies decide
checks:
  tag-signature: off
  signoff: off
EOF

# own BRANCH: a branch on the base with one commit of the sender's own
own() {
	as "Sam Sender" sam@example.org "2025-05-20 10:00:00 -0700"
	G checkout -q -b "$1" origin/master~4
	commit "$W" s.c "hardening: own work on $1"
}
tag() { G tag -a -m "$1" "$1"; }
verify_json() {
	run "$PULLGATE" verify --json --policy "$policy" --upstream "$SCRATCH/linus.git:master" "$W" "$1"
}
copies() { # the rewritten-upstream findings: "commit upstream" lines
	printf '%s' "$out" | jq -r '.findings[] | select(.check == "rewritten-upstream")
		| "\(.commit) \(.upstream)"' | sort
}
fields() { # COMMIT: the detail fields of its rewritten-upstream finding
	printf '%s' "$out" | jq -r --arg c "$1" '.findings[] | select(.check == "rewritten-upstream")
		| select(.commit == $c) | [.details[].field] | join(",")'
}
message() { # COMMIT
	printf '%s' "$out" | jq -r --arg c "$1" '.findings[] | select(.check == "rewritten-upstream")
		| select(.commit == $c) | .message'
}
detail() { # COMMIT FIELD SIDE
	printf '%s' "$out" | jq -r --arg c "$1" --arg f "$2" --arg s "$3" '.findings[]
		| select(.check == "rewritten-upstream") | select(.commit == $c)
		| .details[] | select(.field == $f) | .[$s]'
}
notes() { # CHECK: "commit upstream" of its notes
	printf '%s' "$out" | jq -r --arg c "$1" '.notes[] | select(.check == $c)
		| "\(.commit) \(.upstream)"' | sort
}

# --- a cherry-pick with its author date changed -----------------------------------
own redate
G cherry-pick "$N1" >/dev/null
G commit -q --amend --no-edit --date="2025-05-21 09:00:00 -0700"
c=$(G rev-parse HEAD)
tag redate
verify_json redate
is "$rc" 1 "a cherry-pick whose author date was changed is rejected"
is "$(copies)" "$c $N1" "it is named as the copy of its upstream original"
like "$(message "$c")" "^rewritten copy of upstream commit ${N1%????????????????????????????}: .*author date changed" \
	"with 'author date changed' among what changed"
is "$(fields "$c")" "parents,tree,patch,author-date,committer,committer-date" \
	"the author date is a detail beside what a cherry-pick changes"
is "$(detail "$c" author-date pull) / $(detail "$c" author-date upstream)" \
	"2025-05-21 09:00:00 -0700 / 2025-05-02 10:00:00 -0700" "both author dates are shown"
is "$(detail "$c" patch pull)" "same" "found by its patch"

# --- upstream commits rebased with --ignore-date -----------------------------------
own ignore-date
base=$(G rev-parse HEAD)
G checkout -q -b ignore-date-up "$N2"
as "Sam Sender" sam@example.org "2025-05-22 10:00:00 -0700"
G rebase -q --ignore-date --onto "$base" origin/master~4
G branch -q -f ignore-date HEAD
G checkout -q ignore-date
c1=$(G rev-parse HEAD~1)
c2=$(G rev-parse HEAD)
tag ignore-date
verify_json ignore-date
is "$rc" 1 "upstream commits rebased with --ignore-date are rejected"
is "$(copies)" "$(printf '%s %s\n%s %s\n' "$c1" "$N1" "$c2" "$N2" | sort)" \
	"each is named as the copy of its original"
like "$(message "$c2")" "author date changed" "with its author date changed"
is "$(detail "$c2" author-date upstream)" "2025-05-02 10:00:00 -0700" "the original's date is shown"
like "$(printf '%s' "$out" | jq -r .summary.text)" "^the pull re-creates 2 upstream commits under new ids" \
	"the story counts them"

# --- pullgate guard refuses the re-dated copy too ----------------------------------
guard() { guard_push "$W" origin "$SCRATCH/linus.git" "$1"; } # REF
guard refs/heads/redate
is "$rc" 1 "guard refuses to push the re-dated cherry-pick"
like "$err" "re-creates 1 upstream commit under new ids" "it counts the copy"
like "$err" "author date changed" "and says the author date changed"

# --- a new commit with an upstream commit's author and subject is not a copy -------
own same-subject
as "Ann Net" ann@example.org "2025-05-23 10:00:00 -0700"
commit "$W" other.c "net: fix the first thing"
tag same-subject
verify_json same-subject
is "$rc" 0 "a new commit with an upstream commit's author and subject is accepted"
is "$(copies)" "" "it is named as no copy"
is "$(notes rewritten-upstream)" "" "and earns no note"
guard refs/heads/same-subject
is "$rc" 0 "guard lets it through"

# --- a labelled backport: cherry-pick -x -------------------------------------------
own backport
G cherry-pick -x "$N1" >/dev/null
c=$(G rev-parse HEAD)
tag backport
verify_json backport
is "$rc" 0 "a cherry-pick -x naming its original is accepted"
is "$(copies)" "" "it is no rewritten-upstream finding"
is "$(notes labelled-backport)" "$c $N1" "but a labelled-backport note naming its original"
like "$(printf '%s' "$out" | jq -r '.notes[] | select(.check == "labelled-backport") | .message')" \
	"^labelled backport of upstream commit ${N1%????????????????????????????}" "the note says what it is"
guard refs/heads/backport
is "$rc" 0 "guard lets a labelled backport through"

# the policy may make it a warning
printf '  labelled-backport: warning\n' >>"$policy"
verify_json backport
is "$(printf '%s' "$out" | jq -r '[.findings[] | select(.check == "labelled-backport")
	| "\(.severity) \(.commit) \(.upstream)"] | join(",")')" "warning $c $N1" \
	"a warning where the policy says so"
is "$rc" 0 "which does not reject"
sed -i '$d' "$policy"

# the stable trees' form, the label opening the body
own stable
G cherry-pick "$N2" >/dev/null
printf 'net: fix the second thing\n\ncommit %s upstream.\n\nWhy it is needed.\n\nSigned-off-by: Ann Net <ann@example.org>\nSigned-off-by: Sam Sender <sam@example.org>\n' \
	"$N2" >"$SCRATCH/msg"
G commit -q --amend -F "$SCRATCH/msg"
c=$(G rev-parse HEAD)
tag stable
verify_json stable
is "$rc" 0 "a stable tree's 'commit X upstream.' copy is accepted"
is "$(notes labelled-backport)" "$c $N2" "as a labelled backport of its original"

# --- the same pick with its diff changed is still an error -------------------------
own backport-changed
G cherry-pick -x "$N3" >/dev/null
echo "a change the label does not mention" >>"$W/n3.c"
G add n3.c
G commit -q --amend --no-edit
c=$(G rev-parse HEAD)
tag backport-changed
verify_json backport-changed
is "$rc" 1 "a labelled backport whose patch differs from its original is rejected"
like "$(printf '%s' "$out" | jq -r --arg c "$c" '.findings[] | select(.check == "rewritten-upstream")
	| select(.commit == $c) | "\(.upstream) \(.message)"')" "^$N3 .*patch differs" \
	"named against the commit its label names"

# --- a labelled backport re-dated: the label does not explain the date -------------
own backport-redated
G cherry-pick -x "$N2" >/dev/null
G commit -q --amend --no-edit --date="2025-05-24 09:00:00 -0700"
c=$(G rev-parse HEAD)
tag backport-redated
verify_json backport-redated
is "$rc" 1 "a labelled backport whose author date changed is still a finding"
like "$(message "$c")" "author date changed" "for the change the label does not explain"
