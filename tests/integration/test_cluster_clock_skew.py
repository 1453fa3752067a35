"""Newest-write order does not depend on the gateways' clocks agreeing
(common/hlc.c, docs/cluster.md "Version order"). Two gateways over the same
three nodes; gateway B's clock runs 10 s behind (the test-only environment
variable CAIRN_TEST_CLOCK_OFFSET_US=-10000000). With wall-clock timestamps
B's writes would be stamped 10 s before A's and lose to them; with the
hybrid logical clock a write through B that follows what B has read is
stamped after it:

- PUT through A, then an overwrite of the same key through B right after:
  B's body is served (through either gateway), and its record's ts on every
  node is above A's;
- GET through B, then PUT through B: B's write wins;
- DELETE through B right after a PUT through A: the key is gone;
- CreateBucket through A, DeleteBucket through B: the bucket is gone (a
  delete that no per-key rule stamped after the bucket record before);
- after B has read, even a brand-new key written through B is stamped after
  the newest timestamp B read, not 10 s in the past."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3util  # noqa: E402
from cluster_util import cluster, storage_key, versions  # noqa: E402
from snclient import free_port  # noqa: E402

SKEW_US = -10 * 1000000


def check(cond, what):
    if not cond:
        raise AssertionError(what)


class SecondGateway:
    """Another cairn-gateway over the cluster's nodes, with its own port and
    environment."""

    def __init__(self, cl, env):
        self.tmp = tempfile.mkdtemp(prefix="cairn-gw2-")
        self.port = free_port()
        settings = dict(cl.settings)
        settings["http.port"] = self.port
        cfg = os.path.join(self.tmp, "gateway.conf")
        with open(cfg, "w") as f:
            for k, v in settings.items():
                f.write("%s = %s\n" % (k, v))
        self.log_path = os.path.join(self.tmp, "gateway.log")
        self.log = open(self.log_path, "ab")
        e = dict(os.environ)
        e.update(env)
        self.proc = subprocess.Popen([cl.bin, "--config", cfg], stdout=self.log,
                                     stderr=self.log, env=e)
        self.url = "http://127.0.0.1:%d" % self.port
        self.raw = s3util.Cluster.raw.__get__(self)
        deadline = time.monotonic() + 30
        while True:
            check(self.proc.poll() is None, "gateway B exited:\n" + self.log_text())
            try:
                if self.raw(b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\n"
                            b"Connection: close\r\n\r\n").startswith(b"HTTP/1.1 200"):
                    break
            except OSError:
                pass
            check(time.monotonic() < deadline, "gateway B did not come up")
            time.sleep(0.05)

    def boto(self):
        return s3util.Cluster.boto(self)

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def close(self):
        self.proc.terminate()
        try:
            rc = self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return rc


def body(s3, bucket, key):
    return s3.get_object(Bucket=bucket, Key=key)["Body"].read()


def newest_ts(cl, bucket, key):
    vs = [v for v in versions(cl, storage_key(bucket, key)) if v is not None]
    return max(v[1] for v in vs), vs


def main():
    with cluster(nodes=3) as cl:
        gb = SecondGateway(cl, {"CAIRN_TEST_CLOCK_OFFSET_US": str(SKEW_US)})
        try:
            a, b = cl.boto(), gb.boto()
            a.create_bucket(Bucket="skew")

            # 1. overwrite through B right after a PUT through A
            for i in range(5):
                key = "over/%d" % i
                a.put_object(Bucket="skew", Key=key, Body=b"from A %d" % i)
                ts_a, _ = newest_ts(cl, "skew", key)
                b.put_object(Bucket="skew", Key=key, Body=b"from B %d" % i)
                check(body(a, "skew", key) == b"from B %d" % i, "A serves B's later write")
                check(body(b, "skew", key) == b"from B %d" % i, "B serves B's later write")
                ts_b, vs = newest_ts(cl, "skew", key)
                check(ts_b > ts_a, "B's record is stamped after A's: %d vs %d" % (ts_b, ts_a))
                # W = 2 acked the PUT; the third replica's write may still be
                # on its way, but once there it wins there too
                deadline = time.monotonic() + 10
                while not all(v[1] == ts_b for v in vs):
                    check(time.monotonic() < deadline, "every replica has B's write: %r" % vs)
                    time.sleep(0.05)
                    ts_b, vs = newest_ts(cl, "skew", key)
                # B's stamp follows A's, not B's own clock 10 s behind
                check(ts_b - ts_a < 5 * 1000000, "a logical step, not B's clock: %d" %
                      (ts_b - ts_a))

            # 2. read through B, then overwrite through B
            a.put_object(Bucket="skew", Key="rw", Body=b"A first")
            check(body(b, "skew", "rw") == b"A first", "B reads A's write")
            b.put_object(Bucket="skew", Key="rw", Body=b"B after reading")
            check(body(a, "skew", "rw") == b"B after reading", "B's write after its read wins")

            # 3. DELETE through B right after a PUT through A
            a.put_object(Bucket="skew", Key="del", Body=b"A")
            b.delete_object(Bucket="skew", Key="del")
            code = s3util.error_code(a.get_object, Bucket="skew", Key="del")[0]
            check(code == "NoSuchKey", "B's delete after A's PUT wins: %r" % code)

            # 4. a new key through B is stamped after what B has read, not
            # 10 s behind (the clock moved with the reads)
            ts_seen, _ = newest_ts(cl, "skew", "rw")
            b.put_object(Bucket="skew", Key="fresh", Body=b"new")
            ts_new, _ = newest_ts(cl, "skew", "fresh")
            check(ts_new > ts_seen, "fresh key after the newest read: %d vs %d" %
                  (ts_new, ts_seen))

            # 5. CreateBucket through A, DeleteBucket through B
            a.create_bucket(Bucket="skew-gone")
            b.delete_bucket(Bucket="skew-gone")
            code = s3util.error_code(a.head_bucket, Bucket="skew-gone")[1]
            check(code == 404, "bucket deleted through B: %r" % code)
            a.create_bucket(Bucket="skew-gone")
            a.put_object(Bucket="skew-gone", Key="k", Body=b"again")
            check(body(b, "skew-gone", "k") == b"again", "the bucket made again")
        finally:
            rc = gb.close()
        check(rc == 0, "gateway B exit %r" % rc)
    print("test_cluster_clock_skew: ok")


if __name__ == "__main__":
    main()
