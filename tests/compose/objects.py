#!/usr/bin/python3
"""S3 checks for tests/compose/test_compose.sh, run from the host against the
gateways' published ports with boto3 (Debian's python3-boto3).

  objects.py mkbucket  --endpoints URL[,URL] --bucket B
  objects.py roundtrip --endpoints URL,URL --bucket B
      PUT a few objects (small and multi-chunk) through each gateway, GET
      each back through the other one, compare bytes.
  objects.py snapshot  --endpoints URL --bucket B --out FILE
      list every object, GET each, check its MD5 against its ETag (single-part
      objects), write {key: [size, md5]} to FILE.
  objects.py verify    --endpoints URL[,URL] --bucket B --expect FILE
      through every endpoint: the listing holds exactly the keys of FILE, and
      every object reads back with the size and MD5 of FILE (GETs alternate
      between the endpoints, 16 at a time). With --degraded (a node is down)
      a failed listing is a WARN line, not a failure: the gateway's listing
      asks every node (see the report); the reads must all succeed.

Credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, default the
development pair. Exit status 0 when every check passed, 1 otherwise.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import sys
import time

import boto3
from botocore.config import Config

DEV_ACCESS = "AKIACAIRNDEV00000000"
DEV_SECRET = "cairn-dev-secret-key-000000000000000000"


def client(endpoint, attempts=2):
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=os.environ.get("AWS_ACCESS_KEY_ID", DEV_ACCESS),
        aws_secret_access_key=os.environ.get("AWS_SECRET_ACCESS_KEY", DEV_SECRET),
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}, signature_version="s3v4",
                      retries={"max_attempts": attempts, "mode": "standard"},
                      connect_timeout=5, read_timeout=60),
    )


def list_keys(s3, bucket):
    keys = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for o in page.get("Contents", []):
            if o["Key"] in keys:
                raise AssertionError("listing returned %r twice" % o["Key"])
            keys[o["Key"]] = (o["Size"], o["ETag"].strip('"'))
    return keys


def get_md5(s3, bucket, key):
    r = s3.get_object(Bucket=bucket, Key=key)
    body = r["Body"].read()
    return len(body), hashlib.md5(body).hexdigest(), r["ETag"].strip('"')


def cmd_mkbucket(a):
    s3 = client(a.endpoints[0])
    s3.create_bucket(Bucket=a.bucket)
    names = [b["Name"] for b in client(a.endpoints[-1]).list_buckets()["Buckets"]]
    if a.bucket not in names:
        print("FAIL: bucket %s not listed through %s" % (a.bucket, a.endpoints[-1]))
        return 1
    print("bucket %s made through %s, listed through %s" % (a.bucket, a.endpoints[0], a.endpoints[-1]))
    return 0


def cmd_roundtrip(a):
    sizes = [0, 1, 1000, 300 * 1024, 2 * 1024 * 1024 + 123]
    fails = 0
    n = 0
    for i, ep in enumerate(a.endpoints):
        other = a.endpoints[(i + 1) % len(a.endpoints)]
        for size in sizes:
            key = "roundtrip/gw%d/%d" % (i + 1, size)
            body = os.urandom(size)
            client(ep).put_object(Bucket=a.bucket, Key=key, Body=body)
            got = client(other).get_object(Bucket=a.bucket, Key=key)["Body"].read()
            n += 1
            if got != body:
                fails += 1
                print("FAIL: %s put through %s, read through %s: %d bytes back, want %d%s"
                      % (key, ep, other, len(got), size, "" if len(got) != size else " (bytes differ)"))
    for i in range(len(a.endpoints)):
        for size in sizes:
            client(a.endpoints[0]).delete_object(Bucket=a.bucket, Key="roundtrip/gw%d/%d" % (i + 1, size))
    print("roundtrip: %d objects (0 B .. %d B) put through one gateway, read through the other, %d failed"
          % (n, sizes[-1], fails))
    return 1 if fails else 0


def cmd_snapshot(a):
    s3 = client(a.endpoints[0])
    keys = list_keys(s3, a.bucket)
    snap = {}
    bad = 0
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        got = dict(zip(sorted(keys), pool.map(lambda k: get_md5(s3, a.bucket, k), sorted(keys))))
    for key, (size, etag) in sorted(keys.items()):
        got_size, md5, _ = got[key]
        if got_size != size:
            print("FAIL: %s: listing says %d bytes, GET gave %d" % (key, size, got_size))
            bad += 1
        if "-" not in etag and etag != md5:
            print("FAIL: %s: ETag %s but the body's MD5 is %s" % (key, etag, md5))
            bad += 1
        snap[key] = [got_size, md5]
    with open(a.out, "w") as f:
        json.dump(snap, f, sort_keys=True)
    print("snapshot: %d objects, %d bytes, %d bad" % (len(snap), sum(v[0] for v in snap.values()), bad))
    if not snap:
        print("FAIL: the bucket is empty")
        return 1
    return 1 if bad else 0


def cmd_verify(a):
    with open(a.expect) as f:
        want = json.load(f)
    bad = 0
    clients = [client(ep, attempts=1) for ep in a.endpoints]
    failed = []  # after 20 failed reads the rest are not tried (bounded time)
    for ep in a.endpoints:
        t = time.time()
        try:
            listed = set(list_keys(client(ep, attempts=1), a.bucket))
        except Exception as e:
            if not a.degraded:
                raise
            print("WARN: listing through %s failed with a node down (%.1f s): %s"
                  % (ep, time.time() - t, e))
            continue
        missing = sorted(set(want) - listed)
        extra = sorted(listed - set(want))
        if missing or extra:
            bad += 1
            print("FAIL: listing through %s: %d keys missing (%s), %d unexpected (%s)"
                  % (ep, len(missing), missing[:5], len(extra), extra[:5]))

    def check(item):
        i, (key, (size, md5)) = item
        ep = a.endpoints[i % len(clients)]
        if len(failed) >= 20:
            return 0.0, "FAIL: GET %s not tried (20 reads failed already)" % key
        t = time.time()
        msg = None
        try:
            got_size, got_md5, _ = get_md5(clients[i % len(clients)], a.bucket, key)
            if (got_size, got_md5) != (size, md5):
                msg = ("FAIL: %s through %s: %d bytes md5 %s, want %d bytes md5 %s"
                       % (key, ep, got_size, got_md5, size, md5))
        except Exception as e:  # a failed read is a finding, keep counting
            msg = "FAIL: GET %s through %s: %s" % (key, ep, e)
        if msg:
            failed.append(key)
        return time.time() - t, msg

    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        results = list(pool.map(check, enumerate(sorted(want.items()))))
    for _, msg in results:
        if msg:
            if bad < 30:
                print(msg)
            bad += 1
    lat = sorted(r[0] for r in results)
    print("verify: %d objects read back through %s in %.1f s (slowest GET %.2f s, median %.3f s), "
          "%d failures" % (len(want), ",".join(a.endpoints), time.time() - t0,
                           lat[-1] if lat else 0, lat[len(lat) // 2] if lat else 0, bad))
    return 1 if bad else 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("cmd", choices=["mkbucket", "roundtrip", "snapshot", "verify"])
    p.add_argument("--endpoints", required=True, type=lambda s: s.split(","))
    p.add_argument("--bucket", required=True)
    p.add_argument("--out")
    p.add_argument("--expect")
    p.add_argument("--degraded", action="store_true")
    a = p.parse_args()
    return {"mkbucket": cmd_mkbucket, "roundtrip": cmd_roundtrip,
            "snapshot": cmd_snapshot, "verify": cmd_verify}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
