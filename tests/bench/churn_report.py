#!/usr/bin/env python3
"""churn_report.py CHURN.jsonl WIDE.jsonl BENCH.md: appends the stream churn
section (nl-bench churn) to the benchmark report."""
import json
import subprocess
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
wide = json.loads(open(sys.argv[2]).read())
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                        capture_output=True, text=True).stdout.strip()
out = ["", "## Stream churn (the engine alone)", "",
       "Made by `make bench` (commit %s): `build/nl-bench churn`, the "
       "plugin's engine fed with snapshot sets built in memory, no server."
       % (commit or "unknown"), "",
       "Each poll lists 1,000 streams with one consumer each; 100 of them are "
       "named for the first time and the 100 oldest are gone (polls 10 s "
       "apart). A stream not listed for 600 s is forgotten, so what is held "
       "stays bounded however many names pass. Heap in use is malloc's count "
       "of live bytes, mapped blocks included; apply time is the median over each tenth of the polls.",
       "", "| polls | stream names seen | streams held | heap in use | apply ms (median) |",
       "|---:|---:|---:|---:|---:|"]
for r in rows:
    out.append("| %d | %s | %s | %.2f MB | %.2f |" % (
        r["polls"], format(r["stream_names_seen"], ","),
        format(r["streams_held"], ","), r["heap_in_use_mb"],
        r["apply_ms_median"]))
out += ["", "20,000 streams listed in one poll: %.1f ms per apply, %.1f MB heap "
        "in use." % (wide["apply_ms_median"], wide["heap_in_use_mb"]), ""]
with open(sys.argv[3], "a") as f:
    f.write("\n".join(out))
