"""A rolling upgrade from the previous release while clients keep working
(docs/operations.md, "Upgrading"): the previous release's cairn-storage and
cairn-gateway are built from git (the commit in tests/upgrade/PREVIOUS, kept
between runs under the build directory), a cluster of three of its nodes and
one of its gateways takes objects (small ones and a chunked large object),
then - while a client thread writes and reads through the gateways all along
- each node in turn is stopped and started again as this tree's binary on
the same data directory and port, a new gateway joins next to the old one
(both serve every object, each reads what the other wrote), and the old
gateway stops. Checked: no client operation fails, no acknowledged write is
lost, every object reads back byte-identical from either gateway, and the
upgraded nodes read the records the previous release wrote. A large object
written by the new gateway while old nodes remain (its parent record in the
version-2 form on them, with osize on the new one: docs/large-objects.md)
and one written once every node is new both read back from the old
gateway; a bucket the new gateway creates then (its owner a field on the
new node, the etag on old ones) is listed by both gateways.

The order is the documented one: nodes first, then gateways (a new gateway
may use protocol additions an old node does not know, such as the
conditional-write leases; an old gateway only sends what every newer node
accepts)."""
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import ACCESS_KEY, SECRET_KEY, check  # noqa: E402
from snclient import AUTH, Client, free_port, gateway_settings, test_keys  # noqa: E402

import boto3  # noqa: E402
from botocore.config import Config  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", ".."))
NEW_BIN = os.path.abspath(os.environ.get("CAIRN_BIN", "build/bin"))


def previous_commit():
    with open(os.path.join(SRC, "tests", "upgrade", "PREVIOUS")) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                return line
    raise AssertionError("tests/upgrade/PREVIOUS names no commit")


def build_previous():
    """The previous release's binaries, built once from git into the build
    directory (next to CAIRN_BIN) and reused."""
    commit = previous_commit()
    have = subprocess.run(["git", "-C", SRC, "cat-file", "-e", commit + "^{commit}"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    if not have:
        # a shallow clone: ctest shows the test as skipped (SKIP_RETURN_CODE), not passed
        print("SKIPPED: the previous release %s is not in this clone's history "
              "(clone without --depth to run the upgrade test)" % commit[:12], flush=True)
        sys.exit(77)
    root = os.path.join(os.path.dirname(NEW_BIN), "upgrade-prev-" + commit[:12])
    bindir = os.path.join(root, "build", "bin")
    if all(os.path.exists(os.path.join(bindir, b)) for b in ("cairn-storage", "cairn-gateway")):
        return bindir
    src = root + ".src"
    shutil.rmtree(src, ignore_errors=True)
    os.makedirs(src)
    t0 = time.monotonic()
    archive = subprocess.run(["git", "-C", SRC, "archive", commit], stdout=subprocess.PIPE,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    log = open(root + ".log", "wb")
    subprocess.run(["cmake", "-S", src, "-B", os.path.join(src, "build"),
                    "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], stdout=log, stderr=log, check=True)
    subprocess.run(["cmake", "--build", os.path.join(src, "build"), "-j2", "--target",
                    "cairn-storage", "cairn-gateway"], stdout=log, stderr=log, check=True)
    shutil.rmtree(root, ignore_errors=True)
    os.rename(src, root)
    print("built the previous release %s in %.0f s" % (commit[:12], time.monotonic() - t0),
          flush=True)
    return bindir


class Proc:
    """One daemon with a fixed port and config, restartable as another binary."""

    def __init__(self, tmp, name, settings):
        self.tmp, self.name, self.settings = tmp, name, settings
        self.proc = None
        self.log_path = os.path.join(tmp, name + ".log")

    def start(self, bindir, exe):
        cfg = os.path.join(self.tmp, self.name + ".conf")
        with open(cfg, "w") as f:
            for k, v in self.settings.items():
                f.write("%s = %s\n" % (k, v))
        log = open(self.log_path, "ab")
        log.write(("---- %s %s\n" % (bindir, exe)).encode())
        log.flush()
        self.proc = subprocess.Popen([os.path.join(bindir, exe), "--config", cfg], stdout=log,
                                     stderr=log)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")[-4000:]


class Node(Proc):
    def __init__(self, tmp, i):
        self.port = free_port()
        self.endpoint = "tcp://127.0.0.1:%d" % self.port
        settings = {"node_id": "up-%d" % i, "data_dir": os.path.join(tmp, "data%d" % i),
                    "io_threads": 2, "log_level": "info", "listen": self.endpoint}
        if AUTH == "curve":
            keys = test_keys()
            allowed = os.path.join(tmp, "allowed%d" % i)
            with open(allowed, "w") as f:
                f.write("%s test-client\n" % keys.client.public.decode())
            settings.update({"auth": "curve",
                             "security.curve_secret_key_file": keys.node.key_file,
                             "security.curve_allowed_clients_file": allowed})
        super().__init__(tmp, "node%d" % i, settings)

    def start(self, bindir):
        super().start(bindir, "cairn-storage")
        c = Client(self.endpoint, timeout_ms=500)
        deadline = time.monotonic() + 60
        try:
            while True:
                check(self.proc.poll() is None, "%s exited:\n%s" % (self.name, self.log_text()))
                try:
                    if c.call("PING").st == 0:
                        return
                except TimeoutError:
                    c.close()
                    c = Client(self.endpoint, timeout_ms=500)
                check(time.monotonic() < deadline, "%s does not answer" % self.name)
        finally:
            c.close()


class Gateway(Proc):
    def __init__(self, tmp, name, nodes, creds):
        self.port = free_port()
        settings = {"http.listen": "127.0.0.1", "http.port": self.port, "http.threads": 2,
                    "storage.nodes": ",".join(n.endpoint for n in nodes),
                    "storage.request_timeout": "2s", "s3.credentials_file": creds,
                    "log.level": "info", "large_object.threshold_of_chunk_len": "1M",
                    "large_object.chunked_obj_len": "1M"}
        settings.update(gateway_settings())
        super().__init__(tmp, name, settings)

    def start(self, bindir):
        super().start(bindir, "cairn-gateway")
        s3 = self.s3()
        deadline = time.monotonic() + 30
        while True:
            check(self.proc.poll() is None, "%s exited:\n%s" % (self.name, self.log_text()))
            try:
                s3.list_buckets()
                return
            except Exception:
                check(time.monotonic() < deadline, "%s does not answer" % self.name)
                time.sleep(0.2)

    def s3(self):
        return boto3.client("s3", endpoint_url="http://127.0.0.1:%d" % self.port,
                            aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
                            region_name="us-east-1",
                            config=Config(retries={"max_attempts": 1}, connect_timeout=10,
                                          read_timeout=60, s3={"addressing_style": "path"}))


BUCKET = "upgrade"


class Load(threading.Thread):
    """Writes and reads small objects through the gateways it is given, one
    operation at a time, recording every acknowledged write and failure."""

    def __init__(self, gateways):
        super().__init__(daemon=True)
        self.gateways = list(gateways)
        self.acked = {}     # key -> md5 of what was acknowledged last
        self.failures = []
        self.ops = 0
        self.stopping = threading.Event()
        self.lock = threading.Lock()

    def set_gateways(self, gws):
        with self.lock:
            self.gateways = list(gws)

    def run(self):
        rnd = random.Random(7)
        i = 0
        while not self.stopping.is_set():
            with self.lock:
                gw = self.gateways[i % len(self.gateways)]
            s3 = gw.s3()
            key = "load/%04d" % rnd.randrange(200)
            try:
                if key in self.acked and rnd.random() < 0.5:
                    got = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
                    if hashlib.md5(got).hexdigest() != self.acked[key]:
                        self.failures.append("%s via %s: wrong bytes" % (key, gw.name))
                else:
                    body = os.urandom(rnd.randrange(1, 64 << 10))
                    s3.put_object(Bucket=BUCKET, Key=key, Body=body)
                    self.acked[key] = hashlib.md5(body).hexdigest()
            except Exception as e:  # every failure is reported, none is retried
                self.failures.append("%s via %s: %r" % (key, gw.name, e))
            self.ops += 1
            i += 1


def verify(s3, objects, what):
    for key, digest in sorted(objects.items()):
        got = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
        check(hashlib.md5(got).hexdigest() == digest, "%s: %s reads back identical" % (what, key))


def main():
    old_bin = build_previous()
    tmp = tempfile.mkdtemp(prefix="cairn-upgrade-")
    creds = os.path.join(tmp, "credentials")
    with open(creds, "w") as f:
        f.write("%s %s cairn-dev cairn\n" % (ACCESS_KEY, SECRET_KEY))
    nodes = [Node(tmp, i) for i in range(3)]
    old_gw = Gateway(tmp, "gateway-old", nodes, creds)
    new_gw = Gateway(tmp, "gateway-new", nodes, creds)
    load = None
    try:
        for n in nodes:
            n.start(old_bin)
        old_gw.start(old_bin)
        s3 = old_gw.s3()
        s3.create_bucket(Bucket=BUCKET)
        objects = {}
        for i in range(20):
            body = os.urandom(1000 + 97 * i)
            s3.put_object(Bucket=BUCKET, Key="before/%02d" % i, Body=body)
            objects["before/%02d" % i] = hashlib.md5(body).hexdigest()
        big = os.urandom(6 << 20)   # six chunks of 1 MiB, spread over the nodes
        s3.put_object(Bucket=BUCKET, Key="before/large", Body=big)
        objects["before/large"] = hashlib.md5(big).hexdigest()
        print("ok   the previous release holds %d objects" % len(objects), flush=True)

        load = Load([old_gw])
        load.start()
        for i, n in enumerate(nodes):
            time.sleep(1.0)
            n.stop()
            time.sleep(0.5)   # the client keeps going against two nodes
            n.start(NEW_BIN)
            print("ok   node %d upgraded (%d client operations so far)" % (i, load.ops),
                  flush=True)
            if i == 0:
                # a new gateway next to the old one while old nodes remain
                new_gw.start(NEW_BIN)
                load.set_gateways([old_gw, new_gw])
                # a large object from the new gateway while two nodes are old:
                # its parent record goes to an old node in the version-2 form
                # (osize folded into the etag), to a new one with osize
                body = os.urandom(5 << 20)
                new_gw.s3().put_object(Bucket=BUCKET, Key="mixed/large", Body=body)
                objects["mixed/large"] = hashlib.md5(body).hexdigest()
                verify(old_gw.s3(), {"mixed/large": objects["mixed/large"]},
                       "old gateway reads the new one's large object, nodes mixed")
                verify(new_gw.s3(), {"mixed/large": objects["mixed/large"]},
                       "new gateway reads its large object, nodes mixed")
                for gw in (old_gw, new_gw):
                    h = gw.s3().head_object(Bucket=BUCKET, Key="mixed/large")
                    check(h["ContentLength"] == len(body), "%s: HEAD size of the mixed "
                          "large object" % gw.name)
                # a bucket the new gateway creates: its owner is the record's
                # owner field on the new node, its etag on the old ones, and
                # either gateway lists it (ListBuckets filters on the owner)
                new_gw.s3().create_bucket(Bucket="upgrade-mixed")
                for gw in (old_gw, new_gw):
                    names = {b["Name"] for b in gw.s3().list_buckets()["Buckets"]}
                    check({"upgrade", "upgrade-mixed"} <= names,
                          "%s lists both buckets: %r" % (gw.name, names))
                owners = []
                for j, nd in enumerate(nodes):
                    c = Client(nd.endpoint, timeout_ms=5000)
                    try:
                        r = c.call("HEAD", v=3 if j == 0 else 1, key=b"b/upgrade-mixed")
                    finally:
                        c.close()
                    check(r.status == "OK", "node %d holds the bucket record: %r" % (j, r))
                    owners.append(r["owner"] if j == 0 else r["etag"])
                    check(j > 0 or r["etag"] == b"", "the new node's record has no etag: %r" % r)
                check(owners[0] != b"" and len(set(owners)) == 1,
                      "one owner in both forms: %r" % owners)
                # on the records themselves: the new node holds osize, the old
                # ones the folded etag (a version-3 PUT they would refuse)
                md5 = objects["mixed/large"].encode()
                for j, nd in enumerate(nodes):
                    c = Client(nd.endpoint, timeout_ms=5000)
                    try:
                        r = c.call("HEAD", v=3 if j == 0 else 1, key=b"o/upgrade/mixed/large")
                    finally:
                        c.close()
                    check(r.status == "OK", "node %d holds the parent: %r" % (j, r))
                    if j == 0:
                        check(r["osize"] == len(body) and r["etag"] == md5,
                              "the new node stores osize: %r" % r)
                    else:
                        check("osize" not in r.h and r["etag"] == md5 + b" %d" % len(body),
                              "old node %d stores the folded etag: %r" % (j, r))
        time.sleep(2.0)
        verify(new_gw.s3(), objects, "new gateway, upgraded nodes")
        verify(old_gw.s3(), objects, "old gateway, upgraded nodes")
        body = os.urandom(3 << 20)
        new_gw.s3().put_object(Bucket=BUCKET, Key="after/large", Body=body)
        objects["after/large"] = hashlib.md5(body).hexdigest()
        verify(old_gw.s3(), {"after/large": objects["after/large"]}, "old reads new's write")
        load.set_gateways([new_gw])
        time.sleep(0.5)
        old_gw.stop()
        time.sleep(1.0)
        load.stopping.set()
        load.join(timeout=120)
        check(load.ops > 20, "the client kept working through the upgrade: %d ops" % load.ops)
        check(not load.failures, "no client operation failed: %s" % load.failures[:5])
        verify(new_gw.s3(), objects, "after the upgrade")
        verify(new_gw.s3(), load.acked, "every acknowledged write of the client")
        keys = set()
        for page in new_gw.s3().get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
            keys.update(o["Key"] for o in page.get("Contents", []))
        check(set(objects) | set(load.acked) == keys, "the listing holds exactly what was written")
        names = {b["Name"] for b in new_gw.s3().list_buckets()["Buckets"]}
        check(names == {"upgrade", "upgrade-mixed"}, "ListBuckets after the upgrade: the old "
              "release's bucket and the mixed one: %r" % names)
        sizes = {}
        for page in new_gw.s3().get_paginator("list_objects_v2").paginate(Bucket=BUCKET,
                                                                           Prefix="mixed/"):
            sizes.update((o["Key"], o["Size"]) for o in page.get("Contents", []))
        check(sizes == {"mixed/large": 5 << 20}, "the listing's size of a large object "
              "written while nodes were mixed: %r" % sizes)
        print("ok   rolling upgrade: %d client operations, 0 failed, %d objects identical"
              % (load.ops, len(keys)), flush=True)
    except BaseException:
        for p in nodes + [old_gw, new_gw]:
            sys.stderr.write("==== %s\n%s\n" % (p.name, p.log_text() if os.path.exists(
                p.log_path) else "(no log)"))
        raise
    finally:
        if load is not None:
            load.stopping.set()
        for p in [old_gw, new_gw] + nodes:
            p.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
