#!/bin/sh
# 15-limits.t - bounded work: findings capped per check, a hard limit on the pull's size, malformed commits refused.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$TOP/fixtures/lib.sh"
plan 24
fx_init "$SCRATCH/fx"
N=1500

# A pull of N commits on one base, written by git fast-import in one go: no
# commit has a Signed-off-by, so signoff has N findings.  The sender commits
# everything, so no other check fires on each commit.
R="$SCRATCH/fx/pull.git"
git init -q --bare "$R"
awk -v n=$N 'BEGIN {
	printf "blob\nmark :1\ndata 5\nbase\n"
	printf "commit refs/heads/master\nmark :2\nauthor U <u@example.org> 1700000000 +0000\n"
	printf "committer U <u@example.org> 1700000000 +0000\ndata 5\nbase\nM 100644 :1 README\n"
	for (i = 0; i < n; i++) {
		msg = sprintf("c%d: change %d\n", i, i)
		printf "commit refs/heads/pull\nmark :%d\n", i + 3
		printf "author P <p@example.org> %d +0000\n", 1700000100 + i
		printf "committer P <p@example.org> %d +0000\n", 1700000100 + i
		printf "data %d\n%sfrom :%d\n", length(msg), msg, i + 2
	}
}' | git --git-dir="$R" fast-import --quiet
export GIT_COMMITTER_NAME=P GIT_COMMITTER_EMAIL=p@example.org GIT_COMMITTER_DATE="1700100000 +0000"
git --git-dir="$R" tag -a -m "big pull" big pull
UP="$R:master"
policy() { printf 'limits: {%s}\n' "$2" >"$SCRATCH/$1.yaml"; echo "$SCRATCH/$1.yaml"; }

run "$PULLGATE" verify --upstream "$UP" "$R" big
is "$rc" 1 "a $N-commit pull gives a verdict"
like "$out" "^pull: .*$N commits \\(0 merges\\)|commits? .*$N commits" "all $N commits are counted"
is "$(printf '%s\n' "$out" | grep -c '^error    signoff ')" 200 \
	"200 signoff findings are listed, the policy's default cap"
like "$out" "^\\.\\.\\. and $((N - 200)) more signoff findings \\($((N - 200)) errors, 0 warnings\\): the policy lists 200 per check$" \
	"the rest are counted on one line"
like "$out" "^verdict: reject \\($((N + 1)) errors, 0 warnings\\)$" \
	"the verdict counts every finding, listed or not (the tag is unsigned: one more)"
ok "$([ "$(printf '%s\n' "$out" | wc -l)" -lt 1500 ]; echo $?)" \
	"the report stays short ($(printf '%s\n' "$out" | wc -l) lines)"

run "$PULLGATE" verify --json --upstream "$UP" "$R" big
is "$(printf '%s' "$out" | jq -c '.omitted')" \
	"[{\"check\":\"signoff\",\"count\":$((N - 200)),\"errors\":$((N - 200)),\"warnings\":0}]" \
	"JSON: omitted counts what is not listed, by check and severity"
is "$(printf '%s' "$out" | jq '[.findings[] | select(.check == "signoff")] | length')" 200 \
	"JSON: 200 signoff findings are listed"
is "$(printf '%s' "$out" | jq '.errors, .max_findings_per_check' | tr '\n' ' ')" "$((N + 1)) 200 " \
	"JSON: errors counts them all; the cap is given"

run "$PULLGATE" verify --policy "$(policy five 'max-findings-per-check: 5')" --upstream "$UP" "$R" big
is "$(printf '%s\n' "$out" | grep -c '^error    signoff ')" 5 "limits.max-findings-per-check sets the cap"
like "$out" "^\\.\\.\\. and $((N - 5)) more signoff findings" "and the count follows it"
run "$PULLGATE" verify --policy "$(policy all 'max-findings-per-check: 0')" --upstream "$UP" "$R" big
is "$(printf '%s\n' "$out" | grep -c '^error    signoff ')" $N "0 lists every finding"

# --max-commits is the soft limit: a range-size finding, and a short report
run "$PULLGATE" verify --max-commits 10 --upstream "$UP" "$R" big
is "$rc" 1 "--max-commits 10 on a $N-commit pull rejects it"
like "$out" "^warning  range-size .*the pull has $N commits, the policy allows 10$" \
	"range-size names the size and the limit"
ok "$([ "$(printf '%s\n' "$out" | wc -l)" -lt 1500 ]; echo $?)" "the report stays short"

# max-pull-commits is the hard limit: nothing is verified past it
run "$PULLGATE" verify --policy "$(policy hard 'max-pull-commits: 1000')" --upstream "$UP" "$R" big
is "$rc" 3 "a pull over limits.max-pull-commits: exit 3, pullgate cannot decide"
is "$err" "error: the pull has $N commits, more than the policy's max-pull-commits (1000): pullgate cannot verify it" \
	"one line names the size and the limit"
is "$out" "" "and no report is printed"
run "$PULLGATE" verify --policy "$(policy edge "max-pull-commits: $N")" --upstream "$UP" "$R" big
is "$rc" 1 "a pull of exactly max-pull-commits is verified"

# A commit listing one parent 10,000 times (git refuses to write it; --literally does not)
B=$(git --git-dir="$R" rev-parse master)
T=$(git --git-dir="$R" rev-parse 'master^{tree}')
awk -v t="$T" -v p="$B" 'BEGIN {
	printf "tree %s\n", t
	for (i = 0; i < 10000; i++)
		printf "parent %s\n", p
	printf "author P <p@example.org> 1700000100 +0000\ncommitter P <p@example.org> 1700000100 +0000\n\ndup\n"
}' >"$SCRATCH/dup.commit"
DUP=$(git --git-dir="$R" hash-object -t commit -w --literally "$SCRATCH/dup.commit")
git --git-dir="$R" tag -a -m dup dup "$DUP"
run "$PULLGATE" verify --upstream "$UP" "$R" dup
is "$rc" 3 "a commit with a parent listed 10,000 times: exit 3"
is "$err" "error: commit $DUP is malformed: parent $B listed twice" "one line names the commit and the parent"
is "$out" "" "no findings, let alone 9,999"

printf 'tree %s\nparent %s\nauthor P <p@example.org> 1700000100 +0000\nauthor Q <q@example.org> 1700000100 +0000\ncommitter P <p@example.org> 1700000100 +0000\n\ntwo authors\n' \
	"$T" "$B" >"$SCRATCH/two.commit"
TWO=$(git --git-dir="$R" hash-object -t commit -w --literally "$SCRATCH/two.commit")
git --git-dir="$R" tag -a -m two two "$TWO"
run "$PULLGATE" verify --upstream "$UP" "$R" two
is "$rc" 3 "a commit with two author headers: exit 3"
is "$err" "error: commit $TWO is malformed: more than one author header" "says so"
