#!/usr/bin/env python3
"""smtp_relay.py - a real SMTP server on loopback (aiosmtpd) for the notice tests.

    smtp_relay.py accept|refuse OUTDIR PORTFILE

accept: each message goes to OUTDIR/msgN.env (envelope sender, then each
recipient, a line each) and OUTDIR/msgN.eml (the data as received).
refuse: every DATA is answered 451, and counted in OUTDIR/refused.
The bound port is written to PORTFILE once it listens.
"""
import os
import socket
import sys
import time

from aiosmtpd.controller import Controller

MODE, OUTDIR, PORTFILE = sys.argv[1:4]


class Handler:
    count = 0

    async def handle_DATA(self, server, session, envelope):
        if MODE == "refuse":
            with open(os.path.join(OUTDIR, "refused"), "a") as f:
                f.write("451\n")
            return "451 4.3.0 the relay refuses for now"
        Handler.count += 1
        base = os.path.join(OUTDIR, "msg%d" % Handler.count)
        with open(base + ".eml.tmp", "wb") as f:
            f.write(envelope.original_content or envelope.content)
        with open(base + ".env", "w") as f:
            f.write("\n".join([envelope.mail_from] + envelope.rcpt_tos) + "\n")
        os.rename(base + ".eml.tmp", base + ".eml")
        return "250 2.0.0 queued"


probe = socket.socket()
probe.bind(("127.0.0.1", 0))
port = probe.getsockname()[1]
probe.close()
controller = Controller(Handler(), hostname="127.0.0.1", port=port)
controller.start()
with open(PORTFILE + ".tmp", "w") as f:
    f.write(str(port))
os.rename(PORTFILE + ".tmp", PORTFILE)
try:
    while True:
        time.sleep(3600)
finally:
    controller.stop()
