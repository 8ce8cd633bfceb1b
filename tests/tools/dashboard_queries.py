#!/usr/bin/env python3
"""Runs the InfluxQL queries of a Grafana dashboard against InfluxDB 1.x.

Usage: dashboard_queries.py DASHBOARD_JSON INFLUX_URL DATABASE [NAME=VALUE...]

Each query of the dashboard (every panel target and every template
variable) is sent to INFLUX_URL/query the way Grafana would send it: the
template variables are replaced by the NAME=VALUE arguments (a regex value
such as .* stands for "All"), $timeFilter by the last 10 minutes and
$__interval by 1s. Prints one line per result series:

  panel=ID title="TITLE" tags=k=v,k=v n=POINTS last=V min=V max=V
  var=NAME values=a,b,c

and one "error ..." line per query that failed or left a macro unreplaced.
Exits 1 when any query failed, 2 on bad arguments.
"""
import json
import re
import sys
import urllib.parse
import urllib.request


def substitute(query, variables):
    """Returns the query with Grafana's macros and variables replaced."""
    q = query.replace("$timeFilter", "time > now() - 10m")
    q = q.replace("$__interval", "1s")
    for name, value in variables.items():
        q = q.replace("${" + name + "}", value).replace("$" + name, value)
    left = re.findall(r"\$\{?\w+", q)
    if left:
        raise ValueError("unreplaced " + ",".join(left))
    return q


def run(url, db, query):
    """Returns the series list of one InfluxQL query; raises on an error."""
    params = urllib.parse.urlencode({"db": db, "q": query, "epoch": "s"})
    with urllib.request.urlopen(url + "/query?" + params, timeout=10) as r:
        body = json.load(r)
    result = body["results"][0]
    if "error" in result:
        raise ValueError(result["error"])
    return result.get("series", [])


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        dash = json.load(f)
    url, db = argv[2].rstrip("/"), argv[3]
    variables = dict(a.split("=", 1) for a in argv[4:])
    failed = False
    for var in dash.get("templating", {}).get("list", []):
        try:
            series = run(url, db, substitute(var["query"], variables))
            values = [row[-1] for s in series for row in s["values"]]
            print("var=%s values=%s" % (var["name"], ",".join(values)))
        except (ValueError, OSError, KeyError) as e:
            print("error var=%s: %s" % (var.get("name"), e))
            failed = True
    for panel in dash.get("panels", []):
        for target in panel.get("targets", []):
            try:
                series = run(url, db, substitute(target["query"], variables))
            except (ValueError, OSError, KeyError) as e:
                print("error panel=%s: %s" % (panel.get("id"), e))
                failed = True
                continue
            for s in series:
                tags = ",".join("%s=%s" % kv for kv in sorted(s.get("tags", {}).items()))
                vals = [row[1] for row in s["values"] if row[1] is not None]
                print('panel=%s title="%s" tags=%s n=%d last=%s min=%s max=%s' % (
                    panel["id"], panel["title"], tags, len(vals),
                    vals[-1] if vals else None, min(vals) if vals else None,
                    max(vals) if vals else None))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
