#!/usr/bin/env python3
"""cairn-gateway's metrics endpoint: with metrics.port set the gateway answers
GET /metrics on its own listener (never on the S3 port) with Prometheus text;
requests are counted by S3 operation (the AWS API name from the operation
table) and HTTP status, with duration histograms, bytes in and out,
requests in flight and connections; the page passes the strict parser of
test_storage_metrics and `promtool check metrics` when it is installed."""
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import Cluster, check, error_code  # noqa: E402
from snclient import free_port  # noqa: E402
from test_storage_metrics import parse  # noqa: E402


def scrape(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10) as r:
        check(r.status == 200, "metrics status %d" % r.status)
        check(r.headers["Content-Type"].startswith("text/plain; version=0.0.4"), "content type")
        return r.read().decode()


def reqs(s, op, code):
    return s.get(("cairn_gateway_requests_total", 'op="%s",code="%s"' % (op, code)), 0)


def delta(after, before, name, labels=""):
    return after.get((name, labels), 0) - before.get((name, labels), 0)


def slow_get(c, url, wait=0.5):
    """GETs a presigned url over a socket with a small receive buffer that
    is read only after wait seconds (the gateway's output fills); returns
    the body length."""
    u = urllib.parse.urlsplit(url)
    sock = socket.create_connection(("127.0.0.1", c.port), timeout=30)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
    sock.sendall(("GET %s?%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
                  % (u.path, u.query, u.netloc)).encode())
    time.sleep(wait)
    out = b""
    while True:
        b = sock.recv(1 << 16)
        if not b:
            break
        out += b
    sock.close()
    head, _, body = out.partition(b"\r\n\r\n")
    check(head.startswith(b"HTTP/1.1 200"), "slow GET %r" % head[:200])
    return len(body)


def test_large_object_metrics(c, mport):
    """A chunked PUT and a sliced GET move the large-object series by
    exactly their chunk and slice counts; a client that does not read
    makes the GET pause its read-ahead."""
    s3 = c.boto(signature_version="s3v4")
    body = os.urandom(3 << 20)   # 3 chunks of 1 MiB, 12 slices of 256 KiB
    before = parse(scrape(mport))
    s3.put_object(Bucket="met", Key="big", Body=body)
    check(s3.get_object(Bucket="met", Key="big")["Body"].read() == body, "big GET")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "met", "Key": "big"},
                                    ExpiresIn=600)
    check(slow_get(c, url) == len(body), "slow GET length")
    page = scrape(mport)
    after = parse(page)
    check(delta(after, before, "cairn_gateway_lo_put_chunks_total") == 3, "3 chunks written")
    check(delta(after, before, "cairn_gateway_lo_slices_total") == 24,
          "24 slices: %r" % delta(after, before, "cairn_gateway_lo_slices_total"))
    check(delta(after, before, "cairn_gateway_lo_read_ahead_depth_count") == 24, "depths")
    # read_prefetch 4: the depth reached 4, never more
    check(delta(after, before, "cairn_gateway_lo_read_ahead_depth_bucket", 'le="3"') < 24,
          "read-ahead went past 3")
    check(delta(after, before, "cairn_gateway_lo_read_ahead_depth_bucket", 'le="4"') == 24,
          "read-ahead above read_prefetch")
    check(delta(after, before, "cairn_gateway_lo_backpressure_pauses_total") >= 1,
          "the slow client paused the read-ahead")
    for g in ("cairn_gateway_lo_slices_in_flight", "cairn_gateway_lo_gets_in_flight",
              "cairn_gateway_lo_put_chunks_in_flight"):
        check(after[(g, "")] == 0, "%s back to 0: %r" % (g, after[(g, "")]))
    check(delta(after, before, "cairn_gateway_lo_get_aborts_total") == 0, "no aborts")
    check(delta(after, before, "cairn_gateway_lo_slice_retries_total") == 0, "no retries")
    node = [k for k in after if k[0] == "cairn_gateway_node_up"]
    check(len(node) == 1 and after[node[0]] == 1, "the node is up: %r" % node)
    lab = node[0][1]
    check(delta(after, before, "cairn_gateway_node_request_duration_seconds_count", lab) >= 27,
          "node request latencies counted")
    check(after[("cairn_gateway_node_hints", lab)] == 0, "no hints")
    return page


def test_node_metrics():
    """Three nodes: one is frozen, chosen so that the large GET's record
    is read from the other two (the third of its ring order) while the
    first slice read of some chunk goes to it: that slice times out and is
    retried on the next replica, the node is marked down and gets hints;
    after the thaw the hints are replayed as repair writes. The idle probe
    is slowed down so that only these requests find the frozen node."""
    import cluster_util
    mport = free_port()
    with cluster_util.cluster(3, {"metrics.port": mport, "storage.probe_interval": "5s",
                                  "large_object.threshold_of_chunk_len": "256K",
                                  "large_object.chunked_obj_len": "256K",
                                  "large_object.reading_chunked_obj_len": "64K"}) as c:
        s3 = c.boto()
        s3.create_bucket(Bucket="nodemet")
        names = [n.endpoint for n in c.nodes]
        body = os.urandom(4 << 20)   # 16 chunks, 64 slices
        for attempt in range(8):
            key = "big%d" % attempt
            s3.put_object(Bucket="nodemet", Key=key, Body=body)
            third = cluster_util.ring_replicas(
                names, cluster_util.storage_key("nodemet", key), 3)[2]
            cl = c.nodes[0].client()
            try:
                ents = cl.list(prefix=b"c/nodemet/" + key.encode() + b"\x00").get("ents") or []
            finally:
                cl.close()
            check(len(ents) == 16, "16 chunk records: %d" % len(ents))
            if any(cluster_util.ring_replicas(names, e["key"], 3)[0] == third for e in ents):
                break
        else:
            raise AssertionError("no object whose chunk is led by its record's third replica")
        lab = 'node="%s"' % names[third]
        before = parse(scrape(mport))
        c.nodes[third].freeze()
        try:
            check(s3.get_object(Bucket="nodemet", Key=key)["Body"].read() == body, "GET")
            for i in range(5):
                s3.put_object(Bucket="nodemet", Key="k%d" % i, Body=b"x")
            mid = parse(scrape(mport))
        finally:
            c.nodes[third].thaw()
        check(mid[("cairn_gateway_node_up", lab)] == 0, "the frozen node is down")
        check(sum(mid[k] for k in mid if k[0] == "cairn_gateway_node_up") == 2, "two up")
        check(delta(mid, before, "cairn_gateway_node_marked_down_total", lab) >= 1,
              "marked down counted")
        check(mid[("cairn_gateway_node_hints", lab)] > 0, "hints pending")
        fails = delta(mid, before, "cairn_gateway_node_request_failures_total",
                      lab + ',reason="timeout"')
        check(fails >= 1, "timeouts counted: %d" % fails)
        retries = delta(mid, before, "cairn_gateway_lo_slice_retries_total")
        check(retries >= 1, "slices retried on another replica")
        deadline = time.monotonic() + 30   # the probe of a down node: every 5 s
        while True:
            after = parse(scrape(mport))
            # taken hints leave the queue before their replay ends: wait for both
            if after[("cairn_gateway_node_up", lab)] == 1 and \
                    after[("cairn_gateway_node_hints", lab)] == 0 and \
                    delta(after, before, "cairn_gateway_node_hints_replayed_total", lab) > 0:
                break
            check(time.monotonic() < deadline, "hints not replayed")
            time.sleep(0.2)
        check(delta(after, before, "cairn_gateway_node_hints_replayed_total", lab) > 0,
              "replayed")
        check(delta(after, before, "cairn_gateway_node_repair_writes_total",
                    lab + ',cause="hint"') > 0, "hint repair writes")
        print("     slice retries %d, timeouts %d" % (retries, fails))


def promtool_check(page):
    promtool = shutil.which("promtool")
    if promtool:
        p = subprocess.run([promtool, "check", "metrics"], input=page.encode(),
                           capture_output=True, timeout=60)
        check(p.returncode == 0, "promtool: %s %s" % (p.stdout.decode(), p.stderr.decode()))
        print("ok   promtool check metrics")
    else:
        print("skip promtool (not installed)")


def main():
    mport = free_port()
    with Cluster(nodes=1, settings={"metrics.port": mport,
                                    "large_object.threshold_of_chunk_len": "1M",
                                    "large_object.chunked_obj_len": "1M",
                                    "large_object.reading_chunked_obj_len": "256K",
                                    "large_object.read_prefetch": 4,
                                    "http.output_high_water": "256K"}) as c:
        s3 = c.boto()
        before = parse(scrape(mport))
        s3.create_bucket(Bucket="met")
        body = os.urandom(10000)
        for i in range(5):
            s3.put_object(Bucket="met", Key="k%d" % i, Body=body)
        for i in range(3):
            check(s3.get_object(Bucket="met", Key="k%d" % i)["Body"].read() == body, "get")
        check(error_code(s3.get_object, Bucket="met", Key="missing") == ("NoSuchKey", 404),
              "missing")
        s3.head_object(Bucket="met", Key="k0")
        s3.list_objects_v2(Bucket="met")
        # refused before routing: a head that does not parse
        c.raw(b"GET / HTTP/1.1\r\n\r\n")
        page = scrape(mport)
        after = parse(page)

        def moved(op, code):
            return reqs(after, op, code) - reqs(before, op, code)
        check(moved("CreateBucket", 200) == 1, "CreateBucket 200")
        check(moved("PutObject", 200) == 5, "PutObject 200: %r" % moved("PutObject", 200))
        check(moved("GetObject", 200) == 3, "GetObject 200")
        check(moved("GetObject", 404) == 1, "GetObject 404")
        check(moved("HeadObject", 200) == 1, "HeadObject 200")
        check(moved("ListObjectsV2", 200) == 1, "ListObjectsV2 200")
        check(moved("-", 400) == 1, "a bad head counts under op -")
        dur = after[("cairn_gateway_request_duration_seconds_count", 'op="PutObject"')]
        check(dur - before.get(("cairn_gateway_request_duration_seconds_count",
                                'op="PutObject"'), 0) == 5, "PutObject durations")
        rin = after[("cairn_gateway_received_bytes_total", "")] - \
            before[("cairn_gateway_received_bytes_total", "")]
        rout = after[("cairn_gateway_sent_bytes_total", "")] - \
            before[("cairn_gateway_sent_bytes_total", "")]
        check(rin >= 5 * len(body), "bytes in %d" % rin)
        check(rout >= 3 * len(body), "bytes out %d" % rout)
        check(after[("cairn_gateway_requests_in_flight", "")] == 0, "nothing in flight")
        check(after[("cairn_gateway_connections", "")] >= 1, "boto3's connection is open")
        # the S3 port does not serve it: there it is a bucket, and an anonymous
        # client gets an S3 error (403, or 404 NoSuchBucket since the ACLs)
        out = c.raw(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        check((out.startswith(b"HTTP/1.1 403") or out.startswith(b"HTTP/1.1 404")) and
              b"<Error>" in out and b"cairn_gateway_" not in out,
              "no metrics on the S3 port: %r" % out[:300])
        promtool_check(page)
        print("ok   gateway metrics by operation and status")
        promtool_check(test_large_object_metrics(c, mport))
        print("ok   large-object pipeline metrics")
    test_node_metrics()
    print("ok   per-node metrics: down, timeouts, hints, retries, repairs")
    print("all 3 passed")


if __name__ == "__main__":
    main()
