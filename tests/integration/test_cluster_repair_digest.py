"""Repair by difference (cairn-admin repair's digest pass, DIGEST of protocol
1.1), on loopback: four storage nodes, three replicas per key, a few
thousand keys loaded directly into the nodes over the protocol. One node
misses a known set of writes, one holds an older version of other keys, one
holds a tombstone the others lack. The digest repair must report exactly
those differences, list far fewer keys than the nodes hold (only the keys of
differing leaf ranges), copy the newest versions, and leave every replica
identical (checked by reading each node). The nodes run with a small
max_digest_scan, so DIGEST answers cut short by the scan cap are part of
the run. Also: DIGEST refuses malformed requests and its counts match LIST."""
import hashlib
import json
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_util import ring_replicas  # noqa: E402
from s3util import check  # noqa: E402
from snclient import FLAG_TOMBSTONE, StorageNode, admin_env, crc32c  # noqa: E402

BIN = os.environ.get("CAIRN_BIN", "build/bin")
NODES, N, KEYS = 4, 3, 3000
LEAF_KEYS = 4   # cairn-admin's default --leaf-keys


def admin(cf, *args, timeout=300):
    p = subprocess.run([os.path.join(BIN, "cairn-admin"), "--cluster", cf, "--replicas", str(N)] +
                       list(args), capture_output=True, timeout=timeout, env=admin_env())
    out = p.stdout.decode() + p.stderr.decode()
    js = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return p.returncode, out, (js[-1] if js else None)


def load(nodes, writes):
    """writes: {node index: [(op, key, data, ts, ver)]}; pipelined per node."""
    for i, ws in writes.items():
        c = nodes[i].client()
        for s in range(0, len(ws), 200):
            ids = []
            for op, key, data, ts, ver in ws[s:s + 200]:
                if op == "PUT":
                    ids.append(c.send("PUT", data, key=key, ver=ver, ts=ts, crc=crc32c(data),
                                      etag=b"e%d" % ts))
                else:
                    ids.append(c.send("DELETE", key=key, ver=ver, ts=ts))
            for rid in ids:
                r = c.recv_id(rid)
                check(r.st == 0, "load: %r" % r)
        c.close()


def state(node, key):
    c = node.client()
    try:
        r = c.get(key)
    finally:
        c.close()
    if r.st == 0:
        return ("live", r["ts"], r["ver"], bytes(r.payload))
    if r.st == 1 and (r.get("flags", 0) & FLAG_TOMBSTONE):
        return ("tomb", r["ts"], r["ver"], None)
    return ("absent", 0, 0, None)


def record_digest(e):
    """A record's two digest lanes, computed from PROTOCOL.md's description."""
    k, etag = e["key"], e.get("etag", b"")
    b = (len(k).to_bytes(4, "big") + k + e["ts"].to_bytes(8, "big") + e["ver"].to_bytes(8, "big") +
         (e["flags"] & 3).to_bytes(4, "big") + e["size"].to_bytes(8, "big") +
         len(etag).to_bytes(4, "big") + etag)
    h = hashlib.sha256(b).digest()
    return int.from_bytes(h[:8], "big"), int.from_bytes(h[8:16], "big")


def node_records(node, after=None, upto=None, digest=None):
    """How many records (tombstones included) node holds in (after, upto];
    with digest (a list [lane0, lane1]), also sums their digests into it."""
    c = node.client()
    n, page_after = 0, after
    while True:
        f = {"prefix": b"", "limit": 1000, "flags": 1}
        if page_after is not None:
            f["after"] = page_after
        r = c.call("LIST", **f)
        check(r.st == 0, "LIST: %r" % r)
        ents = r.get("ents") or []
        mine = [e for e in ents if upto is None or e["key"] <= upto]
        n += len(mine)
        for e in mine if digest is not None else []:
            h = record_digest(e)
            digest[0] = (digest[0] + h[0]) % (1 << 64)
            digest[1] = (digest[1] + h[1]) % (1 << 64)
        if not r.get("more") or len(mine) < len(ents):
            break
        page_after = ents[-1]["key"]
    c.close()
    return n


def check_digest_op(node):
    c = node.client()
    try:
        for bad in ({"fanout": 0}, {"fanout": 257}, {"fanout": 4, "after": b"b", "upto": b"a"},
                    {"fanout": 4, "arcs": b"\x00" * 15},
                    {"fanout": 4, "arcs": (b"\x00" * 7 + b"\x09") + (b"\x00" * 7 + b"\x01")}):
            r = c.call("DIGEST", **bad)
            check(r.st == 2, "DIGEST %r should be refused: %r" % (bad, r))
        r = c.call("DIGEST", fanout=4)
        check(r.st == 0 and r["more"] and len(r["sums"]) < 4 * 24,
              "the scan cap (500) should cut a whole-node DIGEST short: %r" % r)
        rng = {"after": b"o/b/k00100", "upto": b"o/b/k00400"}
        r = c.call("DIGEST", fanout=1, **rng)
        check(r.st == 0 and len(r["sums"]) == 24 and not r["more"], "DIGEST fanout 1: %r" % r)
        count = int.from_bytes(r["sums"][:8], "big")
        dg = [0, 0]
        listed = node_records(node, digest=dg, **rng)
        check(count == listed and count > 100, "DIGEST count %d != LIST count %d" % (count, listed))
        check(dg == [int.from_bytes(r["sums"][8:16], "big"), int.from_bytes(r["sums"][16:24], "big")],
              "the digest sum differs from the one PROTOCOL.md describes")
        check(r["lo"] > rng["after"] and r["hi"] <= rng["upto"], "lo/hi: %r" % r)
        r2 = c.call("DIGEST", fanout=16, **rng)
        sums = [r2["sums"][i:i + 24] for i in range(0, len(r2["sums"]), 24)]
        check(len(sums) == 16 and sum(int.from_bytes(s[:8], "big") for s in sums) == count,
              "sub-range counts do not add up")
        nonempty = sum(1 for s in sums if int.from_bytes(s[:8], "big") > 0)
        check(nonempty > 1 and r2.get("lo") is None, "lo/hi only for a one-sub-range answer")
        lane = sum(int.from_bytes(s[8:16], "big") for s in sums) % (1 << 64)
        check(lane == int.from_bytes(r["sums"][8:16], "big"), "sub-range sums do not add up")
        check(c.call("PING").st == 0, "node stopped serving")
    finally:
        c.close()
    print("ok   DIGEST refuses bad requests; its counts and sums add up, match LIST and the digest PROTOCOL.md describes")


def main():
    rnd = random.Random(17)
    nodes = []
    try:
        for i in range(NODES):
            nodes.append(StorageNode(settings={"node_id": "sn%d" % i, "max_digest_scan": 500}))
        tmp = nodes[0].tmp
        cf = os.path.join(tmp, "cluster.conf")
        with open(cf, "w") as f:
            for i, n in enumerate(nodes):
                f.write("node sn%d %s\n" % (i, n.endpoint))
        names = ["sn%d" % i for i in range(NODES)]
        keys = [("o/b/k%05d-%x" % (i, rnd.getrandbits(24))).encode() for i in range(KEYS)]
        reps = {k: ring_replicas(names, k, N) for k in keys}
        ts0 = 1_700_000_000_000_000
        data = {k: rnd.randbytes(rnd.randint(10, 200)) for k in keys}
        on1 = [k for k in keys if 1 in reps[k]]
        on2 = [k for k in keys if 2 in reps[k]]
        on3 = [k for k in keys if 3 in reps[k]]
        missing = set(rnd.sample(on1, 30))                       # node 1 missed these
        older = set(rnd.sample([k for k in on2 if k not in missing], 20))  # node 2 has v1
        tomb = set(rnd.sample([k for k in on3 if k not in missing | older], 10))  # node 3 deleted
        writes = {i: [] for i in range(NODES)}
        for k in keys:
            for r in reps[k]:
                if r == 1 and k in missing:
                    continue
                if k in older:
                    writes[r].append(("PUT", k, b"old" + data[k], ts0, 1))
                    if r == 2:
                        continue
                writes[r].append(("PUT", k, data[k], ts0 + 10, 2))
                if k in tomb and r == 3:
                    writes[r].append(("DELETE", k, None, ts0 + 20, 3))
        load(nodes, writes)
        check_digest_op(nodes[0])
        expect = set()
        for k in keys:
            for r in reps[k]:
                if (k in missing and r == 1) or (k in older and r == 2) or \
                        (k in tomb and r != 3):
                    expect.add((k, nodes[r].endpoint))
        total = sum(node_records(n) for n in nodes)

        # dry run: exactly the planted differences, few keys listed
        rc, out, js = admin(cf, "repair", "--dry-run", "-v", "--json")
        check(js is not None and js["mode"] == "digest", "no digest summary: %s" % out)
        found = set()
        for m in re.finditer(r"differs: '(.*?)' on (\S+) \((\w+)\)", out):
            found.add((m.group(1).encode(), m.group(2)))
        check(rc == 1 and js["differences"] == len(expect), "dry run: %s" % out[-2000:])
        check(found == expect, "reported %d differences, expected %d: extra %r missing %r" % (
            len(found), len(expect), sorted(found - expect)[:3], sorted(expect - found)[:3]))
        # only differing leaves are listed: a leaf is a range whose replica-set
        # records number at most leaf_keys on every member, and the nodes send
        # exactly those records (DIGEST with limit), so the keys listed are
        # bounded by the differing leaves, not by the keyspace
        bound = js["leaves"] * N * LEAF_KEYS
        check(0 < js["leaves"] <= len(expect), "leaves: %r" % js)
        check(js["keys_listed"] <= bound and js["keys_listed"] * 5 < total,
              "listed %d keys of %d (bound %d): %r" % (js["keys_listed"], total, bound, js))
        print("ok   dry run: %d differences exactly as planted; %d keys listed of %d records "
              "(%d leaves, %d ranges compared, %d differing)" % (
                  js["differences"], js["keys_listed"], total, js["leaves"],
                  js["ranges_compared"], js["ranges_differing"]))
        rc, out, full = admin(cf, "repair", "--dry-run", "--full", "--json")
        check(full["mode"] == "full" and full["differences"] == len(expect) and
              full["keys_listed"] == total, "full dry run: %s" % out[-2000:])

        rc, out, js = admin(cf, "repair", "--json")
        check(rc == 0 and js["repaired"] == len(expect) and js["failed"] == 0,
              "repair: %s" % out[-2000:])
        for k in keys:
            st = [state(nodes[r], k) for r in reps[k]]
            check(len(set(st)) == 1, "replicas of %r differ: %r" % (k, st))
            want = "tomb" if k in tomb else "live"
            check(st[0][0] == want, "%r is %s, expected %s" % (k, st[0][0], want))
            if want == "live":
                check(st[0][3] == data[k] and st[0][1] == ts0 + 10, "%r has the wrong version" % k)
        print("ok   repair copied %d records; every replica of %d keys identical" % (
            js["repaired"], len(keys)))
        rc, out, js = admin(cf, "repair", "--dry-run", "--json")
        check(rc == 0 and js["differences"] == 0 and js["keys_listed"] == 0,
              "after repair: %s" % out[-2000:])
        print("ok   converged: a dry run compares %d ranges and lists no key" %
              js["ranges_compared"])

        # the full pass (--full) still repairs: new keys on two replicas only
        extra = [("o/b/x%03d" % i).encode() for i in range(20)]
        w2 = {i: [] for i in range(NODES)}
        for k in extra:
            data[k] = rnd.randbytes(50)
            for r in ring_replicas(names, k, N)[:2]:
                w2[r].append(("PUT", k, data[k], ts0 + 30, 4))
        load(nodes, w2)
        rc, out, js = admin(cf, "repair", "--full", "--json")
        check(rc == 0 and js["mode"] == "full" and js["repaired"] == len(extra),
              "full repair: %s" % out[-2000:])
        for k in extra:
            st = [state(nodes[r], k) for r in ring_replicas(names, k, N)]
            check(len(set(st)) == 1 and st[0][3] == data[k], "full: %r differs: %r" % (k, st))
        print("ok   --full repairs too (%d records)" % js["repaired"])
    finally:
        for n in nodes:
            n.__exit__(None, None, None)
    print("all passed")


if __name__ == "__main__":
    main()
