#!/usr/bin/python3
"""Measures cairn-bench against nginx: is the driver ever the bottleneck?

Issue 5, section 3: the driver sustains at least 50,000 small GETs/s and
2 GB/s of large downloads, using at most one core. This script runs both
scenarios --runs times, interleaved (small 1, large 1, small 2, ...), each
run alone under the shared benchmark lock (flock on /var/tmp/cairn-bench.lock,
taken and released around every single run), and prints markdown: per
scenario the median, min and max of the throughput and of the driver's CPU
(cores = the driver's user + system time / wall time, from getrusage of the
child), nginx's CPU (from /proc/PID/stat of its workers), the load average
and how busy the CPUs were just before each run; then every run; then the
exact commands.

  bench/tools/measure_vs_nginx.py [--bin build/bin] [--runs 5] [--duration 5]
      [--nice -20] [--max-busy 0.5 --max-wait 90] [--md FILE]

Placement (2+ CPUs): cairn-bench is pinned to CPU 0 with taskset, so it can
never use more than one core. Small GETs: one nginx worker pinned to the last
CPU (nginx serving 100 B costs about as much as the driver). Large GETs: one
nginx worker per CPU, not pinned, since with sendfile the server side also
pays the kernel's loopback TCP work and needs more than one core to feed the
driver 2 GB/s; the file (256 MiB) lives in /dev/shm, so it is in memory.
nginx runs with sendfile, tcp_nopush, an open-file cache and keepalive
(bench/tools/nginx_fixture.py). Only the Python standard library is used.
"""
import argparse
import fcntl
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nginx_fixture import Nginx  # noqa: E402

LOCK = "/var/tmp/cairn-bench.lock"
LARGE = 256 << 20

# name, path, cairn-bench flags, nginx placement ("pinned": 1 worker on the
# last CPU; "spread": a worker per CPU, unpinned), what the goal counts
SCENARIOS = [
    ("small GET (100 B static file)", "/small",
     ["--concurrent", "32", "--key_generator", "{uniform_int,100}"], "pinned", "ops"),
    ("large GET (256 MiB static file, 8 connections)", "/large",
     ["--concurrent", "8", "--key_generator", "{uniform_int,1}",
      "--http_raw_request_timeout", "60000"], "spread", "bytes"),
]


def children(pid):
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(x) for x in out.split()]


def proc_cpu_seconds(pids):
    """user + system seconds of these processes so far (gone ones count 0)."""
    total = 0
    for p in pids:
        try:
            with open("/proc/%d/stat" % p) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


def cpu_times():
    """The machine's CPU time so far: (total, idle + iowait, steal)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v), v[3] + v[4], v[7] if len(v) > 7 else 0


def cpu_busy(seconds=0.5):
    """Share of all CPUs busy (anything but idle and iowait) over seconds."""
    t0, i0, _ = cpu_times()
    time.sleep(seconds)
    t1, i1, _ = cpu_times()
    return 1 - (i1 - i0) / max(t1 - t0, 1)


def place(n, cpu, nice):
    for p in [n.proc.pid] + children(n.proc.pid):
        if cpu is not None:
            subprocess.run(["taskset", "-a", "-p", "-c", str(cpu), str(p)], capture_output=True)
        if nice:
            subprocess.run(["renice", "-n", str(nice), "-p", str(p)], capture_output=True)


def command(bench, endpoint, path, extra, duration, out, pin_cpu, nice):
    cmd = [bench, "--endpoint", endpoint + path, "--duration", "%ds" % duration,
           "--report_interval", "1", "--progress", "false", "--plot", "false",
           "--create_bucket", "false", "--out", out] + extra
    if pin_cpu is not None:
        cmd = ["taskset", "-c", str(pin_cpu)] + cmd
    if nice:
        cmd = ["nice", "-n", str(nice)] + cmd
    return cmd


def run_once(cmd, out, nginx_pids, max_busy, max_wait):
    """One run under the benchmark lock; returns its figures. With max_busy
    below 1 it waits (up to max_wait seconds, not holding the lock) for a
    moment when the CPUs are at most that busy with other work."""
    waited_from = time.monotonic()
    with open(LOCK, "a") as lock:
        while True:
            fcntl.flock(lock, fcntl.LOCK_EX)
            busy = cpu_busy()
            if busy <= max_busy or time.monotonic() - waited_from >= max_wait:
                break
            fcntl.flock(lock, fcntl.LOCK_UN)
            time.sleep(3)
        waited = time.monotonic() - waited_from
        try:
            load = os.getloadavg()[0]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            ng0 = proc_cpu_seconds(nginx_pids)
            s0 = cpu_times()
            t0 = time.monotonic()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            wall = time.monotonic() - t0
            s1 = cpu_times()
            ng1 = proc_cpu_seconds(nginx_pids)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(os.path.join(out, "summary.json")) as f:
        t = json.load(f)["total"]
    moved = t["bytes_received"] + t["bytes_sent"]
    return {"ops": t["ops_per_sec"], "gbs": t["bytes_per_sec"] / 1e9, "cores": cpu / wall,
            "us_per_op": cpu / max(t["ok"], 1) * 1e6,
            "s_per_gb": cpu / (moved / 1e9) if moved else float("nan"),
            "nginx_cores": (ng1 - ng0) / wall, "p99": t["latency_us"]["p99"],
            "errors": t["errors"], "load": load, "busy": busy, "waited": waited,
            # time the hypervisor gave the vCPUs to someone else during the run
            "steal": (s1[2] - s0[2]) / max(s1[0] - s0[0], 1)}


def own_autogroup(nice):
    """With the kernel's autogroups (sched_autogroup_enabled), CPU time is
    shared between sessions first and a nice level only counts inside its
    session: nice -20 alone does nothing against another engineer's build.
    So the script runs in a session of its own (re-executed under setsid)
    and gives that session's group the nice level too (root only)."""
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            if f.read().strip() != "1":
                return
    except OSError:
        return
    if os.getsid(0) != os.getpid():
        os.execvp("setsid", ["setsid", "-w", sys.executable] + sys.argv)
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write(str(nice))
    except OSError as e:
        print("measure_vs_nginx: autogroup nice not set: %s" % e, file=sys.stderr)


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    nginx = subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip()
    curl = subprocess.run(["curl-config", "--version"], capture_output=True,
                          text=True).stdout.strip()
    return "%s, %d CPUs, Linux %s, %s, %s" % (model, os.cpu_count(), platform.release(),
                                                nginx, curl)


def spread(values, fmt):
    """'median (min–max)'."""
    return "%s (%s–%s)" % (fmt.format(statistics.median(values)), fmt.format(min(values)),
                           fmt.format(max(values)))


def report(a, results, cmds, started, out):
    w = out.write
    w("Machine: %s\n\n" % machine())
    w("Started %s UTC, %d runs of %d s per scenario, interleaved, each alone under "
      "`flock %s`%s%s.\n\n" % (
          started, a.runs, a.duration, LOCK,
          ", nginx and the driver at nice %d in a session (autogroup) of their own at "
          "that nice level" % a.nice if a.nice else "",
          "; before each run it waited up to %.0f s for a moment when the CPUs were at most "
          "%.0f%% busy with other work (the last column says how busy they were)"
          % (a.max_wait, 100 * a.max_busy) if a.max_wait > 0 and a.max_busy < 1 else ""))
    w("| scenario | throughput, median (min–max) | driver CPU, cores | driver CPU per op "
      "| driver CPU per GB | one core of the driver at that cost | nginx CPU, cores "
      "| p99 (µs) | errors | load average | CPUs busy before the run |\n")
    w("|---|---|---|---|---|---|---|---|---|---|---|\n")
    for (name, _, _, _, unit), rs in zip(SCENARIOS, results):
        col = lambda k: [r[k] for r in rs]  # noqa: E731
        if unit == "ops":
            thr = spread(col("ops"), "{:,.0f}") + " GETs/s"
            per_op = "%.1f µs" % statistics.median(col("us_per_op"))
            per_gb = "—"
            ceiling = "{:,.0f} GETs/s".format(1e6 / statistics.median(col("us_per_op")))
        else:
            thr = spread(col("gbs"), "{:.2f}") + " GB/s"
            per_op = "—"
            per_gb = "%.3f s" % statistics.median(col("s_per_gb"))
            ceiling = "%.2f GB/s" % (1 / statistics.median(col("s_per_gb")))
        w("| %s | %s | %s | %s | %s | %s | %s | {:,.0f} | %d | %s | %s |\n".format(
            statistics.median(col("p99"))) % (
            name, thr, spread(col("cores"), "{:.2f}"), per_op, per_gb, ceiling,
            spread(col("nginx_cores"), "{:.2f}"), sum(col("errors")),
            spread(col("load"), "{:.1f}"), spread([100 * x for x in col("busy")], "{:.0f}%")))
    w("\nEvery run:\n\n| scenario | run | GETs/s | GB/s | driver cores | nginx cores | p99 (µs) "
      "| load | CPUs busy before | steal during | waited (s) |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n")
    for (name, _, _, _, _), rs in zip(SCENARIOS, results):
        for i, r in enumerate(rs):
            w("| %s | %d | {:,.0f} | %.2f | %.2f | %.2f | {:,.0f} | %.1f | %.0f%% | %.1f%% | %.0f |\n"
              .format(r["ops"], r["p99"]) % (name.split(" (")[0], i + 1, r["gbs"], r["cores"],
                                             r["nginx_cores"], r["load"], 100 * r["busy"],
                                             100 * r["steal"], r["waited"]))
    w("\nCommands (PORT: the private nginx; small: nginx's one worker pinned to CPU %d; "
      "large: %d workers, not pinned):\n\n" % (os.cpu_count() - 1, os.cpu_count()))
    for c in cmds:
        w("    %s\n" % c)


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--bin", default=os.path.join(here, "..", "..", "build", "bin"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--duration", type=int, default=5, help="seconds per run")
    ap.add_argument("--nice", type=int, default=0,
                    help="run nginx and the driver at this nice level (a shared, busy machine)")
    ap.add_argument("--max-busy", type=float, default=1.0,
                    help="wait for the CPUs to be at most this busy (0..1) before a run")
    ap.add_argument("--max-wait", type=float, default=0,
                    help="seconds to wait for that at most; then run anyway")
    ap.add_argument("--md", default="-", help="write the markdown here (default stdout)")
    a = ap.parse_args()
    if a.nice:
        own_autogroup(a.nice)
    bench = os.path.join(a.bin, "cairn-bench")
    ncpu = os.cpu_count() or 1
    pin_bench = 0 if ncpu >= 2 else None
    tmp_root = "/dev/shm" if os.path.isdir("/dev/shm") else None
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    out = tempfile.mkdtemp(prefix="measure_vs_nginx_")
    servers = []
    try:
        for _, _, _, placement, _ in SCENARIOS:
            n = Nginx(nsmall=100, small_size=100, large_size=LARGE, tmp_root=tmp_root,
                      workers=1 if placement == "pinned" else ncpu, open_file_cache=True)
            servers.append(n.__enter__())
            place(n, ncpu - 1 if placement == "pinned" and ncpu >= 2 else None, a.nice)
            # the large file in the page cache (tmpfs: it is already)
            with open(os.path.join(n.dir, "www", "large", "1"), "rb") as f:
                while f.read(1 << 20):
                    pass
        results = [[] for _ in SCENARIOS]
        cmds = []
        for i in range(a.runs):
            for k, (name, path, extra, _, _) in enumerate(SCENARIOS):
                n = servers[k]
                cmd = command(bench, n.endpoint, path, extra, a.duration, out, pin_bench, a.nice)
                r = run_once(cmd, out, children(n.proc.pid), a.max_busy, a.max_wait)
                results[k].append(r)
                print("<!-- %s run %d: %.0f ops/s, %.2f GB/s, driver %.2f cores, nginx %.2f "
                      "cores, load %.1f, busy %.0f%% -->" % (name, i + 1, r["ops"], r["gbs"],
                                                            r["cores"], r["nginx_cores"],
                                                            r["load"], 100 * r["busy"]),
                      file=sys.stderr, flush=True)
                if i == 0:
                    cmds.append(" ".join(cmd).replace(n.endpoint, "http://127.0.0.1:PORT")
                                .replace(out, "OUT"))
    finally:
        for n in servers:
            n.__exit__(None, None, None)
        shutil.rmtree(out, ignore_errors=True)
    if a.md == "-":
        report(a, results, cmds, started, sys.stdout)
    else:
        with open(a.md, "w") as f:
            report(a, results, cmds, started, f)


if __name__ == "__main__":
    main()
