"""cairn-storage against bad input and heavy pipelining: malformed frames get
an error reply and the node keeps serving; many requests in flight are all
answered, matched by id, out of order; past max_inflight the node answers
BUSY."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snclient import StorageNode, crc32c, OPS  # noqa: E402

import msgpack  # noqa: E402


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def pack(h):
    return msgpack.packb(h, use_bin_type=True)


def test_malformed(node):
    c = node.client(timeout_ms=20000)
    good_put = {"v": 1, "id": 9, "op": OPS["PUT"], "key": b"k", "crc": crc32c(b"ab"), "ver": 1, "ts": 1}
    cases = [
        ("not msgpack", [b"\xc1\xc1\xc1"], "BAD_REQUEST"),
        ("truncated msgpack", [pack({"v": 1, "id": 1, "op": 1})[:-1]], "BAD_REQUEST"),
        ("not a map", [pack([1, 2, 3])], "BAD_REQUEST"),
        ("trailing bytes", [pack({"v": 1, "id": 1, "op": 1}) + b"\x00"], "BAD_REQUEST"),
        ("key is an int", [pack({"v": 1, "id": 2, "op": OPS["GET"], "key": 5})], "BAD_REQUEST"),
        ("negative id", [pack({"v": 1, "id": -2, "op": 1})], "BAD_REQUEST"),
        ("float off", [pack({"v": 1, "id": 3, "op": OPS["GET"], "key": b"k", "off": 1.5})], "BAD_REQUEST"),
        ("unknown op", [pack({"v": 1, "id": 4, "op": 99})], "BAD_REQUEST"),
        ("op 0", [pack({"v": 1, "id": 4, "op": 0})], "BAD_REQUEST"),
        ("missing key", [pack({"v": 1, "id": 5, "op": OPS["GET"]})], "BAD_REQUEST"),
        ("missing id", [pack({"v": 1, "op": OPS["PING"]})], "BAD_REQUEST"),
        ("bad version", [pack({"v": 4, "id": 6, "op": OPS["PING"]})], "BAD_VERSION"),
        ("version 0", [pack({"v": 0, "id": 6, "op": OPS["PING"]})], "BAD_VERSION"),
        ("put without payload", [pack(good_put)], "BAD_REQUEST"),
        ("get with payload", [pack({"v": 1, "id": 7, "op": OPS["GET"], "key": b"k"}), b"xx"], "BAD_REQUEST"),
        ("bad crc", [pack(dict(good_put, crc=1)), b"ab"], "BAD_CHECKSUM"),
        ("oversized key", [pack({"v": 1, "id": 8, "op": OPS["GET"], "key": b"x" * 5000})], "TOO_LARGE"),
        ("oversized payload", [pack(dict(good_put, crc=crc32c(b"p" * (2 << 20)))), b"p" * (2 << 20)], "TOO_LARGE"),
        ("oversized meta", [pack(dict(good_put, meta=b"m" * 70000)), b"ab"], "TOO_LARGE"),
        ("huge str length", [b"\x81\xa3key\xdb\xff\xff\xff\xf0"], "BAD_REQUEST"),
        ("huge map", [b"\xdf\xff\xff\xff\xff"], "BAD_REQUEST"),
        ("deep nesting", [b"\x91" * 100000 + b"\x01"], "BAD_REQUEST"),
        ("too many frames", [pack({"v": 1, "id": 10, "op": 1}), b"a", b"b", b"c"], "BAD_REQUEST"),
        ("duplicate key", [b"\x84\xa1v\x01\xa2id\x0b\xa2op\x01\xa2op\x01"], "BAD_REQUEST"),
        ("empty header", [b""], "BAD_REQUEST"),
    ]
    for name, frames, want in cases:
        print("  case:", name, flush=True)
        c.send_raw(frames)
        r = c.recv()
        check(r.status == want, "%s: got %r" % (name, r))
        check(r.st == 0 or isinstance(r.get("err"), str) and r.get("err"), "%s: err text" % name)
        check(c.call("PING").st == 0, "still serving after %s" % name)
    st = c.stats()
    check(st["bad_requests"] >= len(cases) - 2, "bad_requests counted %r" % st["bad_requests"])
    c.close()


def test_inflight(node):
    c = node.client(timeout_ms=60000)
    blobs = {}
    for i in range(40):
        data = os.urandom(1000 * (i % 7) + (i * 37 % 900) + (300000 if i % 10 == 0 else 0))
        blobs[b"f/%d" % i] = data
        check(c.put(b"f/%d" % i, data).st == 0, "put")
    # a big record makes a slow request that small ones overtake
    big = os.urandom(48 << 20)
    r = c.put(b"big", big)
    check(r.st == 0, "put big %r" % r)
    # Overtaking depends on timing (a loaded machine can finish the big read
    # first), so it is tried a few times: a node that answered strictly in
    # order would never show it; every reply is checked every time.
    overtaken = False
    for attempt in range(5):
        ids = {}
        ids[c.send("GET", key=b"big")] = b"big"
        for rep in range(3):
            for k in blobs:
                ids[c.send("GET", key=k)] = k
                ids[c.send("GET", key=k, off=100, len=500)] = (k, 100, 500)
        order = []
        for _ in range(len(ids)):
            r = c.recv()
            order.append(r["id"])
            want = ids[r["id"]]
            check(r.st == 0, "reply %r" % r)
            if isinstance(want, tuple):
                k, off, ln = want
                check(r.payload == blobs[k][off:off + ln], "slice reply for %r" % (k,))
            else:
                check(r.payload == (big if want == b"big" else blobs[want]), "reply for %r" % want)
        check(sorted(order) == sorted(ids), "every request answered once")
        if order != sorted(order) and order.index(min(ids)) > 0:
            overtaken = True
            break
    check(overtaken, "the big GET was never overtaken by smaller ones in 5 tries "
                     "(replies in order)")
    c.close()


def put_osize(c, key, data, etag, osize, ts, ver=1):
    """A version-3 PUT with osize."""
    return c.call("PUT", payload=data, v=3, key=key, crc=crc32c(data), ver=ver, ts=ts,
                  etag=etag, osize=osize)


def digest_of(c, limit=None):
    f = {"fanout": 1}
    if limit is not None:
        f["limit"] = limit
    r = c.call("DIGEST", **f)
    check(r.status == "OK", "DIGEST %r" % r)
    return r


def test_osize(node):
    """Protocol version 3's osize (PROTOCOL.md, "Large objects"): stored and
    returned to version-3 requests as a field, to older ones folded into the
    etag; every reply says vmax 3; digests do not tell the forms apart."""
    c = node.client()
    big = 5 * (1 << 40) + 3
    r = put_osize(c, b"o/b/big", b"chunk map", b"0123abcd-2", big, ts=100)
    check(r.status == "OK" and r["v"] == 1 and r["vmax"] == 3, "PUT with osize: %r" % r)
    check(c.put(b"o/b/small", b"tiny", ts=100, etag=b"5ca1ab1e").st == 0, "plain PUT")
    for op in ("GET", "HEAD"):
        r = c.call(op, v=3, key=b"o/b/big")
        check(r.status == "OK" and r["v"] == 3 and r["osize"] == big and
              r["etag"] == b"0123abcd-2" and r["size"] == 9, "%s v3: osize as a field: %r" % (op, r))
        r = c.call(op, v=3, key=b"o/b/small")
        check(r.status == "OK" and "osize" not in r.h and r["etag"] == b"5ca1ab1e",
              "%s v3 of a plain record: no osize %r" % (op, r))
        for v in (1, 2):
            r = c.call(op, v=v, key=b"o/b/big")
            check(r.status == "OK" and r["v"] == 1 and "osize" not in r.h and
                  r["etag"] == b"0123abcd-2 %d" % big, "%s v%d: folded etag %r" % (op, v, r))
    r = c.call("GET", v=3, key=b"o/b/big")
    check(r.payload == b"chunk map", "the record's data is untouched")
    r = c.call("LIST", v=3, prefix=b"o/b/", limit=10)
    ents = {e["key"]: e for e in r["ents"]}
    check(r["v"] == 3 and ents[b"o/b/big"]["osize"] == big and
          ents[b"o/b/big"]["etag"] == b"0123abcd-2" and "osize" not in ents[b"o/b/small"],
          "LIST v3 entries: osize only where there is one: %r" % r)
    r = c.list(prefix=b"o/b/", limit=10)
    ents = {e["key"]: e for e in r["ents"]}
    check(r["v"] == 1 and "osize" not in ents[b"o/b/big"] and
          ents[b"o/b/big"]["etag"] == b"0123abcd-2 %d" % big, "LIST v1 entries folded: %r" % r)
    # DIGEST entries are always folded
    r = digest_of(c, limit=10)
    ents = {e["key"]: e for e in r["ents"]}
    check(ents[b"o/b/big"]["etag"] == b"0123abcd-2 %d" % big and
          "osize" not in ents[b"o/b/big"], "DIGEST entries folded: %r" % r)
    # the folded etag of a record with osize must fit the etag field
    r = put_osize(c, b"o/b/long", b"x", b"e" * 108, 5, ts=100)
    check(r.status == "BAD_REQUEST" and "107" in r["err"], "etag over 107 bytes: %r" % r)
    r = put_osize(c, b"o/b/long", b"x", b"e" * 107, UINT64_MAX, ts=100)
    check(r.status == "OK", "etag of 107 bytes and the largest osize: %r" % r)
    r = c.head(b"o/b/long")
    check(len(r["etag"]) == 128 and r["etag"].endswith(b" %d" % UINT64_MAX), "folds to 128: %r" % r)
    # a newer plain write replaces the record, osize and all
    check(c.put(b"o/b/big", b"now small", ts=200, etag=b"f00d").st == 0, "overwrite")
    r = c.call("HEAD", v=3, key=b"o/b/big")
    check("osize" not in r.h and r["etag"] == b"f00d", "overwritten: no osize %r" % r)
    # owner (version 3): kept where the etag was, returned as a field to
    # version-3 requests and as the etag to older ones
    r = c.call("PUT", payload=b"", v=3, key=b"b/bk", crc=crc32c(b""), ver=1, ts=100,
               owner=b"acct-7")
    check(r.status == "OK", "PUT with owner: %r" % r)
    r = c.call("HEAD", v=3, key=b"b/bk")
    check(r["owner"] == b"acct-7" and r["etag"] == b"", "HEAD v3: owner %r" % r)
    r = c.head(b"b/bk")
    check("owner" not in r.h and r["etag"] == b"acct-7", "HEAD v1: the owner as etag %r" % r)
    r = c.call("LIST", v=3, prefix=b"b/", limit=10)
    check(r["ents"][0]["owner"] == b"acct-7" and r["ents"][0]["etag"] == b"",
          "LIST v3: owner %r" % r)
    r = c.list(prefix=b"b/", limit=10)
    check("owner" not in r["ents"][0] and r["ents"][0]["etag"] == b"acct-7",
          "LIST v1: the owner as etag %r" % r)
    r = c.call("PUT", payload=b"", v=3, key=b"b/bk2", crc=crc32c(b""), ver=1, ts=100,
               owner=b"acct-7", etag=b"x")
    check(r.status == "BAD_REQUEST", "owner and an etag: %r" % r)
    # error replies carry vmax too
    r = c.get(b"o/b/none")
    check(r.status == "NOT_FOUND" and r["vmax"] == 3, "NOT_FOUND with vmax: %r" % r)
    c.close()
    # two nodes, one copy with osize and one folded (as a version-2 client or
    # a node of version 2 stores it): their digests are equal
    with StorageNode({"io_threads": 2}) as other:
        a, b = node.client(), other.client()
        check(put_osize(a, b"d/k", b"m", b"abc-3", 4242, ts=300).st == 0, "put with osize")
        check(b.put(b"d/k", b"m", ts=300, etag=b"abc-3 4242").st == 0, "put folded")
        ra = a.call("DIGEST", fanout=1, after=b"d/", upto=b"d/z")
        rb = b.call("DIGEST", fanout=1, after=b"d/", upto=b"d/z")
        check(ra.status == "OK" and ra["sums"] == rb["sums"] and ra["sums"][:8] == bytes(7) + b"\x01",
              "the two forms digest alike (one record each): %r %r" % (ra, rb))
        check(b.put(b"d/k", b"m", ts=301, etag=b"abc-3 4243").st == 0, "another size")
        rb = b.call("DIGEST", fanout=1, after=b"d/", upto=b"d/z")
        check(ra["sums"] != rb["sums"], "a different record digests differently")
        a.close()
        b.close()


UINT64_MAX = (1 << 64) - 1


def test_busy():
    with StorageNode({"max_inflight": 2, "io_threads": 1}) as node:
        c = node.client(timeout_ms=60000)
        data = os.urandom(8 << 20)
        check(c.put(b"b", data).st == 0, "put")
        n = 64
        for _ in range(n):
            c.send("GET", key=b"b")
        statuses = [c.recv().status for _ in range(n)]
        check(set(statuses) <= {"OK", "BUSY"}, "statuses %r" % set(statuses))
        check("BUSY" in statuses and "OK" in statuses, "BUSY past max_inflight: %r" % statuses)
        check(c.stats()["busy"] > 0, "busy counted")
        c.close()


def main():
    with StorageNode({"max_record_len": "1M", "io_threads": 4}) as node:
        test_malformed(node)
    with StorageNode({"io_threads": 2}) as node:
        test_osize(node)
    with StorageNode({"io_threads": 4}) as node:
        test_inflight(node)
    test_busy()
    print("test_storage_protocol: ok")


if __name__ == "__main__":
    main()
