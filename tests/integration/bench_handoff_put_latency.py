"""Benchmark (not a test): PUT latency with all 3 nodes up and with one stopped (N=3 W=2), for a
given build (CAIRN_BIN): sequential 4 KiB PUTs through boto3, PUTS each
(300). With a node down every PUT leaves a hint on a replica that took it
(HINT_ADD) before it is answered. Prints one JSON line.
bench/results/handoff-durable-put-latency-2vcpu.md has the numbers."""
import os, sys, time, statistics, json
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_util import cluster

N = int(os.environ.get("PUTS", "300"))
body = os.urandom(4096)

def run(s3, prefix):
    lat = []
    for i in range(N):
        t0 = time.perf_counter()
        s3.put_object(Bucket="lat", Key="%s%05d" % (prefix, i), Body=body)
        lat.append((time.perf_counter() - t0) * 1000)
    lat.sort()
    return {"p50": lat[len(lat) // 2], "p99": lat[int(len(lat) * 0.99)], "mean": statistics.mean(lat)}

with cluster() as cl:
    s3 = cl.boto()
    s3.create_bucket(Bucket="lat")
    run(s3, "warm")
    up = run(s3, "up")
    cl.nodes[2].stop()
    run(s3, "warmdown")
    down = run(s3, "down")
    print(json.dumps({"bin": os.environ["CAIRN_BIN"], "all_up": up, "one_down": down}))
