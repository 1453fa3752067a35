"""Access keys kept in the cluster (docs/operations.md "Access keys"): two
gateways with one master key on three nodes. `cairn-admin key create`
makes a key that works on both gateways within the documented delay
(s3.keys_refresh + storage.request_timeout): a bucket it creates is its
account's, the other account's file key is refused there, and `key list`
shows it without its secret. A slow PUT signed by the key finishes while
the gateway swaps its key table (the request holds the table it
authenticated with: without that, the sanitizer build reports a
heap-use-after-free here). `key delete` makes both gateways refuse it
(InvalidAccessKeyId). A record whose bytes are changed on the nodes is
left out with a log line while the gateway keeps serving, and a gateway
with another master key accepts no cluster key (loudly) but still the
credentials file's keys."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "security"))
from s3util import Cluster, check, error_code  # noqa: E402
from snclient import admin_env, free_port  # noqa: E402

BIN = os.environ.get("CAIRN_BIN", "build/bin")
REFRESH_S = 0.5
REQUEST_TIMEOUT_S = 2
BOUND_S = REFRESH_S + REQUEST_TIMEOUT_S   # docs/operations.md: the documented delay
# the wait allowed in the test: the bound, with room for a loaded 2-vCPU CI
WAIT_S = 4 * BOUND_S + 5
OTHER_KEY = ("AKIAOTHERUSER0000000", "other-secret-key-0000000000000000000000")
ADMIN_KEY = ("AKIAOPSADMIN00000000", "ops-admin-secret-key-00000000000000000000")

KEYDIR = tempfile.mkdtemp(prefix="cairn-keys-")
MASTER = os.path.join(KEYDIR, "master.key")
WRONG = os.path.join(KEYDIR, "wrong.key")
with open(MASTER, "w") as f:
    f.write(os.urandom(32).hex() + "\n")
with open(WRONG, "w") as f:
    f.write(os.urandom(32).hex() + "\n")
os.chmod(MASTER, 0o600)
os.chmod(WRONG, 0o600)

SETTINGS = {
    "s3.master_key_file": MASTER,
    "s3.keys_refresh": "%dms" % int(REFRESH_S * 1000),
    "storage.request_timeout": "%ds" % REQUEST_TIMEOUT_S,
}


class OtherGateway:
    """Another cairn-gateway on the same nodes with the cluster's settings
    and some changed, on its own port."""

    def __init__(self, c, name, **changes):
        self.tmp = os.path.join(c.tmp, name)
        os.makedirs(self.tmp, exist_ok=True)
        self.port = free_port()
        settings = dict(c.settings, **{"http.port": self.port})
        settings.update(changes)
        self.metrics_port = settings.get("metrics.port")
        cfg = os.path.join(self.tmp, "gateway.conf")
        with open(cfg, "w") as f:
            for k, v in settings.items():
                f.write("%s = %s\n" % (k, v))
        self.log_path = os.path.join(self.tmp, "gateway.log")
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([c.bin, "--config", cfg], stdout=self.log,
                                     stderr=self.log)
        self.url = "http://127.0.0.1:%d" % self.port
        deadline = time.monotonic() + 30
        while not self._healthy():
            check(self.proc.poll() is None, "gateway %s exited: %s" % (name, self.log_text()))
            check(time.monotonic() < deadline, "gateway %s did not come up" % name)
            time.sleep(0.1)

    def _healthy(self):
        import urllib.request
        try:
            with urllib.request.urlopen(self.url + "/_cairn/health", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def boto(self, ak, sk):
        import boto3
        from botocore.config import Config
        return boto3.client("s3", endpoint_url=self.url, aws_access_key_id=ak,
                            aws_secret_access_key=sk, region_name="us-east-1",
                            config=Config(s3={"addressing_style": "path"},
                                          retries={"max_attempts": 1},
                                          signature_version="s3v4"))

    def close(self):
        rc = self.proc.poll()
        if rc is None:
            self.proc.terminate()
            rc = self.proc.wait(30)
        self.log.close()
        check(rc == 0, "gateway exited %r:\n%s" % (rc, self.log_text()[-4000:]))


def admin(c, *args, master=MASTER):
    cmd = [os.path.join(BIN, "cairn-admin"), "--nodes", ",".join(n.endpoint for n in c.nodes),
           "--json"] + list(args)
    env = admin_env()
    if master is not None:
        env["CAIRN_MASTER_KEY_FILE"] = master
    p = subprocess.run(cmd, capture_output=True, timeout=60, env=env)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def status_get(base, ak, sk):
    """GET /_cairn/status signed by (ak, sk); returns the HTTP status."""
    import urllib.error
    import urllib.request
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    req = AWSRequest(method="GET", url=base + "/_cairn/status",
                     headers={"Host": base.split("://", 1)[1]})
    S3SigV4Auth(Credentials(ak, sk), "s3", "us-east-1").add_auth(req)
    r = urllib.request.Request(base + "/_cairn/status", headers=dict(req.headers.items()))
    try:
        with urllib.request.urlopen(r, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code


def gauge(port, name):
    """A series of the gateway's /metrics (None when absent)."""
    import re
    import urllib.request
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        text = r.read().decode()
    m = re.search(r"^%s (\d+)" % name, text, re.M)
    return int(m.group(1)) if m else None


def promtool_check(port):
    """The page with the keys' series passes `promtool check metrics` (when
    installed, as in test_gateway_metrics)."""
    import shutil
    import urllib.request
    promtool = shutil.which("promtool")
    if not promtool:
        print("skip promtool (not installed)")
        return
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        page = r.read()
    check(b"cairn_gateway_keys_in_use" in page, "the keys' series are on the page")
    p = subprocess.run([promtool, "check", "metrics"], input=page, capture_output=True,
                       timeout=60)
    check(p.returncode == 0, "promtool: %s %s" % (p.stdout.decode(), p.stderr.decode()))


def wait_until(what, fn):
    t0 = time.monotonic()
    while True:
        if fn():
            return time.monotonic() - t0
        if time.monotonic() - t0 > WAIT_S:
            raise AssertionError("not within %.1f s: %s" % (WAIT_S, what))
        time.sleep(0.1)


def succeeds(fn):
    from botocore.exceptions import ClientError
    try:
        fn()
        return True
    except ClientError:
        return False


def refused(s3):
    return not succeeds(s3.list_buckets) and \
        error_code(s3.list_buckets) == ("InvalidAccessKeyId", 403)


def test_all():
    with Cluster(settings=SETTINGS) as c:
        with open(c.creds, "a") as f:   # an operator's key, read by the gateways started next
            f.write("%s %s ops Operations admin=true\n" % ADMIN_KEY)
        g2 = OtherGateway(c, "gw2", **{"metrics.port": free_port()})
        try:
            run(c, g2)
        finally:
            g2.close()


def run(c, g2):
    # usage: create needs the master key
    rc, out, err = admin(c, "key", "create", "carol", "--account", "carol", master=None)
    check(rc == 2 and "master key" in err, "create without a master key: %d %s" % (rc, err))

    # --account names an account of the cluster (docs/operations.md "Accounts")
    rc, out, err = admin(c, "key", "create", "alice laptop", "--account", "alice")
    check(rc == 1 and "no account alice" in err, "key of a missing account: %d %s" % (rc, err))
    rc, out, err = admin(c, "account", "create", "alice")
    check(rc == 0, "account create: %d %s %s" % (rc, out, err))
    alice = json.loads(out)["id"]
    rc, out, err = admin(c, "key", "create", "alice laptop", "--account", "alice")
    check(rc == 0, "key create: %d %s %s" % (rc, out, err))
    made = json.loads(out)
    ak, sk = made["access_key_id"], made["secret_access_key"]
    check(len(ak) == 20 and ak.startswith("AKIA") and ak.isalnum() and ak.upper() == ak,
          "AKID %r" % ak)
    check(len(sk) == 40, "secret %r" % sk)
    check(made["account"] == alice, "account %r" % made)

    # the key works on both gateways within the bound: it creates a bucket
    # on the first, and its account owns it
    s3a = c.boto(ak, sk, signature_version="s3v4")
    s3b = g2.boto(ak, sk)
    took = wait_until("the new key works on gateway 1",
                      lambda: succeeds(s3a.list_buckets))
    print("new key accepted by gateway 1 after %.2f s (bound %.1f s)" % (took, BOUND_S))
    took = wait_until("the new key works on gateway 2",
                      lambda: succeeds(s3b.list_buckets))
    print("new key accepted by gateway 2 after %.2f s" % took)
    check(gauge(g2.metrics_port, "cairn_gateway_keys_in_use") == 1, "in use: 1")
    check(gauge(g2.metrics_port, "cairn_gateway_keys_left_out") == 0, "left out: 0")
    check(gauge(g2.metrics_port, "cairn_gateway_keys_last_refresh_seconds") >= time.time() - 60,
          "last refresh time")
    promtool_check(g2.metrics_port)
    s3a.create_bucket(Bucket="alice-bucket")
    s3b.put_object(Bucket="alice-bucket", Key="k", Body=b"from gateway 2")
    check(s3a.get_object(Bucket="alice-bucket", Key="k")["Body"].read() == b"from gateway 2",
          "GET through gateway 1")
    acl = s3a.get_bucket_acl(Bucket="alice-bucket")
    check(acl["Owner"]["ID"] == alice, "owner %r" % acl["Owner"])
    check([b["Name"] for b in s3b.list_buckets()["Buckets"]] == ["alice-bucket"],
          "alice's listing")
    # another account's (file) key is refused there
    other = c.boto(*OTHER_KEY, signature_version="s3v4")
    check(error_code(other.get_object, Bucket="alice-bucket", Key="k")[0] == "AccessDenied",
          "the other account reads alice's object")
    check(error_code(other.put_object, Bucket="alice-bucket", Key="x", Body=b"")[0] ==
          "AccessDenied", "the other account writes in alice's bucket")
    # a cluster key is never an operator's: /_cairn/status refuses it (the
    # credentials file's admin=true key reads it)
    st = status_get(g2.url, *ADMIN_KEY)
    check(st == 200, "status with the file's admin key: %d" % st)
    st = status_get(g2.url, ak, sk)
    check(st == 403, "status with a cluster key: %d" % st)
    # the file's key still works (the bootstrap admin key)
    check(succeeds(c.boto(signature_version="s3v4").list_buckets), "file key")
    # a wrong secret for the cluster key is refused as a bad signature
    bad = c.boto(ak, sk[:-1] + ("A" if sk[-1] != "A" else "B"), signature_version="s3v4")
    check(error_code(bad.list_buckets)[0] == "SignatureDoesNotMatch", "wrong secret")

    # key list: the key, its account and name, never its secret
    rc, out, err = admin(c, "key", "list")
    check(rc == 0, "key list: %d %s" % (rc, err))
    listed = json.loads(out)["keys"]
    check([(k["access_key_id"], k["account"], k["name"]) for k in listed] ==
          [(ak, alice, "alice laptop")], "listed %r" % listed)
    check(sk not in out, "the secret is not listed")
    # with a master key, list says whether each key opens under it (the check
    # before handing a master key file to the gateways)
    check(listed[0]["opens"] is True, "opens under the master key: %r" % listed)
    rc, out, err = admin(c, "key", "list", master=WRONG)
    check(rc == 0 and json.loads(out)["keys"][0]["opens"] is False, "wrong key: %s" % out)
    rc, out, err = admin(c, "key", "list", master=None)
    check(rc == 0 and "opens" not in json.loads(out)["keys"][0], "no master key: %s" % out)
    # the nodes hold only ciphertext
    for n in c.nodes:
        cl = n.client()
        r = cl.get(("s/keys/" + ak).encode())
        if r.st == 0:
            check(sk.encode() not in r.payload, "a node holds the secret in the clear")
        cl.close()

    test_swap_mid_request(c, g2, ak, sk)
    test_tampered(c, g2)
    many = make_many(c, g2, 20)
    test_wrong_master(c, ak, sk, 1 + len(many))
    for k in many:
        rc, out, err = admin(c, "key", "delete", k[0])
        check(rc == 0, "delete %s: %s" % (k[0], err))

    # delete: refused on both gateways within the bound
    rc, out, err = admin(c, "key", "delete", ak)
    check(rc == 0 and json.loads(out)["deleted"] is True, "key delete: %d %s %s" % (rc, out, err))
    took = wait_until("gateway 1 refuses the deleted key", lambda: refused(s3a))
    print("deleted key refused by gateway 1 after %.2f s" % took)
    took = wait_until("gateway 2 refuses the deleted key", lambda: refused(s3b))
    print("deleted key refused by gateway 2 after %.2f s" % took)
    check(error_code(s3b.get_object, Bucket="alice-bucket", Key="k")[0] == "InvalidAccessKeyId",
          "GET with the deleted key")
    rc, out, err = admin(c, "key", "list")
    check(rc == 0 and json.loads(out)["keys"] == [], "listed after delete: %s" % out)
    rc, out, err = admin(c, "key", "delete", ak)
    check(rc == 1 and "no key" in err, "deleting twice: %d %s" % (rc, err))
    check(c.proc.poll() is None and g2.proc.poll() is None, "both gateways still run")


def test_swap_mid_request(c, g2, ak, sk):
    """A PUT signed by a cluster key whose body arrives slowly while the
    gateway swaps its key table (another key is created): the request keeps
    the table it authenticated with (under the sanitizers a freed table
    would abort the gateway) and stores the object as the key's account."""
    import socket
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    body = b"x" * 4096
    url = "%s/alice-bucket/slow" % g2.url
    req = AWSRequest(method="PUT", url=url, data=body,
                     headers={"Host": "127.0.0.1:%d" % g2.port,
                              "x-amz-content-sha256": "UNSIGNED-PAYLOAD",
                              "Content-Length": str(len(body))})
    SigV4Auth(Credentials(ak, sk), "s3", "us-east-1").add_auth(req)
    head = "PUT /alice-bucket/slow HTTP/1.1\r\n" + "".join(
        "%s: %s\r\n" % (k, v) for k, v in req.headers.items()) + "\r\n"
    s = socket.create_connection(("127.0.0.1", g2.port), timeout=30)
    try:
        s.sendall(head.encode() + body[:100])
        start = len(g2.log_text())
        rc, out, err = admin(c, "key", "create", "swapper")   # its own account
        check(rc == 0, "create swapper: %s" % err)
        new = json.loads(out)
        wait_until("gateway 2 swapped its table",
                   lambda: "keys: 2 keys from the cluster in use" in g2.log_text()[start:])
        s.sendall(body[100:])
        reply = s.recv(65536)
        check(reply.startswith(b"HTTP/1.1 200"), "slow PUT: %r" % reply[-400:])
    finally:
        s.close()
    s3 = g2.boto(ak, sk)
    check(s3.get_object(Bucket="alice-bucket", Key="slow")["Body"].read() == body, "body")
    rc, out, err = admin(c, "key", "delete", new["access_key_id"])
    check(rc == 0, "delete swapper: %s" % err)


def test_tampered(c, g2):
    """A byte of a record's sealed secret flipped on every node (written
    back as a newer version, as a node's owner could): the key is left out
    with a log line, the gateways keep serving the others."""
    rc, out, err = admin(c, "key", "create", "bob")
    check(rc == 0, "create bob: %s" % err)
    made = json.loads(out)
    ak, sk = made["access_key_id"], made["secret_access_key"]
    s3 = g2.boto(ak, sk)
    wait_until("bob's key works", lambda: succeeds(s3.list_buckets))
    skey = ("s/keys/" + ak).encode()
    start = len(g2.log_text())
    for n in c.nodes:
        cl = n.client()
        r = cl.get(skey)
        if r.st == 0:
            data = bytearray(r.payload)
            data[-1] ^= 0x01   # the last byte: inside the sealed secret
            p = cl.put(skey, bytes(data), ver=r["ver"] + 1, ts=r["ts"] + 1)
            check(p.st == 0, "tamper put %r" % p)
        cl.close()
    wait_until("the tampered key is refused", lambda: refused(s3))
    wait_until("the gateway logs it", lambda: ("keys: s/keys/%s left out" % ak)
               in g2.log_text()[start:])
    check("does not open" in g2.log_text()[start:], "the reason is logged")
    check(gauge(g2.metrics_port, "cairn_gateway_keys_left_out") == 1, "left out: 1")
    check(g2.proc.poll() is None and c.proc.poll() is None, "the gateways run on")
    check(succeeds(c.boto(signature_version="s3v4").list_buckets), "file key")
    rc, out, err = admin(c, "key", "delete", ak)
    check(rc == 0, "delete bob: %s" % err)


def make_many(c, g2, n):
    """n more keys (more than a refresh reads at once): all of them work on
    gateway 2, which read them in one or more rounds."""
    made = []
    for i in range(n):
        rc, out, err = admin(c, "key", "create", "many%d" % i)
        check(rc == 0, "create many %d: %s" % (i, err))
        m = json.loads(out)
        made.append((m["access_key_id"], m["secret_access_key"]))
    wait_until("gateway 2 holds all of them",
               lambda: gauge(g2.metrics_port, "cairn_gateway_keys_in_use") == n + 1)
    for ak, sk in made:
        check(succeeds(g2.boto(ak, sk).list_buckets), "key %s on gateway 2" % ak)
    return made


def test_wrong_master(c, ak, sk, n_keys):
    """A gateway with another master key: no cluster key opens; it says so
    loudly and still takes the credentials file's keys."""
    g3 = OtherGateway(c, "gw3", **{"s3.master_key_file": WRONG, "metrics.port": free_port()})
    try:
        wait_until("gateway 3 complains", lambda: "none of the" in g3.log_text() and
                   "master key" in g3.log_text())
        log = g3.log_text()
        # every record was read (at start, all at once: more than the reads in flight)
        check(gauge(g3.metrics_port, "cairn_gateway_keys_in_use") == 0 and
              gauge(g3.metrics_port, "cairn_gateway_keys_left_out") == n_keys,
              "gateway 3's gauges")
        check("left out" in log and "does not open" in log, "per-key lines: %s" % log[-2000:])
        # the key works on gateway 1 (right master key) but not on gateway 3
        check(succeeds(c.boto(ak, sk, signature_version="s3v4").list_buckets), "gateway 1")
        check(error_code(g3.boto(ak, sk).list_buckets)[0] == "InvalidAccessKeyId",
              "a cluster key on the gateway with the wrong master key")
        check(succeeds(g3.boto("AKIACAIRNDEV00000000",
                               "cairn-dev-secret-key-000000000000000000").list_buckets),
              "the file key on gateway 3")
    finally:
        g3.close()


if __name__ == "__main__":
    try:
        t0 = time.monotonic()
        test_all()
        print("ok   test_all (%.1fs)" % (time.monotonic() - t0))
        print("all 1 passed")
    finally:
        import shutil
        shutil.rmtree(KEYDIR, ignore_errors=True)
