"""kill -9 of the gateway in the middle of versioned PUTs of large
(chunked) objects, then a fresh gateway on the same nodes: every
acknowledged version reads back byte-identical by its id and is listed by
ListObjectVersions; every version listed reads back whole and is one of the
bodies sent for its key (an unacknowledged PUT is either absent or whole);
each key has exactly one IsLatest, its versions newest first, and the
IsLatest is the version a plain GET (and HEAD) returns; a newer version
listed above it was never acknowledged (the crash fell between its version
record and its "o/" record) and is listed as noncurrent (docs/gateway.md,
"Versioning", "Which version is current")."""
import hashlib
import os
import random
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import check, run_tests  # noqa: E402

K = 1024
SETTINGS = {
    "large_object.threshold_of_chunk_len": 256 * K,
    "large_object.chunked_obj_len": 128 * K,
    "large_object.reading_chunked_obj_len": 32 * K,
}
NODE_SETTINGS = {"obj_containers.sync_mode": "none", "io_threads": 2}
BUCKET = "vcrash"
KEYS = ["k%d" % i for i in range(6)]
WRITERS = 4


def body_of(seed):
    rnd = random.Random(seed)
    return rnd.randbytes(rnd.randrange(300 * K, 1200 * K))


def writer(s3, n, sent, acked, stop, lock, errors):
    """PUTs versions until the gateway dies; records what it sent (sha256
    by key) and what was acknowledged ((key, version id) -> sha256)."""
    i = 0
    while not stop.is_set():
        key = KEYS[(n + i) % len(KEYS)]
        data = body_of(n * 1000000 + i)
        digest = hashlib.sha256(data).hexdigest()
        with lock:
            sent.setdefault(key, set()).add(digest)
        try:
            vid = s3.put_object(Bucket=BUCKET, Key=key, Body=data)["VersionId"]
        except Exception as e:   # the gateway was killed under this request
            errors.append(repr(e))
            return
        with lock:
            acked[(key, vid)] = digest
        i += 1


def list_versions(s3):
    """Every version and delete marker, paged with a small max-keys."""
    out, kw = [], {}
    while True:
        r = s3.list_object_versions(Bucket=BUCKET, MaxKeys=7, **kw)
        out += r.get("Versions", []) + [dict(d, Marker=True) for d in r.get("DeleteMarkers", [])]
        if not r.get("IsTruncated"):
            return out
        kw = {"KeyMarker": r["NextKeyMarker"], "VersionIdMarker": r["NextVersionIdMarker"]}


def test_kill_mid_versioned_puts(c):
    s3 = c.boto(signature_version="s3v4")
    s3.create_bucket(Bucket=BUCKET)
    s3.put_bucket_versioning(Bucket=BUCKET, VersioningConfiguration={"Status": "Enabled"})
    sent, acked, stop, lock, errors = {}, {}, threading.Event(), threading.Lock(), []
    clients = [c.boto(signature_version="s3v4") for _ in range(WRITERS)]   # not thread-safe
    threads = [threading.Thread(target=writer, args=(clients[n], n, sent, acked, stop, lock,
                                                     errors))
               for n in range(WRITERS)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 120
    while len(acked) < 24 and time.monotonic() < deadline:
        time.sleep(0.05)
    check(len(acked) >= 24 and not errors, "the writers got going: %d acks %r" % (
        len(acked), errors[:2]))
    time.sleep(random.Random().uniform(0, 0.3))   # land anywhere inside a PUT
    os.kill(c.proc.pid, signal.SIGKILL)
    c.proc.wait()
    stop.set()
    for t in threads:
        t.join(60)
    c.log.close()
    c.start()   # a fresh gateway on the same nodes (a new port)
    s3 = c.boto(signature_version="s3v4")
    with lock:
        acked, sent = dict(acked), {k: set(v) for k, v in sent.items()}
    # every acknowledged version, byte for byte
    for (key, vid), digest in acked.items():
        data = s3.get_object(Bucket=BUCKET, Key=key, VersionId=vid)["Body"].read()
        check(hashlib.sha256(data).hexdigest() == digest, "%s %s reads back" % (key, vid))
    listed = list_versions(s3)
    check(not any(v.get("Marker") for v in listed), "no delete marker was written")
    ids = {(v["Key"], v["VersionId"]) for v in listed}
    check(len(ids) == len(listed), "no version listed twice")
    missing = [a for a in acked if a not in ids]
    check(not missing, "acknowledged versions not listed: %r" % missing[:3])
    unacked_newer = 0
    for key in KEYS:
        vs = [v for v in listed if v["Key"] == key]
        if not vs:
            continue
        latest = [v["VersionId"] for v in vs if v["IsLatest"]]
        check(len(latest) == 1, "%s: one IsLatest: %r" % (key, [v["IsLatest"] for v in vs]))
        times = [v["LastModified"] for v in vs]
        check(times == sorted(times, reverse=True), "%s: newest first" % key)
        for v in vs:   # listed means whole: one of the bodies sent for the key
            data = s3.get_object(Bucket=BUCKET, Key=key, VersionId=v["VersionId"])["Body"].read()
            check(hashlib.sha256(data).hexdigest() in sent[key],
                  "%s %s is a body sent for it" % (key, v["VersionId"]))
            check(v["Size"] == len(data), "%s %s: listed size" % (key, v["VersionId"]))
        r = s3.get_object(Bucket=BUCKET, Key=key)
        got = r["VersionId"]
        check(got == latest[0], "%s: GET returns the listing's IsLatest %s: %s" %
              (key, latest[0], got))
        check(s3.head_object(Bucket=BUCKET, Key=key)["VersionId"] == got, "%s: HEAD too" % key)
        for v in vs[:[v["VersionId"] for v in vs].index(got)]:   # newer than the latest
            check((key, v["VersionId"]) not in acked,
                  "%s: %s, newer than the latest, was never acknowledged" % (key, v["VersionId"]))
            unacked_newer += 1
    print("   %d versions acknowledged, %d listed, %d unacknowledged version records "
          "outlived the crash without their \"o/\" record (listed noncurrent)"
          % (len(acked), len(listed), unacked_newer))
    # the bucket takes new versions after the crash
    vid = s3.put_object(Bucket=BUCKET, Key=KEYS[0], Body=b"after")["VersionId"]
    check(s3.get_object(Bucket=BUCKET, Key=KEYS[0])["Body"].read() == b"after", "new latest")
    after = [v for v in list_versions(s3) if v["Key"] == KEYS[0]]
    check([v["VersionId"] for v in after if v["IsLatest"]] == [vid] and
          after[0]["VersionId"] == vid, "the new version is the latest, and the newest")


if __name__ == "__main__":
    run_tests([test_kill_mid_versioned_puts],
              cluster_kw={"settings": SETTINGS, "node_settings": NODE_SETTINGS})
