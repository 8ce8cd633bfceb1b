#!/usr/bin/env python3
"""tests/eval/versions_table.py: the per-version table of results/eval.md.

Usage: versions_table.py --command CMD --out OUT DIR...

Each DIR is one version's evaluation (tests/eval/versions.sh writes
DIR/eval.json and DIR/eval.out; the directory's name is the version). For
each class and topology it counts the rounds where the finding was raised
(detected) and, of those that got their fix, where it cleared (cleared),
the notifications of another class its rounds raised, and the median latency from injection to the finding. The table goes into
OUT/eval.md between the versions markers (an older table is replaced; the
section is appended when absent) and OUT/eval-versions.json. Exits 1 when
any round was missed or not cleared, or a version has no results."""
import argparse
import json
import os
import sys

BEGIN = "<!-- versions: made by tests/eval/versions.sh -->"
END = "<!-- /versions -->"
TOPOLOGIES = ("single", "cluster")


def key_version(v):
    return [int(p) if p.isdigit() else p for p in v.split(".")]


# The key of the node-kill rounds' detections among a version's cells
# (they are left out of the class cells).
KILLS = ("", "node killed")


def new_cell():
    """An empty table cell: counts of rounds and the latency medians."""
    return dict(rounds=0, detected=0, fixed=0, resolved=0, other=0, p50=[])


def load(dir_):
    """Returns {(class, topology): {rounds, detected, fixed, resolved,
    p50_ms}} of one version's eval.json, or None without one; the cell
    under KILLS holds the node-kill rounds' detections."""
    path = os.path.join(dir_, "eval.json")
    if not os.path.exists(path):
        return None
    r = json.load(open(path))
    cells = {}
    rows = [(x["scenario"], x) for x in r.get("rows", [])]
    rows += [(x["topology"], x) for x in r.get("rows_ext", [])]
    for topology, x in rows:
        if topology.startswith("cluster, node killed"):
            # The node-kill rounds count only their false findings, in the
            # cluster's cell; their detections are in the version's report.
            c = cells.setdefault((x["cls"], "cluster"), new_cell())
            c["other"] += x.get("other_class_notifications", 0)
            k = cells.setdefault(KILLS, new_cell())
            k["rounds"] += x["rounds"]
            k["detected"] += x["detected"]
            continue
        if topology not in TOPOLOGIES:
            continue
        c = cells.setdefault((x["cls"], topology), new_cell())
        c["rounds"] += x["rounds"]
        c["detected"] += x["detected"]
        c["fixed"] += x["fixed"]
        c["resolved"] += x["resolved"]
        c["other"] += x.get("other_class_notifications", 0)
        p50 = x.get("latency_from_injection_ms", {}).get("50")
        if p50 is not None:
            c["p50"].append(p50)
    return cells


def cell_text(c):
    if c is None:
        return "–"
    ok = (c["detected"] == c["rounds"] and c["resolved"] == c["fixed"]
          and c["other"] == 0)
    lat = ("%.1f s" % (sorted(c["p50"])[len(c["p50"]) // 2] / 1000)
           if c["p50"] else "")
    text = "%d/%d, %d/%d" % (c["detected"], c["rounds"], c["resolved"],
                              c["fixed"])
    if c["other"]:
        text += ", %d of another class" % c["other"]
    return ("%s (%s)" % (text, lat) if lat else text) + ("" if ok else " **✗**")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--command", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    versions = {}
    failed = False
    for d in a.dirs:
        v = os.path.basename(os.path.normpath(d))
        versions[v] = load(d)
        if versions[v] is None:
            print("versions: no results for %s (see %s/eval.out)" % (v, d),
                  file=sys.stderr)
            failed = True
    order = sorted(versions, key=key_version)
    classes = []
    for v in order:
        for key in sorted((versions[v] or {}).keys()):
            if key != KILLS and key[0] not in classes:
                classes.append(key[0])
    md = [BEGIN, "## Classes per nats-server version", "",
          "Each cell: rounds detected / rounds, then rounds cleared after "
          "the fix / rounds fixed, and the median latency from injection "
          "to the finding, and the notifications of another class the "
          "round raised (a false finding: marked ✗; on the cluster, "
          "the node-kill rounds' too). Single node and a 3-node cluster, C injectors, "
          "fresh streams and consumers each round; – where the class has "
          "no round on that topology. Made by:", "",
          "    " + a.command, ""]
    head = "| class |" + "".join(" %s %s |" % (v, t) for v in order
                                 for t in TOPOLOGIES)
    md += [head, "|---|" + "---|" * (len(order) * len(TOPOLOGIES))]
    out = {"command": a.command, "versions": {}}
    for cls in classes:
        line = "| %s |" % cls
        for v in order:
            for t in TOPOLOGIES:
                c = (versions[v] or {}).get((cls, t))
                line += " %s |" % cell_text(c)
                if c is not None:
                    failed |= (c["detected"] != c["rounds"]
                               or c["resolved"] != c["fixed"] or c["other"])
                    out["versions"].setdefault(v, {}).setdefault(t, {})[
                        cls] = {k: c[k] for k in
                                ("rounds", "detected", "fixed", "resolved",
                                 "other")}
        md.append(line)
    # The node-kill rounds' detections, which the cells leave out: the
    # consumers whose leader was on the killed node miss polls meanwhile.
    kills = ["%s %d/%d" % (v, c["detected"], c["rounds"]) for v in order
             for c in [(versions[v] or {}).get(KILLS)] if c]
    if kills:
        md += ["", "Node-kill rounds of the cluster (one with another node "
               "killed, one with the plugin's; not in the cells), faults "
               "detected / injected: " + ", ".join(kills) + ". The misses "
               "are named in each version's report "
               "(results/versions/<version>/eval.md)."]
    md += ["", END]
    path = os.path.join(a.out, "eval.md")
    text = open(path).read() if os.path.exists(path) else "# nats-lens evaluation\n"
    block = "\n".join(md)
    if BEGIN in text and END in text:
        pre = text[:text.index(BEGIN)]
        post = text[text.index(END) + len(END):]
        text = pre + block + post
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    with open(path, "w") as fh:
        fh.write(text)
    with open(os.path.join(a.out, "eval-versions.json"), "w") as fh:
        json.dump(out, fh, indent=1)
    print("\n".join(md[md.index(head):-2]))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
