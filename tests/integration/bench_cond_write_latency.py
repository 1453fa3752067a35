"""Latency of small PutObject with and without If-None-Match: * (conditional
writes take the key's lease on the replicas first: one more round trip).
3 local storage nodes, one gateway, boto3, sequential; modes interleaved in
rounds so machine noise hits both alike."""
import os, statistics, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import Cluster
from test_gateway_sdk_behaviour import client
N = int(os.environ.get("N", "200"))
with Cluster() as c:
    plain = client(c.port)
    cond = client(c.port, headers={"If-None-Match": "*"})
    plain.create_bucket(Bucket="bench")
    body = b"x" * 1024
    for i in range(50):   # warm up
        plain.put_object(Bucket="bench", Key="w%d" % i, Body=body)
    res = {"plain": [], "cond": []}
    for rnd in range(5):
        for mode, cl in (("plain", plain), ("cond", cond)) if rnd % 2 == 0 else (("cond", cond), ("plain", plain)):
            for i in range(N):
                t0 = time.perf_counter()
                cl.put_object(Bucket="bench", Key="%s-%d-%d" % (mode, rnd, i), Body=body)
                res[mode].append((time.perf_counter() - t0) * 1000)
    for mode, v in res.items():
        v.sort()
        print("%-6s n=%d median=%.2fms p90=%.2fms p99=%.2fms" % (
            mode, len(v), statistics.median(v), v[int(len(v) * .9)], v[int(len(v) * .99)]))
    print("ratio median cond/plain = %.2f" % (statistics.median(res["cond"]) / statistics.median(res["plain"])))
