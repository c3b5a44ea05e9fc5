#!/bin/sh
# build.sh - the stand-in build of tests/fakes, slowed down so that the browser sees it run.
sleep "${BROWSER_BUILD_DELAY:-2}"
exec "$(dirname "$0")/../../../../fakes/scripts/kernel/build.sh" "$@"
