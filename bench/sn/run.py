#!/usr/bin/python3
"""Storage-node micro-benchmark driver: starts cairn-storage on a free
loopback port with a data dir on the disk under test, drives cairn-sn-bench
through the matrix, and writes a markdown report (median of --runs runs per
cell, the machine, the exact commands).

  bench/sn/run.py [--bin build/bin] [--dir /var/tmp] [--out FILE] [--runs 3] [--smoke]

Matrix: slice GET throughput (slice 64K..8M x 1..16 in flight, warm and cold
page cache, with a dd of the same container file as the baseline), scrub
throughput vs scrub_threads (warm, cold), PUT throughput and p99 per sync
mode with 1, 8, 32 writers. --smoke runs a tiny version (seconds) so a test
keeps this script from rotting."""
import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

KIB, MIB = 1024, 1024 * 1024


def sh(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()


class Node:
    def __init__(self, binary, data_dir, settings):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.endpoint = "tcp://127.0.0.1:%d" % s.getsockname()[1]
        s.close()
        self.data_dir = data_dir
        args = [os.path.join(binary, "cairn-storage"), "--set", "listen=" + self.endpoint,
                "--set", "data_dir=" + data_dir, "--set", "log_level=warn"]
        for k, v in settings.items():
            args += ["--set", "%s=%s" % (k, v)]
        self.cmdline = " ".join(args)
        self.log = open(os.path.join(os.path.dirname(data_dir), "node.log"), "ab")
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=self.log)
        self.bench = os.path.join(binary, "cairn-sn-bench")
        deadline = time.time() + 30
        while True:   # the node answers once it listens; a scrub of nothing is cheap
            r = subprocess.run([self.bench, "scrub", "--endpoint", self.endpoint],
                               capture_output=True, text=True, timeout=60)
            if r.returncode == 0:
                break
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("cairn-storage did not start")
            time.sleep(0.2)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)
        self.log.close()

    def containers(self):
        d = os.path.join(self.data_dir, "containers")
        return sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith(".cnr"))


def run_bench(node, *args):
    cmd = [node.bench] + list(args)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), out.stderr))
    return dict(kv.split("=", 1) for kv in out.stdout.split())


def cold(node):
    subprocess.run([node.bench, "fadvise"] + node.containers(), check=True)


def dd_mib_s(path):
    out = subprocess.run(["dd", "if=" + path, "of=/dev/null", "bs=1M"], capture_output=True,
                         text=True).stderr
    m = re.search(r"(\d+) bytes.*copied, ([\d.]+) s", out)
    return int(m.group(1)) / float(m.group(2)) / MIB


def median(xs):
    return statistics.median(xs)


def fmt_size(n):
    return "%dM" % (n // MIB) if n >= MIB else "%dK" % (n // KIB)


def machine(dirpath):
    lines = ["- CPU: %s; `nproc` = %s" % (sh("lscpu | sed -n 's/^Model name: *//p'"), sh("nproc")),
             "- memory (`free -g`): %s" % sh("free -g | awk '/Mem:/{print $2\" GiB total, \"$7\" GiB available\"}'"),
             "- disk under test: `%s` (%s)" % (sh("df -h %s | tail -1" % dirpath),
                                              sh("lsblk -d -o NAME,ROTA,SIZE,MODEL 2>/dev/null | tr '\\n' ';'")),
             "- kernel: %s" % sh("uname -sr"),
             "- load average at start (other work on the machine skews numbers): %s" %
             sh("cut -d' ' -f1-3 /proc/loadavg")]
    return "\n".join(lines)


def slice_matrix(args, binary, work, out):
    nrec, size = (2, 2 * MIB) if args.smoke else (4, 64 * MIB)
    slices = [64 * KIB, 1 * MIB] if args.smoke else [64 * KIB, 256 * KIB, 1 * MIB, 4 * MIB, 8 * MIB]
    depths = [1, 4] if args.smoke else [1, 2, 4, 8, 16]
    node = Node(binary, os.path.join(work, "slice"), {"io_threads": 16})
    run_bench(node, "load", "--endpoint", node.endpoint, "--count", str(nrec), "--size", str(size),
              "--depth", "4")
    cfile = node.containers()[-1]
    results = {}
    all_dd = {"warm": [], "cold": []}
    for temp in ("warm", "cold"):
        if temp == "warm":
            dd_mib_s(cfile)   # bring the file into the page cache
        for sl in slices:
            for d in depths:
                xs, dds = [], []
                for _ in range(args.runs):
                    # dd of the same file right before each run: the machine
                    # may be shared, so the baseline is taken next to the cell
                    if temp == "cold":
                        cold(node)
                    dds.append(dd_mib_s(cfile))
                    if temp == "cold":
                        cold(node)
                    r = run_bench(node, "slice", "--endpoint", node.endpoint, "--count", str(nrec),
                                  "--size", str(size), "--slice", str(sl), "--depth", str(d))
                    xs.append(float(r["mib_s"]))
                results[(temp, sl, d)] = (median(xs), median(dds))
                all_dd[temp] += dds
        results[(temp, "dd")] = median(all_dd[temp])
    node.stop()
    out.append("## Slice GET throughput (MiB/s)\n")
    out.append("%d records of %s read whole in slices, `d` requests in flight, every slice's CRC "
               "checked by the client. Baseline: `dd if=<container> of=/dev/null bs=1M` of the same "
               "file, run right before each run of the cell. Cold = `posix_fadvise(DONTNEED)` on "
               "the container files before each run (and each dd). Median of %d runs; in brackets: "
               "the cell's median as a share of the median of its dd runs.\n" %
               (nrec, fmt_size(size), args.runs))
    out.append("Node: `%s`\n" % node.cmdline)
    out.append("Command per cell: `cairn-sn-bench slice --endpoint E --count %d --size %d --slice L --depth D`\n"
               % (nrec, size))
    for temp in ("warm", "cold"):
        out.append("### %s page cache (dd, median of all its runs: %.0f MiB/s)\n" %
                   (temp, results[(temp, "dd")]))
        out.append("| slice | " + " | ".join("d=%d" % d for d in depths) + " |")
        out.append("|---|" + "---|" * len(depths))
        for sl in slices:
            row = [results[(temp, sl, d)] for d in depths]
            best = max(v for v, _ in row)
            cells = [("**%.0f**" if v == best else "%.0f") % v + " (%d %%)" % round(100 * v / base)
                     for v, base in row]
            out.append("| %s | %s |" % (fmt_size(sl), " | ".join(cells)))
        out.append("")
    return results


def scrub_matrix(args, binary, work, out):
    nrec, size = (2, 2 * MIB) if args.smoke else (4, 64 * MIB)
    threads = [1, 2] if args.smoke else [1, 2, 4, 8, 16]
    data_dir = os.path.join(work, "scrub")
    res = {}
    for t in threads:
        node = Node(binary, data_dir, {"scrub_threads": t})
        if t == threads[0]:
            run_bench(node, "load", "--endpoint", node.endpoint, "--count", str(nrec), "--size",
                      str(size), "--depth", "4")
        for temp in ("warm", "cold"):
            xs = []
            for _ in range(args.runs):
                if temp == "cold":
                    cold(node)
                r = run_bench(node, "scrub", "--endpoint", node.endpoint)
                xs.append(float(r["mib_s"]))
            res[(temp, t)] = median(xs)
        node.stop()
    out.append("## Scrub throughput (MiB/s) vs scrub_threads\n")
    out.append("%d records of %s; `cairn-storage --set scrub_threads=T`, then "
               "`cairn-sn-bench scrub` (throughput = bytes checked / the node's elapsed time). "
               "Median of %d runs.\n" % (nrec, fmt_size(size), args.runs))
    out.append("| cache | " + " | ".join("T=%d" % t for t in threads) + " |")
    out.append("|---|" + "---|" * len(threads))
    for temp in ("warm", "cold"):
        row = [res[(temp, t)] for t in threads]
        out.append("| %s | %s |" % (temp, " | ".join(("**%.0f**" if v == max(row) else "%.0f") % v
                                                      for v in row)))
    out.append("")
    return res


def put_matrix(args, binary, work, out):
    writers = [1, 8] if args.smoke else [1, 8, 32]
    size = 64 * KIB
    secs = 1 if args.smoke else 2
    res = {}
    for mode in ("none", "periodic", "writethrough"):
        node = Node(binary, os.path.join(work, "put-" + mode), {"obj_containers.sync_mode": mode})
        for w in writers:
            xs, p99 = [], []
            for _ in range(args.runs):
                r = run_bench(node, "put", "--endpoint", node.endpoint, "--writers", str(w),
                              "--size", str(size), "--seconds", str(secs))
                xs.append(float(r["ops_s"]))
                p99.append(int(r["p99_us"]))
            res[(mode, w)] = (median(xs), median(p99))
        node.stop()
    out.append("## PUT throughput and p99 latency per sync mode\n")
    out.append("PUTs of %s, each writer one request at a time over its own DEALER, %d s per run: "
               "`cairn-sn-bench put --endpoint E --writers W --size %d --seconds %d`, node with "
               "`--set obj_containers.sync_mode=M`. Cells: ops/s (MiB/s), p99 in µs. Median of %d runs.\n"
               % (fmt_size(size), secs, size, secs, args.runs))
    out.append("| sync_mode | " + " | ".join("W=%d" % w for w in writers) + " |")
    out.append("|---|" + "---|" * len(writers))
    for mode in ("none", "periodic", "writethrough"):
        out.append("| %s | %s |" % (mode, " | ".join(
            "%.0f ops/s (%.0f MiB/s), p99 %d µs" % (res[(mode, w)][0], res[(mode, w)][0] * size / MIB,
                                                    res[(mode, w)][1]) for w in writers)))
    out.append("")
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.environ.get("CAIRN_BIN", "build/bin"))
    ap.add_argument("--dir", default="/var/tmp")
    ap.add_argument("--out", default=None)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    if args.smoke:
        args.runs = 1
    work = tempfile.mkdtemp(prefix="cairn-sn-bench-", dir=args.dir)
    t0 = time.time()
    out = ["# Storage node micro-benchmark%s\n" % (" (smoke)" if args.smoke else ""),
           "Run: `%s` on %s, %.0f s in all.\n" % (" ".join(["bench/sn/run.py"] + sys.argv[1:]),
                                                   time.strftime("%Y-%m-%d"), 0), "## Machine\n",
           machine(args.dir), ""]
    try:
        slice_matrix(args, args.bin, work, out)
        scrub_matrix(args, args.bin, work, out)
        put_matrix(args, args.bin, work, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out[1] = out[1].replace(", 0 s in all", ", %.0f s in all" % (time.time() - t0))
    text = "\n".join(out) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
