#!/bin/sh
# series.sh - build the pre-fixes and series refs in $PULLGATE_HOME/linux and report each seed.
#
# usage: scripts/kernel/series.sh apply    make refs/heads/pre-fixes and
#                                          refs/heads/series, check out series
#        scripts/kernel/series.sh report   print one line per seed commit:
#                                          <sha> <applied|ported|present|not-applicable> <detail>
#
# Every patch is applied to a throwaway index (git apply --cached), so the
# working tree is only touched by the final checkout, which git refuses
# when it would overwrite local changes.  Commits are reproducible (fixed
# names and dates), so an unchanged series gives the same ids and a rerun
# changes nothing on disk.
set -eu
. "$(dirname "$0")/lib.sh"

usage() { pg_die "usage: series.sh apply|report"; }
[ $# -eq 1 ] || usage
cmd=$1
case $cmd in apply|report) ;; *) usage ;; esac

[ -d "$PG_LINUX/.git" ] || pg_die "'$PG_LINUX' is not a git repo; run scripts/kernel/tree.sh"
pg_git rev-parse -q --verify "$PG_REF_BASE^{commit}" >/dev/null ||
	pg_die "'$PG_LINUX' has no $PG_REF_BASE"

PG_TMPIDX="$PG_LINUX/.git/pullgate-index.$$"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/pullgate-series.XXXXXX")
trap 'rm -f "$PG_TMPIDX"; rm -rf "$scratch"' EXIT INT TERM

# Series patch names, in order, without comments and blank lines.
series_patches() {
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$PG_PATCHES/series" | grep -v '^$' || true
}

# The commit message of a patch: everything before its first "---" line.
patch_message() {
	sed -n '/^---$/q;p' "$1"
}

# Seed table rows: sha<TAB>file<TAB>reason
seed_rows() {
	grep -v '^#' "$PG_PATCHES/seeds" | grep -v '^$' || true
}

seed_subject() {
	awk 'seen && NF { print; exit } /^Date:/ { seen = 1 }' "$1"
}

# reverse_check PATCH: prints "" (full context) or "-C1" when the patch
# reverse-applies to the base tree; fails otherwise.
reverse_check() {
	pg_git_tmpidx read-tree "$PG_REF_BASE"
	if pg_git_tmpidx apply --cached --check -R "$1" 2>/dev/null; then
		echo ""
	elif pg_git_tmpidx apply --cached --check -R -C1 "$1" 2>/dev/null; then
		echo "-C1"
	else
		return 1
	fi
}

# The series patch whose header names upstream commit SHA (a prefix).
series_patch_for() {
	for p in $(series_patches); do
		if grep -Eq "^commit $1[0-9a-f]* upstream\.$" "$PG_PATCHES/$p"; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# Commit the tree in the temporary index on top of PARENT with message file.
commit_index() {
	tree=$(pg_git_tmpidx write-tree)
	pg_git commit-tree "$tree" -p "$1" -F "$2"
}

build_pre_fixes() {
	base=$(pg_git rev-parse "$PG_REF_BASE^{commit}")
	msg="$scratch/pre-fixes.msg"
	reverted=""
	{
		echo "pre-fixes: revert the seed changes that 6.12.y already has"
		echo
		echo "Upstream as it stood before the hardening-v6.16-rc1-fix1 pull, for"
		echo "merging that pull.  Made by scripts/kernel/series.sh: each seed below"
		echo "reverse-applied cleanly to $PG_REF_BASE and is reverted here."
		echo
	} >"$msg"
	seed_rows | while IFS='	' read -r sha file _reason; do
		if ctx=$(reverse_check "$PG_PATCHES/$file"); then
			echo "$sha $ctx" >>"$scratch/present"
		fi
	done
	pg_git_tmpidx read-tree "$PG_REF_BASE"
	if [ -s "$scratch/present" ]; then
		while read -r sha ctx; do
			file=$(seed_rows | awk -F'	' -v s="$sha" '$1 == s { print $2 }')
			# shellcheck disable=SC2086
			pg_git_tmpidx apply --cached -R $ctx "$PG_PATCHES/$file" 2>"$scratch/err" || {
				cat "$scratch/err" >&2
				pg_die "reverting '$file' failed"
			}
			echo "Revert: $sha $(seed_subject "$PG_PATCHES/$file")" >>"$msg"
			reverted=1
		done <"$scratch/present"
	fi
	if [ -n "$reverted" ]; then
		commit_index "$base" "$msg"
	else
		echo "$base"
	fi
}

build_series() {
	parent=$(pg_git rev-parse "$PG_REF_BASE^{commit}")
	pg_git_tmpidx read-tree "$PG_REF_BASE"
	for p in $(series_patches); do
		f="$PG_PATCHES/$p"
		[ -r "$f" ] || pg_die "series names '$p', which is not in $PG_PATCHES"
		pg_git_tmpidx apply --cached "$f" 2>"$scratch/err" || {
			cat "$scratch/err" >&2
			pg_die "'$p' does not apply"
		}
		{ patch_message "$f"; echo; echo "Pullgate-Patch: patches/linux-6.12/$p"; } >"$scratch/msg"
		parent=$(commit_index "$parent" "$scratch/msg")
	done
	echo "$parent"
}

# Move the checked-out series branch to COMMIT, touching only changed files.
checkout_series() {
	new=$1
	if [ -n "$(pg_git status --porcelain --untracked-files=no)" ]; then
		pg_die "'$PG_LINUX' has local changes; commit or reset them (git -C '$PG_LINUX' status)"
	fi
	head=$(pg_git symbolic-ref -q HEAD || true)
	if [ "$head" = "$PG_REF_SERIES" ]; then
		[ "$(pg_git rev-parse HEAD)" = "$new" ] && return 0
		pg_git reset -q --keep "$new"
	else
		pg_git update-ref "$PG_REF_SERIES" "$new"
		pg_git checkout -q "${PG_REF_SERIES#refs/heads/}"
	fi
}

do_apply() {
	pre=$(build_pre_fixes)
	pg_git update-ref "$PG_REF_PRE" "$pre"
	tip=$(build_series)
	checkout_series "$tip"
	pg_log "pre-fixes: $(pg_git rev-parse --short "$PG_REF_PRE"), series: $(pg_git rev-parse --short "$PG_REF_SERIES") ($(series_patches | wc -l) patches), checked out"
}

do_report() {
	bad=0
	seed_rows > "$scratch/rows"
	while IFS='	' read -r sha file reason; do
		f="$PG_PATCHES/$file"
		subject=$(seed_subject "$f")
		if ctx=$(reverse_check "$f"); then
			if [ -n "$ctx" ]; then
				detail="reverse-apply check passed on ${PG_REF_BASE#refs/heads/} with context reduced to 1 line (6.12's surrounding lines differ)"
			else
				detail="reverse-apply check passed on ${PG_REF_BASE#refs/heads/}"
			fi
			status=present
		elif p=$(series_patch_for "$sha"); then
			pg_git_tmpidx read-tree "$PG_REF_BASE"
			if pg_git_tmpidx apply --cached --check "$f" 2>/dev/null; then
				status=applied
				detail="patches/linux-6.12/$p"
			else
				why=$(pg_git_tmpidx apply --cached --check "$f" 2>&1 | head -n1 | sed 's/^error: //')
				status=ported
				detail="patches/linux-6.12/$p (upstream patch does not apply: $why)"
			fi
		else
			pg_git_tmpidx read-tree "$PG_REF_BASE"
			if pg_git_tmpidx apply --cached --check "$f" 2>/dev/null; then
				status=missing
				detail="the upstream patch applies but no series patch carries it"
				bad=1
			elif [ "$reason" = "-" ] || [ -z "$reason" ]; then
				status=unknown
				detail="does not apply, is not present, and has no port or reason"
				bad=1
			else
				why=$(pg_git_tmpidx apply --cached --check "$f" 2>&1 | head -n1 | sed 's/^error: //')
				status=not-applicable
				detail="$reason (upstream patch does not apply: $why)"
			fi
		fi
		printf '%s  %-14s %s\n' "$sha" "$status" "$subject"
		printf '              %s\n' "$detail"
	done < "$scratch/rows"
	return $bad
}

case $cmd in
apply) do_apply ;;
report) do_report ;;
esac
