#!/usr/bin/python3
# lava-server.py - a stand-in for a LAVA server's REST API (api/v0.2) on loopback, for the LAVA tests.
#
# usage: lava-server.py DIR TOKEN_FILE SCENARIO
#
# Binds 127.0.0.1 on a free port and writes it to DIR/port.  Every request
# must carry "Authorization: Token <the token>" (else 401).  A submitted
# job (POST api/v0.2/jobs/ {"definition": YAML}) is validated with LAVA's
# own schema (lava_common, strict), as a real server does, and kept as
# DIR/job-N.yaml; GET jobs/N/ answers Running once, then Finished with the
# SCENARIO's health; GET jobs/N/logs/ answers a LAVA log (lava_common's own
# record format) whose console is DIR/console.txt with NONCE replaced by
# the nonce on the job's kernel command line: a stand-in device, never a
# boot.  Requests are logged to DIR/requests (method, path; no header).
#
# SCENARIO: complete | incomplete (a LAVA timeout) | canceled | never
# (stays Running until cancelled, then Canceled).
import http.server
import json
import os
import re
import sys

import yaml
from lava_common.log import dump
from lava_common.schemas import validate

DIR, TOKEN_FILE, SCENARIO = sys.argv[1], sys.argv[2], sys.argv[3]
with open(TOKEN_FILE) as f:
    TOKEN = f.read().strip()
JOBS = {}


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def reply(self, code, body, ctype="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def allowed(self):
        with open(os.path.join(DIR, "requests"), "a") as f:
            f.write("%s %s\n" % (self.command, self.path))
        if self.headers.get("Authorization") != "Token " + TOKEN:
            self.reply(401, {"detail": "Invalid token."})
            return False
        return True

    def do_POST(self):
        if not self.allowed():
            return
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        m = re.fullmatch(r"/api/v0\.2/jobs/(\d+)/cancel/", self.path)
        if m and int(m.group(1)) in JOBS:
            JOBS[int(m.group(1))]["cancelled"] = True
            return self.reply(200, {"message": "Job cancel signal sent."})
        if self.path != "/api/v0.2/jobs/":
            return self.reply(404, {"detail": "Not found."})
        try:
            definition = json.loads(body)["definition"]
            job = yaml.safe_load(definition)
            validate(job, strict=True)
        except Exception as exc:
            return self.reply(400, {"message": "job submission failed: %s." % exc})
        n = len(JOBS) + 1
        JOBS[n] = {"job": job, "polls": 0, "cancelled": False}
        with open(os.path.join(DIR, "job-%d.yaml" % n), "w") as f:
            f.write(definition)
        self.reply(201, {"message": "job(s) successfully submitted", "job_ids": [n]})

    def state(self, j):
        if j["cancelled"]:
            return "Finished", "Canceled", ""
        j["polls"] += 1
        if SCENARIO == "queued":
            return "Submitted", "Unknown", ""
        if SCENARIO == "never" or j["polls"] < 2:
            return "Running", "Unknown", ""
        if SCENARIO == "incomplete":
            return "Finished", "Incomplete", "lava-test-monitor timed out after 300 seconds"
        if SCENARIO == "canceled":
            return "Finished", "Canceled", ""
        return "Finished", "Complete", ""

    def do_GET(self):
        if not self.allowed():
            return
        m = re.fullmatch(r"/api/v0\.2/jobs/(\d+)/(logs/)?", self.path)
        if not m or int(m.group(1)) not in JOBS:
            return self.reply(404, {"detail": "Not found."})
        j = JOBS[int(m.group(1))]
        if not m.group(2):
            state, health, comment = self.state(j)
            return self.reply(200, {"id": int(m.group(1)), "state": state, "health": health,
                                    "failure_comment": comment})
        args = j["job"]["actions"][0]["deploy"]["images"]["kernel"]["image_arg"]
        nonce = re.search(r"pullgate\.nonce=([A-Za-z0-9]+)", args).group(1)
        lines = [dump({"dt": "2026-12-03T22:00:00.000000", "lvl": "info",
                       "msg": "start: 1 tmpfs-deploy (timeout 00:05:00) [common]"})]
        with open(os.path.join(DIR, "console.txt")) as f:
            for line in f.read().splitlines():
                lines.append(dump({"dt": "2026-12-03T22:00:01.000000", "lvl": "target",
                                   "msg": line.replace("NONCE", nonce)}))
        lines.append(dump({"dt": "2026-12-03T22:00:02.000000", "lvl": "results",
                           "msg": {"definition": "0_kunit", "case": "pullgate",
                                   "result": "pass"}}))
        self.reply(200, ("- " + "\n- ".join(lines) + "\n").encode(), "application/yaml")


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(os.path.join(DIR, "port.tmp"), "w") as f:
    f.write(str(server.server_address[1]))
os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
server.serve_forever()
