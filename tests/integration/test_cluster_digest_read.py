"""Quorum reads (R = 2 of N = 3, the default) done as digest reads: the GET
goes to the first replica in ring order and a HEAD to the second, and their
two answers decide; the third is asked only when one of them fails or is
late (gateway/cluster/store.c, docs/cluster.md).

- A GET costs the nodes one GET and one HEAD (one round trip); a 4 MiB
  record's GET, slower than the small reads, is waited for, not read twice.
- A stale replica, wherever it sits in the ring order, never wins: the
  newest version (a newer body, or a tombstone) written to the other two
  replicas by the storage protocol is what GET and HEAD answer; a stale
  replica that was asked (the first two) is repaired.
- A hung replica (SIGSTOP, not yet marked down), first or second in ring
  order, does not stall GETs: each is answered from the other two well
  within the request timeout."""
import hashlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_util import (cluster, ring_replicas, storage_key, versions,  # noqa: E402
                          wait_converged, wait_log)
from s3util import check, error_code  # noqa: E402

BUCKET = "digest"
TIMEOUT_S = 3


def node_ops(cl):
    """{op name: count} summed over the nodes (STATS)."""
    out = {}
    for n in cl.nodes:
        c = n.client()
        try:
            st = c.stats()
        finally:
            c.close()
        for k, v in st.items():
            if k.startswith("ops_"):
                out[k] = out.get(k, 0) + v
    return out


def order_of(cl, key):
    """Indexes into cl.nodes of key's replicas, in ring order."""
    return ring_replicas([n.endpoint for n in cl.nodes], storage_key(BUCKET, key), 3)


def direct_put(cl, idx, key, body, newer_than):
    """Writes body as key's record on node idx with a version newer than
    newer_than (a HEAD reply), as a replica that got a later write would."""
    skey = storage_key(BUCKET, key)
    etag = hashlib.md5(body).hexdigest().encode()
    c = cl.nodes[idx].client()
    try:
        r = c.put(skey, body, ver=newer_than["ver"] + 1, ts=newer_than["ts"] + 1, etag=etag,
                  meta=newer_than.get("meta"))
        check(r.st == 0, "direct put on node %d: %r" % (idx, r))
    finally:
        c.close()
    return etag.decode()


def direct_delete(cl, idx, key, newer_than):
    c = cl.nodes[idx].client()
    try:
        r = c.delete(storage_key(BUCKET, key), ver=newer_than["ver"] + 1,
                     ts=newer_than["ts"] + 1)
        check(r.st == 0, "direct delete on node %d: %r" % (idx, r))
    finally:
        c.close()


def head_of(cl, idx, key):
    c = cl.nodes[idx].client()
    try:
        h = c.head(storage_key(BUCKET, key))
        check(h.st == 0, "head on node %d: %r" % (idx, h))
        return h
    finally:
        c.close()


def test_one_round_trip(cl, s3):
    keys = ["rt%02d" % i for i in range(20)]
    for k in keys:
        s3.put_object(Bucket=BUCKET, Key=k, Body=k.encode() * 100)
    s3.get_object(Bucket=BUCKET, Key=keys[0])["Body"].read()  # bucket record cached
    before = node_ops(cl)
    for k in keys:
        check(s3.get_object(Bucket=BUCKET, Key=k)["Body"].read() == k.encode() * 100, "body")
    after = node_ops(cl)
    gets = after["ops_get"] - before["ops_get"]
    heads = after["ops_head"] - before["ops_head"]
    print("   20 GETs cost the nodes %d GETs and %d HEADs" % (gets, heads))
    # the quorum read before: 3 HEADs, then 1 GET per read; 2 HEADs with the
    # GET when every replica was asked at once. A read whose two answers are
    # late (2 ms at least) asks the third replica too: on a busy machine some
    # do, so this allows up to half of them.
    check(heads < 1.5 * len(keys), "more than 1 HEAD per GET: %d" % heads)
    check(gets <= len(keys) + 3, "GETs read again: %d GETs for %d reads" % (gets, len(keys)))


def test_large_record_read_once(cl, s3):
    """A 4 MiB object (one record, below the large-object threshold) takes
    longer to come than the small reads the wait is tuned on: its GET is
    waited for, not read a second time from another replica."""
    for k in ("small%02d" % i for i in range(20)):  # the usual read time: small
        s3.put_object(Bucket=BUCKET, Key=k, Body=b"x" * 100)
        s3.get_object(Bucket=BUCKET, Key=k)["Body"].read()
    body = os.urandom(4 << 20)
    s3.put_object(Bucket=BUCKET, Key="large", Body=body)
    # the wait adapts to this machine's recent reads, so a burst of load can
    # widen a round; a gateway that re-read large records would do it in
    # every round, so three rounds are allowed to find one clean
    for attempt in range(3):
        before = node_ops(cl)
        for _ in range(10):
            check(s3.get_object(Bucket=BUCKET, Key="large")["Body"].read() == body, "large body")
        after = node_ops(cl)
        gets = after["ops_get"] - before["ops_get"]
        print("   10 GETs of a 4 MiB record cost the nodes %d GETs and %d HEADs" % (
            gets, after["ops_head"] - before["ops_head"]))
        if gets <= 11:
            break
    check(gets <= 11, "a 4 MiB record was read again from another replica in 3 rounds: "
                      "%d GETs in the last" % gets)


def test_stale_replica(cl, s3):
    """The replica at each ring position in turn holds the old version."""
    for pos in range(3):
        key = "stale%d" % pos
        s3.put_object(Bucket=BUCKET, Key=key, Body=b"old body %d" % pos)
        wait_converged(cl, [storage_key(BUCKET, key)])  # answered at W = 2 of 3
        order = order_of(cl, key)
        h = head_of(cl, order[0], key)
        new = b"the newer body %d" % pos
        for i in range(3):
            if i != pos:
                etag = direct_put(cl, order[i], key, new, h)
        skey = storage_key(BUCKET, key)
        check(versions(cl, skey)[order[pos]][1] == h["ts"], "replica %d should be stale" % pos)
        got = s3.get_object(Bucket=BUCKET, Key=key)
        check(got["Body"].read() == new, "stale replica at position %d won a GET" % pos)
        check(got["ETag"].strip('"') == etag, "GET etag")
        hd = s3.head_object(Bucket=BUCKET, Key=key)
        check(hd["ETag"].strip('"') == etag and hd["ContentLength"] == len(new),
              "stale replica at position %d won a HEAD: %r" % (pos, hd["ETag"]))
        if pos == 2:  # not asked: hints and anti-entropy repair it, not reads
            print("   stale replica at ring position 2: newest served")
            continue
        wait_converged(cl, [skey], timeout=10)
        check(versions(cl, skey)[order[pos]][1] == h["ts"] + 1,
              "stale replica at position %d not repaired" % pos)
        print("   stale replica at ring position %d: newest served, repaired" % pos)


def test_stale_live_replica_after_delete(cl, s3):
    """Two replicas hold a tombstone, the first or the second one in ring
    order still the live record: what it answers must not be served."""
    for live in (0, 1):
        key = "deleted%d" % live
        s3.put_object(Bucket=BUCKET, Key=key, Body=b"deleted later")
        wait_converged(cl, [storage_key(BUCKET, key)])  # answered at W = 2 of 3
        order = order_of(cl, key)
        h = head_of(cl, order[live], key)
        for i in range(3):
            if i != live:
                direct_delete(cl, order[i], key, h)
        check(error_code(s3.get_object, Bucket=BUCKET, Key=key)[0] == "NoSuchKey",
              "a GET read the live record of the replica that missed the delete")
        check(error_code(s3.head_object, Bucket=BUCKET, Key=key)[0] in ("404", "NoSuchKey"),
              "a HEAD read the live record of the replica that missed the delete")


def test_hung_replica(cl, s3, pos):
    """SIGSTOP the replica at ring position pos (0: it gets the GET, 1: the
    HEAD) of some keys: GETs of those keys are answered from the other two,
    each far below the request timeout, before the gateway marks the node
    down (no request to it timed out yet)."""
    names = [n.endpoint for n in cl.nodes]
    bucket_first = ring_replicas(names, b"b/" + BUCKET.encode(), 3)[0]
    victim_idx = (bucket_first + 1) % 3
    keys = [k for k in ("hung%d_%03d" % (pos, i) for i in range(300))
            if order_of(cl, k)[pos] == victim_idx]
    keys = keys[:10]
    check(len(keys) == 10, "keys whose replica %d is the victim" % pos)
    for k in keys:
        s3.put_object(Bucket=BUCKET, Key=k, Body=k.encode() * 50)
    mark = len(cl.log_text())
    cl.nodes[victim_idx].freeze()
    try:
        t0 = time.monotonic()
        slowest = 0.0
        for k in keys:
            t1 = time.monotonic()
            got = s3.get_object(Bucket=BUCKET, Key=k)["Body"].read()
            slowest = max(slowest, time.monotonic() - t1)
            check(got == k.encode() * 50, "wrong body with a hung first replica")
        took = time.monotonic() - t0
        marked = "marked down" in cl.log_text()[mark:]
        print("   hung replica at ring position %d: 10 GETs in %.3fs, slowest %.3fs, node "
              "marked down meanwhile: %s" % (pos, took, slowest, marked))
        check(slowest < 1.0, "a GET waited for the hung replica: %.3fs (timeout %ds)" % (
            slowest, TIMEOUT_S))
        check(took < TIMEOUT_S, "the GETs took past the request timeout (%.3fs): the test "
              "did not run while the node was still held up" % took)
    finally:
        cl.nodes[victim_idx].thaw()
    time.sleep(0.2)
    if "marked down" in cl.log_text()[mark:]:
        wait_log(cl, "is up again", start=mark)


def test_hung_first_replica(cl, s3):
    test_hung_replica(cl, s3, 0)


def test_hung_second_replica(cl, s3):
    test_hung_replica(cl, s3, 1)


def main():
    # the background readers off (the map and key followers, the lease
    # workers): the tests count the nodes' GETs and HEADs, and a map round
    # alone reads s/cluster on every node (it tipped a slow ASan run)
    quiet = {"cluster.map_refresh": "0", "s3.keys_refresh": "1h", "lifecycle.enabled": "false",
             "rebalance.enabled": "false", "collector.interval": "0"}
    with cluster(settings=dict(quiet, **{"storage.request_timeout": "%ds" % TIMEOUT_S})) as cl:
        s3 = cl.boto()
        s3.create_bucket(Bucket=BUCKET)
        for t in (test_one_round_trip, test_large_record_read_once, test_stale_replica, test_stale_live_replica_after_delete,
                  test_hung_first_replica, test_hung_second_replica):
            t0 = time.monotonic()
            t(cl, s3)
            print("ok   %s (%.1fs)" % (t.__name__, time.monotonic() - t0), flush=True)
    print("all passed")


if __name__ == "__main__":
    main()
