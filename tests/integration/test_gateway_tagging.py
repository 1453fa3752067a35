"""Object tags against a real cluster, with boto3 and the aws cli, as AWS S3
answers them: Put/Get/DeleteObjectTagging on small, chunked and multipart
objects (the object's bytes, ETag and Last-Modified stay as they were),
x-amz-tagging on PutObject, CreateMultipartUpload and CopyObject (with
x-amz-tagging-directive), x-amz-tagging-count on GET/HEAD, S3's limits and
error codes, and the other account and anonymous clients refused."""
import hashlib
import itertools
import json
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "security"))
from s3util import REGION, check, error_code, run_tests  # noqa: E402
from secutil import accounts  # noqa: E402

K = 1024
MIB = K * K
THRESH = 256 * K
SETTINGS = {
    "large_object.threshold_of_chunk_len": THRESH,
    "large_object.chunked_obj_len": 128 * K,
    "large_object.reading_chunked_obj_len": 32 * K,
    "large_object.reclaim_delay": "1s",
}
NODE_SETTINGS = {"obj_containers.sync_mode": "none", "io_threads": 2}

_names = itertools.count()


def new_bucket(c):
    s3 = c.boto(signature_version="s3v4")
    name = "tag-%d" % next(_names)
    s3.create_bucket(Bucket=name)
    return s3, name


def tagset(d):
    return {"TagSet": [{"Key": k, "Value": v} for k, v in d.items()]}


def tags_of(s3, b, k):
    return {t["Key"]: t["Value"] for t in s3.get_object_tagging(Bucket=b, Key=k)["TagSet"]}


def headers_of(resp):
    return resp["ResponseMetadata"]["HTTPHeaders"]


def signed(c, method, path, body=b"", headers=None):
    """A SigV4-signed raw request (for bodies boto3 will not send); returns
    (status, body)."""
    import urllib.request
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    from s3util import ACCESS_KEY, SECRET_KEY
    h = dict(headers or {})
    h["x-amz-content-sha256"] = hashlib.sha256(body).hexdigest()
    req = AWSRequest(method=method, url=c.url + path, data=body, headers=h)
    S3SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "s3", REGION).add_auth(req)
    r = urllib.request.Request(c.url + path, data=body or None, method=method,
                               headers=dict(req.headers.items()))
    try:
        with urllib.request.urlopen(r, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def check_same_object(s3, b, k, data, head0):
    """The object reads back as data with the ETag and Last-Modified of head0."""
    got = s3.get_object(Bucket=b, Key=k)
    check(got["Body"].read() == data, "bytes unchanged")
    check(got["ETag"] == head0["ETag"], "etag %r vs %r" % (got["ETag"], head0["ETag"]))
    check(got["LastModified"] == head0["LastModified"], "Last-Modified unchanged")


def round_trip(s3, b, k, data):
    """Sets, reads, replaces and deletes the tags of b/k (holding data)."""
    head0 = s3.head_object(Bucket=b, Key=k)
    check("x-amz-tagging-count" not in headers_of(head0), "no count without tags")
    check(tags_of(s3, b, k) == {}, "no tags at first")
    want = {"project": "cairn", "team": "storage a/b", "empty": "", "uni": "\u00e9t\u00e9"}
    r = s3.put_object_tagging(Bucket=b, Key=k, Tagging=tagset(want))
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 200, "put tags 200")
    check(tags_of(s3, b, k) == want, "tags read back")
    head = s3.head_object(Bucket=b, Key=k)
    check(headers_of(head).get("x-amz-tagging-count") == "4", "count %r" % headers_of(head))
    check(not any(n.startswith(":") or "tags" in n for n in headers_of(head)
                  if n != "x-amz-tagging-count"), "no internal entry replayed %r" % head)
    check(headers_of(s3.get_object(Bucket=b, Key=k)).get("x-amz-tagging-count") == "4",
          "count on GET")
    check_same_object(s3, b, k, data, head0)
    s3.put_object_tagging(Bucket=b, Key=k, Tagging=tagset({"only": "one"}))
    check(tags_of(s3, b, k) == {"only": "one"}, "tags replaced")
    r = s3.delete_object_tagging(Bucket=b, Key=k)
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 204, "delete tags 204")
    check(tags_of(s3, b, k) == {}, "tags deleted")
    check("x-amz-tagging-count" not in headers_of(s3.head_object(Bucket=b, Key=k)),
          "no count after delete")
    s3.put_object_tagging(Bucket=b, Key=k, Tagging=tagset({"a": "1"}))
    s3.put_object_tagging(Bucket=b, Key=k, Tagging={"TagSet": []})
    check(tags_of(s3, b, k) == {}, "an empty TagSet removes the tags")
    check(s3.delete_object_tagging(Bucket=b, Key=k)["ResponseMetadata"]["HTTPStatusCode"] ==
          204, "delete without tags")
    check_same_object(s3, b, k, data, head0)


def test_small_object(c):
    s3, b = new_bucket(c)
    data = b"small object bytes" * 10
    s3.put_object(Bucket=b, Key="k", Body=data, ContentType="text/plain", Metadata={"m": "v"})
    round_trip(s3, b, "k", data)
    head = s3.head_object(Bucket=b, Key="k")
    check(head["ContentType"] == "text/plain" and head["Metadata"] == {"m": "v"},
          "stored headers kept %r" % head)


def test_large_object(c):
    s3, b = new_bucket(c)
    data = os.urandom(3 * THRESH + 12345)
    s3.put_object(Bucket=b, Key="big", Body=data)
    round_trip(s3, b, "big", data)
    s3.put_object_tagging(Bucket=b, Key="big", Tagging=tagset({"x": "y"}))
    r = s3.get_object(Bucket=b, Key="big", Range="bytes=%d-%d" % (THRESH - 5, THRESH + 5))
    check(r["Body"].read() == data[THRESH - 5:THRESH + 6], "ranged read after tagging")
    # an overwrite is a new object: no tags
    s3.put_object(Bucket=b, Key="big", Body=data[:1000])
    check(tags_of(s3, b, "big") == {}, "overwrite drops the tags")
    check(s3.get_object(Bucket=b, Key="big")["Body"].read() == data[:1000], "overwritten")


def test_multipart_object(c):
    s3, b = new_bucket(c)
    parts = [os.urandom(5 * MIB), os.urandom(1000)]
    up = s3.create_multipart_upload(Bucket=b, Key="mp", Tagging="a=1&b=two%20words&c=")
    done = []
    for i, p in enumerate(parts, 1):
        e = s3.upload_part(Bucket=b, Key="mp", UploadId=up["UploadId"], PartNumber=i, Body=p)
        done.append({"PartNumber": i, "ETag": e["ETag"]})
    s3.complete_multipart_upload(Bucket=b, Key="mp", UploadId=up["UploadId"],
                                 MultipartUpload={"Parts": done})
    check(tags_of(s3, b, "mp") == {"a": "1", "b": "two words", "c": ""}, "tags at Complete")
    check(headers_of(s3.head_object(Bucket=b, Key="mp")).get("x-amz-tagging-count") == "3",
          "count of a multipart object")
    s3.delete_object_tagging(Bucket=b, Key="mp")
    round_trip(s3, b, "mp", b"".join(parts))
    r = s3.get_object(Bucket=b, Key="mp", PartNumber=2)
    check(r["Body"].read() == parts[1] and r["PartsCount"] == 2, "parts kept")
    code = error_code(s3.create_multipart_upload, Bucket=b, Key="mp2", Tagging="a=1&a=2")
    check(code == ("InvalidArgument", 400), "bad x-amz-tagging on Create %r" % (code,))
    check(s3.list_multipart_uploads(Bucket=b).get("Uploads", []) == [], "no upload created")


def test_put_and_copy(c):
    s3, b = new_bucket(c)
    s3.put_object(Bucket=b, Key="src", Body=b"source", Tagging="k=v&k2=v%2B2")
    check(tags_of(s3, b, "src") == {"k": "v", "k2": "v+2"}, "x-amz-tagging on PutObject")
    check(headers_of(s3.get_object(Bucket=b, Key="src")).get("x-amz-tagging-count") == "2",
          "count after PutObject")
    src = {"Bucket": b, "Key": "src"}
    s3.copy_object(Bucket=b, Key="c1", CopySource=src)
    check(tags_of(s3, b, "c1") == {"k": "v", "k2": "v+2"}, "COPY is the default")
    s3.copy_object(Bucket=b, Key="c2", CopySource=src, TaggingDirective="REPLACE",
                   Tagging="x=y")
    check(tags_of(s3, b, "c2") == {"x": "y"}, "REPLACE")
    s3.copy_object(Bucket=b, Key="c3", CopySource=src, TaggingDirective="REPLACE")
    check(tags_of(s3, b, "c3") == {}, "REPLACE without tags")
    s3.copy_object(Bucket=b, Key="c4", CopySource=src, MetadataDirective="REPLACE",
                   ContentType="text/x-new", Tagging="ignored=1")
    check(tags_of(s3, b, "c4") == {"k": "v", "k2": "v+2"}, "metadata REPLACE keeps tags")
    check(s3.head_object(Bucket=b, Key="c4")["ContentType"] == "text/x-new", "new metadata")
    s3.copy_object(Bucket=b, Key="c5", CopySource=src, MetadataDirective="REPLACE",
                   TaggingDirective="REPLACE", Tagging="both=1")
    check(tags_of(s3, b, "c5") == {"both": "1"}, "both REPLACE")
    s3.copy_object(Bucket=b, Key="src", CopySource=src, MetadataDirective="REPLACE",
                   ContentType="text/plain")
    check(tags_of(s3, b, "src") == {"k": "v", "k2": "v+2"}, "copy onto itself keeps tags")
    code = error_code(s3.copy_object, Bucket=b, Key="c6", CopySource=src,
                      TaggingDirective="MOVE")
    check(code == ("InvalidArgument", 400), "unknown directive %r" % (code,))
    # a large source copied with its tags
    data = os.urandom(THRESH + 777)
    s3.put_object(Bucket=b, Key="bigsrc", Body=data, Tagging="big=yes")
    s3.copy_object(Bucket=b, Key="bigcopy", CopySource={"Bucket": b, "Key": "bigsrc"})
    check(tags_of(s3, b, "bigcopy") == {"big": "yes"}, "large copy keeps tags")
    check(s3.get_object(Bucket=b, Key="bigcopy")["Body"].read() == data, "large copy bytes")
    keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=b)["Contents"])
    check("c6" not in keys, "refused copy stored nothing")


def test_limits_and_errors(c):
    s3, b = new_bucket(c)
    s3.put_object(Bucket=b, Key="k", Body=b"data")
    ok = {"k%d" % i: "v" for i in range(10)}
    s3.put_object_tagging(Bucket=b, Key="k", Tagging=tagset(ok))
    check(tags_of(s3, b, "k") == ok, "ten tags")
    ok = {"a" * 128: "b" * 256, "\u00e9" * 128: "\u00e8" * 256,
          "Az09 +-=._:/@": "Az09 +-=._:/@"}
    s3.put_object_tagging(Bucket=b, Key="k", Tagging=tagset(ok))
    check(tags_of(s3, b, "k") == ok, "longest key and value, every allowed character")
    bad = [
        ({"k%d" % i: "v" for i in range(11)}, ("BadRequest", 400)),
        ({"a" * 129: "v"}, ("InvalidTag", 400)),
        ({"k": "v" * 257}, ("InvalidTag", 400)),
        ({"k#": "v"}, ("InvalidTag", 400)),
        ({"k": "v,w"}, ("InvalidTag", 400)),
        ({"aws:k": "v"}, ("InvalidTag", 400)),
    ]
    for tags, want in bad:
        code = error_code(s3.put_object_tagging, Bucket=b, Key="k", Tagging=tagset(tags))
        check(code == want, "%r: %r want %r" % (list(tags)[:2], code, want))
    code = error_code(s3.put_object_tagging, Bucket=b, Key="k",
                      Tagging={"TagSet": [{"Key": "d", "Value": "1"},
                                          {"Key": "d", "Value": "2"}]})
    check(code == ("InvalidTag", 400), "duplicate keys %r" % (code,))
    check(tags_of(s3, b, "k") == ok, "refused writes changed nothing")
    path = "/%s/k?tagging" % b
    for body in [b"<Tagging><TagSet><Tag><Key>a</Key></Tag></TagSet></Tagging>",
                 b"<Tagging></Tagging>", b"<Other><TagSet/></Other>", b"<Tagging><TagSet>",
                 b"<Tagging><TagSet><Tag><Key>a</Key><Key>b</Key><Value/></Tag></TagSet>"
                 b"</Tagging>", b""]:
        st, out = signed(c, "PUT", path, body)
        check(st == 400 and b"<Code>MalformedXML</Code>" in out, "%r: %d %r" % (body, st, out))
    st, out = signed(c, "PUT", path, b"<Tagging><TagSet><Tag><Key></Key><Value>v</Value></Tag>"
                     b"</TagSet></Tagging>")
    check(st == 400 and b"<Code>InvalidTag</Code>" in out, "empty key: %d %r" % (st, out))
    st, _ = signed(c, "PUT", path, b'<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                   b"<TagSet><Tag><Key> sp </Key><Value></Value></Tag></TagSet></Tagging>")
    check(st == 200 and tags_of(s3, b, "k") == {" sp ": ""}, "namespace, spaces kept")
    # x-amz-tagging on PutObject
    for hdr, want in [("a=1&a=2", ("InvalidArgument", 400)), ("a=%zz", ("InvalidArgument", 400)),
                      ("&".join("k%d=v" % i for i in range(11)), ("BadRequest", 400)),
                      ("k=" + "v" * 257, ("InvalidTag", 400)), ("k%23=v", ("InvalidTag", 400))]:
        code = error_code(s3.put_object, Bucket=b, Key="refused", Body=b"x", Tagging=hdr)
        check(code == want, "x-amz-tagging %r: %r want %r" % (hdr[:20], code, want))
    code = error_code(s3.put_object, Bucket=b, Key="refused", Body=os.urandom(THRESH + 1),
                      Tagging="a=1&a=2")
    check(code == ("InvalidArgument", 400), "large PUT refused before its body %r" % (code,))
    check([o["Key"] for o in s3.list_objects_v2(Bucket=b)["Contents"]] == ["k"],
          "refused PUTs stored nothing")
    # missing key or bucket, versions
    for fn, kw in [(s3.get_object_tagging, {}), (s3.delete_object_tagging, {}),
                   (s3.put_object_tagging, {"Tagging": tagset({"a": "b"})})]:
        check(error_code(fn, Bucket=b, Key="nope", **kw) == ("NoSuchKey", 404),
              "%s missing key" % fn.__name__)
        check(error_code(fn, Bucket="tag-nope", Key="k", **kw) == ("NoSuchBucket", 404),
              "%s missing bucket" % fn.__name__)
        check(error_code(fn, Bucket=b, Key="k", VersionId="v1", **kw) ==
              ("InvalidArgument", 400), "%s versionId" % fn.__name__)
    check(s3.get_object_tagging(Bucket=b, Key="k", VersionId="null")["TagSet"] != [],
          "versionId null")


def test_aws_cli(c):
    s3, b = new_bucket(c)
    s3.put_object(Bucket=b, Key="cli", Body=b"cli bytes")
    c.aws("s3api", "put-object-tagging", "--bucket", b, "--key", "cli", "--tagging",
          json.dumps(tagset({"env": "test", "owner": "cli user"})))
    out = json.loads(c.aws("s3api", "get-object-tagging", "--bucket", b, "--key",
                           "cli").stdout)
    got = {t["Key"]: t["Value"] for t in out["TagSet"]}
    check(got == {"env": "test", "owner": "cli user"}, "aws cli round trip %r" % out)
    c.aws("s3api", "put-object", "--bucket", b, "--key", "cli2", "--tagging",
          urllib.parse.urlencode({"a": "b c"}))
    check(tags_of(s3, b, "cli2") == {"a": "b c"}, "aws cli put-object --tagging")
    c.aws("s3api", "delete-object-tagging", "--bucket", b, "--key", "cli")
    check(tags_of(s3, b, "cli") == {}, "aws cli delete")
    p = c.aws("s3api", "put-object-tagging", "--bucket", b, "--key", "cli", "--tagging",
              json.dumps(tagset({"bad#": "x"})), check_rc=False)
    check(p.returncode != 0 and b"InvalidTag" in p.stderr, "aws cli error %r" % p.stderr)


def test_other_accounts_refused(c):
    a, other, anon = accounts(c)
    b = "tag-owned-%d" % next(_names)
    a.create_bucket(Bucket=b)
    a.put_object(Bucket=b, Key="k", Body=b"mine", Tagging="owner=a")
    for who, s3 in [("other account", other), ("anonymous", anon)]:
        for fn, kw in [(s3.get_object_tagging, {}), (s3.delete_object_tagging, {}),
                       (s3.put_object_tagging, {"Tagging": tagset({"evil": "1"})})]:
            code = error_code(fn, Bucket=b, Key="k", **kw)
            check(code == ("AccessDenied", 403), "%s %s: %r" % (who, fn.__name__, code))
        code = error_code(s3.get_object_tagging, Bucket=b, Key="nonexistent")
        check(code == ("AccessDenied", 403), "%s on a missing key: %r" % (who, code))
    check(tags_of(a, b, "k") == {"owner": "a"}, "tags untouched")
    check(a.get_object(Bucket=b, Key="k")["Body"].read() == b"mine", "object untouched")


if __name__ == "__main__":
    run_tests([test_small_object, test_large_object, test_multipart_object, test_put_and_copy,
               test_limits_and_errors, test_aws_cli, test_other_accounts_refused],
              cluster_kw={"settings": SETTINGS, "node_settings": NODE_SETTINGS})
