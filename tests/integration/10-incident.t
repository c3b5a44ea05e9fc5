#!/bin/sh
# 10-incident.t - take one of hardening-v6.16-rc1-fix1 is rejected, take two accepted.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
plan 30
fixture_incident

run "$PULLGATE" verify --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" "$KEES" hardening-v6.16-rc1-fix1-take2
is "$rc" 0 "take two is accepted"
like "$out" '^verdict: accept \(0 errors, 0 warnings\)$' "with no findings at all"
like "$out" 'commit [0-9a-f]{40}, 4 commits \(0 merges\)' "take two is the four commits"
like "$out" "^signed:   tag 'hardening-v6.16-rc1-fix1-take2' by Kees Cook <kees@kernel.org>: good, key $FPR_KEES \\(kees@kernel.org\\)$" \
	"take two's tag is verified: signed by Kees's key, and the tagger is among its uids"

run "$PULLGATE" verify --upstream "$UP" "$KEES" hardening-v6.16-rc1-fix1-take2
is "$rc" 1 "without a keyring even take two is not accepted"
like "$out" "^error +tag-signature +- +no keyring configured: cannot verify the signature" \
	"and the report says why"

run "$PULLGATE" verify --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" "$KEES" hardening-v6.16-rc1-fix1
is "$rc" 1 "take one is rejected"
like "$out" 'commit [0-9a-f]{40}, 39 commits \(7 merges\)' "take one carries 39 commits"
like "$out" '^verdict: reject \(35 errors, 0 warnings; [0-9]+ more findings follow from them\)$' \
	"the text report ends with the verdict, counting root causes"
is "$(printf '%s\n' "$out" | head -n1)" \
	"summary:  the pull re-creates 35 upstream commits under new ids (7 merges, 7 signed tags dropped): without them it should carry 4 commits" \
	"and leads with the story"

run "$PULLGATE" verify --json --keyring "$KEYRING" --trust "$FPR_KEES" --upstream "$UP" "$KEES" hardening-v6.16-rc1-fix1
json=$out
is "$rc" 1 "--json gives the same exit status"
is "$(printf '%s' "$json" | jq -r '[.signatures[] | "\(.kind) \(.status) \(.fingerprint)"] | join(",")')" \
	"tag good $FPR_KEES" "take one's tag verifies too: that is what git verify-tag said"
is "$(printf '%s' "$json" | jq '[.findings[] | select(.check | endswith("signature"))] | length')" 0 \
	"no signature finding: the merges that lost their mergetags are not signed merges any more"
is "$(finding_pairs "$json" rewritten-upstream)" "$(sort "$FX/expect/take1.pairs")" \
	"every rewritten upstream commit is named with its original, and nothing else"
is "$(wc -l <"$FX/expect/take1.pairs" | tr -d ' ')" 35 "the fixture rewrote 35 upstream commits"

# Each rewritten maintainer merge lost its mergetag; the report names the tag.
merges=$(printf '%s' "$json" | jq -r '.findings[] | select(.check == "rewritten-upstream")
	| select(.subject | startswith("Merge tag")) | .commit' | wc -l)
is "$merges" 7 "all seven rewritten merges are reported"
lost=$(printf '%s' "$json" | jq -r '.findings[] | select(.check == "rewritten-upstream")
	| select(.subject | startswith("Merge tag"))
	| select(any(.details[]; .field == "mergetag" and .pull == "(none)"
		and (.upstream | test("^tag .* by .* <.*>, .*, signed$")))) | .commit' | wc -l)
is "$lost" 7 "each names the dropped mergetag: tag name, tagger, signed"
hard=$(printf '%s' "$json" | jq -r '.findings[] | select(.check == "rewritten-upstream")
	| select(.subject | startswith("Merge tag '"'"'hardening-v6.16-rc1'"'"'"))
	| [.details[].field] | join(",")')
is "$hard" "mergetag" "the first rewritten merge differs only by its lost mergetag"
desc=$(printf '%s' "$json" | jq -r '.findings[] | select(.check == "rewritten-upstream")
	| select(.subject | startswith("Merge tag '"'"'net-next-6.16'"'"'"))
	| .details[] | select(.field == "parents") | .pull')
like "$desc" '\(rewritten copy of [0-9a-f]{12}\)' "a rewritten parent is named as a copy of its original"

# Foreign committers: Linus (protected: upstream's first-parent committer) is
# an error; the sub-maintainers whose mergetags were lost are warnings.
linus=$(printf '%s' "$json" | jq -r '[.findings[] | select(.check == "foreign-committer")
	| select(.details[0].pull | test("torvalds@")) | .severity] | unique | join(",")')
is "$linus" "error" "commits by the upstream maintainer are errors"
others=$(printf '%s' "$json" | jq -r '[.findings[] | select(.check == "foreign-committer")
	| select(.details[0].pull | test("torvalds@") | not) | .severity] | unique | join(",")')
is "$others" "warning" "commits by other sub-maintainers are warnings"

# The story first: what the pull re-creates, and what it should carry.
is "$(printf '%s' "$json" | jq -r '.summary | "\(.rewritten) \(.rewritten_merges) \(.dropped_mergetags) \(.should_carry)"')" \
	"35 7 7 4" "the JSON summary: 35 upstream commits re-created, 7 merges, 7 signed tags dropped, 4 to carry"
is "$(printf '%s' "$json" | jq -r 'keys_unsorted | index("summary") < index("findings")')" true \
	"and it comes before the findings"
all=$json
implied=$(printf '%s' "$json" | jq '[.findings[] | select(.implied_by != null)] | length')
is "$(printf '%s' "$json" | jq -r '"\(.summary.root_errors) \(.summary.root_warnings) \(.summary.implied)"')" \
	"35 0 $implied" "the root causes are the 35 copies; what the copies imply is grouped under them"
is "$(printf '%s' "$json" | jq -r '[.findings[] | select(.implied_by == null) | .check] | unique | join(",")')" \
	"rewritten-upstream" "every other finding of take one follows from a copy"

v=$(printf '%s' "$json" | jq -r '"\(.schema) \(.verdict) \(.commits) \(.merges)"')
is "$v" "1 reject 39 7" "the JSON report carries schema, verdict and counts"

# Past the policy's cap the root causes stay the copies: what a copy implies is no root
# cause, whether its own rewritten-upstream finding is listed or only counted.
printf 'limits: {max-findings-per-check: 5}\n' >"$SCRATCH/five.yaml"
run "$PULLGATE" verify --json --policy "$SCRATCH/five.yaml" --keyring "$KEYRING" --trust "$FPR_KEES" \
	--upstream "$UP" "$KEES" hardening-v6.16-rc1-fix1
json=$out
is "$(printf '%s' "$json" | jq -r '"\(.errors) \(.summary.root_errors) \(.summary.root_warnings) \(.summary.implied)"')" \
	"$(printf '%s' "$all" | jq -r '"\(.errors) \(.summary.root_errors) \(.summary.root_warnings) \(.summary.implied)"')" \
	"capped at 5 per check, the counts of root causes and implied findings are those of the whole report"
is "$(printf '%s' "$json" | jq -r '[.findings[] | select(.implied_by == null and .implied_unlisted != true) | .check] | unique | join(",")')" \
	"rewritten-upstream" "a listed finding on a copy whose own finding is only counted is marked implied_unlisted"
run "$PULLGATE" verify --policy "$SCRATCH/five.yaml" --keyring "$KEYRING" --trust "$FPR_KEES" \
	--upstream "$UP" "$KEES" hardening-v6.16-rc1-fix1
like "$out" '^verdict: reject \(35 errors, 0 warnings; [0-9]+ more findings follow from them\)$' \
	"the text verdict still counts 35 root causes"
like "$out" '^on rewritten copies past the cap of rewritten-upstream findings, following from them:$' \
	"and lists the findings on unlisted copies under their own heading"
