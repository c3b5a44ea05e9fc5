#!/bin/sh
# make-identity-seed.sh - real identity index files for the fuzz seeds: a verify of a small upstream.
#
#   tests/fuzz/make-identity-seed.sh PULLGATE OUTDIR
#
# Makes an upstream of 24 commits (tests/unit/make-history.sh), a pull of
# one more, verifies it with a home of its own, and copies the .idx and
# .subj files the verify made to OUTDIR (tests/fuzz/identity_index/).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
pg=$1
out=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-seed.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$top/tests/unit/make-history.sh" "$tmp/up.git" 24 3 600 >/dev/null
git clone -q --bare "$tmp/up.git" "$tmp/pull.git"
c=$(git -C "$tmp/pull.git" commit-tree -p main -m "lib: one more" 'main^{tree}')
git -C "$tmp/pull.git" tag seed "$c"
PULLGATE_HOME="$tmp/home" "$pg" verify --upstream "$tmp/up.git:main" "$tmp/pull.git" seed \
	>/dev/null || [ $? -eq 1 ]
mkdir -p "$out"
cp "$tmp"/home/identity/*.idx "$out/small.idx"
cp "$tmp"/home/identity/*.subj "$out/small.subj"
