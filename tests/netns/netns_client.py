"""The S3 client side of test_netns_cluster.py, run inside the client's
network namespace (ip netns exec ... python3 netns_client.py ...):

  create URL BUCKET            create a bucket
  writer URL BUCKET OUT STOP   PUT its own keys until the file STOP exists;
                               write {key: md5 of the last acknowledged PUT}
                               and the error count to OUT
  verify URL BUCKET IN         GET every key of IN; print a JSON verdict
  mixed URL BUCKET OUT STOP    as writer, and after each PUT a GET of a key
                               acknowledged before, checked against its md5;
                               OUT also gets the reads and every failed read
                               (an exception or other bytes: no retries)
  putmany URL BUCKET N OUT     PUT N keys h0000.. once; OUT as writer's
"""
import hashlib
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from s3util import ACCESS_KEY, REGION, SECRET_KEY  # noqa: E402


def client(url):
    import boto3
    from botocore.config import Config
    return boto3.client("s3", endpoint_url=url, aws_access_key_id=ACCESS_KEY,
                        aws_secret_access_key=SECRET_KEY, region_name=REGION,
                        config=Config(s3={"addressing_style": "path"},
                                      retries={"max_attempts": 1}, read_timeout=20,
                                      connect_timeout=5))


def writer(url, bucket, out, stop):
    s3 = client(url)
    rnd = random.Random(11)
    acked, errors, i = {}, [], 0
    while not os.path.exists(stop):
        key = "w%05d" % (i % 3000)
        data = rnd.randbytes(rnd.randint(100, 50000))
        try:
            s3.put_object(Bucket=bucket, Key=key, Body=data)
            acked[key] = hashlib.md5(data).hexdigest()
        except Exception as e:  # noqa: BLE001 - an unacknowledged write
            errors.append("%.3f %s" % (time.time(), e))
            acked.pop(key, None)  # its state is unknown now
        i += 1
    with open(out, "w") as f:
        json.dump({"acked": acked, "errors": errors, "puts": i}, f)


def mixed(url, bucket, out, stop):
    s3 = client(url)
    rnd = random.Random(12)
    acked, errors, bad_reads, i, reads = {}, [], [], 0, 0
    while not os.path.exists(stop):
        key = "m%05d" % (i % 1500)
        data = rnd.randbytes(rnd.randint(100, 30000))
        try:
            s3.put_object(Bucket=bucket, Key=key, Body=data)
            acked[key] = hashlib.md5(data).hexdigest()
        except Exception as e:  # noqa: BLE001 - an unacknowledged write
            errors.append("%.3f %s" % (time.time(), e))
            acked.pop(key, None)
        i += 1
        if acked:
            k = rnd.choice(sorted(acked)) if i % 50 == 0 or len(acked) < 50 else \
                "m%05d" % rnd.randrange(min(i, 1500))
            if k not in acked:
                continue
            reads += 1
            try:
                got = hashlib.md5(s3.get_object(Bucket=bucket, Key=k)["Body"].read()).hexdigest()
                if got != acked[k]:
                    bad_reads.append("%.3f %s checksum" % (time.time(), k))
            except Exception as e:  # noqa: BLE001 - a failed read
                bad_reads.append("%.3f %s %r" % (time.time(), k, e))
    with open(out, "w") as f:
        json.dump({"acked": acked, "errors": errors, "puts": i, "reads": reads,
                   "bad_reads": bad_reads}, f)


def putmany(url, bucket, n, out):
    s3 = client(url)
    rnd = random.Random(13)
    acked, errors = {}, []
    for i in range(n):
        key = "h%04d" % i
        data = rnd.randbytes(rnd.randint(100, 20000))
        try:
            s3.put_object(Bucket=bucket, Key=key, Body=data)
            acked[key] = hashlib.md5(data).hexdigest()
        except Exception as e:  # noqa: BLE001
            errors.append("%s %r" % (key, e))
    with open(out, "w") as f:
        json.dump({"acked": acked, "errors": errors, "puts": n}, f)


def verify(url, bucket, path):
    s3 = client(url)
    acked = json.load(open(path))["acked"]
    bad = []
    for key, md5 in sorted(acked.items()):
        try:
            got = hashlib.md5(s3.get_object(Bucket=bucket, Key=key)["Body"].read()).hexdigest()
            if got != md5:
                bad.append((key, "checksum"))
        except Exception as e:  # noqa: BLE001
            bad.append((key, repr(e)))
    print(json.dumps({"checked": len(acked), "bad": bad[:20], "n_bad": len(bad)}))


def main():
    cmd, url, bucket = sys.argv[1:4]
    if cmd == "create":
        client(url).create_bucket(Bucket=bucket)
    elif cmd == "writer":
        writer(url, bucket, sys.argv[4], sys.argv[5])
    elif cmd == "mixed":
        mixed(url, bucket, sys.argv[4], sys.argv[5])
    elif cmd == "putmany":
        putmany(url, bucket, int(sys.argv[4]), sys.argv[5])
    elif cmd == "verify":
        verify(url, bucket, sys.argv[4])
    else:
        raise SystemExit("unknown command " + cmd)


if __name__ == "__main__":
    main()
