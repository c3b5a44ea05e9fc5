#!/bin/sh
# deps.sh - install the Debian packages pullgate needs that are missing; idempotent.
set -eu

# Build and runtime libraries, the test tools, and the kernel toolchain.
PKGS="
make gcc pkg-config git gnupg perl jq curl sqlite3 time
libgit2-dev libgpgme-dev libyaml-dev libmicrohttpd-dev libsqlite3-dev
libjansson-dev libssl-dev libcmocka-dev zlib1g-dev libcurl4-openssl-dev
git-filter-repo
gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-12-plugin-dev-aarch64-linux-gnu
g++ python3 util-linux openssl wrk
qemu-system-arm linux-source-6.12 ccache clang lld llvm libclang-rt-14-dev
bc bison flex libelf-dev cpio xz-utils kmod patch
scdoc groff-base man-db bash-completion systemd
dpkg-dev debhelper lintian python3-aiosmtpd b4 tmux distcc icecc iproute2 lava-common lava-dispatcher
python3-jsonschema
"
# g++ builds the kernel's GCC plugins (randstruct) on the host; python3 runs
# git-filter-repo and kunit.py; util-linux has flock, which serializes kernel jobs.
# scdoc writes the man pages and groff-base renders them (the help text); man-db
# and bash-completion test the installed pages and completion; systemd has
# systemd-analyze for the unit; dpkg-dev, debhelper and lintian build and
# check the .deb (make check-deb); python3-aiosmtpd is the SMTP relay the
# notice is tested against, and the sink make demo mails its notice to
# (scripts/demo.sh); b4 writes the mboxes verify --pull-request takes
# (tests/integration/31-mail-b4.t); tmux captures the terminal for docs/.
# clang (14 on Debian 12) with libclang-rt-14-dev's libFuzzer builds the fuzz
# targets (mk/fuzz.mk).
# distcc: builds on distcc hosts (check-distcc runs two distccd on loopback);
# icecc: builds on an icecream farm (check-icecc runs a scheduler and two
# iceccd in a network namespace); its package would start a system iceccd
# and scheduler that join any farm on the network: when this script installs
# it, it stops them and keeps them from starting again (update-rc.d disable);
# iproute2: ip, which brings up the loopback of check-icecc's network namespace;
# lava-common: LAVA's own job schema, which every generated LAVA job must pass;
# lava-dispatcher: lava-run, LAVA's dispatcher, which check-kernel runs jobs with.
# python3-jsonschema: the validator every KCIDB document gate --kcidb writes in
# the tests must pass (tests/lib/kcidb_check.py, tests/kcidb/kcidb-v5.schema.json).

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

# icecream's package starts its daemons as system services: not ours to run
case " $missing " in
*" icecc "*)
	for svc in iceccd icecc-scheduler; do
		[ -x "/etc/init.d/$svc" ] || continue
		$SUDO /etc/init.d/$svc stop >/dev/null 2>&1 || true
		$SUDO update-rc.d "$svc" disable >/dev/null 2>&1 || true
		if command -v systemctl >/dev/null 2>&1; then
			$SUDO systemctl disable --now "$svc.service" >/dev/null 2>&1 || true
		fi
	done ;;
esac

# Each fragment in mk/ may name more setup (npm packages for the browser test).
for extra in "$(dirname "$0")"/deps.d/*.sh; do
	[ -e "$extra" ] || continue
	sh "$extra"
done
exit 0
