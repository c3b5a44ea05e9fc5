#!/usr/bin/env python3
# make-cases.py - mergetags on a generated upstream, and the pulls bench/verify.sh times.
#
#   bench/make-cases.py mergetags UPSTREAM.git INFO MARKS
#       Rewrite the tail of mainline that gen-history.py left (INFO, and the
#       marks fast-import exported to MARKS) so that each merge carries a
#       mergetag header, as merges of signed tags do; master moves there.
#
#   bench/make-cases.py pulls UPSTREAM.git PULLS.git KEY-FPR
#       Make PULLS.git (borrowing UPSTREAM.git's objects, as a fork on
#       kernel.org does) and one signed tag per case, each dated just after
#       upstream's tip:
#         incident     the 35 newest mainline merges rewritten with their
#                      mergetag dropped (35 copies), and 4 own commits
#         oldbase      4 commits on a mainline commit 10,500 commits back
#         oldauthor7   4 commits on the tip, one authored 7 days earlier
#         oldauthor30  the same, 30 days earlier
#         pull40, pull1000, pull10000  that many commits on the tip
#       Prints "CASE TAG EXPECTED-COPIES" per case.
import os
import subprocess
import sys

DAY = 86400


def git(gitdir, *args, data=None, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    r = subprocess.run(["git", "--git-dir", gitdir] + list(args), input=data,
                       stdout=subprocess.PIPE, check=True, env=e)
    return r.stdout


def headers_and_body(raw):
    head, _, body = raw.partition(b"\n\n")
    return head.split(b"\n"), body


def rebuild(lines, body):
    return b"\n".join(lines) + b"\n\n" + body


def mergetags(up, info, marks):
    mark_sha = {}
    with open(marks) as f:
        for line in f:
            m, sha = line.split()
            mark_sha[m.lstrip(":")] = sha
    tail, merged = [], {}
    with open(info) as f:
        for line in f:
            w = line.split()
            if w[0] == "tail":
                tail = w[1:]
            elif w[0] == "merged":
                merged[w[1]] = (w[2], w[3])
    prev = None
    for m in tail:
        lines, body = headers_and_body(git(up, "cat-file", "commit", mark_sha[m]))
        out = []
        for line in lines:
            if prev and line.startswith(b"parent ") and not any(
                    x.startswith(b"parent ") for x in out):
                line = b"parent " + prev
            out.append(line)
            if line.startswith(b"committer ") and m in merged:
                tip, sub = merged[m]
                when = line.rsplit(b" ", 2)[1]
                tag = [b"object " + mark_sha[tip].encode(), b"type commit",
                       b"tag subsys%s-for-linus" % sub.encode(),
                       b"tagger Maint %s <maint%s@example.org> %s +0000" %
                       (sub.encode(), sub.encode(), when),
                       b"", b"subsys%s updates for the merge window" % sub.encode()]
                out.append(b"mergetag " + b"\n ".join(tag))
        prev = git(up, "hash-object", "-t", "commit", "-w", "--stdin",
                   data=rebuild(out, body)).strip()
    if prev:
        git(up, "update-ref", "refs/heads/master", prev.decode())


def own_commits(pulls, base, count, start, old_author=None):
    """count commits on base in one fast-import; returns the tip."""
    s = []
    for k in range(count):
        t = start + 60 * k
        at = old_author if old_author is not None and k == 1 else t
        msg = (b"sub: own change %d\n\nWhat own change %d does and why.\n\n"
               b"Signed-off-by: Sub Maintainer <sub@example.org>\n" % (k, k))
        s.append(b"commit refs/heads/bench-case\n")
        s.append(b"author Sub Maintainer <sub@example.org> %d +0000\n" % at)
        s.append(b"committer Sub Maintainer <sub@example.org> %d +0000\n" % t)
        s.append(b"data %d\n%s\n" % (len(msg), msg))
        if k == 0:
            s.append(b"from %s\n" % base)
        data = b"int own%d = %d;\n" % (k, k)
        s.append(b"M 100644 inline sub/own%d.c\ndata %d\n%s\n\n" % (k % 997, len(data), data))
    git(pulls, "fast-import", "--quiet", "--force", data=b"".join(s),
        env={"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=4294967295"})
    return git(pulls, "rev-parse", "refs/heads/bench-case").strip()


def tag(pulls, name, target, when, fpr, ncommits):
    msg = "%s\n\n" % name + "".join("- sub: own change %d\n" % k for k in range(min(ncommits, 50)))
    git(pulls, "-c", "user.name=Sub Maintainer", "-c", "user.email=sub@example.org",
        "-c", "user.signingkey=" + fpr, "tag", "-f", "-s", "-m", msg, name, target.decode(),
        env={"GIT_COMMITTER_DATE": "%d +0000" % when})


def pulls(up, pulls_dir, fpr):
    subprocess.run(["git", "init", "-q", "--bare", pulls_dir], check=True)
    with open(os.path.join(pulls_dir, "objects/info/alternates"), "w") as f:
        f.write(os.path.realpath(os.path.join(up, "objects")) + "\n")
    tip = git(up, "rev-parse", "master").strip()
    end = int(git(up, "log", "-1", "--format=%ct", "master"))
    first_parent = git(up, "rev-list", "--first-parent", "-n", "20000", "master").split()
    start = end + 600

    # incident: the 35 newest mainline merges, copied without their mergetag
    prev = first_parent[35]
    for sha in reversed(first_parent[:35]):
        lines, body = headers_and_body(git(up, "cat-file", "commit", sha.decode()))
        out, skip = [], False
        for line in lines:
            if line.startswith(b"mergetag "):
                skip = True
                continue
            if skip and line.startswith(b" "):
                continue
            skip = False
            if line.startswith(b"parent ") and not any(x.startswith(b"parent ") for x in out):
                line = b"parent " + prev
            out.append(line)
        prev = git(pulls_dir, "hash-object", "-t", "commit", "-w", "--stdin",
                   data=rebuild(out, body)).strip()
    cases = [("incident", own_commits(pulls_dir, prev, 4, start), 4, 35)]

    # oldbase: the mainline commit with 10,500 upstream commits above it
    lo, hi = 0, len(first_parent) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        n = int(git(up, "rev-list", "--count", "%s..master" % first_parent[mid].decode()))
        if n < 10500:
            lo = mid + 1
        else:
            hi = mid
    cases.append(("oldbase", own_commits(pulls_dir, first_parent[lo], 4, start), 4, 0))
    for days in (7, 30):
        cases.append(("oldauthor%d" % days,
                      own_commits(pulls_dir, tip, 4, start, end - days * DAY), 4, 0))
    for n in (40, 1000, 10000):
        cases.append(("pull%d" % n, own_commits(pulls_dir, tip, n, start), n, 0))
    for name, target, n, copies in cases:
        tag(pulls_dir, name, target, start + 60 * n + 60, fpr, n)
        print(name, name, copies)
    git(pulls_dir, "update-ref", "-d", "refs/heads/bench-case")


def main():
    if sys.argv[1] == "mergetags":
        mergetags(*sys.argv[2:5])
    elif sys.argv[1] == "pulls":
        pulls(*sys.argv[2:5])
    else:
        sys.exit("usage: make-cases.py mergetags|pulls ...")


if __name__ == "__main__":
    main()
