#!/bin/sh
# 13-errors.t - usage errors exit 2, undecidable inputs exit 3, each with one clear line.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
plan 31
fixture_incident

one_line() { is "$(printf '%s\n' "$err" | wc -l | tr -d ' ')" 1 "$1: one line on stderr"; }

run "$PULLGATE" verify --upstream "$UP" "$SCRATCH/nonexistent" some-tag
is "$rc" 3 "a missing repository: exit 3"
like "$err" "^error: repository '$SCRATCH/nonexistent': " "names the repository"
one_line "missing repository"

run "$PULLGATE" verify --upstream "$UP" "$KEES" no-such-tag
is "$rc" 3 "an unknown tag: exit 3"
like "$err" "^error: 'refs/tags/no-such-tag' not found in '$KEES'$" "names the tag and the repository"
one_line "unknown tag"

run "$PULLGATE" verify --upstream "$UP" "$KEES" 'bad..name'
is "$rc" 3 "an invalid tag name: exit 3"
like "$err" "^error: 'bad\.\.name' is not a valid tag name$" "says so"

run "$PULLGATE" verify --upstream "$FX/upstream.git:no-such-branch" "$KEES" hardening-v6.16-rc1-fix1-take2
is "$rc" 3 "an unknown upstream branch: exit 3"
like "$err" "^error: 'refs/heads/no-such-branch' not found in '$FX/upstream.git'$" "names the branch"
run sh -c 'cd "$1" && exec "$2" verify --upstream upstream.git:no-such-branch "$3" "$4"' - \
	"$FX" "$PULLGATE" "$KEES" hardening-v6.16-rc1-fix1-take2
is "$rc" 3 "a relative upstream path with a branch: exit 3 for the unknown branch"
like "$err" "^error: 'refs/heads/no-such-branch' not found in '.*upstream.git'$" \
	"the branch is split off a relative path too"

run "$PULLGATE" verify "$KEES" hardening-v6.16-rc1-fix1-take2
is "$rc" 2 "no upstream at all is a usage error"
like "$err" "^error: no upstream: give --upstream or a policy that names one$" "says what to give"

run "$PULLGATE" verify --upstream "$UP" "$KEES"
is "$rc" 2 "a missing tag argument: exit 2"
like "$err" "^usage: pullgate verify " "prints the usage"

run "$PULLGATE" verify --frobnicate --upstream "$UP" "$KEES" x
is "$rc" 2 "an unknown option: exit 2"
like "$err" "^error: unknown option '--frobnicate'$" "names the option"
for cmd in verify gate serve; do
	run "$PULLGATE" $cmd -xyz
	like "$err" "^error: unknown option '-x'$" "$cmd names a wrong short option, not the command"
done
run "$PULLGATE" verify "$KEES" x --upstream
like "$err" "^error: option '--upstream' wants a value$" "an option without its value says so"
run "$PULLGATE" serve --port
like "$err" "^error: option '--port' wants a value$" "in every command"
run "$PULLGATE" gate --tree
is "$rc" 2 "a missing value is a usage error"

run "$PULLGATE" verify --max-commits ten --upstream "$UP" "$KEES" x
is "$rc" 2 "a bad number: exit 2"
run "$PULLGATE" verify --protect torvalds --upstream "$UP" "$KEES" x
is "$rc" 2 "an identity that is not an e-mail address: exit 2"
run "$PULLGATE" verify --protect "$(printf 'evil\033]0;title\007\033[31m')" --upstream "$UP" "$KEES" x
like "$err" "^error: 'evil' is not an e-mail address$" "an argument echoed in an error is printed clean"

# A tag whose commit is already upstream: an empty pull is a warning, not a crash.
git clone -q --bare "$FX/upstream.git" "$SCRATCH/up2.git"
git --git-dir="$SCRATCH/up2.git" tag already-in master
run "$PULLGATE" verify --upstream "$UP" "$SCRATCH/up2.git" already-in
ok "$([ "$rc" -le 1 ]; echo $?)" "a tag of an upstream commit is still a verdict"
like "$out" "range-size .* the pull is empty" "the empty pull is reported"

# A policy cap on the pull's size.
run "$PULLGATE" verify --keyring "$KEYRING" --trust "$FPR_KEES" --max-commits 3 --upstream "$UP" "$KEES" hardening-v6.16-rc1-fix1-take2
like "$out" "the pull has 4 commits, the policy allows 3" "--max-commits caps the pull's size"
is "$rc" 0 "range-size is a warning by default"
