#!/usr/bin/env python3
"""Writes results/bench.md from the JSON lines tests/bench/run_bench.sh made.

Usage: report.py BENCH_JSONL OUT_MD OUT_JSON
"""
import json
import statistics
import subprocess
import sys
import time

# The reference research monitor: one CONSUMER.INFO per consumer plus two
# requests per stream and one stream list, per poll; published overhead.
REF_RSS_MB_AT_5000 = 24.5
REF_REQ_PER_S_AT_5000_5S = 1000


def ref_requests(streams, per_stream):
    return 1 + streams * (2 + per_stream)


def main():
    src, out_md, out_json = sys.argv[1:4]
    rows = [json.loads(line) for line in open(src) if line.strip()]
    sizes = {}
    rates = [r for r in rows if r["topology"] == "rate"]
    rows = [r for r in rows if r["topology"] != "rate"]
    for r in rows:
        key = (r["topology"], r["streams"], r["per_stream"])
        entry = sizes.setdefault(key, {"bench": [], "collectd": None})
        if "bench" in r:
            entry["bench"].append(r["bench"])
        else:
            entry["collectd"] = r
    table = []
    for (topo, streams, per), entry in sorted(sizes.items(),
                                              key=lambda kv: (kv[0][0] != "single", kv[0][1] * kv[0][2])):
        b = entry["bench"]
        med = lambda k: statistics.median(x[k] for x in b)
        consumers = streams * per
        row = {
            "topology": topo,
            "streams": streams,
            "consumers": consumers,
            "runs": len(b),
            "polls_per_run": b[0]["polls"],
            "requests_per_poll": med("requests_per_poll"),
            "reference_requests_per_poll": ref_requests(streams, per),
            "bytes_per_poll": med("bytes_per_poll"),
            "wall_ms": med("wall_ms_median"),
            "cpu_ms": med("cpu_ms_median"),
            "apply_ms": med("apply_ms_median"),
            "bench_rss_growth_kb": med("rss_kb_after") - med("rss_kb_before"),
            "heap_in_use_kb": med("heap_in_use_kb") if "heap_in_use_kb" in b[0] else None,
            "errors": sum(x["errors"] for x in b),
        }
        row["cpu_ms_per_1000"] = row["cpu_ms"] / consumers * 1000
        row["request_ratio"] = row["reference_requests_per_poll"] / row["requests_per_poll"]
        c = entry["collectd"]
        if c:
            row["collectd_rss_kb_without"] = c["collectd_rss_kb_without"]
            row["collectd_rss_kb_with"] = c["collectd_rss_kb_with"]
            row["collectd_rss_growth_kb"] = c["collectd_rss_kb_with"] - c["collectd_rss_kb_without"]
            row["collectd_rss_growth_none_kb"] = c["collectd_rss_kb_with_none"] - c["collectd_rss_kb_without"]
            if "anon_kb" in c:
                # Growth of anonymous memory (heap, stacks) and of mapped
                # library files, for ConsumerValues all and none.
                row["collectd_anon_growth_kb"] = [a - c["anon_kb"][0] for a in c["anon_kb"][1:]]
                row["collectd_file_growth_kb"] = [f - c["file_kb"][0] for f in c["file_kb"][1:]]
        table.append(row)
    rate_table = []
    for r in sorted(rates, key=lambda r: r["rate"]):
        b = r["bench"]
        rate_table.append({"consumers": r["streams"] * r["per_stream"],
                           "rate": r["rate"],
                           "achieved_per_s": r["achieved_per_s"],
                           "requests_per_poll": b["requests_per_poll"],
                           "bytes_per_poll": b["bytes_per_poll"],
                           "wall_ms": b["wall_ms_median"],
                           "cpu_ms": b["cpu_ms_median"],
                           "polls": b["polls"]})
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    with open(out_json, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%d"), "commit": commit,
                   "rows": table, "rates": rate_table}, f, indent=1)
    lines = []
    lines.append("# Poll cost benchmark")
    lines.append("")
    lines.append(f"Made by `make bench` on {time.strftime('%Y-%m-%d')} (commit {commit}), "
                 "2-core machine, nats-server 2.9.10 on 127.0.0.1, memory streams with "
                 "20 messages each, durable pull consumers. Each figure is the median of "
                 "the per-poll medians of several runs (the machine is shared and noisy).")
    lines.append("")
    lines.append("| topology | consumers | requests/poll (ours) | requests/poll (reference 1+S(2+C)) | ratio | bytes/poll | wall ms/poll | CPU ms/poll | CPU ms per 1,000 consumers | plugin memory growth | plugin heap in use (per consumer) | collectd RSS growth, ConsumerValues none | collectd RSS growth, ConsumerValues all |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in table:
        growth = f"{r['collectd_rss_growth_kb'] / 1024:.1f} MB" if "collectd_rss_growth_kb" in r else "-"
        growth_none = f"{r['collectd_rss_growth_none_kb'] / 1024:.1f} MB" if "collectd_rss_growth_none_kb" in r else "-"
        plugin_mem = f"{r['bench_rss_growth_kb'] / 1024:.1f} MB"
        heap = (f"{r['heap_in_use_kb'] / 1024:.1f} MB ({r['heap_in_use_kb'] * 1024 / r['consumers']:,.0f} B)"
                if r.get("heap_in_use_kb") is not None else "-")
        lines.append(
            f"| {r['topology']} ({r['streams']} streams) | {r['consumers']:,} | {r['requests_per_poll']:.0f} | "
            f"{r['reference_requests_per_poll']:,} | {r['request_ratio']:.0f}x | {r['bytes_per_poll'] / 1024:,.0f} KiB | "
            f"{r['wall_ms']:.1f} | {r['cpu_ms']:.1f} | {r['cpu_ms_per_1000']:.2f} | {plugin_mem} | {heap} | {growth_none} | {growth} |")
    lines.append("")
    lines.append("Reference figures (the research monitor, as published): one CONSUMER.INFO request per "
                 f"consumer, about {REF_REQ_PER_S_AT_5000_5S:,} requests/s at 5,000 consumers with a 5 s poll, "
                 f"and {REF_RSS_MB_AT_5000} MB RSS at 5,000 consumers.")
    five = [r for r in table if r["topology"] == "single" and r["consumers"] == 5000]
    if five:
        r = five[0]
        lines.append("")
        lines.append(f"At 5,000 consumers in {r['streams']} streams with a 5 s poll: "
                     f"{r['requests_per_poll'] / 5:.1f} requests/s against the reference's "
                     f"~{REF_REQ_PER_S_AT_5000_5S:,} ({REF_REQ_PER_S_AT_5000_5S / (r['requests_per_poll'] / 5):.0f}x fewer)"
                     + (f"; collectd RSS growth {r['collectd_rss_growth_none_kb'] / 1024:.1f} MB with "
                        f"`ConsumerValues none` and {r['collectd_rss_growth_kb'] / 1024:.1f} MB with "
                        f"`ConsumerValues all` (collectd's own value cache holding {r['consumers'] * 18:,} series), "
                        f"against the reference's {REF_RSS_MB_AT_5000} MB"
                        if "collectd_rss_growth_kb" in r else "") + ".")
    ten = [r for r in table if r["topology"] == "single" and r["consumers"] == 10000
           and "collectd_rss_growth_none_kb" in r]
    if ten:
        g = ten[0]["collectd_rss_growth_none_kb"] / 1024
        lines.append("")
        lines.append(f"At 10,000 consumers, collectd grows by {g:.1f} MB with `ConsumerValues none` "
                     f"(target: under 10 MB; {'met' if g < 10 else 'not met'}).")
    split = [r for r in table if "collectd_anon_growth_kb" in r]
    if split:
        lines.append("")
        lines.append("## What the collectd memory growth is made of")
        lines.append("")
        lines.append("Resident memory of collectd with the plugin minus collectd without it, split into "
                     "anonymous memory (heap and stacks: the plugin's per-consumer history, its threads, "
                     "and with `ConsumerValues all` collectd's value cache) and mapped library files "
                     "(libnats, OpenSSL, json-c: shared with every other process that maps them, and "
                     "the same at any size; libmicrohttpd and GnuTLS are loaded only when an instance "
                     "sets Listen, which the benchmark does not).")
        lines.append("")
        lines.append("| consumers | anonymous, ConsumerValues none | library files | anonymous, ConsumerValues all |")
        lines.append("|---:|---:|---:|---:|")
        for r in split:
            lines.append(f"| {r['consumers']:,} | {r['collectd_anon_growth_kb'][1] / 1024:.1f} MB | "
                         f"{r['collectd_file_growth_kb'][1] / 1024:.1f} MB | "
                         f"{r['collectd_anon_growth_kb'][0] / 1024:.1f} MB |")
    if rate_table:
        base = rate_table[0]
        lines.append("")
        lines.append(f"## Poll cost against message rate ({base['consumers']:,} consumers)")
        lines.append("")
        lines.append("The same polls, 1 s apart, while publishers write to every stream. "
                     "The plugin reads only the management API, so its cost must not "
                     "follow the message rate. Medians over the polls of one run each.")
        lines.append("")
        lines.append("| publish rate asked (msg/s) | reached (msg/s) | requests/poll | bytes/poll | wall ms/poll | CPU ms/poll | CPU against no traffic |")
        lines.append("|---:|---:|---:|---:|---:|---:|---:|")
        for r in rate_table:
            ratio = r["cpu_ms"] / base["cpu_ms"] if base["cpu_ms"] > 0 else 0
            lines.append(f"| {r['rate']:,} | {r['achieved_per_s']:,.0f} | {r['requests_per_poll']} | "
                         f"{r['bytes_per_poll'] / 1024:,.0f} KiB | {r['wall_ms']:.1f} | {r['cpu_ms']:.1f} | "
                         f"{ratio:.2f}x |")
        lines.append("")
        lines.append("Wall time includes the server's reply time, which grows when the server "
                     "shares the 2 cores with the publishers; CPU time is the plugin's own.")
    lines.append("")
    lines.append("Columns: requests and bytes are per poll, counted at the request function; wall time "
                 "is the whole poll (requests, parsing, history and detectors); CPU is the process CPU "
                 "time of the poll; plugin memory growth is the resident memory the poll path adds in "
                 "the benchmark driver (`build/nl-bench`: the plugin's code without collectd, that is "
                 "the per-consumer history and what a poll leaves behind), and of it the heap in use "
                 "after the last poll (malloc's count of live bytes: the history itself); collectd RSS growth is the "
                 "resident memory of collectd with the plugin after several polls (Interval 5) minus "
                 "the same collectd without it, each the median of samples taken once a second "
                 "between and across polls over several runs (both run collectd's `load` plugin, so that collectd's own read "
                 "and write threads are in both). With `ConsumerValues all` (the default) each consumer "
                 "adds 18 value lists to collectd's own value cache; `ConsumerValues none` keeps the "
                 "findings (notifications, health events, REST) and the stream values but dispatches no "
                 "per-consumer values, and `findings` only the class gauges of consumers with an active "
                 "finding.")
    open(out_md, "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
