"""CORS on cairn-gateway against AWS S3's documented behaviour: the bucket
configuration (Put/Get/DeleteBucketCors) with boto3, the preflight exactly as
browsers send it (raw HTTP, no credentials), the Access-Control-* headers of
actual requests, who may touch the configuration, and a bucket re-created
under the same name starting without the old rules."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "security"))
from s3util import check, error_code, run_tests  # noqa: E402
from secutil import accounts  # noqa: E402

BUCKET = "cors-web"
RULES = {"CORSRules": [
    {"ID": "site", "AllowedOrigins": ["https://www.example.com"],
     "AllowedMethods": ["GET", "PUT"], "AllowedHeaders": ["x-amz-*", "Content-Type"],
     "ExposeHeaders": ["ETag", "x-amz-request-id"], "MaxAgeSeconds": 3000},
    {"AllowedOrigins": ["https://*.example.org"], "AllowedMethods": ["GET"]},
]}


def status_and_headers(resp):
    head = resp.split(b"\r\n\r\n", 1)[0].decode()
    lines = head.split("\r\n")
    hdrs = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    return int(lines[0].split()[1]), hdrs, resp.split(b"\r\n\r\n", 1)[1]


def preflight(c, path, origin, method, req_headers=None):
    h = "OPTIONS %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" % path
    if origin is not None:
        h += "Origin: %s\r\n" % origin
    if method is not None:
        h += "Access-Control-Request-Method: %s\r\n" % method
    if req_headers is not None:
        h += "Access-Control-Request-Headers: %s\r\n" % req_headers
    return status_and_headers(c.raw((h + "\r\n").encode()))


def test_put_get_delete(c):
    s3, _, _ = accounts(c)
    s3.create_bucket(Bucket=BUCKET)
    check(error_code(s3.get_bucket_cors, Bucket=BUCKET) == ("NoSuchCORSConfiguration", 404),
          "no configuration yet")
    s3.put_bucket_cors(Bucket=BUCKET, CORSConfiguration=RULES)
    got = s3.get_bucket_cors(Bucket=BUCKET)["CORSRules"]
    check(got == RULES["CORSRules"], "round trip: %r" % got)
    # a second put replaces the rules
    s3.put_bucket_cors(Bucket=BUCKET, CORSConfiguration={"CORSRules": RULES["CORSRules"][:1]})
    check(len(s3.get_bucket_cors(Bucket=BUCKET)["CORSRules"]) == 1, "replaced")
    r = s3.delete_bucket_cors(Bucket=BUCKET)
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 204, "delete is 204")
    check(error_code(s3.get_bucket_cors, Bucket=BUCKET) == ("NoSuchCORSConfiguration", 404),
          "gone after delete")
    check(s3.delete_bucket_cors(Bucket=BUCKET)["ResponseMetadata"]["HTTPStatusCode"] == 204,
          "deleting none is 204")
    check(error_code(s3.get_bucket_cors, Bucket="cors-missing") == ("NoSuchBucket", 404),
          "missing bucket")
    s3.put_bucket_cors(Bucket=BUCKET, CORSConfiguration=RULES)


def test_put_errors(c):
    s3, _, _ = accounts(c)
    bad = [
        ({"CORSRules": [{"AllowedOrigins": ["*"], "AllowedMethods": ["PATCH"]}]},
         ("InvalidRequest", 400)),
        ({"CORSRules": [{"AllowedOrigins": ["https://*.*.com"], "AllowedMethods": ["GET"]}]},
         ("InvalidRequest", 400)),
        ({"CORSRules": [{"AllowedOrigins": ["*"], "AllowedMethods": ["GET"],
                         "AllowedHeaders": ["x-*-*"]}]}, ("InvalidRequest", 400)),
        ({"CORSRules": [{"AllowedOrigins": ["*"], "AllowedMethods": ["GET"]}] * 101},
         ("MalformedXML", 400)),
        ({"CORSRules": []}, ("MalformedXML", 400)),
    ]
    for cfg, want in bad:
        got = error_code(s3.put_bucket_cors, Bucket=BUCKET, CORSConfiguration=cfg)
        check(got == want, "%r: %r" % (cfg["CORSRules"][:1], got))
    s3.put_bucket_cors(Bucket=BUCKET, CORSConfiguration={"CORSRules": [
        {"AllowedOrigins": ["*"], "AllowedMethods": ["GET"]}] * 100})
    s3.put_bucket_cors(Bucket=BUCKET, CORSConfiguration=RULES)
    # a body that is no CORSConfiguration
    body = b"<Nope/>"
    req = ("PUT /%s?cors HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (BUCKET, len(body)))
    st, _, _ = status_and_headers(c.raw(req.encode() + body))
    check(st == 403, "unsigned put is refused before its body: %d" % st)
    # PutBucketCors requires an integrity header (AWS, PutBucketCors: "The
    # Content-MD5 header is required"); a signed request without it is 400
    from test_gateway_bucket_tagging import signed
    import base64
    import hashlib
    doc = (b'<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin>'
           b'<AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>')
    st, body = signed(c, "PUT", "/%s?cors" % BUCKET, doc)
    check(st == 400 and b"<Code>InvalidRequest</Code>" in body and b"Content-MD5" in body,
          "PutBucketCors without Content-MD5: %d %r" % (st, body))
    md5 = base64.b64encode(hashlib.md5(doc).digest()).decode()
    st, body = signed(c, "PUT", "/%s?cors" % BUCKET, doc, {"Content-MD5": md5})
    check(st == 200, "PutBucketCors with Content-MD5: %d %r" % (st, body))
    s3.put_bucket_cors(Bucket=BUCKET, CORSConfiguration=RULES)


def test_preflight(c):
    path = "/%s/photo.jpg" % BUCKET
    st, h, _ = preflight(c, path, "https://www.example.com", "PUT", "content-type, x-amz-date")
    check(st == 200, "allowed preflight: %d" % st)
    check(h.get("access-control-allow-origin") == "https://www.example.com", repr(h))
    check(h.get("access-control-allow-methods") == "GET, PUT", repr(h))
    check(h.get("access-control-allow-headers") == "content-type, x-amz-date", repr(h))
    check(h.get("access-control-max-age") == "3000", repr(h))
    check(h.get("access-control-expose-headers") == "ETag, x-amz-request-id", repr(h))
    check(h.get("access-control-allow-credentials") == "true", repr(h))
    check("Origin" in h.get("vary", ""), repr(h))
    st, h, _ = preflight(c, "/" + BUCKET, "https://cdn.example.org", "GET")
    check(st == 200 and h.get("access-control-allow-origin") == "https://cdn.example.org",
          "wildcard origin %d %r" % (st, h))
    refused = [("https://evil.example.net", "GET", None),
               ("https://www.example.com", "DELETE", None),
               ("https://www.example.com", "PUT", "x-custom"),
               ("https://cdn.example.org", "PUT", None)]
    for origin, method, hdrs in refused:
        st, h, body = preflight(c, path, origin, method, hdrs)
        check(st == 403 and b"AccessForbidden" in body and b"CORSResponse" in body,
              "refused %s %s: %d %r" % (origin, method, st, body))
        check("access-control-allow-origin" not in h, "no CORS headers on a refusal")
    st, _, body = preflight(c, path, None, "GET")
    check(st == 400 and b"BadRequest" in body, "no Origin: %d" % st)
    st, _, body = preflight(c, path, "https://www.example.com", None)
    check(st == 400 and b"BadRequest" in body, "no method: %d" % st)


def test_preflight_without_config(c):
    s3, _, _ = accounts(c)
    s3.create_bucket(Bucket="cors-none")
    st, h, body = preflight(c, "/cors-none/k", "https://www.example.com", "GET")
    check(st == 403 and b"CORSResponse" in body, "no config: %d %r" % (st, body))
    st, _, body = preflight(c, "/cors-nobucket/k", "https://www.example.com", "GET")
    check(st == 404 and b"NoSuchBucket" in body, "no bucket: %d" % st)


def test_actual_request_headers(c):
    s3, _, _ = accounts(c)
    s3.put_object(Bucket=BUCKET, Key="k", Body=b"hello")
    hooked = {}

    def add_origin(params, **_):
        params["headers"]["Origin"] = hooked["origin"]
    s3.meta.events.register("before-call.s3.GetObject", add_origin, unique_id="cors-o")
    try:
        hooked["origin"] = "https://www.example.com"
        h = s3.get_object(Bucket=BUCKET, Key="k")["ResponseMetadata"]["HTTPHeaders"]
        check(h.get("access-control-allow-origin") == "https://www.example.com", repr(h))
        check(h.get("access-control-expose-headers") == "ETag, x-amz-request-id", repr(h))
        check("Origin" in h.get("vary", ""), repr(h))
        hooked["origin"] = "https://evil.example.net"
        h = s3.get_object(Bucket=BUCKET, Key="k")["ResponseMetadata"]["HTTPHeaders"]
        check("access-control-allow-origin" not in h, "unmatched origin: %r" % h)
    finally:
        s3.meta.events.unregister("before-call.s3.GetObject", unique_id="cors-o")
    h = s3.get_object(Bucket=BUCKET, Key="k")["ResponseMetadata"]["HTTPHeaders"]
    check("access-control-allow-origin" not in h and "vary" not in h, "no Origin: %r" % h)


def test_other_accounts(c):
    _, b, anon = accounts(c)
    for who, cl in (("other account", b), ("anonymous", anon)):
        for fn, kw in ((cl.get_bucket_cors, {}), (cl.delete_bucket_cors, {}),
                       (cl.put_bucket_cors, {"CORSConfiguration": RULES})):
            got = error_code(fn, Bucket=BUCKET, **kw)
            check(got == ("AccessDenied", 403), "%s %s: %r" % (who, fn.__name__, got))
    s3, _, _ = accounts(c)
    check(len(s3.get_bucket_cors(Bucket=BUCKET)["CORSRules"]) == 2, "rules unchanged")


def test_aws_cli(c):
    """The aws cli's put/get/delete-bucket-cors round trip (it sends the
    Content-MD5 S3 requires for this body)."""
    s3, _, _ = accounts(c)
    s3.create_bucket(Bucket="cors-cli")
    cfg = {"CORSRules": [{"AllowedOrigins": ["https://app.example.com"],
                          "AllowedMethods": ["GET", "HEAD"], "AllowedHeaders": ["*"],
                          "MaxAgeSeconds": 600}]}
    c.aws("s3api", "put-bucket-cors", "--bucket", "cors-cli", "--cors-configuration",
          json.dumps(cfg))
    out = json.loads(c.aws("s3api", "get-bucket-cors", "--bucket", "cors-cli").stdout)
    check(out["CORSRules"] == cfg["CORSRules"], "aws cli round trip: %r" % out)
    st, h, _ = preflight(c, "/cors-cli/k", "https://app.example.com", "HEAD")
    check(st == 200 and h.get("access-control-allow-origin") == "https://app.example.com",
          "the rules the cli put answer a preflight: %d %r" % (st, h))
    c.aws("s3api", "delete-bucket-cors", "--bucket", "cors-cli")
    p = c.aws("s3api", "get-bucket-cors", "--bucket", "cors-cli", check_rc=False)
    check(p.returncode != 0 and b"NoSuchCORSConfiguration" in p.stderr,
          "gone after the cli's delete: %r" % p.stderr[-200:])


def test_recreated_bucket(c):
    s3, _, _ = accounts(c)
    s3.create_bucket(Bucket="cors-again")
    s3.put_bucket_cors(Bucket="cors-again", CORSConfiguration=RULES)
    s3.delete_bucket(Bucket="cors-again")
    s3.create_bucket(Bucket="cors-again")
    check(error_code(s3.get_bucket_cors, Bucket="cors-again") == ("NoSuchCORSConfiguration", 404),
          "re-created bucket has no rules")
    st, _, _ = preflight(c, "/cors-again/k", "https://www.example.com", "GET")
    check(st == 403, "nor answers a preflight: %d" % st)


if __name__ == "__main__":
    run_tests([test_put_get_delete, test_put_errors, test_preflight,
               test_preflight_without_config, test_actual_request_headers,
               test_other_accounts, test_aws_cli, test_recreated_bucket])
