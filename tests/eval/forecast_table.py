#!/usr/bin/env python3
"""tests/eval/forecast_table.py: the table of RETENTION_RISK's lead times in
results/eval.md.

Usage: forecast_table.py --command CMD --out OUT RAW_JSON

RAW_JSON is what tests/eval/forecast.sh measured: per trend the start, the
time RETENTION_RISK was raised and the time the consumer first lost a
message it had not received. The table goes into OUT/eval.md between the
forecast markers (an older table is replaced; the section is appended when
absent). Exits 1 when a trend was not raised before its first loss, or the
consumer that keeps up raised anything."""
import argparse
import json
import os
import sys

BEGIN = "<!-- forecast: made by tests/eval/forecast.sh -->"
END = "<!-- /forecast -->"

LIMITS = {"max-age": "max_age {} s", "max-msgs": "max_msgs {:,}",
          "max-bytes": "max_bytes {:,} B"}


def behind(t):
    """What the trend's consumer falls behind by, in words."""
    read = t["workers"] * 1000.0 / t["process_ms"]
    if t["limit"] == "max-age":
        return "{:g} of {} msg/s read: +{:g} s of age a second".format(
            read, t["rate"], 1 - read / t["rate"])
    return "{:g} of {} msg/s read: +{:g} msg/s".format(
        read, t["rate"], t["rate"] - read)


def table(raw, command):
    start = raw["start"]
    rows = ["| trend | limit | falls behind | raised (s) | first loss (s) "
            "| lead (s) | lead, share of the time to the loss | first "
            "forecast value (s) | research monitor |",
            "|---|---|---|---:|---:|---:|---:|---:|---|"]
    ok = True
    for t in raw["trends"]:
        r, e = t["raised"], t["evicted"]
        raised = r - start if r else None
        lost = e - start if e else None
        lead = lost - raised if raised is not None and lost is not None else None
        good = lead is not None and lead > 0
        ok = ok and good
        rows.append("| {} | {} | {} | {} | {} | {} | {} | {} | no forecast |".format(
            t["name"], LIMITS[t["limit"]].format(t["value"]), behind(t),
            "%.0f" % raised if raised is not None else "not raised",
            "%.0f" % lost if lost is not None else "none",
            "%.0f" % lead if lead is not None else "-",
            "%.0f%%" % (100 * lead / lost) if good else "-",
            "%.0f" % t["first_forecast_s"] if t["first_forecast_s"] is not None
            else "-"))
    keep = raw["keep_findings"]
    ok = ok and keep == 0
    text = [BEGIN, "## Forecast lead times", "",
            "RETENTION_RISK before the first loss it forecasts: steady "
            "trends on one nats-server ({}), each a stream with one limit "
            "and a consumer that reads slower than the stream receives from "
            "the start, all at once, polled every {:g} s (commit {}). Times "
            "are seconds after the start; the first loss is the first "
            "message the consumer had not received that the stream "
            "evicted (the plugin's lost count); the lead is the time from "
            "the finding to it. The research monitor has no forecast: it "
            "reports a loss only after it happened. A consumer that keeps up "
            "beside them raised {} finding{}. Made by:".format(
                raw["server"], raw["interval_s"], raw["commit"], keep,
                "" if keep == 1 else "s"),
            "", "    " + command, ""] + rows + ["", END]
    return "\n".join(text), ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--command", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("raw")
    a = ap.parse_args()
    raw = json.load(open(a.raw))
    section, ok = table(raw, a.command)
    path = os.path.join(a.out, "eval.md")
    old = open(path).read() if os.path.exists(path) else ""
    if BEGIN in old and END in old:
        new = old[:old.index(BEGIN)] + section + old[old.index(END) + len(END):]
    else:
        new = old.rstrip("\n") + "\n\n" + section + "\n"
    with open(path, "w") as fh:
        fh.write(new)
    print(section)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
