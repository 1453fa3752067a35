#!/usr/bin/python3
"""Small objects through cairn (gateway + 3 storage nodes on loopback)
against nginx serving the same sizes from files, measured with cairn-bench
in the same run. Writes markdown for bench/results/.

  bench/tools/small_vs_nginx.py [--bin build/bin] [--runs 3] [--seconds 5]
      [--clients 32] [--keys 1000] [--log-level info] [--nginx-workers 2]
      [--md bench/results/small-objects-2vcpu-vm.md] [--only get4096,put65536]

Scenarios: GET and PUT of 4 KiB and 64 KiB objects, --clients concurrent
workers (one connection and one request in flight each), --seconds per run.
Each scenario runs --runs times, cairn then nginx alternated, and the table
gives medians: ops/s, p50 and p99 latency, cairn/nginx ratio, and CPU time
per request of the gateway (and of the 3 storage nodes, and of nginx's
workers), read from /proc/<pid>/stat before and after each run.

GETs read keys 1..--keys, loaded once before (cairn: PUT with cairn-bench;
nginx: static files of the same size). PUTs overwrite keys 1..--keys
(cairn: another bucket; nginx: WebDAV PUT). Storage nodes run
obj_containers.sync_mode = none (nginx does not fsync either); replicas N=3,
W=2 as deployed, so a cairn PUT writes 3x the bytes nginx writes. Nothing is
pinned: the driver, nginx, the gateway and the nodes share all cores, as the
goal (5,000 4 KiB GETs/s with client and cluster on one 2-core machine)
states. The gateway runs at --log-level (default info, as deployed: one log
line per request). --only limits the run to the named cells (op and size in
bytes, comma-separated; default all four), e.g. for a quick look: write its
markdown elsewhere with --md."""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
from nginx_fixture import Nginx  # noqa: E402
from s3util import ACCESS_KEY, SECRET_KEY, Cluster  # noqa: E402

SIZES = ((4096, "4 KiB"), (65536, "64 KiB"))


def cpu_seconds(pids):
    """Sum of user + system CPU seconds of the given processes (gone: 0)."""
    tot = 0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        tot += int(fields[11]) + int(fields[12])
    return tot / os.sysconf("SC_CLK_TCK")


def children(pid):
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def bench(a, endpoint, op, keys, seconds, size=None, signed=True, conc=None):
    """One cairn-bench run; returns (summary.json, command line)."""
    cmd = [os.path.join(a.bin, "cairn-bench"), "--endpoint", endpoint,
           "--duration", "%ds" % seconds if seconds else "3600s",
           "--concurrent", str(conc or a.clients), "--operations", "[{%s,1}]" % op,
           "--key_generator", keys, "--report_interval", "1", "--progress", "false",
           "--plot", "false", "--out", a.out, "--not_found_ok", "false"]
    if size:
        cmd += ["--value_generator", "{fixed_bin,%d}" % size]
    if signed:
        cmd += ["--access_key", ACCESS_KEY, "--secret_key", SECRET_KEY]
    else:
        cmd += ["--create_bucket", "false"]  # nginx: no S3 CreateBucket
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(a.out, "summary.json")) as f:
        js = json.load(f)
    return js, " ".join(cmd)


def figures(js, op):
    """ops/s, p50 us, p99 us, requests, errors of one run."""
    o = js["ops"][op]
    t = js["total"]
    return {"ops": o["ops_per_sec"], "p50": o["latency_us"]["p50"],
            "p99": o["latency_us"]["p99"], "n": t["ok"] + t["errors"], "err": t["errors"]}


def one(a, endpoint, op, keys, size, signed, pids):
    c0 = [cpu_seconds([p]) for p in pids]
    js, cmd = bench(a, endpoint, op, keys, a.seconds, size if op == "put" else None, signed)
    c1 = [cpu_seconds([p]) for p in pids]
    f = figures(js, op)
    f["cpu_us"] = [1e6 * (y - x) / max(f["n"], 1) for x, y in zip(c0, c1)]
    f["cmd"] = cmd
    return f


def sh(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.rstrip("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--log-level", default="info")
    ap.add_argument("--nginx-workers", type=int, default=2)
    ap.add_argument("--only", default="",
                    help="cells to run, e.g. get4096,put65536 (default: all)")
    ap.add_argument("--md", default=os.path.join(ROOT, "bench", "results",
                                                 "small-objects-2vcpu-vm.md"))
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    os.environ["CAIRN_BIN"] = a.bin
    argv = "bench/tools/small_vs_nginx.py " + " ".join(sys.argv[1:])
    load0 = os.getloadavg()
    mach = {"nproc": sh("nproc"), "model": sh("lscpu | sed -n 's/^Model name: *//p'"),
            "free": sh("free -g"), "kernel": platform.release(),
            "nginx": subprocess.run(["nginx", "-v"], capture_output=True,
                                    text=True).stderr.strip()}
    a.out = tempfile.mkdtemp(prefix="small_vs_nginx_")
    rows, cmds, raw = [], [], []
    with Cluster(settings={"log.level": a.log_level},
                 node_settings={"obj_containers.sync_mode": "none"}) as c, \
            Nginx(nsmall=1, workers=a.nginx_workers) as n:
        www = os.path.join(n.dir, "www")
        for size, _ in SIZES:
            d = os.path.join(www, "s%d" % size)
            os.makedirs(d, mode=0o755)
            body = os.urandom(size)
            for k in range(1, a.keys + 1):
                with open(os.path.join(d, str(k)), "wb") as f:
                    f.write(body)
        s3 = c.boto()
        for size, _ in SIZES:
            s3.create_bucket(Bucket="g%d" % size)
            s3.create_bucket(Bucket="p%d" % size)
            bench(a, "%s/g%d" % (c.url, size), "put",
                  "{partitioned_sequential_int,1,%d}" % a.keys, 0, size, conc=8)
        gw_pids = [c.proc.pid]
        node_pids = [x.proc.pid for x in c.nodes]
        ng_pids = children(n.proc.pid) or [n.proc.pid]
        keys = "{uniform_int,%d}" % a.keys
        only = set(x.strip() for x in a.only.split(",") if x.strip())
        for op in ("get", "put"):
            for size, label in SIZES:
                if only and "%s%d" % (op, size) not in only:
                    continue
                cpath = "%s/%s%d" % (c.url, "g" if op == "get" else "p", size)
                npath = "%s/%s" % (n.endpoint, ("s%d" % size) if op == "get" else "dav")
                cr, nr = [], []
                for _ in range(a.runs):
                    cr.append(one(a, cpath, op, keys, size, True, gw_pids + node_pids))
                    nr.append(one(a, npath, op, keys, size, False, ng_pids))
                    for tag, r in (("cairn", cr[-1]), ("nginx", nr[-1])):
                        if r["err"]:
                            raise RuntimeError("%s %s %s: %d errors" % (tag, op, label, r["err"]))
                    print("<!-- %s %s: cairn %.0f ops/s, nginx %.0f ops/s -->" % (
                        op.upper(), label, cr[-1]["ops"], nr[-1]["ops"]), flush=True)
                med = lambda rs, k: statistics.median(r[k] for r in rs)  # noqa: E731
                gw_us = statistics.median(r["cpu_us"][0] for r in cr)
                sn_us = statistics.median(sum(r["cpu_us"][1:]) for r in cr)
                ng_us = statistics.median(sum(r["cpu_us"]) for r in nr)
                rows.append("| %s %s | %.0f | %.0f | %.2f | %.0f / %.0f | %.0f / %.0f | "
                            "%.0f | %.0f | %.0f | %s / %s |" % (
                                op.upper(), label, med(cr, "ops"), med(nr, "ops"),
                                med(cr, "ops") / med(nr, "ops"), med(cr, "p50"), med(cr, "p99"),
                                med(nr, "p50"), med(nr, "p99"), gw_us, sn_us, ng_us,
                                [round(r["ops"]) for r in cr], [round(r["ops"]) for r in nr]))
                print(rows[-1], flush=True)
                cmds += [cr[-1]["cmd"].replace(c.url, "http://127.0.0.1:GW"),
                         nr[-1]["cmd"].replace(n.endpoint, "http://127.0.0.1:NGINX")]
                raw.append((op, label, cr, nr))
    shutil.rmtree(a.out, ignore_errors=True)
    load1 = os.getloadavg()
    write_md(a, argv, mach, load0, load1, rows, cmds)


def write_md(a, argv, mach, load0, load1, rows, cmds):
    secret = lambda s: s.replace(SECRET_KEY, "SECRET").replace(ACCESS_KEY, "KEY")  # noqa: E731
    lines = [
        "# Small objects: cairn gateway + 3 storage nodes vs nginx (2-vCPU VM)",
        "",
        "Written by `%s` on %s." % (argv.strip(), time.strftime("%Y-%m-%d %H:%M UTC",
                                                                 time.gmtime())),
        "",
        "## Machine",
        "",
        "- nproc: %s; CPU: %s; Linux %s; %s" % (mach["nproc"], mach["model"], mach["kernel"],
                                                  mach["nginx"]),
        "- load average (1/5/15 min) at start: %.2f %.2f %.2f; at end: %.2f %.2f %.2f" % (
            load0 + load1),
        "- `free -g`:",
        "",
        "```",
        mach["free"],
        "```",
        "",
        "## Setup",
        "",
        "- %d concurrent clients (cairn-bench, one connection and one request in flight "
        "each), %d s per run, %d runs per cell, cairn and nginx alternated; medians." % (
            a.clients, a.seconds, a.runs),
        "- %d keys per size, uniform. GET: cairn objects loaded before; nginx static files "
        "(sendfile). PUT: overwrites of the same keys (cairn, signed SigV4, "
        "UNSIGNED-PAYLOAD; nginx WebDAV PUT, unsigned)." % a.keys,
        "- cairn: gateway (http.threads 2, log.level %s) + 3 cairn-storage on loopback "
        "(sync_mode none, N=3, W=2); nginx %d workers, access_log off." % (
            a.log_level, a.nginx_workers),
        "- Nothing pinned: driver, gateway, nodes and nginx share the 2 cores. Other "
        "engineers' builds and tests ran on this machine at the same time: see the load "
        "average; single runs are in the last column.",
        "- CPU µs/request: user+system time from /proc/<pid>/stat over the run divided by "
        "the run's requests; \"nodes\" is the sum of the 3 storage nodes.",
        "",
        "## Results",
        "",
        "| scenario | cairn ops/s | nginx ops/s | cairn/nginx | cairn p50 / p99 µs | "
        "nginx p50 / p99 µs | gateway CPU µs/req | nodes CPU µs/req | nginx CPU µs/req | "
        "runs cairn / nginx ops/s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ] + rows + [
        "",
        "Commands of the last run of each cell (GW = gateway port, NGINX = nginx port; "
        "credentials elided):",
        "",
    ] + ["    " + secret(c) for c in cmds] + [""]
    os.makedirs(os.path.dirname(os.path.abspath(a.md)), exist_ok=True)
    with open(a.md, "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
