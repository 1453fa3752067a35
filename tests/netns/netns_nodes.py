"""The storage-node side checks of test_netns_cluster_ops.py, run inside a
namespace that reaches the nodes (ip netns exec ... python3 netns_nodes.py):
they speak the node protocol (tests/integration/snclient.py; the netns
nodes run without auth) and print one JSON document.

  stats ADDR...                 each node's STATS ({addr: stats | null})
  count ADDR...                 each node's number of live keys ({addr: n})
  placement N ID=ADDR...        for the ring of the given ids (weight 100,
                                168 points each), each node's live keys
                                (system records and tombstones left out)
                                against the keys the ring gives it:
                                {id: {"held", "want", "missing", "extra"}}
"""
import bisect
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from cluster_util import ring_hash  # noqa: E402
from snclient import Client  # noqa: E402


def node_stats(addr):
    c = Client(addr, timeout_ms=5000, curve=None)
    try:
        st = c.stats()
        return {(k.decode() if isinstance(k, bytes) else k): v for k, v in st.items()} \
            if st is not None else None
    except Exception:  # noqa: BLE001 - a node that does not answer
        return None
    finally:
        c.close()


def live_keys(addr):
    c = Client(addr, timeout_ms=20000, curve=None)
    out, after = set(), None
    try:
        while True:
            r = c.list(after=after, limit=1000)
            if r.st != 0:
                raise SystemExit("LIST of %s failed: %r" % (addr, r))
            for e in r["ents"]:
                k = bytes(e["key"])
                if not k.startswith(b"s/") and not (e.get("flags", 0) & 1):
                    out.add(k)
            if not r.get("more") or not r["ents"]:
                return out
            after = bytes(r["ents"][-1]["key"])
    finally:
        c.close()


class Ring:
    """cn_ring's placement (tests/integration/cluster_util.py's
    ring_replicas, with the points computed once)."""

    def __init__(self, ids, vnodes=168):
        self.pts = sorted((ring_hash(("%s#%d" % (nm, v)).encode()), i)
                          for i, nm in enumerate(ids) for v in range(vnodes))
        self.hashes = [p[0] for p in self.pts]

    def replicas(self, key, n):
        i = bisect.bisect_left(self.hashes, ring_hash(key)) % len(self.pts)
        out = []
        for step in range(len(self.pts)):
            node = self.pts[(i + step) % len(self.pts)][1]
            if node not in out:
                out.append(node)
                if len(out) == n:
                    break
        return out


def placement(n, pairs):
    ids = [p.split("=", 1)[0] for p in pairs]
    held = [live_keys(p.split("=", 1)[1]) for p in pairs]
    union = set().union(*held)
    ring = Ring(ids)
    want = [set() for _ in ids]
    for k in union:
        for i in ring.replicas(k, n):
            want[i].add(k)
    return {ids[i]: {"held": len(held[i]), "want": len(want[i]),
                     "missing": len(want[i] - held[i]), "extra": len(held[i] - want[i])}
            for i in range(len(ids))}


def main():
    cmd = sys.argv[1]
    if cmd == "stats":
        print(json.dumps({a: node_stats(a) for a in sys.argv[2:]}))
    elif cmd == "count":
        print(json.dumps({a: len(live_keys(a)) for a in sys.argv[2:]}))
    elif cmd == "placement":
        print(json.dumps(placement(int(sys.argv[2]), sys.argv[3:])))
    else:
        raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    main()
