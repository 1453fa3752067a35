"""How long a chunk collector scan takes, and what its parent lookups cost.

Usage: CAIRN_BIN=build/bin /usr/bin/python3 bench/collector_scan.py [OBJECTS] [CHUNKS]

One fresh cluster (3 nodes, 1 gateway, the test harness's loopback
daemons): OBJECTS large objects of CHUNKS 64 KiB chunks each are stored
(every chunk named by its object: nothing to delete). Then the gateway runs
with collector.interval 1s in two cells, restarted between them:

  young   collector.grace 1h: every segment is younger than the grace, so a
          scan is the "c/" listing alone (the baseline);
  lookups collector.grace 1s, after the objects are older than that: every
          segment is looked up (parts and versions listed, the object record
          HEADed on its 3 replicas and its map read).

Each cell reports the median of 5 scans' durations (from the gateway's
"scan done in X ms" log lines) and the ratio to the young cell."""
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
from s3util import Cluster  # noqa: E402

K = 1024
N_OBJ = int(sys.argv[1]) if len(sys.argv) > 1 else 200
N_CHUNK = int(sys.argv[2]) if len(sys.argv) > 2 else 4
SETTINGS = {
    "collector.interval": "1s",
    "collector.grace": "1h",
    "collector.lease_time": "3s",
    "storage.request_timeout": "2s",
    "large_object.threshold_of_chunk_len": 64 * K,
    "large_object.chunked_obj_len": 64 * K,
    "large_object.reclaim_delay": "1s",
}
SCAN = re.compile(r"collector: scan done in (\d+) ms: (\d+) chunks in (\d+) segments, (\d+) "
                  r"chunks deleted")


def scans(c, n, start):
    """The next n completed scans after log offset start: [(ms, chunks, segs, deleted)]."""
    deadline = time.monotonic() + 600
    while True:
        got = [tuple(int(x) for x in m.groups()) for m in SCAN.finditer(c.log_text()[start:])]
        # the first scan after a start may have begun before the objects aged
        if len(got) >= n + 1:
            return got[1:n + 1]
        if time.monotonic() > deadline:
            raise SystemExit("scans did not come: %r" % got)
        time.sleep(0.5)


def restart(c, grace):
    c.proc.terminate()
    c.proc.wait(30)
    c.settings["collector.grace"] = grace
    start = len(c.log_text())
    c.start()
    return start


def main():
    with Cluster(settings=dict(SETTINGS),
                 node_settings={"obj_containers.sync_mode": "none", "io_threads": 2}) as c:
        s3 = c.boto(signature_version="s3v4")
        s3.create_bucket(Bucket="scan")
        body = os.urandom(N_CHUNK * 64 * K)
        for i in range(N_OBJ):
            s3.put_object(Bucket="scan", Key="o/%05d" % i, Body=body)
        rows = []
        for cell, grace in (("young", "1h"), ("lookups", "1s")):
            start = restart(c, grace)
            got = scans(c, 5, start)
            check = {(ch, sg, d) for _, ch, sg, d in got}
            if check != {(N_OBJ * N_CHUNK, N_OBJ, 0)}:
                raise SystemExit("unexpected scan counts in %s: %r" % (cell, got))
            rows.append((cell, statistics.median(ms for ms, _, _, _ in got),
                         [ms for ms, _, _, _ in got]))
        base = rows[0][1]
        print("| cell | chunks | segments | scan ms (median of 5) | the 5 scans | ms / segment "
              "| ratio to young |")
        print("|---|---|---|---|---|---|---|")
        for cell, med, all_ms in rows:
            print("| %s | %d | %d | %d | %s | %.2f | %.2f |" % (
                cell, N_OBJ * N_CHUNK, N_OBJ, med, " ".join(map(str, all_ms)), med / N_OBJ,
                med / base if base else float("nan")))


if __name__ == "__main__":
    main()
