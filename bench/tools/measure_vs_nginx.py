#!/usr/bin/python3
"""Measures cairn-bench against nginx: is the driver ever the bottleneck?

Starts a private nginx (bench/tools/nginx_fixture.py) pinned to the last CPU
and cairn-bench pinned to CPU 0 (so the driver can use at most one core by
construction), runs each scenario several times, measures the driver's CPU
time with getrusage of the child (user + system), and prints a markdown
table of the medians. Usage:

  bench/tools/measure_vs_nginx.py [--bin build/bin] [--runs 5] [--duration 10]
"""
import argparse
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

SCENARIOS = [
    # name, path, extra flags, what to report
    ("small GET (100 B static file)", "/small",
     ["--concurrent", "32", "--key_generator", "{uniform_int,100}"], "ops"),
    ("large GET (256 MiB static file)", "/large",
     ["--concurrent", "4", "--key_generator", "{uniform_int,1}",
      "--http_raw_request_timeout", "60000"], "bytes"),
]


def pin(pid, cpu, nice):
    pids = [str(pid)] + subprocess.run(["pgrep", "-P", str(pid)], capture_output=True,
                                       text=True).stdout.split()
    for p in pids:
        subprocess.run(["taskset", "-a", "-p", "-c", str(cpu), p], capture_output=True)
        if nice:
            subprocess.run(["renice", "-n", str(nice), "-p", p], capture_output=True)


def run_once(bench, endpoint, path, extra, duration, out, pin_cpu, nice):
    cmd = [bench, "--endpoint", endpoint + path, "--duration", f"{duration}s",
           "--report_interval", "1", "--progress", "false", "--plot", "false",
           "--out", out] + extra
    if pin_cpu is not None:
        cmd = ["taskset", "-c", str(pin_cpu)] + cmd
    if nice:
        cmd = ["nice", "-n", str(nice)] + cmd
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(os.path.join(out, "summary.json")) as f:
        js = json.load(f)
    return js, cpu, wall, " ".join(cmd)


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
    curl = subprocess.run(["curl-config", "--version"], capture_output=True, text=True).stdout.strip()
    return (f"{model}, {os.cpu_count()} CPUs, Linux {platform.release()}, {nginx}, {curl}, "
            f"load average at start {os.getloadavg()[0]:.2f}")


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--bin", default=os.path.join(here, "..", "..", "build", "bin"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--large", type=int, default=256 << 20)
    ap.add_argument("--nice", type=int, default=0,
                    help="run nginx and the driver at this nice level (a shared, busy machine)")
    a = ap.parse_args()
    bench = os.path.join(a.bin, "cairn-bench")
    ncpu = os.cpu_count() or 1
    pin_bench = 0 if ncpu >= 2 else None
    tmp_root = "/dev/shm" if os.path.isdir("/dev/shm") else None
    print(f"Machine: {machine()}\n")
    print("| scenario | runs | median ops/s | median MB/s | median driver CPU (cores) "
          "| driver CPU per op (us) | driver CPU per GB (s) | median p99 (us) | errors |")
    print("|---|---|---|---|---|---|---|---|---|")
    cmds, loads = [], []
    with Nginx(nsmall=100, small_size=100, large_size=a.large, tmp_root=tmp_root) as n:
        if pin_bench is not None:
            pin(n.proc.pid, ncpu - 1, a.nice)
        out = tempfile.mkdtemp(prefix="measure_vs_nginx_")
        try:
            for name, path, extra, _ in SCENARIOS:
                ops, mbs, cores, p99, errs, per_op, per_gb = [], [], [], [], 0, [], []
                for _ in range(a.runs):
                    js, cpu, wall, cmd = run_once(bench, n.endpoint, path, extra, a.duration,
                                                  out, pin_bench, a.nice)
                    t = js["total"]
                    ops.append(t["ops_per_sec"])
                    mbs.append(t["bytes_per_sec"] / 1e6)
                    cores.append(cpu / wall)
                    p99.append(t["latency_us"]["p99"])
                    errs += t["errors"]
                    per_op.append(cpu / max(t["ok"], 1) * 1e6)
                    moved = t["bytes_received"] + t["bytes_sent"]
                    per_gb.append(cpu / (moved / 1e9) if moved else float("nan"))
                cmds.append(cmd.replace(n.endpoint, "http://127.0.0.1:PORT"))
                print(f"| {name} | {a.runs} | {statistics.median(ops):,.0f} "
                      f"| {statistics.median(mbs):,.1f} | {statistics.median(cores):.2f} "
                      f"| {statistics.median(per_op):,.1f} | {statistics.median(per_gb):.3f} "
                      f"| {statistics.median(p99):,.0f} | {errs} |", flush=True)
                loads.append(os.getloadavg()[0])
                print(f"<!-- {name}: ops/s {[round(x) for x in ops]}, MB/s "
                      f"{[round(x) for x in mbs]}, cores {[round(x, 2) for x in cores]}, "
                      f"load average after {loads[-1]:.2f} -->", flush=True)
        finally:
            shutil.rmtree(out, ignore_errors=True)
    print("\nCommands (nginx pinned to the last CPU with taskset, the driver to CPU 0"
          + (f", both at nice {a.nice}" if a.nice else "") + "):\n")
    for c in cmds:
        print(f"    {c}")


if __name__ == "__main__":
    main()
