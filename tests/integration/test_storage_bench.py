"""Keeps the storage-node micro-benchmark from rotting: runs bench/sn/run.py
--smoke (a tiny matrix, seconds) against the built binaries and checks that
the report has every table with numbers in it; the same for
bench/sn/slice_goal.py --smoke."""
import os
import re
import subprocess
import sys


def main():
    src = os.environ.get("CAIRN_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
    binary = os.environ.get("CAIRN_BIN", "build/bin")
    out = subprocess.run(["/usr/bin/python3", os.path.join(src, "bench", "sn", "run.py"), "--smoke",
                          "--bin", binary, "--dir", "/tmp"], capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit("run.py --smoke failed:\n%s\n%s" % (out.stdout, out.stderr))
    text = out.stdout
    for title in ("## Slice GET throughput", "### warm page cache", "### cold page cache",
                  "## Scrub throughput", "## PUT throughput"):
        if title not in text:
            sys.exit("missing section %r in:\n%s" % (title, text))
    if not re.search(r"\| 1M \| \**\d+", text) or not re.search(r"writethrough \| \d+ ops/s", text):
        sys.exit("tables without numbers:\n" + text)
    # the slice goal's script, with its dd and iperf3 baselines
    out = subprocess.run(["/usr/bin/python3", os.path.join(src, "bench", "sn", "slice_goal.py"),
                          "--smoke", "--bin", binary, "--dir", "/tmp"], capture_output=True,
                         text=True, timeout=600)
    if out.returncode != 0:
        sys.exit("slice_goal.py --smoke failed:\n%s\n%s" % (out.stdout, out.stderr))
    for row in ("| dd of the container", "| iperf3, TCP loopback", "| cairn 1 MiB slices over TCP",
                "| cairn 1 MiB slices over ipc://"):
        if not re.search(re.escape(row) + r"[^|]*\| \**\d+", out.stdout):
            sys.exit("slice_goal.py: no number in row %r:\n%s" % (row, out.stdout))
    print("test_storage_bench: ok")


if __name__ == "__main__":
    main()
