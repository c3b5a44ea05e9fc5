#!/bin/sh
# 11-rewrites.t - rebase, amend, cherry-pick and date rewrites of upstream commits.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
plan 26
fixture_incident

verify_json() {
	run "$PULLGATE" verify --json --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" "$KEES" "$1"
}
# fields JSON COMMIT: the detail fields of the rewritten-upstream finding for COMMIT
fields() {
	printf '%s' "$1" | jq -r --arg c "$2" '.findings[] | select(.check == "rewritten-upstream")
		| select(.commit == $c) | [.details[].field] | join(",")'
}
detail() { # JSON COMMIT FIELD SIDE
	printf '%s' "$1" | jq -r --arg c "$2" --arg f "$3" --arg s "$4" '.findings[]
		| select(.check == "rewritten-upstream") | select(.commit == $c)
		| .details[] | select(.field == $f) | .[$s]'
}

# --- a rebase that carries Bob's upstream sound commits ----------------------
verify_json rebase-carry
is "$rc" 1 "rebase-carry is rejected"
is "$(finding_pairs "$out" rewritten-upstream)" "$(sort "$FX/expect/rebase-carry.pairs")" \
	"each rebased copy is matched to its upstream original"
first=$(head -n1 "$FX/expect/rebase-carry.pairs" | cut -d' ' -f1)
is "$(fields "$out" "$first")" "parents,tree,patch,committer,committer-date" \
	"a rebased copy differs in parents, tree, committer and date"
is "$(detail "$out" "$first" patch pull)" "same" "but carries the same patch"
is "$(detail "$out" "$first" committer pull) / $(detail "$out" "$first" committer upstream)" \
	"Kees Cook <kees@kernel.org> / Bob Sound <bob@example.org>" "the committer change is shown"

# --- commit --amend of an upstream merge, adding a trailer -------------------
verify_json amend-upstream
is "$rc" 1 "amend-upstream is rejected"
is "$(finding_pairs "$out" rewritten-upstream)" "$(cat "$FX/expect/amend-upstream.pairs")" \
	"the amended merge is matched to the original"
c=$(cut -d' ' -f1 "$FX/expect/amend-upstream.pairs")
is "$(fields "$out" "$c")" "committer,committer-date,trailer-added" \
	"amend keeps parents, tree and the mergetag; it changes committer and adds a trailer"
is "$(detail "$out" "$c" trailer-added pull)" "Reviewed-by: Kees Cook <kees@kernel.org>" \
	"the added trailer is named"
is "$(printf '%s' "$out" | jq -r --arg c "$c" '.findings[] | select(.check == "foreign-committer")
	| select(.commit == $c) | .severity')" "" \
	"the amended copy is committed by the sender, so it is not foreign"
is "$(printf '%s' "$out" | jq -r '[.signatures[] | select(.kind == "mergetag")
	| "\(.tag) \(.status) \(.fingerprint)"] | join(",")')" "drm-next-6.16 good $FPR_ERIN" \
	"the amended merge kept Erin's mergetag, which still verifies"

# --- cherry-picks of older upstream commits, with and without -x ------------
verify_json cherry-pick-old
is "$rc" 1 "cherry-pick-old is rejected"
is "$(finding_pairs "$out" rewritten-upstream)" "$(tail -n1 "$FX/expect/cherry-pick-old.pairs")" \
	"the cherry-pick without -x is found, though its original predates the divergence"
withx=$(head -n1 "$FX/expect/cherry-pick-old.pairs" | cut -d' ' -f1)
nox=$(tail -n1 "$FX/expect/cherry-pick-old.pairs" | cut -d' ' -f1)
is "$(printf '%s' "$out" | jq -r '.notes[] | select(.check == "labelled-backport")
	| "\(.commit) \(.upstream)"')" "$(head -n1 "$FX/expect/cherry-pick-old.pairs")" \
	"the one with -x names its original: a labelled backport, a note (issue 26)"
is "$(detail "$out" "$nox" patch pull)" "same" "the copy without -x has the same patch"
is "$(fields "$out" "$nox")" "parents,tree,patch,committer,committer-date" \
	"and differs where a cherry-pick differs"

# --- only the committer date of an upstream merge rewritten -----------------
verify_json committer-date
is "$rc" 1 "committer-date is rejected"
is "$(finding_pairs "$out" rewritten-upstream)" "$(cat "$FX/expect/committer-date.pairs")" \
	"the re-dated commit is matched to its original"
c=$(cut -d' ' -f1 "$FX/expect/committer-date.pairs")
is "$(fields "$out" "$c")" "committer-date" "only the committer date differs"
is "$(detail "$out" "$c" committer-date pull) / $(detail "$out" "$c" committer-date upstream)" \
	"2025-05-31 03:00:00 -0700 / 2025-05-30 12:00:00 -0700" "both dates are shown"
is "$(printf '%s' "$out" | jq -r --arg c "$c" '.findings[] | select(.check == "foreign-committer")
	| select(.commit == $c) | .severity')" "error" \
	"a commit by the upstream maintainer that the sender re-created is an error"

# --- a sub-maintainer's commits merged from her signed tag, or not ----------
verify_json submerge-signed
is "$rc" 0 "commits merged from a signed tag are accepted"
is "$(printf '%s' "$out" | jq '[.findings[] | select(.check == "foreign-committer")] | length')" \
	0 "and not foreign: the mergetag vouches for its tagger's commits"
is "$(printf '%s' "$out" | jq -r '[.signatures[] | "\(.kind) \(.tag) \(.status) \(.fingerprint)"]
	| join(",")')" "tag submerge-signed good $FPR_KEES,mergetag kspp-6.16 good $FPR_GRACE" \
	"the tag and Grace's mergetag are both verified"
verify_json submerge-plain
is "$(printf '%s' "$out" | jq -r '[.findings[] | select(.check == "foreign-committer")
	| .severity] | join(",")')" "warning,warning" \
	"the same commits merged from a plain branch are foreign (a warning each)"

run "$PULLGATE" verify --keyring "$KEYRING" --trust "$FPR_KEES" --protect grace@example.org --upstream "$UP" "$KEES" submerge-plain
is "$rc" 1 "and an error when the policy protects that identity"
