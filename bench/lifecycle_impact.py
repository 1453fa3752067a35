#!/usr/bin/python3
"""Foreground GET latency while the lifecycle worker expires objects: three
runs on a fresh local cluster each (3 nodes, 1 gateway): no lifecycle work
(baseline), expiry at lifecycle.max_deletes_per_sec = 100 (the default), and
expiry unthrottled (1000000). Each run stores COLD small objects that a rule
expires (2 s "day") and HOT objects that clients GET with THREADS boto3
clients for SECONDS while the worker deletes. Prints a markdown table.

  CAIRN_BIN=build/bin /usr/bin/python3 bench/lifecycle_impact.py [COLD] [SECONDS] [MODE]

MODE "current" (the default) expires current objects of an unversioned
bucket; "noncurrent" makes the cold bucket versioned, writes each cold key
twice and lets NoncurrentVersionExpiration remove the older version of each
(the deletes counted are the noncurrent versions removed).
"""
import os
import random
import re
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
from s3util import Cluster  # noqa: E402
from snclient import free_port  # noqa: E402

COLD = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 10
MODE = sys.argv[3] if len(sys.argv) > 3 else "current"
THREADS = 4
HOT = 200
SERIES = {"current": "expired_total", "noncurrent": "noncurrent_expired_total"}[MODE]


def expired(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        m = re.search(r"^cairn_gateway_lifecycle_%s (\d+)" % SERIES, r.read().decode(), re.M)
    return int(m.group(1))


def run(name, rate):
    mport = free_port()
    settings = {"lifecycle.day_length": "2s", "lifecycle.interval": "1s",
                "lifecycle.lease_time": "3s", "storage.request_timeout": "2s",
                "metrics.port": mport}
    if rate is not None:
        settings["lifecycle.max_deletes_per_sec"] = rate
    with Cluster(settings=settings, node_settings={"obj_containers.sync_mode": "none"}) as c:
        s3 = c.boto(signature_version="s3v4", max_pool_connections=16)
        s3.create_bucket(Bucket="hot")
        s3.create_bucket(Bucket="cold")
        if MODE == "noncurrent":
            s3.put_bucket_versioning(Bucket="cold",
                                     VersioningConfiguration={"Status": "Enabled"})
        with ThreadPoolExecutor(8) as ex:
            list(ex.map(lambda i: s3.put_object(Bucket="hot", Key="h%04d" % i,
                                                Body=os.urandom(4096)), range(HOT)))
            for _ in range(2 if MODE == "noncurrent" else 1):
                list(ex.map(lambda i: s3.put_object(Bucket="cold", Key="c%05d" % i,
                                                    Body=b"x" * 1024), range(COLD)))
        if rate is not None:
            action = ({"Expiration": {"Days": 1}} if MODE == "current" else
                      {"NoncurrentVersionExpiration": {"NoncurrentDays": 1}})
            s3.put_bucket_lifecycle_configuration(Bucket="cold", LifecycleConfiguration={
                "Rules": [dict({"ID": "all", "Filter": {}, "Status": "Enabled"}, **action)]})
            deadline = time.monotonic() + 30   # measure from the first expiry on
            while expired(mport) == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
        lat = []
        lock = threading.Lock()
        stop = time.monotonic() + SECONDS
        e0 = expired(mport)

        def client():
            cl = c.boto(signature_version="s3v4")
            mine = []
            while time.monotonic() < stop:
                k = "h%04d" % random.randrange(HOT)
                t0 = time.perf_counter()
                cl.get_object(Bucket="hot", Key=k)["Body"].read()
                mine.append(time.perf_counter() - t0)
            with lock:
                lat.extend(mine)
        ts = [threading.Thread(target=client) for _ in range(THREADS)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        deletes = expired(mport) - e0
    lat.sort()
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] * 1000  # noqa: E731
    return {"name": name, "ops": len(lat) / SECONDS, "p50": q(0.5), "p99": q(0.99),
            "mean": sum(lat) / len(lat) * 1000, "dps": deletes / SECONDS, "n": len(lat)}


rows = [run("baseline (no rule)", None), run("expiry, 100 deletes/s (default)", 100),
        run("expiry, unthrottled", 1000000)]
base = rows[0]
print("| run | GETs | GET/s | p50 ms | p99 ms | p50 / baseline | p99 / baseline | "
      "lifecycle deletes/s in the window |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    print("| %s | %d | %.0f | %.2f | %.2f | %.2f | %.2f | %.0f |" % (
        r["name"], r["n"], r["ops"], r["p50"], r["p99"], r["p50"] / base["p50"],
        r["p99"] / base["p99"], r["dps"]))
