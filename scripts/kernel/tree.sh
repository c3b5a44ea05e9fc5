#!/bin/sh
# tree.sh - make $PULLGATE_HOME/linux a git repo whose debian-6.12 ref is the pristine tarball.
#
# usage: scripts/kernel/tree.sh
#
# Idempotent: when the repo and its base ref exist, it only checks them.
# The tarball is unpacked beside the final path and renamed into place
# after the base commit exists, so an interrupted run leaves nothing half
# made at $PULLGATE_HOME/linux.
set -eu
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || pg_die "usage: tree.sh"

if [ -d "$PG_LINUX/.git" ] && pg_git rev-parse -q --verify "$PG_REF_BASE^{commit}" >/dev/null; then
	want=$(sha256sum "$PG_TARBALL" | cut -d' ' -f1)
	if ! pg_git log -1 --format=%B "$PG_REF_BASE" | grep -q "sha256 $want"; then
		pg_log "warning: $PG_TARBALL changed since $PG_LINUX was made; keeping the old tree (remove $PG_LINUX to re-create it)"
	fi
	pg_log "tree: $PG_LINUX at $(pg_git rev-parse --short "$PG_REF_BASE") ($PG_REF_BASE), nothing to do"
	exit 0
fi
[ ! -e "$PG_LINUX" ] || pg_die "'$PG_LINUX' exists but is not a pullgate tree; move it away"
[ -r "$PG_TARBALL" ] || pg_die "'$PG_TARBALL' not readable (apt-get install linux-source-6.12)"

mkdir -p "$PULLGATE_HOME"
tmp="$PG_LINUX.tmp.$$"
trap 'rm -rf "$tmp"' EXIT INT TERM
rm -rf "$tmp"
mkdir -p "$tmp"

t0=$(pg_now)
pg_log "unpacking $PG_TARBALL"
tar -xJf "$PG_TARBALL" -C "$tmp" --strip-components=1
# Read from the Makefile: "make kernelversion" under a parent make prints
# directory lines into the output, and the message must be reproducible.
version=$(awk -F' *= *' '$1 == "VERSION" { v = $2 } $1 == "PATCHLEVEL" { p = $2 }
	$1 == "SUBLEVEL" { s = $2 } END { printf "%s.%s.%s", v, p, s }' "$tmp/Makefile")
sum=$(sha256sum "$PG_TARBALL" | cut -d' ' -f1)

pg_log "committing linux $version as $PG_REF_BASE"
git -C "$tmp" init -q -b "${PG_REF_BASE#refs/heads/}"
git -C "$tmp" config gc.auto 0
git -C "$tmp" config core.autocrlf false
git -C "$tmp" config user.name pullgate
git -C "$tmp" config user.email pullgate@invalid
# -f: the tarball is the truth, including files the kernel's .gitignore names.
git -C "$tmp" add -A -f .
git -C "$tmp" commit -q --no-verify -m "linux-source-6.12 $version (Debian)

Unpacked from $PG_TARBALL
sha256 $sum"
mv "$tmp" "$PG_LINUX"
trap - EXIT INT TERM
pg_log "tree: $PG_LINUX at $(pg_git rev-parse --short "$PG_REF_BASE") in $(($(pg_now) - t0)) s"
