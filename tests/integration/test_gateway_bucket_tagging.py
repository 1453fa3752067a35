"""Bucket tags against a real cluster, with boto3 and the aws cli, as AWS S3
answers them: Put/Get/DeleteBucketTagging round trips, NoSuchTagSet when
none is set, S3's 50-tag limit and tag rules, Content-MD5 required, other
configurations kept, and the other account and anonymous clients refused."""
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "security"))
from s3util import ACCESS_KEY, REGION, SECRET_KEY, check, error_code, run_tests  # noqa: E402
from secutil import accounts  # noqa: E402


def tagset(d):
    return {"TagSet": [{"Key": k, "Value": v} for k, v in d.items()]}


def tags_of(s3, b):
    return {t["Key"]: t["Value"] for t in s3.get_bucket_tagging(Bucket=b)["TagSet"]}


def signed(c, method, path, body=b"", headers=None):
    """A SigV4-signed raw request without the SDK's Content-MD5; (status, body)."""
    import urllib.request
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
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


def test_round_trip(c):
    s3, _, _ = accounts(c)
    b = "btag-a"
    s3.create_bucket(Bucket=b)
    check(error_code(s3.get_bucket_tagging, Bucket=b) == ("NoSuchTagSet", 404), "none yet")
    r = s3.put_bucket_tagging(Bucket=b, Tagging=tagset({"team": "storage", "cost": "a b"}))
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 204, "put is 204")
    check(tags_of(s3, b) == {"team": "storage", "cost": "a b"}, "round trip")
    fifty = {"k%02d" % i: "v%d" % i for i in range(50)}
    s3.put_bucket_tagging(Bucket=b, Tagging=tagset(fifty))
    check(tags_of(s3, b) == fifty, "50 tags replace the set")
    # CORS next to the tags: each configuration keeps the other
    s3.put_bucket_cors(Bucket=b, CORSConfiguration={"CORSRules": [
        {"AllowedOrigins": ["*"], "AllowedMethods": ["GET"]}]})
    check(tags_of(s3, b) == fifty, "tags kept by a CORS change")
    r = s3.delete_bucket_tagging(Bucket=b)
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 204, "delete is 204")
    check(error_code(s3.get_bucket_tagging, Bucket=b) == ("NoSuchTagSet", 404), "gone")
    check(len(s3.get_bucket_cors(Bucket=b)["CORSRules"]) == 1, "CORS kept by the delete")
    check(s3.delete_bucket_tagging(Bucket=b)["ResponseMetadata"]["HTTPStatusCode"] == 204,
          "deleting none is 204")
    check(error_code(s3.get_bucket_tagging, Bucket="btag-missing") == ("NoSuchBucket", 404),
          "missing bucket")
    # object tags are their own: the bucket's do not show on an object
    s3.put_bucket_tagging(Bucket=b, Tagging=tagset({"x": "1"}))
    s3.put_object(Bucket=b, Key="o", Body=b"x")
    check(s3.get_object_tagging(Bucket=b, Key="o")["TagSet"] == [], "object has no tags")


def test_errors(c):
    s3, _, _ = accounts(c)
    b = "btag-err"
    s3.create_bucket(Bucket=b)
    s3.put_bucket_tagging(Bucket=b, Tagging=tagset({"keep": "me"}))
    bad = [
        ({"k%02d" % i: "v" for i in range(51)}, ("BadRequest", 400)),
        ({"aws:x": "v"}, ("InvalidTag", 400)),
        ({"bad#": "v"}, ("InvalidTag", 400)),
        ({"k" * 129: "v"}, ("InvalidTag", 400)),
        ({"k": "v" * 257}, ("InvalidTag", 400)),
    ]
    for tags, want in bad:
        got = error_code(s3.put_bucket_tagging, Bucket=b, Tagging=tagset(tags))
        check(got == want, "%r: %r" % (list(tags)[:2], got))
    dup = {"TagSet": [{"Key": "a", "Value": "1"}, {"Key": "a", "Value": "2"}]}
    check(error_code(s3.put_bucket_tagging, Bucket=b, Tagging=dup) == ("InvalidTag", 400),
          "duplicate key")
    body = (b'<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet><Tag>'
            b'<Key>a</Key><Value>b</Value></Tag></TagSet></Tagging>')
    st, doc = signed(c, "PUT", "/%s?tagging" % b, body)
    check(st == 400 and b"<Code>InvalidRequest</Code>" in doc and b"Content-MD5" in doc,
          "no Content-MD5: %d %r" % (st, doc))
    import base64
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    st, doc = signed(c, "PUT", "/%s?tagging" % b, body, {"Content-MD5": md5})
    check(st == 204, "with Content-MD5: %d %r" % (st, doc))
    st, doc = signed(c, "PUT", "/%s?tagging" % b, body, {"Content-MD5": "AAAAAAAAAAAAAAAAAAAAAA=="})
    check(st == 400 and b"BadDigest" in doc, "wrong Content-MD5: %d %r" % (st, doc))
    st, doc = signed(c, "PUT", "/%s?tagging" % b, b"<Tagging><TagSet>", {"Content-MD5": base64.b64encode(hashlib.md5(b"<Tagging><TagSet>").digest()).decode()})
    check(st == 400 and b"MalformedXML" in doc, "malformed: %d %r" % (st, doc))
    check(tags_of(s3, b) == {"a": "b"}, "refused requests changed nothing")


def test_aws_cli(c):
    s3, _, _ = accounts(c)
    b = "btag-cli"
    s3.create_bucket(Bucket=b)
    c.aws("s3api", "put-bucket-tagging", "--bucket", b, "--tagging",
          json.dumps(tagset({"env": "test", "owner": "cli user"})))
    out = json.loads(c.aws("s3api", "get-bucket-tagging", "--bucket", b).stdout)
    got = {t["Key"]: t["Value"] for t in out["TagSet"]}
    check(got == {"env": "test", "owner": "cli user"}, "aws cli round trip %r" % out)
    c.aws("s3api", "delete-bucket-tagging", "--bucket", b)
    p = c.aws("s3api", "get-bucket-tagging", "--bucket", b, check_rc=False)
    check(p.returncode != 0 and b"NoSuchTagSet" in p.stderr, "aws cli after delete %r" % p.stderr)


def test_other_accounts_refused(c):
    a, other, anon = accounts(c)
    b = "btag-owned"
    a.create_bucket(Bucket=b)
    a.put_bucket_tagging(Bucket=b, Tagging=tagset({"owner": "a"}))
    for who, s3 in [("other account", other), ("anonymous", anon)]:
        for fn, kw in [(s3.get_bucket_tagging, {}), (s3.delete_bucket_tagging, {}),
                       (s3.put_bucket_tagging, {"Tagging": tagset({"evil": "1"})})]:
            code = error_code(fn, Bucket=b, **kw)
            check(code == ("AccessDenied", 403), "%s %s: %r" % (who, fn.__name__, code))
    check(tags_of(a, b) == {"owner": "a"}, "tags untouched")


if __name__ == "__main__":
    run_tests([test_round_trip, test_errors, test_aws_cli, test_other_accounts_refused])
