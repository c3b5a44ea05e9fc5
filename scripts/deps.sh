#!/bin/sh
# deps.sh - install the Debian packages pullgate needs that are missing; idempotent.
set -eu

# Build and runtime libraries, the test tools, and the kernel toolchain.
PKGS="
make gcc pkg-config git gnupg perl jq curl sqlite3
libgit2-dev libgpgme-dev libyaml-dev libmicrohttpd-dev libsqlite3-dev
libjansson-dev libssl-dev libcmocka-dev
git-filter-repo
gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-12-plugin-dev-aarch64-linux-gnu
g++ python3 util-linux openssl wrk
qemu-system-arm linux-source-6.12 ccache clang lld llvm
bc bison flex libelf-dev cpio xz-utils kmod patch
"
# g++ builds the kernel's GCC plugins (randstruct) on the host; python3 runs
# git-filter-repo and kunit.py; util-linux has flock, which serializes kernel jobs;
# openssl signs hooks in scripts/demo.sh; wrk drives bench/serve.sh.

missing=""
for p in $PKGS; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$status" = installed ] || missing="$missing $p"
done

if [ -n "$missing" ]; then
	echo "deps: installing:$missing"
	SUDO=""
	if [ "$(id -u)" -ne 0 ]; then
		command -v sudo >/dev/null 2>&1 || {
			echo "deps: error: not root and no sudo; install:$missing" >&2
			exit 1
		}
		SUDO=sudo
	fi
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -q
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -q --no-install-recommends $missing
fi

# Each fragment in mk/ may name more setup (npm packages for the browser test).
for extra in "$(dirname "$0")"/deps.d/*.sh; do
	[ -e "$extra" ] || continue
	sh "$extra"
done
exit 0
