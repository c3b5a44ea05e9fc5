# tlog.sh - a test's transparency log: fixtures/tlog.sh's log of the incident's pushes, and records added to it (sourced after fixtures.sh).

# tlog_build DIR: the log in DIR/tlog (fixtures/tlog.sh, from $FX), its ids (TAG_<NAME>, BASE,
# MASTER) set from DIR/tlog.env
tlog_build() {
	"$TOP/fixtures/tlog.sh" "$FX" "$1" >/dev/null
	. "$1/tlog.env"
}

# tlog_append EPOCH FILE: the message in FILE becomes the next commit of the epoch's master
tlog_append() {
	_blob=$(git -C "$1" hash-object -w "$2")
	_tree=$(printf '100644 blob %s\tm\n' "$_blob" | git -C "$1" mktree)
	_c=$(GIT_AUTHOR_NAME=G GIT_AUTHOR_EMAIL=g@k GIT_COMMITTER_NAME=G GIT_COMMITTER_EMAIL=g@k \
		git -C "$1" commit-tree "$_tree" -p "$(git -C "$1" rev-parse master)" -m next)
	git -C "$1" update-ref refs/heads/master "$_c"
}

# tlog_push EPOCH MESSAGE-ID USER REF OLD NEW: a plain push record of Kees's repository appended
tlog_push() {
	cat >"$SCRATCH/.tlog.msg" <<EOM
Message-Id: $2
Date: Mon, 02 Jun 2025 09:00:00 -0000

---
service: git-receive-pack
repo: pub/scm/linux/kernel/git/kees/linux
user: $3
changes:
  - ref: $4
    old: $5
    new: $6
EOM
	tlog_append "$1" "$SCRATCH/.tlog.msg"
}
