"""cairn-gateway with boto3 over 3 real storage nodes: health, buckets,
objects (put/get/head/delete, metadata, ranges, conditionals, copy,
multi-delete), listings (v1/v2, prefixes, delimiters, paging), and the S3
errors of refused requests, each followed by a check that stored data did
not change."""
import hashlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import check, error_code, run_tests  # noqa: E402


def test_health_and_anonymous(c):
    r = c.raw(b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    check(r.startswith(b"HTTP/1.1 200") and r.endswith(b"ok\n"), "health %r" % r)
    r = c.raw(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    check(r.startswith(b"HTTP/1.1 403") and b"<Code>AccessDenied</Code>" in r, "anon %r" % r)
    check(b"x-amz-request-id: " in r, "request id header")


def test_buckets(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="alpha")
    # with ACLs disabled (bucket owner enforced, asked for here; the
    # gateway's default is ObjectWriter) a public one is refused and creates
    # nothing; "private" restates the owner's own
    check(error_code(s3.create_bucket, Bucket="beta", ACL="public-read",
                     ObjectOwnership="BucketOwnerEnforced") ==
          ("InvalidBucketAclWithObjectOwnership", 400), "public bucket ACL")
    check([b["Name"] for b in s3.list_buckets()["Buckets"]] == ["alpha"],
          "no bucket from a refused ACL")
    s3.create_bucket(Bucket="beta", ACL="private")
    names = [b["Name"] for b in s3.list_buckets()["Buckets"]]
    check(names == ["alpha", "beta"], "list buckets %r" % names)
    s3.head_bucket(Bucket="alpha")
    check(s3.get_bucket_location(Bucket="alpha").get("LocationConstraint") in (None, ""),
          "location")
    # us-east-1: S3 answers its owner's re-create 200 (test_gateway_sdk_behaviour
    # checks the other regions' 409 BucketAlreadyOwnedByYou)
    check(s3.create_bucket(Bucket="alpha")["ResponseMetadata"]["HTTPStatusCode"] == 200,
          "recreate")
    other = c.boto(access_key="AKIAOTHERUSER0000000",
                   secret_key="other-secret-key-0000000000000000000000")
    check(error_code(other.create_bucket, Bucket="alpha") == ("BucketAlreadyExists", 409),
          "other owner")
    check(other.list_buckets()["Buckets"] == [], "other sees none")
    for bad in ("ab", "Upper", "a..b", "192.168.1.1", "-ab", "a" * 64):
        check(error_code(s3.create_bucket, Bucket=bad)[0] in ("InvalidBucketName",),
              "bad name %s" % bad)
    check(error_code(s3.head_bucket, Bucket="nosuch")[1] == 404, "head missing")
    s3.put_object(Bucket="beta", Key="k", Body=b"x")
    check(error_code(s3.delete_bucket, Bucket="beta") == ("BucketNotEmpty", 409), "not empty")
    s3.delete_object(Bucket="beta", Key="k")
    s3.delete_bucket(Bucket="beta")
    check(error_code(s3.delete_bucket, Bucket="beta") == ("NoSuchBucket", 404), "deleted")
    check([b["Name"] for b in s3.list_buckets()["Buckets"]] == ["alpha"], "after delete")


def test_objects(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="obj")
    data = os.urandom(300000)
    r = s3.put_object(Bucket="obj", Key="dir/a b+c.bin", Body=data, ContentType="image/png",
                      CacheControl="max-age=60", ContentDisposition="inline",
                      Metadata={"color": "blue", "Mixed-Case": "v"})
    etag = '"%s"' % hashlib.md5(data).hexdigest()
    check(r["ETag"] == etag, "etag %r" % r["ETag"])
    g = s3.get_object(Bucket="obj", Key="dir/a b+c.bin")
    check(g["Body"].read() == data, "body")
    check(g["ContentType"] == "image/png" and g["CacheControl"] == "max-age=60", "headers")
    check(g["ContentDisposition"] == "inline", "disposition")
    check(g["Metadata"] == {"color": "blue", "mixed-case": "v"}, "meta %r" % g["Metadata"])
    check(g["ETag"] == etag and g["ContentLength"] == len(data), "etag/len")
    h = s3.head_object(Bucket="obj", Key="dir/a b+c.bin")
    check(h["ContentLength"] == len(data) and h["ETag"] == etag, "head")
    check(abs(h["LastModified"].timestamp() - time.time()) < 60, "last-modified")
    # overwrite, empty object, unicode key
    s3.put_object(Bucket="obj", Key="dir/a b+c.bin", Body=b"small")
    check(s3.get_object(Bucket="obj", Key="dir/a b+c.bin")["Body"].read() == b"small", "ovw")
    s3.put_object(Bucket="obj", Key="empty", Body=b"")
    check(s3.get_object(Bucket="obj", Key="empty")["Body"].read() == b"", "empty")
    s3.put_object(Bucket="obj", Key="ünï/cödé ✓", Body=b"u")
    check(s3.get_object(Bucket="obj", Key="ünï/cödé ✓")["Body"].read() == b"u", "unicode")
    # delete
    s3.delete_object(Bucket="obj", Key="empty")
    check(error_code(s3.get_object, Bucket="obj", Key="empty") == ("NoSuchKey", 404), "gone")
    check(error_code(s3.head_object, Bucket="obj", Key="empty")[1] == 404, "head gone")
    s3.delete_object(Bucket="obj", Key="never-was")  # S3: 204 anyway
    check(error_code(s3.get_object, Bucket="nosuchb", Key="k") == ("NoSuchBucket", 404), "nb")
    check(error_code(s3.put_object, Bucket="nosuchb", Key="k", Body=b"1") ==
          ("NoSuchBucket", 404), "put nb")


def test_ranges_and_conditionals(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="rng")
    data = bytes(range(256)) * 40
    etag = s3.put_object(Bucket="rng", Key="k", Body=data)["ETag"]
    for rng, want in (("bytes=0-9", data[0:10]), ("bytes=100-", data[100:]),
                      ("bytes=-7", data[-7:]), ("bytes=10000-99999", data[10000:])):
        g = s3.get_object(Bucket="rng", Key="k", Range=rng)
        check(g["Body"].read() == want, "range %s" % rng)
        check(g["ResponseMetadata"]["HTTPStatusCode"] == 206, "206")
        check(g["ContentRange"].startswith("bytes ") and g["ContentRange"].endswith("/10240"),
              "content-range %s" % g["ContentRange"])
    check(error_code(s3.get_object, Bucket="rng", Key="k", Range="bytes=20000-") ==
          ("InvalidRange", 416), "416")
    g = s3.get_object(Bucket="rng", Key="k", Range="bytes=5-2")  # syntax: whole object
    check(g["ResponseMetadata"]["HTTPStatusCode"] == 200, "ignored range")
    check(s3.get_object(Bucket="rng", Key="k", IfMatch=etag)["Body"].read() == data, "if-match")
    check(error_code(s3.get_object, Bucket="rng", Key="k", IfMatch='"nope"') ==
          ("PreconditionFailed", 412), "412")
    check(error_code(s3.get_object, Bucket="rng", Key="k", IfNoneMatch=etag)[1] == 304, "304")
    past = time.time() - 3600
    fut = time.time() + 3600
    import datetime
    dt = datetime.datetime.utcfromtimestamp
    check(error_code(s3.get_object, Bucket="rng", Key="k", IfModifiedSince=dt(fut))[1] == 304,
          "ims")
    check(s3.get_object(Bucket="rng", Key="k", IfModifiedSince=dt(past))["ContentLength"] ==
          len(data), "ims past")
    check(error_code(s3.get_object, Bucket="rng", Key="k", IfUnmodifiedSince=dt(past)) ==
          ("PreconditionFailed", 412), "ius")
    check(error_code(s3.head_object, Bucket="rng", Key="k", IfNoneMatch=etag)[1] == 304,
          "head 304")


def test_copy_and_multidelete(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="cpy")
    s3.put_object(Bucket="cpy", Key="src", Body=b"hello", ContentType="text/x-a",
                  Metadata={"a": "1"})
    r = s3.copy_object(Bucket="cpy", Key="dst", CopySource={"Bucket": "cpy", "Key": "src"})
    check(r["CopyObjectResult"]["ETag"] == '"%s"' % hashlib.md5(b"hello").hexdigest(), "etag")
    g = s3.get_object(Bucket="cpy", Key="dst")
    check(g["Body"].read() == b"hello" and g["Metadata"] == {"a": "1"}, "copied meta")
    check(g["ContentType"] == "text/x-a", "copied type")
    s3.copy_object(Bucket="cpy", Key="dst2", CopySource="cpy/src", MetadataDirective="REPLACE",
                   Metadata={"b": "2"}, ContentType="text/x-b")
    g = s3.get_object(Bucket="cpy", Key="dst2")
    check(g["Metadata"] == {"b": "2"} and g["ContentType"] == "text/x-b", "replaced meta")
    check(error_code(s3.copy_object, Bucket="cpy", Key="src", CopySource="cpy/src") ==
          ("InvalidRequest", 400), "self copy")
    check(error_code(s3.copy_object, Bucket="cpy", Key="x", CopySource="cpy/nosuch") ==
          ("NoSuchKey", 404), "missing source")
    check(error_code(s3.copy_object, Bucket="cpy", Key="x", CopySource="cpy/src",
                     CopySourceIfMatch='"bad"') == ("PreconditionFailed", 412), "copy if")
    keys = ["m/%d" % i for i in range(20)]
    for k in keys:
        s3.put_object(Bucket="cpy", Key=k, Body=k.encode())
    r = s3.delete_objects(Bucket="cpy", Delete={"Objects": [{"Key": k} for k in keys[:10]]})
    check(sorted(d["Key"] for d in r["Deleted"]) == sorted(keys[:10]), "deleted %r" % r)
    r = s3.delete_objects(Bucket="cpy", Delete={"Objects": [{"Key": k} for k in keys[10:]],
                                               "Quiet": True})
    check(not r.get("Deleted") and not r.get("Errors"), "quiet %r" % r)
    check(s3.list_objects_v2(Bucket="cpy", Prefix="m/")["KeyCount"] == 0, "all gone")


def test_listing(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="lst")
    keys = sorted(["a", "b/1", "b/2", "b/c/3", "c", "d/x", "d/y", "e%f", "z z"] +
                  ["p/%03d" % i for i in range(25)])
    for k in keys:
        s3.put_object(Bucket="lst", Key=k, Body=b"1")
    r = s3.list_objects_v2(Bucket="lst")
    check([o["Key"] for o in r["Contents"]] == keys and r["KeyCount"] == len(keys), "all")
    r = s3.list_objects_v2(Bucket="lst", Delimiter="/")
    check([o["Key"] for o in r["Contents"]] == ["a", "c", "e%f", "z z"], "top keys")
    check([p["Prefix"] for p in r["CommonPrefixes"]] == ["b/", "d/", "p/"], "prefixes")
    r = s3.list_objects_v2(Bucket="lst", Prefix="b/", Delimiter="/")
    check([o["Key"] for o in r["Contents"]] == ["b/1", "b/2"], "b/")
    check([p["Prefix"] for p in r["CommonPrefixes"]] == ["b/c/"], "b/c/")
    # paging v2 with continuation tokens, small pages
    got, token = [], None
    while True:
        kw = {"ContinuationToken": token} if token else {}
        r = s3.list_objects_v2(Bucket="lst", MaxKeys=4, **kw)
        got += [o["Key"] for o in r.get("Contents", [])]
        if not r["IsTruncated"]:
            break
        token = r["NextContinuationToken"]
    check(got == keys, "paged v2 %r" % got)
    # paging with a delimiter: prefixes count toward max-keys
    got, token = [], None
    while True:
        kw = {"ContinuationToken": token} if token else {}
        r = s3.list_objects_v2(Bucket="lst", MaxKeys=2, Delimiter="/", **kw)
        got += [o["Key"] for o in r.get("Contents", [])]
        got += [p["Prefix"] for p in r.get("CommonPrefixes", [])]
        if not r["IsTruncated"]:
            break
        token = r["NextContinuationToken"]
    check(sorted(got) == ["a", "b/", "c", "d/", "e%f", "p/", "z z"], "paged delim %r" % got)
    # v1 with markers
    got, marker = [], ""
    while True:
        r = s3.list_objects(Bucket="lst", MaxKeys=5, Marker=marker)
        page = [o["Key"] for o in r.get("Contents", [])]
        got += page
        if not r["IsTruncated"]:
            break
        marker = r.get("NextMarker", page[-1])
    check(got == keys, "paged v1")
    r = s3.list_objects_v2(Bucket="lst", StartAfter="p/020")
    check([o["Key"] for o in r["Contents"]] == [k for k in keys if k > "p/020"], "start-after")
    r = s3.list_objects_v2(Bucket="lst", Prefix="z", EncodingType="url")
    check(r["Contents"][0]["Key"] in ("z z", "z%20z", "z+z"), "url encoding")
    r = s3.list_objects_v2(Bucket="lst", Prefix="a", FetchOwner=True)
    check(r["Contents"][0]["Owner"]["ID"] == "cairn-dev", "fetch-owner")
    r = s3.list_objects_v2(Bucket="lst", MaxKeys=0)
    check(r["KeyCount"] == 0 and not r["IsTruncated"], "max-keys 0")
    check(error_code(s3.list_objects_v2, Bucket="nosuch") == ("NoSuchBucket", 404), "nb")


def test_auth_errors(c):
    s3 = c.boto(signature_version="s3v4")
    s3.create_bucket(Bucket="auth")
    s3.put_object(Bucket="auth", Key="k", Body=b"keep")
    bad = c.boto(secret_key="wrong-secret")
    check(error_code(bad.put_object, Bucket="auth", Key="k", Body=b"evil") ==
          ("SignatureDoesNotMatch", 403), "bad sig")
    unknown = c.boto(access_key="AKIANOBODY0000000000")
    check(error_code(unknown.get_object, Bucket="auth", Key="k") ==
          ("InvalidAccessKeyId", 403), "unknown key")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "auth", "Key": "k"},
                                    ExpiresIn=60)
    import urllib.request
    check(urllib.request.urlopen(url).read() == b"keep", "presigned get")
    put_url = s3.generate_presigned_url("put_object", Params={"Bucket": "auth", "Key": "p"},
                                        ExpiresIn=60)
    req = urllib.request.Request(put_url, data=b"via url", method="PUT")
    urllib.request.urlopen(req).read()
    check(s3.get_object(Bucket="auth", Key="p")["Body"].read() == b"via url", "presigned put")
    i = url.index("X-Amz-Signature=") + len("X-Amz-Signature=")
    tampered = url[:i] + ("0" if url[i] != "0" else "1") + url[i + 1:]
    import urllib.error
    try:
        urllib.request.urlopen(tampered)
        raise AssertionError("tampered url accepted")
    except urllib.error.HTTPError as e:
        check(e.code == 403, "tampered %d" % e.code)
    check(s3.get_object(Bucket="auth", Key="k")["Body"].read() == b"keep", "unchanged")


def test_malformed(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="mal")
    s3.put_object(Bucket="mal", Key="keep", Body=b"keep")
    check(error_code(s3.put_object, Bucket="mal", Key="k" * 1025, Body=b"x") ==
          ("KeyTooLongError", 400), "long key")
    # S3 keys are flat strings: "a/../keep" is its own key, never "keep"
    s3.put_object(Bucket="mal", Key="a/../keep", Body=b"dots")
    check(s3.get_object(Bucket="mal", Key="a/../keep")["Body"].read() == b"dots",
          "dot segment key")
    s3.delete_object(Bucket="mal", Key="a/../keep")
    check(error_code(s3.put_object, Bucket="mal", Key="keep", Body=b"x",
                     ContentMD5="1B2M2Y8AsgTpgAmY7PhCfg==") == ("BadDigest", 400), "bad md5")
    check(error_code(s3.put_object, Bucket="mal", Key="keep", Body=b"x",
                     ContentMD5="nope") == ("InvalidDigest", 400), "invalid md5")
    check(error_code(s3.delete_objects, Bucket="mal", Delete={"Objects": []})[0] in
          ("MalformedXML",), "empty delete")
    r = c.raw(b"GET /mal/keep HTTP/1.1\r\nHost: x\r\n" + b"X-Big: " + b"a" * 70000 +
              b"\r\n\r\n")
    check(r.startswith(b"HTTP/1.1 400") and b"RequestHeaderSectionTooLarge" in r,
          "big header %r" % r[:200])
    r = c.raw(b"GET /mal/keep HTTP/1.1\r\nHost x\r\nConnection: close\r\n\r\n")
    check(r.startswith(b"HTTP/1.1 400"), "bad header line %r" % r[:100])
    r = c.raw(b"GET /mal/%00x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    check(r.startswith(b"HTTP/1.1 400"), "NUL key %r" % r[:100])
    check(s3.get_object(Bucket="mal", Key="keep")["Body"].read() == b"keep", "unchanged")


def test_bucket_owner_only(c):
    """Only the bucket's owner may use it: every bucket and object operation of
    another account is AccessDenied (403), and leaves the data unchanged; a
    copy out of a foreign bucket is refused too."""
    s3 = c.boto()
    other = c.boto(access_key="AKIAOTHERUSER0000000",
                   secret_key="other-secret-key-0000000000000000000000")
    s3.create_bucket(Bucket="mine")
    s3.put_object(Bucket="mine", Key="k", Body=b"secret")
    denied = [
        ("head_bucket", dict(Bucket="mine")),
        ("get_bucket_location", dict(Bucket="mine")),
        ("get_bucket_versioning", dict(Bucket="mine")),
        ("get_bucket_acl", dict(Bucket="mine")),
        ("get_object_acl", dict(Bucket="mine", Key="k")),
        ("put_bucket_acl", dict(Bucket="mine", ACL="private")),
        ("list_objects", dict(Bucket="mine")),
        ("list_objects_v2", dict(Bucket="mine")),
        ("list_multipart_uploads", dict(Bucket="mine")),
        ("get_object", dict(Bucket="mine", Key="k")),
        ("head_object", dict(Bucket="mine", Key="k")),
        ("put_object", dict(Bucket="mine", Key="k", Body=b"overwritten")),
        ("put_object", dict(Bucket="mine", Key="new", Body=b"x")),
        ("delete_object", dict(Bucket="mine", Key="k")),
        ("delete_objects", dict(Bucket="mine", Delete={"Objects": [{"Key": "k"}]})),
        ("create_multipart_upload", dict(Bucket="mine", Key="mp")),
        ("copy_object", dict(Bucket="mine", Key="c", CopySource="mine/k")),
        ("delete_bucket", dict(Bucket="mine")),
    ]
    for op, kw in denied:
        code = error_code(getattr(other, op), **kw)
        check(code[1] == 403 and code[0] in ("AccessDenied", "403"), "%s by another account: %r" %
              (op, code))
    # the other account's own bucket cannot copy out of mine either
    other.create_bucket(Bucket="theirs")
    check(error_code(other.copy_object, Bucket="theirs", Key="c", CopySource="mine/k") ==
          ("AccessDenied", 403), "copy from a foreign bucket")
    check(error_code(s3.copy_object, Bucket="mine", Key="c2", CopySource="theirs/none") ==
          ("AccessDenied", 403), "owner copying from a foreign bucket")
    # nothing changed, and the owner still works
    check(s3.get_object(Bucket="mine", Key="k")["Body"].read() == b"secret", "data unchanged")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="mine").get("Contents", [])]
    check(keys == ["k"], "keys %r" % keys)
    # a missing bucket is still NoSuchBucket for anyone
    check(error_code(other.get_object, Bucket="nosuchbkt", Key="k") == ("NoSuchBucket", 404),
          "missing bucket")
    s3.delete_object(Bucket="mine", Key="k")
    s3.delete_bucket(Bucket="mine")
    other.delete_bucket(Bucket="theirs")


if __name__ == "__main__":
    run_tests([test_health_and_anonymous, test_buckets, test_objects,
               test_ranges_and_conditionals, test_copy_and_multidelete, test_listing,
               test_auth_errors, test_malformed, test_bucket_owner_only])
