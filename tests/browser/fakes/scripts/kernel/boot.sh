#!/bin/sh
# boot.sh - the stand-in boot of tests/fakes, for the browser test's data dir.
exec "$(dirname "$0")/../../../../fakes/scripts/kernel/boot.sh" "$@"
