"""Hinted handoff survives a gateway restart (docs/cluster.md, "Hinted
handoff"): hints live on the storage nodes, not in the gateway.

3 nodes, N=3 W=2. Node C is stopped; objects are PUT through gateway G1,
which has a replica that took each write keep a hint for C (HINT_ADD);
G1 is killed with SIGKILL right after the last PUT. C comes back and a new
gateway G2 starts: with no state from G1 it finds the hints on A and B
(HINT_TAKE) and copies every object to C, read straight from C over the
node protocol, without cairn-admin repair and without a read through a
gateway. The hints are gone afterwards.

Then the bound: with handoff.max_hints = 5 on every node, the first hints
fill A and B (5 each; a full node answers BUSY and the gateway tries the
other replica), the rest are refused and counted (the nodes'
hints_refused, G1's cairn_gateway_node_hints_dropped_total); the hints kept
are the oldest (a prefix of the writes, read back with HINT_TAKE), and
after the replay C holds exactly those objects and not the later ones
(those wait for cairn-admin repair).

Last, two gateways run while C comes back (G1 and a second one, both
polling A and B): C catches up, and each hint is dropped exactly once,
whichever gateway replays it (which one, or both for some hints, depends
on timing; a second replay of a hint copies the same newest version and
finds the hint gone: tests/unit/test_sn_hint.c covers the drop rules)."""
import os
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_util import cluster, storage_key  # noqa: E402
from s3util import check  # noqa: E402
from snclient import free_port  # noqa: E402

BUCKET = "handoff"


def node_stats(n):
    c = n.client(timeout_ms=5000)
    try:
        return c.stats()
    finally:
        c.close()


def head(n, skey):
    c = n.client(timeout_ms=5000)
    try:
        r = c.head(skey)
        return (r["ts"], r["ver"]) if r.st == 0 else None
    finally:
        c.close()


def hints_held(nodes):
    return sum(node_stats(n)["hints"] for n in nodes)


def kill_gateway(cl):
    cl.proc.kill()
    cl.proc.wait()
    cl.proc = None


def metric(cl, name, label):
    """A gateway metric's value (metrics.port must be set)."""
    url = "http://127.0.0.1:%d/metrics" % cl.settings["metrics.port"]
    text = urllib.request.urlopen(url, timeout=5).read().decode()
    total = 0
    for line in text.splitlines():
        if line.startswith(name + "{") and label in line:
            total += float(line.rsplit(" ", 1)[1])
    return total


def put_with_c_down(cl, keys):
    """Creates the bucket, waits until no node holds a hint (a node the
    fresh gateway could not reach yet gets hints too), stops C and PUTs keys
    through the gateway; returns {skey: (ts, ver) on A}."""
    a, b, c = cl.nodes
    cl.boto().create_bucket(Bucket=BUCKET)
    wait_for("no hints before the test", lambda: hints_held(cl.nodes) == 0)
    c.stop()
    s3 = cl.boto()
    for k in keys:
        s3.put_object(Bucket=BUCKET, Key=k, Body=("body of %s" % k).encode() * 50)
    want = {}
    for k in keys:
        skey = storage_key(BUCKET, k)
        va, vb = head(a, skey), head(b, skey)
        check(va is not None and va == vb, "%s not on A and B alike: %r %r" % (k, va, vb))
        want[skey] = va
    return want


def restart_c_and_new_gateway(cl):
    """Starts C again, then a new gateway (G2) with the same settings."""
    cl.nodes[2].start()
    cl.settings["metrics.port"] = free_port()
    cl.start()


def wait_for(what, fn, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for %s" % what)
        time.sleep(0.1)


def test_survives_gateway_kill():
    keys = ["obj%03d" % i for i in range(40)]
    with cluster(settings={"metrics.port": free_port()}) as cl:
        a, b, c = cl.nodes
        t0 = time.monotonic()
        want = put_with_c_down(cl, keys)
        kill_gateway(cl)   # at once: the hints must already be on A or B
        held = hints_held([a, b])
        check(held >= len(keys), "A and B hold %d hints for %d writes" % (held, len(keys)))
        restart_c_and_new_gateway(cl)
        missing = lambda: [s for s, v in want.items() if head(c, s) != v]  # noqa: E731
        wait_for("C to hold every object", lambda: not missing(), timeout=60)
        took = time.monotonic() - t0
        wait_for("the hints to be dropped", lambda: hints_held([a, b]) == 0)
        removed = sum(node_stats(n)["hints_removed"] for n in (a, b))
        check(removed >= len(keys), "only %d hints dropped after replay" % removed)
        cid = "tcp://127.0.0.1:%d" % c.port
        replayed = metric(cl, "cairn_gateway_node_hints_replayed_total", cid)
        check(replayed >= len(keys), "G2 counts %r hints replayed" % replayed)
        print("ok   %d objects PUT with C down, G1 killed: C caught up through G2 "
              "(%d hints on A+B, %.1fs from the first PUT)" % (len(keys), held, took))


def hinted_keys(nodes, target):
    """The keys the nodes hold hints of for target (HINT_TAKE listings)."""
    out = set()
    for n in nodes:
        c = n.client(timeout_ms=5000)
        try:
            r = c.hint_take(target, limit=1000)
            check(r.st == 0 and not r["more"], "HINT_TAKE failed: %r" % r)
            out |= {e["key"] for e in r["ents"]}
        finally:
            c.close()
    return out


def test_hint_store_full():
    keys = ["full%03d" % i for i in range(14)]
    with cluster(settings={"metrics.port": free_port()},
                 node_settings={"handoff.max_hints": 5}) as cl:
        a, b, c = cl.nodes
        want = put_with_c_down(cl, keys)
        order = [storage_key(BUCKET, k) for k in keys]
        sa, sb = node_stats(a), node_stats(b)
        check(sa["hints"] == 5 and sb["hints"] == 5,
              "A and B should be full: %d, %d" % (sa["hints"], sb["hints"]))
        cid = "tcp://127.0.0.1:%d" % c.port
        hinted = hinted_keys([a, b], cid)
        # the hints kept are the oldest: a prefix of the writes (10 keys, or
        # 9 when a HINT_ADD that timed out on a busy machine was kept twice)
        check(len(hinted) >= 9 and hinted == set(order[:len(hinted)]),
              "hints kept are not the oldest writes: %r" % sorted(hinted))
        refused = sa["hints_refused"] + sb["hints_refused"]
        dropped = metric(cl, "cairn_gateway_node_hints_dropped_total", cid)
        check(dropped == len(keys) - len(hinted),
              "G1 dropped %r hints, want %d" % (dropped, len(keys) - len(hinted)))
        # each dropped hint was refused by both replicas that took the write
        # (and a few kept ones by the first replica asked, once it was full)
        check(2 * dropped <= refused <= 2 * dropped + 5,
              "nodes refused %d, G1 dropped %r" % (refused, dropped))
        kill_gateway(cl)
        restart_c_and_new_gateway(cl)
        wait_for("the hints to be replayed", lambda: hints_held([a, b]) == 0)
        on_c = {s for s in want if head(c, s) == want[s]}
        check(on_c == hinted, "C holds %r, want exactly the hinted %r"
              % (sorted(on_c), sorted(hinted)))
        print("ok   hint store full: %d hints kept (5 per node, the oldest), %d refused on "
              "the nodes, %d dropped by the gateway; C got exactly those %d objects"
              % (len(hinted), refused, dropped, len(hinted)))


class SecondGateway:
    """Another cairn-gateway process over cl's nodes (same settings, its own
    ports), to have two gateways replay at once."""

    def __init__(self, cl):
        import subprocess
        settings = dict(cl.settings, **{"http.port": free_port(), "metrics.port": free_port()})
        self.settings = settings
        cfg = os.path.join(cl.tmp, "gateway2.conf")
        with open(cfg, "w") as f:
            for k, v in settings.items():
                f.write("%s = %s\n" % (k, v))
        self.log = open(os.path.join(cl.tmp, "gateway2.log"), "ab")
        self.proc = subprocess.Popen([cl.bin, "--config", cfg], stdout=self.log,
                                     stderr=self.log)
        url = "http://127.0.0.1:%d/_cairn/health" % settings["http.port"]

        def up():
            try:
                return urllib.request.urlopen(url, timeout=1).status == 200
            except OSError:
                check(self.proc.poll() is None, "second gateway exited")
                return False
        wait_for("the second gateway", up)

    def close(self):
        self.proc.terminate()
        rc = self.proc.wait(30)
        self.log.close()
        return rc


def test_two_gateways_replay():
    keys = ["two%03d" % i for i in range(150)]   # several batches: both drain
    with cluster(settings={"metrics.port": free_port()}) as cl:
        a, b, c = cl.nodes
        want = put_with_c_down(cl, keys)
        g2 = SecondGateway(cl)
        try:
            c.start()   # both gateways poll A and B and replay what they find
            missing = lambda: [s for s, v in want.items() if head(c, s) != v]  # noqa: E731
            wait_for("C to hold every object", lambda: not missing(), timeout=60)
            wait_for("the hints to be dropped", lambda: hints_held([a, b]) == 0)
            cid = "tcp://127.0.0.1:%d" % c.port
            r1 = metric(cl, "cairn_gateway_node_hints_replayed_total", cid)
            r2 = metric(g2, "cairn_gateway_node_hints_replayed_total", cid)
            check(r1 + r2 >= len(keys), "replayed %r + %r of %d" % (r1, r2, len(keys)))
            added = sum(node_stats(n)["hints_added"] for n in (a, b))
            removed = sum(node_stats(n)["hints_removed"] for n in (a, b))
            check(added >= len(keys) and removed == added,
                  "nodes kept %d hints for %d writes, dropped %d" % (added, len(keys), removed))
        finally:
            rc = g2.close()
        check(rc == 0, "second gateway exited %r" % rc)
        print("ok   two gateways running: C caught up, each hint dropped once "
              "(replayed by G1 %d, by G2 %d)" % (r1, r2))


def main():
    t0 = time.monotonic()
    test_survives_gateway_kill()
    test_hint_store_full()
    test_two_gateways_replay()
    print("all passed (%.1fs)" % (time.monotonic() - t0))


if __name__ == "__main__":
    main()
