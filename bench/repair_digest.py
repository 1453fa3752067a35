#!/usr/bin/python3
"""Repair by difference against the full anti-entropy pass: keys listed and
bytes read by `cairn-admin repair` when one replica missed 0 %, 1 % and
10 % of the writes.

For each divergence level, --nodes fresh cairn-storage nodes (auth none)
are loaded directly over the protocol with --keys records of --size bytes,
every key on its --replicas ring replicas, except that the last node
misses the given percent of its writes. Then, on the same data:
`repair --full --dry-run` (the pass before protocol 1.1: LIST every key of
every node), `repair --dry-run` (the digest pass), and `repair` (the digest
pass, writing), each with --json; a last `repair --dry-run` checks that
nothing differs. Prints a Markdown table; the full pass is the baseline
of each level (ratios from the same run).

  CAIRN_BIN=build/bin /usr/bin/python3 bench/repair_digest.py
      [--keys 100000] [--size 100] [--levels 0,1,10] [--nodes 3] [--replicas 3]

Not part of the test suite. The loader is Python (tests/integration/
snclient.py); only cairn-admin's own counters are reported."""
import argparse
import json
import os
import platform
import random
import subprocess
import sys
import time

os.environ.setdefault("CAIRN_TEST_AUTH", "none")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
from cluster_util import ring_replicas  # noqa: E402
from snclient import StorageNode, admin_env, crc32c  # noqa: E402

BIN = os.environ.get("CAIRN_BIN", "build/bin")


def admin(cf, replicas, *args):
    p = subprocess.run([os.path.join(BIN, "cairn-admin"), "--cluster", cf, "--replicas",
                        str(replicas), "--timeout", "60000", "repair", "--json"] + list(args),
                       capture_output=True, timeout=3600, env=admin_env())
    out = p.stdout.decode()
    js = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    if not js:
        raise RuntimeError("cairn-admin: %s %s" % (out, p.stderr.decode()))
    return js[-1]


def load(node, items, size):
    c = node.client(timeout_ms=60000)
    data = random.Random(5).randbytes(size)
    crc = crc32c(data)
    for s in range(0, len(items), 500):
        ids = [c.send("PUT", data, key=k, ver=1, ts=ts, crc=crc, etag=b"e") for k, ts in
               items[s:s + 500]]
        for rid in ids:
            if c.recv_id(rid).st != 0:
                raise RuntimeError("PUT failed")
    c.close()


def level(a, pct):
    nodes = [StorageNode({"node_id": "sn%d" % i, "io_threads": 2}) for i in range(a.nodes)]
    try:
        cf = os.path.join(nodes[0].tmp, "cluster.conf")
        with open(cf, "w") as f:
            for i, n in enumerate(nodes):
                f.write("node sn%d %s\n" % (i, n.endpoint))
        names = ["sn%d" % i for i in range(a.nodes)]
        rnd = random.Random(pct)
        keys = [b"o/bench/%08d-%06x" % (i, rnd.getrandbits(24)) for i in range(a.keys)]
        per = [[] for _ in nodes]
        last = a.nodes - 1
        for k in keys:
            reps = ring_replicas(names, k, a.replicas) if a.replicas < a.nodes else range(a.nodes)
            for r in reps:
                if r == last and rnd.random() * 100 < pct:
                    continue
                per[r].append((k, 1_700_000_000_000_000))
        t0 = time.monotonic()
        for n, items in zip(nodes, per):
            load(n, items, a.size)
        missed = sum(1 for k in keys if (a.replicas >= a.nodes or
                                         last in ring_replicas(names, k, a.replicas))) - len(per[last])
        load_s = time.monotonic() - t0
        full = admin(cf, a.replicas, "--full", "--dry-run")
        dry = admin(cf, a.replicas, "--dry-run")
        fix = admin(cf, a.replicas)
        after = admin(cf, a.replicas, "--dry-run")
        return {"pct": pct, "missed": missed, "records": sum(len(p) for p in per),
                "load_s": load_s, "full": full, "dry": dry, "fix": fix, "after": after}
    finally:
        for n in nodes:
            n.__exit__(None, None, None)


def ratio(x, y):
    return "%.4f" % (x / y) if y else "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keys", type=int, default=100000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--levels", default="0,1,10")
    ap.add_argument("--nodes", type=int, default=3)
    ap.add_argument("--replicas", type=int, default=3)
    a = ap.parse_args()
    res = [level(a, float(p)) for p in a.levels.split(",")]
    print("Machine: %s, %d CPUs, load average %s (shared with other builds: noisy)" % (
        platform.processor() or platform.machine(), os.cpu_count(),
        " ".join("%.1f" % x for x in os.getloadavg())))
    print("Command: `CAIRN_BIN=%s /usr/bin/python3 bench/repair_digest.py %s`\n" % (
        BIN, " ".join(sys.argv[1:])))
    print("| divergence | copies missed | records on nodes | pass | keys listed | listed / full "
          "| bytes read | read / full | requests | ranges compared | ranges differing "
          "| differences | seconds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in res:
        f = r["full"]
        for name, j in (("full --dry-run", f), ("digest --dry-run", r["dry"]),
                        ("digest (writing)", r["fix"]), ("digest, after", r["after"])):
            print("| %g %% | %d | %d | %s | %d | %s | %d | %s | %d | %d | %d | %d | %.2f |" % (
                r["pct"], r["missed"], r["records"], name, j["keys_listed"],
                ratio(j["keys_listed"], f["keys_listed"]), j["bytes_read"],
                ratio(j["bytes_read"], f["bytes_read"]), j["requests"], j["ranges_compared"],
                j["ranges_differing"], j["differences"], j["seconds"]))
    print()
    for r in res:
        print("- %g %%: the writing pass repaired %d copies (%d bytes copied, %d failed); the "
              "dry run after it found %d differences" % (
                  r["pct"], r["fix"]["repaired"], r["fix"]["bytes_copied"], r["fix"]["failed"],
                  r["after"]["differences"]))


if __name__ == "__main__":
    main()
