"""The rebalance worker (docs/cluster.md), with real daemons on loopback:
three nodes named by a cluster file (N = 2), a fourth node, gateway A
(rebalance off: it only serves) and gateways B and C (rebalance on, the
lease decides which one works).

- 300+ objects, one of them large (chunked), written through A; the
  throttle is set low with `cairn-admin rebalance throttle` before the
  change, then `cairn-admin node add` (no `cairn-admin repair` anywhere).
- While throttled, the bytes copied over a few seconds stay under the
  throttle's budget plus one record (the bucket is charged before a copy
  is sent, so in-flight keys do not burst past it; generous slack for the
  record's round ends, no timing assertion beyond that), and something
  moves.
- Deletes made before the change (keys whose new owners include the new
  node): the tombstone reaches every new owner and no other node keeps any
  copy (live or tombstone) of the key: deleted objects stay deleted.
- System records: an access key made with `cairn-admin key create` before
  the change (its record "s/keys/AKID" on its ring replicas) is copied to
  its new owners and never purged from the old ones; the cluster map
  "s/cluster" stays on every node. A key made after the change with
  `cairn-admin --nodes <one old node>` lands on its replicas in the map's
  ring (cairn-admin reads the map from that node), and `key list` there
  shows both.
- The lease holder is killed with SIGKILL mid-walk; the other gateway takes
  the lease after it expires and resumes from the cursor kept in
  s/rebalance (its log says after which key; the walk keeps its start
  time and map versions); the throttle is lifted and the walk finishes.
- Objects read back through A and the survivor throughout.
- At the end each node holds exactly the keys the new ring places on it
  (the new node its share, copied; the old owners' extra copies purged),
  `cairn-admin rebalance status --json` and `node status --json` show the
  walk done, and once the nodes compact, their disk bytes went down.
"""
import json
import os
import random
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3util  # noqa: E402
from cluster_util import FLAG_TOMBSTONE, ring_replicas, storage_key  # noqa: E402
from s3util import check  # noqa: E402
from snclient import admin_env, free_port  # noqa: E402
from test_cluster_map import OtherGateway, admin, gauge, wait_for  # noqa: E402

N = 2
THROTTLE = 100 * 1024          # bytes/s while throttled
CHUNK = 256 * 1024             # large_object.chunked_obj_len
INFLIGHT = 4
NAMES = ["s0", "s1", "s2", "s3"]


def node_keys(node):
    """The live (non-tombstone) non-system keys a node holds."""
    c = node.client(timeout_ms=10000)
    out, after = set(), None
    try:
        while True:
            r = c.list(after=after, limit=1000)
            check(r.st == 0, "LIST failed %r" % r)
            for e in r["ents"]:
                k = bytes(e["key"])
                if not k.startswith(b"s/") and not (e.get("flags", 0) & 1):
                    out.add(k)
            if not r.get("more") or not r["ents"]:
                return out
            after = bytes(r["ents"][-1]["key"])
    finally:
        c.close()


def node_stat(node, name):
    c = node.client(timeout_ms=10000)
    try:
        return c.stats()[name]
    finally:
        c.close()


def status(cf):
    rc, out, err = admin(cf, "--replicas", str(N), "--json", "rebalance", "status")
    check(rc == 0, "rebalance status failed %d: %s %s" % (rc, out, err))
    return json.loads(out)["rebalance"]


def admin_keys(cl, master, *args, nodes=None):
    """cairn-admin key ... with the master key, over --cluster (or --nodes)."""
    import subprocess
    bin_dir = os.environ.get("CAIRN_BIN", "build/bin")
    where = ["--nodes", nodes] if nodes else ["--cluster", os.path.join(cl.tmp, "cluster.conf")]
    env = dict(admin_env(), CAIRN_MASTER_KEY_FILE=master)
    p = subprocess.run([os.path.join(bin_dir, "cairn-admin")] + where +
                       ["--replicas", str(N), "--json"] + list(args),
                       capture_output=True, timeout=120, env=env)
    check(p.returncode == 0, "cairn-admin %r failed %d: %s %s"
          % (args, p.returncode, p.stdout, p.stderr))
    return json.loads(p.stdout)


def versions(cl, skey):
    """[(state, ts, ver)] of skey on each node (state: live, tomb, absent)."""
    out = []
    for n in cl.nodes:
        c = n.client(timeout_ms=10000)
        try:
            r = c.head(skey)
        finally:
            c.close()
        if r.st == 0:
            out.append(("live", r["ts"], r["ver"]))
        elif r.st == 1 and (r.get("flags", 0) & FLAG_TOMBSTONE):
            out.append(("tomb", r["ts"], r["ver"]))
        else:
            check(r.st == 1, "HEAD failed: %r" % r)
            out.append(("absent", 0, 0))
    return out


def holders(cl, skey):
    """The indexes of the nodes that hold skey live."""
    return {i for i, v in enumerate(versions(cl, skey)) if v and v[0] == "live"}


def read_some(clients, expect, n, rnd):
    for name, s3 in clients:
        for k in rnd.sample(sorted(expect), n):
            got = s3.get_object(Bucket="rebal", Key=k)["Body"].read()
            check(got == expect[k], "%s read %s wrong (%d bytes, want %d)"
                  % (name, k, len(got), len(expect[k])))


def test_grow_throttle_kill_purge():
    gw = {"cluster.map_refresh": "300ms", "storage.request_timeout": "1s",
          "storage.probe_interval": "200ms", "consistency.num_of_replicas": N,
          "large_object.chunked_obj_len": CHUNK,
          "large_object.threshold_of_chunk_len": CHUNK,
          "rebalance.interval": "300ms", "rebalance.lease_time": "3s",
          "rebalance.inflight": INFLIGHT, "rebalance.enabled": "false"}
    nodes = {"compaction.check_interval": "500ms", "compaction.min_dead_bytes": "64K",
             "obj_containers.max_container_len": "1M", "max_record_len": "512K",
             "compaction.dead_ratio": "20"}
    cl = s3util.Cluster(nodes=4, settings=gw, node_settings=nodes)
    others = []
    try:
        cf = os.path.join(cl.tmp, "cluster.conf")
        with open(cf, "w") as f:
            for i, n in enumerate(cl.nodes[:3]):
                f.write("node s%d %s\n" % (i, n.endpoint))
        cl.proc.terminate()
        cl.proc.wait()
        cl.settings["cluster.file"] = cf
        cl.start()
        a = cl.boto()
        rnd = random.Random(1717)
        a.create_bucket(Bucket="rebal")
        expect = {}
        for i in range(300):
            k = "obj%03d" % i
            expect[k] = rnd.randbytes(rnd.randint(0, 40000))
            a.put_object(Bucket="rebal", Key=k, Body=expect[k])
        expect["big"] = rnd.randbytes(3 * CHUNK + 1234)
        a.put_object(Bucket="rebal", Key="big", Body=expect["big"])
        # deletes whose new owners include the new node: their tombstone must
        # get there before the old copies go
        moving = [k for k in sorted(expect) if k != "big" and
                  3 in ring_replicas(NAMES, storage_key("rebal", k), N)]
        deleted = moving[:15]
        check(len(deleted) == 15, "too few keys move to the new node: %d" % len(moving))
        for k in deleted:
            a.delete_object(Bucket="rebal", Key=k)
            del expect[k]
        # an access key (a system record on its ring replicas), made by the file's ring
        master = os.path.join(cl.tmp, "master.key")
        with open(master, "w") as f:
            f.write(os.urandom(32).hex() + "\n")
        os.chmod(master, 0o600)
        # (access keys until one's replicas change with the new node)
        key_old, made = {}, 0
        while made < 3 or all(3 not in ring_replicas(NAMES, r, N) for r in key_old):
            check(made < 40, "no key record moves to the new node")
            akid = admin_keys(cl, master, "key", "create", "before%d" % made)["access_key_id"]
            made += 1
            rec = ("s/keys/" + akid).encode()
            key_old[rec] = holders(cl, rec)
            check(key_old[rec] == set(ring_replicas(NAMES[:3], rec, N)),
                  "the key record is not on its replicas: %r" % key_old[rec])
        disk_before = sum(node_stat(n, "bytes_total") for n in cl.nodes[:3])

        for name in ("gw-b", "gw-c"):
            mp = free_port()
            others.append(OtherGateway(cl, name, **{"rebalance.enabled": "true",
                                                    "metrics.port": mp,
                                                    "metrics.listen": "127.0.0.1"}))
            others[-1].metrics_port = mp
        time.sleep(1.5)   # the workers claim the lease and find nothing to do (version 0)
        rc, out, err = admin(cf, "rebalance", "throttle", str(THROTTLE))
        check(rc == 0, "throttle failed %d: %s %s" % (rc, out, err))

        rc, out, err = admin(cf, "--replicas", str(N), "node", "add", "s3", cl.nodes[3].endpoint)
        check(rc == 0, "node add failed %d: %s %s" % (rc, out, err))
        wait_for("a walk of map version 1 starts",
                 lambda: (status(cf) or {}).get("state") == "copying" and
                 status(cf)["to_version"] == 1, timeout=30)

        # throttled: over a window, at most the budget plus one record of at
        # most one chunk (each key is paid for before its copy is sent), and
        # > 0. The counters in the record move at round ends (a third of the
        # lease: 1 s), so the window's edges are 1 s each side.
        s0 = status(cf)
        t0 = time.monotonic()
        time.sleep(4)
        s1 = status(cf)
        dt = time.monotonic() - t0
        moved = s1["bytes"] - s0["bytes"]
        # (unthrottled, the ~2.8 MB this walk copies would all pass in the window)
        bound = THROTTLE * (dt + 2) + CHUNK
        print("  throttled at %d B/s: %d bytes in %.1fs (bound %d)" % (THROTTLE, moved, dt, bound))
        check(0 < moved <= bound, "throttled copy moved %d bytes in %.1fs (bound %d)"
              % (moved, dt, bound))
        read_some((("a", a),) + tuple((g.tmp, g.boto()) for g in others), expect, 10, rnd)

        # kill -9 the holder mid-walk; the other one resumes from the cursor
        holder = s1["holder"]
        victim = [g for g in others if (":%d " % g.port) in holder]
        check(len(victim) == 1, "holder %r is not one of the gateways" % holder)
        victim = victim[0]
        survivor = [g for g in others if g is not victim][0]
        check(s1["state"] == "copying" and s1["scanned"] < len(expect),
              "the walk ended before the kill: %r" % s1)
        victim.proc.send_signal(signal.SIGKILL)
        victim.proc.wait()
        others.remove(victim)
        victim.log.close()
        rc, out, err = admin(cf, "rebalance", "throttle", "0")
        check(rc == 0, "throttle 0 failed %d: %s %s" % (rc, out, err))
        wait_for("the survivor resumes the walk",
                 lambda: "resumes after key" in survivor.log_text(), timeout=30)
        took = wait_for("the walk finishes", lambda: status(cf)["done_version"] == 1,
                        timeout=120)
        s2 = status(cf)
        print("  resumed by the other gateway, done %.1fs later: %r" % (took, s2))
        check(s2["started_us"] == s1["started_us"] and s2["from_version"] == 0 and
              s2["to_version"] == 1 and (":%d " % survivor.port) in s2["holder"],
              "the walk was not resumed: %r then %r" % (s1, s2))
        check(s2["copied"] > 0 and s2["purged"] > 0 and s2["failed"] == 0,
              "nothing copied or purged: %r" % s2)
        read_some((("a", a), ("survivor", survivor.boto())), expect, 40, rnd)
        mp = survivor.metrics_port
        check(gauge(mp, "cairn_gateway_rebalance_lease_held") == 1 and
              gauge(mp, "cairn_gateway_rebalance_running") == 0 and
              gauge(mp, "cairn_gateway_rebalance_keys_total") > 0 and
              gauge(mp, "cairn_gateway_rebalance_bytes_total") > 0,
              "the survivor's rebalance metrics do not match the record: %r" %
              [gauge(mp, "cairn_gateway_rebalance_" + n) for n in
               ("lease_held", "running", "keys_total", "bytes_total")])

        # placement: each node holds exactly the keys the new ring gives it
        held = [node_keys(n) for n in cl.nodes]
        union = set().union(*held)
        check(storage_key("rebal", "obj000") in union, "keys are not where expected")
        for i, keys in enumerate(held):
            want = {k for k in union if i in ring_replicas(NAMES, k, N)}
            check(keys == want, "node s%d: %d keys, the ring places %d (missing %d, extra %d)"
                  % (i, len(keys), len(want), len(want - keys), len(keys - want)))
        print("  %d keys: per node %s, exactly the new ring's placement"
              % (len(union), [len(k) for k in held]))
        check(len(held[3]) > 0, "the new node got nothing")

        # the deletes moved: each new owner holds the tombstone, no other
        # node any copy; the objects stay deleted
        for k in deleted:
            skey = storage_key("rebal", k)
            owners = set(ring_replicas(NAMES, skey, N))
            v = versions(cl, skey)
            for i, st in enumerate(v):
                want = "tomb" if i in owners else "absent"
                check(st[0] == want, "deleted %s on s%d: %r (want %s; owners %r)"
                      % (k, i, st, want, sorted(owners)))
            try:
                a.get_object(Bucket="rebal", Key=k)
                check(False, "deleted %s came back after the rebalance" % k)
            except a.exceptions.NoSuchKey:
                pass
        print("  %d deletes moved: tombstones on exactly their new owners" % len(deleted))

        # system records: the map on every node, the key record copied to its
        # new owners and kept on the old ones
        for i, n in enumerate(cl.nodes):
            check(i in holders(cl, b"s/cluster"), "s/cluster purged from s%d" % i)
        moved_recs = 0
        for rec, old in key_old.items():
            now, new = holders(cl, rec), set(ring_replicas(NAMES, rec, N))
            check(now == old | new, "key record on %r; old %r, new owners %r"
                  % (sorted(now), sorted(old), sorted(new)))
            moved_recs += new != old
        # cairn-admin key commands use the map the nodes hold (4 nodes), not
        # the one node they are given
        after = admin_keys(cl, master, "key", "create", "after", nodes=cl.nodes[0].endpoint)
        rec2 = ("s/keys/" + after["access_key_id"]).encode()
        want2 = set(ring_replicas(NAMES, rec2, N))
        took = wait_for("the new key record on its 2 replicas in the map's ring",
                        lambda: holders(cl, rec2) == want2, timeout=10)
        listed = admin_keys(cl, master, "key", "list", nodes=cl.nodes[0].endpoint)["keys"]
        names = sorted(x["name"] for x in listed)
        check(names == sorted(["after"] + ["before%d" % i for i in range(made)]),
              "key list over the map: %r" % names)
        print("  system records kept; %d of %d key records copied to new owners and kept on "
              "the old; a key made via one node went to %r" % (moved_recs, made, sorted(want2)))

        rc, out, err = admin(cf, "--replicas", str(N), "--json", "node", "status")
        st = json.loads(out)
        check(st["rebalance"]["done_version"] == 1 and st["rebalance"]["state"] == "idle",
              "node status does not show the walk done: " + out)
        rc, out, err = admin(cf, "--replicas", str(N), "rebalance", "status")
        check(rc == 0 and "done" in out and "purged" in out, "rebalance status: " + out)

        # space comes back when the nodes compact the purged copies
        def compacted():
            return sum(node_stat(n, "bytes_total") for n in cl.nodes[:3]) < disk_before * 0.9
        took = wait_for("old owners' disk bytes go down", compacted, timeout=60)
        disk_after = sum(node_stat(n, "bytes_total") for n in cl.nodes[:3])
        print("  old owners' disk bytes %d -> %d after compaction (%.1fs)"
              % (disk_before, disk_after, took))
        read_some((("a", a), ("survivor", survivor.boto())), expect, 40, rnd)
    finally:
        for g in others:
            g.close()
        cl.close()


if __name__ == "__main__":
    test_grow_throttle_kill_purge()
    print("ok")
