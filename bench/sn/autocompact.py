#!/usr/bin/python3
"""Automatic compaction: space reclaimed and the foreground latency it costs.

For each setting (automatic compaction off, unpaced, and paced at a few
compaction.max_rate values) one fresh cairn-storage node is filled with
--keys objects of --size bytes, then --dead percent of them are overwritten
(their old records become dead) with automatic compaction off; the node is
restarted on that data with the setting measured, and one foreground client
alternates GET of a random object and PUT of a new 4 KiB one, timing each;
the window ends when the first automatic run has finished (or after
--window s when it is off). Reported per setting: container bytes before and after, the time
to reclaim, and the foreground p50/p99/max of the window with their ratio to
the "off" run of the same invocation.

  /usr/bin/python3 bench/sn/autocompact.py [--keys 320] [--size 262144]
      [--dead 60] [--rates off,0,32M,8M] [--window 10]

Uses tests/integration/snclient.py (CAIRN_BIN points at build/bin). The
client is Python: its own cost is in every number (same for every setting)."""
import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tests", "integration"))
from snclient import StorageNode  # noqa: E402


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p / 100))] if v else 0.0


def disk(node):
    return sum(os.path.getsize(p) for p in node.container_files())


def run_one(rate, a):
    data = random.Random(1).randbytes(a.size)
    small = data[:4096]
    # fill and overwrite with automatic compaction off, then restart the
    # node on the same data with the setting measured: every candidate is
    # there when the first check runs
    with StorageNode({"obj_containers.max_container_len": "16M", "max_record_len": "1M",
                      "compaction.check_interval": "0"}) as node:
        c = node.client(timeout_ms=60000)
        keys = [b"b/%d" % i for i in range(a.keys)]
        for k in keys:
            c.put(k, data, ver=1, ts=1)
        rnd = random.Random(2)
        for k in rnd.sample(keys, a.keys * a.dead // 100):
            c.put(k, data, ver=2, ts=2)
        c.close()
        full = disk(node)
        node.stop()
        node.settings.update({"compaction.check_interval": "200ms" if rate != "off" else "0",
                              "compaction.max_rate": rate if rate != "off" else "0"})
        node.start()
        c = node.client(timeout_ms=60000)
        # foreground: GET of a random object, PUT of a new 4 KiB object
        # (which adds no dead space), alternately, one at a time
        lat, t0, n_put = [], time.monotonic(), 0
        while True:
            s0 = time.perf_counter()
            if len(lat) % 2:
                n_put += 1
                c.put(b"n/%d" % n_put, small, ver=1, ts=1)
            else:
                c.get(keys[rnd.randrange(len(keys))])
            lat.append((time.perf_counter() - s0) * 1e3)
            if len(lat) % 20:
                continue
            el = time.monotonic() - t0
            if rate == "off":
                if el >= a.window:
                    break
            elif "compaction (automatic)" in node.log_text() or el > 600:
                break   # the first automatic run (it takes every candidate) ended
        el = time.monotonic() - t0
        st = c.stats()
        after = disk(node)
        c.close()
    return {"rate": rate, "full": full, "after": after,
            "reclaimed": st["bytes_reclaimed"], "moved": st["relocations"], "secs": el,
            "n": len(lat), "p50": pct(lat, 50), "p99": pct(lat, 99), "max": max(lat),
            "throttled_ms": st["compaction_throttled_us"] / 1000}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=320)
    ap.add_argument("--size", type=int, default=256 << 10)
    ap.add_argument("--dead", type=int, default=60)
    ap.add_argument("--rates", default="off,0,32M,8M")
    ap.add_argument("--window", type=float, default=10)
    a = ap.parse_args()
    rows = [run_one(r, a) for r in a.rates.split(",")]
    base = next((r for r in rows if r["rate"] == "off"), rows[0])
    print("| max_rate | on disk before | after | reclaimed | records moved | window s |"
          " fg requests | p50 ms | p99 ms | max ms | p99 / off | throttled s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        name = {"off": "auto off", "0": "unpaced"}.get(r["rate"], r["rate"] + "/s")
        print("| %s | %.1f MiB | %.1f MiB | %.1f MiB | %d | %.1f | %d | %.2f | %.2f | %.1f | %.2f | %.1f |" % (
            name, r["full"] / 2**20, r["after"] / 2**20, r["reclaimed"] / 2**20, r["moved"], r["secs"],
            r["n"], r["p50"], r["p99"], r["max"], r["p99"] / base["p99"],
            r["throttled_ms"] / 1000))


if __name__ == "__main__":
    main()
