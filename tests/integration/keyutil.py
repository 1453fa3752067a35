"""Helpers of the tests of accounts and keys kept in the cluster
(docs/operations.md "Accounts" and "Access keys"): a master key file, the
gateway settings that follow the cluster's keys quickly, cairn-admin run
against the cluster's nodes, a second gateway on the same nodes, and
polling within the documented bound."""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s3util import check  # noqa: E402
from snclient import admin_env, free_port  # noqa: E402

BIN = os.environ.get("CAIRN_BIN", "build/bin")
REFRESH_S = 0.5
REQUEST_TIMEOUT_S = 2
BOUND_S = REFRESH_S + REQUEST_TIMEOUT_S   # docs/operations.md: the documented delay
# the wait allowed in the tests: the bound, with room for a loaded 2-vCPU CI
WAIT_S = 4 * BOUND_S + 5


def master_key_file():
    d = tempfile.mkdtemp(prefix="cairn-keys-")
    path = os.path.join(d, "master.key")
    with open(path, "w") as f:
        f.write(os.urandom(32).hex() + "\n")
    os.chmod(path, 0o600)
    return path


def settings(master):
    return {
        "s3.master_key_file": master,
        "s3.keys_refresh": "%dms" % int(REFRESH_S * 1000),
        "storage.request_timeout": "%ds" % REQUEST_TIMEOUT_S,
        "s3.bucket_owner_ttl": "1s",
    }


def admin(c, master, *args):
    """cairn-admin --json ARGS against c's nodes: (rc, stdout, stderr)."""
    cmd = [os.path.join(BIN, "cairn-admin"), "--nodes", ",".join(n.endpoint for n in c.nodes),
           "--json"] + list(args)
    env = admin_env()
    env["CAIRN_MASTER_KEY_FILE"] = master
    p = subprocess.run(cmd, capture_output=True, timeout=120, env=env)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def admin_ok(c, master, *args):
    """cairn-admin that must succeed: its JSON document."""
    rc, out, err = admin(c, master, *args)
    check(rc == 0, "cairn-admin %s: %d %s %s" % (" ".join(args), rc, out, err))
    return json.loads(out)


def wait_until(what, fn, bound=WAIT_S):
    """Polls fn() (an exception counts as not yet) until true; returns the
    seconds it took."""
    t0 = time.monotonic()
    while True:
        try:
            if fn():
                return time.monotonic() - t0
        except Exception:   # noqa: BLE001 - a failed call is "not yet"
            pass
        if time.monotonic() - t0 > bound:
            raise AssertionError("not within %.1f s: %s" % (bound, what))
        time.sleep(0.1)


def succeeds(fn, *a, **kw):
    from botocore.exceptions import ClientError
    try:
        fn(*a, **kw)
        return True
    except ClientError:
        return False


def code_of(fn, *a, **kw):
    """The S3 error code of a call (None when it succeeds)."""
    from botocore.exceptions import ClientError
    try:
        fn(*a, **kw)
        return None
    except ClientError as e:
        return e.response["Error"].get("Code")


class OtherGateway:
    """Another cairn-gateway on the same nodes with the cluster's settings,
    on its own port."""

    def __init__(self, c, name):
        self.tmp = os.path.join(c.tmp, name)
        os.makedirs(self.tmp, exist_ok=True)
        self.port = free_port()
        cfg = os.path.join(self.tmp, "gateway.conf")
        with open(cfg, "w") as f:
            for k, v in dict(c.settings, **{"http.port": self.port}).items():
                f.write("%s = %s\n" % (k, v))
        self.log_path = os.path.join(self.tmp, "gateway.log")
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([c.bin, "--config", cfg], stdout=self.log,
                                     stderr=self.log)
        self.url = "http://127.0.0.1:%d" % self.port
        deadline = time.monotonic() + 30
        while not self._healthy():
            check(self.proc.poll() is None, "gateway %s exited" % name)
            check(time.monotonic() < deadline, "gateway %s did not come up" % name)
            time.sleep(0.1)

    def _healthy(self):
        import urllib.request
        try:
            with urllib.request.urlopen(self.url + "/_cairn/health", timeout=2) as r:
                return r.status == 200
        except OSError:
            return False

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
        check(rc == 0, "second gateway exited %r" % rc)
