#!/bin/sh
# browser.sh - what the dashboard's browser test needs: Debian's chromium and playwright-core from npm.
#
# Run by scripts/deps.sh.  Never downloads a browser: playwright-core drives
# /usr/bin/chromium.  Idempotent.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)

need=""
[ -x /usr/bin/chromium ] || need="$need chromium"
# a node from elsewhere (with its own npm) is fine: only ask apt for what is missing
command -v node >/dev/null 2>&1 || need="$need nodejs"
command -v npm >/dev/null 2>&1 || need="$need npm"
if [ -n "$need" ]; then
	echo "deps: installing:$need"
	SUDO=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 || { echo "deps: error: not root and no sudo; install:$need" >&2; exit 1; }
		SUDO=sudo
	fi
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -q
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -q --no-install-recommends $need
fi

# playwright-core only: PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD keeps any install hook from fetching a browser
if [ ! -d "$TOP/tests/browser/node_modules/playwright-core" ]; then
	echo "deps: npm ci in tests/browser"
	(cd "$TOP/tests/browser" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --silent)
fi
