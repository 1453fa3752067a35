"""AWS Signature Version 2 against a real cluster, as S3 documents it in
"Signing and Authenticating REST Requests" (Amazon S3 API reference,
https://docs.aws.amazon.com/AmazonS3/latest/API/RESTAuthentication.html):
the Authorization header "AWS AKID:signature" and query-string
authentication (AWSAccessKeyId, Signature, Expires).

Clients: boto3 with Config(signature_version='s3') (path style and virtual
host), boto3's default presigner in us-east-1 (SigV2 URLs) fetched with
urllib, and a second StringToSign written here from the page's rules for the
sub-resources that botocore's V2 signer signs twice ("/b/k?acl?acl",
boto/boto3#4433; S3 refuses those too). The aws cli is not used: version 2
signs SigV4 only. Refusals: wrong secret, unknown key, expired URL, altered
path, query, header or Expires, skewed or missing Date, both forms at once;
and s3.sigv2 = false answering as S3 answers an unsupported mechanism."""
import base64
import email.utils
import hashlib
import hmac
import http.client
import os
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import ACCESS_KEY, SECRET_KEY, REGION, Cluster, check, error_code  # noqa: E402

OTHER_ACCESS_KEY = "AKIAOTHERUSER0000000"
OTHER_SECRET_KEY = "other-secret-key-0000000000000000000000"
BUCKET = "sigv2-b"

# the sub-resources of the page's CanonicalizedResource rules
SUBRESOURCES = {"acl", "cors", "delete", "lifecycle", "location", "logging", "notification",
                "partNumber", "policy", "requestPayment", "tagging", "torrent", "uploadId",
                "uploads", "versionId", "versioning", "versions", "website",
                "response-content-type", "response-content-language", "response-expires",
                "response-cache-control", "response-content-disposition",
                "response-content-encoding"}


def string_to_sign(method, path, query, headers, date_line=None, vhost_bucket=None):
    """The page's StringToSign, written from its rules (not botocore's)."""
    lower = {}
    for k, v in headers:
        lower.setdefault(k.lower(), []).append(v.strip())
    first = lambda n: lower.get(n, [""])[0]  # noqa: E731
    if date_line is None:
        date_line = "" if "x-amz-date" in lower else first("date")
    amz = "".join("%s:%s\n" % (k, ",".join(lower[k])) for k in sorted(lower)
                  if k.startswith("x-amz-"))
    resource = ("/" + vhost_bucket if vhost_bucket else "") + path
    if not vhost_bucket and path.count("/") == 1 and len(path) > 1:
        resource += "/"   # S3 signs "/bucket/" for the bucket itself
    subs = []
    for part in query.split("&") if query else []:
        name, eq, value = part.partition("=")
        if name in SUBRESOURCES:
            subs.append((name, name + (eq + urllib.parse.unquote(value) if eq else "")))
    if subs:
        resource += "?" + "&".join(s for _, s in sorted(subs, key=lambda x: x[0]))
    return "%s\n%s\n%s\n%s\n%s%s" % (method, first("content-md5"), first("content-type"),
                                      date_line, amz, resource)


def sign(secret, sts):
    return base64.b64encode(hmac.new(secret.encode(), sts.encode(), hashlib.sha1).digest()).decode()


def send(c, method, target, headers, body=b""):
    """A raw request with exactly these headers; returns (status, headers, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", c.port, timeout=10)
    conn.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
    names = {k.lower() for k, _ in headers}
    if "host" not in names:
        conn.putheader("Host", "127.0.0.1:%d" % c.port)
    for k, v in headers:
        conn.putheader(k, v)
    if "content-length" not in names:
        conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body)
    r = conn.getresponse()
    out = (r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    conn.close()
    return out


def v2(c, method, path, query="", body=b"", headers=None, key=ACCESS_KEY, secret=SECRET_KEY,
       date=None, vhost_bucket=None, tamper=None, sent_query=None):
    """A V2 header-signed raw request. tamper(headers) may change the headers
    after signing, sent_query the query."""
    h = list(headers or [])
    if date is not False and not any(k.lower() in ("date", "x-amz-date") for k, _ in h):
        h.append(("Date", date or email.utils.formatdate(usegmt=True)))
    sts = string_to_sign(method, path, query, h, vhost_bucket=vhost_bucket)
    h.append(("Authorization", "AWS %s:%s" % (key, sign(secret, sts))))
    if tamper:
        h = tamper(h)
    query = query if sent_query is None else sent_query
    return send(c, method, path + ("?" + query if query else ""), h, body)


def code_of(body):
    return ET.fromstring(body).findtext("Code") if body else None


def url_get(url, method="GET", data=None):
    req = urllib.request.Request(url, method=method, data=data)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def boto_v2(c, **s3cfg):
    return c.boto(signature_version="s3", **({"s3": s3cfg} if s3cfg else {}))


# ---- boto3 with signature_version='s3' -------------------------------------------

def test_boto3_v2_objects(c):
    """The operations botocore's V2 signer signs as the page says: bucket,
    object PUT/GET/HEAD/DELETE, ListObjects, CopyObject (x-amz-copy-source
    in CanonicalizedAmzHeaders), response-* overrides (sub-resources),
    x-amz-meta-* and Content-MD5, keys that need escaping."""
    s3 = boto_v2(c)
    s3.create_bucket(Bucket=BUCKET)
    keys = ["plain", "a b/ü+%.txt", "q?x=1&acl", "~tilde (1)*"]
    for k in keys:
        s3.put_object(Bucket=BUCKET, Key=k, Body=k.encode(), ContentType="text/x-test",
                      Metadata={"Who": "v2  signer"}, ContentMD5=base64.b64encode(
                          hashlib.md5(k.encode()).digest()).decode())
    for k in keys:
        got = s3.get_object(Bucket=BUCKET, Key=k, ResponseContentType="app/x-over",
                            ResponseContentDisposition="attachment; filename=\"x y\"")
        check(got["Body"].read() == k.encode(), "body of %r" % k)
        check(got["ContentType"] == "app/x-over", "override %r" % got["ContentType"])
        check(got["ContentDisposition"] == "attachment; filename=\"x y\"", "disposition")
        check(got["Metadata"] == {"who": "v2  signer"}, "metadata %r" % got["Metadata"])
        check(s3.head_object(Bucket=BUCKET, Key=k)["ContentLength"] == len(k.encode()), "head")
    listed = s3.list_objects(Bucket=BUCKET)
    check(sorted(o["Key"] for o in listed["Contents"]) == sorted(keys), "listing %r" % listed)
    check(listed["Contents"][0]["Owner"]["ID"] == "cairn-dev", "the signer owns it")
    s3.copy_object(Bucket=BUCKET, Key="copied", CopySource={"Bucket": BUCKET, "Key": keys[1]})
    check(s3.get_object(Bucket=BUCKET, Key="copied")["Body"].read() == keys[1].encode(), "copy")
    s3.delete_object(Bucket=BUCKET, Key="copied")
    check(error_code(s3.head_object, Bucket=BUCKET, Key="copied")[1] == 404, "deleted")
    # a Content-MD5 that is signed but not the body's: the body check still runs
    code = error_code(s3.put_object, Bucket=BUCKET, Key="md5", Body=b"abc",
                      ContentMD5=base64.b64encode(hashlib.md5(b"abd").digest()).decode())
    check(code == ("BadDigest", 400), "bad digest %r" % (code,))


def test_boto3_v2_virtual_host(c):
    """Virtual-host addressing (Host: bucket.s3.localhost, s3.domain): the
    CanonicalizedResource starts with "/bucket" although the path does not."""
    gai = socket.getaddrinfo

    def local(host, *a, **kw):   # bucket.s3.localhost -> the gateway
        if isinstance(host, str) and host.endswith(".s3.localhost"):
            host = "127.0.0.1"
        return gai(host, *a, **kw)
    socket.getaddrinfo = local
    try:
        import boto3
        from botocore.config import Config
        s3 = boto3.client("s3", endpoint_url="http://s3.localhost:%d" % c.port,
                          aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
                          region_name=REGION,
                          config=Config(signature_version="s3", retries={"max_attempts": 1},
                                        s3={"addressing_style": "virtual"}))
        s3.put_object(Bucket=BUCKET, Key="vh/obj", Body=b"virtual")
        check(s3.get_object(Bucket=BUCKET, Key="vh/obj")["Body"].read() == b"virtual", "vh get")
        check(any(o["Key"] == "vh/obj" for o in s3.list_objects(Bucket=BUCKET)["Contents"]),
              "vh list")
        url = s3.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": "vh/obj"},
                                        ExpiresIn=300)
        check(url.startswith("http://%s.s3.localhost:" % BUCKET) and "AWSAccessKeyId=" in url,
              "a V2 virtual-host URL: %s" % url)
        check(url_get(url) == (200, b"virtual"), "vh presigned")
    finally:
        socket.getaddrinfo = gai
    # the same object through a raw virtual-host request signed here
    host = [("Host", "%s.s3.localhost:%d" % (BUCKET, c.port))]
    st, _, body = v2(c, "GET", "/vh/obj", headers=host, vhost_bucket=BUCKET)
    check((st, body) == (200, b"virtual"), "raw vh %d %r" % (st, body))
    # signed as path style ("/vh/obj" without the bucket): refused
    st, _, body = v2(c, "GET", "/vh/obj", headers=host)
    check(st == 403 and code_of(body) == "SignatureDoesNotMatch", "vh unsigned bucket %d" % st)


# ---- presigned URLs (query-string authentication) -------------------------------

def test_presigned_v2(c):
    """boto3's default presigner in us-east-1 makes SigV2 URLs: GET and PUT
    work; every altered part of the URL is refused."""
    s3 = c.boto()   # no signature_version: boto3's default presigning
    put = s3.generate_presigned_url("put_object", Params={"Bucket": BUCKET, "Key": "pre/put"},
                                    ExpiresIn=300)
    check("AWSAccessKeyId=" in put and "Signature=" in put, "a V2 URL: %s" % put)
    # (urllib would add a Content-Type, which the signature does not cover)
    pu = urllib.parse.urlsplit(put)
    st, _, body = send(c, "PUT", pu.path + "?" + pu.query, [], b"uploaded by url")
    check(st == 200, "presigned put %d %r" % (st, body))
    url = s3.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": "pre/put"},
                                    ExpiresIn=300)
    check(url_get(url) == (200, b"uploaded by url"), "presigned get")
    # a parameter that is not a sub-resource is not signed (S3 ignores it)
    check(url_get(url + "&foo=bar")[0] == 200, "unsigned plain parameter")
    u = urllib.parse.urlsplit(url)
    q = urllib.parse.parse_qs(u.query)
    expires = int(q["Expires"][0])

    def with_query(**kv):
        qq = {k: v[0] for k, v in q.items()}
        qq.update(kv)
        return urllib.parse.urlunsplit(u._replace(query=urllib.parse.urlencode(qq)))
    tampered = {
        "other key path": url.replace("/pre/put?", "/pre/pux?"),
        "other bucket": url.replace("/%s/" % BUCKET, "/%s/" % BUCKET.replace("b", "c"), 1),
        "later Expires": with_query(Expires=str(expires + 60)),
        "forged signature": with_query(Signature=base64.b64encode(b"x" * 20).decode()),
        "sub-resource added": url + "&acl",
        "response override added": url + "&response-content-type=text%2Fhtml",
        "other method": None,
    }
    for what, t in tampered.items():
        st, body = url_get(url, "HEAD") if t is None else url_get(t)
        check(st == 403, "%s: %d %r" % (what, st, body))
        if body:   # HEAD has none
            check(code_of(body) == "SignatureDoesNotMatch", "%s: %r" % (what, body))
    st, body = url_get(with_query(AWSAccessKeyId="AKIANOBODY0000000000"))
    check(st == 403 and code_of(body) == "InvalidAccessKeyId", "unknown key %d %r" % (st, body))
    other = c.boto(OTHER_ACCESS_KEY, OTHER_SECRET_KEY).generate_presigned_url(
        "get_object", Params={"Bucket": BUCKET, "Key": "pre/put"}, ExpiresIn=300)
    forged = other.replace(OTHER_ACCESS_KEY, ACCESS_KEY)   # B's signature, A's key
    st, body = url_get(forged)
    check(st == 403 and code_of(body) == "SignatureDoesNotMatch", "wrong secret %d" % st)
    st, body = url_get(other)   # B signs right, but the bucket is A's
    check(st == 403 and code_of(body) == "AccessDenied", "other account %d %r" % (st, body))
    # expired: AccessDenied "Request has expired", even with a forged signature
    old = s3.generate_presigned_url("get_object", Params={"Bucket": BUCKET, "Key": "pre/put"},
                                    ExpiresIn=1)
    time.sleep(2.1)
    for u2 in (old, old.replace("Signature=", "Signature=A")):
        st, body = url_get(u2)
        check(st == 403 and code_of(body) == "AccessDenied" and
              ET.fromstring(body).findtext("Message") == "Request has expired",
              "expired %d %r" % (st, body))
    # missing one of the three
    st, body = url_get(url.split("&Expires=")[0] if "&Expires=" in url else
                       url.replace("Expires=%d&" % expires, ""))
    check(st == 403 and code_of(body) == "AccessDenied", "no Expires %d %r" % (st, body))


# ---- header auth, raw -------------------------------------------------------------

def test_header_refusals(c):
    """Each refusal S3 gives a V2 Authorization header, against a base
    request that succeeds."""
    boto_v2(c).put_object(Bucket=BUCKET, Key="raw", Body=b"raw body")
    path = "/%s/raw" % BUCKET
    st, _, body = v2(c, "GET", path)
    check((st, body) == (200, b"raw body"), "base %d %r" % (st, body))
    cases = [
        ("wrong secret", dict(secret=OTHER_SECRET_KEY), 403, "SignatureDoesNotMatch"),
        ("unknown key", dict(key="AKIANOBODY0000000000"), 403, "InvalidAccessKeyId"),
        ("date 20 minutes old", dict(date=email.utils.formatdate(time.time() - 1200, usegmt=True)),
         403, "RequestTimeTooSkewed"),
        ("date 20 minutes ahead", dict(date=email.utils.formatdate(time.time() + 1200,
                                                                   usegmt=True)),
         403, "RequestTimeTooSkewed"),
        ("no date", dict(date=False), 403, "AccessDenied"),
        ("header added after signing",
         dict(tamper=lambda h: h + [("x-amz-meta-late", "1")]), 403, "SignatureDoesNotMatch"),
        ("content type added after signing",
         dict(tamper=lambda h: h + [("Content-Type", "text/plain")]), 403,
         "SignatureDoesNotMatch"),
        ("no colon", dict(tamper=lambda h: [(k, "AWS " + ACCESS_KEY if k == "Authorization"
                                             else v) for k, v in h]), 400, "InvalidArgument"),
        ("both forms", dict(tamper=lambda h: h), 400, "InvalidArgument"),
    ]
    for what, kw, status, code in cases:
        p = path
        if what == "both forms":
            st, _, body = send(c, "GET", p + "?AWSAccessKeyId=%s&Expires=%d&Signature=x" % (
                ACCESS_KEY, time.time() + 60), [("Date", email.utils.formatdate(usegmt=True)),
                                                ("Authorization", "AWS %s:x" % ACCESS_KEY)])
        else:
            st, _, body = v2(c, "GET", p, **kw)
        check(st == status and code_of(body) == code, "%s: %d %r" % (what, st, body))
    # the path, a sub-resource or the method changed after signing
    h = [("Date", email.utils.formatdate(usegmt=True))]
    auth = ("Authorization", "AWS %s:%s" % (ACCESS_KEY, sign(SECRET_KEY, string_to_sign(
        "GET", path, "", h))))
    for method, target in (("GET", path + "x"), ("GET", path + "?acl"), ("HEAD", path),
                           ("GET", "/%s/raw" % BUCKET.upper())):
        st, _, body = send(c, method, target, h + [auth])
        check(st in (400, 403), "%s %s: %d" % (method, target, st))
        if method == "GET" and st == 403:
            check(code_of(body) == "SignatureDoesNotMatch", "%s: %r" % (target, body))
    # x-amz-date wins over a stale Date, and then the Date line is empty
    st, _, body = v2(c, "GET", path, headers=[
        ("Date", "Thu, 01 Jan 2004 00:00:00 GMT"),
        ("x-amz-date", email.utils.formatdate(usegmt=True))])
    check((st, body) == (200, b"raw body"), "x-amz-date %d %r" % (st, body))
    # the doc examples' numeric zone "+0000"
    st, _, _ = v2(c, "GET", path, date=email.utils.formatdate(usegmt=False))
    check(st == 200, "+0000 date %d" % st)
    # anonymous is still refused
    st, _, body = send(c, "GET", path, [])
    check(st == 403 and code_of(body) == "AccessDenied", "anonymous %d" % st)


def test_subresources_raw(c):
    """Sub-resources in the CanonicalizedResource (tagging, acl, uploads,
    partNumber + uploadId, delete with Content-MD5), signed by the page's
    rules, since botocore's V2 signer doubles them."""
    path = "/%s/sub" % BUCKET
    st, _, _ = v2(c, "PUT", path, body=b"0123456789")
    check(st == 200, "put %d" % st)
    tagging = (b'<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>')
    md5 = base64.b64encode(hashlib.md5(tagging).digest()).decode()
    st, _, body = v2(c, "PUT", path, "tagging", tagging, [("Content-MD5", md5)])
    check(st == 200, "put tagging %d %r" % (st, body))
    st, _, body = v2(c, "GET", path, "tagging")
    check(st == 200 and b"<Key>k</Key>" in body, "get tagging %d %r" % (st, body))
    st, _, body = v2(c, "GET", path, "acl")
    check(st == 200 and b"cairn-dev" in body, "get acl %d %r" % (st, body))
    st, _, body = v2(c, "GET", "/%s" % BUCKET, "acl")
    check(st == 200 and b"FULL_CONTROL" in body, "bucket acl %d %r" % (st, body))
    st, _, body = v2(c, "POST", "/%s/mp" % BUCKET, "uploads")
    check(st == 200, "create upload %d %r" % (st, body))
    upload = ET.fromstring(body).findtext("{http://s3.amazonaws.com/doc/2006-03-01/}UploadId")
    part = b"p" * 1000
    st, hdrs, body = v2(c, "PUT", "/%s/mp" % BUCKET,
                        "partNumber=1&uploadId=" + urllib.parse.quote(upload, safe=""), part)
    check(st == 200, "upload part %d %r" % (st, body))
    done = ("<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>%s</ETag></Part>"
            "</CompleteMultipartUpload>" % hdrs["etag"]).encode()
    st, _, body = v2(c, "POST", "/%s/mp" % BUCKET, "uploadId=" + urllib.parse.quote(upload,
                                                                                    safe=""),
                     done, [("Content-Type", "application/xml")])
    check(st == 200 and b"CompleteMultipartUploadResult" in body, "complete %d %r" % (st, body))
    st, _, body = v2(c, "GET", "/%s/mp" % BUCKET)
    check((st, body) == (200, part), "multipart object %d" % st)
    delete = b"<Delete><Object><Key>sub</Key></Object><Object><Key>mp</Key></Object></Delete>"
    st, _, body = v2(c, "POST", "/%s" % BUCKET, "delete", delete, [
        ("Content-MD5", base64.b64encode(hashlib.md5(delete).digest()).decode())])
    check(st == 200 and body.count(b"<Deleted>") == 2, "multi-delete %d %r" % (st, body))
    # signed with versionId=null: the deleted key is 404; a sub-resource
    # value changed after signing is refused before anything is looked up
    st, _, body = v2(c, "GET", path, "versionId=null")
    check(st == 404 and code_of(body) == "NoSuchKey", "versionId=null %d %r" % (st, body))
    st, _, body = v2(c, "GET", path, "versionId=null", sent_query="versionId=nul")
    check(st == 403 and code_of(body) == "SignatureDoesNotMatch", "changed %d %r" % (st, body))


def test_sigv2_off():
    """s3.sigv2 = false: V2 in either form is InvalidRequest ("Please use
    AWS4-HMAC-SHA256"), as S3 answers in regions without SigV2; an expired
    V2 URL still reads "Request has expired"; SigV4 is untouched."""
    with Cluster(nodes=1, settings={"s3.sigv2": "false"}) as c:
        c.boto(signature_version="s3v4").create_bucket(Bucket=BUCKET)
        c.boto(signature_version="s3v4").put_object(Bucket=BUCKET, Key="k", Body=b"v4")
        st, _, body = v2(c, "GET", "/%s/k" % BUCKET)
        check(st == 400 and code_of(body) == "InvalidRequest" and b"AWS4-HMAC-SHA256" in body,
              "header %d %r" % (st, body))
        url = c.boto().generate_presigned_url("get_object", Params={"Bucket": BUCKET,
                                                                    "Key": "k"}, ExpiresIn=300)
        st, body = url_get(url)
        check(st == 400 and code_of(body) == "InvalidRequest", "url %d %r" % (st, body))
        code = error_code(boto_v2(c).get_object, Bucket=BUCKET, Key="k")
        check(code == ("InvalidRequest", 400), "boto3 v2 %r" % (code,))
        check(c.boto(signature_version="s3v4").get_object(Bucket=BUCKET, Key="k")["Body"].read()
              == b"v4", "sigv4 still works")


def main():
    tests = [test_boto3_v2_objects, test_boto3_v2_virtual_host, test_presigned_v2,
             test_header_refusals, test_subresources_raw]
    with Cluster(nodes=1) as c:
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
