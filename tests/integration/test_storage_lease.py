"""cairn-storage's conditional-write leases (protocol v2 LOCK / UNLOCK and
PUT with `tok`, proto/PROTOCOL.md): the node compares the key's live record
with the writer's expectation and grants one token at a time, so two
conditional writers racing on one node cannot both pass; a PUT under a token
that does not hold the lease stores nothing; version-1 messages still work
and a v1 reply stays v1."""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snclient import StorageNode, OPS  # noqa: E402

import msgpack  # noqa: E402


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def now_us():
    return int(time.time() * 1e6)


def test_lock_absent(c):
    # no record: a LOCK without ifver is granted, a second token is LOCKED
    check(c.lock(b"k1", tok=101).status == "OK", "lock of an absent key")
    check(c.lock(b"k1", tok=101).status == "OK", "the same token again is granted again")
    check(c.lock(b"k1", tok=202).status == "LOCKED", "another token while the lease is held")
    # a PUT under a token that does not hold the lease stores nothing
    r = c.put(b"k1", b"other", ver=202, tok=202)
    check(r.status == "LOCKED", "PUT with a foreign token: %r" % r)
    check(c.head(b"k1").status == "NOT_FOUND", "nothing was stored by the refused PUT")
    # the holder writes; the lease is released with the write
    r = c.put(b"k1", b"winner", ver=101, tok=101)
    check(r.status == "OK" and r["applied"], "PUT under the lease: %r" % r)
    check(c.get(b"k1").payload == b"winner", "the leased write is stored")
    # the key now exists: an If-None-Match-style LOCK fails on the record
    r = c.lock(b"k1", tok=303)
    check(r.status == "PRECONDITION" and r["ver"] == 101, "LOCK of an existing key: %r" % r)
    # a replayed PUT of the holder after the release is refused too
    check(c.put(b"k1", b"again", ver=102, tok=101).status == "LOCKED", "lease gone after write")


def test_lock_ifver(c):
    check(c.put(b"k2", b"v1", ver=7, ts=now_us()).status == "OK", "plain put")
    r = c.lock(b"k2", tok=8, ifver=6)
    check(r.status == "PRECONDITION" and r["ver"] == 7, "ifver mismatch: %r" % r)
    check(c.lock(b"k2", tok=8, ifver=7).status == "OK", "ifver match")
    c.unlock(b"k2", tok=8)
    check(c.lock(b"k2", tok=9, ifver=7).status == "OK", "UNLOCK released the lease")
    c.unlock(b"k2", tok=9)
    # a tombstone counts as absent
    check(c.delete(b"k2", ver=10, ts=now_us()).status == "OK", "delete")
    check(c.lock(b"k2", tok=11, ifver=7).status == "PRECONDITION", "ifver of a deleted key")
    check(c.lock(b"k2", tok=11).status == "OK", "no-record LOCK of a tombstoned key")
    c.unlock(b"k2", tok=11)


def test_race(node):
    # many writers, each with its own connection, race LOCK+PUT of one absent
    # key: exactly one gets its write in, every other is refused
    n = 24
    results = [None] * n
    start = threading.Event()

    def writer(i):
        c = node.client(timeout_ms=20000)
        start.wait()
        tok = 1000 + i
        r = c.lock(b"race", tok=tok)
        if r.status == "OK":
            w = c.put(b"race", b"w%d" % i, ver=tok, tok=tok)
            results[i] = "won" if w.status == "OK" else "put-" + w.status
        else:
            results[i] = r.status
        c.close()

    ts = [threading.Thread(target=writer, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    start.set()
    for t in ts:
        t.join()
    check(results.count("won") == 1, "exactly one winner: %r" % results)
    check(set(results) <= {"won", "LOCKED", "PRECONDITION"}, "refusals: %r" % results)
    c = node.client()
    winner = results.index("won")
    check(c.get(b"race").payload == b"w%d" % winner, "the winner's bytes are stored")
    c.close()


def test_versions(c):
    # a version-1 request is answered as version 1; version 4 is refused
    c.send_raw([msgpack.packb({"v": 1, "id": 77, "op": OPS["PING"]}, use_bin_type=True)])
    r = c.recv()
    check(r["v"] == 1 and r.status == "OK", "v1 PING answered as v1: %r" % r)
    c.send_raw([msgpack.packb({"v": 4, "id": 78, "op": OPS["PING"]}, use_bin_type=True)])
    check(c.recv().status == "BAD_VERSION", "v4 refused")
    r = c.lock(b"v", tok=5)
    check(r["v"] == 2, "a LOCK reply is v2: %r" % r)
    c.unlock(b"v", tok=5)
    check(c.stats()["ops_lock"] >= 1, "LOCKs counted")


def main():
    with StorageNode({"io_threads": 4}) as node:
        c = node.client(timeout_ms=20000)
        test_lock_absent(c)
        test_lock_ifver(c)
        test_versions(c)
        c.close()
        test_race(node)
    print("test_storage_lease: ok")


if __name__ == "__main__":
    main()
