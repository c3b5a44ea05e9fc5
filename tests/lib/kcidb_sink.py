#!/usr/bin/env python3
"""kcidb_sink.py - a KCIDB submission receiver on loopback for the submission tests.

    kcidb_sink.py MODE OUTDIR PORTFILE

Each request is written to OUTDIR/N/ (N from 1): its method, path, headers
(as received, "Name: value" a line) and body, the directory renamed into
place once whole, so that a test waiting for OUTDIR/N reads all of it.
MODE says what it answers:
  ok        201 to every request
  fail:K    500 to the first K requests, then 201
  refuse    401 to every request, with a JSON body naming the reason
  hostile   201 to every request, its status line and its body's first line
            holding terminal escape sequences, BEL and backspaces
The bound port is written to PORTFILE (renamed into place) once it listens.
"""
import http.server
import os
import sys

MODE, OUTDIR, PORTFILE = sys.argv[1:4]


class Sink(http.server.BaseHTTPRequestHandler):
    count = 0
    protocol_version = "HTTP/1.1"

    def answer(self):
        Sink.count += 1
        n = Sink.count
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        tmp = os.path.join(OUTDIR, "%d.tmp" % n)
        os.mkdir(tmp)
        with open(os.path.join(tmp, "method"), "w") as f:
            f.write(self.command + "\n")
        with open(os.path.join(tmp, "path"), "w") as f:
            f.write(self.path + "\n")
        with open(os.path.join(tmp, "headers"), "w") as f:
            for k, v in self.headers.items():
                f.write("%s: %s\n" % (k, v))
        with open(os.path.join(tmp, "body"), "wb") as f:
            f.write(body)
        os.rename(tmp, os.path.join(OUTDIR, str(n)))
        message = None
        if MODE == "refuse":
            status, reply = 401, b'{"detail": "the token is not valid"}\n'
        elif MODE.startswith("fail:") and n <= int(MODE[5:]):
            status, reply = 500, b'{"detail": "the database is busy"}\n'
        elif MODE == "hostile":
            status, reply = 201, b'{"status": "\x1b[2J\x1b[Haccepted\x07"}\n'
            message = "Created \x1b]0;owned\x07\x1b[31mred\x1b[0m\x08\x08ok\x07"
        else:
            status, reply = 201, b'{"status": "accepted"}\n'
        self.send_response(status, message)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    do_POST = answer
    do_GET = answer

    def log_message(self, fmt, *args):
        sys.stderr.write("kcidb_sink: " + (fmt % args) + "\n")


server = http.server.HTTPServer(("127.0.0.1", 0), Sink)
with open(PORTFILE + ".tmp", "w") as f:
    f.write("%d\n" % server.server_address[1])
os.rename(PORTFILE + ".tmp", PORTFILE)
server.serve_forever()
