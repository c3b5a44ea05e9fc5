#!/bin/sh
# 20-policy-check.t - pullgate policy check: valid files, every problem by place, hostile input.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 35

D="$SCRATCH/p"
mkdir -p "$D"

# --- the shipped policies are valid --------------------------------------------
run "$PULLGATE" policy check "$TOP/policies/default.yaml"
is "$rc" 0 "default.yaml is valid"
is "$out" "$TOP/policies/default.yaml: ok" "and says so on stdout"
is "$err" "" "with nothing on stderr"

run "$PULLGATE" policy check "$TOP/policies/kernel-toplevel.yaml" "$TOP/policies/default.yaml"
is "$rc" 0 "kernel-toplevel.yaml is valid too, and several files can be checked"
is "$(printf '%s\n' "$out" | wc -l | tr -d ' ')" 2 "one ok line per file"

# --- problems: FILE:LINE:COLUMN: what was expected ----------------------------
cat >"$D/typo.yaml" <<'EOF'
checks:
  range-size: off
  sevrity: error
EOF
run "$PULLGATE" policy check "$D/typo.yaml"
is "$rc" 3 "an unknown key is exit 3"
is "$err" "$D/typo.yaml:3:3: unknown check 'sevrity' in 'checks' (expected one of: tag-signature, mergetag-signature, rewritten-upstream, foreign-committer, range-size, pull-request-base, pull-request-head, pull-request-url, pull-request-shortlog, pull-request-diffstat, signoff, fixes-tag, back-merge, recent-rebase, date-anomaly, merge-conflict, build-error, new-warning, boot-timeout, ktap-failure, kernel-splat, boot-evidence, labelled-backport, transparency)" \
	"the unknown key is named with its place and the keys that would do"
is "$out" "" "nothing on stdout for a bad file"

cat >"$D/many.yaml" <<'EOF'
limits:
  max-commits: lots
  lookbak-days: 30
committers:
  protected: torvalds@linux-foundation.org
signers:
  - fingerprint: 1234
    identities: [kees@kernel.org]
approval: maybe
EOF
run "$PULLGATE" policy check "$D/many.yaml"
is "$rc" 3 "a file with several problems is exit 3"
is "$err" "$D/many.yaml:2:16: 'limits.max-commits' wants a non-negative integer, not 'lots'
$D/many.yaml:3:3: unknown key 'lookbak-days' in 'limits' (did you mean 'lookback-days'?)
$D/many.yaml:5:14: 'committers.protected' wants a list of e-mail addresses, not 'torvalds@linux-foundation.org'
$D/many.yaml:7:18: 'signers[0].fingerprint' wants a fingerprint of 40 hex digits without spaces, not '1234'
$D/many.yaml:9:11: 'approval' wants auto or manual, not 'maybe'" \
	"every problem is reported, each on its own line, in file order"

printf 'limits:\n  max-commits: [1\n' >"$D/broken.yaml"
run "$PULLGATE" policy check "$D/broken.yaml"
is "$rc" 3 "broken YAML is exit 3"
is "$err" "$D/broken.yaml:3:1: invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence at 2:16)" \
	"broken YAML names the place and what libyaml expected"

printf 'approval: auto\napproval: manual\n' >"$D/dup.yaml"
run "$PULLGATE" policy check "$D/dup.yaml"
is "$err" "$D/dup.yaml:2:1: duplicate key 'approval' at the top level (first at 1:1)" \
	"a duplicate key is refused"

run "$PULLGATE" policy check "$D/typo.yaml" "$TOP/policies/default.yaml"
is "$rc" 3 "one bad file among good ones is exit 3"
is "$out" "$TOP/policies/default.yaml: ok" "the good one is still reported ok"

# --- hostile input ----------------------------------------------------------------
head -c 4096 "$PULLGATE" >"$D/elf.yaml"
run "$PULLGATE" policy check "$D/elf.yaml"
is "$rc" 3 "an executable is exit 3"
is "$err" "$D/elf.yaml:1:1: control character U+007F: expected printable text" \
	"and the first bad byte is named"

head -c 65536 /dev/urandom >"$D/noise.yaml"
run "$PULLGATE" policy check "$D/noise.yaml"
is "$rc" 3 "random bytes are exit 3, not a crash"
like "$err" "^$D/noise.yaml:[0-9]+:[0-9]+: " "with a place"

printf 'approval: manual\n\000\n' >"$D/nul.yaml"
run "$PULLGATE" policy check "$D/nul.yaml"
is "$err" "$D/nul.yaml:2:1: NUL byte: expected UTF-8 text" "a NUL byte is refused"

printf '\377\376a\000p\000' >"$D/utf16.yaml"
run "$PULLGATE" policy check "$D/utf16.yaml"
is "$err" "$D/utf16.yaml:1:1: invalid UTF-8 (byte 0xFF): expected UTF-8 text" \
	"UTF-16 is not UTF-8"

{
	echo 'approval: manual'
	i=0
	while [ $i -lt 40000 ]; do
		echo '# a comment to make the file large, a comment to make the file large'
		i=$((i + 1))
	done
} >"$D/huge.yaml"
run "$PULLGATE" policy check "$D/huge.yaml"
is "$rc" 3 "a file over 1 MiB is exit 3"
is "$err" "$D/huge.yaml: the policy is larger than 1 MiB: expected a smaller file" \
	"and says why, without a line"

cat >"$D/laughs.yaml" <<'EOF'
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
EOF
run "$PULLGATE" policy check "$D/laughs.yaml"
is "$err" "$D/laughs.yaml:1:4: an anchor (&): anchors and aliases are not allowed" \
	"anchors are refused (no billion laughs)"

{ printf 'approval: '; head -c 100000 /dev/zero | tr '\0' '['; } >"$D/deep.yaml"
run "$PULLGATE" policy check "$D/deep.yaml"
is "$err" "$D/deep.yaml:1:74: nesting deeper than 64 levels" "deep nesting is refused"

printf 'approval: auto\n---\napproval: manual\n' >"$D/two.yaml"
run "$PULLGATE" policy check "$D/two.yaml"
is "$err" "$D/two.yaml:2:1: a second document: expected only one" "a second document is refused"

printf '"\\e]0;owned\\a\\e[31mred": 1\n' >"$D/esc.yaml"
run "$PULLGATE" policy check "$D/esc.yaml"
is "$rc" 3 "a key made of escape sequences is exit 3"
unlike "$err" "$(printf '\033')" "and no escape character reaches the terminal"

: >"$D/empty.yaml"
run "$PULLGATE" policy check "$D/empty.yaml"
is "$err" "$D/empty.yaml:1:1: the policy is empty: expected a mapping of settings" \
	"an empty file is not a policy"

# --- usage ------------------------------------------------------------------------
run "$PULLGATE" policy check "$D/missing.yaml"
is "$rc" 3 "a missing file is exit 3"
is "$err" "error: cannot read the policy: '$D/missing.yaml': No such file or directory" \
	"and says so"

run "$PULLGATE" policy
is "$rc" 2 "policy without a subcommand is a usage error"
run "$PULLGATE" policy check
is "$rc" 2 "policy check without a file is a usage error"
run "$PULLGATE" policy frob x
like "$err" "^error: 'frob' is not a policy subcommand$" "an unknown subcommand is named"
run "$PULLGATE" --help
like "$out" '^   policy +validate policy files$' "policy is in the command list"
