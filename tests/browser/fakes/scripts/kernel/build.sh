#!/bin/sh
# build.sh - the stand-in build of tests/fakes, held part of the way so that the browser sees it run.
#
# Once BROWSER_HOLD exists (serve-fixture.sh makes it when its own pulls are
# done), a build stops after FAKE_OBJECTS_HOLD (20) objects until
# BROWSER_GO exists: the browser test makes it when it has seen the build.
if [ -n "${BROWSER_HOLD:-}" ] && [ -e "$BROWSER_HOLD" ]; then
	export FAKE_OBJECTS_HOLD="${FAKE_OBJECTS_HOLD:-20}" FAKE_OBJECTS_GO="$BROWSER_GO"
fi
exec "$(dirname "$0")/../../../../fakes/scripts/kernel/build.sh" "$@"
