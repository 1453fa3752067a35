"""aws-chunked uploads as current AWS SDKs send them (this Debian's botocore
predates their default checksums, so the requests are built here and signed
with botocore's SigV4): STREAMING-UNSIGNED-PAYLOAD-TRAILER with a CRC32
trailer, chunked Transfer-Encoding without Content-Length, x-amz-checksum
headers on plain PUTs, and broken framing / wrong trailers refused with the
stored object left unchanged."""
import base64
import http.client
import os
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import ACCESS_KEY, REGION, SECRET_KEY, check, run_tests  # noqa: E402

import datetime  # noqa: E402
import hashlib  # noqa: E402
import hmac  # noqa: E402


def sign_v4(method, path, headers, port):
    """Adds x-amz-date and Authorization (SigV4 over every header given, whose
    x-amz-content-sha256 is taken as is: botocore would overwrite it)."""
    now = datetime.datetime.utcnow()
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    h = {k.lower(): str(v).strip() for k, v in headers.items()}
    h["host"] = "127.0.0.1:%d" % port
    h["x-amz-date"] = amz_date
    names = sorted(h)
    canon = "\n".join([method, path, "", "".join("%s:%s\n" % (n, h[n]) for n in names),
                        ";".join(names), h["x-amz-content-sha256"]])
    scope = "%s/%s/s3/aws4_request" % (day, REGION)
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                     hashlib.sha256(canon.encode()).hexdigest()])
    k = ("AWS4" + SECRET_KEY).encode()
    for part in (day, REGION, "s3", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    h["authorization"] = ("AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s"
                          % (ACCESS_KEY, scope, ";".join(names), sig))
    return h


def signed_put(c, path, body, headers, chunked_te=False):
    conn = http.client.HTTPConnection("127.0.0.1", c.port, timeout=30)
    hdrs = sign_v4("PUT", path, headers, c.port)
    if chunked_te:
        conn.putrequest("PUT", path, skip_accept_encoding=True, skip_host=True)
        for k, v in hdrs.items():
            conn.putheader(k, v)
        conn.putheader("Transfer-Encoding", "chunked")
        conn.endheaders()
        for i in range(0, len(body), 1000):
            piece = body[i:i + 1000]
            conn.send(b"%x\r\n%s\r\n" % (len(piece), piece))
        conn.send(b"0\r\n\r\n")
    else:
        conn.request("PUT", path, body=body, headers=hdrs)
    r = conn.getresponse()
    out = (r.status, r.read(), dict(r.getheaders()))
    conn.close()
    return out


def unsigned_trailer_body(data, chunk, crc_b64):
    out = b""
    for i in range(0, len(data), chunk):
        piece = data[i:i + chunk]
        out += b"%x\r\n%s\r\n" % (len(piece), piece)
    out += b"0\r\nx-amz-checksum-crc32:%s\r\n\r\n" % crc_b64.encode()
    return out


def crc32_b64(data):
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


def test_unsigned_trailer(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="chk")
    data = os.urandom(200000)
    hdrs = {"x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
            "Content-Encoding": "aws-chunked", "x-amz-trailer": "x-amz-checksum-crc32",
            "x-amz-decoded-content-length": str(len(data))}
    body = unsigned_trailer_body(data, 65536, crc32_b64(data))
    st, resp, _ = signed_put(c, "/chk/obj", body, hdrs)
    check(st == 200, "put %d %r" % (st, resp))
    g = s3.get_object(Bucket="chk", Key="obj")
    check(g["Body"].read() == data, "round trip")
    check(g.get("ContentEncoding") in (None, ""), "aws-chunked not stored")
    # wrong trailer checksum: BadDigest, object unchanged
    bad = unsigned_trailer_body(b"X" * len(data), 65536, crc32_b64(data))
    st, resp, _ = signed_put(c, "/chk/obj", bad, hdrs)
    check(st == 400 and b"BadDigest" in resp, "bad trailer %d %r" % (st, resp))
    # broken framing
    st, resp, _ = signed_put(c, "/chk/obj", b"zz\r\n" + body[4:], hdrs)
    check(st in (400, 403) and b"<Code>" in resp, "bad framing %d %r" % (st, resp))
    # decoded length differs
    h2 = dict(hdrs, **{"x-amz-decoded-content-length": str(len(data) + 1)})
    st, resp, _ = signed_put(c, "/chk/obj", body, h2)
    check(st == 400, "decoded length %d %r" % (st, resp))
    check(s3.get_object(Bucket="chk", Key="obj")["Body"].read() == data, "unchanged")


def test_checksum_headers_and_te_chunked(c):
    s3 = c.boto()
    data = os.urandom(5000)
    hdrs = {"x-amz-content-sha256": "UNSIGNED-PAYLOAD", "x-amz-checksum-crc32": crc32_b64(data)}
    st, resp, h = signed_put(c, "/chk/plain", data, hdrs)
    check(st == 200 and h.get("x-amz-checksum-crc32") == crc32_b64(data), "crc hdr %d" % st)
    hdrs["x-amz-checksum-crc32"] = crc32_b64(b"other")
    st, resp, _ = signed_put(c, "/chk/plain", data, hdrs)
    check(st == 400 and b"BadDigest" in resp, "bad crc header %d %r" % (st, resp))
    # Transfer-Encoding: chunked, no Content-Length
    st, resp, _ = signed_put(c, "/chk/te", data, {"x-amz-content-sha256": "UNSIGNED-PAYLOAD"},
                             chunked_te=True)
    check(st == 200, "te chunked %d %r" % (st, resp))
    check(s3.get_object(Bucket="chk", Key="te")["Body"].read() == data, "te round trip")
    check(s3.get_object(Bucket="chk", Key="plain")["Body"].read() == data, "unchanged")


def test_entity_too_large(c):
    s3 = c.boto()
    from s3util import error_code
    # over large_object.threshold_of_chunk_len: stored as chunks
    big = b"x" * (5 * 1024 * 1024 + 1)
    s3.put_object(Bucket="chk", Key="big", Body=big)
    check(s3.get_object(Bucket="chk", Key="big")["Body"].read() == big, "chunked round trip")
    # over s3.max_object_size (5G): refused before 100 Continue
    hdrs = sign_v4("PUT", "/chk/huge", {"x-amz-content-sha256": "UNSIGNED-PAYLOAD",
                                        "content-length": str(5 * 1024 ** 3 + 1),
                                        "expect": "100-continue"}, c.port)
    req = b"PUT /chk/huge HTTP/1.1\r\n" + b"".join(
        b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in hdrs.items()) + b"\r\n"
    resp = c.raw(req, timeout=5)
    check(resp.startswith(b"HTTP/1.1 400") and b"EntityTooLarge" in resp, "too large %r" % resp)
    check(error_code(s3.head_object, Bucket="chk", Key="huge")[1] == 404, "nothing stored")


if __name__ == "__main__":
    run_tests([test_unsigned_trailer, test_checksum_headers_and_te_chunked,
               test_entity_too_large])
