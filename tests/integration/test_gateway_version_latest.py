"""Which version is current after a half-written versioned PUT
(docs/gateway.md, "Versioning", "Which version is current"): the state a
gateway killed between a version's "v/" record and its "o/" record leaves
is made directly, by writing a version record through the node protocol
(snclient.py) without touching "o/". ListObjectVersions must then mark as
IsLatest the version GET returns (the "o/" one), list the never-promoted
one as noncurrent, on every page size; over a delete marker the marker
stays the latest; a key whose only version was never promoted has no
latest and GET says NoSuchKey; an "o/" record whose version record was
never written (the reverse order) makes no listed version the latest. NoncurrentVersionExpiration then removes the
never-promoted versions (and the one below the reverse order's "o/") (their records leave the nodes) and keeps the
current ones and the current delete marker."""
import hashlib
import os
import sys
import time

import msgpack

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import check, error_code, run_tests  # noqa: E402
import test_gateway_lifecycle as lct  # noqa: E402  (its helpers and settings)

B = "vlatest"


def vkey(key, vid):
    return b"v/" + B.encode() + b"/" + key.encode() + b"\x00" + vid.encode()


def forge_version(c, key, template, body):
    """Writes, on every node, a version record of key newer than every
    version written so far, as a gateway does before it writes "o/", and
    stops there (its fields but the body from the version record template,
    (key, version id)). Returns its version id."""
    for n in c.nodes:
        cl = n.client()
        t = cl.get(vkey(*template))
        cl.close()
        if t.st == 0:
            break
    check(t.st == 0, "the template version record: %r" % t)
    time.sleep(0.05)
    ts = int(time.time() * 1e6)
    check(ts > t["ts"], "a newer version time")
    vid = "%016x" % (~ts & 0xFFFFFFFFFFFFFFFF) + os.urandom(8).hex()
    meta = msgpack.unpackb(t["meta"], raw=False)
    meta["h"] = [[n, vid if n == ":vid" else v] for n, v in meta["h"]]
    etag = hashlib.md5(body).hexdigest().encode()
    for n in c.nodes:
        cl = n.client()
        r = cl.put(vkey(key, vid), body, ver=t["ver"], ts=ts, etag=etag,
                   meta=msgpack.packb(meta, use_bin_type=True))
        cl.close()
        check(r.st == 0, "the forged version record written: %r" % r)
    return vid


def forge_latest(c, key, body):
    """Writes, on every node, a newer "o/" record of key (a new version id,
    its fields but the body from the current "o/" record) and no version
    record: what a conditional write (its "o/" first) stopped in between
    leaves. Returns its version id."""
    okey = b"o/" + B.encode() + b"/" + key.encode()
    for n in c.nodes:
        cl = n.client()
        t = cl.get(okey)
        cl.close()
        if t.st == 0:
            break
    check(t.st == 0, "the template latest record: %r" % t)
    time.sleep(0.05)
    ts = int(time.time() * 1e6)
    vid = "%016x" % (~ts & 0xFFFFFFFFFFFFFFFF) + os.urandom(8).hex()
    meta = msgpack.unpackb(t["meta"], raw=False)
    meta["h"] = [[n, vid if n == ":vid" else v] for n, v in meta["h"]]
    for n in c.nodes:
        cl = n.client()
        r = cl.put(okey, body, ver=t["ver"], ts=ts, etag=hashlib.md5(body).hexdigest().encode(),
                   meta=msgpack.packb(meta, use_bin_type=True))
        cl.close()
        check(r.st == 0, "the forged latest record written: %r" % r)
    return vid


def listing(s3, key, max_keys=1000):
    """[(version id, is latest, is delete marker)] of key, newest first, read
    in pages of max_keys."""
    out, kw = [], {}
    while True:
        r = s3.list_object_versions(Bucket=B, Prefix=key, MaxKeys=max_keys, **kw)
        page = [(v["VersionId"], v["IsLatest"], False, v["LastModified"])
                for v in r.get("Versions", [])]
        page += [(d["VersionId"], d["IsLatest"], True, d["LastModified"])
                 for d in r.get("DeleteMarkers", [])]
        out += [p[:3] for p in sorted(page, key=lambda p: p[3], reverse=True)]
        if not r.get("IsTruncated"):
            return out
        kw = {"KeyMarker": r["NextKeyMarker"], "VersionIdMarker": r["NextVersionIdMarker"]}


def test_half_written(c):
    s3 = c.boto(signature_version="s3v4")
    s3.create_bucket(Bucket=B)
    s3.put_bucket_versioning(Bucket=B, VersioningConfiguration={"Status": "Enabled"})
    a = s3.put_object(Bucket=B, Key="k", Body=b"body A")["VersionId"]
    b = s3.put_object(Bucket=B, Key="k", Body=b"body B")["VersionId"]
    u = forge_version(c, "k", ("k", b), b"body U, never acknowledged")
    for mk in (1, 2, 3, 1000):   # the latest found on any page
        got = listing(s3, "k", mk)
        check(got == [(u, False, False), (b, True, False), (a, False, False)],
              "k, pages of %d: B is the latest, U noncurrent: %r" % (mk, got))
    r = s3.get_object(Bucket=B, Key="k")
    check(r["VersionId"] == b and r["Body"].read() == b"body B", "GET returns B")
    check(s3.head_object(Bucket=B, Key="k")["VersionId"] == b, "HEAD says B")
    check(s3.get_object(Bucket=B, Key="k", VersionId=u)["Body"].read() ==
          b"body U, never acknowledged", "U reads back by its id")

    # over a delete marker: the marker stays the latest
    s3.put_object(Bucket=B, Key="m", Body=b"body MA")
    ma = s3.list_object_versions(Bucket=B, Prefix="m")["Versions"][0]["VersionId"]
    dm = s3.delete_object(Bucket=B, Key="m")["VersionId"]
    mu = forge_version(c, "m", ("m", ma), b"body MU")
    got = listing(s3, "m")
    check(got == [(mu, False, False), (dm, True, True), (ma, False, False)],
          "m: the delete marker is the latest: %r" % got)
    check(error_code(s3.get_object, Bucket=B, Key="m") == ("NoSuchKey", 404), "m: GET 404")

    # a key's first write, interrupted: no latest, GET 404
    fu = forge_version(c, "f", ("k", a), b"body FU")
    got = listing(s3, "f")
    check(got == [(fu, False, False)], "f: no latest: %r" % got)
    check(error_code(s3.get_object, Bucket=B, Key="f") == ("NoSuchKey", 404), "f: GET 404")

    # the reverse order: "o/" holds a version that has no record
    ra = s3.put_object(Bucket=B, Key="r", Body=b"body RA")["VersionId"]
    rx = forge_latest(c, "r", b"body RX")
    got = listing(s3, "r")
    check(got == [(ra, False, False)], "r: RA is not the latest: %r" % got)
    r = s3.get_object(Bucket=B, Key="r")
    check(r["VersionId"] == rx and r["Body"].read() == b"body RX", "r: GET returns RX")

    # all keys in one listing: one latest per key that has one
    got = listing(s3, "", 2)
    check(sum(1 for g in got if g[1]) == 2, "two latest in the bucket: %r" % got)

    # lifecycle: the never-promoted versions are noncurrent and expire
    s3.put_bucket_lifecycle_configuration(Bucket=B, LifecycleConfiguration={"Rules": [
        lct.rule("nc", {"Prefix": ""}, days=None,
                 NoncurrentVersionExpiration={"NoncurrentDays": 1})]})
    # r: RA goes; "o/" alone is then listed as an object from before
    # versioning is (docs/gateway.md: not done yet)
    want = {"k": [(b, True, False)], "m": [(dm, True, True)], "f": [],
            "r": [("null", True, False)]}
    try:
        lct.wait_for("the noncurrent versions to expire",
                     lambda: all(listing(s3, k) == w for k, w in want.items()), 40)
    except AssertionError:
        print("want %r\ngot %r" % (want, {k: listing(s3, k) for k in want}))
        raise
    for key, vid in (("k", u), ("m", mu), ("f", fu), ("r", ra)):
        lct.wait_for("%s's never promoted version to leave the nodes" % key,
                     lambda: not lct.live_keys(c, vkey(key, vid)), 10)
    time.sleep(3)   # more days and scans: the current ones stay
    check(all(listing(s3, k) == w for k, w in want.items()), "the current versions stay")
    r = s3.get_object(Bucket=B, Key="k")
    check(r["VersionId"] == b and r["Body"].read() == b"body B", "k: B reads back")
    check(s3.get_object(Bucket=B, Key="r")["Body"].read() == b"body RX", "r: RX stays")


if __name__ == "__main__":
    run_tests([test_half_written],
              cluster_kw={"settings": lct.SETTINGS, "node_settings": lct.NODE_SETTINGS})
