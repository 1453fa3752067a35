"""Multipart uploads through cairn-gateway over 3 storage nodes (1 MiB chunks,
128 KiB GET slices): boto3 with parts of unequal sizes (GET whole, every
part by partNumber, random ranges across part boundaries checked byte for
byte, the md5-of-md5s-N ETag), re-uploading a part, Complete's checks
(ETags, order, missing parts, the 5 MiB minimum), ListParts and
ListMultipartUploads with pagination, UploadPartCopy with a range, Abort and
unused parts reclaiming their chunks, and the aws cli's default multipart
`s3 cp` up and down with a sha256 round trip (64 MiB; 1 GiB with
CAIRN_LO_HEAVY=1)."""
import hashlib
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import check, error_code, run_tests  # noqa: E402
from test_gateway_large import chunk_keys, wait_no_chunks  # noqa: E402

MIB = 1024 * 1024
HEAVY = os.environ.get("CAIRN_LO_HEAVY") == "1"
SETTINGS = {
    "large_object.threshold_of_chunk_len": "1M",
    "large_object.chunked_obj_len": "1M",
    "large_object.reading_chunked_obj_len": "128K",
    "large_object.read_prefetch": 4,
    "large_object.reclaim_delay": "1s",
}
NODE_SETTINGS = {"obj_containers.sync_mode": "none", "io_threads": 2}


def mp_etag(parts):
    d = b"".join(hashlib.md5(p).digest() for p in parts)
    return '"%s-%d"' % (hashlib.md5(d).hexdigest(), len(parts))


def upload(s3, bucket, key, parts, numbers=None):
    up = s3.create_multipart_upload(Bucket=bucket, Key=key, ContentType="video/x-test",
                                    Metadata={"who": "mp"})
    uid = up["UploadId"]
    done = []
    for i, data in enumerate(parts):
        n = numbers[i] if numbers else i + 1
        r = s3.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=n, Body=data)
        check(r["ETag"] == '"%s"' % hashlib.md5(data).hexdigest(), "part etag")
        done.append({"PartNumber": n, "ETag": r["ETag"]})
    return uid, done


def test_unequal_parts(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="mpu")
    parts = [os.urandom(5 * MIB + 123), os.urandom(6 * MIB + 7), os.urandom(5 * MIB),
             os.urandom(1234)]
    whole = b"".join(parts)
    uid, done = upload(s3, "mpu", "obj", parts)
    r = s3.complete_multipart_upload(Bucket="mpu", Key="obj", UploadId=uid,
                                     MultipartUpload={"Parts": done})
    check(r["ETag"] == mp_etag(parts), "complete etag %r" % r["ETag"])
    g = s3.get_object(Bucket="mpu", Key="obj")
    check(g["Body"].read() == whole, "whole object")
    check(g["ETag"] == mp_etag(parts) and g["ContentType"] == "video/x-test" and
          g["Metadata"] == {"who": "mp"}, "headers %r" % g)
    listed = s3.list_objects_v2(Bucket="mpu")["Contents"][0]
    check(listed["Size"] == len(whole) and listed["ETag"] == mp_etag(parts), "listing")
    off = 0
    for i, p in enumerate(parts):
        g = s3.get_object(Bucket="mpu", Key="obj", PartNumber=i + 1)
        body = g["Body"].read()
        check(body == p, "part %d body" % (i + 1))
        check(g["PartsCount"] == 4 and g["ContentRange"] == "bytes %d-%d/%d" %
              (off, off + len(p) - 1, len(whole)), "part %d headers %r" % (i + 1, g))
        h = s3.head_object(Bucket="mpu", Key="obj", PartNumber=i + 1)
        check(h["ContentLength"] == len(p) and h["PartsCount"] == 4, "head part %d" % (i + 1))
        off += len(p)
    check(error_code(s3.get_object, Bucket="mpu", Key="obj", PartNumber=5)[1] == 416,
          "part 5")
    bounds = [0]
    for p in parts:
        bounds.append(bounds[-1] + len(p))
    rnd = random.Random(3)
    cases = [(b - 3, b + 2) for b in bounds[1:-1]] + [(bounds[1] - 1, bounds[3])]
    for _ in range(30):
        a = rnd.randrange(len(whole))
        cases.append((a, min(len(whole) - 1, a + rnd.randrange(3 * MIB))))
    for a, b in cases:
        body = s3.get_object(Bucket="mpu", Key="obj", Range="bytes=%d-%d" % (a, b))["Body"].read()
        check(body == whole[a:b + 1], "range %d-%d" % (a, b))
    s3.delete_object(Bucket="mpu", Key="obj")
    wait_no_chunks(c, "after deleting a multipart object")


def test_reupload_and_unused_parts(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="mpr")
    p1, p2, p2b, p3 = (os.urandom(5 * MIB), os.urandom(5 * MIB), os.urandom(5 * MIB + 1),
                       os.urandom(100))
    uid, done = upload(s3, "mpr", "k", [p1, p2, p3])
    r = s3.upload_part(Bucket="mpr", Key="k", UploadId=uid, PartNumber=2, Body=p2b)
    done[1]["ETag"] = r["ETag"]
    # part 3 is uploaded but left out: its chunks are reclaimed
    s3.complete_multipart_upload(Bucket="mpr", Key="k", UploadId=uid,
                                 MultipartUpload={"Parts": done[:2]})
    check(s3.get_object(Bucket="mpr", Key="k")["Body"].read() == p1 + p2b, "replaced part")
    deadline = time.monotonic() + 15
    want = 3 * (5 + 6)  # 3 replicas of the chunks of parts 1 and 2
    while len(chunk_keys(c)) != want and time.monotonic() < deadline:
        time.sleep(0.2)
    check(len(chunk_keys(c)) == want, "chunks left %d, want %d" % (len(chunk_keys(c)), want))
    check(error_code(s3.list_parts, Bucket="mpr", Key="k", UploadId=uid)[0] == "NoSuchUpload",
          "upload gone after complete")
    s3.delete_object(Bucket="mpr", Key="k")
    wait_no_chunks(c, "reupload")


def test_complete_checks(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="mpc")
    small, big = os.urandom(1000), os.urandom(5 * MIB)
    uid, done = upload(s3, "mpc", "k", [small, big])

    def complete(parts):
        return error_code(s3.complete_multipart_upload, Bucket="mpc", Key="k", UploadId=uid,
                          MultipartUpload={"Parts": parts})[0]
    check(complete(done) == "EntityTooSmall", "small first part")
    check(complete([{"PartNumber": 1, "ETag": '"%s"' % ("0" * 32)}]) == "InvalidPart", "etag")
    check(complete([done[1], done[0]]) == "InvalidPartOrder", "order")
    check(complete([{"PartNumber": 3, "ETag": done[1]["ETag"]}]) == "InvalidPart", "missing")
    check(error_code(s3.upload_part, Bucket="mpc", Key="k", UploadId="0" * 16, PartNumber=1,
                     Body=b"x")[0] == "NoSuchUpload", "no such upload")
    check(error_code(s3.head_object, Bucket="mpc", Key="k")[1] == 404, "nothing completed")
    s3.abort_multipart_upload(Bucket="mpc", Key="k", UploadId=uid)
    check(error_code(s3.list_parts, Bucket="mpc", Key="k", UploadId=uid)[0] == "NoSuchUpload",
          "aborted")
    wait_no_chunks(c, "after abort")


def test_abort_mid_upload(c):
    """A part still streaming when its upload is aborted is dropped: the
    client gets NoSuchUpload and no chunk stays behind."""
    import socket
    s3 = c.boto()
    s3.create_bucket(Bucket="mpa")
    uid = s3.create_multipart_upload(Bucket="mpa", Key="k")["UploadId"]
    data = os.urandom(6 * MIB)
    path = "/mpa/k?partNumber=1&uploadId=" + uid
    hdrs = sign_v4_query(c, "PUT", "/mpa/k", "partNumber=1&uploadId=" + uid,
                         {"x-amz-content-sha256": "UNSIGNED-PAYLOAD",
                          "content-length": str(len(data))})
    sock = socket.create_connection(("127.0.0.1", c.port), timeout=30)
    sock.sendall(b"PUT %s HTTP/1.1\r\n" % path.encode() +
                 b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in hdrs.items()) +
                 b"\r\n" + data[:3 * MIB])
    time.sleep(0.5)
    s3.abort_multipart_upload(Bucket="mpa", Key="k", UploadId=uid)
    sock.sendall(data[3 * MIB:])
    resp = b""
    while b"</Error>" not in resp and not (resp.startswith(b"HTTP/1.1 200") and
                                           b"\r\n\r\n" in resp):
        more = sock.recv(65536)
        if not more:
            break
        resp += more
    sock.close()
    check(resp.startswith(b"HTTP/1.1 404") and b"NoSuchUpload" in resp, "late part %r" % resp[:300])
    check(error_code(s3.list_parts, Bucket="mpa", Key="k", UploadId=uid)[0] == "NoSuchUpload",
          "aborted")
    wait_no_chunks(c, "part streaming during abort")


def sign_v4_query(c, method, path, query, headers):
    """SigV4 header auth over a request with a query string."""
    import datetime
    import hmac
    from s3util import ACCESS_KEY, REGION, SECRET_KEY
    now = datetime.datetime.utcnow()
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    h = {k.lower(): str(v).strip() for k, v in headers.items()}
    h["host"] = "127.0.0.1:%d" % c.port
    h["x-amz-date"] = amz_date
    names = sorted(h)
    q = "&".join(sorted(query.split("&")))
    canon = "\n".join([method, path, q, "".join("%s:%s\n" % (n, h[n]) for n in names),
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


def test_listings(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="mpl")
    uids = []
    for k in ("a", "b", "b", "c/d"):
        uids.append((k, s3.create_multipart_upload(Bucket="mpl", Key=k)["UploadId"]))
    for n in (1, 2, 3, 5):
        s3.upload_part(Bucket="mpl", Key="a", UploadId=uids[0][1], PartNumber=n,
                       Body=b"p%d" % n)
    seen, marker = [], 0
    while True:
        r = s3.list_parts(Bucket="mpl", Key="a", UploadId=uids[0][1], MaxParts=3,
                          PartNumberMarker=marker)
        seen += [(p["PartNumber"], p["Size"]) for p in r.get("Parts", [])]
        if not r["IsTruncated"]:
            break
        marker = r["NextPartNumberMarker"]
    check(seen == [(1, 2), (2, 2), (3, 2), (5, 2)], "list parts %r" % seen)
    got, km, um = [], None, None
    while True:
        kw = {"Bucket": "mpl", "MaxUploads": 1}
        if km is not None:
            kw.update(KeyMarker=km, UploadIdMarker=um)
        r = s3.list_multipart_uploads(**kw)
        got += [(u["Key"], u["UploadId"]) for u in r.get("Uploads", [])]
        if not r["IsTruncated"]:
            break
        km, um = r["NextKeyMarker"], r["NextUploadIdMarker"]
    check(sorted(got) == sorted(uids), "list uploads %r vs %r" % (got, uids))
    r = s3.list_multipart_uploads(Bucket="mpl", Prefix="c/")
    check([u["Key"] for u in r["Uploads"]] == ["c/d"], "prefix")
    for k, u in uids:
        s3.abort_multipart_upload(Bucket="mpl", Key=k, UploadId=u)
    check(s3.list_multipart_uploads(Bucket="mpl").get("Uploads", []) == [], "all aborted")
    wait_no_chunks(c, "listings")


def test_upload_part_copy(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="mpy")
    src = os.urandom(3 * MIB)
    s3.put_object(Bucket="mpy", Key="src", Body=src[:MIB - 1])  # one record
    big = os.urandom(5 * MIB)
    uid = s3.create_multipart_upload(Bucket="mpy", Key="dst")["UploadId"]
    p1 = s3.upload_part(Bucket="mpy", Key="dst", UploadId=uid, PartNumber=1, Body=big)
    p2 = s3.upload_part_copy(Bucket="mpy", Key="dst", UploadId=uid, PartNumber=2,
                             CopySource="mpy/src", CopySourceRange="bytes=10-999")
    etag2 = p2["CopyPartResult"]["ETag"]
    check(etag2 == '"%s"' % hashlib.md5(src[10:1000]).hexdigest(), "copy part etag")
    s3.complete_multipart_upload(Bucket="mpy", Key="dst", UploadId=uid, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": p1["ETag"]}, {"PartNumber": 2, "ETag": etag2}]})
    check(s3.get_object(Bucket="mpy", Key="dst")["Body"].read() == big + src[10:1000],
          "copied part")
    # chunked sources: UploadPartCopy of ranges that start and end inside
    # chunks, and CopyObject of a whole multipart object
    large = os.urandom(7 * MIB + 99)
    s3.put_object(Bucket="mpy", Key="large", Body=large)
    uid = s3.create_multipart_upload(Bucket="mpy", Key="dst2")["UploadId"]
    cuts = [(MIB - 7, 6 * MIB + 5), (6 * MIB + 6, len(large) - 1)]
    parts = []
    for i, (a, b) in enumerate(cuts):
        p = s3.upload_part_copy(Bucket="mpy", Key="dst2", UploadId=uid, PartNumber=i + 1,
                                CopySource="mpy/large", CopySourceRange="bytes=%d-%d" % (a, b))
        check(p["CopyPartResult"]["ETag"] == '"%s"' % hashlib.md5(large[a:b + 1]).hexdigest(),
              "large copy part %d etag" % (i + 1))
        parts.append({"PartNumber": i + 1, "ETag": p["CopyPartResult"]["ETag"]})
    s3.complete_multipart_upload(Bucket="mpy", Key="dst2", UploadId=uid,
                                 MultipartUpload={"Parts": parts})
    want = b"".join(large[a:b + 1] for a, b in cuts)
    check(s3.get_object(Bucket="mpy", Key="dst2")["Body"].read() == want, "copied large parts")
    r = s3.copy_object(Bucket="mpy", Key="dst3", CopySource="mpy/dst2")
    check(r["CopyObjectResult"]["ETag"] == '"%s"' % hashlib.md5(want).hexdigest(), "copy etag")
    check(s3.get_object(Bucket="mpy", Key="dst3")["Body"].read() == want, "CopyObject large")
    check(s3.head_object(Bucket="mpy", Key="dst3")["ContentLength"] == len(want), "copy size")
    # a small object copied over a large one reclaims the large one's chunks
    s3.copy_object(Bucket="mpy", Key="dst3", CopySource="mpy/src")
    for k in ("dst", "dst2", "large"):
        s3.delete_object(Bucket="mpy", Key=k)
    wait_no_chunks(c, "part copy")


def test_aws_cli_cp(c):
    size = (1024 if HEAVY else 64) * MIB
    s3 = c.boto()
    s3.create_bucket(Bucket="cli")
    path = os.path.join(c.tmp, "up.bin")
    blk = os.urandom(MIB)
    h = hashlib.sha256()
    with open(path, "wb") as f:
        for i in range(size // MIB):
            b = i.to_bytes(8, "big") + blk[8:]
            h.update(b)
            f.write(b)
    t0 = time.monotonic()
    c.aws("s3", "cp", path, "s3://cli/big.bin")
    up_s = time.monotonic() - t0
    head = s3.head_object(Bucket="cli", Key="big.bin")
    check(head["ContentLength"] == size and head["ETag"].endswith('-%d"' % (size // (8 * MIB))),
          "aws cli multipart upload %r" % head["ETag"])
    down = os.path.join(c.tmp, "down.bin")
    t0 = time.monotonic()
    c.aws("s3", "cp", "s3://cli/big.bin", down)
    down_s = time.monotonic() - t0
    h2 = hashlib.sha256()
    with open(down, "rb") as f:
        for b in iter(lambda: f.read(MIB), b""):
            h2.update(b)
    check(h2.hexdigest() == h.hexdigest(), "sha256 round trip")
    print("     aws s3 cp %d MiB: up %.1fs, down %.1fs" % (size // MIB, up_s, down_s))
    os.unlink(path)
    os.unlink(down)
    s3.delete_object(Bucket="cli", Key="big.bin")


if __name__ == "__main__":
    run_tests([test_unequal_parts, test_reupload_and_unused_parts, test_complete_checks,
               test_abort_mid_upload, test_listings, test_upload_part_copy, test_aws_cli_cp],
              cluster_kw={"settings": SETTINGS, "node_settings": NODE_SETTINGS})
