"""POST object (browser form uploads) against a real cluster, as AWS
documents it in "POST Object" and "Browser-Based Uploads Using POST"
(https://docs.aws.amazon.com/AmazonS3/latest/API/RESTObjectPOST.html,
https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-post-example.html):
forms made by boto3's generate_presigned_post, signed with SigV4 (a
Config(signature_version='s3v4') client) and with SigV2 (boto3's default in
us-east-1), posted with the requests library and with curl -F; the answers
(204, 201 PostResponse, 303 redirect), ${filename}, x-amz-meta-* and
Content-Type fields, the acl field and anonymous forms to buckets anyone
may write; the refusals (expired, tampered or unmet policy,
content-length-range, extra fields, other account, anonymous, malformed
bodies) each storing nothing; and a 20 MiB file whose upload does not grow
the gateway's peak memory by the file's size (it is streamed)."""
import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import Cluster, check, error_code  # noqa: E402

OTHER_ACCESS_KEY = "AKIAOTHERUSER0000000"
OTHER_SECRET_KEY = "other-secret-key-0000000000000000000000"
BUCKET = "post-b"
MIB = 1024 * 1024
SANITIZED = bool(os.environ.get("CAIRN_SANITIZE"))
SETTINGS = {
    # small chunks, so a large file's memory in flight is small next to it
    "large_object.threshold_of_chunk_len": "1M",
    "large_object.chunked_obj_len": "1M",
}


def v4(c, **kw):
    return c.boto(signature_version="s3v4", **kw)


def form(s3, key, fields=None, conditions=None, expires=300):
    return s3.generate_presigned_post(BUCKET, key, Fields=fields, Conditions=conditions,
                                      ExpiresIn=expires)


def post(c, f, data, filename="a.txt", extra=None, host=None):
    fields = dict(f["fields"])
    fields.update(extra or {})
    headers = {"Host": host} if host else {}
    url = c.url + "/" + (BUCKET if host is None else "")
    return requests.post(url, data=fields, files={"file": (filename, data)}, headers=headers,
                         allow_redirects=False, timeout=60)


def code_of(r):
    root = ET.fromstring(r.content)
    return root.findtext("Code"), root.findtext("Message")


def missing(c, key):
    return error_code(v4(c).head_object, Bucket=BUCKET, Key=key)[1] == 404


def test_sigv4_form_requests(c):
    """SigV4 form: default 204 with ETag and Location, the file stored as
    sent (CR LF and "--" inside it), Content-Type and x-amz-meta-* from
    the fields, ${filename} replaced by the file's name."""
    s3 = v4(c)
    data = b"hello\r\n--boundary-lookalike\r\n" + bytes(range(256)) * 40
    f = form(s3, "v4/${filename}", {"Content-Type": "text/x-form", "x-amz-meta-who": "form v4"},
             [{"Content-Type": "text/x-form"}, {"x-amz-meta-who": "form v4"},
              ["starts-with", "$key", "v4/"]])
    check(f["fields"].get("x-amz-algorithm") == "AWS4-HMAC-SHA256", "a SigV4 form %r" % f)
    r = post(c, f, data, filename="photo 1.bin")
    check(r.status_code == 204, "post %d %r" % (r.status_code, r.content))
    etag = hashlib.md5(data).hexdigest()
    check(r.headers.get("ETag") == '"%s"' % etag, "etag %r" % r.headers)
    check(r.headers.get("Location", "").endswith("/%s/v4/photo%%201.bin" % BUCKET),
          "location %r" % r.headers.get("Location"))
    got = s3.get_object(Bucket=BUCKET, Key="v4/photo 1.bin")
    check(got["Body"].read() == data, "stored bytes")
    check(got["ContentType"] == "text/x-form", "content type %r" % got["ContentType"])
    check(got["Metadata"] == {"who": "form v4"}, "metadata %r" % got["Metadata"])
    check(got["ETag"] == '"%s"' % etag, "stored etag")
    # a browser on Windows may send the file's path: its last segment is the name
    r = post(c, f, b"from windows", filename="C:\\Users\\me\\report (2).pdf")
    check(r.status_code == 204, "windows path %d %r" % (r.status_code, r.content))
    check(s3.get_object(Bucket=BUCKET, Key="v4/report (2).pdf")["Body"].read() ==
          b"from windows", "the path's last segment")


def test_sigv2_form_201_and_redirect(c):
    """boto3's default presigner in us-east-1 signs forms with SigV2
    (AWSAccessKeyId, signature); success_action_status 201 answers the
    PostResponse document, success_action_redirect a 303 whose Location
    carries bucket, key and ETag."""
    s3 = c.boto()
    f = form(s3, "v2/obj", {"success_action_status": "201"}, [{"success_action_status": "201"}])
    check("AWSAccessKeyId" in f["fields"] and "signature" in f["fields"], "a V2 form %r" % f)
    r = post(c, f, b"v2 body")
    check(r.status_code == 201, "201 %d %r" % (r.status_code, r.content))
    root = ET.fromstring(r.content)
    check(root.tag == "PostResponse", "root %r" % root.tag)
    check(root.findtext("Bucket") == BUCKET and root.findtext("Key") == "v2/obj", "doc %r" %
          r.content)
    check(root.findtext("ETag") == '"%s"' % hashlib.md5(b"v2 body").hexdigest(), "etag")
    check(root.findtext("Location").endswith("/%s/v2/obj" % BUCKET), "location")
    check(v4(c).get_object(Bucket=BUCKET, Key="v2/obj")["Body"].read() == b"v2 body", "stored")
    f = form(s3, "v2/redir", {"success_action_redirect": "http://app.example/done?x=1"},
             [{"success_action_redirect": "http://app.example/done?x=1"}])
    r = post(c, f, b"redirected")
    check(r.status_code == 303, "303 %d %r" % (r.status_code, r.content))
    loc = r.headers["Location"]
    check(loc.startswith("http://app.example/done?x=1&bucket=%s&key=v2%%2Fredir&etag=" % BUCKET),
          "location %r" % loc)
    check(loc.endswith("%22" + hashlib.md5(b"redirected").hexdigest() + "%22"), "etag in %r" % loc)
    # 200 when asked, and an unknown status is the default 204
    for st, want in (("200", 200), ("302", 204)):
        f = form(s3, "v2/st" + st, {"success_action_status": st},
                 [{"success_action_status": st}])
        r = post(c, f, b"x")
        check(r.status_code == want and r.content == b"", "status %s: %d" % (st, r.status_code))


def test_curl_form(c):
    """The same form posted by curl -F (a file from disk)."""
    f = form(v4(c), "curl/${filename}")
    with tempfile.NamedTemporaryFile(suffix=".dat") as tmp:
        tmp.write(b"curl bytes\n" * 1000)
        tmp.flush()
        args = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}"]
        for k, v in f["fields"].items():
            args += ["--form-string", "%s=%s" % (k, v)]
        args += ["-F", "file=@%s;filename=from-curl.dat" % tmp.name, c.url + "/" + BUCKET]
        out = subprocess.run(args, capture_output=True, timeout=60)
        check(out.stdout == b"204", "curl %r %r" % (out.stdout, out.stderr))
    got = v4(c).get_object(Bucket=BUCKET, Key="curl/from-curl.dat")["Body"].read()
    check(got == b"curl bytes\n" * 1000, "curl's file")


def test_virtual_host_form(c):
    """POST / with Host: bucket.<s3.domain> addresses the bucket."""
    f = form(v4(c), "vh/obj")
    r = post(c, f, b"vhost", host="%s.s3.localhost:%d" % (BUCKET, c.port))
    check(r.status_code == 204, "vhost %d %r" % (r.status_code, r.content))
    check(v4(c).get_object(Bucket=BUCKET, Key="vh/obj")["Body"].read() == b"vhost", "stored")


def test_refusals(c):
    """Each refusal answers S3's error and stores nothing."""
    s3 = v4(c)
    cases = []
    # an expired policy
    f = form(s3, "no/expired", expires=1)
    time.sleep(2.1)
    cases.append(("expired", f, b"x", {}, 403, "AccessDenied", "Policy expired"))
    # a policy changed after signing (a wider key prefix)
    f = form(s3, "no/tampered", conditions=[["starts-with", "$key", "no/"]])
    pol = json.loads(base64.b64decode(f["fields"]["policy"]))
    pol["conditions"] = [cd if not (isinstance(cd, list) and cd[0] == "starts-with") else
                         ["starts-with", "$key", ""] for cd in pol["conditions"]]
    f["fields"]["policy"] = base64.b64encode(json.dumps(pol).encode()).decode()
    cases.append(("tampered", f, b"x", {}, 403, "SignatureDoesNotMatch", None))
    # the key outside the starts-with condition
    f = form(s3, "no/${filename}", conditions=[["starts-with", "$key", "no/"]])
    cases.append(("key outside", f, b"x", {"key": "elsewhere/x"}, 403, "AccessDenied",
                  "Policy Condition failed"))
    # content-length-range
    f = form(s3, "no/range", conditions=[["content-length-range", 5, 10]])
    cases.append(("too large", f, b"x" * 11, {}, 400, "EntityTooLarge", None))
    cases.append(("too small", f, b"x" * 4, {}, 400, "EntityTooSmall", None))
    # a field the policy does not name
    f = form(s3, "no/extra")
    cases.append(("extra field", f, b"x", {"x-amz-meta-sneaky": "1"}, 403, "AccessDenied",
                  "Extra input fields"))
    # another account's form for this bucket (signed right: the access
    # decision refuses it), and a key nobody has
    f = form(v4(c, access_key=OTHER_ACCESS_KEY, secret_key=OTHER_SECRET_KEY), "no/other")
    cases.append(("other account", f, b"x", {}, 403, "AccessDenied", None))
    f = form(s3, "no/unknown")
    cases.append(("unknown key", f, b"x", {
        "x-amz-credential": f["fields"]["x-amz-credential"].replace(
            "AKIACAIRNDEV00000000", "AKIANOBODY0000000000")}, 403, "InvalidAccessKeyId", None))
    # the V2 signature of another secret
    f = form(c.boto(), "no/v2")
    cases.append(("v2 wrong signature", f, b"x", {"signature": base64.b64encode(
        b"x" * 20).decode()}, 403, "SignatureDoesNotMatch", None))
    # anonymous: no signature at all
    cases.append(("anonymous", {"fields": {"key": "no/anon"}}, b"x", {}, 403, "AccessDenied",
                  None))
    for what, f, data, extra, status, code, msg in cases:
        r = post(c, f, data, extra=extra)
        got = code_of(r) if r.content else (None, None)
        check(r.status_code == status and got[0] == code, "%s: %d %r" % (what, r.status_code,
                                                                         r.content))
        if msg:
            check(msg in (got[1] or ""), "%s: message %r" % (what, got[1]))
        key = (extra or {}).get("key") or f["fields"].get("key", "")
        check(missing(c, key.replace("${filename}", "a.txt")), "%s: stored" % what)
    # not multipart/form-data; no file field; fields over 20 KiB; not
    # well-formed multipart
    r = requests.post(c.url + "/" + BUCKET, data=b"key=x", timeout=30,
                      headers={"Content-Type": "application/x-www-form-urlencoded"})
    check(r.status_code == 412 and code_of(r)[0] == "PreconditionFailed", "urlencoded %r" %
          r.content)
    f = form(s3, "no/nofile")
    r = requests.post(c.url + "/" + BUCKET, files={k: (None, v) for k, v in
                                                   f["fields"].items()}, timeout=30)
    check(r.status_code == 400 and code_of(r) == (
        "InvalidArgument", "POST requires exactly one file upload per request."),
        "no file %r" % r.content)
    r = post(c, f, b"x", extra={"x-ignore-pad": "p" * (21 * 1024)})
    check(r.status_code == 400 and code_of(r)[0] == "MaxPostPreDataLengthExceeded",
          "pre-data %r" % r.content[:300])
    r = requests.post(c.url + "/" + BUCKET, data=b"--zz\r\nno headers end",
                      headers={"Content-Type": "multipart/form-data; boundary=zz"}, timeout=30)
    check(r.status_code == 400 and code_of(r)[0] in ("MalformedPOSTRequest", "InvalidArgument"),
          "malformed %r" % r.content)
    check(missing(c, "no/nofile"), "nothing stored")


def vm_hwm_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_large_file_streams(c):
    """A 20 MiB file: stored chunked and intact, and the gateway's peak
    resident memory (VmHWM) grows by much less than the file (the body is
    streamed into 1 MiB chunks, never held whole)."""
    s3 = v4(c)
    f = form(s3, "big/${filename}", conditions=[["content-length-range", 0, 64 * MIB]])
    post(c, f, b"warm-up" * 1000, filename="warm")   # the first request's buffers
    data = os.urandom(20 * MIB)
    before = vm_hwm_kib(c.proc.pid)
    # twice: the second finds the bucket's owner cached, so its fields are
    # checked while the connection's body buffer is still full (a stall
    # there once hung the upload)
    names = ("twenty.bin", "twenty-again.bin")
    for name in names:
        r = post(c, f, data, filename=name)
        check(r.status_code == 204, "big post %d %r" % (r.status_code, r.content[:300]))
        check(r.headers["ETag"] == '"%s"' % hashlib.md5(data).hexdigest(), "big etag")
    # the peak of the uploads alone (a GET's read-ahead has its own bound)
    after = vm_hwm_kib(c.proc.pid)
    grew = (after - before) / 1024.0
    for name in names:
        got = s3.get_object(Bucket=BUCKET, Key="big/" + name)["Body"].read()
        check(hashlib.sha256(got).digest() == hashlib.sha256(data).digest(), "big bytes")
        del got
    print("     VmHWM %d KiB -> %d KiB (+%.1f MiB for a 20 MiB file)" % (before, after, grew))
    # ASan keeps freed memory in quarantine: the peak says nothing there
    check(SANITIZED or grew < 12, "the gateway's peak memory grew %.1f MiB for a 20 MiB file" % grew)


def test_acl_field_and_anonymous(c):
    """The form's acl field sets the object's ACL as PutObject's x-amz-acl
    (it must be in the signed policy like any field), and an anonymous form
    (no credential, no policy) is taken where anyone may write: a
    public-read-write bucket or a policy allowing "*" s3:PutObject (RESTObjectPOST:
    "policy ... required if the bucket is not publicly writable"; acl: "the
    specified canned ACL"; https://docs.aws.amazon.com/AmazonS3/latest/API/RESTObjectPOST.html)."""
    s3 = v4(c)
    anon_get = lambda b, k: requests.get("%s/%s/%s" % (c.url, b, k), timeout=30)  # noqa: E731
    f = form(s3, "acl/pub", fields={"acl": "public-read"}, conditions=[{"acl": "public-read"}])
    check(post(c, f, b"public").status_code == 204, "acl=public-read form")
    r = anon_get(BUCKET, "acl/pub")
    check(r.status_code == 200 and r.content == b"public", "anonymous GET %d" % r.status_code)
    check(any(g["Grantee"].get("URI", "").endswith("/AllUsers") and g["Permission"] == "READ"
              for g in s3.get_object_acl(Bucket=BUCKET, Key="acl/pub")["Grants"]), "GET ?acl")
    f = form(s3, "acl/priv", fields={"acl": "private"}, conditions=[{"acl": "private"}])
    check(post(c, f, b"p").status_code == 204, "acl=private form")
    check(anon_get(BUCKET, "acl/priv").status_code == 403, "private stays private")
    # the acl field outside the policy is an extra field; a bad name is refused
    f = form(s3, "acl/sneaky")
    r = post(c, f, b"x", extra={"acl": "public-read"})
    check(r.status_code == 403 and "Extra input fields" in (code_of(r)[1] or ""),
          "acl not in the policy %r" % r.content)
    f = form(s3, "acl/bogus", fields={"acl": "world-writable"},
             conditions=[{"acl": "world-writable"}])
    r = post(c, f, b"x")
    check(r.status_code == 400 and code_of(r)[0] == "InvalidArgument", "bad acl %r" % r.content)
    check(missing(c, "acl/sneaky") and missing(c, "acl/bogus"), "refused forms stored nothing")
    # BlockPublicAcls refuses a public acl field as it refuses the header
    s3.create_bucket(Bucket="post-pab")
    s3.put_public_access_block(Bucket="post-pab", PublicAccessBlockConfiguration={
        "BlockPublicAcls": True, "IgnorePublicAcls": False, "BlockPublicPolicy": False,
        "RestrictPublicBuckets": False})
    f = s3.generate_presigned_post("post-pab", "k", Fields={"acl": "public-read"},
                                   Conditions=[{"acl": "public-read"}], ExpiresIn=300)
    r = requests.post(c.url + "/post-pab", data=f["fields"], files={"file": ("a", b"x")},
                      timeout=30)
    check(r.status_code == 403 and code_of(r)[0] == "AccessDenied", "BlockPublicAcls %r" %
          r.content)
    # anonymous forms: a public-read-write bucket takes them, with an acl too
    s3.create_bucket(Bucket="post-pub", ACL="public-read-write")

    def anon_post(bucket, fields, data=b"anon"):
        return requests.post("%s/%s" % (c.url, bucket), data=fields,
                             files={"file": ("a.txt", data)}, timeout=30, allow_redirects=False)
    r = anon_post("post-pub", {"key": "up/${filename}"})
    check(r.status_code == 204, "anonymous form to a public-read-write bucket %r" % r.content)
    check(s3.get_object(Bucket="post-pub", Key="up/a.txt")["Body"].read() == b"anon", "stored")
    check(anon_get("post-pub", "up/a.txt").status_code == 403, "its object is private")
    r = anon_post("post-pub", {"key": "up/open", "acl": "public-read",
                               "success_action_status": "201"})
    check(r.status_code == 201 and anon_get("post-pub", "up/open").content == b"anon",
          "anonymous form with acl=public-read %d" % r.status_code)
    # a policy field without a credential is no anonymous form
    r = anon_post("post-pub", {"key": "up/half", "policy": f["fields"]["policy"]})
    check(r.status_code == 403 and code_of(r)[0] == "AccessDenied", "policy, no key %r" %
          r.content)
    check(error_code(s3.head_object, Bucket="post-pub", Key="up/half")[1] == 404, "not stored")
    # a bucket policy that lets anyone put under a prefix, and only there
    s3.create_bucket(Bucket="post-drop")
    s3.put_bucket_policy(Bucket="post-drop", Policy=json.dumps({"Statement": [{
        "Effect": "Allow", "Principal": "*", "Action": "s3:PutObject",
        "Resource": "arn:aws:s3:::post-drop/inbox/*"}]}))
    check(anon_post("post-drop", {"key": "inbox/x"}).status_code == 204, "policy allows")
    r = anon_post("post-drop", {"key": "other/x"})
    check(r.status_code == 403 and code_of(r)[0] == "AccessDenied", "outside the prefix")
    check(error_code(s3.head_object, Bucket="post-drop", Key="other/x")[1] == 404, "refused")


def test_sigv2_off():
    """s3.sigv2 = false: a V2-signed form is InvalidRequest; SigV4 still works."""
    with Cluster(nodes=1, settings={"s3.sigv2": "false"}) as c:
        v4(c).create_bucket(Bucket=BUCKET)
        r = post(c, form(c.boto(), "off/v2"), b"x")
        check(r.status_code == 400 and code_of(r)[0] == "InvalidRequest", "v2 off %r" %
              r.content)
        check(post(c, form(v4(c), "off/v4"), b"x").status_code == 204, "v4 on")


def main():
    tests = [test_sigv4_form_requests, test_sigv2_form_201_and_redirect, test_curl_form,
             test_virtual_host_form, test_refusals, test_acl_field_and_anonymous,
             test_large_file_streams]
    with Cluster(nodes=1, settings=SETTINGS) as c:
        v4(c).create_bucket(Bucket=BUCKET)
        for t in tests:
            t0 = time.monotonic()
            t(c)
            print("ok   %s (%.1fs)" % (t.__name__, time.monotonic() - t0), flush=True)
    t0 = time.monotonic()
    test_sigv2_off()
    print("ok   test_sigv2_off (%.1fs)" % (time.monotonic() - t0), flush=True)
    print("all %d passed" % (len(tests) + 1))


if __name__ == "__main__":
    main()
