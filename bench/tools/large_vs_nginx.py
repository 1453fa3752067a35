#!/usr/bin/python3
"""Large objects through cairn (gateway + 3 storage nodes on loopback)
against nginx serving the same bytes, measured with cairn-bench, and the
GET slice-length x read-prefetch sweep. Prints markdown for bench/results/.

  bench/tools/large_vs_nginx.py [--bin build/bin] [--runs 3] [--size-mib 1024]
      [--sweep-size-mib 256] [--sweep-runs 2] [--no-sweep] [--no-compare]
      [--no-read-size]

Scenarios, each run --runs times, cairn and nginx alternated in the same run
(medians reported):
  1. single-stream GET of one --size-mib object (nginx: sendfile from a file),
  2. 16 parallel GET streams of 16 objects of 64 MiB,
  3. single-stream PUT of --size-mib (nginx: WebDAV PUT of the same bytes).
The sweep restarts only the gateway per cell (slice length 128K..5M x
read_prefetch 1..16) and GETs a --sweep-size-mib object, warm (page cache
hot) and cold (page cache dropped before each GET, when this user may write
/proc/sys/vm/drop_caches), with the gateway's peak RSS beside each cell;
then single-stream PUTs of --sweep-size-mib against http.read_size (16K..4M).

Storage nodes run obj_containers.sync_mode = none (nginx does not fsync
either); replicas N=3, W=2 as deployed, so a cairn PUT writes 3x the bytes
nginx writes. Everything is on one machine: the driver, nginx, the gateway
and 3 nodes share its cores."""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "integration"))
from nginx_fixture import Nginx  # noqa: E402
from s3util import ACCESS_KEY, SECRET_KEY, Cluster  # noqa: E402

MIB = 1 << 20


class Rss:
    def __init__(self, pid):
        self.pid, self.peak, self.stop = pid, 0, threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop.is_set():
            try:
                with open("/proc/%d/status" % self.pid) as f:
                    for line in f:
                        if line.startswith("VmRSS:"):
                            self.peak = max(self.peak, int(line.split()[1]) * 1024)
            except OSError:
                pass
            time.sleep(0.05)

    def done(self):
        self.stop.set()
        self.t.join()
        return self.peak


def bench(binp, endpoint, op, keys, conc, seconds, out, value=None, signed=True):
    cmd = [os.path.join(binp, "cairn-bench"), "--endpoint", endpoint, "--duration",
           "%ds" % seconds, "--concurrent", str(conc), "--operations", "[{%s,1}]" % op,
           "--key_generator", keys, "--report_interval", "1", "--progress", "false",
           "--plot", "false", "--http_raw_request_timeout", "0", "--out", out,
           "--not_found_ok", "false"]
    if value:
        cmd += ["--value_generator", "{fixed_bin,%d}" % value]
    if signed:
        cmd += ["--access_key", ACCESS_KEY, "--secret_key", SECRET_KEY]
    else:
        cmd += ["--create_bucket", "false"]  # nginx: no S3 CreateBucket
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    with open(os.path.join(out, "summary.json")) as f:
        t = json.load(f)["total"]
    if t["errors"]:
        raise RuntimeError("%s: %d errors" % (" ".join(cmd), t["errors"]))
    if value:
        # one PUT of `value` bytes per run (the key sequence ends it): its
        # wall time, since a window can end in the middle of a large PUT
        return value / wall / 1e6, " ".join(cmd)
    return t["bytes_per_sec"] / 1e6, " ".join(cmd)


def load(a, c, bucket, n, size):
    """PUTs objects 1..n of size bytes with cairn-bench (each once)."""
    bench(a.bin, "%s/%s" % (c.url, bucket), "put", "{partitioned_sequential_int,1,%d}" % n,
          min(n, 4), 3600, a.out, value=size)


def drop_caches():
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True
    except OSError:
        return False


def restart_gateway(c, settings):
    c.proc.terminate()
    c.proc.wait(30)
    c.settings.update(settings)
    c.start()


def compare(a, c, n, out):
    rows, cmds = [], []
    g1 = "%s/lob" % c.url
    scen = [
        ("single-stream GET, %d MiB object" % a.size_mib,
         lambda: bench(a.bin, g1, "get", "{uniform_int,1}", 1, a.seconds, out),
         lambda: bench(a.bin, n.endpoint + "/large", "get", "{uniform_int,1}", 1, a.seconds,
                       out, signed=False)),
        ("16 parallel GET streams, 64 MiB objects",
         lambda: bench(a.bin, "%s/par" % c.url, "get", "{uniform_int,16}", 16, a.seconds, out),
         lambda: bench(a.bin, n.endpoint + "/large", "get", "{uniform_int,2,16}", 16, a.seconds,
                       out, signed=False)),
        ("single-stream PUT, %d MiB" % a.size_mib,
         lambda: bench(a.bin, "%s/put" % c.url, "put", "{partitioned_sequential_int,1,1}", 1,
                       3600, out, value=a.size_mib * MIB),
         lambda: bench(a.bin, n.endpoint + "/dav", "put", "{partitioned_sequential_int,1,1}", 1,
                       3600, out, value=a.size_mib * MIB, signed=False)),
    ]
    for name, fc, fn in scen:
        cv, nv, peaks = [], [], []
        for _ in range(a.runs):
            rss = Rss(c.proc.pid)
            v, cmd_c = fc()
            peaks.append(rss.done())
            cv.append(v)
            v, cmd_n = fn()
            nv.append(v)
        mc, mn = statistics.median(cv), statistics.median(nv)
        rows.append("| %s | %d | %.0f | %.0f | %.0f %% | %.0f | %s / %s |" % (
            name, a.runs, mc, mn, 100 * mc / mn, max(peaks) / MIB,
            [round(x) for x in cv], [round(x) for x in nv]))
        cmds += [cmd_c.replace(c.url, "http://127.0.0.1:GW"),
                 cmd_n.replace(n.endpoint, "http://127.0.0.1:NGINX")]
        print(rows[-1], flush=True)
    return rows, cmds


def sweep(a, c, out):
    slices = ["128K", "256K", "512K", "1M", "2M", "5M"]
    depths = [1, 2, 4, 8, 16]
    can_cold = drop_caches()
    res = {}
    for mode in (["warm", "cold"] if can_cold else ["warm"]):
        for sl in slices:
            for d in depths:
                restart_gateway(c, {"large_object.reading_chunked_obj_len": sl,
                                    "large_object.read_prefetch": d})
                vals, peak = [], 0
                for _ in range(a.sweep_runs):
                    if mode == "cold":
                        drop_caches()
                    rss = Rss(c.proc.pid)
                    v, cmd = bench(a.bin, "%s/swp" % c.url, "get", "{uniform_int,1}", 1,
                                   a.sweep_seconds, out)
                    peak = max(peak, rss.done())
                    vals.append(v)
                res[(mode, sl, d)] = (statistics.median(vals), peak)
                print("<!-- %s %s x %d: %s MB/s, RSS %.1f MiB -->" % (
                    mode, sl, d, [round(x) for x in vals], peak / MIB), flush=True)
    restart_gateway(c, {"large_object.reading_chunked_obj_len": "512K",
                        "large_object.read_prefetch": 2})
    return res, slices, depths, can_cold


def cpu_seconds(pid):
    """user + system CPU time of a process, from /proc."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def read_size_sweep(a, c, out):
    """PUT throughput against http.read_size (the client socket read size)."""
    print("\nsingle-stream PUT of %d MiB against http.read_size (median of %d, MB/s; "
          "gateway peak RSS MiB)\n" % (a.sweep_size_mib, a.sweep_runs))
    print("| http.read_size | MB/s | runs | gateway CPU s per GiB | RSS |")
    print("|---|---|---|---|---|")
    for rs in ("16K", "64K", "256K", "1M", "4M"):
        restart_gateway(c, {"http.read_size": rs})
        vals, cpus, peak = [], [], 0
        for _ in range(a.sweep_runs):
            rss = Rss(c.proc.pid)
            c0 = cpu_seconds(c.proc.pid)
            v, cmd = bench(a.bin, "%s/swp" % c.url, "put", "{partitioned_sequential_int,2,1}",
                           1, 3600, out, value=a.sweep_size_mib * MIB)
            cpus.append((cpu_seconds(c.proc.pid) - c0) / (a.sweep_size_mib / 1024))
            peak = max(peak, rss.done())
            vals.append(v)
        print("| %s | %.0f | %s | %.2f | %.0f |" % (rs, statistics.median(vals),
                                                    [round(x) for x in vals],
                                                    statistics.median(cpus), peak / MIB),
              flush=True)
    restart_gateway(c, {"http.read_size": "1M"})


def print_sweep(res, slices, depths, can_cold):
    for mode in (["warm", "cold"] if can_cold else ["warm"]):
        base = res[(mode, "512K", 2)][0]
        best = max(res[(mode, s, d)][0] for s in slices for d in depths)
        print("\n%s cache: MB/s (ratio to the default 512K x 2) / gateway peak RSS MiB\n" % mode)
        print("| slice \\ read_prefetch | " + " | ".join(str(d) for d in depths) + " |")
        print("|---|" + "---|" * len(depths))
        for s in slices:
            cells = []
            for d in depths:
                v, peak = res[(mode, s, d)]
                txt = "%.0f (%.2f) / %.0f" % (v, v / base, peak / MIB)
                cells.append("**%s**" % txt if v == best else txt)
            print("| %s | %s |" % (s, " | ".join(cells)))
    if not can_cold:
        print("\n(cold cells skipped: this user cannot write /proc/sys/vm/drop_caches)")


def machine():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    nginx = subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip()
    return "%s, %d CPUs, Linux %s, %s, load average at start %.2f" % (
        model, os.cpu_count(), platform.release(), nginx, os.getloadavg()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(HERE, "..", "..", "build", "bin"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--sweep-size-mib", type=int, default=256)
    ap.add_argument("--sweep-seconds", type=int, default=3)
    ap.add_argument("--sweep-runs", type=int, default=2)
    ap.add_argument("--no-sweep", action="store_true")
    ap.add_argument("--no-compare", action="store_true")
    ap.add_argument("--no-read-size", action="store_true")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    os.environ["CAIRN_BIN"] = a.bin
    print("Machine: %s\n" % machine())
    out = a.out = tempfile.mkdtemp(prefix="large_vs_nginx_")
    with Cluster(settings={"log.level": "warn", "large_object.reclaim_delay": "1s"},
                 node_settings={"obj_containers.sync_mode": "none"}) as c, \
            Nginx(nsmall=1, large_size=a.size_mib * MIB, tmp_root=None) as n:
        www = os.path.join(n.dir, "www", "large")
        blk = os.urandom(MIB)
        for k in range(2, 18):
            with open(os.path.join(www, str(k)), "wb") as f:
                for _ in range(64):
                    f.write(blk)
        s3 = c.boto()
        for b in ("lob", "par", "put", "swp"):
            s3.create_bucket(Bucket=b)
        if not a.no_compare:
            load(a, c, "lob", 1, a.size_mib * MIB)
            load(a, c, "par", 16, 64 * MIB)
            print("| scenario | runs | cairn MB/s | nginx MB/s | cairn/nginx | gateway peak RSS "
                  "MiB | runs cairn / nginx |")
            print("|---|---|---|---|---|---|---|")
            rows, cmds = compare(a, c, n, out)
            print("\nCommands (GW = gateway port, NGINX = nginx port; credentials elided):\n")
            for cmd in cmds:
                print("    " + cmd.replace(SECRET_KEY, "SECRET").replace(ACCESS_KEY, "KEY"))
        if not a.no_sweep:
            load(a, c, "swp", 1, a.sweep_size_mib * MIB)
            res, slices, depths, can_cold = sweep(a, c, out)
            print_sweep(res, slices, depths, can_cold)
        if not a.no_read_size:
            read_size_sweep(a, c, out)
    shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
