"""A corrupt replica is rewritten from a good one (docs/cluster.md,
"Repair of corruption"). Three nodes, N = 3; one byte of one replica's data
is flipped in its container file.

- found by a read: the replica the gateway reads the data from is damaged;
  the GET through the gateway still returns the right bytes, the node marks
  the record, the gateway's read repair copies the good version over it, and
  afterwards a GET straight from that node (snclient) returns the right bytes;
- found by a scrub: a replica the gateway only asks for its version is
  damaged; SCRUB on that node marks it, a GET through the gateway (whose HEAD
  of that node now answers CORRUPT) returns the right bytes and repairs it;
  the node then reads right and a second SCRUB finds nothing live corrupt;
- a marked record is repaired by the same version only: a stale write (an
  older version) sent to the node is still refused;
- found by a scrub on the replica no read asks (the third): `cairn-admin
  repair` sees the mark in the node's LIST (flags bit 1), copies the good
  version from another node, and the replica reads right."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_util import cluster, ring_replicas, storage_key  # noqa: E402
from snclient import admin_env  # noqa: E402

BUCKET = "heal"


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def flip(node, marker):
    """Flips one byte inside marker in the node's container files."""
    for path in node.container_files():
        with open(path, "r+b") as f:
            blob = f.read()
            at = blob.find(marker)
            if at < 0:
                continue
            f.seek(at + 7)
            f.write(bytes([blob[at + 7] ^ 0x20]))
            return
    raise AssertionError("marker not on the node")


def direct_get(node, skey):
    c = node.client(timeout_ms=10000)
    try:
        return c.get(skey)
    finally:
        c.close()


def wait_healed(node, skey, data, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        r = direct_get(node, skey)
        if r.st == 0 and r.payload == data:
            return r
        check(time.monotonic() < deadline, "replica not rewritten: %r" % r)
        time.sleep(0.1)


def case_read(cl, s3):
    key = "by-read"
    data = os.urandom(300000)
    s3.put_object(Bucket=BUCKET, Key=key, Body=data)
    skey = storage_key(BUCKET, key)
    first = cl.nodes[ring_replicas([n.endpoint for n in cl.nodes], skey, 3)[0]]
    before = direct_get(first, skey)
    check(before.st == 0 and before.payload == data, "clean before")
    flip(first, data[200000:200016])
    r = direct_get(first, skey)
    check(r.status == "CORRUPT", "the damage shows on the node: %r" % r)
    got = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    check(got == data, "GET through the gateway returns the right bytes")
    r = wait_healed(first, skey, data)
    check(r["ts"] == before["ts"] and r["ver"] == before["ver"], "same version rewritten")
    st = first.client().stats()
    check(st["corrupt_marked"] >= 1 and st["corrupt_repaired"] >= 1, "counted %r" % st)


def case_scrub(cl, s3):
    key = "by-scrub"
    data = os.urandom(200000)
    s3.put_object(Bucket=BUCKET, Key=key, Body=data)
    skey = storage_key(BUCKET, key)
    last = cl.nodes[ring_replicas([n.endpoint for n in cl.nodes], skey, 3)[1]]
    flip(last, data[150000:150016])
    c = last.client(timeout_ms=60000)
    r = c.call("SCRUB")
    check(r.st == 0 and [e["key"] for e in r["ents"]] == [skey], "scrub finds it %r" % r)
    r = c.head(skey)
    check(r.status == "CORRUPT", "marked: HEAD says so %r" % r)
    # a stale write does not pass for a repair
    check(not c.put(skey, b"old", ver=1, ts=1)["applied"], "older version refused")
    got = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    check(got == data, "GET through the gateway returns the right bytes")
    wait_healed(last, skey, data)
    r = c.head(skey)
    check(r.st == 0, "HEAD after the repair %r" % r)
    r = c.call("SCRUB")
    check(r.st == 0 and r["ents"] == [] and r["stats"]["corrupt"] == 0, "clean %r" % r)
    c.close()


def case_admin(cl, s3):
    key = "by-admin"
    data = os.urandom(100000)
    s3.put_object(Bucket=BUCKET, Key=key, Body=data)
    skey = storage_key(BUCKET, key)
    third = cl.nodes[ring_replicas([n.endpoint for n in cl.nodes], skey, 3)[2]]
    flip(third, data[70000:70016])
    c = third.client(timeout_ms=60000)
    check(c.call("SCRUB").st == 0, "scrub")
    ents = c.list(prefix=skey).get("ents") or []
    c.close()
    check(len(ents) == 1 and ents[0]["flags"] & 2, "LIST shows the mark: %r" % ents)
    cf = os.path.join(cl.tmp, "cluster.conf")
    with open(cf, "w") as f:
        for i, n in enumerate(cl.nodes):
            f.write("node sn%d %s\n" % (i, n.endpoint))
    admin = os.path.join(os.environ.get("CAIRN_BIN", "build/bin"), "cairn-admin")
    p = subprocess.run([admin, "--cluster", cf, "repair", "--replicas", "3", "-v"],
                       capture_output=True, timeout=300, env=admin_env())
    out = p.stdout.decode() + p.stderr.decode()
    check(p.returncode == 0 and "corrupt" in out, "cairn-admin repair: %s" % out)
    wait_healed(third, skey, data, timeout=5)


def main():
    with cluster(nodes=3, settings={"consistency.num_of_replicas": 3}) as cl:
        s3 = cl.boto()
        s3.create_bucket(Bucket=BUCKET)
        case_read(cl, s3)
        case_scrub(cl, s3)
        case_admin(cl, s3)
    print("test_cluster_corrupt_repair: ok")


if __name__ == "__main__":
    main()
