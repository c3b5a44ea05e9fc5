#!/usr/bin/env python3
# gen-history.py - a kernel-shaped history as a git fast-import stream, for bench/verify.sh.
#
#   bench/gen-history.py --commits N --rhythm kernel|dense --end EPOCH --seed S \
#                        --info FILE >stream
#
# The shape of mainline: a first-parent chain of merges, each bringing in a
# topic branch (1-60 commits, 12 on average, authored by one of 2,000
# developers and committed by its subsystem's maintainer) forked from
# mainline up to one cycle back; a few commits straight on mainline.  About
# 8% of the commits are merges, as in the kernel.
#
# The dates, ending at EPOCH:
#   kernel  a 70-day cycle of 14,000 commits: 70% of them in the two-week
#           merge window, the rest spread over the eight weeks of -rc fixes
#   dense   7 seconds between commits, a stress case beyond any merge window
#
# The last TAIL commits are mainline merges only, and no topic forks from
# mainline inside the tail, so that verify.sh can rewrite the tail's
# mainline to carry mergetag headers (fast-import cannot write them)
# without touching anything else.  --info receives, one per line:
#   end EPOCH / tail MARK... (the tail's mainline marks, oldest first) /
#   merged MARK TOPIC-TIP-MARK SUBSYSTEM (for each tail merge)
import argparse
import random
import sys

CYCLE = 70 * 86400
WINDOW = 14 * 86400
PER_CYCLE = 14000
SUBSYSTEMS = 64
FILES = 64
DEVELOPERS = 2000
TAIL = 100


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, required=True)
    ap.add_argument("--rhythm", choices=("kernel", "dense"), required=True)
    ap.add_argument("--end", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--info", required=True)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    n = a.commits
    out = sys.stdout.buffer

    if a.rhythm == "dense":
        times = [a.end - (n - 1 - i) * 7 for i in range(n)]
    else:
        cycles = max(1, -(-n // PER_CYCLE))
        per = -(-n // cycles)
        times = []
        for i in range(n):
            c, j = divmod(i, per)
            start = a.end - (cycles - c) * CYCLE
            in_window = int(per * 0.7)
            if j < in_window:
                t = start + WINDOW * (j + 1) // in_window
            else:
                t = start + WINDOW + (CYCLE - WINDOW) * (j - in_window + 1) // (per - in_window)
            times.append(t)
        times[-1] = a.end

    mark = 0
    content = {}  # path -> the number written last (the file's content)
    mainline = []  # mainline marks, in order
    cycle_start = {}  # cycle -> first mainline mark in it
    tail_from = n - TAIL
    tail_marks, tail_merges = [], []

    tips = {}  # ref -> the mark it points at, so that "from" is only said when it moves

    def emit(ref, t, author, committer, msg, parents, changes, author_t=None):
        nonlocal mark
        mark += 1
        w = out.write
        w(b"commit %s\nmark :%d\n" % (ref, mark))
        w(b"author %s %d +0000\n" % (author, author_t if author_t is not None else t))
        w(b"committer %s %d +0000\n" % (committer, t))
        w(b"data %d\n%s\n" % (len(msg), msg))
        # fast-import keeps an active branch's tree in memory unless "from" moves it
        if parents and tips.get(ref) != parents[0]:
            w(b"from :%d\n" % parents[0])
        tips[ref] = mark
        if parents:
            for p in parents[1:]:
                w(b"merge :%d\n" % p)
        for path, num in changes:
            data = b"/* %s */\nint v = %d;\n" % (path, num)
            w(b"M 100644 inline %s\ndata %d\n%s\n" % (path, len(data), data))
        w(b"\n")
        return mark

    def ident(name, email):
        return b"%s <%s>" % (name.encode(), email.encode())

    top = ident("Top Maintainer", "torvalds@example.org")
    topics = []  # open topics: sub, tip, left, count, changes, ref, slot
    free_slots = []
    nslots = [0]
    ready = []
    i = 0
    root_path = b"Makefile"
    mainline.append(emit(b"refs/heads/master", times[0], top, top,
                         b"Initial commit\n", [], [(root_path, 0)]))
    i = 1
    while i < n:
        t = times[i]
        in_tail = i >= tail_from
        cyc = (t - times[0]) // CYCLE
        cycle_start.setdefault(cyc, mainline[-1])
        r = rnd.random()
        if ready and (in_tail or r < 0.3):
            tp = ready.pop(0)
            free_slots.append(tp["slot"])
            sub = tp["sub"]
            maint = "Maint %d" % sub
            msg = (b"Merge tag 'subsys%d-for-linus' of git://git.example.org/subsys%d\n\n"
                   b"Pull subsys%d updates from %s:\n\n - %d changes\n"
                   % (sub, sub, sub, maint.encode(), tp["count"]))
            changes = sorted(tp["changes"].items())
            for path, num in changes:
                content[path] = num
            m = emit(b"refs/heads/master", t, top, top, msg, [mainline[-1], tp["tip"]], changes)
            mainline.append(m)
            if in_tail:
                tail_marks.append(m)
                tail_merges.append((m, tp["tip"], sub))
            i += 1
            continue
        if in_tail:
            # nothing forks inside the tail: the open topics are finished and merged
            if not topics:
                break
            tp = min(topics, key=lambda x: x["left"])
            tp["left"] = 1
        else:
            if r < 0.025:
                sub = rnd.randrange(SUBSYSTEMS)
                path = b"subsys%d/file%d.c" % (sub, rnd.randrange(FILES))
                num = i
                content[path] = num
                mainline.append(emit(b"refs/heads/master", t, top, top,
                                     b"subsys%d: fix a build warning\n\nSigned-off-by: "
                                     b"Top Maintainer <torvalds@example.org>\n" % sub,
                                     [mainline[-1]], [(path, num)]))
                i += 1
                continue
            if len(topics) < 40 or rnd.random() < 1 / 12:
                sub = rnd.randrange(SUBSYSTEMS)
                # based on this cycle's start, or on recent mainline
                fork = cycle_start[cyc] if rnd.random() < 0.5 else \
                    mainline[max(0, len(mainline) - 1 - rnd.randrange(200))]
                length = min(60, max(1, int(rnd.expovariate(1 / 12))))
                if free_slots:
                    slot = free_slots.pop()
                else:
                    slot = nslots[0]
                    nslots[0] += 1
                tp = {"sub": sub, "tip": fork, "left": length, "count": 0, "changes": {},
                      "ref": b"refs/heads/slot%d" % slot, "slot": slot}
                topics.append(tp)
            else:
                tp = topics[rnd.randrange(len(topics))]
        sub = tp["sub"]
        dev = rnd.randrange(DEVELOPERS)
        author = ident("Dev %d" % dev, "dev%d@example.org" % dev)
        committer = ident("Maint %d" % sub, "maint%d@example.org" % sub)
        path = b"subsys%d/file%d.c" % (sub, rnd.randrange(FILES))
        tp["changes"][path] = i
        msg = (b"subsys%d: change %d\n\nExplain change %d of subsystem %d in a line or two,\n"
               b"as a commit message does.\n\nSigned-off-by: Dev %d <dev%d@example.org>\n"
               b"Signed-off-by: Maint %d <maint%d@example.org>\n"
               % (sub, i, i, sub, dev, dev, sub, sub))
        author_t = t - rnd.randrange(3 * 86400)
        tp["tip"] = emit(tp["ref"], t, author, committer, msg, [tp["tip"]], [(path, i)],
                         author_t)
        tp["count"] += 1
        tp["left"] -= 1
        if tp["left"] <= 0:
            topics.remove(tp)
            ready.append(tp)
        i += 1
    # open topics are left unmerged, as branches nobody pulled yet
    out.write(b"reset refs/heads/master\nfrom :%d\n\n" % mainline[-1])
    with open(a.info, "w") as f:
        f.write("end %d\n" % times[-1])
        f.write("commits %d\n" % mark)
        f.write("tail %s\n" % " ".join(str(m) for m in tail_marks))
        for m, tip, sub in tail_merges:
            f.write("merged %d %d %d\n" % (m, tip, sub))


if __name__ == "__main__":
    main()
