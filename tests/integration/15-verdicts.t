#!/bin/sh
# 15-verdicts.t - real history's cases: re-applied changes, rewritten quoted ids, topic bullets, folded Fixes:.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 45
"$TOP/fixtures/verdicts.sh" "$SCRATCH/vd" >/dev/null
VD="$SCRATCH/vd"
export GNUPGHOME="$VD/gnupg"
. "$VD/keys.env"

verify() { # TAG [OPTION...]
	t=$1
	shift
	run "$PULLGATE" verify --keyring "$VD/keyring.asc" --trust "$FPR_SAM" \
		--upstream "$VD/upstream.git:master" "$@" "$VD/sub.git" "$t"
}
jqo() { printf '%s' "$out" | jq -r "$@"; }
findings() { printf '%s\n' "$1" | awk -v c="$2" '
	/^(error|warning|note) / { show = ($2 == c) }
	/^verdict/ { show = 0 }
	show'; }
short() { cut -c1-12 "$VD/expect/$1"; }

# --- a change upstream reverted, brought back reworked: genuine ----------------------
verify reapply-reworked --json
is "$rc" 0 "a reworked re-application of a reverted upstream change is accepted"
is "$(jqo '[.findings[] | select(.check == "rewritten-upstream")] | length')" 0 \
	"it is not a rewritten copy: the patch differs"
is "$(jqo '.notes[] | "\(.commit) \(.upstream)"')" \
	"$(cat "$VD/expect/reapply-reworked") $(cat "$VD/expect/fast-path")" \
	"a note names it and the upstream commit it shares author, date and message with"
like "$(jqo '.notes[0].message')" '^re-applies an upstream change with a different patch' \
	"and says the patch is another"
verify reapply-reworked
like "$out" 'commit [0-9a-f]{40}, 1 commit \(0 merges\)$' "one commit is one commit"

# --- the same patch applied from its mail by two maintainers --------------------------
verify reapply-mail --json
is "$rc" 0 "the same posted patch applied twice is no rewrite"
is "$(jqo '[.notes[] | .upstream] | join(",")')" "$(cat "$VD/expect/fast-path")" \
	"a note names upstream's application of it"
like "$(jqo '.notes[0].message')" 'again, from its mail \(it adds a link to the mail' \
	"and the marks of a fresh application"

# --- b4 trailers -u <= 0.14.2: quoted ids rewritten by filter-repo ------------------
verify quoted-rewrite --json
json=$out
is "$rc" 1 "the b4-style rewrite is rejected"
is "$(printf '%s' "$json" | jq -r '.findings[] | select(.check == "rewritten-upstream")
	| "\(.commit) \(.upstream)"' | sort)" "$(cat "$VD/expect/quoted-rewrite.pairs")" \
	"every re-created upstream commit is named with its original, from filter-repo's commit-map"
is "$(wc -l <"$VD/expect/quoted-rewrite.pairs" | tr -d ' ')" 4 "the fixture re-created four"
is "$(printf '%s' "$json" | jq -r '.summary | "\(.rewritten) \(.rewritten_merges) \(.dropped_mergetags) \(.quoted_ids_rewritten) \(.should_carry)"')" \
	"4 1 1 3 2" "the summary: 4 copies, 1 merge, 1 dropped mergetag, 3 rewritten ids, 2 commits to carry"
probe=$(grep " $(cat "$VD/expect/reverted-probe")\$" "$VD/expect/quoted-rewrite.pairs" | cut -d' ' -f1)
s1=$(git --git-dir="$VD/sub.git" log -1 --format=%B "$probe" | sed -n 's/^This reverts commit \([0-9a-f]*\)\.$/\1/p')
orig_s1=$(git --git-dir="$VD/upstream.git" log -1 --format=%B "$(cat "$VD/expect/reverted-probe")" |
	sed -n 's/^This reverts commit \([0-9a-f]*\)\.$/\1/p')
ok "$([ -n "$s1" ] && [ "$s1" != "$orig_s1" ]; echo $?)" "filter-repo rewrote the id the revert quotes"
is "$(printf '%s' "$json" | jq -r --arg c "$probe" '.findings[] | select(.commit == $c and .check == "rewritten-upstream")
	| .details[] | select(.field == "quoted-id") | "\(.pull) / \(.upstream)"')" \
	"$s1 ($(echo "$s1" | cut -c1-12) in the pull: the rewritten copy of $orig_s1) / $orig_s1" \
	"the changed id is named, where it points, and that it is the copy of the old one"
again=$(grep " $(cat "$VD/expect/probe-again")\$" "$VD/expect/quoted-rewrite.pairs" | cut -d' ' -f1)
is "$(printf '%s' "$json" | jq -r --arg c "$again" '[.findings[] | select(.commit == $c and .check == "rewritten-upstream")
	| .details[] | select(.field == "quoted-id")] | length')" 2 \
	"both abbreviated ids of the fix are named (the body's and the Fixes:'s)"
is "$(printf '%s' "$json" | jq -r --arg c "$again" '[.findings[] | select(.commit == $c and .check == "rewritten-upstream")
	| .details[] | select(.field | startswith("trailer"))] | length')" 0 \
	"its Fixes: with a rewritten id is neither an added nor a removed trailer"
is "$(printf '%s' "$json" | jq -r '[.findings[] | select(.check == "foreign-committer")
	| .implied_by != null] | unique | join(",")')" "true" \
	"each foreign committer is grouped under its rewritten copy"
is "$(printf '%s' "$json" | jq -r '[.findings[] | select(.implied_by != null) | .implied_by] as $i
	| [.findings[$i[]] | .check] | unique | join(",")')" "rewritten-upstream" \
	"and grouped findings point at rewritten-upstream findings"
verify quoted-rewrite
is "$(printf '%s\n' "$out" | head -n1)" \
	"summary:  the pull re-creates 4 upstream commits under new ids (1 merge, 1 signed tag dropped; 3 quoted commit ids rewritten): without them it should carry 2 commits" \
	"the text report leads with the story"
like "$out" '^verdict: reject \(4 errors, 0 warnings; 4 more findings follow from them\)$' \
	"the verdict counts root causes"
like "$out" '^    also: error foreign-committer: committed by Top Maintainer' \
	"a grouped finding is shown under its copy"

# --- topic bullets are not commits --------------------------------------------------
verify topic-bullets --json
is "$rc" 0 "six commits under two topic bullets are accepted"
is "$(jqo '[.findings[] | select(.check == "range-size")] | length')" 0 "range-size is quiet"
verify topic-bullets --json --pull-request "$VD/topic.mail"
is "$(jqo '[.findings[]] | length') $rc" "0 0" "with its request-pull mail, the pull is as announced"
verify topic-bullets-more --json --pull-request "$VD/topic.mail"
is "$(jqo '.findings[] | select(.check == "range-size") | .message')" \
	"the pull has 7 commits, its request-pull mail's shortlog lists 6" \
	"range-size counts against the mail's shortlog"
is "$(jqo '.findings[] | select(.check == "range-size") | .details[0] | "\(.pull) \(.upstream)"')" \
	"7 6 in the mail's shortlog" "with both counts"
verify topic-bullets --json --max-commits 5
is "$(jqo '.findings[] | select(.check == "range-size") | .message')" \
	"the pull has 6 commits, the policy allows 5" "or against the policy's limit"

# --- folded Fixes: ---------------------------------------------------------------------
verify folded-fixes
f=$(findings "$out" fixes-tag)
is "$(printf '%s\n' "$f" | grep -c "$(short folded-fixes.right)" || true)" 0 \
	"a folded Fixes: with the right subject is fine"
like "$f" "^    subject: pull drivers: foo: add the probe again; upstream drivers: foo: add probe again$" \
	"a folded wrong subject is shown on one line"
like "$f" '^    trailer: Fixes: deadbeef0123 \("lib: a commit nobody wrote"\)$' \
	"a folded trailer is printed with its run of blanks collapsed"

# --- Fixes: resolved without walking history -----------------------------------------
verify fixes-elsewhere
f=$(findings "$out" fixes-tag)
like "$f" "^warning  fixes-tag               $(short fixes-elsewhere.elsewhere)  drivers: foo: fix the baz interplay$" \
	"a Fixes: naming a commit upstream does not have is reported"
like "$f" "^    Fixes: names $(short elsewhere), which is neither an upstream nor a pull commit: upstream's history has no such commit$" \
	"though the commit exists in the sender's repository (the identity index says so)"
# without an identity index (a home where none can be made), the date window decides
NOINDEX="$SCRATCH/noindex"
mkdir -p "$NOINDEX"
: >"$NOINDEX/identity"
verify_noindex() { # as verify
	home=$PULLGATE_HOME
	PULLGATE_HOME=$NOINDEX
	verify "$@"
	PULLGATE_HOME=$home
}
verify_noindex fixes-elsewhere
f=$(findings "$out" fixes-tag)
like "$f" "^    Fixes: names $(short elsewhere), which is neither an upstream nor a pull commit: upstream has no such commit since the date window's line$" \
	"without an index, the date window's line decides"
like "$f" "^    Fixes: $(short probe-again) names a commit written after this fix$" \
	"a Fixes: naming a commit written after the fix is reported"

# --- recent-rebase: applied and tagged the same day is normal ------------------------
verify applied-same-day --json
is "$(jqo '[.findings[]] | length') $rc" "0 0" \
	"patches written days before and applied an hour before the tag: no finding"
is "$(git --git-dir="$VD/sub.git" log -1 --format=%ce applied-same-day)" "sam@home.example" \
	"(the last committed by the sender under another address: no foreign committer)"

# --- whose sign-off the project requires -----------------------------------------------
verify maintainer-applied --json
is "$(jqo '[.findings[] | "\(.check) \(.message)"] | join(",")')" \
	"signoff no Signed-off-by from its committer" \
	"the kernel's rule: the committer's sign-off is missing; the author's, before a note, is found"
verify maintainer-applied --json --policy "$TOP/policies/no-maintainer-signoff.yaml"
is "$(jqo '[.findings[]] | length') $rc" "0 0" \
	"policies/no-maintainer-signoff.yaml requires the author's only"

# --- no keyring ---------------------------------------------------------------------
run "$PULLGATE" verify --upstream "$VD/upstream.git:master" "$VD/sub.git" topic-bullets
like "$out" '^signed:   not checked \(no keyring\)$' "without a keyring the report says signatures were not checked"
is "$rc" 1 "and the pull is not accepted"
run "$PULLGATE" verify --json --upstream "$VD/upstream.git:master" "$VD/sub.git" topic-bullets
is "$(jqo '"\(.signatures_checked) \(.signatures | length)"')" "false 0" "JSON says so too"
verify topic-bullets --json
is "$(jqo '.signatures_checked')" "true" "and with a keyring, that they were"

# --- what the date window is ---------------------------------------------------------
verify topic-bullets
like "$out" "^          copies sought among [0-9]+ upstream commits: those sharing a pull commit's identity in upstream's identity index of [0-9]+ commits \\(current\\)" \
	"with the identity index, the count says the copies were probed for, not walked"
verify_noindex topic-bullets
like "$out" "^          copies sought among [0-9]+ upstream commits: those committed since 2025-03-11 10:00:00 \\+0000 \\(a date window\\)" \
	"the count of upstream commits examined says it is a date window, and from when"
verify_noindex topic-bullets --json
is "$(jqo '.upstream_window_since') $(jqo '.upstream_index')" "2025-03-11 10:00:00 +0000 null" \
	"JSON gives the window's line, and no index"
