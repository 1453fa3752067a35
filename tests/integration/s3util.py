"""A cairn cluster for the gateway tests: K real cairn-storage nodes and one
cairn-gateway on free loopback ports with generated configs, plus helpers to
drive it with boto3, the aws cli and raw HTTP. Always used as a context
manager so every process is stopped."""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snclient import StorageNode, free_port, gateway_settings  # noqa: E402

ACCESS_KEY = "AKIACAIRNDEV00000000"
SECRET_KEY = "cairn-dev-secret-key-000000000000000000"
REGION = "us-east-1"


def check(cond, what):
    if not cond:
        raise AssertionError(what)


class Cluster:
    def __init__(self, nodes=3, settings=None, node_settings=None, gateway_prefix=None):
        """gateway_prefix: argv put before the gateway's command, e.g.
        ["prlimit", "--nofile=256:256"] (it must exec the gateway, so the
        pid stays the gateway's)."""
        self.bin = os.path.join(os.environ.get("CAIRN_BIN", "build/bin"), "cairn-gateway")
        self.prefix = list(gateway_prefix or [])
        self.tmp = tempfile.mkdtemp(prefix="cairn-gw-")
        self.nodes = []
        self.proc = None
        try:
            for _ in range(nodes):
                self.nodes.append(StorageNode(node_settings))
            self.creds = os.path.join(self.tmp, "credentials")
            with open(self.creds, "w") as f:
                f.write("%s %s cairn-dev cairn\n" % (ACCESS_KEY, SECRET_KEY))
                f.write("AKIAOTHERUSER0000000 other-secret-key-0000000000000000000000 other other\n")
            self.settings = {
                "http.listen": "127.0.0.1",
                "http.threads": 2,
                "storage.nodes": ",".join(n.endpoint for n in self.nodes),
                "s3.credentials_file": self.creds,
                "s3.domain": "s3.localhost",
                "log.level": "info",
                # a test that leaves a request hanging must not hold up close()
                "http.shutdown_timeout": "5s",
            }
            # the harness's nodes take only CURVE clients on their allow-list
            self.settings.update(gateway_settings())
            self.settings.update(settings or {})
            self.start()
        except BaseException:
            self.close()
            raise

    def start(self):
        self.port = free_port()
        self.settings["http.port"] = self.port
        cfg = os.path.join(self.tmp, "gateway.conf")
        with open(cfg, "w") as f:
            for k, v in self.settings.items():
                f.write("%s = %s\n" % (k, v))
        self.log_path = os.path.join(self.tmp, "gateway.log")
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(self.prefix + [self.bin, "--config", cfg], stdout=self.log,
                                     stderr=self.log)
        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("cairn-gateway exited %d:\n%s" % (self.proc.returncode,
                                                                     self.log_text()))
            try:
                if self.raw(b"GET /_cairn/health HTTP/1.1\r\nHost: x\r\n"
                            b"Connection: close\r\n\r\n").startswith(
                        b"HTTP/1.1 200"):
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("cairn-gateway did not come up:\n" + self.log_text())
            time.sleep(0.05)

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def raw(self, data, timeout=10, read_all=True):
        """Sends bytes on a fresh connection and returns everything read until
        the server closes or the timeout hits."""
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        try:
            s.sendall(data)
            out = b""
            while True:
                try:
                    b = s.recv(65536)
                except socket.timeout:
                    break
                if not b:
                    break
                out += b
                if not read_all and b"\r\n\r\n" in out:
                    break
            return out
        finally:
            s.close()

    def boto(self, access_key=ACCESS_KEY, secret_key=SECRET_KEY, **cfg):
        import boto3
        from botocore.config import Config
        conf = {"s3": {"addressing_style": "path"}, "retries": {"max_attempts": 1}}
        conf.update(cfg)
        return boto3.client("s3", endpoint_url=self.url, aws_access_key_id=access_key,
                            aws_secret_access_key=secret_key, region_name=REGION,
                            config=Config(**conf))

    def env(self):
        e = dict(os.environ)
        e.update({"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                  "AWS_DEFAULT_REGION": REGION, "AWS_CONFIG_FILE": "/dev/null",
                  "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "HOME": self.tmp})
        return e

    def aws(self, *args, check_rc=True, input=None):
        """Runs /usr/bin/aws against the gateway; returns the CompletedProcess."""
        cmd = ["/usr/bin/aws", "--endpoint-url", self.url] + list(args)
        p = subprocess.run(cmd, env=self.env(), capture_output=True, timeout=120, input=input)
        if check_rc and p.returncode != 0:
            raise AssertionError("%s failed %d:\n%s\n%s" % (" ".join(cmd), p.returncode,
                                                             p.stdout.decode(), p.stderr.decode()))
        return p

    def close(self):
        """Stops everything. Returns the gateway's exit status when close()
        itself stopped it with SIGTERM (a graceful stop exits 0), else None."""
        rc = None
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                rc = self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                rc = "killed after 30 s"
        self.stop_rc = rc
        self.last_log = self.log_text()[-20000:] if self.proc is not None else ""
        for n in self.nodes:
            n.stop()
            shutil.rmtree(n.tmp, ignore_errors=True)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is not None and self.proc is not None:
            # the failure first: a CI summary that keeps only the head and
            # tail of a test's output still shows why it failed
            sys.stderr.write("---- failed: %s ----\n" % "".join(
                traceback.format_exception_only(exc[0], exc[1])).strip()[:3000])
            sys.stderr.write("---- gateway log ----\n" + self.log_text()[-20000:] + "\n")
        self.close()
        # under the sanitizers a leak or an error at exit shows only in the
        # exit status (abort_on_error) and the log, which close() removes
        if exc[0] is None and os.environ.get("CAIRN_SANITIZE") and self.stop_rc not in (0, None):
            raise AssertionError("cairn-gateway exited %r on SIGTERM under the sanitizers:\n%s"
                                 % (self.stop_rc, self.last_log))


def error_code(fn, *args, **kw):
    """Calls a boto3 method that must fail; returns (code, http status)."""
    from botocore.exceptions import ClientError
    try:
        fn(*args, **kw)
    except ClientError as e:
        return (e.response["Error"].get("Code"),
                e.response["ResponseMetadata"]["HTTPStatusCode"])
    raise AssertionError("%s did not fail" % getattr(fn, "__name__", fn))


def run_tests(tests, cluster_kw=None):
    with Cluster(**(cluster_kw or {})) as c:
        for t in tests:
            t0 = time.monotonic()
            t(c)
            print("ok   %s (%.1fs)" % (t.__name__, time.monotonic() - t0), flush=True)
    print("all %d passed" % len(tests))
