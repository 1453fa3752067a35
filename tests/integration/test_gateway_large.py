"""Large objects through cairn-gateway over 3 storage nodes, with small
settings so every threshold is cheap to cross (threshold 256K, chunks 128K,
GET slices 32K, 3 slices in flight, output high-water 64K, at most 64
chunks): boundary sizes around every threshold (declared length and chunked
Transfer-Encoding of unknown length), chunks spread over every node, random
ranges byte for byte, overwrite and delete reclaiming the old chunks (and an
overwrite during a slow read that still sees the old object whole),
EntityTooLarge, a body that fails its checksum leaving nothing behind, the
ETag and Content-MD5 (BadDigest) of chunked bodies and parts, the parent
record's size as the osize field and in the form written before it, client
disconnects mid-PUT and mid-GET (chunks reclaimed, file descriptors back to
baseline), a storage node killed in the middle of a GET."""
import hashlib
import http.client
import os
import random
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import check, error_code, run_tests  # noqa: E402
from snclient import crc32c  # noqa: E402
from test_gateway_chunked import sign_v4  # noqa: E402

K = 1024
CHUNK = 128 * K
THRESH = 256 * K
SLICE = 32 * K
MAX_CHUNKS = 64

SETTINGS = {
    "large_object.threshold_of_chunk_len": THRESH,
    "large_object.chunked_obj_len": CHUNK,
    "large_object.reading_chunked_obj_len": SLICE,
    "large_object.read_prefetch": 3,
    "large_object.max_chunked_objs": MAX_CHUNKS,
    "large_object.reclaim_delay": "1s",
    "http.output_high_water": "64K",
    "storage.request_timeout": "1s",
}
NODE_SETTINGS = {"obj_containers.sync_mode": "none", "io_threads": 2}


def chunk_keys(c):
    """Every live chunk record on every node (a key may be on several)."""
    keys = []
    for n in c.nodes:
        if n.proc is None:
            continue
        cl = n.client()
        after = None
        while True:
            r = cl.list(prefix=b"c/", after=after, limit=1000)
            check(r.st == 0, "list chunks %r" % r)
            ents = r["ents"] or []
            keys += [(n.port, e["key"]) for e in ents]
            if not r.get("more") or not ents:
                break
            after = ents[-1]["key"]
        cl.close()
    return keys


def wait_no_chunks(c, what, timeout=15):
    deadline = time.monotonic() + timeout
    while True:
        left = chunk_keys(c)
        if not left:
            return
        if time.monotonic() > deadline:
            raise AssertionError("%s: %d chunk records left, e.g. %r" % (what, len(left),
                                                                       left[:3]))
        time.sleep(0.2)


def raw_put_chunked_te(c, path, body):
    """PUT with Transfer-Encoding: chunked and no length (UNSIGNED-PAYLOAD)."""
    conn = http.client.HTTPConnection("127.0.0.1", c.port, timeout=60)
    hdrs = sign_v4("PUT", path, {"x-amz-content-sha256": "UNSIGNED-PAYLOAD"}, c.port)
    conn.putrequest("PUT", path, skip_accept_encoding=True, skip_host=True)
    for k, v in hdrs.items():
        conn.putheader(k, v)
    conn.putheader("Transfer-Encoding", "chunked")
    conn.endheaders()
    for i in range(0, len(body), 50000):
        piece = body[i:i + 50000]
        conn.send(b"%x\r\n%s\r\n" % (len(piece), piece))
    conn.send(b"0\r\n\r\n")
    r = conn.getresponse()
    out = (r.status, r.read())
    conn.close()
    return out


def test_boundaries(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="lob")
    sizes = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, THRESH - 1, THRESH, THRESH + 1,
             5 * CHUNK, 5 * CHUNK + 1, MAX_CHUNKS * CHUNK]
    src = os.urandom(MAX_CHUNKS * CHUNK)
    for size in sizes:
        data = src[:size]
        key = "b/%d" % size
        r = s3.put_object(Bucket="lob", Key=key, Body=data, ContentType="app/x-test",
                          Metadata={"size": str(size)})
        check(r["ETag"] == '"%s"' % hashlib.md5(data).hexdigest(), "etag %d" % size)
        g = s3.get_object(Bucket="lob", Key=key)
        body = g["Body"].read()
        check(body == data, "body of %d (got %d bytes)" % (size, len(body)))
        check(g["ContentLength"] == size and g["ContentType"] == "app/x-test" and
              g["Metadata"] == {"size": str(size)}, "headers of %d: %r" % (size, g))
        h = s3.head_object(Bucket="lob", Key=key)
        check(h["ContentLength"] == size and h["ETag"] == r["ETag"], "head %d" % size)
    listed = {o["Key"]: o for o in s3.list_objects_v2(Bucket="lob", Prefix="b/")["Contents"]}
    for size in sizes:
        o = listed["b/%d" % size]
        check(o["Size"] == size and o["ETag"] == '"%s"' % hashlib.md5(src[:size]).hexdigest(),
              "listing of %d: %r" % (size, o))
    # unknown length (Transfer-Encoding: chunked): decided as the bytes come
    for size in (THRESH - 1, THRESH, 3 * CHUNK + 7):
        st, body = raw_put_chunked_te(c, "/lob/te/%d" % size, src[:size])
        check(st == 200, "te put %d: %d %r" % (size, st, body))
        g = s3.get_object(Bucket="lob", Key="te/%d" % size)["Body"].read()
        check(g == src[:size], "te body %d" % size)
    # the chunks of one object spread over every node
    per_node = {}
    for port, key in chunk_keys(c):
        if key.startswith(b"c/lob/b/%d\0" % (MAX_CHUNKS * CHUNK)):
            per_node[port] = per_node.get(port, 0) + 1
    check(len(per_node) == 3 and sum(per_node.values()) == 3 * MAX_CHUNKS,
          "chunk placement %r" % per_node)
    # one byte over max_chunked_objs x chunked_obj_len
    check(error_code(s3.put_object, Bucket="lob", Key="big",
                     Body=src + b"x")[0] == "EntityTooLarge", "too large")
    st, _ = raw_put_chunked_te(c, "/lob/big-te", src + b"x")
    check(st == 400, "te too large: %d" % st)
    check(error_code(s3.head_object, Bucket="lob", Key="big-te")[1] == 404, "no big-te")
    for size in sizes:
        s3.delete_object(Bucket="lob", Key="b/%d" % size)
    for size in (THRESH - 1, THRESH, 3 * CHUNK + 7):
        s3.delete_object(Bucket="lob", Key="te/%d" % size)
    wait_no_chunks(c, "after deleting every object")


def test_ranges(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="rng")
    size = 9 * CHUNK + 12345
    data = os.urandom(size)
    s3.put_object(Bucket="rng", Key="r", Body=data)
    rnd = random.Random(7)
    cases = [(0, 0), (size - 1, size - 1), (CHUNK - 1, CHUNK), (CHUNK, 2 * CHUNK - 1),
             (SLICE - 1, SLICE + 1), (5, size - 6)]
    for _ in range(40):
        a = rnd.randrange(size)
        cases.append((a, min(size - 1, a + rnd.randrange(4 * CHUNK))))
    for a, b in cases:
        g = s3.get_object(Bucket="rng", Key="r", Range="bytes=%d-%d" % (a, b))
        body = g["Body"].read()
        check(body == data[a:b + 1], "range %d-%d: %d bytes" % (a, b, len(body)))
        check(g["ContentRange"] == "bytes %d-%d/%d" % (a, b, size), "content-range")
    g = s3.get_object(Bucket="rng", Key="r", Range="bytes=-1000")["Body"].read()
    check(g == data[-1000:], "suffix range")
    check(error_code(s3.get_object, Bucket="rng", Key="r",
                     Range="bytes=%d-" % size)[1] == 416, "unsatisfiable")
    s3.delete_object(Bucket="rng", Key="r")
    wait_no_chunks(c, "after ranges")


def test_overwrite_and_reclaim(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="owr")
    old, new = os.urandom(20 * CHUNK), os.urandom(7 * CHUNK + 3)
    s3.put_object(Bucket="owr", Key="k", Body=old)
    # a slow reader of the old object: a raw GET that reads a little, then
    # waits while the object is overwritten, then reads the rest
    hdrs = sign_v4("GET", "/owr/k", {"x-amz-content-sha256": hashlib.sha256(b"").hexdigest()},
                   c.port)
    sock = socket.create_connection(("127.0.0.1", c.port), timeout=30)
    sock.sendall(b"GET /owr/k HTTP/1.1\r\n" +
                 b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in hdrs.items()) +
                 b"\r\n")
    got = sock.recv(4096)
    s3.put_object(Bucket="owr", Key="k", Body=new)
    check(s3.get_object(Bucket="owr", Key="k")["Body"].read() == new, "new object")
    while True:
        b = sock.recv(1 << 20)
        if not b:
            break
        got += b
        if len(got) >= len(old) + got.index(b"\r\n\r\n") + 4:
            break
    sock.close()
    body = got[got.index(b"\r\n\r\n") + 4:]
    check(body == old, "the reader saw the old object whole (%d bytes)" % len(body))
    # only the new object's chunks remain once the delay passed
    deadline = time.monotonic() + 15
    while len(chunk_keys(c)) != 3 * 8 and time.monotonic() < deadline:
        time.sleep(0.2)
    check(len(chunk_keys(c)) == 3 * 8, "old chunks reclaimed: %d left" % len(chunk_keys(c)))
    # small over large, then large over small
    s3.put_object(Bucket="owr", Key="k", Body=b"small")
    wait_no_chunks(c, "small replaced large")
    s3.put_object(Bucket="owr", Key="k", Body=old)
    check(s3.get_object(Bucket="owr", Key="k")["Body"].read() == old, "large again")
    s3.delete_object(Bucket="owr", Key="k")
    wait_no_chunks(c, "after delete")
    # DeleteObjects reclaims too
    for k in ("m1", "m2"):
        s3.put_object(Bucket="owr", Key=k, Body=new)
    r = s3.delete_objects(Bucket="owr", Delete={"Objects": [{"Key": "m1"}, {"Key": "m2"},
                                                            {"Key": "none"}]})
    check(len(r.get("Deleted", [])) == 3 and not r.get("Errors"), "multi-delete %r" % r)
    check(error_code(s3.head_object, Bucket="owr", Key="m1")[1] == 404, "m1 deleted")
    wait_no_chunks(c, "after DeleteObjects")


def test_failed_put_leaves_nothing(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="fail")
    data = os.urandom(6 * CHUNK)
    # a signed payload hash that does not match: refused at the end of the body
    path = "/fail/k"
    hdrs = sign_v4("PUT", path, {"x-amz-content-sha256": hashlib.sha256(b"other").hexdigest(),
                                 "content-length": str(len(data))}, c.port)
    conn = http.client.HTTPConnection("127.0.0.1", c.port, timeout=30)
    conn.request("PUT", path, body=data, headers=hdrs)
    r = conn.getresponse()
    body = r.read()
    conn.close()
    check(r.status == 400 and b"XAmzContentSHA256Mismatch" in body, "sha mismatch %d %r" %
          (r.status, body))
    check(error_code(s3.head_object, Bucket="fail", Key="k")[1] == 404, "no object")
    wait_no_chunks(c, "after a refused body")
    # client disconnect mid-PUT (ten times): chunks, fds and memory come back
    base_fds, base_rss = open_fds(c), rss(c)
    for _ in range(10):
        cut_put(c, data)
    time.sleep(0.5)
    check(error_code(s3.head_object, Bucket="fail", Key="k")[1] == 404, "no object after cut")
    wait_no_chunks(c, "after client disconnects mid-PUT")
    check(open_fds(c) <= base_fds, "fds %d > %d after cut PUTs" % (open_fds(c), base_fds))
    check(SANITIZED or rss(c) < base_rss + 4 * 1024 * 1024, "RSS %d > %d + 4 MiB after cut PUTs" %
          (rss(c), base_rss))


def test_content_md5(c):
    """The MD5 of a chunked body is computed off the loop (lo_hasher.c): the
    ETag is still the body's MD5, a wrong Content-MD5 still answers BadDigest
    and leaves the old object and no chunks, for a declared length, a body of
    unknown length (Transfer-Encoding: chunked) and an UploadPart."""
    import base64
    s3 = c.boto()
    s3.create_bucket(Bucket="md5")
    old = b"old object"
    s3.put_object(Bucket="md5", Key="k", Body=old)
    data = os.urandom(5 * CHUNK + 12345)
    good = base64.b64encode(hashlib.md5(data).digest()).decode()
    bad = base64.b64encode(hashlib.md5(data[:-1]).digest()).decode()
    code = error_code(s3.put_object, Bucket="md5", Key="k", Body=data, ContentMD5=bad)
    check(code == ("BadDigest", 400), "bad Content-MD5 on a large PUT: %r" % (code,))
    check(s3.get_object(Bucket="md5", Key="k")["Body"].read() == old, "old object kept")
    wait_no_chunks(c, "after a BadDigest PUT")
    # unknown length: held until the threshold, then chunked
    path = "/md5/te"
    conn = http.client.HTTPConnection("127.0.0.1", c.port, timeout=60)
    hdrs = sign_v4("PUT", path, {"x-amz-content-sha256": "UNSIGNED-PAYLOAD",
                                 "content-md5": bad}, c.port)
    conn.putrequest("PUT", path, skip_accept_encoding=True, skip_host=True)
    for k, v in hdrs.items():
        conn.putheader(k, v)
    conn.putheader("Transfer-Encoding", "chunked")
    conn.endheaders()
    conn.send(b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data))
    r = conn.getresponse()
    body = r.read()
    conn.close()
    check(r.status == 400 and b"BadDigest" in body, "TE body with a bad Content-MD5 %d %r" %
          (r.status, body[:200]))
    check(error_code(s3.head_object, Bucket="md5", Key="te")[1] == 404, "no TE object")
    wait_no_chunks(c, "after a BadDigest PUT of unknown length")
    # a right Content-MD5 is accepted and the ETag is the MD5
    etag = s3.put_object(Bucket="md5", Key="k", Body=data, ContentMD5=good)["ETag"]
    check(etag == '"%s"' % hashlib.md5(data).hexdigest(), "ETag %s" % etag)
    check(s3.get_object(Bucket="md5", Key="k")["Body"].read() == data, "GET after good MD5")
    # UploadPart: BadDigest, then the right one, whose ETag is the part's MD5
    up = s3.create_multipart_upload(Bucket="md5", Key="mp")["UploadId"]
    code = error_code(s3.upload_part, Bucket="md5", Key="mp", UploadId=up, PartNumber=1,
                      Body=data, ContentMD5=bad)
    check(code == ("BadDigest", 400), "bad Content-MD5 on UploadPart: %r" % (code,))
    part = s3.upload_part(Bucket="md5", Key="mp", UploadId=up, PartNumber=1, Body=data,
                          ContentMD5=good)
    check(part["ETag"] == '"%s"' % hashlib.md5(data).hexdigest(), "part ETag %s" % part["ETag"])
    s3.abort_multipart_upload(Bucket="md5", Key="mp", UploadId=up)
    s3.delete_object(Bucket="md5", Key="k")
    wait_no_chunks(c, "after the md5 bucket's objects went")


def cut_put(c, data):
    """Sends part of a PUT body, then closes the connection."""
    path = "/fail/k"
    hdrs = sign_v4("PUT", path, {"x-amz-content-sha256": "UNSIGNED-PAYLOAD",
                                 "content-length": str(len(data))}, c.port)
    sock = socket.create_connection(("127.0.0.1", c.port), timeout=30)
    sock.sendall(b"PUT /fail/k HTTP/1.1\r\n" +
                 b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in hdrs.items()) +
                 b"\r\n" + data[:4 * CHUNK + 5])
    time.sleep(0.2)
    sock.close()


def open_fds(c):
    return len(os.listdir("/proc/%d/fd" % c.proc.pid))


# ASan keeps freed memory in quarantine: RSS says nothing about leaks there
# (LeakSanitizer does, at exit)
SANITIZED = bool(os.environ.get("CAIRN_SANITIZE"))


def rss(c):
    with open("/proc/%d/status" % c.proc.pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def test_disconnect_mid_get(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="cut")
    data = os.urandom(30 * CHUNK)
    s3.put_object(Bucket="cut", Key="k", Body=data)
    s3.get_object(Bucket="cut", Key="k")["Body"].read()
    base, base_rss = open_fds(c), rss(c)
    hdrs = sign_v4("GET", "/cut/k", {"x-amz-content-sha256": hashlib.sha256(b"").hexdigest()},
                   c.port)
    req = (b"GET /cut/k HTTP/1.1\r\n" +
           b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in hdrs.items()) + b"\r\n")
    for _ in range(10):
        sock = socket.create_connection(("127.0.0.1", c.port), timeout=30)
        sock.sendall(req)
        sock.recv(100000)
        sock.close()
    deadline = time.monotonic() + 10
    while open_fds(c) > base and time.monotonic() < deadline:
        time.sleep(0.1)
    check(open_fds(c) <= base, "fds %d > baseline %d" % (open_fds(c), base))
    check(SANITIZED or rss(c) < base_rss + 4 * 1024 * 1024, "RSS %d > %d + 4 MiB after cut GETs" %
          (rss(c), base_rss))
    check(s3.get_object(Bucket="cut", Key="k")["Body"].read() == data, "still served")
    s3.delete_object(Bucket="cut", Key="k")
    wait_no_chunks(c, "cut")


def test_bad_chunk_cuts_the_response(c):
    """A chunk that no replica can serve right (here: replaced on every node
    by a record of the wrong length) cuts the GET short, and the log names
    the chunk; the bytes before it arrive intact."""
    s3 = c.boto()
    s3.create_bucket(Bucket="bad")
    data = os.urandom(6 * CHUNK)
    s3.put_object(Bucket="bad", Key="k", Body=data)
    victim = [k for _, k in chunk_keys(c) if k.startswith(b"c/bad/k\0")]
    victim = sorted(set(victim))[3]  # the 4th chunk
    for n in c.nodes:
        cl = n.client()
        check(cl.put(victim, b"short", ver=1, ts=int(time.time() * 1e6) + 10 ** 9).st == 0,
              "overwrite chunk")
        cl.close()
    hdrs = sign_v4("GET", "/bad/k", {"x-amz-content-sha256": hashlib.sha256(b"").hexdigest()},
                   c.port)
    sock = socket.create_connection(("127.0.0.1", c.port), timeout=30)
    sock.sendall(b"GET /bad/k HTTP/1.1\r\n" +
                 b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in hdrs.items()) +
                 b"\r\n")
    got = b""
    while True:
        b_ = sock.recv(1 << 20)
        if not b_:
            break
        got += b_
    sock.close()
    head, body = got.split(b"\r\n\r\n", 1)
    check(head.startswith(b"HTTP/1.1 200") and b"Content-Length: %d" % len(data) in head,
          "head %r" % head[:200])
    check(len(body) < len(data) and body == data[:len(body)] and len(body) <= 3 * CHUNK,
          "truncated at the bad chunk: %d bytes" % len(body))
    deadline = time.monotonic() + 5
    while b"aborted at byte" not in c.log_text().encode() and time.monotonic() < deadline:
        time.sleep(0.1)
    log = [l for l in c.log_text().splitlines() if "aborted at byte" in l]
    check(log and "chunk 3" in log[-1] and "bad/k" in log[-1], "log %r" % log)


def test_slice_longer_than_chunk_refused(c):
    """As LeoFS: reading_chunked_obj_len above chunked_obj_len stops the start."""
    import subprocess
    p = subprocess.run([c.bin, "--set", "s3.credentials_file=" + c.creds,
                        "--set", "large_object.chunked_obj_len=1M",
                        "--set", "large_object.reading_chunked_obj_len=2M",
                        "--set", "http.port=0"], capture_output=True, text=True, timeout=30)
    check(p.returncode == 2 and "reading_chunked_obj_len" in p.stderr, "refused: %d %r" %
          (p.returncode, p.stderr))


def parent_replicas(c, key, v):
    """HEAD replies (version v) of record key from every node that holds it."""
    out = []
    for n in c.nodes:
        cl = n.client()
        r = cl.call("HEAD", v=v, key=key)
        cl.close()
        if r.status == "OK":
            out.append((n, r))
    return out


def test_parent_record_forms(c):
    """The parent record of a large object holds its size in the record's
    osize field (protocol version 3), its etag is the plain ETag; a node
    answers an older request with the folded "<etag> <size>" etag. A parent
    record in the form written before version 3 (its etag "<etag> <size>",
    no osize) reads the same: HEAD, GET, ranges and the listing
    (docs/large-objects.md, "The parent record's size")."""
    s3 = c.boto()
    s3.create_bucket(Bucket="forms")
    data = os.urandom(3 * CHUNK + 777)
    etag = s3.put_object(Bucket="forms", Key="k", Body=data)["ETag"].strip('"')
    check(etag == hashlib.md5(data).hexdigest(), "ETag")
    reps = parent_replicas(c, b"o/forms/k", 3)
    check(len(reps) >= 2, "the parent record is on its replicas: %d" % len(reps))
    for n, r in reps:
        check(r["osize"] == len(data) and r["etag"] == etag.encode() and r["size"] < len(data),
              "node %s: osize %r etag %r size %r" % (n.port, r.get("osize"), r["etag"],
                                                     r["size"]))
    for n, r in parent_replicas(c, b"o/forms/k", 1):
        check("osize" not in r.h and r["etag"] == b"%s %d" % (etag.encode(), len(data)),
              "node %s folds for a version-1 request: %r" % (n.port, r["etag"]))
    # rewrite every replica in the old form: the same record (ver, chunk map)
    # with a newer ts, etag "<etag> <size>", no osize
    for n, _ in parent_replicas(c, b"o/forms/k", 1):
        cl = n.client()
        g = cl.call("GET", key=b"o/forms/k")
        check(g.status == "OK", "GET the parent %r" % g)
        r = cl.put(b"o/forms/k", g.payload, ver=g["ver"], ts=g["ts"] + 1, etag=g["etag"],
                   meta=g["meta"])
        check(r.st == 0 and r["applied"], "rewritten in the old form: %r" % r)
        h = cl.call("HEAD", v=3, key=b"o/forms/k")
        check("osize" not in h.h and h["etag"] == b"%s %d" % (etag.encode(), len(data)),
              "node %s holds the old form: %r" % (n.port, h))
        cl.close()
    h = s3.head_object(Bucket="forms", Key="k")
    check(h["ContentLength"] == len(data) and h["ETag"].strip('"') == etag,
          "HEAD of an old-form record: %r" % h)
    check(s3.get_object(Bucket="forms", Key="k")["Body"].read() == data, "GET of the old form")
    g = s3.get_object(Bucket="forms", Key="k", Range="bytes=%d-%d" % (CHUNK - 5, CHUNK + 5))
    check(g["Body"].read() == data[CHUNK - 5:CHUNK + 6], "a range of the old form")
    listed = s3.list_objects_v2(Bucket="forms")["Contents"]
    check(len(listed) == 1 and listed[0]["Size"] == len(data) and
          listed[0]["ETag"].strip('"') == etag, "listing of the old form: %r" % listed)
    # an overwrite is written in the new form and reclaims the old one's chunks
    data2 = os.urandom(2 * CHUNK + 1)
    s3.put_object(Bucket="forms", Key="k", Body=data2)
    for n, r in parent_replicas(c, b"o/forms/k", 3):
        check(r["osize"] == len(data2), "node %s: the overwrite has osize" % n.port)
    check(s3.get_object(Bucket="forms", Key="k")["Body"].read() == data2, "GET the overwrite")
    s3.delete_object(Bucket="forms", Key="k")
    deadline = time.monotonic() + 15   # both objects' chunks reclaimed
    while [k for _, k in chunk_keys(c) if k.startswith(b"c/forms/")]:
        check(time.monotonic() < deadline, "the chunks of both forms are reclaimed")
        time.sleep(0.2)


def test_parent_read_repair(c):
    """A read that finds a replica without the parent record repairs it with
    the record as read, osize included (gw_store_record_from_reply)."""
    s3 = c.boto()
    s3.create_bucket(Bucket="rrep")
    data = os.urandom(2 * CHUNK + 99)
    s3.put_object(Bucket="rrep", Key="k", Body=data)
    reps = parent_replicas(c, b"o/rrep/k", 3)
    check(len(reps) == 3, "on its three replicas: %d" % len(reps))
    repaired = 0
    for n, r in reps:
        cl = n.client()
        p = cl.call(15, v=2, key=b"o/rrep/k", ts=r["ts"], ver=r["ver"])   # PURGE
        check(p.status == "OK" and p["applied"], "purged from node %s: %r" % (n.port, p))
        check(s3.get_object(Bucket="rrep", Key="k")["Body"].read() == data, "GET")
        deadline = time.monotonic() + 5
        h = cl.call("HEAD", v=3, key=b"o/rrep/k")
        while h.status != "OK" and time.monotonic() < deadline:
            time.sleep(0.1)
            h = cl.call("HEAD", v=3, key=b"o/rrep/k")
        if h.status == "OK":   # the read asked this replica (R of N) and repaired it
            repaired += 1
            check(h["osize"] == len(data) and h["etag"] == r["etag"] and h["ts"] == r["ts"],
                  "the repaired copy on node %s is the record, osize included: %r" % (n.port, h))
        else:                  # not asked: put it back for the next round
            g = reps[0][0].client() if n is not reps[0][0] else reps[1][0].client()
            src = g.call("GET", v=3, key=b"o/rrep/k")
            g.close()
            put = cl.call("PUT", payload=src.payload, v=3, key=b"o/rrep/k",
                          crc=crc32c(src.payload), ver=src["ver"], ts=src["ts"],
                          etag=src["etag"], meta=src["meta"], osize=src["osize"])
            check(put.status == "OK", "restored on node %s: %r" % (n.port, put))
        cl.close()
    check(repaired >= 1, "some read repaired a replica: %d" % repaired)
    s3.delete_object(Bucket="rrep", Key="k")


def test_put_body_then_pipelined_request(c):
    """A Content-Length body the gateway reads straight off the socket in
    large reads (gateway/http/conn.c) must stop at the body's last byte: the
    request pipelined behind it, already in the same socket buffer, is
    answered as a request of its own. Sent in one write and in pieces."""
    s3 = c.boto()
    s3.create_bucket(Bucket="pipe")
    health = b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    for how, piece in (("one write", None), ("pieces", 100003)):
        data = os.urandom(3 * 1024 * K + 17)
        path = "/pipe/k-%d" % (piece or 0)
        hdrs = sign_v4("PUT", path, {"x-amz-content-sha256": "UNSIGNED-PAYLOAD"}, c.port)
        head = "PUT %s HTTP/1.1\r\n" % path
        head += "".join("%s: %s\r\n" % kv for kv in hdrs.items())
        head += "Content-Length: %d\r\n\r\n" % len(data)
        wire = head.encode() + data + health
        s = socket.create_connection(("127.0.0.1", c.port), timeout=30)
        if piece is None:
            s.sendall(wire)
        else:
            for i in range(0, len(wire), piece):
                s.sendall(wire[i:i + piece])
                time.sleep(0.002)
        out = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
        s.close()
        codes = [int(l.split()[1]) for l in out.split(b"\r\n") if l.startswith(b"HTTP/1.1 ")]
        check(codes == [200, 200], "%s: statuses %r in %r" % (how, codes, out[:400]))
        etag = '"%s"' % hashlib.md5(data).hexdigest()
        check(("ETag: " + etag).encode() in out, "%s: ETag %s in %r" % (how, etag, out[:400]))
        got = s3.get_object(Bucket="pipe", Key=path.split("/")[2])["Body"].read()
        check(got == data, "%s: read back %d of %d bytes, equal %s" % (how, len(got), len(data),
                                                                     got == data))


def test_node_killed_mid_get(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="kill")
    data = os.urandom(12 * CHUNK)
    s3.put_object(Bucket="kill", Key="k", Body=data)
    g = s3.get_object(Bucket="kill", Key="k")["Body"]
    first = g.read(2 * CHUNK)
    victim = c.nodes[1]
    victim.kill9()
    rest = g.read()
    check(first + rest == data, "GET survived a node kill (%d of %d bytes)" %
          (len(first + rest), len(data)))
    check(s3.get_object(Bucket="kill", Key="k")["Body"].read() == data, "GET after the kill")


if __name__ == "__main__":
    run_tests([test_boundaries, test_ranges, test_overwrite_and_reclaim,
               test_failed_put_leaves_nothing, test_content_md5, test_disconnect_mid_get,
               test_bad_chunk_cuts_the_response, test_slice_longer_than_chunk_refused,
               test_parent_record_forms, test_parent_read_repair,
               test_put_body_then_pipelined_request, test_node_killed_mid_get],
              cluster_kw={"settings": SETTINGS, "node_settings": NODE_SETTINGS})
