"""A gateway's first requests race its connections to the nodes (CURVE
handshakes take milliseconds): a request sent before a node's connection is
up must wait for it, not fail and mark a live node down. Three nodes with
N=3 W=3 R=3, so a single node wrongly marked down fails the request: a new
gateway is started five times and a presigned PUT and GET go to it the
moment its port accepts. Every answer is 200 and no gateway logs a node
marked down."""
import http.client
import os
import socket
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402
from s3util import ACCESS_KEY, REGION, SECRET_KEY, check, run_tests  # noqa: E402
from snclient import free_port  # noqa: E402

SETTINGS = {"consistency.num_of_replicas": 3, "consistency.write": 3, "consistency.read": 3,
            "consistency.delete": 3}


def start_gateway(c, name):
    tmp = os.path.join(c.tmp, name)
    os.makedirs(tmp, exist_ok=True)
    port = free_port()
    cfg = os.path.join(tmp, "gateway.conf")
    with open(cfg, "w") as f:
        for k, v in dict(c.settings, **{"http.port": port, "metrics.port": 0}).items():
            f.write("%s = %s\n" % (k, v))
    log_path = os.path.join(tmp, "gateway.log")
    log = open(log_path, "ab")
    proc = subprocess.Popen([c.bin, "--config", cfg], stdout=log, stderr=log)
    log.close()
    return proc, port, log_path


def wait_port(port, proc, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        check(proc.poll() is None, "the gateway exited %r" % proc.returncode)
        s = socket.socket()
        try:
            s.connect(("127.0.0.1", port))
            return s
        except OSError:
            s.close()
            time.sleep(0.001)
    raise AssertionError("port %d never accepted" % port)


def send(port, method, url, body=b""):
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request(method, u.path + "?" + u.query, body=body,
                 headers={"Host": "127.0.0.1:%d" % port})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, data


def test_first_requests(c):
    s3 = c.boto()
    s3.create_bucket(Bucket="first")
    for i in range(5):
        proc, port, log_path = start_gateway(c, "gw-first-%d" % i)
        try:
            endpoint = "http://127.0.0.1:%d" % port
            s3n = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ACCESS_KEY,
                               aws_secret_access_key=SECRET_KEY, region_name=REGION,
                               config=Config(s3={"addressing_style": "path"}))
            key = "k%d" % i
            body = b"first request %d" % i
            put = s3n.generate_presigned_url("put_object", Params={"Bucket": "first", "Key": key},
                                             ExpiresIn=300)
            get = s3n.generate_presigned_url("get_object", Params={"Bucket": "first", "Key": key},
                                             ExpiresIn=300)
            wait_port(port, proc).close()
            st, data = send(port, "PUT", put, body)
            check(st == 200, "start %d: first PUT %d %r" % (i, st, data[:300]))
            st, data = send(port, "GET", get)
            check(st == 200 and data == body, "start %d: GET %d %r" % (i, st, data[:300]))
        finally:
            proc.terminate()
            proc.wait(30)
        with open(log_path, "rb") as f:
            log = f.read().decode(errors="replace")
        check("marked down" not in log, "start %d: a live node was marked down:\n%s" %
              (i, log[-3000:]))


if __name__ == "__main__":
    run_tests([test_first_requests], cluster_kw={"settings": SETTINGS})
