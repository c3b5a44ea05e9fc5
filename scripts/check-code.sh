#!/bin/sh
# check-code.sh - house rules that the compiler cannot enforce.
set -eu
cd "$(dirname "$0")/.."
fail=0
lib_dirs="common repo policies report verifier pipeline server"

# Library code never prints or exits; only cli/ does.
if grep -nE '\b(printf|fprintf|puts|fputs|perror|exit|abort)\s*\(' \
	$(find $lib_dirs -name '*.c' 2>/dev/null) | grep -vE 'snprintf|vsnprintf|/\* ok:'; then
	echo "check-code: library code must not print or exit (lines above)" >&2
	fail=1
fi

# Product code never runs git or gpg, and never hands a string to a shell.
if grep -nE '"(git|gpg|gpg2|/bin/sh|sh)"|execl|execlp|system\s*\(|popen\s*\(' \
	$(find cli $lib_dirs -name '*.c' 2>/dev/null); then
	echo "check-code: product code must not run git, gpg or a shell (lines above)" >&2
	fail=1
fi

# Only the repository layer (repo/) talks to libgit2: its header stays there.
if grep -nE '^#[[:space:]]*include[[:space:]]*[<"]git2(\.h|/)' \
	$(find cli $lib_dirs -path repo -prune -o -name '*.[ch]' -print 2>/dev/null); then
	echo "check-code: only repo/ may include git2.h (lines above)" >&2
	fail=1
fi

# zlib is read in one place, the pack reader of the repository layer.
if grep -nE '^#[[:space:]]*include[[:space:]]*[<"]zlib\.h' \
	$(find cli $lib_dirs -name '*.[ch]' 2>/dev/null) | grep -v '^repo/pack\.c:'; then
	echo "check-code: only repo/pack.c may include zlib.h (lines above)" >&2
	fail=1
fi

# libcurl is the service's one HTTP client, behind one module.
if grep -nE '^#[[:space:]]*include[[:space:]]*[<"]curl/' \
	$(find cli $lib_dirs -name '*.[ch]' 2>/dev/null) | grep -v '^server/http_client\.c:'; then
	echo "check-code: only server/http_client.c may include curl/curl.h (lines above)" >&2
	fail=1
fi

# Arrays grow through common/array.h (geometric, overflow-checked); only it
# and the string buffer call realloc.
if grep -nE '\brealloc\s*\(' $(find cli $lib_dirs -name '*.c' 2>/dev/null) |
	grep -vE '^common/(array|buf)\.c:'; then
	echo "check-code: grow arrays with PG_ARRAY_GROW (common/array.h), not realloc (lines above)" >&2
	fail=1
fi

# Files are opened through pg_open_regular (common/fs.c), which never
# blocks on a FIFO and keeps only a regular file: no bare open, fopen or
# openat elsewhere in product code.  The exceptions, each for its reason:
#   common/fs.c:     pg_open_regular itself
#   common/spawn.c:  /dev/null, a device by design, as a child's stdin
#                    between fork and exec (only async-signal-safe calls there)
open_ok='^(common/fs\.c:[0-9]+:.*open\(path, oflags, perm\)|common/spawn\.c:[0-9]+:.*open\("/dev/null", O_RDONLY\))'
if grep -nE '(^|[^a-z_.>])(open|open64|fopen|fopen64|freopen|openat|openat2|creat)[[:space:]]*\(' \
	$(find cli $lib_dirs -name '*.[ch]' 2>/dev/null) | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)' |
	grep -vE "$open_ok"; then
	echo "check-code: open files with pg_open_regular (common/fs.h), not open/fopen/openat (lines above)" >&2
	fail=1
fi

# A test skips through tests/lib/tap.sh's skip or skip_all, which log the
# reason for make check's summary: never by writing "# SKIP" itself.
if grep -rnE '(echo|printf|ok)[^#]*"[^"]*# SKIP' tests scripts --include='*.t' --include='*.sh' |
	grep -v '^tests/lib/tap\.sh:'; then
	echo "check-code: skip with tap.sh's skip or skip_all, so that make check prints the reason (lines above)" >&2
	fail=1
fi

# Every source file starts with a one-line purpose comment.
for f in $(find cli $lib_dirs tests/unit -name '*.[ch]' 2>/dev/null); do
	head -n1 "$f" | grep -qE '^/\* [^ ]+ - .+\*/$' || {
		echo "check-code: $f: first line must be '/* name - purpose. */'" >&2
		fail=1
	}
done
# Layers point down: a file includes headers of its own layer or of those
# below it, never above.  The order, lowest first (docs/architecture.md):
layers="common repo policies report verifier pipeline server cli"
rank() {
	i=0
	for l in $layers; do
		[ "$l" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo -1
}
for dir in $layers; do
	[ -d "$dir" ] || continue
	own=$(rank "$dir")
	for f in $(find "$dir" -name '*.[ch]'); do
		grep -nE '^#[[:space:]]*include[[:space:]]+"[a-z]+/' "$f" |
		while IFS= read -r line; do
			inc=$(printf '%s\n' "$line" | sed -E 's/^[0-9]+:#[[:space:]]*include[[:space:]]+"([a-z]+)\/.*/\1/')
			r=$(rank "$inc")
			if [ "$r" -gt "$own" ] || [ "$r" -lt 0 ]; then
				echo "$f:${line%%:*}: $dir/ may not include $inc/ (layers: $layers)"
			fi
		done
	done
done >"${TMPDIR:-/tmp}/pg-layers.$$"
# The report is data every layer above reads: it knows only common/ and repo/'s object ids.
grep -nE '^#[[:space:]]*include[[:space:]]+"[a-z]+/' report/*.[ch] |
	grep -vE '"(common/[a-z_]+\.h|repo/object\.h|report/[a-z_]+\.h)"' |
	sed 's/$/: report\/ includes only common\/ and repo\/object.h/' >>"${TMPDIR:-/tmp}/pg-layers.$$"
if [ -s "${TMPDIR:-/tmp}/pg-layers.$$" ]; then
	cat "${TMPDIR:-/tmp}/pg-layers.$$" >&2
	echo "check-code: a layer includes a header of a layer above it (lines above)" >&2
	fail=1
fi
rm -f "${TMPDIR:-/tmp}/pg-layers.$$"
exit $fail
