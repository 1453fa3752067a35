#!/usr/bin/env python3
"""The isolation matrix: account B and an anonymous client try every S3
operation on account A's bucket, objects and uploads, and copy A's objects
(small, chunked and multipart) with every encoding of x-amz-copy-source an
attacker would try. Each must be refused with S3's answer, and A's data must
be unchanged afterwards. A copies its own objects with the same encodings
(the one parser must decode every variant to the same bucket and key)."""
import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from secutil import accounts, check, error_code, run_tests  # noqa: E402

A_BUCKET = "seca"
B_BUCKET = "secb"
SMALL = os.urandom(4096)
CHUNKED = os.urandom(300 * 1024)          # > threshold_of_chunk_len below
PART1 = os.urandom(5 * 1024 * 1024)
PART2 = os.urandom(1024)
# keys an attacker would spell in many ways
KEYS = {"k": SMALL, "a b": SMALL, "a+b": SMALL, "a?b": SMALL, "a%b": SMALL,
        "d\u00fcr/x": SMALL, "big": CHUNKED, "mp": PART1 + PART2}


def quote(s, safe="/"):
    from urllib.parse import quote as q
    return q(s, safe=safe)


def variants(bucket, key):
    """Every spelling of x-amz-copy-source for bucket/key that S3 decodes to
    the same object: (name, header value)."""
    qk = quote(key, safe="")
    enc_bucket = "".join("%%%02X" % ord(ch) for ch in bucket)
    v = [
        ("plain", "%s/%s" % (bucket, qk)),
        ("leading slash", "/%s/%s" % (bucket, qk)),
        ("encoded slash", "%s%%2F%s" % (bucket, qk)),
        ("encoded slash lower", "%s%%2f%s" % (bucket, qk)),
        ("encoded first letter", "%%%02X%s/%s" % (ord(bucket[0]), bucket[1:], qk)),
        ("encoded bucket", "%s/%s" % (enc_bucket, qk)),
        ("all encoded", "%%2F%s%%2F%s" % (enc_bucket, qk)),
        ("version null", "%s/%s?versionId=null" % (bucket, qk)),
        ("slash kept in key", "%s/%s" % (bucket, quote(key, safe="/"))),
    ]
    if key == "a b":
        v.append(("raw space", "%s/a b" % bucket))
    if key == "a+b":
        v.append(("raw plus", "%s/a+b" % bucket))
    return v


_RAW = {}


def _raw_copy_source(request, **kw):
    # botocore percent-encodes a string CopySource; the attack needs the
    # header exactly as written, so it is set again before signing
    if "src" in _RAW and "x-amz-copy-source" in request.headers:
        del request.headers["x-amz-copy-source"]   # (assigning would add a second one)
        request.headers["x-amz-copy-source"] = _RAW["src"]


def raw_src(cl, fn, src, **kw):
    """Calls cl.fn with x-amz-copy-source sent byte for byte as src."""
    if not getattr(cl, "_raw_hooked", False):
        cl.meta.events.register("before-sign.s3", _raw_copy_source)
        cl._raw_hooked = True
    _RAW["src"] = src
    try:
        return fn(CopySource=src, **kw)
    finally:
        _RAW.clear()


def raw_src_error(cl, fn, src, **kw):
    from botocore.exceptions import ClientError
    try:
        raw_src(cl, fn, src, **kw)
    except ClientError as e:
        return (e.response["Error"].get("Code"),
                e.response["ResponseMetadata"]["HTTPStatusCode"])
    raise AssertionError("%s %s did not fail" % (fn.__name__, src))


def put_all(s3, bucket):
    for k, data in KEYS.items():
        if k == "mp":
            up = s3.create_multipart_upload(Bucket=bucket, Key=k)["UploadId"]
            e1 = s3.upload_part(Bucket=bucket, Key=k, UploadId=up, PartNumber=1, Body=PART1)
            e2 = s3.upload_part(Bucket=bucket, Key=k, UploadId=up, PartNumber=2, Body=PART2)
            s3.complete_multipart_upload(
                Bucket=bucket, Key=k, UploadId=up,
                MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e1["ETag"]},
                                           {"PartNumber": 2, "ETag": e2["ETag"]}]})
        else:
            s3.put_object(Bucket=bucket, Key=k, Body=data)


def digest(s3, bucket, key):
    return hashlib.sha256(s3.get_object(Bucket=bucket, Key=key)["Body"].read()).hexdigest()


def setup(c):
    a, b, _ = accounts(c)
    a.create_bucket(Bucket=A_BUCKET)
    b.create_bucket(Bucket=B_BUCKET)
    put_all(a, A_BUCKET)
    c.a_upload = a.create_multipart_upload(Bucket=A_BUCKET, Key="pending")["UploadId"]
    a.upload_part(Bucket=A_BUCKET, Key="pending", UploadId=c.a_upload, PartNumber=1,
                  Body=b"x" * 1024)
    c.b_upload = b.create_multipart_upload(Bucket=B_BUCKET, Key="dst")["UploadId"]


DENIED = ("AccessDenied", 403)
HEAD_DENIED = ("403", 403)


def refused(who, fn, expect=DENIED, **kw):
    got = error_code(fn, **kw)
    check(got == expect, "%s %s%r: %r, want %r" % (who, fn.__name__, kw, got, expect))


def test_copy_encodings_cross_account(c):
    """B's CopyObject and UploadPartCopy from A's bucket into B's own, with
    every encoding of the source: AccessDenied, and nothing lands in B."""
    _, b, anon = accounts(c)
    n = 0
    for key in KEYS:
        for name, src in variants(A_BUCKET, key):
            for who, cl in (("B", b), ("anonymous", anon)):
                got = raw_src_error(cl, cl.copy_object, src, Bucket=B_BUCKET, Key="stolen")
                check(got == DENIED, "%s CopyObject %s (%s): %r" % (who, src, name, got))
                got = raw_src_error(cl, cl.upload_part_copy, src, Bucket=B_BUCKET, Key="dst",
                                    UploadId=c.b_upload, PartNumber=1)
                check(got == DENIED, "%s UploadPartCopy %s (%s): %r" % (who, src, name, got))
                n += 2
    check(b.list_objects_v2(Bucket=B_BUCKET).get("KeyCount") == 0, "nothing copied into B")
    check("Parts" not in b.list_parts(Bucket=B_BUCKET, Key="dst", UploadId=c.b_upload),
          "no part copied into B's upload")
    # every refusal has its access line: the log's rate limit (per call
    # site) must not eat the one line per request
    lines = c.log_text().count("\"PUT /%s/stolen\" 403" % B_BUCKET)
    check(lines >= n // 2, "access lines: %d of %d" % (lines, n // 2))
    print("    %d cross-account copies refused" % n)


def test_copy_encodings_own(c):
    """A copies its own objects with the same spellings: each decodes to the
    same source (the checked bucket is the copied bucket)."""
    a, _, _ = accounts(c)
    for key in ("k", "a b", "a+b", "a?b", "a%b", "d\u00fcr/x", "big"):
        want = hashlib.sha256(KEYS[key]).hexdigest()
        for name, src in variants(A_BUCKET, key):
            raw_src(a, a.copy_object, src, Bucket=A_BUCKET, Key="copy")
            check(digest(a, A_BUCKET, "copy") == want, "A copy %s (%s)" % (src, name))
    up = a.create_multipart_upload(Bucket=A_BUCKET, Key="pc")["UploadId"]
    for name, src in variants(A_BUCKET, "a%b"):
        r = raw_src(a, a.upload_part_copy, src, Bucket=A_BUCKET, Key="pc", UploadId=up,
                    PartNumber=1)
        check("CopyPartResult" in r, "A part copy %s (%s)" % (src, name))
    a.abort_multipart_upload(Bucket=A_BUCKET, Key="pc", UploadId=up)
    # a version other than null, or anything else after '?', is refused by
    # both operations alike
    for src in ("%s/k?versionId=v1" % A_BUCKET, "%s/k?foo=bar" % A_BUCKET,
                "%s/k?" % A_BUCKET, "%s/k?versionId=null&x=1" % A_BUCKET):
        check(raw_src_error(a, a.copy_object, src, Bucket=A_BUCKET, Key="c2")[1] == 400,
              "CopyObject %s" % src)
    up = a.create_multipart_upload(Bucket=A_BUCKET, Key="pc")["UploadId"]
    for src in ("%s/k?versionId=v1" % A_BUCKET, "%s/k?foo=bar" % A_BUCKET):
        check(raw_src_error(a, a.upload_part_copy, src, Bucket=A_BUCKET, Key="pc", UploadId=up,
                            PartNumber=1)[1] == 400, "UploadPartCopy %s" % src)
    a.abort_multipart_upload(Bucket=A_BUCKET, Key="pc", UploadId=up)
    # an encoded '?' is part of the key: 'a?b' exists, 'a' does not
    raw_src(a, a.copy_object, "%s/a%%3Fb" % A_BUCKET, Bucket=A_BUCKET, Key="c3")
    check(digest(a, A_BUCKET, "c3") == hashlib.sha256(SMALL).hexdigest(), "copy of 'a?b'")
    check(raw_src_error(a, a.copy_object, "%s/a?b" % A_BUCKET, Bucket=A_BUCKET,
                        Key="c3")[1] == 400, "literal ? starts the query")
    a.delete_object(Bucket=A_BUCKET, Key="copy")
    a.delete_object(Bucket=A_BUCKET, Key="c3")


def test_b_into_a(c):
    """B copies its own object into A's bucket, or into A's upload: denied."""
    _, b, anon = accounts(c)
    b.put_object(Bucket=B_BUCKET, Key="mine", Body=b"b's bytes")
    for who, cl in (("B", b), ("anonymous", anon)):
        refused(who, cl.copy_object, Bucket=A_BUCKET, Key="k", CopySource="%s/mine" % B_BUCKET)
        refused(who, cl.upload_part_copy, Bucket=A_BUCKET, Key="pending", UploadId=c.a_upload,
                PartNumber=2, CopySource="%s/mine" % B_BUCKET)
    b.delete_object(Bucket=B_BUCKET, Key="mine")


def test_every_operation(c):
    """Every operation of B and of an anonymous client on A's bucket,
    objects and uploads is refused the way S3 refuses it."""
    _, b, anon = accounts(c)
    bk, up = A_BUCKET, c.a_upload
    acp = {"Owner": {"ID": "other"}, "Grants": []}
    for who, s3 in (("B", b), ("anonymous", anon)):
        refused(who, s3.head_bucket, HEAD_DENIED, Bucket=bk)
        refused(who, s3.list_objects, Bucket=bk)
        refused(who, s3.list_objects_v2, Bucket=bk)
        refused(who, s3.list_object_versions, Bucket=bk)
        refused(who, s3.get_bucket_location, Bucket=bk)
        refused(who, s3.list_multipart_uploads, Bucket=bk)
        refused(who, s3.get_bucket_acl, Bucket=bk)
        refused(who, s3.put_bucket_acl, Bucket=bk, ACL="private")
        refused(who, s3.put_bucket_acl, Bucket=bk, AccessControlPolicy=acp)
        refused(who, s3.get_bucket_versioning, Bucket=bk)
        refused(who, s3.get_bucket_policy, Bucket=bk)
        refused(who, s3.get_bucket_cors, Bucket=bk)
        refused(who, s3.get_bucket_tagging, Bucket=bk)
        refused(who, s3.delete_bucket_policy, Bucket=bk)
        refused(who, s3.delete_bucket, Bucket=bk)
        refused(who, s3.delete_objects, Bucket=bk, Delete={"Objects": [{"Key": "k"}]})
        refused(who, s3.get_object, Bucket=bk, Key="k")
        refused(who, s3.get_object, Bucket=bk, Key="big", Range="bytes=0-9")
        refused(who, s3.head_object, HEAD_DENIED, Bucket=bk, Key="k")
        refused(who, s3.head_object, HEAD_DENIED, Bucket=bk, Key="nonexistent")
        refused(who, s3.get_object, Bucket=bk, Key="nonexistent")
        refused(who, s3.put_object, Bucket=bk, Key="k", Body=b"overwritten")
        refused(who, s3.put_object, Bucket=bk, Key="new", Body=b"planted")
        refused(who, s3.delete_object, Bucket=bk, Key="k")
        refused(who, s3.get_object_acl, Bucket=bk, Key="k")
        refused(who, s3.put_object_acl, Bucket=bk, Key="k", ACL="private")
        refused(who, s3.get_object_tagging, Bucket=bk, Key="k")
        refused(who, s3.put_object_tagging, Bucket=bk, Key="k",
                Tagging={"TagSet": [{"Key": "evil", "Value": "1"}]})
        refused(who, s3.delete_object_tagging, Bucket=bk, Key="k")
        refused(who, s3.create_multipart_upload, Bucket=bk, Key="mp2")
        refused(who, s3.upload_part, Bucket=bk, Key="pending", UploadId=up, PartNumber=1,
                Body=b"evil")
        refused(who, s3.list_parts, Bucket=bk, Key="pending", UploadId=up)
        refused(who, s3.complete_multipart_upload, Bucket=bk, Key="pending", UploadId=up,
                MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": '"x"'}]})
        refused(who, s3.abort_multipart_upload, Bucket=bk, Key="pending", UploadId=up)
    # B may not take the name; anonymous may not create anything
    check(error_code(b.create_bucket, Bucket=bk) == ("BucketAlreadyExists", 409),
          "B CreateBucket on A's name")
    check(error_code(anon.create_bucket, Bucket="anon-bucket") == DENIED, "anonymous create")
    names = [x["Name"] for x in b.list_buckets()["Buckets"]]
    check(bk not in names and B_BUCKET in names, "B's ListBuckets: %r" % names)
    check(error_code(anon.list_buckets) == DENIED, "anonymous ListBuckets")


def test_a_unchanged(c):
    """After every attempt above A's data is exactly what A wrote."""
    a, _, _ = accounts(c)
    for k, data in KEYS.items():
        check(digest(a, A_BUCKET, k) == hashlib.sha256(data).hexdigest(), "A's %r" % k)
    keys = sorted(x["Key"] for x in a.list_objects_v2(Bucket=A_BUCKET)["Contents"])
    check(keys == sorted(KEYS), "A's keys: %r" % keys)
    parts = a.list_parts(Bucket=A_BUCKET, Key="pending", UploadId=c.a_upload)["Parts"]
    check([p["Size"] for p in parts] == [1024], "A's pending upload: %r" % parts)


if __name__ == "__main__":
    run_tests([setup, test_copy_encodings_cross_account, test_copy_encodings_own, test_b_into_a,
               test_every_operation, test_a_unchanged],
              {"nodes": 1, "settings": {"large_object.threshold_of_chunk_len": "64K",
                                        "large_object.chunked_obj_len": "64K",
                                        "large_object.reading_chunked_obj_len": "64K"}})
