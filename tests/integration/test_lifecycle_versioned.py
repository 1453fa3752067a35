"""Lifecycle rules in versioned buckets on a real cluster, with a 2-second
"day" (lifecycle.day_length) and a 1-second scan interval, as
test_gateway_lifecycle.py: NoncurrentVersionExpiration removes noncurrent
versions (their records leave the nodes) and keeps those NewerNoncurrentVersions
names and those not yet due; Expiration on a current version writes a delete
marker and deletes no data (also over an object from before versioning,
kept as its null version); a Suspended bucket's expiry replaces the null
version with a null delete marker; ExpiredObjectDeleteMarker removes a
delete marker left alone; Expiration + NoncurrentVersionExpiration empty a
key entirely; a large object's old version expires and its chunks go from
the nodes while the current one's stay and read back byte-identical;
`cairn-admin lifecycle status` counts the new actions; the lease holder
killed (-9) in the middle of removing versions is taken over and the work
finished, nothing current lost."""
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import check, error_code, run_tests  # noqa: E402
from snclient import admin_env  # noqa: E402
import test_gateway_lifecycle as lct  # noqa: E402  (its helpers and settings)

K = 1024
BIN = os.environ.get("CAIRN_BIN", "build/bin")
SETTINGS = dict(lct.SETTINGS)
METRICS_PORT = SETTINGS["metrics.port"]
NODE_SETTINGS = lct.NODE_SETTINGS
rule, wait_for, live_keys = lct.rule, lct.wait_for, lct.live_keys


def lc_metrics():
    import urllib.request
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % METRICS_PORT, timeout=5) as r:
        text = r.read().decode()
    out = {}
    for name in ("noncurrent_expired_total", "markers_added_total", "markers_removed_total",
                 "expired_total"):
        m = re.search(r"^cairn_gateway_lifecycle_%s (\d+)" % name, text, re.M)
        out[name] = int(m.group(1)) if m else None
    return out


def versions(s3, b, prefix=""):
    """[(key, version id, is delete marker, is latest)] of ListObjectVersions."""
    r = s3.list_object_versions(Bucket=b, Prefix=prefix)
    out = [(v["Key"], v["VersionId"], False, v["IsLatest"]) for v in r.get("Versions", [])]
    out += [(d["Key"], d["VersionId"], True, d["IsLatest"]) for d in r.get("DeleteMarkers", [])]
    check(not r.get("IsTruncated"), "one page")
    return sorted(out)


def vrecords(c, b, key):
    """Live version records of key on the nodes: {version suffix: replicas}."""
    prefix = b"v/" + b.encode() + b"/" + key.encode() + b"\x00"
    out = {}
    for _, k in live_keys(c, prefix):
        suf = k[len(prefix):]
        out[suf] = out.get(suf, 0) + 1
    return out


def versioned_bucket(s3, b):
    s3.create_bucket(Bucket=b)
    s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Enabled"})


def put_versions(s3, b, key, n, size=100):
    """n versions of key; returns [(version id, body)] oldest first."""
    out = []
    for i in range(n):
        body = os.urandom(size)
        vid = s3.put_object(Bucket=b, Key=key, Body=body)["VersionId"]
        out.append((vid, body))
    return out


def read_version(s3, b, key, vid):
    return s3.get_object(Bucket=b, Key=key, VersionId=vid)["Body"].read()


def test_noncurrent(c):
    s3 = c.boto(signature_version="s3v4")
    b = "lcv-nc"
    versioned_bucket(s3, b)
    nc = put_versions(s3, b, "nc/a", 3)
    nn = put_versions(s3, b, "nn/a", 4)
    slow = put_versions(s3, b, "slow/a", 2)
    tagged = put_versions(s3, b, "tag/a", 1)
    s3.put_object_tagging(Bucket=b, Key="tag/a", VersionId=tagged[0][0],
                          Tagging={"TagSet": [{"Key": "drop", "Value": "yes"}]})
    tagged += put_versions(s3, b, "tag/a", 1)
    untagged = put_versions(s3, b, "tag/b", 2)
    check(len(vrecords(c, b, "nc/a")) == 3 and sum(vrecords(c, b, "nc/a").values()) == 9,
          "3 versions on 3 replicas: %r" % vrecords(c, b, "nc/a"))
    before = lc_metrics()
    s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
        rule("nc", {"Prefix": "nc/"}, days=None,
             NoncurrentVersionExpiration={"NoncurrentDays": 1}),
        rule("nn", {"Prefix": "nn/"}, days=None,
             NoncurrentVersionExpiration={"NoncurrentDays": 1, "NewerNoncurrentVersions": 1}),
        rule("slow", {"Prefix": "slow/"}, days=None,
             NoncurrentVersionExpiration={"NoncurrentDays": 1000}),
        rule("tag", {"And": {"Prefix": "tag/", "Tags": [{"Key": "drop", "Value": "yes"}]}},
             days=None, NoncurrentVersionExpiration={"NoncurrentDays": 1}),
    ]})
    want_nc = [("nc/a", nc[2][0], False, True)]
    want_nn = [("nn/a", nn[3][0], False, True), ("nn/a", nn[2][0], False, False)]
    wait_for("the noncurrent versions to expire", lambda: (
        versions(s3, b, "nc/") == want_nc and versions(s3, b, "nn/") == sorted(want_nn) and
        versions(s3, b, "tag/a") == [("tag/a", tagged[1][0], False, True)]), 40)
    # their records left every node; the kept ones are on all replicas
    wait_for("the removed versions' records to leave the nodes",
             lambda: list(vrecords(c, b, "nc/a").values()) == [3], 10)
    check(sorted(vrecords(c, b, "nn/a").values()) == [3, 3], "nn/a: 2 versions kept")
    time.sleep(4)   # two more days and several scans
    check(versions(s3, b, "nc/") == want_nc, "nc/a stays at its current version")
    check(versions(s3, b, "nn/") == sorted(want_nn), "NewerNoncurrentVersions 1 kept one")
    check(len(versions(s3, b, "slow/")) == 2, "versions not yet due survive")
    check(len(versions(s3, b, "tag/b")) == 2, "untagged noncurrent versions survive")
    for key, vs in (("nc/a", nc[2:]), ("nn/a", nn[2:]), ("slow/a", slow), ("tag/b", untagged)):
        for vid, body in vs:
            check(read_version(s3, b, key, vid) == body, "%s %s reads back" % (key, vid))
    check(error_code(s3.get_object, Bucket=b, Key="nc/a", VersionId=nc[0][0]) ==
          ("NoSuchVersion", 404), "an expired version is gone")
    after = lc_metrics()
    check(after["noncurrent_expired_total"] - before["noncurrent_expired_total"] == 2 + 2 + 1,
          "5 noncurrent versions expired: %r %r" % (before, after))
    check(after["markers_added_total"] == before["markers_added_total"], "no marker added")


def test_current_gets_marker(c):
    s3 = c.boto(signature_version="s3v4")
    b = "lcv-cur"
    s3.create_bucket(Bucket=b)
    old = os.urandom(300)
    s3.put_object(Bucket=b, Key="exp/old", Body=old)   # before versioning: the null version
    s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Enabled"})
    vs = put_versions(s3, b, "exp/a", 2)
    stay = put_versions(s3, b, "stay/a", 1)
    before = lc_metrics()
    s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
        rule("exp", {"Prefix": "exp/"})]})
    wait_for("the current versions to be hidden", lambda: lct.keys_of(s3, b) == ["stay/a"], 40)
    got = versions(s3, b)
    markers = [g for g in got if g[2]]
    check(sorted((m[0], m[3]) for m in markers) == [("exp/a", True), ("exp/old", True)],
          "a delete marker on top of each: %r" % got)
    check(("exp/a", vs[0][0], False, False) in got and ("exp/a", vs[1][0], False, False) in got
          and ("exp/old", "null", False, False) in got, "every version kept: %r" % got)
    # no data deleted: each version reads back by id
    for vid, body in vs:
        check(read_version(s3, b, "exp/a", vid) == body, "exp/a %s reads back" % vid)
    check(read_version(s3, b, "exp/old", "null") == old, "the null version reads back")
    check(read_version(s3, b, "stay/a", stay[0][0]) == stay[0][1], "stay/a kept")
    r = error_code(s3.head_object, Bucket=b, Key="exp/a")
    check(r == ("404", 404), "the latest is a delete marker: %r" % (r,))
    time.sleep(4)   # more scans: a delete marker is not expired again (no action)
    check(len(versions(s3, b)) == len(got), "nothing more happened: %r" % versions(s3, b))
    after = lc_metrics()
    check(after["markers_added_total"] - before["markers_added_total"] == 2, "2 markers")
    check(after["expired_total"] == before["expired_total"], "nothing deleted")


def test_suspended(c):
    s3 = c.boto(signature_version="s3v4")
    b = "lcv-susp"
    versioned_bucket(s3, b)
    v1 = put_versions(s3, b, "s/a", 1)
    s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Suspended"})
    body = os.urandom(400 * K)   # a large null version: its chunks go with it
    s3.put_object(Bucket=b, Key="s/a", Body=body)
    chunks = b"c/" + b.encode() + b"/s/a\x00"
    check(len(live_keys(c, chunks)) >= 4, "the null version's chunks stored")
    s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
        rule("s", {"Prefix": "s/"})]})

    def settled():
        got = versions(s3, b)
        return len(got) == 2 and ("s/a", v1[0][0], False, False) in got and \
            ("s/a", "null", True, True) in got
    wait_for("a null delete marker to replace the null version", settled, 40)
    check(read_version(s3, b, "s/a", v1[0][0]) == v1[0][1], "the Enabled-era version kept")
    check(sorted(vrecords(c, b, "s/a").values()) == [3, 3], "2 version records: %r" %
          vrecords(c, b, "s/a"))
    wait_for("the null version's chunks to go", lambda: live_keys(c, chunks) == [], 20)


def test_lone_marker(c):
    s3 = c.boto(signature_version="s3v4")
    b = "lcv-dm"
    versioned_bucket(s3, b)
    a = put_versions(s3, b, "dm/a", 1)
    s3.delete_object(Bucket=b, Key="dm/a")
    s3.delete_object(Bucket=b, Key="dm/a", VersionId=a[0][0])   # the marker is alone
    put_versions(s3, b, "dm/b", 1)
    s3.delete_object(Bucket=b, Key="dm/b")                      # a marker over a version
    s3.delete_object(Bucket=b, Key="other/c")                   # alone, outside the rule
    check(len(vrecords(c, b, "dm/a")) == 1, "dm/a: its marker alone")
    before = lc_metrics()
    s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
        {"ID": "dm", "Filter": {"Prefix": "dm/"}, "Status": "Enabled",
         "Expiration": {"ExpiredObjectDeleteMarker": True}}]})
    wait_for("the lone marker to go", lambda: versions(s3, b, "dm/a") == [], 40)
    wait_for("its record to leave the nodes", lambda: vrecords(c, b, "dm/a") == {}, 10)
    time.sleep(3)
    check(len(versions(s3, b, "dm/b")) == 2, "a marker over a version stays")
    check(len(versions(s3, b, "other/")) == 1, "a lone marker outside the rule stays")
    after = lc_metrics()
    check(after["markers_removed_total"] - before["markers_removed_total"] == 1, "1 removed")


def test_key_emptied(c):
    """Expiration and NoncurrentVersionExpiration together: the current
    version is hidden, the hidden one expires, then the marker left alone
    goes (Expiration Days cleans expired markers too, as S3 does)."""
    s3 = c.boto(signature_version="s3v4")
    b = "lcv-all"
    versioned_bucket(s3, b)
    put_versions(s3, b, "all/a", 2)
    s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
        rule("all", {"Prefix": "all/"},
             NoncurrentVersionExpiration={"NoncurrentDays": 1})]})
    wait_for("every version and the marker to go", lambda: versions(s3, b) == [], 60)
    wait_for("no version record left on the nodes", lambda: vrecords(c, b, "all/a") == {}, 10)
    s3.delete_bucket_lifecycle(Bucket=b)
    s3.delete_bucket(Bucket=b)   # empty of versions: the bucket can go


def chunk_vers(c, b, key):
    """{chunk ver: live chunk records} of key's chunks on the nodes."""
    prefix = b"c/" + b.encode() + b"/" + key.encode() + b"\x00"
    out = {}
    for _, k in live_keys(c, prefix):
        ver = k[len(prefix):].split(b"/")[0]
        out[ver] = out.get(ver, 0) + 1
    return out


def live_bytes(c):
    """The bytes of live records on all nodes (their STATS)."""
    total = 0
    for n in c.nodes:
        cl = n.client()
        total += cl.stats()["bytes_live"]
        cl.close()
    return total


def test_large_version(c):
    s3 = c.boto(signature_version="s3v4")
    b = "lcv-large"
    versioned_bucket(s3, b)
    old = put_versions(s3, b, "big/obj", 1, 700 * K)   # 6 chunks of 128 KiB
    vers0 = chunk_vers(c, b, "big/obj")
    cur = put_versions(s3, b, "big/obj", 1, 700 * K)
    vers1 = chunk_vers(c, b, "big/obj")
    check(len(vers0) == 1 and len(vers1) == 2, "one chunk set per version: %r" % vers1)
    new_ver = [v for v in vers1 if v not in vers0][0]
    before = live_bytes(c)
    s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
        rule("big", {"Prefix": "big/"}, days=None,
             NoncurrentVersionExpiration={"NoncurrentDays": 1})]})
    wait_for("the old version to expire",
             lambda: versions(s3, b) == [("big/obj", cur[0][0], False, True)], 40)
    wait_for("its chunks to go from the nodes",
             lambda: list(chunk_vers(c, b, "big/obj").keys()) == [new_ver], 20)
    check(chunk_vers(c, b, "big/obj")[new_ver] == vers1[new_ver], "current chunks all kept")
    freed = before - live_bytes(c)
    check(freed >= 2 * 700 * K, "the old version's bytes left the nodes: %d freed" % freed)
    print("   live bytes on the nodes: %d before, %d freed (700 KiB x 3 replicas expected)"
          % (before, freed))
    check(s3.get_object(Bucket=b, Key="big/obj")["Body"].read() == cur[0][1],
          "the current version reads back byte-identical")
    check(read_version(s3, b, "big/obj", cur[0][0]) == cur[0][1], "and by its id")
    check(error_code(s3.get_object, Bucket=b, Key="big/obj", VersionId=old[0][0]) ==
          ("NoSuchVersion", 404), "the old version is gone")


def restart(c, **settings):
    """The gateway again with settings changed (None: back to the default)."""
    for k, v in settings.items():
        if v is None:
            c.settings.pop(k, None)
        else:
            c.settings[k] = v
    if c.proc.poll() is None:
        c.proc.terminate()
        c.proc.wait(30)
    c.log.close()
    c.start()


def test_holder_killed_mid_scan(c):
    """kill -9 of the lease holder while it removes noncurrent versions (10
    a second): a fresh gateway takes the lease over once it expires and
    finishes; every current version stays and reads back, every noncurrent
    one goes, no version record is left half done."""
    s3 = c.boto(signature_version="s3v4")
    b = "lcv-kill"
    versioned_bucket(s3, b)
    keys = ["k/%02d" % i for i in range(25)]
    cur = {k: put_versions(s3, b, k, 3)[-1] for k in keys}
    restart(c, **{"lifecycle.max_deletes_per_sec": 10})
    s3 = c.boto(signature_version="s3v4")
    s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": [
        rule("k", {"Prefix": "k/"}, days=None,
             NoncurrentVersionExpiration={"NoncurrentDays": 1})]})
    wait_for("the scan to be under way",
             lambda: (lc_metrics()["noncurrent_expired_total"] or 0) >= 8, 40)
    os.kill(c.proc.pid, signal.SIGKILL)
    c.proc.wait()
    restart(c, **{"lifecycle.max_deletes_per_sec": None})
    s3 = c.boto(signature_version="s3v4")
    want = sorted((k, cur[k][0], False, True) for k in keys)
    wait_for("the new holder to finish", lambda: versions(s3, b) == want, 60)
    for k in keys:
        check(read_version(s3, b, k, cur[k][0]) == cur[k][1], "%s current reads back" % k)
        check(s3.get_object(Bucket=b, Key=k)["Body"].read() == cur[k][1], "%s latest" % k)
    wait_for("one version record per key on the nodes", lambda: all(
        list(vrecords(c, b, k).values()) == [3] for k in keys), 10)


def test_admin_status(c):
    p = subprocess.run([os.path.join(BIN, "cairn-admin"), "--nodes",
                        ",".join(n.endpoint for n in c.nodes), "lifecycle", "status"],
                       capture_output=True, timeout=30, env=admin_env())
    out = p.stdout.decode()
    check(p.returncode == 0, "cairn-admin lifecycle status: %d %s" % (p.returncode, out))
    got = {}
    for field in ("total_noncurrent_expired", "total_markers_added", "total_markers_removed",
                  "noncurrent_expired", "markers_added", "markers_removed"):
        m = re.search(r"^\s+%s\s+(\d+)" % field, out, re.M)
        check(m, "%s in %s" % (field, out))
        got[field] = int(m.group(1))
    # noncurrent: 5 + 1 (suspended's? no) + 1 (all/) + 1 (big); markers added:
    # 2 + 1 (suspended) + 1 (all/); removed: 1 + 1 (all/)
    check(got["total_noncurrent_expired"] >= 7, "noncurrent so far: %s" % out)
    check(got["total_markers_added"] >= 4, "markers added so far: %s" % out)
    check(got["total_markers_removed"] >= 2, "markers removed so far: %s" % out)


if __name__ == "__main__":
    run_tests([test_noncurrent, test_current_gets_marker, test_suspended, test_lone_marker,
               test_key_emptied, test_large_version, test_admin_status,
               test_holder_killed_mid_scan],
              cluster_kw={"settings": SETTINGS, "node_settings": NODE_SETTINGS})
