"""The HTTP layer under attack: request-line and head limits, framing that
could smuggle a second request (Content-Length vs Transfer-Encoding, obs-fold,
bare LF, NUL), broken chunked bodies, Range edge cases, presigned expiry,
the Host header, XML 1.0 validity of every listing and error document, and
secrets in the gateway log. Each case expects what AWS S3 (or RFC 9112 where
S3 says nothing) answers; docs/security.md ("The HTTP layer") says why."""
import datetime
import hashlib
import hmac
import http.client
import os
import re
import sys
import time
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from secutil import ACCESS_KEY, REGION, SECRET_KEY, accounts, check, error_code, run_tests  # noqa: E402,F401
from test_gateway_chunked import sign_v4  # noqa: E402

HEALTH = b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\n\r\n"
STATUS = re.compile(rb"HTTP/1\.[01] (\d{3}) ")


def statuses(resp):
    """The status codes of every response in resp, in order."""
    return [int(s) for s in STATUS.findall(resp)]


def raw_closed(c, data, timeout=4):
    """Sends data; returns (bytes read, whether the server closed the
    connection before the timeout)."""
    t0 = time.monotonic()
    out = c.raw(data, timeout=timeout)
    return out, time.monotonic() - t0 < timeout - 0.5


def body_of(resp):
    return resp.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in resp else b""


def xml_code(body):
    return ET.fromstring(body).findtext("Code")


def refused_alone(c, req, status, what):
    """req followed by a pipelined health check: exactly one answer (status),
    then the connection is closed, so nothing after req is read as a
    request of its own."""
    out, closed = raw_closed(c, req + HEALTH)
    check(statuses(out) == [status], "%s: statuses %r in %r" % (what, statuses(out), out[:300]))
    check(closed, "%s: connection left open" % what)
    check(b"Connection: close" in out, "%s: no Connection: close" % what)
    return out


def signed_request(c, method, path, body=b"", headers=None):
    """A header-signed request built by botocore's SigV4 (the query is
    signed as sent); returns (status, headers, body)."""
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    req = AWSRequest(method=method, url=c.url + path, data=body, headers=headers or {})
    S3SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "s3", REGION).add_auth(req)
    conn = http.client.HTTPConnection("127.0.0.1", c.port, timeout=10)
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    if "host" not in {k.lower() for k in req.headers}:
        conn.putheader("Host", "127.0.0.1:%d" % c.port)   # what botocore signed
    for k, v in req.headers.items():
        conn.putheader(k, v)
    conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body)
    r = conn.getresponse()
    out = (r.status, dict(r.getheaders()), r.read())
    conn.close()
    return out


def presign(c, path, when, expires, key=SECRET_KEY):
    """A SigV4 presigned GET URL signed at `when` (datetime, UTC)."""
    amz_date, day = when.strftime("%Y%m%dT%H%M%SZ"), when.strftime("%Y%m%d")
    scope = "%s/%s/s3/aws4_request" % (day, REGION)
    q = {"X-Amz-Algorithm": "AWS4-HMAC-SHA256", "X-Amz-Credential": "%s/%s" % (ACCESS_KEY, scope),
         "X-Amz-Date": amz_date, "X-Amz-Expires": str(expires), "X-Amz-SignedHeaders": "host"}
    cq = "&".join("%s=%s" % (urllib.parse.quote(k, safe="-_.~"), urllib.parse.quote(v, safe="-_.~"))
                  for k, v in sorted(q.items()))
    canon = "\n".join(["GET", path, cq, "host:127.0.0.1:%d\n" % c.port, "host",
                       "UNSIGNED-PAYLOAD"])
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                     hashlib.sha256(canon.encode()).hexdigest()])
    k = ("AWS4" + key).encode()
    for part in (day, REGION, "s3", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    return "%s%s?%s&X-Amz-Signature=%s" % (c.url, path, cq, sig)


def url_get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def setup_bucket(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="sechttp")
    s3.put_object(Bucket="sechttp", Key="obj", Body=b"0123456789")
    return s3


# ---- 1. request line over the limit ----------------------------------------

def test_uri_too_long_is_414(c):
    req = b"GET /sechttp/" + b"a" * (20 * 1024) + b" HTTP/1.1\r\nHost: x\r\n\r\n"
    out = refused_alone(c, req, 414, "long target")
    check(xml_code(body_of(out)) is not None, "414 has an S3 error document: %r" % out[:300])


# ---- 2. broken chunked framing ----------------------------------------------

def test_bad_chunk_size_line_is_not_a_timeout(c):
    hdrs = sign_v4("PUT", "/sechttp/te", {"x-amz-content-sha256": "UNSIGNED-PAYLOAD"}, c.port)
    head = b"PUT /sechttp/te HTTP/1.1\r\n" + b"".join(
        b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in hdrs.items())
    head += b"Transfer-Encoding: chunked\r\n\r\n"
    for bad in (b"zz\r\nhello\r\n0\r\n\r\n",            # not hex
                b"5\r\nhelloXX0\r\n\r\n",                # no CRLF after the data
                b"ffffffffffffffffffff\r\nx\r\n"):       # size overflows
        out, closed = raw_closed(c, head + bad)
        st = statuses(out)
        check(st[:1] == [400], "bad chunk %r: %r" % (bad, out[:300]))
        code = xml_code(body_of(out))
        check(code == "IncompleteBody", "bad chunk %r: code %r" % (bad, code))
        check(closed, "bad chunk %r: connection left open" % bad)


def test_bad_aws_chunked_framing(c):
    hdrs = {"x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
            "Content-Encoding": "aws-chunked", "x-amz-decoded-content-length": "5"}
    h = sign_v4("PUT", "/sechttp/awsc", hdrs, c.port)
    body = b"q!\r\nhello\r\n0\r\n\r\n"
    req = b"PUT /sechttp/awsc HTTP/1.1\r\n" + b"".join(
        b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in h.items())
    req += b"Content-Length: %d\r\n\r\n" % len(body) + body
    out, _ = raw_closed(c, req)
    check(statuses(out)[:1] == [400], "aws-chunked framing: %r" % out[:300])
    check(xml_code(body_of(out)) != "RequestTimeout", "aws-chunked: not a timeout")


# ---- 3, 4. Range --------------------------------------------------------------

def test_416_has_content_range(c):
    s3 = c.boto()
    for rng in ("bytes=10-", "bytes=18446744073709551615-", "bytes=99999999999999999999999-",
                "bytes=-0"):
        for op in (s3.get_object, s3.head_object):
            try:
                op(Bucket="sechttp", Key="obj", Range=rng)
                raise AssertionError("%s %s did not fail" % (op.__name__, rng))
            except s3.exceptions.ClientError as e:
                md = e.response["ResponseMetadata"]
                check(md["HTTPStatusCode"] == 416, "%s %s: %r" % (op.__name__, rng, md))
                check(md["HTTPHeaders"].get("content-range") == "bytes */10",
                      "%s %s Content-Range %r" % (op.__name__, rng, md["HTTPHeaders"]))
                if op is s3.get_object:
                    check(e.response["Error"]["Code"] == "InvalidRange", rng)


def test_huge_range_last_byte_clamps(c):
    s3 = c.boto()
    for rng in ("bytes=3-18446744073709551615", "bytes=3-" + "9" * 40):
        r = s3.get_object(Bucket="sechttp", Key="obj", Range=rng)
        check(r["ResponseMetadata"]["HTTPStatusCode"] == 206, rng)
        check(r["ContentRange"] == "bytes 3-9/10" and r["Body"].read() == b"3456789", rng)
    r = s3.get_object(Bucket="sechttp", Key="obj", Range="bytes=-" + "9" * 30)
    check(r["ContentRange"] == "bytes 0-9/10", "huge suffix is the whole object")


# ---- 5. presigned expiry and clock skew --------------------------------------

def test_presigned_expired_is_access_denied(c):
    now = datetime.datetime.utcnow()
    cases = [
        (now - datetime.timedelta(hours=2), 3600, "expired an hour ago"),
        (now - datetime.timedelta(days=2), 3600, "two days old"),
        (now - datetime.timedelta(days=9), 604800, "older than a week"),
        (now - datetime.timedelta(seconds=1000), 1, "past the skew window too"),
    ]
    for when, exp, what in cases:
        st, _, body = url_get(presign(c, "/sechttp/obj", when, exp))
        root = ET.fromstring(body)
        check(st == 403 and root.findtext("Code") == "AccessDenied" and
              root.findtext("Message") == "Request has expired", "%s: %d %r" % (what, st, body))
    # a forged signature on an expired URL: still expired (checked first, as S3)
    st, _, body = url_get(presign(c, "/sechttp/obj", now - datetime.timedelta(days=2), 60,
                                  key="wrong"))
    check(st == 403 and b"Request has expired" in body, "expired+forged %d %r" % (st, body))
    # boto3's own presigned URL, after its one second
    s3 = c.boto(signature_version="s3v4")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "sechttp", "Key": "obj"},
                                    ExpiresIn=1)
    time.sleep(2.1)
    st, _, body = url_get(url)
    check(st == 403 and b"Request has expired" in body, "boto3 url %d %r" % (st, body))
    # the same with boto3's default presigner here (SigV2, which the gateway
    # does not serve): expired is still what it is told, not InvalidRequest
    url = c.boto().generate_presigned_url("get_object", Params={"Bucket": "sechttp",
                                                                "Key": "obj"}, ExpiresIn=1)
    check("AWSAccessKeyId=" in url, "a SigV2 URL: %s" % url)
    time.sleep(2.1)
    st, _, body = url_get(url)
    check(st == 403 and xml_code(body) == "AccessDenied" and b"Request has expired" in body,
          "SigV2 url %d %r" % (st, body))
    # still valid: 200
    st, _, body = url_get(presign(c, "/sechttp/obj", now, 600))
    check(st == 200 and body == b"0123456789", "valid presign %d %r" % (st, body))


def test_header_auth_skew_is_request_time_too_skewed(c):
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    import unittest.mock
    past = datetime.datetime.utcnow() - datetime.timedelta(hours=1)
    req = AWSRequest(method="GET", url=c.url + "/sechttp/obj")
    with unittest.mock.patch("botocore.auth.datetime") as dt:
        dt.datetime.utcnow.return_value = past
        S3SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "s3", REGION).add_auth(req)
    head = b"GET /sechttp/obj HTTP/1.1\r\n" + b"".join(
        b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in req.headers.items())
    out = c.raw(head + b"Host: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % c.port
                if "host" not in {k.lower() for k in req.headers} else
                head + b"Connection: close\r\n\r\n")
    check(statuses(out) == [403] and xml_code(body_of(out)) == "RequestTimeTooSkewed",
          "skewed header auth %r" % out[:400])


# ---- 6. Host -------------------------------------------------------------------

def test_http11_without_host_is_400(c):
    out = refused_alone(c, b"GET /_cairn/health HTTP/1.1\r\n\r\n", 400, "no Host")
    check(xml_code(body_of(out)) == "InvalidRequest", "no Host code %r" % out[:300])
    refused_alone(c, b"GET /_cairn/health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400,
                  "two Host")
    # HTTP/1.0 without Host is fine
    out = c.raw(b"GET /_cairn/health HTTP/1.0\r\n\r\n")
    check(statuses(out) == [200], "HTTP/1.0 without Host %r" % out[:200])


# ---- 7. XML 1.0 validity ---------------------------------------------------------

BAD_KEYS = ["ctl\x01key", "tab\tand\x1fus", "nonchar\uffff"]


def xml_ok(body, what):
    try:
        return ET.fromstring(body)
    except ET.ParseError as e:
        raise AssertionError("%s: not XML 1.0 (%s): %r" % (what, e, body[:400]))


def test_listings_are_valid_xml(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="secxml")
    for k in BAD_KEYS:
        s3.put_object(Bucket="secxml", Key=k, Body=b"x")
    up = s3.create_multipart_upload(Bucket="secxml", Key=BAD_KEYS[0])["UploadId"]
    # boto3 asks for encoding-type=url itself and decodes
    got = sorted(o["Key"] for o in s3.list_objects_v2(Bucket="secxml")["Contents"])
    check(got == sorted(BAD_KEYS), "v2 url %r" % got)
    got = sorted(o["Key"] for o in s3.list_objects(Bucket="secxml")["Contents"])
    check(got == sorted(BAD_KEYS), "v1 url %r" % got)
    q = urllib.parse.quote
    for path in ("/secxml?list-type=2", "/secxml", "/secxml?versions", "/secxml?uploads",
                 "/secxml?list-type=2&prefix=%01", "/secxml?prefix=%FF",
                 "/secxml?list-type=2&start-after=%01", "/secxml?marker=%01",
                 "/secxml?list-type=2&continuation-token=%01",
                 "/secxml?versions&version-id-marker=%01&key-marker=a",
                 "/secxml?uploads&key-marker=%01",
                 "/secxml/%s?uploadId=%s" % (q(BAD_KEYS[0]), up),
                 "/secxml/%s" % q("missing\x01key"), "/secxml/%s?uploadId=nope" % q("x\x02")):
        st, _, body = signed_request(c, "GET", path)
        root = xml_ok(body, path)
        if st == 400:
            check(root.findtext("Code") == "InvalidArgument", "%s: %r" % (path, body))
        check(st in (200, 400, 404), "%s: %d" % (path, st))
        # with encoding-type=url every listing is served, and decodes back
        if "uploadId" in path or "missing" in path or "continuation-token" in path:
            continue   # no listing (or a token that is not ours: InvalidArgument)
        st, _, body = signed_request(c, "GET", path + ("&" if "?" in path else "?") +
                                     "encoding-type=url")
        root = xml_ok(body, path + " url")
        check(st == 200, "%s url: %d %r" % (path, st, body[:300]))
        keys = [urllib.parse.unquote(e.text) for e in root.iter()
                if e.tag.endswith("}Key") and e.text]
        for k in keys:
            check(k in BAD_KEYS, "%s url: key %r" % (path, k))
    # a plain listing that would need one of those keys is refused, naming
    # the way out
    st, _, body = signed_request(c, "GET", "/secxml?list-type=2")
    check(st == 400 and b"encoding-type=url" in body, "refusal %d %r" % (st, body))
    # without such a key in the page, a plain listing works
    st, _, body = signed_request(c, "GET", "/secxml?list-type=2&prefix=zzz")
    check(st == 200, "clean page %d %r" % (st, body))
    s3.abort_multipart_upload(Bucket="secxml", Key=BAD_KEYS[0], UploadId=up)


# ---- 8. secrets in the log ----------------------------------------------------------

def test_signature_never_logged(c):
    s3 = c.boto(signature_version="s3v4")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "sechttp", "Key": "obj"},
                                    ExpiresIn=600)
    sig = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["X-Amz-Signature"][0]
    st, _, _ = url_get(url)
    check(st == 200, "presigned get %d" % st)
    bad = url.replace(sig, "0" * 64)   # refused: the refusal is logged too
    st, _, _ = url_get(bad)
    check(st == 403, "forged %d" % st)
    # SigV2 (refused, but logged): its Signature parameter, and one whose
    # name is percent-encoded (the verifier decodes names)
    v2 = c.boto().generate_presigned_url("get_object", Params={"Bucket": "sechttp",
                                                               "Key": "obj"}, ExpiresIn=600)
    sig2 = urllib.parse.parse_qs(urllib.parse.urlsplit(v2).query)["Signature"][0]
    url_get(v2)
    url_get(url.replace("X-Amz-Signature=", "X-Amz-%53ignature="))
    # a header-signed request: its Authorization value must not show either
    status, hdrs, _ = signed_request(c, "GET", "/sechttp/obj?x-id=GetObject")
    check(status == 200, "header-signed GET %d" % status)
    time.sleep(0.3)
    log = c.log_text()
    check("/sechttp/obj" in log, "the access log names the request")
    check(sig not in log, "presigned signature in the log")
    check(sig2 not in log and urllib.parse.quote(sig2, safe="") not in log,
          "SigV2 signature in the log")
    check("0" * 64 not in log, "forged signature in the log")
    check("Signature=" not in log or "X-Amz-Signature=REDACTED" in log, "signature param")
    for line in log.splitlines():
        check("AWS4-HMAC-SHA256 Credential" not in line, "Authorization value logged: " + line)


# ---- 9. smuggling ---------------------------------------------------------------------

def test_smuggling_framing(c):
    body = b"0\r\n\r\n" + HEALTH
    refused_alone(c, b"POST /sechttp/obj HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n" % len(body) + body, 400, "CL+TE")
    refused_alone(c, b"POST /sechttp/obj HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                  b"Content-Length: 3\r\n\r\n" + body, 400, "TE+CL")
    refused_alone(c, b"PUT /sechttp/obj HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                  b"Content-Length: 40\r\n\r\nabc", 400, "two Content-Length")
    refused_alone(c, b"PUT /sechttp/obj HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 40\r\n\r\nabc",
                  400, "Content-Length list")
    for te in (b"gzip", b"gzip, chunked", b"chunked, gzip", b"identity", b"xchunked",
               b"chunked\r\nTransfer-Encoding: chunked"):
        out = c.raw(b"PUT /sechttp/obj HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + te +
                    b"\r\n\r\n0\r\n\r\n" + HEALTH, timeout=4)
        st = statuses(out)
        check(len(st) == 1 and st[0] in (400, 501), "TE %r: %r" % (te, out[:300]))


def test_smuggling_header_syntax(c):
    cases = [
        (b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  folded\r\n\r\n", "obs-fold"),
        (b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\n\tX-A: 1\r\n\r\n", "leading tab"),
        (b"GET /_cairn/health HTTP/1.1\r\nHost: x\nX-A: 1\r\n\r\n", "bare LF in headers"),
        (b"GET /_cairn/health HTTP/1.1\nHost: x\r\n\r\n", "bare LF after request line"),
        (b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\n\n", "bare LF blank line"),
        (b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", "NUL in value"),
        (b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\nX-\x00A: 1\r\n\r\n", "NUL in name"),
        (b"GET /_cairn/health HTTP/1.1\r\nHost : x\r\n\r\n", "space before colon"),
        (b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\nContent-Length : 5\r\n\r\n", "CL space"),
        (b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n", "bare CR"),
    ]
    for req, what in cases:
        refused_alone(c, req, 400, what)
    # a well-framed pipeline is answered twice
    out = c.raw(HEALTH + b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    check(statuses(out) == [200, 200], "pipeline %r" % out[:300])


if __name__ == "__main__":
    def init(c):
        setup_bucket(c)
    init.__name__ = "setup_bucket"
    run_tests([init, test_uri_too_long_is_414, test_bad_chunk_size_line_is_not_a_timeout,
               test_bad_aws_chunked_framing, test_416_has_content_range,
               test_huge_range_last_byte_clamps, test_presigned_expired_is_access_denied,
               test_header_auth_skew_is_request_time_too_skewed,
               test_http11_without_host_is_400, test_listings_are_valid_xml,
               test_signature_never_logged, test_smuggling_framing,
               test_smuggling_header_syntax],
              {"settings": {"http.body_idle_timeout": "3s"}})
