#!/usr/bin/env python3
"""Access control through the one decision (gateway/s3/access.c): canned
ACLs, grants, AccessControlPolicy documents, Object Ownership and the public
access block, tried by the owner A, another account B and an anonymous
client (boto3 UNSIGNED and plain HTTP), with the spellings an attacker would
use (percent-encoded keys, ../, case variations of header names and keys).

S3 behaviour followed:
https://docs.aws.amazon.com/AmazonS3/latest/userguide/acl-overview.html
https://docs.aws.amazon.com/AmazonS3/latest/userguide/about-object-ownership.html
https://docs.aws.amazon.com/AmazonS3/latest/userguide/access-control-block-public-access.html

A configuration change reaches every worker within s3.bucket_owner_ttl
(docs/security.md); this cluster runs with 1s, and the checks of a change
that takes access away wait for that bound (eventually())."""
import http.client
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from secutil import accounts, check, error_code, run_tests  # noqa: E402

A_ID, B_ID = "cairn-dev", "other"
DENIED = ("AccessDenied", 403)
ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"
TTL_S = 1.0


def raw(c, method, path, headers=None, body=None):
    """An unsigned request as a browser or curl sends it: (status, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", c.port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def eventually(fn, what, bound=TTL_S + 2.0):
    """fn() must become true within the cache bound: a change may be
    served from another worker's cached config until s3.bucket_owner_ttl
    has passed (docs/security.md). An exception counts as not yet."""
    from botocore.exceptions import ClientError
    deadline = time.monotonic() + bound
    while True:
        try:
            if fn():
                return
        except ClientError:
            pass
        if time.monotonic() > deadline:
            check(False, what)
        time.sleep(0.1)


def denied(fn, *a, **kw):
    """Is the call refused with 403 AccessDenied (False when it succeeds)?"""
    try:
        return error_code(fn, *a, **kw) == DENIED
    except AssertionError:
        return False


def grants_of(r):
    return sorted((g["Grantee"].get("ID") or g["Grantee"].get("URI"), g["Grantee"]["Type"],
                   g["Permission"]) for g in r["Grants"])


def test_public_read_object(c):
    a, b, anon = accounts(c)
    a.create_bucket(Bucket="acl-obj")
    a.put_object(Bucket="acl-obj", Key="pub", Body=b"public", ACL="public-read")
    a.put_object(Bucket="acl-obj", Key="priv", Body=b"private")
    a.put_object(Bucket="acl-obj", Key="a b/c", Body=b"spaced", ACL="public-read")
    check(anon.get_object(Bucket="acl-obj", Key="pub")["Body"].read() == b"public", "anon GET")
    check(anon.head_object(Bucket="acl-obj", Key="pub")["ContentLength"] == 6, "anon HEAD")
    check(b.get_object(Bucket="acl-obj", Key="pub")["Body"].read() == b"public", "B GET")
    for who, cl in (("B", b), ("anonymous", anon)):
        check(denied(cl.get_object, Bucket="acl-obj", Key="priv"), "%s private" % who)
        check(denied(cl.head_object, Bucket="acl-obj", Key="priv") or
              error_code(cl.head_object, Bucket="acl-obj", Key="priv")[1] == 403,
              "%s HEAD private" % who)
        # the bucket is private: a missing key says no more than a private one
        check(denied(cl.get_object, Bucket="acl-obj", Key="nope"), "%s missing key" % who)
        check(denied(cl.list_objects_v2, Bucket="acl-obj"), "%s list" % who)
        check(denied(cl.put_object, Bucket="acl-obj", Key="pub", Body=b"x"), "%s overwrite" % who)
        check(denied(cl.delete_object, Bucket="acl-obj", Key="pub"), "%s delete" % who)
        check(denied(cl.get_object_acl, Bucket="acl-obj", Key="pub"), "%s read acl" % who)
        check(denied(cl.put_object_acl, Bucket="acl-obj", Key="priv", ACL="public-read"),
              "%s set acl" % who)
    # plain HTTP, and the spellings of the same and of other keys
    check(raw(c, "GET", "/acl-obj/pub") == (200, b"public"), "raw GET")
    check(raw(c, "GET", "/acl-obj/%70ub") == (200, b"public"), "encoded letter, same object")
    check(raw(c, "GET", "/acl-obj/a%20b/c") == (200, b"spaced"), "encoded space")
    for path in ("/acl-obj/priv", "/acl-obj/%70riv", "/acl-obj/PRIV", "/acl-obj/pub/../priv",
                 "/acl-obj/pub/%2E%2E/priv", "/acl-obj/pub%2F..%2Fpriv", "/acl-obj/./priv",
                 "/acl-obj//priv", "/acl-obj/pub?acl", "/acl-obj?list-type=2", "/acl-obj",
                 "/ACL-OBJ/pub", "/"):
        st, body = raw(c, "GET", path)
        want = 400 if path.startswith("/ACL") else 403   # InvalidBucketName
        check(st == want and b"private" not in body, "anon %s: %d %r" % (path, st, body[:80]))
    # response-* overrides are for signed requests only, as S3 answers
    st, body = raw(c, "GET", "/acl-obj/pub?response-content-type=text/html")
    check(st == 400 and b"InvalidRequest" in body, "anonymous override %d" % st)
    check(a.get_object(Bucket="acl-obj", Key="pub",
                       ResponseContentType="text/plain")["ContentType"] == "text/plain",
          "signed override")
    st, body = raw(c, "GET", "/pub", {"Host": "acl-obj.s3.localhost"})
    check(st == 200 and body == b"public", "virtual host %d" % st)
    # a bad signature is not anonymous: it is refused, even on a public object
    st, _ = raw(c, "GET", "/acl-obj/pub", {"authorization": "AWS4-HMAC-SHA256 garbage"})
    check(st in (400, 403), "garbage Authorization %d" % st)
    st, _ = raw(c, "GET", "/acl-obj/pub?X-Amz-Signature=00&X-Amz-Credential=x")
    check(st in (400, 403), "half a presigned query %d" % st)
    # an anonymous write that asks for a public ACL is refused all the same
    st, _ = raw(c, "PUT", "/acl-obj/anon", {"x-amz-acl": "public-read-write"}, b"x")
    check(st == 403, "anon PUT %d" % st)
    check(denied(a.get_object, Bucket="acl-obj", Key="anon") or
          error_code(a.get_object, Bucket="acl-obj", Key="anon")[0] == "NoSuchKey",
          "nothing written")


def test_public_read_bucket(c):
    a, b, anon = accounts(c)
    a.create_bucket(Bucket="acl-list", ACL="public-read")
    a.put_object(Bucket="acl-list", Key="p/one", Body=b"1")
    a.put_object(Bucket="acl-list", Key="p/pub", Body=b"2", ACL="public-read")
    keys = [o["Key"] for o in anon.list_objects_v2(Bucket="acl-list")["Contents"]]
    check(keys == ["p/one", "p/pub"], "anon list %r" % keys)
    check([o["Key"] for o in anon.list_objects(Bucket="acl-list")["Contents"]] == keys, "v1")
    check(raw(c, "GET", "/acl-list?list-type=2")[0] == 200, "raw list")
    # the objects keep their own ACLs: private stays private
    check(denied(anon.get_object, Bucket="acl-list", Key="p/one"), "private object")
    check(anon.get_object(Bucket="acl-list", Key="p/pub")["Body"].read() == b"2", "public obj")
    # who may list learns that a key is missing, as S3 tells
    check(error_code(anon.get_object, Bucket="acl-list", Key="nope") == ("NoSuchKey", 404),
          "missing key when listable")
    for who, cl in (("B", b), ("anonymous", anon)):
        check(denied(cl.put_object, Bucket="acl-list", Key="w", Body=b"x"), "%s write" % who)
        check(denied(cl.delete_objects, Bucket="acl-list",
                     Delete={"Objects": [{"Key": "p/one"}]}), "%s multi-delete" % who)
        check(denied(cl.get_bucket_acl, Bucket="acl-list"), "%s bucket acl" % who)
        check(denied(cl.put_bucket_acl, Bucket="acl-list", ACL="public-read-write"),
              "%s set bucket acl" % who)
        check(denied(cl.delete_bucket, Bucket="acl-list"), "%s delete bucket" % who)
        check(denied(cl.get_bucket_policy, Bucket="acl-list"), "%s policy" % who)
    r = a.get_bucket_acl(Bucket="acl-list")
    check(r["Owner"]["ID"] == A_ID, "owner %r" % r["Owner"])
    check(grants_of(r) == [(A_ID, "CanonicalUser", "FULL_CONTROL"),
                           (ALL_USERS, "Group", "READ")], "grants %r" % grants_of(r))
    # taking it back: private again, within the cache bound
    a.put_bucket_acl(Bucket="acl-list", ACL="private")
    eventually(lambda: denied(anon.list_objects_v2, Bucket="acl-list"), "list after private")
    check(a.get_object(Bucket="acl-list", Key="p/one")["Body"].read() == b"1", "A unaffected")


def test_public_read_write_and_grants(c):
    a, b, anon = accounts(c)
    a.create_bucket(Bucket="acl-rw", ACL="public-read-write")
    anon.put_object(Bucket="acl-rw", Key="from-anon", Body=b"hello")
    check(a.get_object(Bucket="acl-rw", Key="from-anon")["Body"].read() == b"hello",
          "owner reads an anonymous upload")
    # the anonymous writer owns its object (ObjectWriter): its ACL says so
    r = a.get_object_acl(Bucket="acl-rw", Key="from-anon")
    check(r["Owner"]["ID"] != A_ID, "object owner %r" % r["Owner"])
    anon.delete_object(Bucket="acl-rw", Key="from-anon")
    # grants by id: B may read one object, nothing else
    a.create_bucket(Bucket="acl-grant")
    a.put_object(Bucket="acl-grant", Key="for-b", Body=b"b", GrantRead='id="%s"' % B_ID)
    a.put_object(Bucket="acl-grant", Key="not-b", Body=b"n")
    check(b.get_object(Bucket="acl-grant", Key="for-b")["Body"].read() == b"b", "B granted")
    check(denied(anon.get_object, Bucket="acl-grant", Key="for-b"), "anon not granted")
    check(denied(b.get_object, Bucket="acl-grant", Key="not-b"), "B other object")
    check(denied(b.get_object_acl, Bucket="acl-grant", Key="for-b"), "READ is not READ_ACP")
    r = a.get_object_acl(Bucket="acl-grant", Key="for-b")
    check(grants_of(r) == [(B_ID, "CanonicalUser", "READ")], "header grants %r" % grants_of(r))
    check(r["Grants"][0]["Grantee"].get("DisplayName") == "other", "B's display name %r" % r)
    # a bucket grant from an AccessControlPolicy document: B may list, not write
    policy = {"Owner": {"ID": A_ID}, "Grants": [
        {"Grantee": {"Type": "CanonicalUser", "ID": A_ID}, "Permission": "FULL_CONTROL"},
        {"Grantee": {"Type": "CanonicalUser", "ID": B_ID}, "Permission": "READ"}]}
    a.put_bucket_acl(Bucket="acl-grant", AccessControlPolicy=policy)
    check(len(b.list_objects_v2(Bucket="acl-grant")["Contents"]) == 2, "B lists")
    check(denied(b.put_object, Bucket="acl-grant", Key="w", Body=b"x"), "B may not write")
    check(denied(anon.list_objects_v2, Bucket="acl-grant"), "anon may not list")
    # WRITE to B by header on the bucket, and B's object is B's
    a.put_bucket_acl(Bucket="acl-grant", GrantWrite='id="%s"' % B_ID,
                     GrantFullControl='id="%s"' % A_ID)
    b.put_object(Bucket="acl-grant", Key="by-b", Body=b"bb")
    check(b.get_object(Bucket="acl-grant", Key="by-b")["Body"].read() == b"bb", "B reads own")
    check(a.get_object_acl(Bucket="acl-grant", Key="by-b")["Owner"]["ID"] == B_ID, "B owns")
    # an object ACL set by the owner through PUT ?acl
    a.put_object_acl(Bucket="acl-grant", Key="not-b", ACL="public-read")
    check(anon.get_object(Bucket="acl-grant", Key="not-b")["Body"].read() == b"n", "now public")
    check(grants_of(a.get_object_acl(Bucket="acl-grant", Key="not-b")) ==
          [(A_ID, "CanonicalUser", "FULL_CONTROL"), (ALL_USERS, "Group", "READ")], "acl")
    a.put_object_acl(Bucket="acl-grant", Key="not-b", ACL="private")
    eventually(lambda: denied(anon.get_object, Bucket="acl-grant", Key="not-b"), "private again")


def test_acl_writes_and_errors(c):
    a, b, anon = accounts(c)
    a.create_bucket(Bucket="acl-err")
    a.put_object(Bucket="acl-err", Key="src", Body=b"s", ACL="public-read")
    # copies and multipart uploads take the request's ACL, not the source's
    a.copy_object(Bucket="acl-err", Key="copy-priv", CopySource="acl-err/src")
    check(denied(anon.get_object, Bucket="acl-err", Key="copy-priv"), "copy is private")
    a.copy_object(Bucket="acl-err", Key="copy-pub", CopySource="acl-err/src", ACL="public-read")
    check(anon.get_object(Bucket="acl-err", Key="copy-pub")["Body"].read() == b"s", "copy ACL")
    up = a.create_multipart_upload(Bucket="acl-err", Key="mp", ACL="public-read")
    part = a.upload_part(Bucket="acl-err", Key="mp", UploadId=up["UploadId"], PartNumber=1,
                         Body=b"m" * 10)
    a.complete_multipart_upload(Bucket="acl-err", Key="mp", UploadId=up["UploadId"],
                                MultipartUpload={"Parts": [{"PartNumber": 1,
                                                            "ETag": part["ETag"]}]})
    check(anon.get_object(Bucket="acl-err", Key="mp")["Body"].read() == b"m" * 10,
          "multipart ACL applied at Complete")
    # header names in any case
    st, _ = raw(c, "GET", "/acl-err/src", {"X-AMZ-ACL": "private"})
    check(st == 200, "an ACL header on a GET changes nothing")
    s3 = a
    check(error_code(s3.put_object, Bucket="acl-err", Key="x", Body=b"x", ACL="public-read",
                     GrantRead='id="%s"' % B_ID)[0] in ("InvalidRequest", "InvalidArgument"),
          "canned and grants together")
    check(error_code(s3.put_object_acl, Bucket="acl-err", Key="src",
                     GrantRead='emailAddress="x@example.com"') ==
          ("UnresolvableGrantByEmailAddress", 400), "e-mail grant")
    check(error_code(s3.put_object_acl, Bucket="acl-err", Key="src",
                     GrantRead='uri="http://example.com/evil"')[1] == 400, "unknown group")
    # an id no account has: 400 InvalidArgument, as S3 answers an unknown
    # canonical id (s3-tests test_bucket_acl_grant_nonexist_user); nothing
    # is stored or written (API_PutObjectAcl.html, x-amz-grant-*: id=)
    ghost = 'id="%s"' % ("f" * 64)
    before = a.get_object_acl(Bucket="acl-err", Key="src")["Grants"]
    for what, fn, kw in (
            ("PutObject", s3.put_object, {"Key": "ghost", "Body": b"x", "GrantRead": ghost}),
            ("CreateMultipartUpload", s3.create_multipart_upload,
             {"Key": "ghost", "GrantFullControl": ghost}),
            ("PutObjectAcl", s3.put_object_acl, {"Key": "src", "GrantWriteACP": ghost}),
            ("PutBucketAcl", s3.put_bucket_acl, {"GrantRead": ghost}),
            ("PutObjectAcl body", s3.put_object_acl, {"Key": "src", "AccessControlPolicy": {
                "Owner": {"ID": A_ID}, "Grants": [
                    {"Grantee": {"Type": "CanonicalUser", "ID": "f" * 64},
                     "Permission": "READ"}]}})):
        check(error_code(fn, Bucket="acl-err", **kw) == ("InvalidArgument", 400),
              "grant to an unknown id: %s" % what)
    check(error_code(s3.head_object, Bucket="acl-err", Key="ghost")[1] == 404, "not written")
    check(a.get_object_acl(Bucket="acl-err", Key="src")["Grants"] == before, "ACL unchanged")
    # a known account in any of the forms is fine
    s3.put_object(Bucket="acl-err", Key="known", Body=b"k", GrantRead='id="%s"' % B_ID)
    check(b.get_object(Bucket="acl-err", Key="known")["Body"].read() == b"k", "known id")
    bad_xml = b"<AccessControlPolicy><AccessControlList><Grant><Permission>READ</Permission>" \
              b"</Grant></AccessControlList></AccessControlPolicy>"
    for body, what in ((bad_xml, "grant without grantee"), (b"<nope/>", "wrong root"),
                       (b"<AccessControlPolicy>", "truncated"),
                       (b'<!DOCTYPE x [<!ENTITY e "e">]><AccessControlPolicy/>', "doctype")):
        def put_raw(request, **kw):
            request.data = body
            request.headers["Content-Length"] = str(len(body))
            for h in [h for h in request.headers.keys()
                      if h.lower() == "content-md5" or h.lower().startswith("x-amz-checksum-")
                      or h.lower() == "x-amz-sdk-checksum-algorithm"]:
                del request.headers[h]
        s3.meta.events.register("before-sign.s3.PutBucketAcl", put_raw)
        try:
            code = error_code(s3.put_bucket_acl, Bucket="acl-err",
                              AccessControlPolicy={"Owner": {"ID": A_ID}, "Grants": []})
        finally:
            s3.meta.events.unregister("before-sign.s3.PutBucketAcl", put_raw)
        check(code in (("MalformedACLError", 400), ("MalformedXML", 400)),
              "%s: %r" % (what, code))
    check(grants_of(a.get_bucket_acl(Bucket="acl-err")) ==
          [(A_ID, "CanonicalUser", "FULL_CONTROL")], "bucket ACL unchanged")
    check(error_code(s3.put_bucket_acl, Bucket="acl-err", AccessControlPolicy={
        "Owner": {"ID": B_ID}, "Grants": [
            {"Grantee": {"Type": "CanonicalUser", "ID": B_ID}, "Permission": "FULL_CONTROL"}]}) ==
          DENIED, "an ACL naming another owner")


def test_copy_sources(c):
    """A copy reads its source with s3:GetObject: another account may copy
    an object whose ACL lets it read, from a bucket it cannot list, and
    nothing else; a missing source says no more than S3 says."""
    a, b, anon = accounts(c)
    a.create_bucket(Bucket="acl-src")
    a.put_object(Bucket="acl-src", Key="pub", Body=b"p" * 100, ACL="public-read")
    a.put_object(Bucket="acl-src", Key="priv", Body=b"secret")
    b.create_bucket(Bucket="acl-dst")
    b.copy_object(Bucket="acl-dst", Key="c", CopySource="acl-src/pub")
    check(b.get_object(Bucket="acl-dst", Key="c")["Body"].read() == b"p" * 100, "copied")
    for src in ("acl-src/priv", "acl-src/%70riv", "acl-src%2Fpriv", "/acl-src/priv",
                "acl-src/pub/../priv", "acl-src/nope"):
        # (boto3 encodes the string again: some spellings name no bucket, 400)
        code = error_code(b.copy_object, Bucket="acl-dst", Key="d", CopySource=src)
        check(code == DENIED or code[1] == 400, "copy %s: %r" % (src, code))
    up = b.create_multipart_upload(Bucket="acl-dst", Key="mp")
    b.upload_part_copy(Bucket="acl-dst", Key="mp", UploadId=up["UploadId"], PartNumber=1,
                       CopySource="acl-src/pub")
    check(denied(b.upload_part_copy, Bucket="acl-dst", Key="mp", UploadId=up["UploadId"],
                 PartNumber=2, CopySource="acl-src/priv"), "part copy of a private source")
    b.abort_multipart_upload(Bucket="acl-dst", Key="mp", UploadId=up["UploadId"])
    check(error_code(a.copy_object, Bucket="acl-src", Key="x", CopySource="acl-src/nope") ==
          ("NoSuchKey", 404), "the owner learns the source is missing")
    check(error_code(b.head_object, Bucket="acl-dst", Key="d")[1] == 404, "nothing copied")


def test_acl_write_to_deleted_bucket(c):
    """A write with an ACL re-reads the bucket's config when its cached one
    (another worker's) may be stale; a bucket deleted meanwhile answers
    NoSuchBucket, never loops or hangs."""
    a = accounts(c)[0]
    for i in range(6):
        a.create_bucket(Bucket="acl-gone")
        # clients of their own connect anew, so both worker threads learn it
        for _ in range(6):
            accounts(c)[0].put_object(Bucket="acl-gone", Key="k", Body=b"x")
        a.delete_object(Bucket="acl-gone", Key="k")
        a.delete_bucket(Bucket="acl-gone")
        for _ in range(3):
            code = error_code(accounts(c)[0].put_object, Bucket="acl-gone", Key="k", Body=b"x",
                              ACL="public-read")
            check(code == ("NoSuchBucket", 404), "round %d: %r" % (i, code))


def test_ownership_and_public_access_block(c):
    a, b, anon = accounts(c)
    a.create_bucket(Bucket="acl-own")
    oc = {"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]}
    a.put_bucket_ownership_controls(Bucket="acl-own", OwnershipControls=oc)
    check(a.get_bucket_ownership_controls(Bucket="acl-own")["OwnershipControls"] == oc, "get")
    check(error_code(a.put_object, Bucket="acl-own", Key="k", Body=b"x", ACL="public-read") ==
          ("AccessControlListNotSupported", 400), "ACLs disabled")
    a.put_object(Bucket="acl-own", Key="k", Body=b"x", ACL="bucket-owner-full-control")
    check(denied(b.put_bucket_ownership_controls, Bucket="acl-own", OwnershipControls=oc), "B")
    a.delete_bucket_ownership_controls(Bucket="acl-own")
    check(error_code(a.get_bucket_ownership_controls, Bucket="acl-own") ==
          ("OwnershipControlsNotFoundError", 404), "deleted")
    a.put_object(Bucket="acl-own", Key="pub", Body=b"p", ACL="public-read")
    check(anon.get_object(Bucket="acl-own", Key="pub")["Body"].read() == b"p", "public")
    # the public access block
    cfg = {"BlockPublicAcls": True, "IgnorePublicAcls": False, "BlockPublicPolicy": False,
           "RestrictPublicBuckets": False}
    a.put_public_access_block(Bucket="acl-own", PublicAccessBlockConfiguration=cfg)
    check(a.get_public_access_block(Bucket="acl-own")["PublicAccessBlockConfiguration"] == cfg,
          "get pab")
    check(denied(a.put_object, Bucket="acl-own", Key="p2", Body=b"x", ACL="public-read"),
          "BlockPublicAcls: canned")
    check(denied(a.put_object_acl, Bucket="acl-own", Key="k",
                 GrantRead='uri="%s"' % ALL_USERS), "BlockPublicAcls: grant")
    check(denied(a.put_bucket_acl, Bucket="acl-own", ACL="public-read"), "BlockPublicAcls: bkt")
    check(anon.get_object(Bucket="acl-own", Key="pub")["Body"].read() == b"p",
          "existing public ACLs still count")
    cfg["IgnorePublicAcls"] = True
    a.put_public_access_block(Bucket="acl-own", PublicAccessBlockConfiguration=cfg)
    eventually(lambda: denied(anon.get_object, Bucket="acl-own", Key="pub"), "IgnorePublicAcls")
    a.delete_public_access_block(Bucket="acl-own")
    check(error_code(a.get_public_access_block, Bucket="acl-own") ==
          ("NoSuchPublicAccessBlockConfiguration", 404), "pab deleted")
    check(anon.get_object(Bucket="acl-own", Key="pub")["Body"].read() == b"p", "public again")
    # CreateBucket's own ownership header
    a.create_bucket(Bucket="acl-own2", ObjectOwnership="BucketOwnerPreferred")
    r = a.get_bucket_ownership_controls(Bucket="acl-own2")["OwnershipControls"]["Rules"]
    check(r == [{"ObjectOwnership": "BucketOwnerPreferred"}], "create header %r" % r)


def test_aws_defaults(c):
    """s3.default_object_ownership = BucketOwnerEnforced: new buckets get
    AWS's defaults since 2023 (ACLs disabled, all four public access block
    flags on); a bucket may still ask for ObjectWriter."""
    a, b, anon = accounts(c)
    a.create_bucket(Bucket="aws-def")
    r = a.get_bucket_ownership_controls(Bucket="aws-def")["OwnershipControls"]["Rules"]
    check(r == [{"ObjectOwnership": "BucketOwnerEnforced"}], "ownership %r" % r)
    r = a.get_public_access_block(Bucket="aws-def")["PublicAccessBlockConfiguration"]
    check(r == {"BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True,
                "RestrictPublicBuckets": True}, "public access block %r" % r)
    check(error_code(a.create_bucket, Bucket="aws-def2", ACL="public-read") ==
          ("InvalidBucketAclWithObjectOwnership", 400), "public bucket ACL")
    check(error_code(a.put_object, Bucket="aws-def", Key="k", Body=b"x", ACL="public-read") ==
          ("AccessControlListNotSupported", 400), "public object ACL")
    check(denied(a.put_bucket_policy, Bucket="aws-def", Policy=(
        '{"Statement": {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", '
        '"Resource": "arn:aws:s3:::aws-def/*"}}')), "BlockPublicPolicy by default")
    a.put_object(Bucket="aws-def", Key="k", Body=b"x")
    check(denied(anon.get_object, Bucket="aws-def", Key="k"), "private")
    a.create_bucket(Bucket="aws-ow", ObjectOwnership="ObjectWriter", ACL="public-read")
    check(len(anon.list_objects_v2(Bucket="aws-ow").get("Contents", [])) == 0,
          "a bucket that asks for ObjectWriter may be public")


if __name__ == "__main__":
    run_tests([test_public_read_object, test_public_read_bucket,
               test_public_read_write_and_grants, test_acl_writes_and_errors,
               test_copy_sources, test_acl_write_to_deleted_bucket,
               test_ownership_and_public_access_block],
              cluster_kw={"settings": {"s3.bucket_owner_ttl": "1s"}})
    run_tests([test_aws_defaults],
              cluster_kw={"settings": {"s3.default_object_ownership": "BucketOwnerEnforced"}})
