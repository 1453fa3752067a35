#!/usr/bin/env python3
"""The gateway's access log (log.access_file, log.format): one line per
request with client, account, operation, bucket, key, status, S3 error code,
bytes, time to first byte, total time and request id; JSON lines parse and
carry keys with quotes, control bytes and Unicode exactly; no signature,
secret or session token ever reaches a line (header-signed, presigned
SigV4, SigV2 and token parameters); a request cut short by its client still
gets its line; `mv` + SIGHUP moves the lines to a new file; a file that
does not keep up drops lines (counted in a metric) instead of holding up
requests; without a file the text lines go to the gateway's log."""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import ACCESS_KEY, SECRET_KEY, Cluster, check, error_code  # noqa: E402
from snclient import free_port  # noqa: E402
from test_storage_metrics import parse  # noqa: E402

TRICKY_KEYS = [
    'dir/q"uote\\back',
    "tab\tnew\nline\x01\x1f\x7f",
    "caf\u00e9/\u65e5\u672c/\U0001F600 \u2028",
    "per%25cent+plus &amp; ?x=1#frag",
]


def url_get(url, timeout=10):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def read_lines(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8").splitlines()
    except FileNotFoundError:
        return []


def wait_lines(path, pred, timeout=10):
    """The JSON lines of path once one of them satisfies pred."""
    deadline = time.monotonic() + timeout
    while True:
        lines = [json.loads(x) for x in read_lines(path)]
        if any(pred(x) for x in lines):
            return lines
        if time.monotonic() > deadline:
            raise AssertionError("no matching access line in %s:\n%s"
                                 % (path, "\n".join(read_lines(path)[-10:])))
        time.sleep(0.05)


def scrape(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        return parse(r.read().decode())


def test_json_fields_and_keys(c, path):
    s3 = c.boto()
    s3.create_bucket(Bucket="acc")
    ids = {}
    for k in TRICKY_KEYS:
        r = s3.put_object(Bucket="acc", Key=k, Body=b"x" * 1000)
        ids[r["ResponseMetadata"]["RequestId"]] = k
    got = s3.get_object(Bucket="acc", Key=TRICKY_KEYS[0])
    body = got["Body"].read()
    get_id = got["ResponseMetadata"]["RequestId"]
    check(error_code(s3.get_object, Bucket="acc", Key="missing") == ("NoSuchKey", 404), "404")
    st, _, _ = url_get(c.url + "/acc/anon")   # anonymous
    check(st == 403, "anonymous %d" % st)
    lines = wait_lines(path, lambda x: x["target"] == "/acc/anon")
    by_id = {x["request_id"]: x for x in lines}
    for rid, k in ids.items():
        x = by_id.get(rid)
        check(x is not None, "a line for the PUT of %r" % k)
        check(x["key"] == k, "key round trip: %r != %r" % (x["key"], k))
        check(x["operation"] == "PutObject" and x["bucket"] == "acc", "op/bucket %r" % x)
        check(x["status"] == 200 and x["error"] == "-", "status %r" % x)
        check(x["account"] == ACCESS_KEY, "account %r" % x["account"])
        check(x["bytes_in"] == 1000 and x["bytes_out"] == 0, "bytes %r" % x)
        check(re.fullmatch(r"127\.0\.0\.1:\d+", x["client"]), "client %r" % x["client"])
        check(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", x["time"]), x["time"])
        check(x["ttfb_ms"] is not None and 0 <= x["ttfb_ms"] <= x["total_ms"], "times %r" % x)
        check(x["aborted"] is False, "aborted %r" % x)
    x = by_id[get_id]
    check(x["operation"] == "GetObject" and x["bytes_out"] == len(body), "GET line %r" % x)
    miss = [x for x in lines if x["key"] == "missing"]
    check(len(miss) == 1 and miss[0]["status"] == 404 and miss[0]["error"] == "NoSuchKey",
          "NoSuchKey line %r" % miss)
    anon = [x for x in lines if x["target"] == "/acc/anon"][0]
    check(anon["account"] == "-" and anon["status"] == 403 and
          anon["error"] == "AccessDenied", "anonymous line %r" % anon)
    # a head that does not parse: no operation, no request line
    c.raw(b"GET / HTTP/1.1\r\n\r\n")
    lines = wait_lines(path, lambda x: x["method"] == "-")
    bad = [x for x in lines if x["method"] == "-"][0]
    check(bad["operation"] == "-" and bad["status"] == 400, "bad head line %r" % bad)
    # every line is one JSON object on one line (a raw newline would split it)
    with open(path, "rb") as f:
        for raw in f.read().split(b"\n")[:-1]:
            json.loads(raw)


def test_no_secrets(c, path):
    s3 = c.boto(signature_version="s3v4")
    s3.put_object(Bucket="acc", Key="obj", Body=b"0123456789")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "acc", "Key": "obj"},
                                    ExpiresIn=600)
    sig = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["X-Amz-Signature"][0]
    check(url_get(url)[0] == 200, "presigned GET")
    forged = url.replace(sig, "f" * 64)
    check(url_get(forged)[0] == 403, "forged presigned GET")
    token = "SeSsIoNtOkEn%2Fsecret0123456789"
    check(url_get(url + "&X-Amz-Security-Token=" + token)[0] == 403, "token")
    # the verifier decodes parameter names, so the log's redaction must too
    check(url_get(url.replace("X-Amz-Signature=", "X-Amz-%53ignature="))[0] == 200,
          "encoded name")
    v2 = c.boto(signature_version="s3").generate_presigned_url(
        "get_object", Params={"Bucket": "acc", "Key": "obj"}, ExpiresIn=600)
    sig2 = urllib.parse.parse_qs(urllib.parse.urlsplit(v2).query)["Signature"][0]
    url_get(v2)
    # header-signed: the Authorization header's signature
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    req = AWSRequest(method="GET", url=c.url + "/acc/obj?marker=last", data=b"")
    S3SigV4Auth(Credentials(ACCESS_KEY, SECRET_KEY), "s3", "us-east-1").add_auth(req)
    hsig = req.headers["Authorization"].split("Signature=")[1]
    conn = http.client.HTTPConnection("127.0.0.1", c.port, timeout=10)
    conn.putrequest("GET", "/acc/obj?marker=last", skip_host=True, skip_accept_encoding=True)
    conn.putheader("Host", "127.0.0.1:%d" % c.port)
    for k, v in req.headers.items():
        conn.putheader(k, v)
    conn.endheaders()
    check(conn.getresponse().status == 200, "header-signed GET")
    conn.close()
    lines = wait_lines(path, lambda x: "Signature=REDACTED" in x["target"] and
                       x["status"] == 200 and x["account"] == ACCESS_KEY)
    text = "\n".join(read_lines(path))
    for secret in (sig, "f" * 64, sig2, urllib.parse.quote(sig2, safe=""), hsig, SECRET_KEY,
                   token, urllib.parse.unquote(token)):
        check(secret not in text, "a secret reached the access log: %r" % secret)
    check("AWS4-HMAC-SHA256 Credential" not in text, "an Authorization value was logged")
    pres = [x for x in lines if x["target"].startswith("/acc/obj?") and
            "X-Amz-Signature=REDACTED" in x["target"]]
    check(len(pres) >= 2, "the presigned requests are logged, redacted: %r" % pres)
    tok = [x for x in lines if "X-Amz-Security-Token=REDACTED" in x["target"]]
    check(len(tok) == 1, "the token parameter is redacted: %r" % tok)


def test_aborted_request(c, path, mport):
    """A GET whose client goes away after the head: its line says aborted,
    and the in-flight gauge comes back to 0."""
    s3 = c.boto(signature_version="s3v4")
    s3.put_object(Bucket="acc", Key="big", Body=os.urandom(24 << 20))
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "acc", "Key": "big"},
                                    ExpiresIn=600)
    u = urllib.parse.urlsplit(url)
    sock = socket.create_connection(("127.0.0.1", c.port), timeout=10)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.sendall(("GET %s?%s HTTP/1.1\r\nHost: %s\r\n\r\n" % (u.path, u.query, u.netloc))
                 .encode())
    head = sock.recv(4096)
    check(head.startswith(b"HTTP/1.1 200"), "big GET head %r" % head[:1000])
    time.sleep(0.3)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    sock.close()   # a reset: the gateway's next write fails
    lines = wait_lines(path, lambda x: x["key"] == "big" and x["aborted"], timeout=30)
    x = [x for x in lines if x["key"] == "big" and x["aborted"]][0]
    check(x["status"] == 200 and x["operation"] == "GetObject", "aborted line %r" % x)
    deadline = time.monotonic() + 10
    while scrape(mport)[("cairn_gateway_requests_in_flight", "")] != 0:
        check(time.monotonic() < deadline, "in-flight gauge stays above 0 after the abort")
        time.sleep(0.1)


def test_rotate(c, path):
    s3 = c.boto()
    s3.put_object(Bucket="acc", Key="before-rotate", Body=b"1")
    wait_lines(path, lambda x: x["key"] == "before-rotate")
    moved = path + ".1"
    os.rename(path, moved)
    s3.put_object(Bucket="acc", Key="after-mv", Body=b"1")   # still into the moved file
    wait_lines(moved, lambda x: x["key"] == "after-mv")
    c.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while not os.path.exists(path):
        check(time.monotonic() < deadline, "SIGHUP did not reopen %s" % path)
        time.sleep(0.05)
    n_moved = len(read_lines(moved))
    s3.put_object(Bucket="acc", Key="after-hup", Body=b"1")
    lines = wait_lines(path, lambda x: x["key"] == "after-hup")
    check(all(x["key"] != "before-rotate" for x in lines), "old lines stay in the moved file")
    time.sleep(0.2)
    check(len(read_lines(moved)) == n_moved, "the moved file gets nothing after the reopen")
    check("access log %s reopened" % path in c.log_text(), "the reopen is logged")


def test_slow_file_drops(tmp):
    """log.access_file is a FIFO nobody reads: the gateway keeps answering,
    drops lines past log.access_buffer and counts them; once read, the
    lines it kept arrive whole."""
    fifo = os.path.join(tmp, "slow.fifo")
    os.mkfifo(fifo)
    rd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)   # so the gateway's open does not block
    mport = free_port()
    try:
        with Cluster(nodes=1, settings={"log.access_file": fifo, "log.format": "json",
                                        "log.access_buffer": "64K",
                                        "metrics.port": mport}) as c:
            s3 = c.boto()
            s3.create_bucket(Bucket="slow")
            t0 = time.monotonic()
            n = 1500   # ~ 300 bytes a line: the pipe (64 KiB) and the buffers fill
            for i in range(n):
                s3.head_bucket(Bucket="slow")
            took = time.monotonic() - t0
            m = scrape(mport)
            dropped = m[("cairn_gateway_access_log_dropped_lines_total", "")]
            check(dropped > 0, "no line dropped with a stuck file")
            check(dropped < n, "every line dropped")
            got = b""
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    b = os.read(rd, 1 << 16)
                except BlockingIOError:
                    b = b""
                got += b
                if not b:
                    time.sleep(0.05)
                    if got.count(b"\n") + dropped >= n + 1:
                        break
            lines = got.split(b"\n")[:-1]
            for raw in lines:
                json.loads(raw)   # whole lines only, never half of one
            check(len(lines) + dropped >= n + 1, "lines %d + dropped %d < %d" %
                  (len(lines), dropped, n + 1))
            print("     %d requests in %.1fs with a stuck file: %d lines kept, %d dropped"
                  % (n, took, len(lines), dropped))
    finally:
        os.close(rd)


def test_text_in_gateway_log(c):
    """Without log.access_file the text lines go to the gateway's log."""
    c.proc.terminate()
    c.proc.wait(30)
    del c.settings["log.access_file"]
    c.settings["log.format"] = "text"
    c.start()
    s3 = c.boto()
    s3.put_object(Bucket="acc", Key="t x/\u00e9\"", Body=b"abc")
    rid = s3.get_object(Bucket="acc", Key="t x/\u00e9\"")["ResponseMetadata"]["RequestId"]
    pat = re.compile(r'^\S+Z 127\.0\.0\.1:\d+ %s GetObject acc t%%20x/%%C3%%A9%%22 '
                     r'"GET /acc/\S+" 200 - 0 3 [\d.]+ [\d.]+ %s ok$' % (ACCESS_KEY, rid))
    deadline = time.monotonic() + 10
    while not any(pat.match(x) for x in c.log_text().splitlines()):
        check(time.monotonic() < deadline, "no text access line in the gateway log:\n" +
              c.log_text()[-3000:])
        time.sleep(0.05)


def main():
    mport = free_port()
    tmp = tempfile.mkdtemp(prefix="cairn-access-")
    path = os.path.join(tmp, "access.log")
    try:
        with Cluster(nodes=1, settings={"metrics.port": mport, "log.format": "json",
                                        "log.access_file": path,
                                        "large_object.threshold_of_chunk_len": "1M",
                                        "large_object.chunked_obj_len": "1M",
                                        "large_object.reading_chunked_obj_len": "256K",
                                        "http.output_high_water": "256K"}) as c:
            for name, fn in (("json fields and keys", lambda: test_json_fields_and_keys(c, path)),
                             ("no secrets", lambda: test_no_secrets(c, path)),
                             ("aborted request", lambda: test_aborted_request(c, path, mport)),
                             ("rotate with mv + SIGHUP", lambda: test_rotate(c, path)),
                             ("text lines in the gateway log",
                              lambda: test_text_in_gateway_log(c)),
                             ("slow file drops, counted", lambda: test_slow_file_drops(tmp))):
                t0 = time.monotonic()
                fn()
                print("ok   %s (%.1fs)" % (name, time.monotonic() - t0), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("all 6 passed")


if __name__ == "__main__":
    main()
