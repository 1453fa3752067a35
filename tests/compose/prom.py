"""Asks the compose test's Prometheus (its HTTP API) what it scraped.

  prom.py URL wait-targets --up N [--timeout S]
      until N scrape targets are healthy (every target listed on failure)
  prom.py URL wait-query EXPR (--above X | --below X) [--timeout S]
      until the instant query EXPR has a sample above / below X
"""
import argparse
import json
import sys
import time
import urllib.parse
import urllib.request


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        doc = json.loads(r.read().decode())
    if doc.get("status") != "success":
        raise RuntimeError("%s: %s" % (url, doc))
    return doc["data"]


def targets(base):
    return [(t["labels"].get("instance"), t["health"], t.get("lastError", ""))
            for t in get(base + "/api/v1/targets")["activeTargets"]]


def query(base, expr):
    data = get(base + "/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    return [float(s["value"][1]) for s in data["result"]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("what", choices=["wait-targets", "wait-query"])
    ap.add_argument("expr", nargs="?")
    ap.add_argument("--up", type=int)
    ap.add_argument("--above", type=float)
    ap.add_argument("--below", type=float)
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    deadline = time.monotonic() + a.timeout
    last = None
    while True:
        try:
            if a.what == "wait-targets":
                last = targets(a.url)
                up = sum(1 for _, h, _ in last if h == "up")
                if up >= a.up:
                    print("prometheus: %d targets up: %s" % (up, ", ".join(i for i, _, _ in last)))
                    return 0
            else:
                last = query(a.url, a.expr)
                if any((a.above is not None and v > a.above) or
                       (a.below is not None and v < a.below) for v in last):
                    print("prometheus: %s = %s" % (a.expr, last))
                    return 0
        except (OSError, RuntimeError, ValueError) as e:
            last = repr(e)
        if time.monotonic() > deadline:
            print("FAIL: prometheus: %s %s: last answer %s" % (a.what, a.expr or "", last))
            return 1
        time.sleep(1)


if __name__ == "__main__":
    sys.exit(main())
