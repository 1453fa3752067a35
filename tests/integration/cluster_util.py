"""Helpers for the replication tests: a gateway over storage nodes that can be
killed (SIGKILL), frozen (SIGSTOP) and restarted on the same port with the same
data, and direct protocol access to each node to compare replicas."""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3util  # noqa: E402
import snclient  # noqa: E402
from snclient import FLAG_TOMBSTONE, StorageNode  # noqa: E402


class RestartableNode(StorageNode):
    """A storage node that comes back on its old port (the gateway's cluster
    names it by address) with its data directory."""

    def start(self):
        fixed = getattr(self, "port", None)
        if fixed is None:
            return super().start()
        orig = snclient.free_port
        snclient.free_port = lambda: fixed
        try:
            return super().start()
        finally:
            snclient.free_port = orig

    def freeze(self):
        self.proc.send_signal(signal.SIGSTOP)

    def thaw(self):
        self.proc.send_signal(signal.SIGCONT)

    def running(self):
        return self.proc is not None


def cluster(nodes=3, settings=None, node_settings=None):
    """An s3util.Cluster whose nodes are RestartableNodes; short timeouts so
    failures are detected in a second."""
    base = {"storage.request_timeout": "1s", "storage.probe_interval": "200ms",
            "handoff.replay_interval": "100ms"}
    base.update(settings or {})
    s3util.StorageNode = RestartableNode
    try:
        return s3util.Cluster(nodes=nodes, settings=base, node_settings=node_settings)
    finally:
        s3util.StorageNode = StorageNode


M64 = (1 << 64) - 1


def ring_hash(data):
    """cn_ring_hash: FNV-1a 64, then a splitmix64 finaliser."""
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & M64
    h ^= h >> 30
    h = (h * 0xbf58476d1ce4e5b9) & M64
    h ^= h >> 27
    h = (h * 0x94d049bb133111eb) & M64
    return h ^ (h >> 31)


def ring_replicas(names, key, n, vnodes=168):
    """The replica order cn_ring_lookup gives key (indexes into names)."""
    import bisect
    pts = sorted((ring_hash(("%s#%d" % (nm, v)).encode()), i)
                 for i, nm in enumerate(names) for v in range(vnodes))
    i = bisect.bisect_left(pts, (ring_hash(key), -1)) % len(pts)
    out = []
    for step in range(len(pts)):
        node = pts[(i + step) % len(pts)][1]
        if node not in out:
            out.append(node)
            if len(out) == n:
                break
    return out


def storage_key(bucket, key):
    return ("o/%s/%s" % (bucket, key)).encode()


def versions(cl, skey, nodes=None):
    """[(state, ts, ver)] of skey on each running node (state: live,
    tomb, absent); None for a stopped node."""
    out = []
    for n in (nodes or cl.nodes):
        if not n.running():
            out.append(None)
            continue
        c = n.client(timeout_ms=5000)
        try:
            r = c.head(skey)
        finally:
            c.close()
        if r.st == 0:
            out.append(("live", r["ts"], r["ver"]))
        elif r.st == 1 and (r.get("flags", 0) & FLAG_TOMBSTONE):
            out.append(("tomb", r["ts"], r["ver"]))
        else:
            out.append(("absent", 0, 0))
    return out


def converged(cl, skeys):
    """The keys whose replicas differ (every node holds every key: N = nodes)."""
    return [k for k in skeys if len(set(versions(cl, k))) != 1]


def wait_converged(cl, skeys, timeout=30):
    """Waits until every replica of every key agrees; returns the seconds it
    took, or raises with the keys that still differ."""
    t0 = time.monotonic()
    while True:
        diff = converged(cl, skeys)
        if not diff:
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            raise AssertionError("%d keys still differ after %ds, e.g. %r: %r" % (
                len(diff), timeout, diff[0], versions(cl, diff[0])))
        time.sleep(0.1)


def wait_log(cl, text, timeout=15, start=0):
    """Waits until the gateway log (from byte offset start) contains text."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in cl.log_text()[start:]:
            return True
        time.sleep(0.05)
    raise AssertionError("gateway log never said %r:\n%s" % (text, cl.log_text()[-3000:]))
