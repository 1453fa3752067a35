"""Bucket lifecycle on a real cluster, with a 2-second "day"
(lifecycle.day_length) and a 1-second scan interval: the configuration
round trip with boto3 and the aws cli and S3's refusals; objects under a
prefix expire and others do not; a tag filter; a Disabled rule does
nothing; a large object expires and its chunks are gone from the nodes; an
incomplete multipart upload is aborted and its part's chunks are gone; two
gateways on one cluster take turns through the lease (one holder at a time,
only the holder scans, a frozen holder's lease is taken over); `cairn-admin lifecycle status` prints what ran; and expiry
goes on with a node stopped."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "security"))
from s3util import check, error_code, run_tests  # noqa: E402
from secutil import accounts  # noqa: E402
from snclient import FLAG_TOMBSTONE, admin_env, free_port  # noqa: E402

K = 1024
METRICS_PORT = free_port()
SETTINGS = {
    "lifecycle.day_length": "2s",
    "lifecycle.interval": "1s",
    "lifecycle.lease_time": "6s",   # renewed every second (the interval): slack for a loaded CI
    "storage.request_timeout": "2s",   # the lease's settle wait is this + 0.5 s
    "large_object.threshold_of_chunk_len": 256 * K,
    "large_object.chunked_obj_len": 128 * K,
    "large_object.reading_chunked_obj_len": 32 * K,
    "large_object.reclaim_delay": "1s",
    "metrics.port": METRICS_PORT,
}
NODE_SETTINGS = {"obj_containers.sync_mode": "none", "io_threads": 2}
BIN = os.environ.get("CAIRN_BIN", "build/bin")


def rule(rid, flt, days=1, status="Enabled", **extra):
    r = {"ID": rid, "Filter": flt, "Status": status}
    if days is not None:
        r["Expiration"] = {"Days": days}
    r.update(extra)
    return r


def keys_of(s3, b):
    return sorted(o["Key"] for o in s3.list_objects_v2(Bucket=b).get("Contents", []))


def wait_for(what, fn, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.25)


def metrics(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        text = r.read().decode()
    out = {}
    for name in ("scans_total", "expired_total", "aborted_uploads_total", "lease_held"):
        m = re.search(r"^cairn_gateway_lifecycle_%s (\d+)" % name, text, re.M)
        out[name] = int(m.group(1)) if m else None
    return out


def live_keys(c, prefix):
    """Live records under prefix on every node: [(node port, key)]."""
    out = []
    for n in c.nodes:
        cl = n.client()
        after = None
        while True:
            r = cl.list(prefix=prefix, after=after, limit=1000)
            check(r.st == 0, "list %r" % r)
            ents = r["ents"] or []
            out += [(n.port, e["key"]) for e in ents
                    if not (e.get("flags", 0) & FLAG_TOMBSTONE)]
            if not r.get("more") or not ents:
                break
            after = ents[-1]["key"]
        cl.close()
    return out


def test_configuration(c):
    s3, other, anon = accounts(c)
    b = "lc-config"
    s3.create_bucket(Bucket=b)
    check(error_code(s3.get_bucket_lifecycle_configuration, Bucket=b) ==
          ("NoSuchLifecycleConfiguration", 404), "none yet")
    rules = [
        rule("logs", {"And": {"Prefix": "never-logs/", "Tags": [{"Key": "a", "Value": "b"}],
                              "ObjectSizeGreaterThan": 10}}, days=3650),
        rule("tmp", {"Prefix": "never-tmp/"}, days=None,
             AbortIncompleteMultipartUpload={"DaysAfterInitiation": 3650}),
        rule("dated", {"Prefix": "never-dated/"}, days=None, status="Disabled"),
        rule("nc", {}, days=None, NoncurrentVersionExpiration={"NoncurrentDays": 7}),
    ]
    rules[2]["Expiration"] = {"Date": "2030-01-01T00:00:00Z"}
    r = s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": rules})
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 200, "put is 200")
    got = s3.get_bucket_lifecycle_configuration(Bucket=b)["Rules"]
    check([g["ID"] for g in got] == ["logs", "tmp", "dated", "nc"], "ids %r" % got)
    check(got[0]["Filter"]["And"]["Prefix"] == "never-logs/" and
          got[0]["Filter"]["And"]["Tags"] == [{"Key": "a", "Value": "b"}] and
          got[0]["Filter"]["And"]["ObjectSizeGreaterThan"] == 10 and
          got[0]["Expiration"] == {"Days": 3650}, "rule 1 %r" % got[0])
    check(got[1]["AbortIncompleteMultipartUpload"] == {"DaysAfterInitiation": 3650}, "abort")
    check(got[2]["Status"] == "Disabled" and
          got[2]["Expiration"]["Date"].strftime("%Y-%m-%d %H:%M") == "2030-01-01 00:00",
          "date %r" % got[2])
    check(got[3]["NoncurrentVersionExpiration"] == {"NoncurrentDays": 7}, "noncurrent")
    bad = [
        ([rule("a", {}, days=0)], ("InvalidArgument", 400)),
        ([rule("a" * 256, {})], ("InvalidArgument", 400)),
        ([rule("a", {}), rule("a", {"Prefix": "x"})], ("InvalidArgument", 400)),
        ([rule("a", {}, days=None)], ("InvalidRequest", 400)),
        ([rule("a", {"Tag": {"Key": "k", "Value": "v"}}, days=None,
               AbortIncompleteMultipartUpload={"DaysAfterInitiation": 1})],
         ("InvalidRequest", 400)),
        ([dict(rule("a", {}, days=None), Expiration={"Date": "2030-01-01T10:00:00Z"})],
         ("InvalidArgument", 400)),
        ([dict(rule("a", {}), Status="On")], ("MalformedXML", 400)),
        ([rule("r%d" % i, {}) for i in range(1001)], ("MalformedXML", 400)),
    ]
    for rs, want in bad:
        got = error_code(s3.put_bucket_lifecycle_configuration, Bucket=b,
                         LifecycleConfiguration={"Rules": rs})
        check(got == want, "%r...: %r" % (rs[0], got))
    check(len(s3.get_bucket_lifecycle_configuration(Bucket=b)["Rules"]) == 4,
          "refused configurations changed nothing")
    check(error_code(other.get_bucket_lifecycle_configuration, Bucket=b) ==
          ("AccessDenied", 403), "other account")
    check(error_code(other.delete_bucket_lifecycle, Bucket=b) == ("AccessDenied", 403),
          "other account delete")
    for who, cl in [("other account", other), ("anonymous", anon)]:
        got = error_code(cl.put_bucket_lifecycle_configuration, Bucket=b,
                         LifecycleConfiguration={"Rules": [rule("evil", {}, days=1)]})
        check(got == ("AccessDenied", 403), "%s put: %r" % (who, got))
    check([g["ID"] for g in s3.get_bucket_lifecycle_configuration(Bucket=b)["Rules"]] ==
          ["logs", "tmp", "dated", "nc"], "refused puts changed nothing")
    # the aws cli, with the legacy rule-level Prefix of PutBucketLifecycle
    cfg = {"Rules": [{"ID": "cli", "Prefix": "never-cli/", "Status": "Enabled",
                      "Expiration": {"Days": 365}}]}
    c.aws("s3api", "put-bucket-lifecycle", "--bucket", b, "--lifecycle-configuration",
          json.dumps(cfg))
    out = json.loads(c.aws("s3api", "get-bucket-lifecycle", "--bucket", b).stdout)
    check(out["Rules"][0]["Prefix"] == "never-cli/", "aws cli legacy %r" % out)
    cfg = {"Rules": [{"ID": "cli2", "Filter": {"Prefix": "never-cli/"}, "Status": "Enabled",
                      "Expiration": {"Days": 30}}]}
    c.aws("s3api", "put-bucket-lifecycle-configuration", "--bucket", b,
          "--lifecycle-configuration", json.dumps(cfg))
    out = json.loads(c.aws("s3api", "get-bucket-lifecycle-configuration", "--bucket",
                           b).stdout)
    check(out["Rules"] == [{"ID": "cli2", "Filter": {"Prefix": "never-cli/"},
                            "Status": "Enabled", "Expiration": {"Days": 30}}],
          "aws cli round trip %r" % out)
    r = s3.delete_bucket_lifecycle(Bucket=b)
    check(r["ResponseMetadata"]["HTTPStatusCode"] == 204, "delete is 204")
    check(error_code(s3.get_bucket_lifecycle_configuration, Bucket=b) ==
          ("NoSuchLifecycleConfiguration", 404), "gone")


def test_expire_prefix_tags_disabled(c):
    s3 = c.boto(signature_version="s3v4")
    b = "lc-expire"
    s3.create_bucket(Bucket=b)
    for k in ["tmp/a", "tmp/b", "keep/a", "off/a", "tagged", "tagged-other"]:
        tags = {"tagged": "state=old", "tagged-other": "state=new"}.get(k)
        kw = {"Tagging": tags} if tags else {}
        s3.put_object(Bucket=b, Key=k, Body=b"x" * 100, **kw)
    before = metrics(METRICS_PORT)["expired_total"]
    s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
        rule("tmp", {"Prefix": "tmp/"}),
        rule("tags", {"Tag": {"Key": "state", "Value": "old"}}),
        rule("off", {"Prefix": "off/"}, status="Disabled"),
    ]})
    # Days 1 of 2 s: due at the 2 s boundary after creation + 2 s
    wait_for("tmp/ and the tagged object to expire",
             lambda: keys_of(s3, b) == ["keep/a", "off/a", "tagged-other"])
    time.sleep(4)   # two more days and several scans: the others stay
    check(keys_of(s3, b) == ["keep/a", "off/a", "tagged-other"], "others kept")
    check(error_code(s3.head_object, Bucket=b, Key="tmp/a") == ("404", 404), "expired reads 404")
    check(metrics(METRICS_PORT)["expired_total"] - before == 3, "3 expired by this gateway")


def test_large_object(c):
    s3 = c.boto(signature_version="s3v4")
    b = "lc-large"
    s3.create_bucket(Bucket=b)
    body = os.urandom(700 * K)   # 6 chunks of 128 KiB
    s3.put_object(Bucket=b, Key="big/obj", Body=body)
    s3.put_object(Bucket=b, Key="small/obj", Body=os.urandom(700 * K))
    prefix = b"c/" + b.encode() + b"/big/obj\x00"
    check(len(live_keys(c, prefix)) >= 6, "chunks stored")
    s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
        rule("big", {"And": {"Prefix": "big/", "ObjectSizeGreaterThan": 500 * K}})]})
    wait_for("big/obj to expire", lambda: keys_of(s3, b) == ["small/obj"])
    wait_for("its chunks to go from the nodes", lambda: live_keys(c, prefix) == [], 20)
    check(len(live_keys(c, b"c/" + b.encode() + b"/small/obj\x00")) >= 6, "others' chunks kept")
    got = s3.get_object(Bucket=b, Key="small/obj")["Body"].read()
    check(len(got) == 700 * K, "the other object reads back")


def test_multipart_abort(c):
    s3 = c.boto(signature_version="s3v4")
    b = "lc-mpu"
    s3.create_bucket(Bucket=b)
    up = s3.create_multipart_upload(Bucket=b, Key="mp/obj")["UploadId"]
    s3.upload_part(Bucket=b, Key="mp/obj", UploadId=up, PartNumber=1, Body=os.urandom(300 * K))
    keep = s3.create_multipart_upload(Bucket=b, Key="other/obj")["UploadId"]
    prefix = b"c/" + b.encode() + b"/mp/obj\x00"
    check(len(live_keys(c, prefix)) >= 3, "part chunks stored")
    before = metrics(METRICS_PORT)["aborted_uploads_total"]
    s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
        rule("mp", {"Prefix": "mp/"}, days=None,
             AbortIncompleteMultipartUpload={"DaysAfterInitiation": 1})]})
    wait_for("the upload to be aborted", lambda: [u["UploadId"] for u in s3.list_multipart_uploads(
        Bucket=b).get("Uploads", [])] == [keep])
    check(error_code(s3.list_parts, Bucket=b, Key="mp/obj", UploadId=up) ==
          ("NoSuchUpload", 404), "NoSuchUpload after the abort")
    wait_for("its part's chunks to go", lambda: live_keys(c, prefix) == [], 20)
    check(live_keys(c, b"p/" + b.encode() + b"/mp/obj\x00") == [], "part records gone")
    check(metrics(METRICS_PORT)["aborted_uploads_total"] - before == 1, "1 aborted")
    s3.abort_multipart_upload(Bucket=b, Key="other/obj", UploadId=keep)


class SecondGateway:
    """Another cairn-gateway on the same nodes, same settings, own ports."""

    def __init__(self, c):
        self.tmp = os.path.join(c.tmp, "gw2")
        os.makedirs(self.tmp, exist_ok=True)
        self.metrics_port = free_port()
        settings = dict(c.settings, **{"http.port": free_port(),
                                       "metrics.port": self.metrics_port})
        cfg = os.path.join(self.tmp, "gateway.conf")
        with open(cfg, "w") as f:
            for k, v in settings.items():
                f.write("%s = %s\n" % (k, v))
        self.log = open(os.path.join(self.tmp, "gateway.log"), "ab")
        self.proc = subprocess.Popen([c.bin, "--config", cfg], stdout=self.log,
                                     stderr=self.log)
        wait_for("the second gateway's metrics", self.up, 30)

    def up(self):
        try:
            return metrics(self.metrics_port)["lease_held"] is not None
        except OSError:
            return False

    def close(self):
        """Stops it with SIGTERM; a graceful stop exits 0 (also under the
        sanitizers, where a leak or an error shows only in the status)."""
        rc = self.proc.poll()
        if rc is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            rc = self.proc.wait(30)
        self.log.close()
        if rc != 0:
            with open(os.path.join(self.tmp, "gateway.log"), "rb") as f:
                raise AssertionError("second gateway exited %r:\n%s" % (
                    rc, f.read().decode(errors="replace")[-5000:]))


def test_two_gateways(c):
    g2 = SecondGateway(c)
    try:
        ports = [METRICS_PORT, g2.metrics_port]
        procs = [c.proc, g2.proc]

        def holders():
            return [metrics(p)["lease_held"] for p in ports]

        # a settled lease: exactly one holder, and only it scans
        wait_for("one holder", lambda: sorted(holders()) == [0, 1], 20)
        for _ in range(3):
            time.sleep(1)
            h = holders()
            check(sorted(h) == [0, 1], "one holder at a time: %r" % h)
        holder = holders().index(1)
        scans0 = [metrics(p)["scans_total"] for p in ports]
        time.sleep(4)
        scans1 = [metrics(p)["scans_total"] for p in ports]
        check(holders()[holder] == 1, "the lease stayed")
        check(scans1[holder] - scans0[holder] >= 2, "the holder scans every interval: %r %r"
              % (scans0, scans1))
        check(scans1[1 - holder] == scans0[1 - holder], "the other does not scan: %r %r"
              % (scans0, scans1))
        # objects expire once, by whoever holds the lease
        s3 = c.boto(signature_version="s3v4")
        b = "lc-two"
        s3.create_bucket(Bucket=b)
        for i in range(20):
            s3.put_object(Bucket=b, Key="dup/%02d" % i, Body=b"x")
        exp0 = [metrics(p)["expired_total"] for p in ports]
        s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
            rule("dup", {"Prefix": "dup/"})]})
        wait_for("the 20 objects to expire", lambda: keys_of(s3, b) == [])
        exp1 = [metrics(p)["expired_total"] for p in ports]
        check(sum(exp1) - sum(exp0) == 20, "20 deletes in all: %r %r" % (exp0, exp1))
        # the holder freezes: the other takes the lease over once it expires
        procs[holder].send_signal(signal.SIGSTOP)
        try:
            wait_for("the other gateway to take the lease",
                     lambda: metrics(ports[1 - holder])["lease_held"] == 1, 20)
            s0 = metrics(ports[1 - holder])["scans_total"]
            wait_for("the new holder to scan",
                     lambda: metrics(ports[1 - holder])["scans_total"] > s0, 10)
        finally:
            procs[holder].send_signal(signal.SIGCONT)
        wait_for("the thawed gateway to see it lost the lease",
                 lambda: holders() == [1 if i != holder else 0 for i in range(2)], 15)
    finally:
        g2.close()


def test_admin_status(c):
    p = subprocess.run([os.path.join(BIN, "cairn-admin"), "--nodes",
                        ",".join(n.endpoint for n in c.nodes), "lifecycle", "status"],
                       capture_output=True, timeout=30, env=admin_env())
    out = p.stdout.decode()
    check(p.returncode == 0, "cairn-admin lifecycle status: %d %s %s" % (p.returncode, out,
                                                                          p.stderr.decode()))
    for field in ("holder", "lease_until_us", "last_start_us", "last_end_us", "next_due_us",
                  "total_expired", "total_aborted", "scans"):
        check(re.search(r"^\s+%s\s" % field, out, re.M), "%s in %s" % (field, out))
    m = re.search(r"^\s+total_expired\s+(\d+)", out, re.M)
    check(int(m.group(1)) >= 3 + 1 + 20, "expired so far: %s" % out)
    p = subprocess.run([os.path.join(BIN, "cairn-admin"), "--nodes",
                        ",".join(n.endpoint for n in c.nodes), "lifecycle"],
                       capture_output=True, timeout=30, env=admin_env())
    check(p.returncode == 2, "lifecycle without status is a usage error")


def test_node_down(c):
    """With a node stopped, expiry goes on at the quorums (2 of 3) and the
    chunks of a large object still go from the nodes that are up."""
    s3 = c.boto(signature_version="s3v4")
    b = "lc-down"
    s3.create_bucket(Bucket=b)
    c.nodes[2].stop()
    for i in range(5):
        s3.put_object(Bucket=b, Key="gone/%d" % i, Body=b"x")
    s3.put_object(Bucket=b, Key="gone/big", Body=os.urandom(400 * K))
    s3.put_object(Bucket=b, Key="stays", Body=b"x")
    up = [n for n in c.nodes if n.proc is not None]
    prefix = b"c/" + b.encode() + b"/gone/big\x00"
    saved, c.nodes = c.nodes, up
    try:
        check(len(live_keys(c, prefix)) >= 4, "chunks stored on the up nodes")
        s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
            rule("gone", {"Prefix": "gone/"})]})
        wait_for("expiry with a node down", lambda: keys_of(s3, b) == ["stays"], 40)
        wait_for("the big object's chunks to go from the up nodes",
                 lambda: live_keys(c, prefix) == [], 20)
    finally:
        c.nodes = saved


if __name__ == "__main__":
    run_tests([test_configuration, test_expire_prefix_tags_disabled, test_large_object,
               test_multipart_abort, test_two_gateways, test_admin_status, test_node_down],
              cluster_kw={"settings": SETTINGS, "node_settings": NODE_SETTINGS})
