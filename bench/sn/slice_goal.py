#!/usr/bin/python3
"""Issue 2's slice goal, measured with the ceilings that bound it: a warm
stream of 1 MiB slices from one storage node against `dd` of the same
container file (the goal's baseline) and against the machine's TCP loopback
itself (`iperf3`, 1 MiB writes, the same number of bytes), alternated run by
run so a noisy machine hits all three alike. Also records the CPU seconds per
GiB of the node (from /proc/<pid>/stat), of the client (its own getrusage)
and of iperf3 (its JSON report), which is where the time goes.

  bench/sn/slice_goal.py [--bin build/bin] [--dir /var/tmp] [--runs 7]
      [--passes 8] [--depth 4] [--io-threads 8] [--node-set KEY=VALUE]...
      [--out FILE] [--smoke]

Each run: dd of the container (warm), then `cairn-sn-bench slice` over TCP,
then over ipc:// (a Unix socket; same node, second endpoint), then iperf3 over
TCP loopback. The table gives medians and the ratios of medians."""
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

MIB = 1024 * 1024
GIB = 1024 * MIB


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (bench/sn/run.py: the node launcher, dd and the bench call)
from run import dd_mib_s, sh  # noqa: E402


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def proc_cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Node(run.Node):
    """cairn-storage on a TCP endpoint (ipc names the second node's socket)."""

    def __init__(self, binary, work, io_threads, extra=()):
        settings = {"io_threads": io_threads, "obj_containers.sync_mode": "none"}
        settings.update(kv.split("=", 1) for kv in extra)
        super().__init__(binary, os.path.join(work, "data"), settings)
        self.tcp = self.endpoint
        self.ipc = "ipc://%s/node.sock" % work

    def container(self):
        return max(self.containers(), key=os.path.getsize)


def bench(node, *args):
    return run.run_bench(node, *args)


def slice_run(node, endpoint, a, nbytes_total):
    before = proc_cpu_s(node.proc.pid)
    r = bench(node, "slice", "--endpoint", endpoint, "--prefix", "g/", "--count", str(a.count),
              "--size", str(a.size), "--slice", str(MIB), "--depth", str(a.depth),
              "--passes", str(a.passes))
    node_cpu = proc_cpu_s(node.proc.pid) - before
    if int(r["bytes"]) != nbytes_total:
        raise RuntimeError("slice read %s bytes, expected %d" % (r["bytes"], nbytes_total))
    gib = nbytes_total / GIB
    return float(r["mib_s"]), node_cpu / gib, float(r["client_cpu_s"]) / gib


def iperf_run(nbytes_total):
    port = free_port()
    srv = subprocess.Popen(["iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", str(port)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 10
        while str(port) not in sh("ss -ltnH 'sport = :%d'" % port):
            if time.time() > deadline:
                raise RuntimeError("iperf3 -s did not listen")
            time.sleep(0.05)
        r = subprocess.run(["iperf3", "-c", "127.0.0.1", "-p", str(port), "-l", "1M", "-n",
                            str(nbytes_total), "-J"], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("iperf3 failed: %s" % r.stdout[-500:])
    finally:
        try:
            srv.wait(30)
        except subprocess.TimeoutExpired:
            srv.kill()
            srv.wait()
    j = json.loads(r.stdout)
    end = j["end"]
    bps = end["sum_received"]["bits_per_second"]
    secs = end["sum_received"]["seconds"]
    cpu = end["cpu_utilization_percent"]
    gib = nbytes_total / GIB
    # host = the sender (client), remote = the receiver (server); percent of one CPU
    return (bps / 8 / MIB, cpu["host_total"] / 100 * secs / gib,
            cpu["remote_total"] / 100 * secs / gib)


def machine():
    return "\n".join([
        "- CPU: %s; `nproc` = %s" % (sh("lscpu | sed -n 's/^Model name: *//p'"), sh("nproc")),
        "- kernel: %s; %s; %s" % (sh("uname -sr"), sh("iperf3 --version | head -1"),
                                  sh("dpkg-query -W -f='libzmq5 ${Version}' libzmq5"))])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.environ.get("CAIRN_BIN", "build/bin"))
    ap.add_argument("--dir", default="/var/tmp")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--passes", type=int, default=8)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--io-threads", type=int, default=8)
    ap.add_argument("--node-set", action="append", default=[],
                    help="a cairn-storage setting for both nodes (repeatable)")
    ap.add_argument("--out")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    a.count, a.size = (4, 64 * MIB)
    if a.smoke:
        a.runs, a.passes, a.count, a.size = 1, 1, 2, 4 * MIB
    if shutil.which("iperf3") is None:
        sys.exit("iperf3 is needed (apt-get install iperf3; deploy/deps/test.txt lists it)")
    work = tempfile.mkdtemp(prefix="cairn-slice-goal-", dir=a.dir)
    t0 = time.time()
    load_start = sh("cut -d' ' -f1-3 /proc/loadavg")
    rows = {k: [] for k in ("dd", "tcp", "ipc", "iperf", "tcp_node", "tcp_client", "ipc_node",
                            "ipc_client", "iperf_snd", "iperf_rcv")}
    node = Node(a.bin, work, a.io_threads, a.node_set)
    try:
        subprocess.run([node.bench, "load", "--endpoint", node.tcp, "--prefix", "g/", "--count",
                        str(a.count), "--size", str(a.size), "--depth", "4"], check=True,
                       capture_output=True)
        # listen takes one endpoint: a second node, with its own copy of
        # the data, serves the ipc:// row
        ipc_node = subprocess.Popen(
            [os.path.join(a.bin, "cairn-storage"), "--set", "listen=" + node.ipc, "--set",
             "data_dir=" + os.path.join(work, "data-ipc"), "--set", "log_level=warn", "--set",
             "io_threads=%d" % a.io_threads, "--set", "obj_containers.sync_mode=none"] +
            [x for kv in a.node_set for x in ("--set", kv)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ipc = Node.__new__(Node)
        ipc.proc, ipc.bench, ipc.data_dir = ipc_node, node.bench, os.path.join(work, "data-ipc")
        deadline = time.time() + 30
        while subprocess.run([node.bench, "scrub", "--endpoint", node.ipc],
                             capture_output=True).returncode != 0:
            if time.time() > deadline:
                raise RuntimeError("ipc node did not start")
            time.sleep(0.2)
        subprocess.run([node.bench, "load", "--endpoint", node.ipc, "--prefix", "g/", "--count",
                        str(a.count), "--size", str(a.size), "--depth", "4"], check=True,
                       capture_output=True)
        total = a.count * a.size * a.passes
        cfile, ipc_cfile = node.container(), ipc.container()
        dd_mib_s(cfile)
        dd_mib_s(ipc_cfile)   # both warm
        for _ in range(a.runs):
            rows["dd"].append(dd_mib_s(cfile))
            v, nc, cc = slice_run(node, node.tcp, a, total)
            rows["tcp"].append(v), rows["tcp_node"].append(nc), rows["tcp_client"].append(cc)
            v, nc, cc = slice_run(ipc, node.ipc, a, total)
            rows["ipc"].append(v), rows["ipc_node"].append(nc), rows["ipc_client"].append(cc)
            v, snd, rcv = iperf_run(total)
            rows["iperf"].append(v), rows["iperf_snd"].append(snd), rows["iperf_rcv"].append(rcv)
        ipc_node.send_signal(signal.SIGTERM)
        ipc_node.wait(60)
    finally:
        node.stop()
        shutil.rmtree(work, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in rows.items()}
    runs = lambda k: ", ".join("%.0f" % x for x in rows[k])
    out = ["# Storage node: 1 MiB slice stream vs dd and the TCP loopback ceiling%s\n" %
           (" (smoke)" if a.smoke else ""),
           "Written by `%s` on %s UTC, %.0f s in all.\n" %
           (" ".join(["bench/sn/slice_goal.py"] + sys.argv[1:]), time.strftime("%Y-%m-%d %H:%M",
                                                                               time.gmtime()),
            time.time() - t0),
           "## Machine\n", machine(), "- load average (1/5/15 min) at the start: %s; at the end: %s\n"
           % (load_start, sh("cut -d' ' -f1-3 /proc/loadavg")),
           "## Setup\n",
           "- %d records of %d MiB loaded into one node (`%s`), read whole %d times per run in "
           "1 MiB slices with %d in flight: `cairn-sn-bench slice --endpoint E --prefix g/ --count "
           "%d --size %d --slice 1048576 --depth %d --passes %d` (%d MiB per run; every slice's "
           "CRC32C checked by the client). The same over `ipc://` (a second node on a Unix "
           "socket, same data)." % (a.count, a.size // MIB, node.cmdline, a.passes, a.depth,
                                    a.count, a.size, a.depth, a.passes, total // MIB),
           "- Baselines in the same run, alternated: `dd if=<container> of=/dev/null bs=1M` (warm "
           "page cache; the goal's baseline) and `iperf3 -c 127.0.0.1 -l 1M -n %d` (TCP loopback "
           "with nothing else: no disk, no checksum, no protocol)." % total,
           "- CPU s/GiB: the node's user+system time from /proc/<pid>/stat, the client's own "
           "getrusage, iperf3's sender/receiver from its JSON report.\n",
           "## Results (median of %d runs)\n" % a.runs,
           "| path | MiB/s | of dd | of TCP loopback | CPU s/GiB (server side / client side) | runs MiB/s |",
           "|---|---|---|---|---|---|",
           "| dd of the container (warm) | %.0f | 100 %% | %.0f %% | – | %s |" %
           (med["dd"], 100 * med["dd"] / med["iperf"], runs("dd")),
           "| iperf3, TCP loopback, 1 MiB writes | %.0f | %.0f %% | 100 %% | %.2f / %.2f | %s |" %
           (med["iperf"], 100 * med["iperf"] / med["dd"], med["iperf_snd"], med["iperf_rcv"],
            runs("iperf")),
           "| cairn 1 MiB slices over TCP, depth %d | **%.0f** | **%.0f %%** | %.0f %% | "
           "%.2f / %.2f | %s |" % (a.depth, med["tcp"], 100 * med["tcp"] / med["dd"],
                                   100 * med["tcp"] / med["iperf"], med["tcp_node"],
                                   med["tcp_client"], runs("tcp")),
           "| cairn 1 MiB slices over ipc://, depth %d | %.0f | %.0f %% | %.0f %% | %.2f / %.2f "
           "| %s |" % (a.depth, med["ipc"], 100 * med["ipc"] / med["dd"],
                       100 * med["ipc"] / med["iperf"], med["ipc_node"], med["ipc_client"],
                       runs("ipc")),
           ""]
    text = "\n".join(out) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
