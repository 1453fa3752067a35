"""Replication proved on several "hosts" without Docker: network namespaces
joined by veth pairs to a bridge (itself in a namespace of its own), private
addresses 10.201.0.0/24, nothing routed off the machine. One gateway, three
storage nodes and a client each get their own namespace and address.

Under load from cairn-bench (integrity checking on) plus a writer that
remembers every acknowledged PUT, it kills one storage node (SIGKILL), later
freezes another (SIGSTOP, a hung node), then cuts a third's link, restoring
each in turn, and asserts:
- no GET fails once the gateway has marked the node down (in fact none at
  all), and cairn-bench finds no integrity error;
- every acknowledged write is readable with a matching checksum at the end;
- after `cairn-admin repair` the replicas hold identical data (repair
  --dry-run: zero differences);
and reports the error count, p99 latencies during each failure and the time
to converge. Needs root and `ip netns`; prints SKIP otherwise. Every
namespace (and with it every veth and the bridge) is deleted on the way out,
whatever happened. Reads use R=2: with W=2 of N=3 a read quorum overlaps the
write quorum, so a GET right after an acknowledged PUT is never stale (with
the default R=1 it may be, for an instant, on the replica that acked last)."""
import atexit
import csv
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("CAIRN_SRC", os.path.join(HERE, "..", ".."))
BIN = os.path.abspath(os.environ.get("CAIRN_BIN", "build/bin"))
sys.path.insert(0, HERE)
from s3util import ACCESS_KEY, SECRET_KEY  # noqa: E402

TAG = "cn%d" % (os.getpid() % 100000)
NET = "10.201.0"
HOSTS = {"gw": 10, "s0": 11, "s1": 12, "s2": 13, "cl": 5}
PY = "/usr/bin/python3"
PROCS = []


def sh(*cmd, check=True):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), p.stderr.strip()))
    return p


def ns(host):
    return "%s-%s" % (TAG, host)


def port_if(host):
    return "%s%s" % (TAG, host)  # the switch side of host's veth (<= 15 chars)


def cleanup():
    for p in PROCS:
        if p.poll() is None:
            try:
                os.kill(p.pid, signal.SIGCONT)
                p.kill()
                p.wait(10)
            except (OSError, subprocess.TimeoutExpired):
                pass
    for h in list(HOSTS) + ["sw"]:
        sh("ip", "netns", "del", ns(h), check=False)  # takes its veths and the bridge along


def setup_network():
    sh("ip", "netns", "add", ns("sw"))
    sh("ip", "-n", ns("sw"), "link", "add", "br0", "type", "bridge")
    sh("ip", "-n", ns("sw"), "link", "set", "br0", "up")
    for h, last in HOSTS.items():
        sh("ip", "netns", "add", ns(h))
        sh("ip", "link", "add", port_if(h), "netns", ns("sw"), "type", "veth", "peer", "name",
           "eth0", "netns", ns(h))
        sh("ip", "-n", ns("sw"), "link", "set", port_if(h), "master", "br0", "up")
        sh("ip", "-n", ns(h), "addr", "add", "%s.%d/24" % (NET, last), "dev", "eth0")
        sh("ip", "-n", ns(h), "link", "set", "eth0", "up")
        sh("ip", "-n", ns(h), "link", "set", "lo", "up")


def spawn(host, cmd, log):
    p = subprocess.Popen(["ip", "netns", "exec", ns(host)] + cmd, stdout=log, stderr=log)
    PROCS.append(p)
    return p


def wait_for(what, fn, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if fn():
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting for " + what)


class Node:
    def __init__(self, tmp, i):
        self.i, self.host = i, "s%d" % i
        self.addr = "tcp://%s.%d:7001" % (NET, HOSTS[self.host])
        self.conf = os.path.join(tmp, "%s.conf" % self.host)
        with open(self.conf, "w") as f:
            f.write("listen = %s\nnode_id = %s\ndata_dir = %s\nio_threads = 2\n"
                    "obj_containers.sync_mode = none\n" % (
                        self.addr, self.host, os.path.join(tmp, self.host + "-data")))
        self.log = open(os.path.join(tmp, self.host + ".log"), "ab")
        self.proc = None

    def start(self):
        self.proc = spawn(self.host, [os.path.join(BIN, "cairn-storage"), "--config", self.conf],
                          self.log)


def admin(tmp, *args):
    p = subprocess.run(["ip", "netns", "exec", ns("gw"), os.path.join(BIN, "cairn-admin"),
                        "--cluster", os.path.join(tmp, "cluster.conf")] + list(args),
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout + p.stderr


def client(tmp, *args, log=None):
    cmd = ["ip", "netns", "exec", ns("cl"), PY, os.path.join(SRC, "tests", "netns",
                                                               "netns_client.py")]
    cmd += list(args)
    if log is not None:
        p = subprocess.Popen(cmd, stdout=log, stderr=log)
        PROCS.append(p)
        return p
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def start_gateway(tmp):
    with open(os.path.join(tmp, "credentials"), "w") as f:
        f.write("%s %s cairn-dev cairn\n" % (ACCESS_KEY, SECRET_KEY))
    conf = os.path.join(tmp, "gateway.conf")
    with open(conf, "w") as f:
        f.write("http.listen = %s.%d\nhttp.port = 8080\nhttp.threads = 2\n"
                "cluster.file = %s\ns3.credentials_file = %s\n"
                "storage.request_timeout = 1s\nstorage.probe_interval = 200ms\n"
                "consistency.read = 2\n" % (NET, HOSTS["gw"], os.path.join(tmp, "cluster.conf"),
                                            os.path.join(tmp, "credentials")))
    log_path = os.path.join(tmp, "gateway.log")
    spawn("gw", [os.path.join(BIN, "cairn-gateway"), "--config", conf], open(log_path, "ab"))
    return log_path


def gateway_log_has(path, text, start):
    with open(path, "rb") as f:
        f.seek(start)
        return text in f.read().decode(errors="replace")


def window_stats(out_dir, op, t0, t1):
    """Max p99 (ms) and errors over the bench windows overlapping [t0, t1]
    (seconds since the bench started)."""
    p99, errors = 0.0, 0
    path = os.path.join(out_dir, "%s_latencies.csv" % op)
    if not os.path.exists(path):
        return 0.0, 0
    with open(path) as f:
        for row in csv.DictReader(f, skipinitialspace=True):
            end = float(row["elapsed"])
            start = end - float(row["window"])
            if end >= t0 and start <= t1:
                p99 = max(p99, float(row["99th"]) / 1000)
                errors += int(row["errors"])
    return p99, errors


def run(tmp):
    setup_network()
    nodes = [Node(tmp, i) for i in range(3)]
    with open(os.path.join(tmp, "cluster.conf"), "w") as f:
        for n in nodes:
            f.write("node %s %s\n" % (n.host, n.addr))
    for n in nodes:
        n.start()
    gw_log = start_gateway(tmp)
    url = "http://%s.%d:8080" % (NET, HOSTS["gw"])
    wait_for("the cluster", lambda: admin(tmp, "status")[0] == 0)
    wait_for("the gateway", lambda: client(tmp, "create", url, "nsbench").returncode == 0)
    client(tmp, "create", url, "nswriter")
    out_dir = os.path.join(tmp, "bench")
    duration = 52  # the load ends a few seconds after the last restore
    bench_log = open(os.path.join(tmp, "bench.log"), "ab")
    bench = spawn("cl", [os.path.join(BIN, "cairn-bench"), "--endpoint", url + "/nsbench",
                         "--access_key", ACCESS_KEY, "--secret_key", SECRET_KEY,
                         "--region", "us-east-1", "--duration", "%ds" % duration,
                         "--concurrent", "8", "--operations", "[{get,70},{put,30}]",
                         "--key_generator", "{uniform_int,2000}",
                         "--value_generator", "{uniform_bin,1000,64000}",
                         "--integrity", "true", "--report_interval", "1",
                         "--http_raw_request_timeout", "15000", "--out", out_dir,
                         "--json", os.path.join(tmp, "bench.json"), "--progress", "false",
                         "--plot", "false"], bench_log)
    stop = os.path.join(tmp, "stop-writer")
    writer = client(tmp, "writer", url, "nswriter", os.path.join(tmp, "writer.json"), stop,
                    log=open(os.path.join(tmp, "writer.log"), "ab"))
    t_bench = time.monotonic()

    def at(s):
        time.sleep(max(0, s - (time.monotonic() - t_bench)))
        return time.monotonic() - t_bench

    def failure(name, start_s, inject, restore_s, restore):
        mark = os.path.getsize(gw_log)
        t0 = at(start_s)
        inject()
        wait_for("the gateway to mark %s down" % name,
                 lambda: gateway_log_has(gw_log, "marked down", mark), timeout=15)
        t_down = time.monotonic() - t_bench
        at(restore_s)
        mark2 = os.path.getsize(gw_log)
        t1 = time.monotonic() - t_bench
        restore()
        wait_for("the gateway to see %s back" % name,
                 lambda: gateway_log_has(gw_log, "is up again", mark2), timeout=30)
        return {"name": name, "start": t0, "marked_down": t_down, "restored": t1}

    events = []
    events.append(failure("s0 SIGKILL", 6, lambda: nodes[0].proc.kill(), 16,
                          lambda: nodes[0].start()))
    events.append(failure("s1 SIGSTOP", 22, lambda: os.kill(nodes[1].proc.pid, signal.SIGSTOP),
                          32, lambda: os.kill(nodes[1].proc.pid, signal.SIGCONT)))
    link = ["ip", "-n", ns("sw"), "link", "set", port_if("s2")]
    events.append(failure("s2 link cut", 38, lambda: sh(*(link + ["down"])), 48,
                          lambda: sh(*(link + ["up"]))))
    t_last_restore = time.monotonic()
    bench.wait(duration + 120)
    open(stop, "w").close()
    writer.wait(120)
    t_load_end = time.monotonic() - t_last_restore
    # convergence by hinted handoff alone: no repair run yet
    t_conv = None
    while time.monotonic() - t_last_restore < 60:
        rc, out = admin(tmp, "repair", "--dry-run")
        if rc == 0:
            t_conv = time.monotonic() - t_last_restore
            break
        time.sleep(0.5)
    rc_repair, out_repair = admin(tmp, "repair")
    rc_dry, out_dry = admin(tmp, "repair", "--dry-run")
    verdict = json.loads(client(tmp, "verify", url, "nswriter",
                                os.path.join(tmp, "writer.json")).stdout)
    wr = json.load(open(os.path.join(tmp, "writer.json")))
    bj = json.load(open(os.path.join(tmp, "bench.json")))

    print("---- netns cluster: 1 gateway, 3 storage nodes, 1 client, %s.0/24" % NET)
    get_errors_after_down = 0
    for ev in events:
        gp99, gerr = window_stats(out_dir, "get", ev["start"], ev["restored"])
        pp99, perr = window_stats(out_dir, "put", ev["start"], ev["restored"])
        _, gerr_after = window_stats(out_dir, "get", ev["marked_down"] + 1, ev["restored"])
        get_errors_after_down += gerr_after
        print("%-12s at %5.1fs, marked down after %.2fs, restored at %5.1fs: GET p99 %.1f ms "
              "(%d errors), PUT p99 %.1f ms (%d errors)" % (
                  ev["name"], ev["start"], ev["marked_down"] - ev["start"], ev["restored"],
                  gp99, gerr, pp99, perr))
    errs = bj.get("errors") or {}
    total_errors = sum(int(v) for v in errs.values()) if isinstance(errs, dict) else errs
    ops = bj.get("ops", {})
    integ = bj.get("integrity", {})
    print("cairn-bench: %s; errors %r; integrity: %d GETs verified, %d unverifiable" % (
        ", ".join("%s %d ok/%d err (p99 %.1f ms)" % (k, v["ok"], v["errors"],
                                                     v["latency_us"].get("p99", 0) / 1000)
                  for k, v in sorted(ops.items())), errs, integ.get("verified", 0),
        integ.get("unverifiable", 0)))
    print("writer: %d PUTs, %d failed, %d acknowledged keys; verify at the end: %d checked, "
          "%d bad" % (wr["puts"], len(wr["errors"]), len(wr["acked"]), verdict["checked"],
                      verdict["n_bad"]))
    print("replicas identical by hinted handoff alone (no repair yet): %s after the last "
          "restore, checked from the end of the load (%.1fs after it) on" % (
              "%.1fs" % t_conv if t_conv is not None else "NOT within 60s", t_load_end))
    print(out_repair.strip())
    print(out_dry.strip())
    assert get_errors_after_down == 0, "GETs failed after a node was marked down"
    assert total_errors == 0, "cairn-bench errors: %r" % errs
    assert integ.get("verified", 0) > 1000, "cairn-bench verified too few reads: %r" % integ
    assert verdict["n_bad"] == 0, "acknowledged writes unreadable: %r" % verdict["bad"]
    assert rc_repair == 0, "repair failed: " + out_repair
    assert rc_dry == 0 and " 0 differences" in out_dry, "replicas differ: " + out_dry
    assert not wr["errors"], "writer PUTs failed: %r" % wr["errors"][:5]
    print("all passed")


def main():
    if os.geteuid() != 0 or subprocess.run(["ip", "netns", "list"],
                                           capture_output=True).returncode != 0:
        print("SKIP test_netns_cluster: needs root and ip netns")
        return
    tmp = tempfile.mkdtemp(prefix="cairn-netns-")
    atexit.register(cleanup)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *a: sys.exit(1))
    try:
        run(tmp)
    except BaseException:
        for name in ("gateway.log", "bench.log", "writer.log", "s0.log", "s1.log", "s2.log"):
            p = os.path.join(tmp, name)
            if os.path.exists(p):
                sys.stderr.write("---- %s (tail) ----\n%s\n" % (
                    name, open(p, "rb").read()[-3000:].decode(errors="replace")))
        raise
    finally:
        cleanup()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
