#!/usr/bin/env python3
"""Turns the raw measurements of tests/eval/eval.py into results/eval.md,
results/eval.json and the latency CDF plot results/eval-latency.png
(gnuplot). Python standard library only.

  report.py --out-dir results RAW.json [RAW.json...]

Exit status 0 when every class row (the five and the classes beyond them)
has full coverage, every must-fire boundary case fired, nothing fired where
nothing may (false positives 0) and no fault case raised another class; 1
otherwise (the files are written either way).
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
from scenarios import (ADVISORY_OF, ALL_CLASSES, CLASSES,  # noqa: E402
                       EXT_CLASSES, OPERATIONAL, REFERENCE_P50_MS, ROOT)

LANG_NAMES = {"c": "C (cnats)", "go": "Go (nats.go)",
              "js": "JavaScript (nats.js)", "py": "Python (stdlib)",
              "api": "API (nl-inject)"}
LANG_ORDER = ["c", "go", "js", "py", "api"]


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
    """Notifications of another delivery class about a fault consumer. For
    the five classes, another of the five; for a class beyond them, any
    other class but the operational one and those the case allows (right
    for it, such as STREAM_SINGLE_REPLICA on an R1 stream)."""
    if r.get("phase") == "ext":
        allowed = r.get("allowed") or []
        return [c for _, c in r.get("notifications", [])
                if c in ALL_CLASSES and c != r.get("expect")
                and c not in OPERATIONAL and c not in allowed]
    return [c for _, c in r.get("notifications", [])
            if c in CLASSES and c != r.get("expect")]


def operational(r):
    """Notifications of another class that are not counted (such as a
    consumer that cannot be observed while its node is down)."""
    other = unexpected(r)
    return [c for _, c in r.get("notifications", [])
            if c != r.get("expect") and c not in other]


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


def ext_groups(results):
    """Groups the results of the classes beyond the five by (topology,
    class, language)."""
    groups = {}
    for r in results:
        if r.get("phase") == "ext":
            key = (r.get("topology"), r["class"], r["lang"])
            groups.setdefault(key, []).append(r)
    return groups


def ext_keys(groups):
    """The keys of ext_groups in table order: class, topology, language."""
    return sorted(groups, key=lambda k: (
        EXT_CLASSES.index(k[1]), ["single", "cluster"].index(k[0])
        if k[0] in ("single", "cluster") else 2,
        LANG_ORDER.index(k[2]) if k[2] in LANG_ORDER else 9))


def summarise_ext(rows, d):
    """summarise() plus where the detections came from (poll, advisory, or
    the log when no health event was seen) and the latency from the
    triggering advisory to the finding."""
    s = summarise(rows, d)
    det = [r for r in rows if r.get("detected")]
    sources = {}
    for r in det:
        src = r.get("detect_source") or "unknown"
        sources[src] = sources.get(src, 0) + 1
    adv = [r["advisory_latency_ms"] for r in det
           if r.get("advisory_latency_ms") is not None]
    s.update({"sources": sources, "advisory_latency_ms": {
        50: pct(adv, 50), 95: pct(adv, 95), 100: max(adv) if adv else None},
        "advisory_values_ms": adv})
    return s


def source_text(sources, n):
    """"advisory 2/2", or "poll 1, advisory 1 of 2"."""
    if not sources:
        return "–"
    if len(sources) == 1:
        src, k = next(iter(sources.items()))
        return "%s %d/%d" % (src, k, n)
    return ", ".join("%s %d" % (src, k) for src, k in
                     sorted(sources.items())) + " of %d" % n


def frac(x, d):
    """A latency in ms as a fraction of the poll interval."""
    return "–" if x is None else "%.4f" % (x / (d * 1000.0))


def table_ext(groups, d):
    lines = ["| class | language | topology | rounds | detected | coverage "
             "(95% CI) | from injection P50 / P95 ms | in polls | source | "
             "from the advisory P50 / P95 ms | as a fraction of the "
             "interval (P50 / P95) | "
             "recovery P50 ms | resolved | other class or repeat |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in ext_keys(groups):
        topo, cls, lang = key
        s = summarise_ext(groups[key], d)
        li, la = s["latency_from_injection_ms"], s["advisory_latency_ms"]
        lines.append(
            "| %s | %s | %s | %d | %d | %.0f%% (%.0f–%.0f%%) | %s / %s | "
            "%s / %s | %s | %s / %s | %s / %s | %s | %d/%d | %d |" % (
                cls, LANG_NAMES.get(lang, lang), topo, s["rounds"],
                s["detected"], 100 * s["coverage"],
                100 * s["coverage_ci95"][0], 100 * s["coverage_ci95"][1],
                ms(li[50]), ms(li[95]), polls(li[50], d), polls(li[95], d),
                source_text(s["sources"], s["detected"]),
                ms1(la[50]), ms1(la[95]), frac(la[50], d), frac(la[95], d),
                ms(s["recovery_ms"][50]), s["resolved"], s["fixed"],
                s["other_class_notifications"] + s["refired"]))
    return lines


def ms1(x):
    return "–" if x is None else "{:,.1f}".format(x)


def advisory_backed(results, d):
    """One record per advisory-backed class and topology (regular rounds of
    the five, and the rounds beyond them): detections, how many came from
    an advisory, and the advisory-to-finding latency."""
    out = []
    for cls in ADVISORY_OF:
        for topo in ("single", "cluster"):
            rows = [r for r in results if r.get("expect") == cls
                    and r.get("topology") == topo and r.get("detected")
                    and (r.get("phase") == "ext" or (
                        r.get("phase") == "classes"
                        and r.get("scenario") == topo))]
            if not rows:
                continue
            adv = [r["advisory_latency_ms"] for r in rows
                   if r.get("advisory_latency_ms") is not None]
            inj = latencies(rows, "t_inject", "t_detect")
            out.append({
                "cls": cls, "topology": topo, "advisory": ADVISORY_OF[cls],
                "detections": len(rows),
                "from_advisory": sum(1 for r in rows
                                     if r.get("detect_source") == "advisory"),
                "advisory_latency_ms": {50: pct(adv, 50), 95: pct(adv, 95),
                                        100: max(adv) if adv else None},
                "latency_from_injection_ms": {50: pct(inj, 50)},
                "interval_s": d})
    return out


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


def cluster_args(raws, rounds):
    """CLUSTER_ROUNDS for the command line in the report, when the cluster
    ran other than its default number of rounds ("" otherwise)."""
    for raw in raws:
        if raw["topology"] == "cluster" and raw["rounds"] != max(
                rounds // 5, 2) and len(raws) > 1:
            return " CLUSTER_ROUNDS=%d" % raw["rounds"]
    return ""


def ext_args(raws):
    """The make variables of the rounds beyond the five, for the command
    line in the report ("" for raw files written without them)."""
    if not any("ext_rounds" in raw for raw in raws):
        return ""
    n = max(raw.get("ext_rounds") or 0 for raw in raws)
    if n == 0:
        return " EXT=0"
    out = " EXT_ROUNDS=%d" % n
    el = raws[0].get("ext_langs") or []
    if el != raws[0].get("langs"):
        out += " EXT_LANGS=\"%s\"" % " ".join(el)
    ec = raws[0].get("ext_classes")
    if ec:
        out += " EXT_CLASSES=\"%s\"" % " ".join(ec)
    return out


def classes_arg(raws):
    """The CLASSES make variable of a run of some of the five classes, for
    the command line in the report ("" when all five ran)."""
    cls = raws[0].get("classes") or CLASSES
    return "" if cls == CLASSES else " CLASSES=\"%s\"" % " ".join(cls)


# A pattern whose consumers received nothing for this long at the end of
# the run while its stream kept growing did not run as a healthy pattern:
# its client stopped reading, and a finding on it is true.
STALLED_S = 300


def generic_fix(r, text):
    """A fix command with the case's stream and consumer names replaced by
    S and C, so that rows of different rounds read alike."""
    if not text:
        return None
    w = text.split()
    for i, x in enumerate(w):
        if x == r.get("stream"):
            w[i] = "S"
        elif x == r.get("consumer") and i > 0 and w[i - 1] in (
                r.get("stream"), "S"):
            w[i] = "C"
    return " ".join(w)


def fix_cell(rows, text_key, valid_key, kind_key=None):
    """The most common fix (generic) of rows, and how many of the rows'
    fixes are valid `nats ... edit` commands."""
    fixes = {}
    n = valid = 0
    for r in rows:
        text = generic_fix(r, r.get(text_key))
        if text is None:
            continue
        n += 1
        valid += 1 if r.get(valid_key) else 0
        fixes[text] = fixes.get(text, 0) + 1
    if not n:
        return "none"
    top = max(fixes, key=fixes.get)
    kind = rows[0].get(kind_key) if kind_key else "command"
    if kind == "value":
        return "recommends `%s`, no command" % top
    return "`%s`: valid for the nats CLI in %d of %d" % (top, valid, n)


def side_by_side(results, labels, d):
    """The section comparing nats-lens with the research monitor's
    conditions applied to the same polls (tests/eval/reference.py): per
    topology and class, detection, latency, false findings and fixes.
    Returns (markdown lines, rows for the JSON)."""
    if not any("ref_polls" in r for r in results):
        return [], []
    bnd = [r for r in results if r.get("phase") == "boundary"]
    soak = [r for r in results if r.get("phase") == "soak"
            and r.get("stalled_s", 0) < STALLED_S]
    soak_s = max(((r.get("t_end") or r["t_inject"]) - r["t_inject"])
                 for r in soak) if soak else 0

    def ours_false(rows, cls):
        return sum(1 for r in rows for _, c in r.get("notifications", [])
                   if c == cls and c != r.get("expect"))

    def ref_false(rows, cls):
        return sum(1 for r in rows for c in r.get("ref_unexpected", [])
                   if c == cls)

    # Per tool: the result keys of its detection and detection time, its
    # false findings, and the keys of its fix (fix_cell).
    TOOL_KEYS = {
        "nats-lens": ("detected", "t_detect", ours_false,
                      ("fix_command", "fix_valid")),
        "monitor": ("ref_detected", "ref_t_detect", ref_false,
                    ("ref_fix", "ref_fix_valid", "ref_fix_kind"))}
    md = ["## Side by side with the research monitor (same rounds)", "",
          "The research monitor's five conditions applied to the very polls "
          "nats-lens made in this run: the plugin wrote every poll reply "
          "to its poll log (option `PollLog`), and `tests/eval/reference.py` "
          "decided each class on each consumer from the latest poll and "
          "the one before it, as the monitor does. Same consumers, same "
          "poll times, same injection times. *Detected*: the expected "
          "class fired between the injection and the fix. *Latency*: from "
          "the injection to the poll that fired (P50 / P95 ms), and the "
          "P50 in polls after the API signal (the first 0.25 s trace that "
          "showed the fault). Each fault stays for at least 10 polls "
          "after its injection, whichever tool found it first, so both "
          "have the same polls to fire on. *False findings*: onsets of another class of "
          "the five on the rounds' consumers (*rounds*), and of the class "
          "on the boundary cases and the healthy soak (%.0f s of the "
          "production mix). *Fix*: the command each gives, and whether "
          "`nats consumer edit` / `nats stream edit` accepts its flags." %
          soak_s, ""]
    out = []
    for lab in labels:
        rows_lab = [r for r in results if r.get("phase") == "classes"
                    and r.get("scenario") == lab]
        if not rows_lab:
            continue
        md += ["### %s" % lab, "",
               "| class | tool | detected | P50 / P95 ms from injection | "
               "P50 polls after the signal | P50 ms on the rounds both "
               "detected | false findings: rounds / boundary / soak | fix |",
               "|---|---|---|---|---|---|---|---|"]
        for cls in CLASSES:
            rows = [r for r in rows_lab if r["class"] == cls]
            if not rows:
                continue
            others = [r for r in rows_lab if r["class"] != cls]
            both = [r for r in rows if r.get("detected")
                    and r.get("ref_detected")]
            both_p50 = {tool: pct(latencies(both, "t_inject", keys[1]), 50)
                        for tool, keys in TOOL_KEYS.items()}
            for tool, (det, t_det, false_of, fix_keys) in TOOL_KEYS.items():
                k = sum(1 for r in rows if r.get(det))
                inj = latencies(rows, "t_inject", t_det)
                sig = latencies(rows, "t_signal", t_det)
                false = (false_of(others, cls), false_of(bnd, cls),
                         false_of(soak, cls))
                fix = fix_cell([r for r in rows if r.get(det)], *fix_keys)
                p50, p95 = pct(inj, 50), pct(inj, 95)
                md.append("| %s | %s | %d/%d | %s / %s | %s | %s (%d) | "
                          "%d / %d / %d | %s |" % (
                              cls if tool == "nats-lens" else "", tool, k,
                              len(rows), ms(p50), ms(p95),
                              polls(pct(sig, 50), d), ms(both_p50[tool]),
                              len(both), false[0], false[1], false[2], fix))
                out.append({"topology": lab, "cls": cls, "tool": tool,
                            "detected": k, "rounds": len(rows),
                            "latency_from_injection_ms": {50: p50, 95: p95},
                            "latency_from_signal_ms": {50: pct(sig, 50)},
                            "latency_both_detected_ms": {
                                50: both_p50[tool]},
                            "both_detected": len(both),
                            "false_findings": {"rounds": false[0],
                                               "boundary": false[1],
                                               "soak": false[2]}})
        md.append("")
    # What the monitor raised on the must-not-fire boundary cases and in
    # the soak, by class.
    ref_b = {}
    for r in bnd:
        for c in r.get("ref_unexpected", []):
            ref_b.setdefault(c, []).append(r["case"].split("/")[1])
    ref_s = {}
    for r in soak:
        for c in r.get("ref_unexpected", []):
            ref_s[c] = ref_s.get(c, 0) + 1
    md += ["Monitor on the boundary cases: %s." % (
        "; ".join("%s on %s" % (c, ", ".join(sorted(set(v))))
                  for c, v in sorted(ref_b.items())) or "nothing"),
           "Monitor on the healthy soak: %s (%.0f per hour); nats-lens: "
           "%d." % (", ".join("%s %d" % kv for kv in sorted(ref_s.items()))
                    or "nothing", sum(ref_s.values()) * 3600.0 / soak_s
                    if soak_s else 0,
                    sum(1 for r in soak for _, c in r.get("notifications", [])
                        if c not in OPERATIONAL)), ""]
    shapes = shape_rows(results, d)
    if shapes:
        md += shapes
    return md, out


def shape_rows(results, d):
    """ACK_WAIT_VIOLATION and MISSING_PROGRESS per injector shape: both
    tools' detection and P50 latency, and nats-lens's P50 in polls after
    the signal."""
    groups = {}
    for r in results:
        if r.get("phase") == "classes" and r.get("shape"):
            groups.setdefault((r.get("scenario"), r["class"], r["shape"]),
                              []).append(r)
    if not groups:
        return []
    md = ["### The duplicate-execution classes by injector shape", "",
          "| topology | class | shape | rounds | nats-lens detected | P50 ms "
          "(polls after the signal) | monitor detected | P50 ms (polls after "
          "the signal) |", "|---|---|---|---|---|---|---|---|"]
    for key in sorted(groups):
        rows = groups[key]
        ours = latencies(rows, "t_inject", "t_detect")
        ref = latencies(rows, "t_inject", "ref_t_detect")
        md.append("| %s | %s | %s | %d | %d | %s (%s) | %d | %s (%s) |" % (
            key[0], key[1], rows[0].get("shape_note", key[2]), len(rows),
            sum(1 for r in rows if r.get("detected")), ms(pct(ours, 50)),
            polls(pct(latencies(rows, "t_signal", "t_detect"), 50), d),
            sum(1 for r in rows if r.get("ref_detected")), ms(pct(ref, 50)),
            polls(pct(latencies(rows, "t_signal", "ref_t_detect"), 50), d)))
    md.append("")
    return md



def mix_section(soak, raws):
    """The production mix: one row per pattern, then the false findings per
    class and the notifications per hour."""
    secs = max(((r.get("t_end") or r.get("t_inject", 0)) -
                r.get("t_inject", 0)) for r in soak)
    md = ["## Production mix (healthy soak)", "",
          "%d healthy patterns at once for %.0f s, each on streams of its "
          "own, through real clients; every FAILURE or WARNING notification "
          "about their streams is a false finding. *Polls* counts the polls "
          "that listed the pattern's stream, *busy* the polls in which one "
          "of its consumers had deliveries (the pattern ran), *restarts* the "
          "times a client was started again (killed on purpose, or after "
          "the server restart). CONSUMER_UNOBSERVABLE says that the plugin "
          "could not read a stream's consumers (a poll cut off by its time "
          "budget, the server restarting): it is about the plugin's view, "
          "not the application, and is counted apart as *operational*. A pattern "
          "whose client stopped reading for %d s or more at the end while "
          "its stream kept growing no longer ran as a healthy pattern: a "
          "finding on it is true and is counted apart as *stalled client*." % (
              sum(1 for r in soak if r["case"] != "mix/server-restart"),
              secs, STALLED_S), "",
          "| pattern | language | what it does | polls | consumers / busy | "
          "restarts | false findings | operational |",
          "|---|---|---|---|---|---|---|---|"]
    per_class, operational, stalled = {}, {}, {}
    for r in soak:
        every = [c for _, c in r.get("notifications", [])]
        fired = [c for c in every if c not in OPERATIONAL]
        ops = [c for c in every if c in OPERATIONAL]
        stall = r.get("stalled_s", 0) >= STALLED_S
        for c in fired:
            where = stalled if stall else per_class
            where[c] = where.get(c, 0) + 1
        if stall and fired:
            fired = ["%s (true: client stalled %d s)" % (c, r["stalled_s"])
                     for c in fired]
        for c in ops:
            operational[c] = operational.get(c, 0) + 1
        restarts = sum(v for k, v in r.items() if k.startswith("restarts_"))
        if r["case"] == "mix/server-restart":
            md.append("| server restart | - | %s | - | - | - | %s | %s |" % (
                "SIGTERM halfway, started again with its store: %s" % (
                    "healthy again" if r.get("server_restarted") else
                    "NOT healthy again"), ", ".join(fired) or "0",
                len(ops)))
            continue
        md.append("| %s | %s | %s | %d | %d / %d | %d | %s | %d |" % (
            r["case"].split("/", 1)[1], LANG_NAMES.get(r["lang"], r["lang"]),
            r["note"], r.get("polls_seen", 0), r.get("consumers_seen", 0),
            r.get("polls_with_deliveries", 0), restarts,
            ", ".join(fired) or "0", len(ops)))
    total = sum(per_class.values())
    onsets = [raw.get("onsets_per_hour_max") for raw in raws
              if raw.get("onsets_per_hour_max") is not None]
    polls_failed = sum(raw.get("poll_failed_notifications", 0)
                       for raw in raws)
    md += ["", "| | |", "|---|---|",
           "| false findings per class | %s |" % (
               ", ".join("%s %d" % kv for kv in sorted(per_class.items()))
               or "none"),
           "| false notifications per hour | %.1f |" % (
               total * 3600.0 / secs if secs > 0 else 0),
           "| findings on a stalled client (true) | %s |" % (
               ", ".join("%s %d" % kv for kv in sorted(stalled.items()))
               or "none"),
           "| operational notifications (CONSUMER_UNOBSERVABLE) | %d |" %
           sum(operational.values()),
           "| `gauge-onsets_per_hour` of the instance, highest | %s |" % (
               "%.0f" % max(onsets) if onsets else "-"),
           "| POLL_FAILED notifications (server restart) | %d |" %
           polls_failed, ""]
    return md


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
           "| command | `make eval ROUNDS=%d INTERVAL=%g LANGS=\"%s\"%s "
           "TOPOLOGY=%s SOAK=%d%s` |" % (
               rounds, d, " ".join(langs), classes_arg(raws),
               "both" if len(raws) > 1 else raws[0]["topology"],
               max(raw.get("soak_s", 0) for raw in raws),
               cluster_args(raws, rounds) + ext_args(raws)),
           "| rounds per class and language | %d (single node) |" % rounds,
           "| poll interval | %g s |" % d,
           "| topologies | %s |" % ", ".join(labels),
           "| server | %s |" % version(["nats-server", "--version"]),
           "| collectd | %s |" % version(["sh", "-c", "collectd -h | grep "
                                           "-m1 -oE 'collectd [0-9]+[.][0-9]+[.][0-9]+'"]),
           "| run time | %.0f min |" % minutes, ""]

    # Headline against the published reference (when the five classes ran).
    if not labels:
        md += ["## The five classes", "",
               "Not run in this run (ROUNDS=0); the full evaluation of the "
               "five classes is `results/eval.md`.", ""]
    head = []
    head += ["## Against the published reference", "",
           "The research monitor's published numbers (3 s poll interval, 200 "
           "rounds per class, detection P50) next to this run (first "
           "topology, all languages together).", "",
           "| class | reference: detected | reference P50 ms | nats-lens: "
           "detected (95% CI) | nats-lens P50 ms from injection (polls) | "
           "P95 ms | P50 ms from API signal | recovery P50 ms |",
           "|---|---|---|---|---|---|---|---|"]
    md += head if labels else []
    headline = {}
    for cls in CLASSES:
        rows = [r for lang in langs for r in groups.get((labels[0], cls,
                                                         lang), [])] \
            if labels else []
        if labels and not rows:
            continue  # A class left out of this run (CLASSES).
        s = summarise(rows, d)
        headline[cls] = {k: v for k, v in s.items() if k != "inj_values_ms"}
        li = s["latency_from_injection_ms"]
        if not labels:
            continue
        md.append("| %s | 100%% | %s | %d/%d = %.0f%% (%.0f–%.0f%%) | %s "
                  "(%s) | %s | %s | %s |" % (
                      cls, ms(REFERENCE_P50_MS[cls]), s["detected"],
                      s["rounds"], 100 * s["coverage"],
                      100 * s["coverage_ci95"][0],
                      100 * s["coverage_ci95"][1], ms(li[50]),
                      polls(li[50], d), ms(li[95]),
                      ms(s["latency_from_signal_ms"][50]),
                      ms(s["recovery_ms"][50])))
    if labels:
        md.append("")

    sbs_md, sbs_rows = side_by_side(results, labels, d)
    md += sbs_md

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

    # The classes beyond the five.
    xgroups = ext_groups(results)
    ext_rounds = max((raw.get("ext_rounds") or 0) for raw in raws)
    if xgroups:
        md += ["## Classes beyond the five", "",
               "The eight classes added with advisory-driven detection "
               "(docs/detectors.md), %d round(s) per topology, each case on "
               "a fresh stream. Faults the consuming application makes run "
               "once per injector language; pure configuration runs once, "
               "made with `nl-inject` (language *API*). *Source*: whether "
               "the finding was raised by a poll or between polls by a "
               "JetStream advisory. *From the advisory*: from the server's "
               "advisory timestamp to the finding's `detected_at` (an upper "
               "bound: `detected_at` is cut to the millisecond, so 1 ms is "
               "added), and as a fraction of the poll interval (%g s)." % (
                   ext_rounds, d), ""]
        md += table_ext(xgroups, d)
        md += ["", "What each case injects (at poll interval %g s):" % d,
               ""]
        for cls in EXT_CLASSES:
            r = next((r for r in results if r.get("phase") == "ext"
                      and r["class"] == cls), None)
            if r is None:
                continue
            # A poll slowed down by the server (a missing stream's 4 s
            # scatter-gather) gives its finding long after it began.
            out = pct(latencies([x for x in results if x.get("phase") ==
                                 "ext" and x["class"] == cls
                                 and x.get("detect_source") == "poll"],
                                "t_detect", "t_detect_out"), 50)
            md.append("- **%s**: %s%s." % (
                cls, r.get("note", ""), "" if out is None or out < 1000
                else "; the poll that saw the fault gave its finding %s ms "
                "(P50) after it began (the table times the poll's start, as "
                "for every class)" % ms(out)))
        md += ["", "*Other class or repeat* counts, for these rows, every "
               "FAILURE or WARNING notification about the case's stream of "
               "a class other than the expected one, the five included, "
               "and every repeat of the expected one; not counted are "
               "CONSUMER_UNOBSERVABLE when another class is expected (the "
               "plugin's view, as in the five-class rows) and "
               "STREAM_SINGLE_REPLICA in the CONSUMER_UNOBSERVABLE case, "
               "whose stream has one replica by construction. No other "
               "case can rightly raise one of the five: the poison message "
               "of MAX_DELIVER_EXHAUSTED is NAKed three times in all "
               "(NAK_STORM needs five NAKs within 5 s, or three "
               "redeliveries in each of two intervals); the RETENTION_RISK "
               "case is fixed long before its stream reaches the limit, so "
               "a SEQUENCE_GAP there would be real loss and a failure of "
               "the case; and the consumers of the other cases ack within "
               "50-100 ms of a 30 s ack_wait.", ""]
    adv_rows = advisory_backed(results, d)
    if adv_rows:
        md += ["## Advisory-backed detection", "",
               "Findings that JetStream advisories raise between polls: "
               "NAK_STORM from MSG_NAKED (the rounds of the five), "
               "MAX_DELIVER_EXHAUSTED from MAX_DELIVERIES and "
               "ACK_NONE_CONSUMER from CREATED (the rounds beyond the "
               "five). Latency from the advisory that completed the "
               "predicate (server timestamp) to the finding (the health "
               "event's `detected_at`, +1 ms for its millisecond cut); the "
               "poll interval is %g s." % d, "",
               "| class | advisory | topology | detections | raised by an "
               "advisory | advisory to finding P50 / P95 / max ms | as a "
               "fraction of the poll interval (P50 / P95 / max) | from "
               "injection P50 ms |", "|---|---|---|---|---|---|---|---|"]
        for row in adv_rows:
            la = row["advisory_latency_ms"]
            md.append("| %s | %s | %s | %d | %d | %s / %s / %s | %s / %s / "
                      "%s | %s |" % (
                          row["cls"], row["advisory"], row["topology"],
                          row["detections"], row["from_advisory"],
                          ms1(la[50]), ms1(la[95]), ms1(la[100]),
                          frac(la[50], d), frac(la[95], d), frac(la[100], d),
                          ms(row["latency_from_injection_ms"][50])))
        md.append("")

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
        md += mix_section(soak, raws)
        fp_total += sum(1 for r in soak for _, c in r.get("notifications", [])
                        if c not in OPERATIONAL and
                        r.get("stalled_s", 0) < STALLED_S)

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
    missed = [r for r in results if r.get("phase") in ("classes", "ext")
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
                   for rows in list(groups.values()) + list(xgroups.values()))
    other = sum(summarise(rows, d)["other_class_notifications"]
                for rows in list(groups.values()) + list(xgroups.values()))
    md += ["## Verdict", "",
           "- class rows with 100%% coverage: %d of %d" % (
               sum(1 for rows in groups.values()
                   if summarise(rows, d)["coverage"] == 1.0), len(groups)),
           "- rows of the classes beyond the five with 100%% coverage: %d "
           "of %d" % (sum(1 for rows in xgroups.values()
                          if summarise(rows, d)["coverage"] == 1.0),
                      len(xgroups)),
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
           "timed by the `detected_at` of the plugin's health event (a "
           "poll's finding has the poll's time there, so an event at no "
           "poll's time came from an advisory), and so is its OKAY; "
           "without a health event, when its notification appeared in "
           "collectd's log (read every 0.2 s). "
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
    if xgroups:
        md[-1:-1] = [
            "- The classes beyond the five run after the rounds of the five "
            "on each topology, on streams `X<round>_<class>_<language>`, "
            "all cases of a round at once; CONSUMER_UNOBSERVABLE kills the "
            "node that holds its stream, so it runs alone at the end. A "
            "case waits for two polls of its consumer (of its stream for "
            "ACK_NONE_CONSUMER, whose consumer is the fault; none for "
            "STREAM_SINGLE_REPLICA, whose fault is the stream's creation). "
            "The advisory of an advisory-backed finding is the first "
            "MAX_DELIVERIES or CREATED advisory of the consumer, and for "
            "NAK_STORM the MSG_NAKED advisory that completed the "
            "predicate (5 within 5 s, one with 3 deliveries), all read by "
            "the driver on its own subscription."]
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
        "ext_rounds": ext_rounds,
        "rows_ext": [dict(topology=k[0], cls=k[1], lang=k[2],
                          note=xgroups[k][0].get("note", ""),
                          **summarise_ext(xgroups[k], d))
                     for k in ext_keys(xgroups)],
        "advisory_backed": adv_rows,
        "ext_results": [r for r in results if r.get("phase") == "ext"],
        "boundary": bnd, "soak": soak, "baseline": base, "kills": kills,
        "false_positives": fp_total, "other_class_notifications": other,
        "reference_p50_ms": REFERENCE_P50_MS, "side_by_side": sbs_rows}
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
