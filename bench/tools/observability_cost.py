#!/usr/bin/python3
"""What watching a gateway costs small requests: alternated runs of
cairn-bench GETs (or PUTs) of 4 KiB objects against one gateway started in
two configurations over the same 3 storage nodes:

  base  metrics.port = 0 (nothing counted), access lines into the gateway's
        log at log.level info (as before the access log had a file)
  obs   metrics on and scraped once a second (the gateway's /metrics),
        log.access_file = a file, log.format = json

  bench/tools/observability_cost.py [--bin build/bin] [--runs 3] [--seconds 5]
      [--clients 32] [--keys 1000] [--op get]

Prints a markdown table (ops/s, p50, p99 and the gateway's CPU per request
of every run, medians, the obs/base ratio) and the command lines."""
import argparse
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from s3util import Cluster  # noqa: E402
from small_vs_nginx import bench, cpu_seconds, figures, sh  # noqa: E402
from snclient import free_port  # noqa: E402


def scraper(port, stop):
    while not stop.is_set():
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
                r.read()
        except OSError:
            pass
        stop.wait(1.0)


def restart(c, settings):
    c.proc.terminate()
    c.proc.wait(30)
    for k in ("metrics.port", "log.access_file", "log.format"):
        c.settings.pop(k, None)
    c.settings.update(settings)
    c.start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--op", default="get", choices=("get", "put"))
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    os.environ["CAIRN_BIN"] = a.bin
    a.out = tempfile.mkdtemp(prefix="obs_cost_")
    load0 = os.getloadavg()
    rows = {"base": [], "obs": []}
    cmds = []
    with Cluster(settings={"log.level": "info"},
                 node_settings={"obj_containers.sync_mode": "none"}) as c:
        c.boto().create_bucket(Bucket="g4096")
        bench(a, "%s/g4096" % c.url, "put", "{partitioned_sequential_int,1,%d}" % a.keys, 0,
              4096, conc=8)
        access = os.path.join(c.tmp, "access.log")
        for _ in range(a.runs):
            for cfg in ("base", "obs"):
                mport = free_port()
                restart(c, {} if cfg == "base" else {
                    "metrics.port": mport, "log.access_file": access, "log.format": "json"})
                stop = threading.Event()
                t = None
                if cfg == "obs":
                    t = threading.Thread(target=scraper, args=(mport, stop), daemon=True)
                    t.start()
                c0 = cpu_seconds([c.proc.pid])
                js, cmd = bench(a, "%s/g4096" % c.url, a.op, "{uniform_int,%d}" % a.keys,
                                a.seconds, 4096 if a.op == "put" else None)
                c1 = cpu_seconds([c.proc.pid])
                stop.set()
                if t is not None:
                    t.join()
                f = figures(js, a.op)
                f["cpu_us"] = 1e6 * (c1 - c0) / max(f["n"], 1)
                rows[cfg].append(f)
                cmds.append(cmd)
                print("<!-- %s: %.0f ops/s -->" % (cfg, f["ops"]), flush=True)
    load1 = os.getloadavg()
    med = {k: statistics.median(r["ops"] for r in v) for k, v in rows.items()}
    print("Machine: %s x %s, kernel %s; load average %.1f before, %.1f after (a shared, "
          "noisy machine)." % (sh("nproc"), sh("lscpu | sed -n 's/^Model name: *//p'"),
                               platform.release(), load0[0], load1[0]))
    print("Command: `bench/tools/observability_cost.py %s`\n" % " ".join(sys.argv[1:]))
    print("| config | %s 4 KiB ops/s (runs) | median | p50 µs | p99 µs | gateway CPU µs/req |"
          % a.op.upper())
    print("|---|---|---|---|---|---|")
    for k in ("base", "obs"):
        v = rows[k]
        print("| %s | %s | **%.0f** | %s | %s | %s |" % (
            k, ", ".join("%.0f" % r["ops"] for r in v), med[k],
            ", ".join("%d" % r["p50"] for r in v), ", ".join("%d" % r["p99"] for r in v),
            ", ".join("%.0f" % r["cpu_us"] for r in v)))
    print("\nobs / base (medians): %.2f" % (med["obs"] / med["base"]))
    print("\ncairn-bench command of the last run: `%s`" % cmds[-1])


if __name__ == "__main__":
    main()
