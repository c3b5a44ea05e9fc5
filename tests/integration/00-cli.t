#!/bin/sh
# 00-cli.t - the dispatch table: known and unknown commands, exit statuses.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
plan 6

run "$PULLGATE" version
is "$rc" 0 "version exits 0"
like "$out" '^pullgate [0-9]+\.[0-9]+\.[0-9]+$' "version prints a version"

run "$PULLGATE"
is "$rc" 2 "no command is a usage error"

run "$PULLGATE" frobnicate
is "$rc" 2 "an unknown command is a usage error"
like "$err" "^error: 'frobnicate' is not a pullgate command$" "and says which"

run "$PULLGATE" "$(printf 'x\033[31mred')"
like "$err" "^error: 'xred' is not a pullgate command$" "escape sequences are stripped from echoed input"
