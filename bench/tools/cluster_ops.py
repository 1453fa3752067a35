#!/usr/bin/python3
"""Cluster operations under a steady load (issue 17, "Done when"): on a
local cluster (loopback, one gateway running the rebalance worker, nodes
with CURVE as the test harness runs them), while cairn-bench runs a steady
mixed load with integrity checking, an operator

  1. grows 3 -> 4 -> 5 nodes (`cairn-admin node add`, twice),
  2. drains and removes one (`node decommission s1 --wait`, then stops it),
  3. replaces a failed disk (s2 killed with SIGKILL, a fresh empty node
     takes its place under the same id: `node replace s2 s2 ADDR --wait`),

one command each. For each operation: the command's time, the time until
the rebalance walk of the new map is done (convergence), what the walk
copied and purged, the nodes' disk bytes, and the foreground latency
(median of the 1 s windows' p50 and p99) and throughput before, during and
after it, from cairn-bench's CSVs. At the end, once the nodes compact, the
disk bytes again (space of purged copies back). Prints a markdown table.

  CAIRN_BIN=build/bin /usr/bin/python3 bench/tools/cluster_ops.py [KEYS] [RATE] [SETTLE_S]

KEYS objects of 1-32 KB preloaded (default 3000, ~50 MB, 150 MB with N=3);
RATE requests/s per worker of the 4 workers (default 20; Poisson arrivals);
SETTLE_S seconds of load between operations (default 10); RUNS fresh
clusters one after the other (default 1): each run's table, then the
medians over the runs.
"""
import csv
import json
import os
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "integration"))
from s3util import ACCESS_KEY, SECRET_KEY, Cluster  # noqa: E402
from snclient import admin_env  # noqa: E402

BIN = os.path.abspath(os.environ.get("CAIRN_BIN", "build/bin"))
KEYS = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
RATE = int(sys.argv[2]) if len(sys.argv) > 2 else 20
SETTLE_S = float(sys.argv[3]) if len(sys.argv) > 3 else 10
RUNS = int(sys.argv[4]) if len(sys.argv) > 4 else 1
WORKERS = 4
DEAD_RATIO = 25   # compaction.dead_ratio on the nodes (default 50)


def admin(cf, *args, timeout=1800):
    p = subprocess.run([os.path.join(BIN, "cairn-admin"), "--cluster", cf] + list(args),
                       capture_output=True, text=True, timeout=timeout, env=admin_env())
    return p.returncode, p.stdout + p.stderr


def admin_json(cf, *args):
    p = subprocess.run([os.path.join(BIN, "cairn-admin"), "--cluster", cf, "--json"] +
                       list(args), capture_output=True, text=True, timeout=120, env=admin_env())
    return json.loads(p.stdout) if p.stdout.strip() else {}


def map_version(cf):
    return admin_json(cf, "node", "status")["version"]


def rebalance(cf):
    return admin_json(cf, "rebalance", "status").get("rebalance") or {}


def wait_for(what, fn, timeout):
    t0 = time.monotonic()
    while not fn():
        if time.monotonic() - t0 > timeout:
            raise SystemExit("timed out (%ds) waiting for %s" % (timeout, what))
        time.sleep(0.25)
    return time.monotonic() - t0


def disk(nodes):
    """(bytes_total, bytes_dead) summed over the nodes that answer."""
    tot = dead = 0
    for n in nodes:
        c = n.client(timeout_ms=10000)
        try:
            st = c.stats()
            tot += st["bytes_total"]
            dead += st["bytes_dead"]
        finally:
            c.close()
    return tot, dead


def disk_by_id(ids):
    """{id: MB on disk} for the named nodes that are running."""
    out = {}
    for nid, n in sorted(ids.items()):
        if n.proc is not None and n.proc.poll() is None:
            out[nid] = round(disk([n])[0] / 1e6, 1)
    return out


def bench(url, out, ops, keygen, duration, mode, log):
    cmd = [os.path.join(BIN, "cairn-bench"), "--endpoint", url + "/ops",
           "--access_key", ACCESS_KEY, "--secret_key", SECRET_KEY, "--region", "us-east-1",
           "--duration", duration, "--concurrent", str(WORKERS), "--mode", mode,
           "--operations", ops, "--key_generator", keygen,
           "--value_generator", "{uniform_bin,1000,32000}", "--integrity", "true",
           "--report_interval", "1", "--http_raw_request_timeout", "15000", "--out", out,
           "--json", out + ".json", "--progress", "false", "--plot", "false"]
    return subprocess.Popen(cmd, stdout=log, stderr=log)


def windows(out_dir, t0, t1):
    """Per op: median window p50, median window p99 (ms), ops/s, errors over
    the 1 s windows inside [t0, t1] (seconds since the load started)."""
    res = {}
    for op in ("get", "put"):
        rows = []
        with open(os.path.join(out_dir, "%s_latencies.csv" % op)) as f:
            for row in csv.DictReader(f, skipinitialspace=True):
                end = float(row["elapsed"])
                if end - float(row["window"]) >= t0 - 0.01 and end <= t1 + 0.01:
                    rows.append(row)
        busy = [r for r in rows if int(r["n"]) > 0]
        span = sum(float(r["window"]) for r in rows)
        res[op] = (statistics.median(float(r["median"]) / 1000 for r in busy) if busy else 0,
                   statistics.median(float(r["99th"]) / 1000 for r in busy) if busy else 0,
                   sum(int(r["n"]) for r in rows) / span if span else 0,
                   sum(int(r["errors"]) for r in rows))
    return res


def run_once():
    gw = {"cluster.map_refresh": "1s", "storage.request_timeout": "2s",
          "rebalance.interval": "1s", "rebalance.lease_time": "9s",
          "http.threads": 2}
    nodes = {"obj_containers.sync_mode": "none", "obj_containers.max_container_len": "8M",
             "max_record_len": "4M", "compaction.check_interval": "2s",
             "compaction.dead_ratio": DEAD_RATIO, "io_threads": 2}
    cl = Cluster(nodes=6, settings=gw, node_settings=nodes)
    load = None
    try:
        cf = os.path.join(cl.tmp, "cluster.conf")
        ids = {"s%d" % i: n for i, n in enumerate(cl.nodes[:5])}
        spare = cl.nodes[5]
        with open(cf, "w") as f:
            for i in range(3):
                f.write("node s%d %s\n" % (i, cl.nodes[i].endpoint))
        cl.proc.terminate()
        cl.proc.wait()
        cl.settings["cluster.file"] = cf
        cl.start()
        cl.boto().create_bucket(Bucket="ops")
        out = os.path.join(cl.tmp, "bench")
        log = open(os.path.join(cl.tmp, "bench.log"), "ab")
        t = time.monotonic()
        pre = bench(cl.url, out + "-preload", "[{put,1}]", "{partitioned_sequential_int,%d}"
                    % KEYS, "30m", "max", log)
        pre.wait()
        preload_s = time.monotonic() - t
        load = bench(cl.url, out, "[{get,70},{put,30}]", "{uniform_int,0,%d}" % KEYS, "60m",
                     "{rate,%d}" % RATE, log)
        t_load = time.monotonic()

        def now():
            return time.monotonic() - t_load

        time.sleep(SETTLE_S + 2)
        active = [ids["s0"], ids["s1"], ids["s2"]]
        named = {"s0": ids["s0"], "s1": ids["s1"], "s2": ids["s2"]}
        rows, per_node = [], []

        def op(name, cmd, after=None, fallback=None):
            d0 = disk(active)
            t0 = now()
            rc, text = admin(cf, *cmd)
            t_cmd = now() - t0
            passes = [ln for ln in text.splitlines() if ln.startswith("pass ")]
            note = ""
            if passes:
                note = " (%d repair passes, %d copies written)" % (len(passes), sum(
                    int(ln.split(", ")[1].split()[0]) for ln in passes))
            if rc != 0 and fallback is not None:
                # say so in the table, then do it the other way
                note += " (exit %d after %.0fs: %s; then %s)" % (
                    rc, t_cmd, text.strip().splitlines()[-1],
                    "`cairn-admin " + " ".join(fallback[0]) + "` once the walk of the map "
                    "marking it leaving was done")
                v = map_version(cf)
                wait_for("the walk of map version %d" % v,
                         lambda: rebalance(cf).get("done_version", 0) >= v, timeout=1800)
                rc, text = admin(cf, *fallback[0])
                t_cmd = now() - t0
            if rc != 0:
                raise SystemExit("%s failed: %s" % (" ".join(cmd), text))
            v = map_version(cf)
            wait_for("the walk of map version %d" % v,
                     lambda: rebalance(cf).get("done_version", 0) >= v, timeout=1800)
            t1 = now()
            rb = rebalance(cf)
            if after:
                after()
            d1 = disk(active)
            per_node.append((name, disk_by_id(named)))
            rows.append({"name": name, "cmd": "cairn-admin " + " ".join(cmd), "note": note,
                         "w": windows(out, t0, t1), "t0": t0,
                         "t1": t1, "t_cmd": t_cmd, "rb": rb, "d0": d0, "d1": d1})
            time.sleep(SETTLE_S)

        base_end = now()
        d_start = disk(active)
        per_node.append(("start", disk_by_id(named)))

        def grow(nid):
            active.append(ids[nid])
            named[nid] = ids[nid]
        op("grow 3 -> 4", ["node", "add", "s3", ids["s3"].endpoint], after=lambda: grow("s3"))
        op("grow 4 -> 5", ["node", "add", "s4", ids["s4"].endpoint], after=lambda: grow("s4"))

        def stop_s1():
            left["s1"] = round(disk([ids["s1"]])[0] / 1e6, 1)
            ids["s1"].stop()
            active.remove(ids["s1"])
            del named["s1"]
        left = {}
        op("drain and remove s1", ["node", "decommission", "s1", "--wait"], after=stop_s1,
           fallback=(["node", "remove", "s1"],))

        ids["s2"].proc.send_signal(signal.SIGKILL)   # the disk failed
        ids["s2"].proc.wait()
        active.remove(ids["s2"])
        named["s2"] = spare

        op("replace failed s2 (same id, empty host)",
           ["node", "replace", "s2", "s2", spare.endpoint, "--wait"],
           after=lambda: active.append(spare))
        t_end_ops = rows[-1]["t1"]
        load.send_signal(signal.SIGINT)
        load.wait(120)
        t_end = now()
        d_end = disk(active)
        t_comp = time.monotonic()
        try:
            wait_for("compaction", lambda: disk(active)[1] <= 0.5 * d_end[1], 60)
        except SystemExit:
            pass
        d_comp = disk(active)
        per_node.append(("after compaction", disk_by_id(named)))
        comp_s = time.monotonic() - t_comp
        bj = json.load(open(out + ".json"))
        m = admin_json(cf, "node", "status")
        final = os.path.join(cl.tmp, "final.conf")   # repair reads a file, not the map
        with open(final, "w") as f:
            f.write("version %d\n" % m["version"])
            for n in m["nodes"]:
                f.write("node %s %s\n" % (n["id"], n["address"]))
        rc, text = admin(final, "repair", "--dry-run")
        return {"preload_s": preload_s, "base": windows(out, 1, base_end), "rows": rows,
                "after": windows(out, t_end_ops + 1, t_end), "d_start": d_start,
                "d_end": d_end, "d_comp": d_comp, "per_node": per_node, "left": left,
                "comp_s": comp_s, "bench": bj,
                "repair": text.strip().splitlines()[-1]}
    finally:
        if load is not None and load.poll() is None:
            load.kill()
        cl.close()



def fmt_w(r):
    return "%.1f / %.1f ms, %.0f/s; %.1f / %.1f ms, %.0f/s" % (
        r["get"][0], r["get"][1], r["get"][2], r["put"][0], r["put"][1], r["put"][2])


def table(res):
    print("| operation | command | command s | converged s | walk: copied | bytes copied | "
          "purged | disk MB before -> after (map's nodes, live+dead) | GET p50 / p99, GET/s; "
          "PUT p50 / p99, PUT/s |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("| baseline (no operation) | | | | | | | %.1f | %s |" % (
        res["d_start"][0] / 1e6, fmt_w(res["base"])))
    for r in res["rows"]:
        rb = r["rb"]
        print("| %s | `%s`%s | %.1f | %.1f | %d | %.1f MB | %d | %.1f -> %.1f | %s |" % (
            r["name"], r["cmd"], r["note"], r["t_cmd"], r["t1"] - r["t0"], rb.get("copied", 0),
            rb.get("bytes", 0) / 1e6, rb.get("purged", 0), r["d0"][0] / 1e6, r["d1"][0] / 1e6,
            fmt_w(r["w"])))
    print("| after (load only) | | | | | | | %.1f | %s |" % (
        res["d_end"][0] / 1e6, fmt_w(res["after"])))
    print()
    print("disk of the nodes in the final map: %.1f MB (%.1f MB dead) at the end of the load "
          "-> %.1f MB (%.1f MB dead) after %.0fs of compaction" % (
              res["d_end"][0] / 1e6, res["d_end"][1] / 1e6, res["d_comp"][0] / 1e6,
              res["d_comp"][1] / 1e6, res["comp_s"]))
    print("disk MB per node (s2 after the replace: the new host): " + "; ".join(
        "%s: %s" % (what, ", ".join("%s %.1f" % kv for kv in sorted(d.items())))
        for what, d in res["per_node"]))
    print("s1 held %.1f MB on disk when stopped after its decommission (not purged: wipe it)"
          % res["left"].get("s1", 0))
    bj = res["bench"]
    integ = bj.get("integrity") or {}
    print("cairn-bench: %s; errors %r; integrity %d verified, %d unverifiable" % (
        ", ".join("%s %d ok/%d err" % (k, v["ok"], v["errors"])
                  for k, v in sorted(bj.get("ops", {}).items())), bj.get("errors") or {},
        integ.get("verified", 0), integ.get("unverifiable", 0)))
    print("repair --dry-run of the final map: " + res["repair"])


def main():
    print("preload: %d objects of 1-32 KB; load: %d workers x %d req/s, 70 %% GET / 30 %% PUT "
          "over the same keys, integrity on; %d runs" % (KEYS, WORKERS, RATE, RUNS))
    runs = []
    for i in range(RUNS):
        res = run_once()
        runs.append(res)
        print("\n### run %d (preload %.1fs)\n" % (i + 1, res["preload_s"]))
        table(res)
        sys.stdout.flush()
    if RUNS > 1:
        med = statistics.median
        print("\n### medians over %d runs\n" % RUNS)
        print("| operation | command s | converged s | GET p50 / p99 ms during | "
              "PUT p50 / p99 ms during | GET/s during |")
        print("|---|---|---|---|---|---|")
        print("| baseline | | | %.1f / %.1f | %.1f / %.1f | %.0f |" % (
            med(r["base"]["get"][0] for r in runs), med(r["base"]["get"][1] for r in runs),
            med(r["base"]["put"][0] for r in runs), med(r["base"]["put"][1] for r in runs),
            med(r["base"]["get"][2] for r in runs)))
        for j, row in enumerate(runs[0]["rows"]):
            rs = [r["rows"][j] for r in runs]
            print("| %s | %.1f | %.1f | %.1f / %.1f | %.1f / %.1f | %.0f |" % (
                row["name"], med(x["t_cmd"] for x in rs), med(x["t1"] - x["t0"] for x in rs),
                med(x["w"]["get"][0] for x in rs), med(x["w"]["get"][1] for x in rs),
                med(x["w"]["put"][0] for x in rs), med(x["w"]["put"][1] for x in rs),
                med(x["w"]["get"][2] for x in rs)))


if __name__ == "__main__":
    main()
