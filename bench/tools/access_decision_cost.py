#!/usr/bin/env python3
"""Cost of the access decision on small GETs (bench/results/access-decision-2vcpu.md):
one gateway over one node (tests/integration's Cluster), 200 x 4 KiB objects
in a bucket without a policy and in one with a 10-statement policy, then
alternated 8 s cairn-bench GET runs (16 workers): the owner on the plain
bucket (the baseline), the owner on the policy bucket (every GET evaluates
the policy), and an anonymous client the policy allows (no SigV4).
  CAIRN_BIN=build/bin CAIRN_SRC=. ROUNDS=3 bench/tools/access_decision_cost.py"""
import json, os, subprocess, sys, time
sys.path.insert(0, os.path.join(os.environ.get("CAIRN_SRC", "."), "tests", "integration"))
from s3util import Cluster, ACCESS_KEY, SECRET_KEY, REGION
BIN = os.path.join(os.environ.get("CAIRN_BIN", "build/bin"), "cairn-bench")
def bench(c, path, ops, signed, dur, extra=()):
    args = [BIN, "--endpoint", "%s/%s" % (c.url, path), "--operations", ops,
            "--duration_s", str(dur), "--concurrent", "16", "--key_generator", "{uniform_int,200}",
            "--value_generator", "{fixed_bin,4096}", "--progress", "false", "--plot", "false",
            "--json", "-", "--out", "/tmp/access-bench/out-%d" % time.time_ns(), "--region", REGION,
            "--create_bucket", "false"] + list(extra)
    if signed:
        args += ["--access_key", ACCESS_KEY, "--secret_key", SECRET_KEY]
    out = subprocess.run(args, capture_output=True, text=True, timeout=dur + 60)
    txt = out.stdout
    j = json.loads(txt[txt.index("{"):])
    return j
with Cluster(nodes=1, settings={"http.threads": 2}) as c:
    s3 = c.boto()
    s3.create_bucket(Bucket="bench-plain")
    s3.create_bucket(Bucket="bench-pol")
    body = b"x" * 4096
    for b in ("bench-plain", "bench-pol"):
        for k in range(200):
            s3.put_object(Bucket=b, Key=str(k), Body=body)
    stmts = [{"Effect": "Allow", "Principal": {"AWS": "acct%d" % i}, "Action": "s3:PutObject",
              "Resource": "arn:aws:s3:::bench-pol/p%d/*" % i} for i in range(9)]
    stmts.append({"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                  "Resource": "arn:aws:s3:::bench-pol/*",
                  "Condition": {"IpAddress": {"aws:SourceIp": "127.0.0.0/8"}}})
    s3.put_bucket_policy(Bucket="bench-pol", Policy=json.dumps({"Statement": stmts}))
    res = []
    for rnd in range(int(os.environ.get("ROUNDS", "3"))):
        for label, path, signed in (("owner, no policy", "bench-plain", True),
                                    ("owner, 10-statement policy", "bench-pol", True),
                                    ("anonymous, allowed by policy", "bench-pol", False)):
            j = bench(c, path, "[{get,1}]", signed, 8)
            res.append((rnd, label, j))
            print(rnd, label, json.dumps(j)[:600], flush=True)
