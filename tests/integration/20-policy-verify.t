#!/bin/sh
# 20-policy-verify.t - verify --policy: severities, committer lists and limits take effect.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
plan 35
fixture_incident
"$TOP/fixtures/policy.sh" "$FX"
POLICY="$FX/policy.yaml"
D="$SCRATCH/p"
mkdir -p "$D"

# policy NAME BODY: a policy with the fixture upstream and Kees's key, plus BODY
policy() {
	cat >"$D/$1.yaml" <<EOF
upstream: {url: '$FX/upstream.git', branch: master}
keyring: {file: '$KEYRING'}
signers:
  - {fingerprint: $FPR_KEES, identities: [kees@kernel.org]}
$2
EOF
	echo "$D/$1.yaml"
}
# findings JSON CHECK: "severity committer-email" per finding of CHECK, sorted and counted
findings() {
	printf '%s' "$1" | jq -r --arg c "$2" '.findings[] | select(.check == $c)
		| "\(.severity) \(.details[0].pull // "" | sub(".*<"; "") | sub(">.*"; ""))"' |
		sort | uniq -c | sed 's/^ *//'
}
count() { printf '%s' "$1" | jq --arg c "$2" '[.findings[] | select(.check == $c)] | length'; }

# --- the fixture policy (fixtures/policy.sh) ------------------------------------
run "$PULLGATE" policy check "$POLICY"
is "$rc" 0 "fixtures/policy.sh writes a valid policy"

run "$PULLGATE" verify --policy "$POLICY" "$KEES" hardening-v6.16-rc1-fix1-take2
is "$rc" 0 "take two is accepted under the fixture policy, upstream taken from it"
like "$out" "^upstream: refs/heads/master of $FX/upstream.git$" "the policy named the upstream"
like "$out" '^verdict: accept \(0 errors, 0 warnings\)$' "with no findings"

run "$PULLGATE" verify --json --policy "$POLICY" "$KEES" hardening-v6.16-rc1-fix1
base=$out
is "$rc" 1 "take one is rejected under the fixture policy"
is "$(count "$base" rewritten-upstream)" 35 "rewritten-upstream reports the copies"
is "$(count "$base" range-size)" 0 \
	"range-size is quiet: without a mail or a limit the tag message's topics are no count"
is "$(findings "$base" foreign-committer | grep -c ' torvalds@' || true)" 1 \
	"Linus's commits are foreign-committer findings"
like "$(findings "$base" foreign-committer)" '^9 error torvalds@linux-foundation.org$' \
	"as errors: he is protected"
like "$(findings "$base" foreign-committer)" '^5 warning alice@example.org$' \
	"Alice's are warnings"
like "$(findings "$base" foreign-committer)" '^3 warning bob@example.org$' "so are Bob's"

run "$PULLGATE" verify --json --policy "$TOP/policies/kernel-toplevel.yaml" --upstream "$UP" \
	"$KEES" hardening-v6.16-rc1-fix1-take2
is "$rc" 3 "the shipped kernel-toplevel policy fetches only from kernel.org trees"
is "$err" "error: repository '$KEES' is not in the policy's list of repositories" \
	"and says why it will not fetch from a path"
run "$PULLGATE" verify --policy "$TOP/policies/kernel-toplevel.yaml" --upstream "$UP" \
	--keyring "$KEYRING" --trust "$FPR_KEES" --allow-repository "$KEES" "$KEES" \
	hardening-v6.16-rc1-fix1-take2
is "$rc" 0 "with the fixture repository allowed and Kees's key trusted it accepts take two"

# --- checks: a severity per check ---------------------------------------------------
off=$(policy off 'limits: {max-commits: 20}
checks: {range-size: off}')
run "$PULLGATE" verify --json --policy "$off" "$KEES" hardening-v6.16-rc1-fix1
is "$rc" 1 "take one is still rejected with range-size off"
is "$(count "$out" range-size)" 0 "range-size: off removes the range-size finding"
is "$(count "$out" rewritten-upstream)" 35 "and leaves the others alone"

warn=$(policy warn 'checks: {rewritten-upstream: warning, foreign-committer: off, signoff: warning}')
run "$PULLGATE" verify --json --policy "$warn" "$KEES" hardening-v6.16-rc1-fix1
is "$(printf '%s' "$out" | jq -r '[.findings[] | select(.check == "rewritten-upstream")
	| .severity] | unique | join(",")')" "warning" "a check can be lowered to a warning"
is "$(count "$out" foreign-committer)" 0 "or turned off"
is "$rc" 0 "with only warnings left, take one is accepted: the policy decides"

# --- committers: protected and allowed ----------------------------------------------
allow=$(policy allow 'committers:
  allowed: [alice@example.org, Bob@Example.org]
  protected: [dave@example.org]')
run "$PULLGATE" verify --json --policy "$allow" "$KEES" hardening-v6.16-rc1-fix1
f=$(findings "$out" foreign-committer)
unlike "$f" 'alice@example.org' "an allowed committer is not foreign"
unlike "$f" 'bob@example.org' "allowed addresses compare without case"
like "$f" '^8 error dave@example.org$' "a protected committer's commits are errors"
like "$f" '^9 error torvalds@linux-foundation.org$' \
	"the upstream maintainer stays protected (protect-upstream-maintainer defaults to true)"

unprot=$(policy unprot 'committers: {protect-upstream-maintainer: false}')
run "$PULLGATE" verify --json --policy "$unprot" "$KEES" hardening-v6.16-rc1-fix1
like "$(findings "$out" foreign-committer)" '^9 warning torvalds@linux-foundation.org$' \
	"protect-upstream-maintainer: false makes Linus's commits warnings"

# flags apply on top of the policy, before or after --policy
run "$PULLGATE" verify --json --protect erin@example.org --policy "$allow" \
	--allow-committer dave@example.org "$KEES" hardening-v6.16-rc1-fix1
f=$(findings "$out" foreign-committer)
like "$f" '^10 error erin@example.org$' "--protect adds to the policy's protected list"
unlike "$f" 'alice@example.org' "the policy's allowed list still holds"

# --- limits ----------------------------------------------------------------------------
lim=$(policy lim 'limits: {max-commits: 20}')
run "$PULLGATE" verify --json --policy "$lim" "$KEES" hardening-v6.16-rc1-fix1
like "$(printf '%s' "$out" | jq -r '.findings[] | select(.check == "range-size") | .message')" \
	'^the pull has 39 commits, the policy allows 20$' "limits.max-commits takes effect"
run "$PULLGATE" verify --json --max-commits 10 --policy "$lim" "$KEES" hardening-v6.16-rc1-fix1
like "$(printf '%s' "$out" | jq -r '.findings[] | select(.check == "range-size") | .message')" \
	'^the pull has 39 commits, the policy allows 10$' "--max-commits overrides the policy's"

# --- a bad policy: one line, exit 3 --------------------------------------------------
printf 'checks:\n  range-size: off\n  sevrity: error\nlimits: {max-commits: x}\n' >"$D/bad.yaml"
run "$PULLGATE" verify --policy "$D/bad.yaml" --upstream "$UP" "$KEES" hardening-v6.16-rc1-fix1
is "$rc" 3 "a bad policy is exit 3"
like "$err" "^error: $D/bad.yaml:3:3: unknown check 'sevrity' in 'checks' \(expected one of: tag-signature, " \
	"with the first problem's place"
is "$(printf '%s\n' "$err" | wc -l | tr -d ' ')" 1 "on one line"

run "$PULLGATE" gate --policy "$D/bad.yaml" --upstream "$UP" "$KEES" hardening-v6.16-rc1-fix1
is "$rc" 3 "gate takes --policy too, and a bad one is exit 3"
like "$err" "^error: $D/bad.yaml:3:3: unknown check 'sevrity'" "with the same line"

head -c 4096 "$PULLGATE" >"$D/elf.yaml"
run "$PULLGATE" verify --policy "$D/elf.yaml" --upstream "$UP" "$KEES" hardening-v6.16-rc1-fix1
is "$err" "error: $D/elf.yaml:1:1: control character U+007F: expected printable text" \
	"binary garbage as a policy is one error line"
