#!/bin/sh
# 98-serve-tlog-intake.t - serve following a transparency log (intake.transparency): pushes appended to the log's origin, fetched, become jobs once each; a restart resumes; other records, a broken config.
set -eu
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/fixtures.sh"
. "$(dirname "$0")/../lib/serve.sh"
plan 60

# --- a broken intake section is a configuration error, in one line ---------------------------
bad_config() { # YAML EXPECTED WHAT
	serve_setup "$1"
	run "$PULLGATE" serve --config "$CONFIG"
	is "$rc" 3 "$3: exit 3"
	like "$err" "$2" "$3: said where and what"
	is "$(printf '%s\n' "$err" | wc -l | tr -d ' ')" 1 "$3: in one line"
}
bad_config "intake:
  transparency:
    log: /nonexistent" \
	"serve.yaml:[0-9]+:[0-9]+: .*'repos'" "no repositories watched"
bad_config "intake:
  transparency:
    log: /nonexistent
    repos: [pub/scm/linux/kernel/git/kees/linux]
    fetch-seconds: 0" \
	"serve.yaml:[0-9]+:[0-9]+: 'intake.transparency.fetch-seconds' wants at least 1" "fetch-seconds 0"
bad_config "intake:
  transparency:
    log: /nonexistent
    repos: ['../../etc']" \
	"serve.yaml:[0-9]+:[0-9]+: 'intake.transparency.repos\\[0\\]' " "a repository that is no plain path"

# --- the log: tlog.sh's as the origin, a mirror of each epoch followed --------------------------
T="$SCRATCH/tlog"
"$TOP/fixtures/tlog.sh" "$FX" "$T" >/dev/null
. "$T/tlog.env"
FOLLOWED="$SCRATCH/followed"
mkdir -p "$FOLLOWED/git"
for e in 0 1; do git clone -q --mirror "$T/tlog/git/$e.git" "$FOLLOWED/git/$e.git"; done
# appending: to the origin's epoch 1, after tlog.sh's 12 messages (fixtures/tlog-lib.sh)
TLOG=$T/tlog TLOG_TMP=$T EPOCH=1 N=12
. "$TOP/fixtures/tlog-lib.sh"
KORG=pub/scm/linux/kernel/git
msgid() { message_id "$1"; }
delivery() { printf 'tlog:174877%04d.1.%d@gitolite.kernel.org' "$1" "$1"; }

# the jobs fetch from url-base + repo + .git, here the fixture's mirror under its kernel.org path
serve_setup "intake:
  transparency:
    log: $FOLLOWED
    repos: [$KEES_NAME]
    tags: ['hardening-*', 'rebase-*', 'cherry-*', 'submerge-*']
    url-base: $T/
    fetch-seconds: 1"
sed -i "/^    $(printf '%s' "$KEES_NAME" | sed 's|/|\\/|g'): /d; s/^pipeline:\$/pipeline:\n  stages: []/" "$CONFIG"
sed -i "s|^repositories:\$|repositories:\n  - '$T/$KORG/*/*.git'|" "$SCRATCH/policy.yaml"

total() { curl -s "$URL/api/pulls" | jq -r .total; }
total_is() { [ "$(total)" = "$1" ]; }
said() { grep -q -- "$1" "$SCRATCH/serve.err"; }
said_times() { [ "$(grep -c -- "$2" "$SCRATCH/serve.err")" -ge "$1" ]; }
jobs_of() { # TAG: the ids of the jobs of refs/tags/TAG
	curl -s "$URL/api/pulls?limit=100" | jq -r --arg t "refs/tags/$1" '[.pulls[] | select(.tag == $t) | .id] | join(" ")'
}

serve_start
ok "$(wait_for said "following from its end (2 epochs)"; echo $?)" \
	"a first start follows the log from its end"
is "$(total)" 0 "the records already in the log make no job"

# --- pushes appended while serve runs, fetched from the origin ------------------------------------
plain_push "$KORG/torvalds/linux" torvalds refs/tags/rebase-carry "$ZERO" "$TAG_rebase"  # 12: not watched
plain_push "$KEES_NAME" kees refs/tags/committer-date "$ZERO" "$TAG_committer"          # 13: no glob
plain_push "$KEES_NAME" kees refs/tags/cherry-pick-old "$TAG_cherry" "$ZERO"            # 14: deleted
printf 'Message-Id: <hostile@gitolite.kernel.org>\n\n---\n{{{ not yaml\n' >"$TLOG_TMP/msg"  # 15: no record
append
plain_push "$KEES_NAME" kees refs/heads/master "$ZERO" "$BASE"                          # 16: a branch
{ headers "$KEES_NAME"; change refs/tags/rebase-carry "$ZERO" "$TAG_rebase" | body "$KEES_NAME" kees; } \
	>"$TLOG_TMP/msg"
cp "$TLOG_TMP/msg" "$SCRATCH/rebase.msg"
append                                                                                  # 17: a job
wait_for total_is 1 || true
is "$(total)" 1 "of six pushes appended to the origin, the watched tag's becomes a job"
ID=$(jobs_of rebase-carry)
is "$(pull_field "$ID" '[.kind, .repo_name, .tag, .delivery, .sender] | join(" ")')" \
	"push $KEES_NAME refs/tags/rebase-carry $(delivery 17) kees" \
	"a push record's job, its delivery the record's Message-Id"
is "$(pull_field "$ID" .repo)" "$T/$KORG/kees/linux.git" "fetched from url-base, the repository and .git"
ok "$(wait_for said "epoch 1 commit [0-9a-f]* is no push record, skipped: "; echo $?)" \
	"the message that is no push record is skipped with a line"
ok "$(said "$KORG/torvalds/linux\|committer-date\|cherry-pick-old" && echo 1 || echo 0)" \
	"an unwatched repository, a tag no glob takes, a deletion and a branch are no word and no job"
ok "$(said "tlog delivery $(delivery 17): 1 new job, 0 open already" && echo 0 || echo 1)" \
	"the job's delivery is logged"
# the verify it runs is the push record's: the tag object the record named
wait_state "$ID" verified rejected error >/dev/null || true
is "$(pull_field "$ID" .tag_object)" "$TAG_rebase" "its verify read the tag object the record names"

# two tags in one push: two jobs of one delivery
{
	headers "$KEES_NAME"
	{ change refs/tags/cherry-pick-old "$ZERO" "$TAG_cherry"
	  change refs/tags/submerge-signed "$ZERO" "$TAG_submerge"; } | body "$KEES_NAME" kees
} >"$TLOG_TMP/msg"
append                                                                                  # 18
wait_for total_is 3 || true
is "$(total)" 3 "a push of two watched tags makes two jobs"
is "$(curl -s "$URL/api/pulls?limit=100" | jq -r --arg d "$(delivery 18)" '[.pulls[] | select(.delivery == $d)] | length')" 2 \
	"both of its delivery"

# --- a fetch that fails is said and tried again, never fatal --------------------------------------
git -C "$FOLLOWED/git/1.git" config remote.origin.url "$SCRATCH/no-such-log.git"
ok "$(wait_for said "fetch failed, tried again in 1 s: epoch 1: "; echo $?)" "a failed fetch is logged"
n=$(grep -c "fetch failed" "$SCRATCH/serve.err")
ok "$(wait_for said_times $((n + 1)) "fetch failed"; echo $?)" "and tried again at the next turn"
is "$(curl -s -o /dev/null -w '%{http_code}' "$URL/healthz")" 200 "the service goes on"
git -C "$FOLLOWED/git/1.git" config remote.origin.url "$T/tlog/git/1.git"

# --- a restart: what was appended while it was down becomes jobs, nothing twice -------------------
serve_stop
is "$SERVE_RC" 0 "serve stops cleanly"
plain_push "$KEES_NAME" kees refs/tags/hardening-v6.16-rc1-fix1 "$ZERO" "$TAG_take1"      # 19: a job
cp "$SCRATCH/rebase.msg" "$TLOG_TMP/msg"
append                                                                                  # 20: 17 again
: >"$SCRATCH/serve.err"
serve_start
ok "$(wait_for said "following from the cursor the store kept (2 epochs)"; echo $?)" \
	"a restart follows from the cursor the store kept"
wait_for total_is 4 || true
ok "$(wait_for said "2 messages read, 1 new job"; echo $?)" "the two messages appended while it was down are read"
is "$(total)" 4 "the push made while it was down is a job"
is "$(pull_field "$(jobs_of hardening-v6.16-rc1-fix1)" .delivery)" "$(delivery 19)" "of its record"
is "$(jobs_of rebase-carry)" "$ID" "the same record found again in the log makes no second job"

# --- the cursor set back (as a stop before it was saved leaves it): every record again, no job -----
serve_stop
DB="$SCRATCH/state/pullgate.db"
# epoch 1 back to tlog.sh's last message: 12 to 20 are read again
TIP11=$(git -C "$FOLLOWED/git/1.git" rev-parse master~9)
python3 - "$DB" "$FOLLOWED" "$TIP11" <<'EOF'
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
key = "tlog-intake:" + os.path.realpath(sys.argv[2])
(v,) = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
lines = v.split("\n")
lines[2] = "000001 " + sys.argv[3]
db.execute("UPDATE meta SET value = ? WHERE key = ?", ("\n".join(lines), key))
db.commit()
EOF
: >"$SCRATCH/serve.err"
serve_start
ok "$(wait_for said "9 messages read, 0 new jobs"; echo $?)" "the records past the cursor set back are read again"
is "$(total)" 4 "and make no job twice: each record's Message-Id is its delivery"

# --- a cursor that does not read back: said, and followed from the log's end ----------------------
serve_stop
python3 - "$DB" "$FOLLOWED" <<'EOF'
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
key = "tlog-intake:" + os.path.realpath(sys.argv[2])
db.execute("UPDATE meta SET value = 'pullgate-tlog-cursor 1 2\n000000 zz\n' WHERE key = ?", (key,))
db.commit()
EOF
: >"$SCRATCH/serve.err"
serve_start
ok "$(wait_for said "the cursor the store kept does not read back (the cursor holds"; echo $?)" \
	"a damaged cursor is said"
ok "$(wait_for said "following from its end (2 epochs)"; echo $?)" "and the log is followed from its end"
plain_push "$KEES_NAME" kees refs/tags/hardening-v6.16-rc1-fix1-take2 "$ZERO" "$TAG_take2" # 21
wait_for total_is 5 || true
is "$(total)" 5 "a push after it is a job"
serve_stop
is "$SERVE_RC" 0 "serve stops cleanly"

# --- a reload: the watched tags change at the next read --------------------------------------------
: >"$SCRATCH/serve.err"
serve_start
plain_push "$KEES_NAME" kees refs/tags/hardening-reload "$ZERO" "$TAG_take2"              # 22: a job
wait_for total_is 6 || true
is "$(jobs_of hardening-reload | wc -w | tr -d ' ')" 1 "before a reload, a tag 'hardening-*' takes makes a job"
sed -i "s/tags: \\['hardening-\\*'/tags: ['nothing-*'/" "$CONFIG"
is "$(grep -c "tags: \['nothing-\*'" "$CONFIG")" 1 "the configuration's globs changed"
kill -HUP "$SERVE_PID"
ok "$(wait_for said "reloaded "; echo $?)" "a reload is taken"
plain_push "$KEES_NAME" kees refs/tags/hardening-reloaded "$ZERO" "$TAG_take2"            # 23: no glob now
plain_push "$KEES_NAME" kees refs/tags/rebase-carry "$TAG_rebase" "$TAG_take1"            # 24: a job
wait_for total_is 7 || true
is "$(total)" 7 "after the reload, a tag still matched makes a job"
is "$(jobs_of hardening-reloaded)" "" "and one the new globs no longer take makes none"
is "$(grep -c "tlog delivery" "$SCRATCH/serve.err")" 2 "one delivery logged before the reload, one after"

# --- a watched tag's record whose Message-Id is no msg-id: skipped with a line, no job -------------
{ headers "$KEES_NAME" | sed 's/^Message-Id: .*/Message-Id: <two words@gitolite.kernel.org>/'
  change refs/tags/rebase-carry "$ZERO" "$TAG_rebase" | body "$KEES_NAME" kees; } >"$TLOG_TMP/msg"
append                                                                                  # 25
ok "$(wait_for said "commit [0-9a-f]*, a push to $KEES_NAME, is skipped: the record's Message-Id is not one msg-id"; echo $?)" \
	"a record without a usable Message-Id is skipped with a line"
is "$(total)" 7 "and makes no job"

# --- commits that hold no message: public-inbox's deletion is no word, any other a line ------------
odd_commit() { # TREE-ENTRY: a commit of the origin's epoch whose tree is that one entry, in $ODD
	ODD=$(printf '%s\n' "$1" | git -C "$TLOG/git/$EPOCH.git" mktree)
	ODD=$(git -C "$TLOG/git/$EPOCH.git" commit-tree "$ODD" -p refs/heads/master -m "odd $N")
	git -C "$TLOG/git/$EPOCH.git" update-ref refs/heads/master "$ODD"
	N=$((N + 1))
}
odd_commit "100644 blob $(echo deleted | git -C "$TLOG/git/1.git" hash-object -w --stdin)	d" # 26
DELETION=$ODD
odd_commit "040000 tree $(git -C "$TLOG/git/1.git" mktree </dev/null)	m"                 # 27
ok "$(wait_for said "epoch 1 commit $ODD is no push record, skipped: the commit's 'm' is a tree, not a file"; echo $?)" \
	"a commit whose 'm' is a tree is skipped with a line"
ok "$(said "$DELETION" && echo 1 || echo 0)" "a commit that deletes a message ('d', no 'm') is no word"

# --- a first start whose fetch fails: the log's end is taken once every epoch was fetched ---------
# (a fresh store: no cursor; the clone lacks what the origin gained)
serve_stop
sed -i "s|^state: .*|state: $SCRATCH/state-first|" "$CONFIG"
git -C "$FOLLOWED/git/1.git" config remote.origin.url "$SCRATCH/no-such-log.git"
plain_push "$KEES_NAME" kees refs/tags/rebase-before "$ZERO" "$TAG_take2"                 # 28
: >"$SCRATCH/serve.err"
serve_start
ok "$(wait_for said "its end is taken as the start once every epoch with an origin was fetched"; echo $?)" \
	"a first start whose fetch failed sets no cursor from the clone"
plain_push "$KEES_NAME" kees refs/tags/rebase-while "$ZERO" "$TAG_take2"                  # 29
git -C "$FOLLOWED/git/1.git" config remote.origin.url "$T/tlog/git/1.git"
ok "$(wait_for said "following from its end (2 epochs)"; echo $?)" \
	"the fetch that succeeds sets it at the log's end"
plain_push "$KEES_NAME" kees refs/tags/rebase-after "$ZERO" "$TAG_take2"                  # 30
wait_for total_is 1 || true
is "$(jobs_of rebase-after | wc -w | tr -d ' ')" 1 "a push after that is a job"
is "$(total)" 1 "the pushes before the service first saw the log's end are none"

# --- the origin's epoch 1 written again: taken at its master, what it holds is no job --------------
git -C "$TLOG/git/1.git" update-ref -d refs/heads/master
plain_push "$KEES_NAME" kees refs/tags/rebase-rewritten "$ZERO" "$TAG_take2"              # 31
ok "$(wait_for said "1 epoch was rewritten since it was read (the last: epoch 1): followed from its master as it is now, what it holds is not read: pushes may have been missed"; echo $?)" \
	"a rewritten epoch is said"
plain_push "$KEES_NAME" kees refs/tags/rebase-after-rewrite "$ZERO" "$TAG_take2"          # 32
wait_for total_is 2 || true
is "$(jobs_of rebase-after-rewrite | wc -w | tr -d ' ')" 1 "a push after it is a job"
is "$(jobs_of rebase-rewritten)" "" "the record the rewritten epoch holds is none"

# --- the cursor is the log's where it really is: a path that appears after the start finds it ------
serve_stop
sed -i "s|^    log: .*|    log: $SCRATCH/log-link|" "$CONFIG"
: >"$SCRATCH/serve.err"
serve_start
ok "$(wait_for said "transparency log '$SCRATCH/log-link': No such file or directory: tried again"; echo $?)" \
	"a log that is not there is said and tried again"
ln -s "$FOLLOWED" "$SCRATCH/log-link"
ok "$(wait_for said "following from the cursor the store kept (2 epochs)"; echo $?)" \
	"once there, the cursor kept for its real path is followed"

# --- a reload that removes the section: the log is followed as before, its keys kept whole ----------
sed -i '/^intake:$/,/^    fetch-seconds:/d' "$CONFIG"
is "$(grep -c "transparency:" "$CONFIG")" 0 "the configuration has no intake any more"
kill -HUP "$SERVE_PID"
ok "$(wait_for said "reloaded .*a restart is needed to change .*intake.transparency.log"; echo $?)" \
	"a reload without the section says a restart is needed"
plain_push "$KEES_NAME" kees refs/tags/rebase-kept "$ZERO" "$TAG_take2"                   # 33
wait_for total_is 3 || true
is "$(jobs_of rebase-kept | wc -w | tr -d ' ')" 1 "and the section it runs with still watches Kees's tags"

# --- the origin begins a new epoch: the service clones it and reads it from its root ----------------
EPOCH=2
plain_push "$KEES_NAME" kees refs/tags/rebase-new-epoch "$ZERO" "$TAG_take2"              # 34, epoch 2
wait_for total_is 4 || true
is "$(jobs_of rebase-new-epoch | wc -w | tr -d ' ')" 1 "a push in an epoch the origin began since is a job"
is "$(git -C "$FOLLOWED/git/2.git" config remote.origin.url)" "$T/tlog/git/2.git" \
	"the epoch was cloned next to the others, its origin made from epoch 1's"
is "$(ls -A "$FOLLOWED/git" | LC_ALL=C sort | tr '\n' ' ')" "0.git 1.git 2.git " "and nothing else was left there"
