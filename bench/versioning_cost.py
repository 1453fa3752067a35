#!/usr/bin/python3
"""What versioning costs, against a never-versioned bucket in the same run
(3 nodes, 1 gateway, a fresh local cluster): small PUTs (a versioned one
writes a version record and the latest, after a HEAD), GETs of the latest
(the same one read), ListObjectsV2 of the latest (the same "o/" listing,
whatever the number of versions) and, for scale, ListObjectVersions. KEYS
keys of 4 KiB; the versioned bucket holds VERSIONS versions of each. Plain
and versioned runs alternate, ROUNDS times, and the medians are reported.
Prints a markdown table.

  CAIRN_BIN=build/bin /usr/bin/python3 bench/versioning_cost.py [KEYS] [VERSIONS] [ROUNDS]
"""
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
from s3util import Cluster  # noqa: E402

KEYS = int(sys.argv[1]) if len(sys.argv) > 1 else 500
VERSIONS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 3
THREADS = 4
BODY = os.urandom(4096)


def timed(fn, items):
    """(ops/s, p50 ms, p99 ms) of fn over items on THREADS threads."""
    lat = []

    def one(i):
        t = time.perf_counter()
        fn(i)
        lat.append(time.perf_counter() - t)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(THREADS) as ex:
        list(ex.map(one, items))
    wall = time.perf_counter() - t0
    lat.sort()
    return (len(items) / wall, lat[len(lat) // 2] * 1000, lat[int(len(lat) * 0.99)] * 1000)


def list_all(s3, bucket, versions):
    n, kw = 0, {}
    while True:
        if versions:
            r = s3.list_object_versions(Bucket=bucket, **kw)
            n += len(r.get("Versions", [])) + len(r.get("DeleteMarkers", []))
            if not r["IsTruncated"]:
                return n
            kw = {"KeyMarker": r["NextKeyMarker"], "VersionIdMarker": r["NextVersionIdMarker"]}
        else:
            r = s3.list_objects_v2(Bucket=bucket, **kw)
            n += r["KeyCount"]
            if not r["IsTruncated"]:
                return n
            kw = {"ContinuationToken": r["NextContinuationToken"]}


def main():
    res = {}
    with Cluster(node_settings={"obj_containers.sync_mode": "none"}) as c:
        s3 = c.boto(max_pool_connections=16)
        for b in ("plain", "ver"):
            s3.create_bucket(Bucket=b)
        s3.put_bucket_versioning(Bucket="ver", VersioningConfiguration={"Status": "Enabled"})
        for rnd in range(ROUNDS):
            for b in ("plain", "ver"):
                # the versioned bucket gets VERSIONS writes per key in all; the
                # plain one as many overwrites, so both PUT the same count
                per = VERSIONS if rnd == 0 else 1
                keys = ["k%05d" % i for i in range(KEYS)] * per
                res.setdefault((b, "put"), []).append(
                    timed(lambda k: s3.put_object(Bucket=b, Key=k, Body=BODY), keys))
                res.setdefault((b, "get"), []).append(
                    timed(lambda k: s3.get_object(Bucket=b, Key=k)["Body"].read(),
                          ["k%05d" % i for i in range(KEYS)]))
                t = time.perf_counter()
                n = list_all(s3, b, False)
                assert n == KEYS, n
                res.setdefault((b, "list"), []).append((1 / (time.perf_counter() - t), 0, 0))
                if b == "ver":
                    t = time.perf_counter()
                    n = list_all(s3, b, True)
                    res.setdefault((b, "listv"), []).append(
                        (n / (time.perf_counter() - t), 0, 0))
    med = {k: tuple(statistics.median(x[i] for x in v) for i in range(3)) for k, v in res.items()}
    print("| operation | never versioned | versioned (Enabled) | ratio |")
    print("|---|---|---|---|")
    for op, name, unit in (("put", "PutObject 4 KiB", "ops/s"),
                           ("get", "GetObject of the latest, 4 KiB", "ops/s")):
        p, v = med[("plain", op)], med[("ver", op)]
        print("| %s | %.0f %s (p50 %.1f ms, p99 %.1f ms) | %.0f %s (p50 %.1f ms, p99 %.1f ms) "
              "| %.2f |" % (name, p[0], unit, p[1], p[2], v[0], unit, v[1], v[2], v[0] / p[0]))
    p, v = med[("plain", "list")], med[("ver", "list")]
    print("| ListObjectsV2 of %d keys (%d versions each when versioned) | %.1f ms | %.1f ms "
          "| %.2f |" % (KEYS, VERSIONS + ROUNDS - 1, 1000 / p[0], 1000 / v[0], p[0] / v[0]))
    print("| ListObjectVersions, every version | | %.0f entries/s | |" % med[("ver", "listv")][0])


if __name__ == "__main__":
    main()
