#!/usr/bin/env python3
"""Turns the raw measurements of tests/eval/eval.py into results/eval.md,
results/eval.json and the latency CDF plot results/eval-latency.png
(gnuplot). Python standard library only.

  report.py --out-dir results RAW.json [RAW.json...]

Exit status 0 when every class row has full coverage, every must-fire
boundary case fired, and nothing fired where nothing may (false positives
0); 1 otherwise (the files are written either way).
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scenarios import CLASSES, REFERENCE_P50_MS, ROOT  # noqa: E402

LANG_NAMES = {"c": "C (cnats)", "go": "Go (nats.go)",
              "js": "JavaScript (nats.js)", "py": "Python (stdlib)"}


def wilson(k, n, z=1.96):
    """Wilson score interval of k successes in n trials, as (low, high)."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def pct(values, q):
    """The q-th percentile (0..100) with linear interpolation, or None."""
    v = sorted(values)
    if not v:
        return None
    pos = (len(v) - 1) * q / 100.0
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def ms(x):
    return "–" if x is None else "{:,.0f}".format(x)


def polls(x, d):
    return "–" if x is None else "%.1f" % (x / (d * 1000.0))


def latencies(rows, start_key, end_key):
    out = []
    for r in rows:
        a, b = r.get(start_key), r.get(end_key)
        if a is not None and b is not None:
            out.append((b - a) * 1000.0)
    return out


def unexpected(r):
    """Notifications of another delivery class about a fault consumer."""
    return [c for _, c in r.get("notifications", [])
            if c in CLASSES and c != r.get("expect")]


def operational(r):
    """Notifications that name no delivery class (such as a consumer that
    cannot be observed while its node is down)."""
    return [c for _, c in r.get("notifications", []) if c not in CLASSES]


def class_rows(results):
    """Groups class results by (scenario label, class, language)."""
    groups = {}
    for r in results:
        if r.get("phase") != "classes":
            continue
        key = (r.get("scenario", r.get("topology")), r["class"], r["lang"])
        groups.setdefault(key, []).append(r)
    return groups


def summarise(rows, d):
    n = len(rows)
    k = sum(1 for r in rows if r.get("detected"))
    lo, hi = wilson(k, n)
    inj = latencies(rows, "t_inject", "t_detect")
    sig = latencies(rows, "t_signal", "t_detect")
    rec = latencies(rows, "t_fix", "t_resolved")
    fixed = [r for r in rows if r.get("t_fix") is not None]
    return {
        "rounds": n, "detected": k, "coverage": k / n if n else 0.0,
        "coverage_ci95": [lo, hi],
        "latency_from_injection_ms": {q: pct(inj, q) for q in (50, 95, 99)},
        "latency_from_signal_ms": {q: pct(sig, q) for q in (50, 95, 99)},
        "recovery_ms": {q: pct(rec, q) for q in (50, 95)},
        "resolved": sum(1 for r in fixed if r.get("resolved")),
        "fixed": len(fixed),
        "other_class_notifications": sum(len(unexpected(r)) for r in rows),
        "operational_notifications": sum(len(operational(r)) for r in rows),
        "refired": sum(r.get("refired", 0) for r in rows),
        "errors": sum(len(r.get("errors", [])) + (1 if "error" in r else 0)
                      for r in rows),
        "interval_s": d,
        "inj_values_ms": inj,
    }


def table_classes(groups, d, label):
    lines = ["| class | language | rounds | detected | coverage (95% CI) | "
             "from injection P50 / P95 / P99 ms | in polls | "
             "from API signal P50 / P95 / P99 ms | in polls | "
             "recovery P50 / P95 ms | resolved | false positives (other "
             "class or repeat) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for cls in CLASSES:
        for lang in ("c", "go", "js", "py"):
            rows = groups.get((label, cls, lang))
            if not rows:
                continue
            s = summarise(rows, d)
            li, ls, rc = (s["latency_from_injection_ms"],
                          s["latency_from_signal_ms"], s["recovery_ms"])
            lines.append(
                "| %s | %s | %d | %d | %.0f%% (%.0f–%.0f%%) | %s / %s / %s | "
                "%s / %s / %s | %s / %s / %s | %s / %s / %s | %s / %s | "
                "%d/%d | %d |" % (
                    cls, LANG_NAMES.get(lang, lang), s["rounds"],
                    s["detected"], 100 * s["coverage"],
                    100 * s["coverage_ci95"][0], 100 * s["coverage_ci95"][1],
                    ms(li[50]), ms(li[95]), ms(li[99]),
                    polls(li[50], d), polls(li[95], d), polls(li[99], d),
                    ms(ls[50]), ms(ls[95]), ms(ls[99]),
                    polls(ls[50], d), polls(ls[95], d), polls(ls[99], d),
                    ms(rc[50]), ms(rc[95]), s["resolved"], s["fixed"],
                    s["other_class_notifications"] + s["refired"]))
    return lines


def plot(groups, label, d, out_png, work):
    """Writes the CDF of detection latency from injection per class (all
    languages of the scenario label) with gnuplot. Returns True when the
    PNG was written."""
    if not shutil.which("gnuplot"):
        return False
    os.makedirs(work, exist_ok=True)
    plots = []
    for cls in CLASSES:
        vals = sorted(v for lang in ("c", "go", "js", "py")
                      for v in summarise(groups.get((label, cls, lang), []),
                                         d)["inj_values_ms"]
                      if groups.get((label, cls, lang)))
        if not vals:
            continue
        path = os.path.join(work, "cdf-%s.dat" % cls)
        with open(path, "w") as fh:
            fh.write("%.3f 0\n" % (vals[0] / 1000.0))
            for i, v in enumerate(vals):
                fh.write("%.3f %.4f\n" % (v / 1000.0, (i + 1) / len(vals)))
        plots.append("'%s' using 1:2 with steps lw 2 title '%s (n=%d)'" % (
            path, cls, len(vals)))
    if not plots:
        return False
    script = "\n".join([
        "set terminal pngcairo size 1000,600 noenhanced" if _has_cairo()
        else "set terminal png size 1000,600 noenhanced",
        "set output '%s'" % out_png,
        "set title 'nats-lens detection latency from injection (%s, poll "
        "interval %g s)'" % (label, d),
        "set xlabel 'seconds from injection to detection (log scale)'",
        "set logscale x 10",
        "set ylabel 'fraction of rounds detected'",
        "set yrange [0:1.02]", "set grid", "set key right bottom",
        "set xrange [0.1:*]",
        "plot " + ", ".join(plots)])
    p = subprocess.run(["gnuplot"], input=script.encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        sys.stderr.write(p.stdout.decode())
    return p.returncode == 0 and os.path.exists(out_png)


def _has_cairo():
    p = subprocess.run(["gnuplot", "-e", "set terminal"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return b"pngcairo" in p.stdout


def git_commit():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short",
                               "HEAD"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL).stdout.decode(
        ).strip() + (" (with uncommitted changes)" if subprocess.run(
            ["git", "-C", ROOT, "status", "--porcelain",
             "--untracked-files=no"],
            stdout=subprocess.PIPE).stdout.strip() else "")
    except OSError:
        return "unknown"


def version(cmd):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        return p.stdout.decode().strip().splitlines()[0]
    except (OSError, IndexError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "results"))
    ap.add_argument("--name", default="eval")
    ap.add_argument("raw", nargs="+")
    a = ap.parse_args()
    raws = [json.load(open(p)) for p in a.raw]
    results = [r for raw in raws for r in raw["results"]]
    d = raws[0]["interval_s"]
    rounds = max(raw["rounds"] for raw in raws)
    langs = sorted({l for raw in raws for l in raw["langs"]},
                   key=["c", "go", "js", "py"].index)
    groups = class_rows(results)
    labels = []
    for r in results:
        lab = r.get("scenario")
        if r.get("phase") == "classes" and lab not in labels:
            labels.append(lab)
    os.makedirs(a.out_dir, exist_ok=True)
    md = []
    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(
        min(raw["started"] for raw in raws)))
    minutes = sum(raw["finished"] - raw["started"] for raw in raws) / 60
    md += ["# nats-lens evaluation", "",
           "Generated by `make eval` (tests/eval/); regenerate with the "
           "command below. Every number comes from a real nats-server, real "
           "collectd loading the built plugin, and real consumers written "
           "in each language.", "",
           "| | |", "|---|---|",
           "| date | %s |" % date,
           "| commit | %s |" % git_commit(),
           "| command | `make eval ROUNDS=%d INTERVAL=%g LANGS=\"%s\" "
           "TOPOLOGY=%s SOAK=%d` |" % (
               rounds, d, " ".join(langs),
               "both" if len(raws) > 1 else raws[0]["topology"],
               max(raw.get("soak_s", 0) for raw in raws)),
           "| rounds per class and language | %d (single node) |" % rounds,
           "| poll interval | %g s |" % d,
           "| topologies | %s |" % ", ".join(labels),
           "| server | %s |" % version(["nats-server", "--version"]),
           "| collectd | %s |" % version(["sh", "-c", "collectd -h | grep "
                                           "-m1 -oE 'collectd [0-9]+[.][0-9]+[.][0-9]+'"]),
           "| run time | %.0f min |" % minutes, ""]

    # Headline against the published reference.
    md += ["## Against the published reference", "",
           "The research monitor's published numbers (3 s poll interval, 200 "
           "rounds per class, detection P50) next to this run (first "
           "topology, all languages together).", "",
           "| class | reference: detected | reference P50 ms | nats-lens: "
           "detected (95% CI) | nats-lens P50 ms from injection (polls) | "
           "P95 ms | P50 ms from API signal | recovery P50 ms |",
           "|---|---|---|---|---|---|---|---|"]
    headline = {}
    for cls in CLASSES:
        rows = [r for lang in langs for r in groups.get((labels[0], cls,
                                                         lang), [])] \
            if labels else []
        s = summarise(rows, d)
        headline[cls] = {k: v for k, v in s.items() if k != "inj_values_ms"}
        li = s["latency_from_injection_ms"]
        md.append("| %s | 100%% | %s | %d/%d = %.0f%% (%.0f–%.0f%%) | %s "
                  "(%s) | %s | %s | %s |" % (
                      cls, ms(REFERENCE_P50_MS[cls]), s["detected"],
                      s["rounds"], 100 * s["coverage"],
                      100 * s["coverage_ci95"][0],
                      100 * s["coverage_ci95"][1], ms(li[50]),
                      polls(li[50], d), ms(li[95]),
                      ms(s["latency_from_signal_ms"][50]),
                      ms(s["recovery_ms"][50])))
    md.append("")

    for lab in labels:
        md += ["## Classes: %s" % lab, ""]
        md += table_classes(groups, d, lab)
        md.append("")
    png = os.path.join(a.out_dir, a.name + "-latency.png")
    if labels and plot(groups, labels[0], d, png,
                       os.path.join(a.out_dir, "tmp", "plot")):
        md += ["![Detection latency CDF per class](%s)" %
               os.path.basename(png), ""]

    kills = [k for raw in raws for k in raw.get("kills", [])]
    if kills:
        md += ["Node kills: " + "; ".join(
            "killed n%d (%s), plugin on n%s before and n%s after" % (
                k["victim"] + 1, "not the plugin's" if k["which"] == "other"
                else "the plugin's", (k["plugin_node_before"] or 0) + 1,
                "?" if k["plugin_node_after"] is None
                else k["plugin_node_after"] + 1) for k in kills) + ".", ""]

    # Boundary cases.
    bnd = [r for r in results if r.get("phase") == "boundary"]
    fp_total = 0
    boundary_ok = True
    if bnd:
        md += ["## Boundary cases", "",
               "Where the research tool's predicates fire without a fault, "
               "or miss one. *Must fire* cases count as detected only with "
               "the right class; for *must not fire* cases every FAILURE or "
               "WARNING notification is a false positive.", "",
               "| case | topology | expected | outcome | notifications | "
               "traced redeliveries / max num_redelivered | what it shows |",
               "|---|---|---|---|---|---|---|"]
        for r in bnd:
            fired = [c for _, c in r.get("notifications", [])]
            if r["expect"]:
                ok = bool(r.get("detected")) and not unexpected(r)
                outcome = "fired %s" % r["expect"] if r.get("detected") \
                    else "MISSED"
            else:
                ok = not fired
                fp_total += len(fired)
                outcome = "silent" if ok else "FALSE POSITIVE"
            boundary_ok = boundary_ok and ok
            md.append("| %s | %s | %s | %s %s | %s | %s / %s | %s |" % (
                r["case"].split("/")[1], r["topology"],
                ("must fire " + r["expect"]) if r["expect"]
                else "must not fire", outcome, "✔" if ok else "✘",
                ", ".join(fired) or "none",
                r.get("trace_redeliveries", 0),
                r.get("trace_max_num_redelivered", 0), r["note"]))
        md.append("")

    soak = [r for r in results if r.get("phase") == "soak"]
    if soak:
        md += ["## Healthy soak", "",
               "Correctly configured consumers (20 msg/s, 2 workers, 20 ms "
               "per message, ack_wait 30 s) next to all the rounds; every "
               "notification about them counts.", "",
               "| language | topology | seconds | notifications |",
               "|---|---|---|---|"]
        for r in soak:
            n = len(r.get("notifications", []))
            fp_total += n
            md.append("| %s | %s | %.0f | %d |" % (
                LANG_NAMES.get(r["lang"], r["lang"]), r["topology"],
                (r.get("t_end") or r.get("t_inject", 0)) -
                r.get("t_inject", 0), n))
        md.append("")

    base = next((raw["baseline"] for raw in raws if raw.get("baseline")),
                None)
    if base:
        md += ["## Server-level baseline (/varz, /jsz)", "",
               "What the server's own monitoring endpoints (the data a "
               "Prometheus server exporter turns into metrics) show for each "
               "class: both documents were fetched just before the injection "
               "and just after nats-lens detected the fault, with only that "
               "scenario running (C injector); a healthy control with steady "
               "traffic ran the same way. A field that moved under the fault "
               "but not under healthy traffic would be a trace.", "",
               "| class | numeric fields checked | fields that moved | moved "
               "only under the fault | slow_consumers / API errors moved | "
               "server-level view reveals the class | nats-lens |",
               "|---|---|---|---|---|---|---|"]
        for cls in CLASSES:
            b = base.get(cls)
            if not b:
                continue
            reveals = bool(b["alerting_fields"])
            md.append("| %s | %d | %d | %s | %s | %s | %s |" % (
                cls, b["fields_checked"], len(b["changed"]),
                ", ".join("`%s`" % f for f in b["changed_only_under_fault"])
                or "none", ", ".join(b["alerting_fields"]) or "no",
                "yes" if reveals else "no",
                "detected" if b["plugin_detected"] else "missed"))
        md += ["", "Fields that moved under healthy traffic too: %s." % (
            ", ".join("`%s`" % f for f in base.get("_healthy_changed", []))
            or "none"), ""]

    # Every fault that was not detected with its class, and what fired.
    missed = [r for r in results if r.get("phase") == "classes"
              and (not r.get("detected") or unexpected(r))]
    if missed:
        md += ["## Rows below 100 % or with another class", "",
               "| case | scenario | detected | notifications | errors |",
               "|---|---|---|---|---|"]
        for r in missed:
            md.append("| %s | %s | %s | %s | %s |" % (
                r["case"], r.get("scenario"),
                "yes" if r.get("detected") else "no",
                ", ".join("%s %s" % tuple(n) for n in
                          r.get("notifications", [])) or "none",
                "; ".join(r.get("errors", [])) or r.get("error", "") or
                "none"))
        md.append("")
        if kills:
            md += ["In the node-kill rounds the consumers whose leader was on "
                   "the killed node cannot be read until a new leader is "
                   "elected: the plugin says so (CONSUMER_UNOBSERVABLE, not "
                   "counted as a false positive) and keeps their history, "
                   "but the polls in between are missing. A message left "
                   "behind by a long task (MISSING_PROGRESS) can then show "
                   "as recurring expiry redeliveries and be named "
                   "ACK_WAIT_VIOLATION, the other duplicate-execution "
                   "class; and a publisher whose stream lost its leader "
                   "stops at its first failed publish (`nl-inject publish`), "
                   "which ends that fault early.", ""]

    # Overall verdict.
    class_ok = all(summarise(rows, d)["coverage"] == 1.0
                   for rows in groups.values())
    other = sum(summarise(rows, d)["other_class_notifications"]
                for rows in groups.values())
    md += ["## Verdict", "",
           "- class rows with 100%% coverage: %d of %d" % (
               sum(1 for rows in groups.values()
                   if summarise(rows, d)["coverage"] == 1.0), len(groups)),
           "- false positives (must-not-fire boundary cases and soak): %d" %
           fp_total,
           "- notifications of another class on a fault consumer: %d" % other,
           "- boundary cases as expected: %s" % ("all" if boundary_ok
                                                 else "NOT all"), ""]
    md += ["## How it is measured", "",
           "- Each round creates fresh streams and consumers "
           "(`E<round>_<class>_<language>`), waits until the plugin has "
           "polled each consumer twice, injects the fault, waits for the "
           "FAILURE/WARNING notification of the class, applies the fix, "
           "waits for the OKAY notification, and deletes the stream. The "
           "five classes of all languages of a round run at once on "
           "separate streams; the soak and boundary cases run next to the "
           "rounds.",
           "- *From injection*: from the moment the driver started the "
           "fault to the start of the first poll whose class value "
           "(`nats_lens_<class>` in collectd's CSV, 0/1) is 1. *From API "
           "signal*: from the first 0.25 s trace of `CONSUMER.INFO` / "
           "`STREAM.INFO` showing the fault (first redelivery; first_seq "
           "past the delivered position; ack-pending at the cap with "
           "messages waiting) to the same poll. *Recovery*: from the fix to "
           "the first poll whose class value is 0 (OKAY notification). "
           "A finding raised between polls (from JetStream advisories, "
           "such as NAK_STORM from MSG_NAKED) has no poll of its own: it is "
           "timed when its notification appeared in collectd's log (read "
           "every 0.2 s), and so is its OKAY. "
           "Polls = milliseconds / poll interval.",
           "- ACK_WAIT_VIOLATION waits for a repeat of the expiry "
           "redeliveries by design (docs/detectors.md): one round cannot be "
           "told from a crashed worker's orphans expiring. In this "
           "scenario (4 pull workers, processing 2 x ack_wait) a round of "
           "expiry redeliveries comes every second processing cycle: the "
           "late acks of the first deliveries are accepted, the redelivered "
           "copies are then processed for nothing, and only the next batch "
           "expires again; so rounds are 4 x ack_wait apart (16 s at "
           "ack_wait 4 s) and the second round, the first that can be told "
           "from a crash, comes about 3 x 8 s after the injection. The "
           "research monitor fires on the first round, which is why its "
           "P50 (8,013 ms with ack_wait 4 s) is shorter, and why it also "
           "fires on every worker crash.",
           "- MISSING_PROGRESS needs the stuck message to stand for 2 x "
           "ack_wait with a redelivery while later messages are acked; "
           "SEQUENCE_GAP and MAX_PENDING_THROTTLE are levels seen on the "
           "first poll after the signal; NAK_STORM needs two intervals of "
           "NAK-driven redeliveries.",
           "- Coverage intervals are Wilson score intervals (95%); "
           "percentiles interpolate linearly between ranks.", ""]
    out_md = os.path.join(a.out_dir, a.name + ".md")
    with open(out_md, "w") as fh:
        fh.write("\n".join(md))
    out_json = {
        "date": date, "commit": git_commit(), "interval_s": d,
        "rounds": rounds, "langs": langs,
        "topologies": labels, "headline": headline,
        "rows": [dict(scenario=k[0], cls=k[1], lang=k[2],
                      **{kk: vv for kk, vv in summarise(v, d).items()})
                 for k, v in sorted(groups.items())],
        "boundary": bnd, "soak": soak, "baseline": base, "kills": kills,
        "false_positives": fp_total, "other_class_notifications": other,
        "reference_p50_ms": REFERENCE_P50_MS}
    with open(os.path.join(a.out_dir, a.name + ".json"), "w") as fh:
        json.dump(out_json, fh, indent=1)
    print("wrote %s" % out_md)
    ok = class_ok and fp_total == 0 and other == 0 and boundary_ok
    print("verdict: %s (coverage 100%% on every row: %s, false positives: "
          "%d, other-class notifications: %d, boundary cases: %s)" % (
              "PASS" if ok else "FAIL", class_ok, fp_total, other,
              "ok" if boundary_ok else "not ok"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
