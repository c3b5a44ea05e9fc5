#!/usr/bin/env python3
# hostile.py - hostile network peers for the integration tests: slow clients and a silent server.
#
#   hostile.py slow HOST PORT N SECONDS [body] [ready=FILE] [stop=FILE]
#       Open N connections and trickle one byte a second on each for SECONDS,
#       or until FILE of stop= exists (a request's headers, 200 bytes; with
#       "body", complete headers of a POST and then its 1000-byte body).
#       Once all N are open, FILE of ready= is made.  Prints one line at the end:
#           opened=N answered408=A cut=C open=O refused=R complete=K
#       answered408: closed by the server after a 408 answer; cut: closed by
#       the server (408 or not) while trickling; open: still open at the end;
#       refused: connect failed or closed before any byte could be sent;
#       complete: connections that got their whole request out.
#
#   hostile.py blackhole PORTFILE
#       Listen on 127.0.0.1, an ephemeral port written to PORTFILE, accept
#       every connection and never answer, until killed; PORTFILE.accepted
#       holds how many connections it accepted.
import os
import selectors
import socket
import sys
import time


def touch(path):
    if path:
        open(path, "w").close()


def slow(host, port, n, seconds, body, ready=None, stop=None):
    sel = selectors.DefaultSelector()
    conns = {}
    refused = 0
    if body:
        head = (b"POST /hooks/push HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
                b"Content-Length: 1000\r\n\r\n" % (host.encode(), port))
        payload = b"x" * 1000
    else:
        head = b""
        payload = b"GET /healthz HTTP/1.1\r\nHost: %s:%d\r\nX-Slow: " % (host.encode(), port) + b"y" * 200
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(120)
        try:
            s.connect((host, port))
            if head:
                s.sendall(head)
        except OSError:
            refused += 1
            s.close()
            continue
        s.setblocking(False)
        conns[s] = {"sent": 0, "got": b"", "closed": False}
        sel.register(s, selectors.EVENT_READ)
    opened = len(conns)
    touch(ready)
    end = time.monotonic() + seconds
    next_tick = time.monotonic()
    while time.monotonic() < end and any(not c["closed"] for c in conns.values()):
        if stop and os.path.exists(stop):
            break
        now = time.monotonic()
        if now >= next_tick:
            next_tick = now + 1
            for s, c in conns.items():
                if c["closed"] or c["sent"] >= len(payload):
                    continue
                try:
                    s.send(payload[c["sent"]:c["sent"] + 1])
                    c["sent"] += 1
                except OSError:
                    pass
        wake = min(next_tick, end, time.monotonic() + 0.1 if stop else end)
        for key, _ in sel.select(timeout=max(0.0, wake - time.monotonic())):
            s = key.fileobj
            c = conns[s]
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if data:
                c["got"] += data
            else:
                c["closed"] = True
                sel.unregister(s)
    cut = sum(1 for c in conns.values() if c["closed"])
    a408 = sum(1 for c in conns.values() if c["closed"] and c["got"].startswith(b"HTTP/1.1 408"))
    still = opened - cut
    complete = sum(1 for c in conns.values() if c["sent"] >= len(payload))
    for s in conns:
        s.close()
    print("opened=%d answered408=%d cut=%d open=%d refused=%d complete=%d"
          % (opened, a408, cut, still, refused, complete))


def blackhole(portfile):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    os.rename(portfile + ".tmp", portfile)
    held = []
    while True:
        c, _ = srv.accept()
        held.append(c)
        with open(portfile + ".accepted.tmp", "w") as f:
            f.write("%d\n" % len(held))
        os.rename(portfile + ".accepted.tmp", portfile + ".accepted")


def main():
    if len(sys.argv) >= 6 and sys.argv[1] == "slow":
        opts = dict(a.split("=", 1) for a in sys.argv[6:] if "=" in a)
        slow(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]),
             "body" in sys.argv[6:], opts.get("ready"), opts.get("stop"))
    elif len(sys.argv) == 3 and sys.argv[1] == "blackhole":
        blackhole(sys.argv[2])
    else:
        sys.stderr.write("usage: hostile.py slow HOST PORT N SECONDS [body] [ready=FILE] [stop=FILE] | blackhole PORTFILE\n")
        sys.exit(2)


if __name__ == "__main__":
    main()
