"""S3 object versioning through cairn-gateway over 3 storage nodes, with
boto3 and the aws cli: Put/GetBucketVersioning, several versions of a key
read back by id, delete markers (404 with x-amz-delete-marker, 405 when
asked by id), removal of one version (the previous one becomes the latest),
Suspended buckets writing the null version, an object written before
versioning kept as the null version, ListObjectVersions paged with a small
max-keys, a chunked large object read back byte for byte per version after
an overwrite (its chunks are not reclaimed while the version exists), a
multipart upload completed in a versioned bucket, bad version ids, and a
second account refused."""
import hashlib
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import check, error_code, run_tests  # noqa: E402
from test_gateway_large import chunk_keys  # noqa: E402

K = 1024
SETTINGS = {
    "large_object.threshold_of_chunk_len": 256 * K,
    "large_object.chunked_obj_len": 128 * K,
    "large_object.reading_chunked_obj_len": 32 * K,
    "large_object.reclaim_delay": "1s",
    # lifecycle runs quickly, to show it writes delete markers in versioned buckets
    "lifecycle.day_length": "2s",
    "lifecycle.interval": "1s",
    "lifecycle.lease_time": "6s",
    "storage.request_timeout": "2s",
}
OTHER = ("AKIAOTHERUSER0000000", "other-secret-key-0000000000000000000000")


def enable(s3, bucket, status="Enabled"):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": status})


def body(s3, bucket, key, vid=None):
    kw = {"VersionId": vid} if vid else {}
    return s3.get_object(Bucket=bucket, Key=key, **kw)["Body"].read()


def test_config(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="vcfg")
    r = s3.get_bucket_versioning(Bucket="vcfg")
    check("Status" not in r, "never enabled: no Status %r" % r)
    enable(s3, "vcfg")
    check(s3.get_bucket_versioning(Bucket="vcfg")["Status"] == "Enabled", "enabled")
    c.aws("s3api", "put-bucket-versioning", "--bucket", "vcfg",
          "--versioning-configuration", "Status=Suspended")
    out = c.aws("s3api", "get-bucket-versioning", "--bucket", "vcfg").stdout.decode()
    check('"Suspended"' in out, "cli suspended: %s" % out)
    code = error_code(s3.put_bucket_versioning, Bucket="vcfg",
                      VersioningConfiguration={"Status": "Enabled", "MFADelete": "Enabled"},
                      MFA="123 456")
    check(code[0] == "NotImplemented", "MFA delete refused %r" % (code,))
    check(s3.get_bucket_versioning(Bucket="vcfg")["Status"] == "Suspended", "unchanged")


def test_versions_round_trip(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="vrt")
    s3.put_object(Bucket="vrt", Key="k", Body=b"before versioning")
    enable(s3, "vrt")
    ids = []
    for i in range(3):
        r = s3.put_object(Bucket="vrt", Key="k", Body=b"version %d" % i)
        ids.append(r["VersionId"])
    check(len(set(ids)) == 3 and all(len(v) == 32 for v in ids), "ids %r" % ids)
    check(body(s3, "vrt", "k") == b"version 2", "latest")
    h = s3.head_object(Bucket="vrt", Key="k")
    check(h["VersionId"] == ids[2], "latest's id on HEAD %r" % h.get("VersionId"))
    for i, v in enumerate(ids):
        check(body(s3, "vrt", "k", v) == b"version %d" % i, "version %d by id" % i)
    check(body(s3, "vrt", "k", "null") == b"before versioning", "the null version kept")
    # a delete marker hides the key
    d = s3.delete_object(Bucket="vrt", Key="k")
    check(d.get("DeleteMarker") is True and len(d["VersionId"]) == 32, "marker %r" % d)
    code = error_code(s3.get_object, Bucket="vrt", Key="k")
    check(code == ("NoSuchKey", 404), "hidden %r" % (code,))
    raw = c.raw(b"GET /vrt/k HTTP/1.1\r\nHost: x\r\n\r\n")  # unsigned: 403, no leak
    check(b"x-amz-delete-marker" not in raw.lower(), "anonymous sees no marker")
    from botocore.exceptions import ClientError
    try:
        s3.get_object(Bucket="vrt", Key="k")
    except ClientError as e:
        hdrs = e.response["ResponseMetadata"]["HTTPHeaders"]
        check(hdrs.get("x-amz-delete-marker") == "true", "404 says delete marker %r" % hdrs)
        check(hdrs.get("x-amz-version-id") == d["VersionId"], "and its id")
    code = error_code(s3.get_object, Bucket="vrt", Key="k", VersionId=d["VersionId"])
    check(code == ("MethodNotAllowed", 405), "marker by id %r" % (code,))
    check(body(s3, "vrt", "k", ids[1]) == b"version 1", "old versions still there")
    # removing the marker brings version 2 back
    r = s3.delete_object(Bucket="vrt", Key="k", VersionId=d["VersionId"])
    check(r.get("DeleteMarker") is True, "removed a marker %r" % r)
    check(body(s3, "vrt", "k") == b"version 2", "latest back")
    # removing the latest version makes the previous one the latest
    s3.delete_object(Bucket="vrt", Key="k", VersionId=ids[2])
    check(body(s3, "vrt", "k") == b"version 1", "previous is latest")
    code = error_code(s3.get_object, Bucket="vrt", Key="k", VersionId=ids[2])
    check(code == ("NoSuchVersion", 404), "removed version %r" % (code,))
    # removing a version in the middle leaves the rest
    s3.delete_object(Bucket="vrt", Key="k", VersionId=ids[0])
    check(body(s3, "vrt", "k") == b"version 1", "latest unchanged")
    check(body(s3, "vrt", "k", "null") == b"before versioning", "null unchanged")
    lv = s3.list_object_versions(Bucket="vrt")
    got = [(v["VersionId"], v["IsLatest"]) for v in lv.get("Versions", [])]
    check(got == [(ids[1], True), ("null", False)], "listing %r" % got)
    check(not lv.get("DeleteMarkers"), "no markers left %r" % lv.get("DeleteMarkers"))


def test_bad_ids(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="vbad")
    enable(s3, "vbad")
    v = s3.put_object(Bucket="vbad", Key="k", Body=b"x")["VersionId"]
    for bad in (v.upper(), v[:-1], v + "0", "nul", "../" + v[3:], v[:31] + "g"):
        code = error_code(s3.get_object, Bucket="vbad", Key="k", VersionId=bad)
        check(code == ("InvalidArgument", 400), "%r: %r" % (bad, code))
    missing = "f" * 32
    code = error_code(s3.get_object, Bucket="vbad", Key="k", VersionId=missing)
    check(code == ("NoSuchVersion", 404), "unknown id %r" % (code,))
    check(body(s3, "vbad", "k") == b"x", "object untouched")


def test_suspended(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="vsus")
    enable(s3, "vsus")
    v1 = s3.put_object(Bucket="vsus", Key="k", Body=b"one")["VersionId"]
    enable(s3, "vsus", "Suspended")
    r = s3.put_object(Bucket="vsus", Key="k", Body=b"null a")
    check(r.get("VersionId") == "null", "suspended writes null %r" % r.get("VersionId"))
    s3.put_object(Bucket="vsus", Key="k", Body=b"null b")
    lv = s3.list_object_versions(Bucket="vsus")["Versions"]
    got = [(v["VersionId"], v["IsLatest"]) for v in lv]
    check(got == [("null", True), (v1, False)], "null replaced %r" % got)
    check(body(s3, "vsus", "k", "null") == b"null b", "the new null")
    check(body(s3, "vsus", "k", v1) == b"one", "enabled-era version kept")
    d = s3.delete_object(Bucket="vsus", Key="k")
    check(d.get("DeleteMarker") is True and d.get("VersionId") == "null", "null marker %r" % d)
    lv = s3.list_object_versions(Bucket="vsus")
    check([m["VersionId"] for m in lv.get("DeleteMarkers", [])] == ["null"], "marker listed")
    check([v["VersionId"] for v in lv.get("Versions", [])] == [v1], "null object replaced")


def large_chunks(c, bucket, key):
    """The distinct chunk keys of bucket/key on the nodes."""
    pre = b"c/%s/%s\x00" % (bucket.encode(), key.encode())
    return {k for _, k in chunk_keys(c) if k.startswith(pre)}


def test_suspended_large_reclaim(c):
    """A Suspended overwrite replaces the null version: a large one's chunks
    go (after reclaim_delay); the chunks of a version that stays do not."""
    s3 = c.boto()
    s3.create_bucket(Bucket="vsl")
    old = os.urandom(600 * K)
    s3.put_object(Bucket="vsl", Key="pre", Body=old)   # before versioning: the null version
    enable(s3, "vsl")
    kept = os.urandom(400 * K)
    kv = s3.put_object(Bucket="vsl", Key="big", Body=kept)["VersionId"]
    enable(s3, "vsl", "Suspended")
    n_pre = len(large_chunks(c, "vsl", "pre"))
    check(n_pre == 5, "600K in 128K chunks: %d" % n_pre)
    datas = [os.urandom(300 * K), os.urandom(300 * K)]
    for d in datas:
        s3.put_object(Bucket="vsl", Key="big", Body=d)     # null, replaced by the next
    s3.put_object(Bucket="vsl", Key="pre", Body=b"small now")
    time.sleep(2.5)
    check(large_chunks(c, "vsl", "pre") == set(), "the replaced null's chunks reclaimed")
    # the kept version (4 chunks) and the last null (3): the first null's are gone
    check(len(large_chunks(c, "vsl", "big")) == 4 + 3, "chunks of big %d"
          % len(large_chunks(c, "vsl", "big")))
    check(body(s3, "vsl", "big", kv) == kept, "enabled-era version whole")
    check(body(s3, "vsl", "big") == datas[1], "the null version whole")
    s3.delete_object(Bucket="vsl", Key="big")   # a null delete marker replaces it
    time.sleep(2.5)
    check(len(large_chunks(c, "vsl", "big")) == 4, "null's chunks reclaimed by the marker")
    check(body(s3, "vsl", "big", kv) == kept, "kept version still whole")


def test_list_paging(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="vlist")
    enable(s3, "vlist")
    want = []
    for key in ("a", "d/x", "d/y", "z"):
        vs = [s3.put_object(Bucket="vlist", Key=key, Body=key.encode() * (i + 1))["VersionId"]
              for i in range(3)]
        want += [(key, v) for v in reversed(vs)]
    dm = s3.delete_object(Bucket="vlist", Key="z")["VersionId"]
    want.insert(want.index(("z", want[-3][1])), ("z", dm))
    seen, kw = [], {}
    while True:
        r = s3.list_object_versions(Bucket="vlist", MaxKeys=2, **kw)
        page = r.get("Versions", []) + r.get("DeleteMarkers", [])
        check(len(page) <= 2, "page of %d" % len(page))
        page.sort(key=lambda v: (v["Key"], -v["LastModified"].timestamp(), v["VersionId"]))
        seen += [(v["Key"], v["VersionId"], v["IsLatest"]) for v in page]
        if not r["IsTruncated"]:
            break
        kw = {"KeyMarker": r["NextKeyMarker"], "VersionIdMarker": r["NextVersionIdMarker"]}
    check([(k, v) for k, v, _ in seen] == want, "all versions once, in order:\n%r\n%r"
          % (seen, want))
    latest = [(k, v) for k, v, lt in seen if lt]
    check(latest == [("a", want[0][1]), ("d/x", want[3][1]), ("d/y", want[6][1]),
                     ("z", dm)], "IsLatest %r" % latest)
    for bad in ("zz", want[0][1].upper(), want[0][1] + "0"):
        code = error_code(s3.list_object_versions, Bucket="vlist", KeyMarker="a",
                          VersionIdMarker=bad)
        check(code == ("InvalidArgument", 400), "marker %r: %r" % (bad, code))
    r = s3.list_object_versions(Bucket="vlist", Delimiter="/")
    check([p["Prefix"] for p in r.get("CommonPrefixes", [])] == ["d/"], "common prefix")
    check({v["Key"] for v in r["Versions"]} == {"a", "z"}, "top level")
    r = s3.list_object_versions(Bucket="vlist", Prefix="d/", MaxKeys=1000)
    check(len(r["Versions"]) == 6, "prefix")
    # objects written before versioning are listed as their null version,
    # in key order among the others, paged like them
    s3.create_bucket(Bucket="vmix")
    for key in ("b", "ba", "c/1", "d"):
        s3.put_object(Bucket="vmix", Key=key, Body=b"old " + key.encode())
    enable(s3, "vmix")
    nb = s3.put_object(Bucket="vmix", Key="b", Body=b"new b")["VersionId"]
    na = s3.put_object(Bucket="vmix", Key="a", Body=b"a")["VersionId"]
    seen, kw = [], {}
    while True:
        r = s3.list_object_versions(Bucket="vmix", MaxKeys=1, **kw)
        seen += [(v["Key"], v["VersionId"], v["IsLatest"]) for v in r.get("Versions", [])]
        if not r["IsTruncated"]:
            break
        kw = {"KeyMarker": r["NextKeyMarker"], "VersionIdMarker": r["NextVersionIdMarker"]}
    check(seen == [("a", na, True), ("b", nb, True), ("b", "null", False), ("ba", "null", True),
                   ("c/1", "null", True), ("d", "null", True)], "mixed listing %r" % seen)
    r = s3.list_object_versions(Bucket="vmix", Delimiter="/")
    check([p["Prefix"] for p in r.get("CommonPrefixes", [])] == ["c/"], "mixed prefixes")
    check(len(r["Versions"]) == 5, "mixed top level %r" % r["Versions"])
    out = c.aws("s3api", "list-object-versions", "--bucket", "vlist", "--prefix", "a").stdout
    check(out.count(b'"VersionId"') == 3, "cli listing: %s" % out[:400])
    # plain listing shows latest objects only, without the key under a marker
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="vlist")["Contents"]]
    check(keys == ["a", "d/x", "d/y"], "plain listing %r" % keys)


def test_list_params(c):
    """ListObjects, ListObjectsV2 and ListObjectVersions read encoding-type,
    prefix, delimiter, max-keys and their key marker with one parser
    (s3_list.c): the same errors and limits for all three."""
    s3 = c.boto()
    s3.create_bucket(Bucket="vparams")
    enable(s3, "vparams")
    for key in ("a", "d/x", "d/y", "z"):
        s3.put_object(Bucket="vparams", Key=key, Body=b"x")
    ops = (("ListObjects", "list_objects"), ("ListObjectsV2", "list_objects_v2"),
           ("ListObjectVersions", "list_object_versions"))

    def rewrite(op, old, new):
        client = c.boto()

        def hook(request, **kw):
            request.url = request.url.replace(old, new)
        client.meta.events.register("before-sign.s3." + op, hook)
        return getattr(client, dict(ops)[op])

    for op, name in ops:
        for bad in ("blah", "-1", "", "1x"):
            code = error_code(rewrite(op, "max-keys=1", "max-keys=" + bad), Bucket="vparams",
                              MaxKeys=1)
            check(code == ("InvalidArgument", 400), "%s max-keys=%r: %r" % (op, bad, code))
        code = error_code(rewrite(op, "encoding-type=url", "encoding-type=xml"),
                          Bucket="vparams", EncodingType="url")
        check(code == ("InvalidArgument", 400), "%s encoding-type=xml: %r" % (op, code))
        fn = getattr(s3, name)
        code = error_code(fn, Bucket="vparams", Prefix="p" * 1025)
        check(code == ("KeyTooLongError", 400), "%s prefix of 1025: %r" % (op, code))
        r = fn(Bucket="vparams", Prefix="p" * 1024)
        check(r["Prefix"] == "p" * 1024 and not r["IsTruncated"], "%s prefix of 1024" % op)
        r = fn(Bucket="vparams", MaxKeys=5000)
        check(r["MaxKeys"] == 1000, "%s max-keys capped at s3.max_keys: %r" % (op, r["MaxKeys"]))
        r = fn(Bucket="vparams", Delimiter="/", EncodingType="url", Prefix="")
        check(r.get("EncodingType") == "url" and r.get("Delimiter") == "/",
              "%s echoes %r" % (op, r))
    # the key marker: at most 1024 bytes in ListObjectVersions; ListObjects
    # reads at most 1024 of a longer marker (as it always did)
    code = error_code(s3.list_object_versions, Bucket="vparams", KeyMarker="k" * 1025)
    check(code == ("KeyTooLongError", 400), "key-marker of 1025: %r" % (code,))
    r = s3.list_objects(Bucket="vparams", Marker="b" * 1025)
    check([o["Key"] for o in r.get("Contents", [])] == ["d/x", "d/y", "z"], "v1 long marker")
    # a marker ending in the delimiter is a common prefix: resume after it
    r = s3.list_object_versions(Bucket="vparams", Delimiter="/", KeyMarker="d/")
    check([v["Key"] for v in r.get("Versions", [])] == ["z"] and not r.get("CommonPrefixes"),
          "versions after the prefix d/: %r" % r)
    r = s3.list_objects(Bucket="vparams", Delimiter="/", Marker="d/")
    check([o["Key"] for o in r.get("Contents", [])] == ["z"] and not r.get("CommonPrefixes"),
          "objects after the prefix d/: %r" % r)


def test_large_versions(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="vlarge")
    enable(s3, "vlarge")
    rnd = random.Random(7)
    datas = [bytes(rnd.getrandbits(8) for _ in range(700 * K + i)) for i in range(2)]
    ids = [s3.put_object(Bucket="vlarge", Key="big", Body=d)["VersionId"] for d in datas]
    time.sleep(2.5)   # past reclaim_delay: an overwrite must not have dropped v0's chunks
    for v, d in zip(ids, datas):
        got = body(s3, "vlarge", "big", v)
        check(hashlib.md5(got).digest() == hashlib.md5(d).digest(), "version byte for byte")
    r = s3.get_object(Bucket="vlarge", Key="big", VersionId=ids[0], Range="bytes=131000-263000")
    check(r["Body"].read() == datas[0][131000:263001], "range of an old version")
    # multipart completed in a versioned bucket is a version too
    up = s3.create_multipart_upload(Bucket="vlarge", Key="big")["UploadId"]
    p1 = os.urandom(5 * 1024 * K)
    p2 = os.urandom(100 * K)
    parts = []
    for n, p in ((1, p1), (2, p2)):
        e = s3.upload_part(Bucket="vlarge", Key="big", UploadId=up, PartNumber=n, Body=p)["ETag"]
        parts.append({"PartNumber": n, "ETag": e})
    r = s3.complete_multipart_upload(Bucket="vlarge", Key="big", UploadId=up,
                                     MultipartUpload={"Parts": parts})
    check(len(r.get("VersionId", "")) == 32, "complete answers a version id %r" % r)
    check(body(s3, "vlarge", "big") == p1 + p2, "multipart is the latest")
    time.sleep(2.5)
    check(body(s3, "vlarge", "big", ids[1]) == datas[1], "overwritten version still whole")
    # removing a version reclaims its chunks (6 of 128K), and only those
    before = large_chunks(c, "vlarge", "big")
    check(len(before) == 6 + 6 + 40 + 1, "chunks of three versions: %d" % len(before))
    s3.delete_object(Bucket="vlarge", Key="big", VersionId=ids[1])
    time.sleep(2.5)
    after = large_chunks(c, "vlarge", "big")
    check(after < before and len(after) == 6 + 40 + 1, "v1's chunks reclaimed: %d" % len(after))
    check(body(s3, "vlarge", "big", ids[0]) == datas[0], "v0 after v1 removed")
    check(body(s3, "vlarge", "big") == p1 + p2, "latest after v1 removed")


def test_copy_version(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="vcopy")
    enable(s3, "vcopy")
    v1 = s3.put_object(Bucket="vcopy", Key="k", Body=b"old")["VersionId"]
    s3.put_object(Bucket="vcopy", Key="k", Body=b"new")
    r = s3.copy_object(Bucket="vcopy", Key="k2", CopySource={"Bucket": "vcopy", "Key": "k"})
    check(len(r.get("VersionId", "")) == 32, "copy answers a version id %r" % r)
    check(body(s3, "vcopy", "k2") == b"new", "copy of the latest")
    r = s3.copy_object(Bucket="vcopy", Key="k3",
                       CopySource={"Bucket": "vcopy", "Key": "k", "VersionId": v1})
    check(r.get("CopySourceVersionId") == v1, "source version echoed %r" % r)
    check(body(s3, "vcopy", "k3") == b"old", "copy of an old version")
    # restoring an old version: copied onto its own key, it is the latest
    r = s3.copy_object(Bucket="vcopy", Key="k",
                       CopySource={"Bucket": "vcopy", "Key": "k", "VersionId": v1})
    check(body(s3, "vcopy", "k") == b"old", "restored")
    check(len(s3.list_object_versions(Bucket="vcopy", Prefix="k")["Versions"]) >= 3,
          "restoring adds a version")
    dm = s3.delete_object(Bucket="vcopy", Key="k2")["VersionId"]
    code = error_code(s3.copy_object, Bucket="vcopy", Key="k4",
                      CopySource={"Bucket": "vcopy", "Key": "k2", "VersionId": dm})
    check(code == ("InvalidRequest", 400), "copy of a delete marker %r" % (code,))
    code = error_code(s3.copy_object, Bucket="vcopy", Key="k4",
                      CopySource={"Bucket": "vcopy", "Key": "k", "VersionId": "0" * 32})
    check(code == ("NoSuchVersion", 404), "copy of a missing version %r" % (code,))
    code = error_code(s3.copy_object, Bucket="vcopy", Key="k4",
                      CopySource={"Bucket": "vcopy", "Key": "k", "VersionId": "V" * 32})
    check(code == ("InvalidArgument", 400), "bad version id %r" % (code,))
    # a chunked old version copied byte for byte
    big = [os.urandom(600 * K), os.urandom(400 * K)]
    bv = [s3.put_object(Bucket="vcopy", Key="big", Body=d)["VersionId"] for d in big]
    s3.copy_object(Bucket="vcopy", Key="big-copy",
                   CopySource={"Bucket": "vcopy", "Key": "big", "VersionId": bv[0]})
    check(body(s3, "vcopy", "big-copy") == big[0], "large old version copied")


def test_delete_objects(c):
    """DeleteObjects in a versioned bucket: delete markers and version
    removals per key; a bucket is empty only without versions (then, as
    s3-tests' nuke_bucket does, everything listed is deleted by version and
    the bucket goes; its name used again shows none of them)."""
    s3 = c.boto()
    s3.create_bucket(Bucket="vmd")
    enable(s3, "vmd")
    k1 = [s3.put_object(Bucket="vmd", Key="k1", Body=b"k1 %d" % i)["VersionId"] for i in range(2)]
    s3.put_object(Bucket="vmd", Key="k2", Body=b"k2")
    r = s3.delete_objects(Bucket="vmd", Delete={"Objects": [
        {"Key": "k1", "VersionId": k1[1]}, {"Key": "k2"}, {"Key": "k3"},
        {"Key": "k1", "VersionId": "bad"}]})
    deleted = {(d["Key"], d.get("VersionId")): d for d in r.get("Deleted", [])}
    check(("k1", k1[1]) in deleted and not deleted[("k1", k1[1])].get("DeleteMarker"),
          "k1's newest removed %r" % r)
    for k in ("k2", "k3"):
        d = deleted.get((k, None))
        check(d is not None and d.get("DeleteMarker") is True and
              len(d.get("DeleteMarkerVersionId", "")) == 32, "%s: marker %r" % (k, d))
    errs = [(e["Key"], e["Code"]) for e in r.get("Errors", [])]
    check(errs == [("k1", "NoSuchVersion")], "bad id refused %r" % errs)
    check(body(s3, "vmd", "k1") == b"k1 0", "previous version is the latest")
    check(error_code(s3.get_object, Bucket="vmd", Key="k2")[0] == "NoSuchKey", "k2 hidden")
    check(error_code(s3.delete_bucket, Bucket="vmd") == ("BucketNotEmpty", 409),
          "versions keep the bucket")
    lv = s3.list_object_versions(Bucket="vmd")
    every = [{"Key": v["Key"], "VersionId": v["VersionId"]}
             for v in lv.get("Versions", []) + lv.get("DeleteMarkers", [])]
    check(len(every) == 4, "k1, k2 and two markers %r" % every)
    r = s3.delete_objects(Bucket="vmd", Delete={"Objects": every, "Quiet": True})
    check(not r.get("Errors"), "all removed %r" % r)
    lv = s3.list_object_versions(Bucket="vmd")
    check(not lv.get("Versions") and not lv.get("DeleteMarkers"), "nothing left %r" % lv)
    s3.delete_bucket(Bucket="vmd")
    s3.create_bucket(Bucket="vmd")
    lv = s3.list_object_versions(Bucket="vmd")
    check(not lv.get("Versions") and not lv.get("DeleteMarkers"), "a new bucket is empty")


def test_tagging_by_version(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="vtag")
    enable(s3, "vtag")
    v1 = s3.put_object(Bucket="vtag", Key="k", Body=b"1", Tagging="a=1")["VersionId"]
    v2 = s3.put_object(Bucket="vtag", Key="k", Body=b"2", Tagging="b=2")["VersionId"]
    r = s3.get_object_tagging(Bucket="vtag", Key="k", VersionId=v1)
    check(r["TagSet"] == [{"Key": "a", "Value": "1"}] and r.get("VersionId") == v1,
          "tags of v1 %r" % r)
    r = s3.get_object_tagging(Bucket="vtag", Key="k")
    check(r["TagSet"] == [{"Key": "b", "Value": "2"}] and r.get("VersionId") == v2,
          "tags of the latest %r" % r)
    code = error_code(s3.get_object_tagging, Bucket="vtag", Key="k", VersionId="e" * 32)
    check(code == ("NoSuchVersion", 404), "unknown version %r" % (code,))
    # a version's tags by id; the latest's other copy follows either way
    s3.put_object_tagging(Bucket="vtag", Key="k", VersionId=v1,
                          Tagging={"TagSet": [{"Key": "c", "Value": "3"}]})
    check(s3.get_object_tagging(Bucket="vtag", Key="k", VersionId=v1)["TagSet"] ==
          [{"Key": "c", "Value": "3"}], "v1 retagged")
    check(s3.get_object_tagging(Bucket="vtag", Key="k")["TagSet"] ==
          [{"Key": "b", "Value": "2"}], "latest untouched")
    s3.put_object_tagging(Bucket="vtag", Key="k", Tagging={"TagSet": [{"Key": "d", "Value": "4"}]})
    check(s3.get_object_tagging(Bucket="vtag", Key="k", VersionId=v2)["TagSet"] ==
          [{"Key": "d", "Value": "4"}], "latest retagged: its version record too")
    s3.delete_object_tagging(Bucket="vtag", Key="k", VersionId=v2)
    check(s3.get_object_tagging(Bucket="vtag", Key="k")["TagSet"] == [], "latest's tags gone")
    check(s3.head_object(Bucket="vtag", Key="k", VersionId=v1).get("VersionId") == v1, "v1")
    check(s3.get_object_tagging(Bucket="vtag", Key="k", VersionId=v1)["TagSet"] ==
          [{"Key": "c", "Value": "3"}], "v1 untouched")
    dm = s3.delete_object(Bucket="vtag", Key="k")["VersionId"]
    code = error_code(s3.put_object_tagging, Bucket="vtag", Key="k", VersionId=dm,
                      Tagging={"TagSet": []})
    check(code == ("MethodNotAllowed", 405), "tagging a delete marker %r" % (code,))
    code = error_code(s3.put_object_tagging, Bucket="vtag", Key="k", VersionId="a" * 32,
                      Tagging={"TagSet": []})
    check(code == ("NoSuchVersion", 404), "tagging a missing version %r" % (code,))


def test_version_actions_in_policies(c):
    """A version is read, deleted and copied under S3's version actions: a
    policy that grants another account s3:GetObject lets it read the latest
    but not a version by id until s3:GetObjectVersion is granted too; an
    explicit Deny of s3:DeleteObjectVersion stops removing versions."""
    import json
    s3 = c.boto()
    s3.create_bucket(Bucket="vpol")
    enable(s3, "vpol")
    v1 = s3.put_object(Bucket="vpol", Key="k", Body=b"one")["VersionId"]
    s3.put_object(Bucket="vpol", Key="k", Body=b"two")

    def pol(*stmts):
        s3.put_bucket_policy(Bucket="vpol", Policy=json.dumps({
            "Version": "2012-10-17", "Statement": [
                {"Effect": e, "Principal": p, "Action": a, "Resource": "arn:aws:s3:::vpol/*"}
                for e, p, a in stmts]}))
    o = c.boto(*OTHER)
    pol(("Allow", {"AWS": "other"}, "s3:GetObject"))
    check(body(o, "vpol", "k") == b"two", "latest with s3:GetObject")
    check(error_code(o.get_object, Bucket="vpol", Key="k", VersionId=v1)[0] == "AccessDenied",
          "a version needs s3:GetObjectVersion")
    pol(("Allow", {"AWS": "other"}, ["s3:GetObject", "s3:GetObjectVersion"]))
    check(body(o, "vpol", "k", v1) == b"one", "granted s3:GetObjectVersion")
    pol(("Deny", "*", "s3:DeleteObjectVersion"))
    code = error_code(s3.delete_object, Bucket="vpol", Key="k", VersionId=v1)
    check(code == ("AccessDenied", 403), "Deny s3:DeleteObjectVersion %r" % (code,))
    d = s3.delete_object(Bucket="vpol", Key="k")   # s3:DeleteObject: a marker
    check(d.get("DeleteMarker") is True, "plain delete still allowed")
    s3.delete_bucket_policy(Bucket="vpol")
    check(body(s3, "vpol", "k", v1) == b"one", "version kept")


def test_conditional_writes(c):
    """If-None-Match / If-Match in a versioned bucket (the latest is written
    under the key's lease, then its version record): a refused write adds
    no version; an accepted one is a version like any other."""
    from test_gateway_conformance import with_headers
    s3 = c.boto()
    s3.create_bucket(Bucket="vcond")
    enable(s3, "vcond")

    def put_if(body_, name, value):
        return with_headers(s3, "PutObject", {name: value}, s3.put_object, Bucket="vcond",
                            Key="k", Body=body_)
    r1 = put_if(b"one", "If-None-Match", "*")
    code = error_code(put_if, b"x", "If-None-Match", "*")
    check(code == ("PreconditionFailed", 412), "exists %r" % (code,))
    code = error_code(put_if, b"x", "If-Match", '"0000"')
    check(code == ("PreconditionFailed", 412), "wrong etag %r" % (code,))
    r2 = put_if(b"two", "If-Match", r1["ETag"])
    check(len(r2.get("VersionId", "")) == 32 and r2["VersionId"] != r1["VersionId"],
          "a new version %r" % r2)
    got = [v["VersionId"] for v in s3.list_object_versions(Bucket="vcond")["Versions"]]
    check(got == [r2["VersionId"], r1["VersionId"]], "refused writes left none %r" % got)
    check(body(s3, "vcond", "k", r1["VersionId"]) == b"one", "first version")
    check(body(s3, "vcond", "k") == b"two", "latest")


def second_gateway(c):
    """Another cairn-gateway over the same nodes (its own port): returns
    (process, boto3 client)."""
    import subprocess
    from snclient import free_port
    settings = dict(c.settings)
    settings["http.port"] = free_port()
    cfg = os.path.join(c.tmp, "gateway2.conf")
    with open(cfg, "w") as f:
        for k, v in settings.items():
            f.write("%s = %s\n" % (k, v))
    log = open(os.path.join(c.tmp, "gateway2.log"), "ab")
    proc = subprocess.Popen([c.bin, "--config", cfg], stdout=log, stderr=log)
    import boto3
    from botocore.config import Config
    from s3util import ACCESS_KEY, REGION, SECRET_KEY
    s3 = boto3.client("s3", endpoint_url="http://127.0.0.1:%d" % settings["http.port"],
                      aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
                      region_name=REGION, config=Config(s3={"addressing_style": "path"},
                                                        retries={"max_attempts": 1}))
    deadline = time.monotonic() + 30
    while True:
        try:
            s3.list_buckets()
            return proc, s3
        except Exception:  # noqa: BLE001 - not up yet
            check(proc.poll() is None and time.monotonic() < deadline, "second gateway up")
            time.sleep(0.1)


def test_two_gateways(c):
    """Version ids are the storage keys of the versions: any gateway reads,
    lists and removes what another wrote."""
    a = c.boto()
    proc, b = second_gateway(c)
    try:
        a.create_bucket(Bucket="v2gw")
        enable(b, "v2gw")
        check(a.get_bucket_versioning(Bucket="v2gw")["Status"] == "Enabled", "state shared")
        v1 = a.put_object(Bucket="v2gw", Key="k", Body=b"from a")["VersionId"]
        v2 = b.put_object(Bucket="v2gw", Key="k", Body=b"from b")["VersionId"]
        check(body(b, "v2gw", "k", v1) == b"from a" and body(a, "v2gw", "k", v2) == b"from b",
              "each reads the other's versions")
        dm = b.delete_object(Bucket="v2gw", Key="k")["VersionId"]
        check(error_code(a.get_object, Bucket="v2gw", Key="k")[0] == "NoSuchKey", "hidden on a")
        got = a.list_object_versions(Bucket="v2gw")
        check([m["VersionId"] for m in got.get("DeleteMarkers", [])] == [dm], "marker on a")
        a.delete_object(Bucket="v2gw", Key="k", VersionId=dm)
        check(body(b, "v2gw", "k") == b"from b", "b sees the marker removed through a")
    finally:
        proc.terminate()
        proc.wait(30)


def test_other_account(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="vmine")
    enable(s3, "vmine")
    v = s3.put_object(Bucket="vmine", Key="k", Body=b"secret")["VersionId"]
    o = c.boto(*OTHER)
    for fn, kw in ((o.get_bucket_versioning, {}),
                   (o.put_bucket_versioning, {"VersioningConfiguration": {"Status": "Suspended"}}),
                   (o.list_object_versions, {}),
                   (o.get_object, {"Key": "k", "VersionId": v}),
                   (o.delete_object, {"Key": "k", "VersionId": v}),
                   (o.delete_object, {"Key": "k"})):
        code = error_code(fn, Bucket="vmine", **kw)
        check(code == ("AccessDenied", 403), "%s: %r" % (fn.__name__, code))
    code = error_code(o.delete_objects, Bucket="vmine",
                      Delete={"Objects": [{"Key": "k", "VersionId": v}, {"Key": "k"}]})
    check(code == ("AccessDenied", 403), "delete_objects: %r" % (code,))
    code = error_code(o.copy_object, Bucket="vmine", Key="c",
                      CopySource={"Bucket": "vmine", "Key": "k", "VersionId": v})
    check(code == ("AccessDenied", 403), "copy of a version: %r" % (code,))
    check(s3.get_bucket_versioning(Bucket="vmine")["Status"] == "Enabled", "unchanged")
    check(body(s3, "vmine", "k", v) == b"secret", "version intact")
    check(len(s3.list_object_versions(Bucket="vmine")["Versions"]) == 1, "no marker added")


def test_lifecycle_marks_versioned(c):
    """Expiration in a versioned bucket writes a delete marker: the latest
    is hidden, its version (and the chunks it owns) kept and readable by id
    (tests/integration/test_lifecycle_versioned.py covers the rest). A
    never-versioned bucket with the same rule has its object deleted."""
    s3 = c.boto()
    rules = {"Rules": [{"ID": "all", "Filter": {"Prefix": ""}, "Status": "Enabled",
                        "Expiration": {"Days": 1}}]}
    for b in ("vlc-plain", "vlc-versioned"):
        s3.create_bucket(Bucket=b)
        if b == "vlc-versioned":
            enable(s3, b)
        s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration=rules)
    data = os.urandom(500 * K)   # chunked
    s3.put_object(Bucket="vlc-plain", Key="k", Body=b"x")
    v = s3.put_object(Bucket="vlc-versioned", Key="k", Body=data)["VersionId"]
    deadline = time.monotonic() + 40
    while (s3.list_objects_v2(Bucket="vlc-plain").get("KeyCount", 0) > 0 or
           s3.list_objects_v2(Bucket="vlc-versioned").get("KeyCount", 0) > 0):
        check(time.monotonic() < deadline, "an object was never expired")
        time.sleep(0.5)
    time.sleep(2)   # past reclaim_delay
    r = s3.list_object_versions(Bucket="vlc-versioned")
    check([d["IsLatest"] for d in r.get("DeleteMarkers", [])] == [True] and
          [x["VersionId"] for x in r.get("Versions", [])] == [v], "a marker over v: %r" % r)
    check(body(s3, "vlc-versioned", "k", v) == data, "version kept byte for byte")


def wait_until(fn, what, timeout=8):
    """fn() true within timeout (a bucket policy change reaches every worker
    within s3.bucket_owner_ttl); an S3 error counts as not yet."""
    from botocore.exceptions import ClientError
    deadline = time.monotonic() + timeout
    while True:
        try:
            if fn():
                return
        except ClientError:
            pass
        check(time.monotonic() < deadline, "timed out: " + what)
        time.sleep(0.2)


def test_acl_by_version(c):
    """GetObjectAcl / PutObjectAcl with a versionId act on that version; a
    PUT on the latest changes its version record too (and the reverse), so
    the two copies agree; a delete marker is 405, a missing id NoSuchVersion,
    and s3:GetObjectVersionAcl is the action a policy must grant."""
    import json
    s3 = c.boto()
    o = c.boto(*OTHER)
    from botocore import UNSIGNED
    anon = c.boto(signature_version=UNSIGNED)
    s3.create_bucket(Bucket="vacl")   # ObjectWriter, no public access block: ACLs apply
    enable(s3, "vacl")
    v1 = s3.put_object(Bucket="vacl", Key="k", Body=b"1")["VersionId"]
    v2 = s3.put_object(Bucket="vacl", Key="k", Body=b"2")["VersionId"]

    def grants(vid=None):
        kw = {"VersionId": vid} if vid else {}
        return sorted(g["Permission"] + ":" + g["Grantee"].get("URI", g["Grantee"].get("ID", ""))
                      for g in s3.get_object_acl(Bucket="vacl", Key="k", **kw)["Grants"])
    private = grants()
    check(len(private) == 1 and private[0].startswith("FULL_CONTROL:"), "private %r" % private)
    s3.put_object_acl(Bucket="vacl", Key="k", VersionId=v1, ACL="public-read")
    pub = grants(v1)
    check(any(g.startswith("READ:") and g.endswith("/AllUsers") for g in pub),
          "v1 public-read %r" % pub)
    check(grants() == private and grants(v2) == private, "the latest untouched")
    check(body(anon, "vacl", "k", v1) == b"1", "anonymous reads v1 by id")
    check(error_code(anon.get_object, Bucket="vacl", Key="k", VersionId=v2)[0] ==
          "AccessDenied", "but not v2")
    s3.put_object_acl(Bucket="vacl", Key="k", ACL="public-read")
    check(grants(v2) == grants() and grants() != private, "latest's ACL on its version too")
    s3.put_object_acl(Bucket="vacl", Key="k", VersionId=v2, ACL="private")
    check(grants() == private, "by id on the latest: the latest too")
    code = error_code(s3.get_object_acl, Bucket="vacl", Key="k", VersionId="e" * 32)
    check(code == ("NoSuchVersion", 404), "unknown version %r" % (code,))
    code = error_code(s3.put_object_acl, Bucket="vacl", Key="k", VersionId="e" * 32,
                      ACL="private")
    check(code == ("NoSuchVersion", 404), "put on an unknown version %r" % (code,))
    code = error_code(s3.get_object_acl, Bucket="vacl", Key="k", VersionId="bad")
    check(code == ("InvalidArgument", 400), "bad id %r" % (code,))
    dm = s3.delete_object(Bucket="vacl", Key="k")["VersionId"]
    code = error_code(s3.get_object_acl, Bucket="vacl", Key="k", VersionId=dm)
    check(code == ("MethodNotAllowed", 405), "a delete marker's ACL %r" % (code,))
    # the version action in a policy
    s3.put_bucket_policy(Bucket="vacl", Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "other"}, "Action": "s3:GetObjectAcl",
         "Resource": "arn:aws:s3:::vacl/*"}]}))
    s3.put_object(Bucket="vacl", Key="k", Body=b"3")   # a latest again (k's was a marker)
    wait_until(lambda: o.get_object_acl(Bucket="vacl", Key="k")["Grants"],
               "s3:GetObjectAcl in force")
    check(error_code(o.get_object_acl, Bucket="vacl", Key="k", VersionId=v1)[0] ==
          "AccessDenied", "a version's ACL needs s3:GetObjectVersionAcl")
    for who, cl in (("other", o), ("anonymous", anon)):
        check(error_code(cl.put_object_acl, Bucket="vacl", Key="k", VersionId=v1,
                         ACL="public-read-write")[0] == "AccessDenied",
              "%s may not set a version's ACL" % who)
    s3.put_bucket_policy(Bucket="vacl", Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "other"}, "Action": "s3:GetObjectVersionAcl",
         "Resource": "arn:aws:s3:::vacl/*"}]}))
    wait_until(lambda: o.get_object_acl(Bucket="vacl", Key="k", VersionId=v1)["Grants"],
               "granted s3:GetObjectVersionAcl")
    s3.delete_bucket_policy(Bucket="vacl")


def test_upload_part_copy_version(c):
    """UploadPartCopy from x-amz-copy-source ...?versionId=: that version's
    bytes (small and chunked), byte for byte; a missing version is
    NoSuchVersion, a delete marker InvalidRequest."""
    s3 = c.boto()
    s3.create_bucket(Bucket="vupc")
    enable(s3, "vupc")
    old = [os.urandom(5 * 1024 * K + 17), os.urandom(300)]
    ids = [s3.put_object(Bucket="vupc", Key="src", Body=d)["VersionId"] for d in old]
    s3.put_object(Bucket="vupc", Key="src", Body=b"latest")
    up = s3.create_multipart_upload(Bucket="vupc", Key="dst")["UploadId"]
    parts = []
    for n, vid in enumerate(ids, 1):
        r = s3.upload_part_copy(Bucket="vupc", Key="dst", UploadId=up, PartNumber=n,
                                CopySource={"Bucket": "vupc", "Key": "src", "VersionId": vid})
        check(r.get("CopySourceVersionId") == vid, "source version echoed %r" % r)
        parts.append({"PartNumber": n, "ETag": r["CopyPartResult"]["ETag"]})
    code = error_code(s3.upload_part_copy, Bucket="vupc", Key="dst", UploadId=up, PartNumber=3,
                      CopySource={"Bucket": "vupc", "Key": "src", "VersionId": "0" * 32})
    check(code == ("NoSuchVersion", 404), "a missing version %r" % (code,))
    for bad in ("V" * 32, "v1", "0" * 31):
        code = error_code(s3.upload_part_copy, Bucket="vupc", Key="dst", UploadId=up,
                          PartNumber=3, CopySource={"Bucket": "vupc", "Key": "src",
                                                    "VersionId": bad})
        check(code == ("InvalidArgument", 400), "bad version id %r: %r" % (bad, code))
    dm = s3.delete_object(Bucket="vupc", Key="gone")["VersionId"]
    code = error_code(s3.upload_part_copy, Bucket="vupc", Key="dst", UploadId=up, PartNumber=3,
                      CopySource={"Bucket": "vupc", "Key": "gone", "VersionId": dm})
    check(code == ("InvalidRequest", 400), "a delete marker %r" % (code,))
    s3.complete_multipart_upload(Bucket="vupc", Key="dst", UploadId=up,
                                 MultipartUpload={"Parts": parts})
    check(body(s3, "vupc", "dst") == old[0] + old[1], "the parts are the old versions' bytes")


if __name__ == "__main__":
    run_tests([test_config, test_versions_round_trip, test_bad_ids, test_suspended,
               test_suspended_large_reclaim,
               test_list_paging, test_list_params, test_large_versions, test_copy_version,
               test_other_account,
               test_delete_objects, test_tagging_by_version, test_version_actions_in_policies,
               test_conditional_writes, test_two_gateways, test_lifecycle_marks_versioned,
               test_acl_by_version, test_upload_part_copy_version],
              {"settings": SETTINGS})
