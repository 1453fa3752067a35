#!/usr/bin/env python3
"""cairn-gateway's metrics endpoint: with metrics.port set the gateway answers
GET /metrics on its own listener (never on the S3 port) with Prometheus text;
requests are counted by S3 operation (the AWS API name from the operation
table) and HTTP status, with duration histograms, bytes in and out,
requests in flight and connections; the page passes the strict parser of
test_storage_metrics and `promtool check metrics` when it is installed."""
import os
import shutil
import subprocess
import sys
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


def main():
    mport = free_port()
    with Cluster(nodes=1, settings={"metrics.port": mport}) as c:
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
        # the S3 port does not serve it (it is an S3 key there, so SigV4 says no)
        out = c.raw(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        check(out.startswith(b"HTTP/1.1 403"), "no metrics on the S3 port: %r" % out[:60])
        promtool = shutil.which("promtool")
        if promtool:
            p = subprocess.run([promtool, "check", "metrics"], input=page.encode(),
                               capture_output=True, timeout=60)
            check(p.returncode == 0, "promtool: %s %s" % (p.stdout.decode(), p.stderr.decode()))
            print("ok   promtool check metrics")
        else:
            print("skip promtool (not installed)")
    print("ok   gateway metrics by operation and status")
    print("all 1 passed")


if __name__ == "__main__":
    main()
