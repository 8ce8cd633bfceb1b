#!/usr/bin/env python3
"""Validates one JSON report of nats-lens-check.

Usage: check_json.py REPORT EXIT_STATUS [EXPECTED]

REPORT is the file the check wrote with --format json, EXIT_STATUS the
status it exited with. EXPECTED (optional) is a file of lines
"SEVERITY CLASS STREAM/CONSUMER KIND" (CONSUMER "-" for a stream finding);
the report must hold exactly those findings. Lines starting with "?" are
allowed but not required. Prints "ok" or one line per problem, and exits 0
only when there is none.
"""
import json
import re
import sys

problems = []


def need(cond, what):
    if not cond:
        problems.append(what)


def main():
    path, status = sys.argv[1], int(sys.argv[2])
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)  # Fails (and so does the test) on invalid JSON.
    need(isinstance(doc, dict), "the report is not an object")
    for key, kind in [("tool", str), ("version", str), ("server", str),
                      ("checked_at", str), ("mode", str), ("streams", int),
                      ("consumers", int), ("status", str),
                      ("exit_code", int), ("summary", dict),
                      ("findings", list)]:
        need(isinstance(doc.get(key), kind), f"{key} missing or not {kind}")
    need(doc.get("tool") == "nats-lens-check", "tool is not nats-lens-check")
    need(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z",
                      doc.get("checked_at", "")) is not None,
         "checked_at is not RFC 3339 UTC")
    need(doc.get("mode") in ("audit", "watch"), "mode is not audit/watch")
    need(doc.get("exit_code") == status,
         f"exit_code {doc.get('exit_code')} but the process exited {status}")
    findings = doc.get("findings", [])
    got = set()
    for i, f in enumerate(findings):
        where = f"findings[{i}]"
        for key in ("class", "kind", "severity", "stream", "description",
                    "fix_command", "recommendation"):
            need(isinstance(f.get(key), str) and f.get(key),
                 f"{where}.{key} missing or empty")
        need("consumer" in f and (f["consumer"] is None or
                                  isinstance(f["consumer"], str)),
             f"{where}.consumer is neither a string nor null")
        need(f.get("severity") in ("critical", "warning"),
             f"{where}.severity is {f.get('severity')}")
        need(f.get("kind") in ("config", "live"), f"{where}.kind")
        need(str(f.get("fix_command", "")).startswith("nats "),
             f"{where}.fix_command is not a nats command")
        ev = f.get("evidence")
        need(isinstance(ev, dict) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool)
            for v in ev.values()), f"{where}.evidence is not numbers")
        if f.get("kind") == "live":
            need(isinstance(f.get("since"), str), f"{where}.since missing")
        got.add(f"{f.get('severity')} {f.get('class')} "
                f"{f.get('stream')}/{f.get('consumer') or '-'} "
                f"{f.get('kind')}")
    need(len(got) == len(findings), "duplicate findings")
    summary = doc.get("summary", {})
    crit = sum(f.get("severity") == "critical" for f in findings)
    warn = sum(f.get("severity") == "warning" for f in findings)
    need(summary.get("critical") == crit and summary.get("warning") == warn
         and summary.get("total") == len(findings),
         f"summary {summary} does not count the findings")
    want_status = "critical" if crit else "warning" if warn else "ok"
    need(doc.get("status") == want_status,
         f"status {doc.get('status')}, expected {want_status}")
    if len(sys.argv) > 3:
        with open(sys.argv[3], encoding="utf-8") as f:
            lines = [l.strip() for l in f if l.strip()]
        required = {l for l in lines if not l.startswith("?")}
        allowed = required | {l[1:].strip() for l in lines
                              if l.startswith("?")}
        for missing in sorted(required - got):
            problems.append(f"missing: {missing}")
        for extra in sorted(got - allowed):
            problems.append(f"unexpected: {extra}")
    for p in problems:
        print(p)
    if not problems:
        print("ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
